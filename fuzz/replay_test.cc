// Every fuzz target's seeds and corpus (fuzz/corpus/<target>/) give a
// Status: none crashes, none hangs (CI runs this test under ASan + UBSan
// too). Seeds from ../shared/reference are replayed when it is present.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace towerflow {
namespace fuzz {
namespace {

TEST(ReplayTest, EveryTargetIsLinkedOnce) {
  std::vector<std::string> names;
  for (const Target& t : Targets()) names.push_back(t.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("graph", "tensor_proto", "checkpoint",
                                                     "saved_model", "records", "feed", "image"));
}

TEST(ReplayTest, SeedsAndCorpusGiveAStatus) {
  for (const Target& target : Targets()) {
    SCOPED_TRACE(target.name);
    const std::vector<std::string> seeds = target.seeds();
    // The project's own seeds are there with or without ../shared.
    EXPECT_FALSE(seeds.empty());
    int ok = 0;
    for (const std::string& seed : seeds) ok += target.run(seed).ok();
    // Seeds are valid inputs: some must get all the way through.
    EXPECT_GT(ok, 0) << "no seed of " << target.name << " ran cleanly";
    const std::vector<std::string> corpus = CorpusFiles(target.name);
    for (const std::string& path : corpus) {
      SCOPED_TRACE(path);
      std::optional<std::string> bytes = ReadFile(path);
      ASSERT_TRUE(bytes.has_value());
      target.run(*bytes).IgnoreError();
    }
    std::printf("%s: %zu seeds (%d ran cleanly), %zu corpus files\n", target.name, seeds.size(), ok,
                corpus.size());
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace towerflow
