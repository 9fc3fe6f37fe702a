#include "core/window_util.h"

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

struct Case {
  int64_t input, filter, dilation, stride;
  Padding padding;
  int64_t output, before, after;
};

TEST(WindowUtilTest, TensorFlowOutputSizes) {
  const Case cases[] = {
      // MNIST conv: 28x28, 5x5, stride 1, SAME -> 28, pad 2/2.
      {28, 5, 1, 1, Padding::kSame, 28, 2, 2},
      // 2x2 max pool stride 2 SAME: 28 -> 14, no padding.
      {28, 2, 1, 2, Padding::kSame, 14, 0, 0},
      // CIFAR pool: 24, 3x3, stride 2, SAME -> 12, pad 0/1 (odd after).
      {24, 3, 1, 2, Padding::kSame, 12, 0, 1},
      {28, 5, 1, 1, Padding::kValid, 24, 0, 0},
      {7, 3, 2, 1, Padding::kValid, 3, 0, 0},  // dilation 2: effective 5
      {5, 5, 1, 1, Padding::kValid, 1, 0, 0},
      {4, 5, 1, 1, Padding::kValid, 0, 0, 0},  // empty output, as TF allows
  };
  for (const Case& c : cases) {
    int64_t out, before, after;
    TW_ASSERT_OK(GetWindowedOutputSize(c.input, c.filter, c.dilation, c.stride, c.padding, &out,
                                       &before, &after));
    EXPECT_EQ(out, c.output) << c.input << " " << c.filter;
    EXPECT_EQ(before, c.before) << c.input << " " << c.filter;
    EXPECT_EQ(after, c.after) << c.input << " " << c.filter;
  }
}

TEST(WindowUtilTest, ExplicitPadding) {
  int64_t out, before = 1, after = 2;
  TW_ASSERT_OK(GetWindowedOutputSize(5, 3, 1, 1, Padding::kExplicit, &out, &before, &after));
  EXPECT_EQ(out, 6);
  before = -1;
  EXPECT_THAT(GetWindowedOutputSize(5, 3, 1, 1, Padding::kExplicit, &out, &before, &after),
              StatusIs(absl::StatusCode::kInvalidArgument, ">= 0"));
}

TEST(WindowUtilTest, BadWindowsAreErrorsNotCrashes) {
  int64_t out, b, a;
  EXPECT_THAT(GetWindowedOutputSize(5, 3, 1, 0, Padding::kSame, &out, &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "Stride must be > 0, got 0"));
  EXPECT_THAT(GetWindowedOutputSize(5, 0, 1, 1, Padding::kValid, &out, &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "Window size must be > 0"));
  EXPECT_THAT(GetWindowedOutputSize(5, 3, -2, 1, Padding::kValid, &out, &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "Dilation"));
  EXPECT_THAT(GetWindowedOutputSize(3, 6, 1, 1, Padding::kValid, &out, &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Computed output size would be negative: -2 [input_size: 3, "
                       "effective_filter_size: 6, stride: 1]"));
  EXPECT_THAT(GetWindowedOutputSize(5, int64_t{1} << 62, int64_t{1} << 62, 1, Padding::kValid, &out,
                                    &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "overflows"));
  EXPECT_THAT(GetWindowedOutputSize(INT64_MAX, 1, 1, 1, Padding::kSame, &out, &b, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "overflows"));
}

TEST(WindowUtilTest, UnknownInputGivesUnknownOutput) {
  int64_t out, b, a;
  TW_ASSERT_OK(GetWindowedOutputSize(-1, 3, 1, 2, Padding::kSame, &out, &b, &a));
  EXPECT_EQ(out, -1);
}

TEST(WindowUtilTest, ParsePadding) {
  EXPECT_EQ(*ParsePadding("SAME"), Padding::kSame);
  EXPECT_THAT(ParsePadding("same"), StatusIs(absl::StatusCode::kInvalidArgument, "'same'"));
}

}  // namespace
}  // namespace towerflow
