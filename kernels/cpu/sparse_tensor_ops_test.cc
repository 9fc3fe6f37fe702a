// SparseReorder, SparseSlice (+ SparseSliceGrad), SparseConcat, SparseSplit
// and SparseSoftmax (sparse_tensor_ops.cc) against TensorFlow 2.21's values
// and messages (tf.raw_ops on these inputs).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

Tensor I64(const TensorShape& shape, std::vector<int64_t> v) { return Literal<int64_t>(shape, v); }

// Entries [0,0]=1 [0,3]=2 [1,1]=3 [1,4]=4 [2,2]=5 [3,0]=6 [3,4]=7 of [4, 5].
const Tensor kIndices = I64({7, 2}, {0, 0, 0, 3, 1, 1, 1, 4, 2, 2, 3, 0, 3, 4});
const Tensor kValues = Literal<float>({7}, {1, 2, 3, 4, 5, 6, 7});
const Tensor kShape = I64({2}, {4, 5});

std::vector<Tensor> RunAll(KernelRunner& r, const std::vector<Tensor>& inputs) {
  absl::StatusOr<std::vector<Tensor>> out = r.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

TEST(SparseReorderTest, SortsRowMajorKeepingRepeatsAndAnyBounds) {
  KernelRunner r("SparseReorder");
  // TF checks neither bounds nor order: [0,-1] sorts first.
  const auto out = RunAll(r, {I64({5, 2}, {1, 0, 0, 2, 0, 1, 1, 0, 0, -1}),
                              Literal<float>({5}, {1, 2, 3, 4, 5}), I64({2}, {2, 3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({5, 2}, {0, -1, 0, 1, 0, 2, 1, 0, 1, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({5}, {5, 3, 2, 1, 4}));
  KernelRunner s("SparseReorder");
  const auto strings =
      RunAll(s, {I64({2, 1}, {1, 0}), Literal<std::string>({2}, {"a", "b"}), I64({1}, {2})});
  ASSERT_EQ(strings.size(), 2u);
  EXPECT_THAT(strings[1], TensorIs<std::string>({2}, {"b", "a"}));
  KernelRunner bad("SparseReorder");
  EXPECT_THAT(bad.Run({I64({1, 2}, {1, 0}), Literal<float>({1}, {1}), I64({3}, {2, 3, 4})}),
              StatusIs(kInvalid, "Index rank (2) and shape rank (3) do not match"));
  EXPECT_THAT(bad.Run({I64({1, 2}, {1, 0}), Literal<float>({2}, {1, 2}), I64({2}, {2, 3})}),
              StatusIs(kInvalid, "Number of elements in indices (1) and values (2) do not match"));
}

std::vector<Tensor> Slice(std::vector<int64_t> start, std::vector<int64_t> size,
                          const Tensor& indices = kIndices, const Tensor& values = kValues) {
  KernelRunner r("SparseSlice");
  return RunAll(r, {indices, values, kShape, I64({2}, start), I64({2}, size)});
}

TEST(SparseSliceTest, KeepsTheEntriesInsideInInputOrder) {
  auto out = Slice({1, 1}, {2, 3});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 2}, {0, 0, 1, 1}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {3, 5}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 3}));
  // Past the dense shape the output shape stops at it; past it altogether, 0.
  out = Slice({2, 3}, {10, 10});
  EXPECT_THAT(out[0], TensorIs<int64_t>({1, 2}, {1, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 2}));
  out = Slice({5, 0}, {1, 1});
  EXPECT_THAT(out[1], TensorIs<float>({0}, {}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {0, 1}));
  out = Slice({-1, 0}, {2, 2});
  EXPECT_THAT(out[0], TensorIs<int64_t>({1, 2}, {1, 0}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 2}));
  out = Slice({0, 0}, {3, 3}, I64({3, 2}, {2, 2, 0, 0, 1, 1}), Literal<float>({3}, {1, 2, 3}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {2, 2, 0, 0, 1, 1}));
  // start + size past 2^63 is no overflow.
  out = Slice({int64_t{1} << 62, 0}, {int64_t{1} << 62, 2});
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {0, 2}));
}

TEST(SparseSliceTest, BadArgumentsHaveTensorFlowsMessages) {
  KernelRunner r("SparseSlice");
  EXPECT_THAT(r.Run({kIndices, kValues, kShape, I64({2}, {0, 0}), I64({2}, {-1, 2})}),
              StatusIs(kInvalid, "Expected a non-negative size, got -1"));
  EXPECT_THAT(r.Run({kIndices, kValues, kShape, I64({1}, {0}), I64({2}, {2, 2})}),
              StatusIs(kInvalid, "Expected start to be a vector of length 2 but got length 1"));
  EXPECT_THAT(r.Run({kIndices, kValues, kShape, I64({1, 2}, {0, 0}), I64({2}, {2, 2})}),
              StatusIs(kInvalid, "Input start should be a vector but received shape [1,2]"));
  EXPECT_THAT(r.Run({I64({1, 2}, {0, 1}), Literal<float>({1}, {1}), I64({2}, {4, -5}),
                     I64({2}, {0, 0}), I64({2}, {2, 2})}),
              StatusIs(kInvalid, "Expected shape dimensions to be non-negative, got -5"));
}

TEST(SparseSliceGradTest, RoutesEachSlicedGradientBack) {
  KernelRunner r("SparseSliceGrad");
  EXPECT_THAT(RunOk(r, {Literal<float>({2}, {10, 20}), kIndices, I64({2}, {1, 1}),
                        I64({2, 2}, {0, 0, 1, 1})}),
              TensorIs<float>({7}, {0, 0, 10, 0, 20, 0, 0}));
  EXPECT_THAT(
      r.Run({Literal<float>({2}, {10, 20}), kIndices, I64({2}, {1, 1}), I64({2, 2}, {0, 0, 0, 1})}),
      StatusIs(kInvalid,
               "Elements of backprop_val_grad aren't all propagated. Num elements:2, "
               "used: 1"));
  EXPECT_THAT(r.Run({Literal<float>({2}, {10, 20}), kIndices, I64({2}, {1, 1}),
                     I64({2, 3}, {0, 0, 0, 1, 1, 1})}),
              StatusIs(kInvalid, "The input and output should have the same ndims: got: 2 and 3"));
}

TEST(SparseConcatTest, JoinsAlongTheAxisInRowMajorOrder) {
  KernelRunner r("SparseConcat");
  r.Attr("concat_dim", int64_t{-1}).Attr("N", int64_t{2}).Attr("T", DT_FLOAT);
  const auto out = RunAll(
      r, {I64({2, 2}, {0, 0, 1, 2}), I64({3, 2}, {0, 1, 1, 0, 1, 1}), Literal<float>({2}, {1, 2}),
          Literal<float>({3}, {3, 4, 5}), I64({2}, {2, 3}), I64({2}, {2, 2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({5, 2}, {0, 0, 0, 4, 1, 2, 1, 3, 1, 4}));
  EXPECT_THAT(out[1], TensorIs<float>({5}, {1, 3, 2, 4, 5}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 5}));
  KernelRunner rows("SparseConcat");
  rows.Attr("concat_dim", int64_t{0}).Attr("N", int64_t{2}).Attr("T", DT_STRING);
  const auto strings =
      RunAll(rows, {I64({2, 2}, {0, 0, 1, 2}), I64({2, 2}, {1, 0, 0, 1}),
                    Literal<std::string>({2}, {"a", "b"}), Literal<std::string>({2}, {"c", "d"}),
                    I64({2}, {2, 3}), I64({2}, {3, 3})});
  EXPECT_THAT(strings[0], TensorIs<int64_t>({4, 2}, {0, 0, 1, 2, 2, 1, 3, 0}));
  EXPECT_THAT(strings[1], TensorIs<std::string>({4}, {"a", "b", "d", "c"}));
  EXPECT_THAT(rows.Run({I64({2, 2}, {0, 0, 1, 2}), I64({1, 2}, {0, 1}),
                        Literal<std::string>({2}, {"a", "b"}), Literal<std::string>({1}, {"c"}),
                        I64({2}, {2, 3}), I64({2}, {2, 2})}),
              StatusIs(kInvalid,
                       "Input shapes must match: expected 3 for dimension 1 but got 2 at "
                       "position 1"));
}

TEST(SparseSplitTest, SplitsWithTheFirstPiecesLonger) {
  KernelRunner r("SparseSplit");
  r.Attr("num_split", int64_t{3});
  const auto out = RunAll(r, {Literal<int64_t>({}, {1}), kIndices, kValues, kShape});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {0, 0, 1, 1, 3, 0}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({2, 2}, {0, 1, 2, 0}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2, 2}, {1, 0, 3, 0}));
  EXPECT_THAT(out[3], TensorIs<float>({3}, {1, 3, 6}));
  EXPECT_THAT(out[4], TensorIs<float>({2}, {2, 5}));
  EXPECT_THAT(out[5], TensorIs<float>({2}, {4, 7}));
  EXPECT_THAT(out[6], TensorIs<int64_t>({2}, {4, 2}));
  EXPECT_THAT(out[8], TensorIs<int64_t>({2}, {4, 1}));
  EXPECT_THAT(r.Run({Literal<int64_t>({}, {2}), kIndices, kValues, kShape}),
              StatusIs(kInvalid, "Input axis should be in range [-2, 2), got 2"));
  KernelRunner many("SparseSplit");
  many.Attr("num_split", int64_t{5});
  EXPECT_THAT(many.Run({Literal<int64_t>({}, {0}), kIndices, kValues, kShape}),
              StatusIs(kInvalid,
                       "Input num_split should be between 1 and the splitting dimension size "
                       "(4), got 5"));
  KernelRunner two("SparseSplit");
  two.Attr("num_split", int64_t{2});
  EXPECT_THAT(
      two.Run({Literal<int64_t>({}, {0}), I64({1, 2}, {7, 0}), Literal<float>({1}, {1}), kShape}),
      StatusIs(kInvalid, "Sparse index tuple indices[0, :] = [7, 0] is out of bounds"));
}

TEST(SparseSoftmaxTest, SoftmaxPerRowInSortedOrder) {
  KernelRunner r("SparseSoftmax");
  EXPECT_THAT(RunOk(r, {I64({6, 2}, {0, 0, 0, 2, 1, 1, 1, 2, 1, 3, 2, 0}),
                        Literal<float>({6}, {1, 2, 0.5f, -1, 3, 7}), I64({2}, {3, 4})}),
              TensorNear<float>({6},
                                {0.2689414322376251f, 0.7310585975646973f, 0.07459555566310883f,
                                 0.016644518822431564f, 0.9087598919868469f, 1.0f},
                                1e-6));
  // Out of order: the values come out sorted, as TF's.
  EXPECT_THAT(
      RunOk(r, {I64({3, 2}, {0, 0, 1, 1, 0, 2}), Literal<float>({3}, {1, 2, 3}), I64({2}, {3, 4})}),
      TensorNear<float>({3}, {0.11920291185379028f, 0.8807970285415649f, 1.0f}, 1e-6));
  KernelRunner d("SparseSoftmax");
  EXPECT_THAT(RunOk(d, {I64({5, 3}, {0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 2}),
                        Literal<double>({5}, {1, 2, 3, 4, 5}), I64({3}, {2, 2, 3})}),
              TensorNear<double>({5},
                                 {0.26894142136999516, 0.7310585786300049, 1.0, 0.26894142136999516,
                                  0.7310585786300049},
                                 1e-15));
  EXPECT_THAT(r.Run({I64({2, 1}, {0, 1}), Literal<float>({2}, {1, 2}), I64({1}, {3})}),
              StatusIs(kInvalid, "Input should have rank >= 2, but received shape: 3"));
}

}  // namespace
}  // namespace towerflow
