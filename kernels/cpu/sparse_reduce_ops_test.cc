// SparseReduceSum and SparseReduceMax (sparse_reduce_ops.cc) with
// TensorFlow's dense results and messages (TF 2.21, tf.raw_ops).
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// Entries [0,0,1]=1, [0,2,0]=2, [1,1,1]=3, [1,1,0]=4, [0,0,0]=5 of [2,3,2].
const Tensor kIndices = Literal<int64_t>({5, 3}, {0, 0, 1, 0, 2, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0});
const Tensor kShape = Literal<int64_t>({3}, {2, 3, 2});

Tensor Reduce(const char* op, const Tensor& values, const Tensor& axes, bool keep_dims = false) {
  KernelRunner r(op);
  r.Attr("keep_dims", keep_dims);
  return RunOk(r, {kIndices, values, kShape, axes});
}

TEST(SparseReduceOpsTest, SumsAndMaximaAreTensorFlows) {
  const Tensor v = Literal<float>({5}, {1, 2, 3, 4, 5});
  const Tensor low = Literal<float>({5}, {-9, -8, -7, -6, -5});
  EXPECT_THAT(Reduce("SparseReduceSum", v, Literal<int32_t>({1}, {1})),
              TensorIs<float>({2, 2}, {7, 1, 4, 3}));
  // An element no entry reaches is 0, for the maximum too.
  EXPECT_THAT(Reduce("SparseReduceMax", low, Literal<int32_t>({1}, {-1})),
              TensorIs<float>({2, 3}, {-5, 0, -8, 0, -6, 0}));
  EXPECT_THAT(Reduce("SparseReduceSum", v, Literal<int32_t>({2}, {0, 2}), true),
              TensorIs<float>({1, 3, 1}, {6, 7, 2}));
  EXPECT_THAT(Reduce("SparseReduceSum", v, Literal<int32_t>({3}, {0, 1, 2})),
              TensorIs<float>({}, {15}));
  EXPECT_THAT(Reduce("SparseReduceMax", low, Literal<int32_t>({0}, {})),
              TensorIs<float>({2, 3, 2}, {-5, -9, 0, 0, -8, 0, 0, 0, -6, -7, 0, 0}));
  // Duplicate entries add up; a repeated axis counts once.
  KernelRunner dup("SparseReduceSum");
  EXPECT_THAT(RunOk(dup, {Literal<int64_t>({2, 3}, {0, 0, 0, 0, 0, 0}), Literal<float>({2}, {1, 2}),
                          kShape, Literal<int32_t>({1}, {2})}),
              TensorIs<float>({2, 3}, {3, 0, 0, 0, 0, 0}));
  EXPECT_THAT(Reduce("SparseReduceSum", v, Literal<int32_t>({2}, {1, 1})),
              TensorIs<float>({2, 2}, {7, 1, 4, 3}));
}

TEST(SparseReduceOpsTest, RefusesWhatTensorFlowRefuses) {
  const Tensor v = Literal<float>({5}, {1, 2, 3, 4, 5});
  const auto fails = [](const Tensor& indices, const Tensor& values, const Tensor& shape,
                        const Tensor& axes) {
    KernelRunner r("SparseReduceSum");
    return r.Run({indices, values, shape, axes}).status();
  };
  EXPECT_THAT(fails(kIndices, v, kShape, Literal<int32_t>({1}, {3})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid reduction dimension 3, for input with 3 dimensions."));
  EXPECT_THAT(fails(kIndices, Literal<float>({2}, {1, 2}), kShape, Literal<int32_t>({1}, {1})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "indices and values rows (indexing dimension) must match. (indices = 5, "
                       "values = 2)"));
  EXPECT_THAT(
      fails(kIndices, v, Literal<int64_t>({2}, {2, 3}), Literal<int32_t>({1}, {1})),
      StatusIs(absl::StatusCode::kInvalidArgument, "Order length must be SparseTensor rank."));
  // TF reports the flat position it would write; here the entry is named.
  EXPECT_THAT(fails(Literal<int64_t>({1, 3}, {5, 0, 0}), Literal<float>({1}, {1}), kShape,
                    Literal<int32_t>({1}, {1})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "indices[0] = [5, 0, 0] is out of bounds for the dense shape [2, 3, 2]"));
}

// The forms with a SparseTensor result, on entries [0,0,1]=1 [0,1,0]=2
// [0,1,2]=3 [1,0,0]=4 [1,1,1]=5 of [2, 2, 3] (TF 2.21's outputs).
std::vector<Tensor> ReduceSparse(const char* op, const Tensor& indices, const Tensor& values,
                                 const Tensor& shape, std::vector<int32_t> axes,
                                 bool keep_dims = false) {
  KernelRunner r(op);
  r.Attr("keep_dims", keep_dims);
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({indices, values, shape, Literal<int32_t>({static_cast<int64_t>(axes.size())}, axes)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>(3);
}

TEST(SparseReduceSparseTest, GivesTheReachedElementsSorted) {
  const Tensor idx = Literal<int64_t>({5, 3}, {0, 0, 1, 0, 1, 0, 0, 1, 2, 1, 0, 0, 1, 1, 1});
  const Tensor v = Literal<float>({5}, {1, 2, 3, 4, 5});
  const Tensor shape = Literal<int64_t>({3}, {2, 2, 3});
  auto out = ReduceSparse("SparseReduceSumSparse", idx, v, shape, {1});
  EXPECT_THAT(out[0], TensorIs<int64_t>({5, 2}, {0, 0, 0, 1, 0, 2, 1, 0, 1, 1}));
  EXPECT_THAT(out[1], TensorIs<float>({5}, {2, 1, 3, 4, 5}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 3}));
  out = ReduceSparse("SparseReduceSumSparse", idx, v, shape, {0, 2}, true);
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 3}, {0, 0, 0, 0, 1, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {5, 10}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({3}, {1, 2, 1}));
  out = ReduceSparse("SparseReduceSumSparse", idx, v, shape, {0, 1, 2});
  EXPECT_THAT(out[0], TensorIs<int64_t>({1, 0}, {}));
  EXPECT_THAT(out[1], TensorIs<float>({1}, {15}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({0}, {}));
  // The maximum of the present entries only (no absent zero).
  out = ReduceSparse("SparseReduceMaxSparse", idx, Literal<float>({5}, {-1, -2, 3, -4, 5}), shape,
                     {1});
  EXPECT_THAT(out[1], TensorIs<float>({5}, {-2, -1, 3, -4, 5}));
  // Unsorted input, and an index past the shape (TF checks no bounds here).
  out = ReduceSparse("SparseReduceSumSparse", Literal<int64_t>({4, 2}, {1, 0, 0, 1, 1, 1, 0, 0}),
                     Literal<float>({4}, {1, 2, 3, 4}), Literal<int64_t>({2}, {2, 2}), {0});
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 1}, {0, 1}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {5, 5}));
  out = ReduceSparse("SparseReduceSumSparse", Literal<int64_t>({1, 2}, {1, 5}),
                     Literal<float>({1}, {1}), Literal<int64_t>({2}, {2, 2}), {0});
  EXPECT_THAT(out[0], TensorIs<int64_t>({1, 1}, {5}));
}

}  // namespace
}  // namespace towerflow
