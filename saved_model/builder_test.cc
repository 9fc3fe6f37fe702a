// WriteSavedModel: the layout, timestamped directories that never collide,
// and nothing left behind when a write fails.
#include "saved_model/builder.h"

#include <filesystem>

#include "core/file_io.h"
#include "gtest/gtest.h"
#include "saved_model/loader.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

MetaGraphDef Tagged() {
  MetaGraphDef meta;
  meta.mutable_meta_info_def()->add_tags(kSavedModelTagServe);
  (*meta.mutable_signature_def())["serving_default"].set_method_name(kPredictMethodName);
  return meta;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WriteSavedModelTest, WritesTimestampedExportsWithVariablesAndAssets) {
  const std::string base = testing::MakeTempDir("builder") + "/export";
  const std::string asset = testing::MakeTempDir("builder_asset") + "/vocab.txt";
  TW_ASSERT_OK(WriteFileAtomically(asset, "a\nb\n"));
  std::string seen_prefix;
  auto write = [&](const std::string& prefix) {
    seen_prefix = prefix;
    return WriteFileAtomically(prefix + ".index", "index");
  };
  TW_ASSERT_OK_AND_ASSIGN(std::string first,
                          WriteSavedModel(base, Tagged(), write, {{{"vocab.txt", asset}}}));
  EXPECT_EQ(seen_prefix.substr(seen_prefix.size() - 20), "/variables/variables");
  TW_ASSERT_OK_AND_ASSIGN(std::string second, WriteSavedModel(base, Tagged(), write));
  EXPECT_NE(first, second) << "two exports in one second get two directories";
  EXPECT_EQ(Entries(base).size(), 2u) << "no temporary directory is left";
  for (const std::string& name : Entries(base)) {
    EXPECT_TRUE(std::all_of(name.begin(), name.end(), ::isdigit)) << name;
  }
  EXPECT_EQ(testing::ReadFileOrDie(first + "/assets/vocab.txt"), "a\nb\n");
  EXPECT_EQ(testing::ReadFileOrDie(first + "/variables/variables.index"), "index");
  TW_ASSERT_OK_AND_ASSIGN(SavedModel model, ReadSavedModel(first));
  EXPECT_EQ(model.saved_model_schema_version(), 1);
  ASSERT_EQ(model.meta_graphs_size(), 1);
  EXPECT_EQ(model.meta_graphs(0).meta_info_def().tags(0), "serve");
}

TEST(WriteSavedModelTest, AFailedWriteLeavesNothing) {
  const std::string base = testing::MakeTempDir("builder_fail");
  EXPECT_THAT(
      WriteSavedModel(base, Tagged(),
                      [](const std::string&) { return absl::InternalError("disk on fire"); }),
      StatusIs(absl::StatusCode::kInternal, "disk on fire"));
  EXPECT_THAT(WriteSavedModel(base, Tagged(), [](const std::string&) { return absl::OkStatus(); },
                              {{{"missing.txt", base + "/missing.txt"}}}),
              StatusIs(absl::StatusCode::kNotFound, "missing.txt"));
  EXPECT_THAT(
      WriteSavedModel(base, MetaGraphDef(), [](const std::string&) { return absl::OkStatus(); }),
      StatusIs(absl::StatusCode::kInvalidArgument, "no tags"));
  EXPECT_TRUE(Entries(base).empty());
}

// WriteSavedModelTo: into the directory itself, made or empty, never over
// an export already there; assets.extra beside the rest.
TEST(WriteSavedModelTest, WritesIntoAGivenDirectory) {
  const std::string parent = testing::MakeTempDir("builder_to");
  const auto write = [](const std::string& prefix) {
    return WriteFileAtomically(prefix + ".index", "index");
  };
  const std::string dir = parent + "/made/model";
  TW_ASSERT_OK(WriteSavedModelTo(dir + "/", Tagged(), write, {.extra = {{"model.pbtxt", "m"}}}));
  EXPECT_EQ(Entries(parent + "/made"), std::vector<std::string>{"model"});
  EXPECT_EQ(Entries(dir),
            (std::vector<std::string>{"assets.extra", "saved_model.pb", "variables"}));
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/assets.extra/model.pbtxt"), "m");
  TW_ASSERT_OK_AND_ASSIGN(SavedModel model, ReadSavedModel(dir));
  EXPECT_EQ(model.meta_graphs(0).meta_info_def().tags(0), "serve");
  // Not over an export.
  EXPECT_THAT(WriteSavedModelTo(dir, Tagged(), write),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "Export directory already exists, and isn't empty: " + dir));
  // An empty directory is taken; a failed write leaves it as it was.
  const std::string empty = parent + "/empty";
  std::filesystem::create_directory(empty);
  EXPECT_THAT(WriteSavedModelTo(empty, Tagged(),
                                [](const std::string&) { return absl::InternalError("full"); }),
              StatusIs(absl::StatusCode::kInternal, "full"));
  EXPECT_TRUE(Entries(empty).empty());
  EXPECT_EQ(Entries(parent), (std::vector<std::string>{"empty", "made"}));
  TW_ASSERT_OK(WriteSavedModelTo(empty, Tagged(), write));
  EXPECT_EQ(testing::ReadFileOrDie(empty + "/variables/variables.index"), "index");
}

}  // namespace
}  // namespace towerflow
