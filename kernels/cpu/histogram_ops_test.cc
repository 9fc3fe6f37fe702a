// DenseBincount, SparseBincount, RaggedBincount and the searches of sorted
// rows (histogram_ops.cc), with TensorFlow's values and messages.
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(HistogramOpsTest, DenseBincountAsTensorFlow) {
  const Tensor rows = Literal<int32_t>({2, 4}, {1, 2, 2, 5, 0, 0, 7, 1});
  KernelRunner counts("DenseBincount");
  EXPECT_THAT(RunOk(counts, {rows, Scalar<int32_t>(4), Literal<float>({0}, {})}),
              TensorIs<float>({2, 4}, {0, 1, 2, 0, 2, 1, 0, 0}));
  KernelRunner weighted("DenseBincount");
  EXPECT_THAT(RunOk(weighted, {Literal<int32_t>({4}, {1, 2, 2, 5}), Scalar<int32_t>(4),
                               Literal<float>({4}, {0.5, 1, 2, 3})}),
              TensorIs<float>({4}, {0, 0.5, 3, 0}));
  KernelRunner binary("DenseBincount");
  binary.Attr("binary_output", true);
  EXPECT_THAT(RunOk(binary, {rows, Scalar<int32_t>(4), Literal<int32_t>({0}, {})}),
              TensorIs<int32_t>({2, 4}, {0, 1, 1, 0, 1, 1, 0, 0}));
  KernelRunner wide("DenseBincount");
  EXPECT_THAT(
      RunOk(wide, {Literal<int64_t>({3}, {3, 3, 0}), Scalar<int64_t>(4), Literal<double>({0}, {})}),
      TensorIs<double>({4}, {1, 0, 0, 2}));

  KernelRunner bad("DenseBincount");
  const Tensor none = Literal<float>({0}, {});
  EXPECT_THAT(
      bad.Run({Literal<int32_t>({2}, {1, -2}), Scalar<int32_t>(4), none}).status().message(),
      HasSubstr("Input arr must be non-negative!"));
  EXPECT_THAT(
      bad.Run({Literal<int32_t>({2}, {1, 2}), Scalar<int32_t>(-1), none}).status().message(),
      HasSubstr("size (-1) must be non-negative"));
  EXPECT_THAT(bad.Run({Literal<int32_t>({2}, {1, 2}), Scalar<int32_t>(4), Literal<float>({1}, {1})})
                  .status()
                  .message(),
              HasSubstr("`weights` must be the same shape as `arr` or a length-0 `Tensor`"));
}

// tf.sparse.bincount's op: TF 2.21's bins for a vector and a matrix of
// values [1, 3, 1, 4], weighted, binary, cut by size, negative values
// dropped; and its checks.
TEST(HistogramOpsTest, SparseBincountAsTensorFlow) {
  const Tensor vals = Literal<int32_t>({4}, {1, 3, 1, 4});
  const Tensor none = Literal<float>({0}, {});
  const Tensor weights = Literal<float>({4}, {0.5f, 1, 2, 3});
  const auto run = [](const Tensor& indices, const Tensor& values, const Tensor& shape,
                      int32_t size, const Tensor& w, bool binary = false) {
    KernelRunner k("SparseBincount");
    k.Attr("binary_output", binary);
    return k.Run({indices, values, shape, Scalar<int32_t>(size), w});
  };
  const Tensor vector = Literal<int64_t>({4, 1}, {0, 2, 3, 5});
  const Tensor six = Literal<int64_t>({1}, {6});
  EXPECT_THAT(run(vector, vals, six, 5, none).value()[0], TensorIs<float>({5}, {0, 2, 0, 1, 1}));
  EXPECT_THAT(run(vector, vals, six, 5, weights).value()[0],
              TensorIs<float>({5}, {0, 2.5f, 0, 1, 3}));
  EXPECT_THAT(run(vector, vals, six, 5, none, true).value()[0],
              TensorIs<float>({5}, {0, 1, 0, 1, 1}));
  const Tensor matrix = Literal<int64_t>({4, 2}, {0, 0, 0, 2, 1, 1, 2, 0});
  const Tensor three = Literal<int64_t>({2}, {3, 3});
  EXPECT_THAT(run(matrix, vals, three, 5, none).value()[0],
              TensorIs<float>({3, 5}, {0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_THAT(run(matrix, vals, three, 5, weights, true).value()[0],
              TensorIs<float>({3, 5}, {0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_THAT(run(matrix, vals, three, 3, none).value()[0],
              TensorIs<float>({3, 3}, {0, 1, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_THAT(run(matrix, Literal<int32_t>({4}, {1, -3, 1, 4}), three, 5, none).value()[0],
              TensorIs<float>({3, 5}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  KernelRunner ints("SparseBincount");
  EXPECT_THAT(RunOk(ints, {matrix, Literal<int64_t>({4}, {1, 3, 1, 4}), three, Scalar<int64_t>(5),
                           Literal<int64_t>({4}, {1, 2, 3, 4})}),
              TensorIs<int64_t>({3, 5}, {0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4}));

  EXPECT_THAT(run(matrix, vals, three, -1, none),
              StatusIs(absl::StatusCode::kInvalidArgument, "size (-1) must be non-negative"));
  EXPECT_THAT(run(Literal<int64_t>({1, 2}, {0, 5}), Literal<int32_t>({1}, {1}), three, 5, none),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Sparse index tuple indices[0, :] = [0, 5] is out of bounds"));
  // TF's kernel reads past a short list of weights; Towerflow refuses it.
  EXPECT_THAT(run(matrix, vals, three, 5, Literal<float>({2}, {1, 2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "weights must be empty or have one element per value: 2 weights for 4"));
}

// RaggedBincount: TF 2.21's bins for rows [1, 3], [], [1, 4] and its checks.
TEST(HistogramOpsTest, RaggedBincountAsTensorFlow) {
  const Tensor vals = Literal<int32_t>({4}, {1, 3, 1, 4});
  const Tensor none = Literal<float>({0}, {});
  const auto run = [](const Tensor& splits, const Tensor& values, int32_t size, const Tensor& w,
                      bool binary = false) {
    KernelRunner k("RaggedBincount");
    k.Attr("binary_output", binary);
    return k.Run({splits, values, Scalar<int32_t>(size), w});
  };
  const Tensor splits = Literal<int64_t>({4}, {0, 2, 2, 4});
  EXPECT_THAT(run(splits, vals, 5, none).value()[0],
              TensorIs<float>({3, 5}, {0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}));
  EXPECT_THAT(run(splits, vals, 5, Literal<float>({4}, {0.5f, 1, 2, 3})).value()[0],
              TensorIs<float>({3, 5}, {0, 0.5f, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 3}));
  EXPECT_THAT(run(splits, vals, 5, Literal<float>({4}, {0.5f, 1, 2, 3}), true).value()[0],
              TensorIs<float>({3, 5}, {0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}));
  EXPECT_THAT(run(splits, vals, 3, none).value()[0],
              TensorIs<float>({3, 3}, {0, 1, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_THAT(run(Literal<int64_t>({3}, {0, 2, 5}), vals, 5, none),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Splits must end with the number of values, got 5 instead of 4"));
  EXPECT_THAT(run(Literal<int64_t>({3}, {1, 2, 4}), vals, 5, none),
              StatusIs(absl::StatusCode::kInvalidArgument, "Splits must start with 0, not with 1"));
  EXPECT_THAT(run(Literal<int64_t>({0}, {}), vals, 5, none),
              StatusIs(absl::StatusCode::kInvalidArgument, "Splits must be non-empty"));
  EXPECT_THAT(run(splits, Literal<int32_t>({4}, {1, -3, 1, 4}), 5, none),
              StatusIs(absl::StatusCode::kInvalidArgument, "Input must be non-negative"));
  // TF counts these as rows of odd extents; Towerflow refuses them.
  EXPECT_THAT(
      run(Literal<int64_t>({4}, {0, 3, 2, 4}), vals, 5, none),
      StatusIs(absl::StatusCode::kInvalidArgument, "Splits must not decrease, got 2 after 3"));
}

absl::StatusOr<std::vector<Tensor>> CountSparse(const char* op, std::vector<Tensor> inputs,
                                                bool binary, int64_t minlength = -1,
                                                int64_t maxlength = -1) {
  KernelRunner k(op);
  k.Attr("binary_output", binary).Attr("minlength", minlength).Attr("maxlength", maxlength);
  return k.Run(inputs);
}

// tf.sparse.bincount's sparse outputs: TF 2.21's indices, values and dense
// shapes for dense values [3, 1, 3, 7] and [[3, 1, 3], [7, 7, 0]], the same
// values as a SparseTensor and as ragged rows, with weights, binary output,
// minlength and maxlength.
TEST(HistogramOpsTest, CountSparseOutputAsTensorFlow) {
  const Tensor v1 = Literal<int32_t>({4}, {3, 1, 3, 7});
  const Tensor v2 = Literal<int32_t>({2, 3}, {3, 1, 3, 7, 7, 0});
  const Tensor w1 = Literal<float>({4}, {0.5f, 1, 2, 3});
  const Tensor none = Literal<float>({0}, {});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          CountSparse("DenseCountSparseOutput", {v1, none}, false));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 1}, {1, 3, 7}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 2, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {8}));
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("DenseCountSparseOutput", {v1, w1}, false));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 2.5f, 3}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, CountSparse("DenseCountSparseOutput", {v2, Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                       false, 10));
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 1, 0, 3, 1, 0, 1, 7}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {2, 4, 6, 9}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 10}));
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("DenseCountSparseOutput", {v2, none}, true, -1, 5));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {0, 1, 0, 3, 1, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 1, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 5}));
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("DenseCountSparseOutput", {v2, none}, false, 2, 5));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 2, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 5}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, CountSparse("DenseCountSparseOutput", {Literal<int32_t>({0}, {}), none}, false));
  EXPECT_THAT(out[2], TensorIs<int64_t>({1}, {1}));

  const Tensor idx = Literal<int64_t>({4, 2}, {0, 0, 0, 2, 1, 1, 2, 0});
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("SparseCountSparseOutput",
                                           {idx, v1, Literal<int64_t>({2}, {3, 3}), w1}, false, 9));
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 1, 0, 3, 1, 3, 2, 7}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {1, 0.5f, 2, 3}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {3, 9}));
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("SparseCountSparseOutput",
                                           {idx, v1, Literal<int64_t>({2}, {5, 3}), none}, false));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {5, 8}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, CountSparse("SparseCountSparseOutput",
                       {Literal<int64_t>({4, 1}, {0, 2, 3, 5}), v1, Literal<int64_t>({1}, {6}), w1},
                       true));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 1}, {1, 3, 7}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 1, 1}));

  const Tensor splits = Literal<int64_t>({4}, {0, 2, 2, 4});
  TW_ASSERT_OK_AND_ASSIGN(out, CountSparse("RaggedCountSparseOutput", {splits, v1, none}, false));
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 1, 0, 3, 2, 3, 2, 7}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {3, 8}));
  TW_ASSERT_OK_AND_ASSIGN(out,
                          CountSparse("RaggedCountSparseOutput", {splits, v1, w1}, false, -1, 4));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {0, 1, 0, 3, 2, 3}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 0.5f, 2}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {3, 4}));

  EXPECT_THAT(
      CountSparse("DenseCountSparseOutput", {Literal<int32_t>({2}, {-1, 2}), none}, false),
      StatusIs(absl::StatusCode::kInvalidArgument, "Input values must all be non-negative"));
  EXPECT_THAT(CountSparse("DenseCountSparseOutput",
                          {Tensor(DT_INT32, TensorShape({2, 2, 2})), none}, false),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Input must be a 1 or 2-dimensional tensor. Got: [2,2,2]"));
  EXPECT_THAT(CountSparse("DenseCountSparseOutput", {v1, Literal<float>({2}, {1, 2})}, false),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Weights and data must have the same shape. Weight shape: [2]; data "
                       "shape: [4]"));
  EXPECT_THAT(
      CountSparse("RaggedCountSparseOutput", {Literal<int64_t>({3}, {1, 2, 4}), v1, w1}, false),
      StatusIs(absl::StatusCode::kInvalidArgument, "Splits must start with 0, not with 1"));
  EXPECT_THAT(
      CountSparse("RaggedCountSparseOutput", {Literal<int64_t>({3}, {0, 2, 5}), v1, w1}, false),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Splits must end with the number of values, got 5 instead of 4"));
}

TEST(HistogramOpsTest, LowerAndUpperBoundAsTensorFlow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor sorted = Literal<float>({2, 4}, {1, 2, 2, 4, 0, 0, 1, 9});
  const Tensor values = Literal<float>({2, 5}, {2, 3, 0, 5, nan, 0, 1, 10, -1, 1});
  KernelRunner lower("LowerBound");
  EXPECT_THAT(RunOk(lower, {sorted, values}),
              TensorIs<int32_t>({2, 5}, {1, 3, 0, 4, 0, 0, 2, 4, 0, 2}));
  KernelRunner upper("UpperBound");
  upper.Attr("out_type", DT_INT64);
  EXPECT_THAT(RunOk(upper, {sorted, values}),
              TensorIs<int64_t>({2, 5}, {3, 3, 0, 4, 4, 2, 3, 4, 0, 3}));
  KernelRunner bad("LowerBound");
  EXPECT_THAT(bad.Run({sorted, Literal<float>({3, 1}, {1, 1, 1})}).status().message(),
              HasSubstr("Leading dim_size of both tensors must match."));
}

}  // namespace
}  // namespace towerflow
