#include "core/strided_slice.h"

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

std::string Final(const PartialTensorShape& input, const StridedSliceSpec& spec) {
  absl::StatusOr<StridedSliceResult> r = ComputeStridedSlice(input, spec);
  return r.ok() ? r->final.DebugString() : std::string(r.status().message());
}

TEST(StridedSliceTest, NumpyStyleSlices) {
  // x[1:] on [5,3]
  EXPECT_EQ(Final({5, 3}, {{1}, {0}, {1}, 0, 1}), "[4,3]");
  // x[:, 0] on [5,3]: shrink axis 1
  EXPECT_EQ(Final({5, 3}, {{0, 0}, {0, 1}, {1, 1}, 1, 1, 0, 0, 2}), "[5]");
  // x[::-1] on [4]
  EXPECT_EQ(Final({4}, {{0}, {0}, {-1}, 1, 1}), "[4]");
  // x[::2] on [5] -> 3 elements
  EXPECT_EQ(Final({5}, {{0}, {0}, {2}, 1, 1}), "[3]");
  // x[-2:] on [5]
  EXPECT_EQ(Final({5}, {{-2}, {0}, {1}, 0, 1}), "[2]");
  // x[3:1] is empty
  EXPECT_EQ(Final({5}, {{3}, {1}, {1}}), "[0]");
}

TEST(StridedSliceTest, EllipsisAndNewAxis) {
  // x[..., 0] on [2,3,4] -> [2,3]
  EXPECT_EQ(Final({2, 3, 4}, {{0, 0}, {0, 1}, {1, 1}, 0, 0, 1, 0, 2}), "[2,3]");
  // x[tf.newaxis, :] on [3] -> [1,3]
  EXPECT_EQ(Final({3}, {{0, 0}, {0, 0}, {1, 1}, 2, 2, 0, 1, 0}), "[1,3]");
  // x[..., tf.newaxis] on [2,3] -> [2,3,1]
  EXPECT_EQ(Final({2, 3}, {{0, 0}, {0, 0}, {1, 1}, 0, 0, 1, 2, 0}), "[2,3,1]");
}

TEST(StridedSliceTest, ShapeOfShapeIdiom) {
  // tf.shape(x)[0]: a shrunk index of a length-4 vector is a scalar.
  absl::StatusOr<StridedSliceResult> r = ComputeStridedSlice({4}, {{0}, {1}, {1}, 0, 0, 0, 0, 1});
  TW_ASSERT_OK(r);
  EXPECT_EQ(r->final.DebugString(), "[]");
  EXPECT_EQ(r->begin[0], 0);
  EXPECT_EQ(r->end[0], 1);
}

TEST(StridedSliceTest, UnknownDimsStayUnknownButShrinkIsKnown) {
  EXPECT_EQ(Final({-1, 3}, {{1}, {0}, {1}, 0, 1}), "[?,3]");
  EXPECT_EQ(Final({-1, 3}, {{0}, {1}, {1}, 0, 0, 0, 0, 1}), "[3]");
}

TEST(StridedSliceTest, IdentityIsDetected) {
  absl::StatusOr<StridedSliceResult> r = ComputeStridedSlice({4, 2}, {{0}, {0}, {1}, 1, 1});
  TW_ASSERT_OK(r);
  EXPECT_TRUE(r->is_identity);
}

TEST(StridedSliceTest, BadSpecsAreErrors) {
  EXPECT_THAT(ComputeStridedSlice({5}, {{0}, {1}, {0}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "strides[0] must be non-zero"));
  EXPECT_THAT(
      ComputeStridedSlice({5}, {{7}, {8}, {1}, 0, 0, 0, 0, 1}),
      StatusIs(absl::StatusCode::kInvalidArgument, "slice index 7 of dimension 0 out of bounds"));
  EXPECT_THAT(ComputeStridedSlice({5}, {{-6}, {0}, {1}, 0, 0, 0, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, "out of bounds"));
  EXPECT_THAT(ComputeStridedSlice({5}, {{0, 0}, {1, 1}, {1, 1}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Index out of range"));
  EXPECT_THAT(ComputeStridedSlice({5, 5}, {{0, 0}, {1, 1}, {1, 1}, 0, 0, 3}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Multiple ellipses"));
  EXPECT_THAT(ComputeStridedSlice({5}, {{0}, {1, 2}, {1}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "same length"));
  std::vector<int64_t> many(64, 0);
  EXPECT_THAT(ComputeStridedSlice({5}, {many, many, std::vector<int64_t>(64, 1)}),
              StatusIs(absl::StatusCode::kInvalidArgument, "at most 63"));
  // Huge indices clamp instead of overflowing.
  EXPECT_EQ(Final({5}, {{INT64_MIN}, {INT64_MAX}, {1}}), "[5]");
}

}  // namespace
}  // namespace towerflow
