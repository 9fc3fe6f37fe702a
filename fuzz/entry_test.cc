// The libFuzzer entry point, linked with one target as a libFuzzer build
// would link it, runs that target's seeds and garbage.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_target.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace towerflow {
namespace fuzz {
namespace {

TEST(EntryTest, RunsTheOneLinkedTarget) {
  ASSERT_EQ(Targets().size(), 1u);
  EXPECT_STREQ(Targets()[0].name, "tensor_proto");
  for (const std::string& seed : Targets()[0].seeds()) {
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()),
              0);
  }
  const std::string garbage = "\x08\xff\xff\xff\xff\x0f garbage";
  EXPECT_EQ(
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size()), 0);
  // Longer than any input a fuzzer passes: refused before parsing.
  const std::string huge(kMaxInputBytes + 1, 'x');
  EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(huge.data()), huge.size()), 0);
}

}  // namespace
}  // namespace fuzz
}  // namespace towerflow
