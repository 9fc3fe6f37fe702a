#include "kernels/bcast.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

BCast B(const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  return BCast(absl::MakeConstSpan(x), absl::MakeConstSpan(y));
}

TEST(BCastTest, CollapsesRunsOfTheSamePattern) {
  const BCast b = B({8, 1, 5, 7}, {1, 3, 1, 1});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.output_shape(), TensorShape({8, 3, 5, 7}));
  EXPECT_THAT(b.x_reshape(), ElementsAre(8, 1, 35));
  EXPECT_THAT(b.x_bcast(), ElementsAre(1, 3, 1));
  EXPECT_THAT(b.y_reshape(), ElementsAre(1, 3, 1));
  EXPECT_THAT(b.y_bcast(), ElementsAre(8, 1, 35));
  EXPECT_THAT(b.result_shape(), ElementsAre(8, 3, 35));
  EXPECT_THAT(b.grad_x_reduce_idx(), ElementsAre(1));
  EXPECT_THAT(b.grad_y_reduce_idx(), ElementsAre(0, 2, 3));
}

// [8,1,5,7] + [1,3,1,1] is rows of 35: x gives a run per row (its row
// i*3+j reads x's row i), y repeats its element j.
TEST(BCastRowsTest, RowsOfTheCollapsedResult) {
  const BCastRows rows(B({8, 1, 5, 7}, {1, 3, 1, 1}));
  EXPECT_EQ(rows.rows(), 24);
  EXPECT_EQ(rows.row_length(), 35);
  EXPECT_EQ(rows.x_step(), 1);
  EXPECT_EQ(rows.y_step(), 0);
  std::vector<int64_t> x, y;
  for (BCastRows::Cursor c = rows.At(4); c.row() < 9; c.Next()) {
    x.push_back(c.x());
    y.push_back(c.y());
  }
  EXPECT_THAT(x, ElementsAre(35, 35, 70, 70, 70));
  EXPECT_THAT(y, ElementsAre(1, 2, 0, 1, 2));
}

// [2,1,3,1] + [1,4,1,5]: rank 4 collapsed, rows of 5 where x repeats.
TEST(BCastRowsTest, BothBroadcastAlternately) {
  const BCast b = B({2, 1, 3, 1}, {1, 4, 1, 5});
  ASSERT_THAT(b.result_shape(), ElementsAre(2, 4, 3, 5));
  const BCastRows rows(b);
  EXPECT_EQ(rows.rows(), 24);
  EXPECT_EQ(rows.x_step(), 0);
  EXPECT_EQ(rows.y_step(), 1);
  std::vector<int64_t> x, y;
  for (BCastRows::Cursor c = rows.At(0); c.row() < rows.rows(); c.Next()) {
    x.push_back(c.x());
    y.push_back(c.y());
  }
  // Row (i, j, k) reads x[i*3 + k] and y's row j (of 5).
  std::vector<int64_t> want_x, want_y;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) {
        want_x.push_back(i * 3 + k);
        want_y.push_back(j * 5);
      }
    }
  }
  EXPECT_EQ(x, want_x);
  EXPECT_EQ(y, want_y);
  // A cursor started mid-way agrees with the walk from the start.
  const BCastRows::Cursor c = rows.At(17);
  EXPECT_EQ(c.x(), want_x[17]);
  EXPECT_EQ(c.y(), want_y[17]);
}

TEST(BCastTest, MissingLeadingDimsBroadcast) {
  const BCast b = B({2, 3}, {3});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.output_shape(), TensorShape({2, 3}));
  EXPECT_THAT(b.grad_x_reduce_idx(), ElementsAre());
  EXPECT_THAT(b.grad_y_reduce_idx(), ElementsAre(0));
}

// TF's BroadcastGradientArgs numbers: [2,3,5] and [1] reduce y over all.
TEST(BCastTest, GradientArgsAsTensorFlow) {
  const BCast b = B({2, 3, 5}, {1});
  EXPECT_THAT(b.grad_x_reduce_idx(), ElementsAre());
  EXPECT_THAT(b.grad_y_reduce_idx(), ElementsAre(0, 1, 2));
  const BCast ones = B({1, 1}, {1});
  EXPECT_THAT(ones.grad_x_reduce_idx(), ElementsAre(0, 1));
  EXPECT_THAT(ones.grad_y_reduce_idx(), ElementsAre(0, 1));
  const BCast same = B({4, 1}, {4, 1});
  EXPECT_TRUE(same.IsTrivial());
  EXPECT_THAT(same.grad_x_reduce_idx(), ElementsAre());
}

TEST(BCastTest, ScalarsAndEmpty) {
  const BCast s = B({}, {});
  EXPECT_EQ(s.output_shape(), TensorShape({}));
  EXPECT_THAT(s.result_shape(), ElementsAre(1));
  const BCast e = B({0, 3}, {1, 3});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e.output_shape(), TensorShape({0, 3}));
}

TEST(BCastTest, IncompatibleAndNegativeShapesAreErrors) {
  const BCast b = B({2}, {3});
  EXPECT_THAT(b.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            "Incompatible shapes: [2] vs. [3]"));
  EXPECT_THAT(b.status().message(), HasSubstr("Incompatible shapes: [2] vs. [3]"));
  EXPECT_THAT(B({-1}, {3}).status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                       "Incompatible shapes: [-1] vs. [3]"));
  // Dims whose product overflows int64.
  EXPECT_THAT(
      B({int64_t{1} << 62, 1}, {1, 8}).status(),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "Shape [4611686018427387904,8] has more elements than fit in int64"));
}

TEST(BroadcastIndicesTest, PicksTheMatrixEachOutputPositionReads) {
  // [2,1] against an output of [2,3]: rows follow, the column broadcasts.
  EXPECT_EQ(BroadcastIndices({2, 1}, TensorShape({2, 3})),
            (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  // [3] aligned at the end of [2,3].
  EXPECT_EQ(BroadcastIndices({3}, TensorShape({2, 3})), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  // No dims: every position reads the one matrix.
  EXPECT_EQ(BroadcastIndices({}, TensorShape({2, 2})), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(BroadcastIndices({}, TensorShape({})), (std::vector<int64_t>{0}));
}

TEST(PlanMatMulTest, SizesAndErrors) {
  absl::StatusOr<MatMulDims> d = PlanMatMul(TensorShape({3, 2}), TensorShape({4, 3}), true, true);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->m, 2);
  EXPECT_EQ(d->k, 3);
  EXPECT_EQ(d->n, 4);
  EXPECT_EQ(PlanMatMul(TensorShape({2, 3}), TensorShape({2, 3}), false, false).status().message(),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
  EXPECT_EQ(PlanMatMul(TensorShape({2}), TensorShape({2, 3}), false, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanMatMul(TensorShape({int64_t{1} << 31, 1}), TensorShape({1, 1}), false, false)
                .status()
                .message(),
            "MatMul dimensions [2147483648, 1] x [1, 1] exceed 2^31 - 1");
}

TEST(CheckBroadcastToTest, OnlyToTheTargetShape) {
  const TensorShape in({3, 1}), to({2, 3, 4});
  EXPECT_TRUE(CheckBroadcastTo(BCast(in, to), in, to).ok());
  const TensorShape small({3});
  EXPECT_EQ(CheckBroadcastTo(BCast(in, small), in, small).message(),
            "Unable to broadcast tensor of shape [3,1] to tensor of shape [3]");
}

}  // namespace
}  // namespace towerflow
