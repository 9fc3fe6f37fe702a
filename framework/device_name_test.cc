#include "framework/device_name.h"

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

TEST(DeviceNameTest, CanonicalForms) {
  const std::pair<const char*, const char*> cases[] = {
      {"/gpu:0", "/device:GPU:0"},
      {"/GPU:0", "/device:GPU:0"},
      {"/cpu:3", "/device:CPU:3"},
      {"/device:GPU:1", "/device:GPU:1"},
      {"/device:cpu:1", "/device:CPU:1"},
      {"GPU:2", "/device:GPU:2"},
      {"/job:ps/task:1", "/job:ps/task:1"},
      {"/job:localhost/replica:0/task:0/device:CPU:0",
       "/job:localhost/replica:0/task:0/device:CPU:0"},
      {"/job:worker/task:0/gpu:1", "/job:worker/task:0/device:GPU:1"},
      {"job:ps/task:2", "/job:ps/task:2"},
      {"/device:GPU:*", "/device:GPU:*"},
      {"/gpu", "/device:GPU:*"},
      {"/device:TPU_SYSTEM:0", "/device:TPU_SYSTEM:0"},
      {"/job:*/task:*", ""},
      {"", ""},
      {"/", ""},
  };
  for (const auto& [in, out] : cases) {
    absl::StatusOr<std::string> got = CanonicalDeviceName(in);
    ASSERT_TRUE(got.ok()) << in << ": " << got.status();
    EXPECT_EQ(*got, out) << in;
  }
}

TEST(DeviceNameTest, BadSpecsAreErrors) {
  for (const char* bad : {"/gpu:x", "/job:1ps", "/task:-1", "/foo:bar", "/gpu:0/cpu:0",
                          "/device:GPU:0/device:CPU:0", "/replica:a"}) {
    EXPECT_THAT(DeviceSpec::Parse(bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("Could not parse device specification '", bad, "'")))
        << bad;
  }
}

TEST(DeviceNameTest, MergeOverridesFieldByField) {
  DeviceSpec a = *DeviceSpec::Parse("/job:ps/task:1/device:GPU:0");
  a.MergeFrom(*DeviceSpec::Parse("/task:3/device:CPU:*"));
  EXPECT_EQ(a.ToString(), "/job:ps/task:3/device:CPU:0");
}

TEST(DeviceNameTest, Specification) {
  const DeviceSpec full = *DeviceSpec::Parse("/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_TRUE(DeviceSpec::Parse("/gpu:1")->IsSpecificationOf(full));
  EXPECT_TRUE(DeviceSpec::Parse("/device:GPU:*")->IsSpecificationOf(full));
  EXPECT_FALSE(DeviceSpec::Parse("/gpu:0")->IsSpecificationOf(full));
  EXPECT_FALSE(DeviceSpec::Parse("/job:ps")->IsSpecificationOf(full));
}

}  // namespace
}  // namespace towerflow
