// SparseAdd (+ SparseAddGrad), SparseSparseMaximum/Minimum and
// SparseDenseCwiseAdd/Mul/Div (sparse_binary_ops.cc) against TensorFlow
// 2.21's values and messages (tf.raw_ops on these inputs).
#include <cmath>
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

const Tensor kA = I64({3, 2}, {0, 0, 1, 1, 2, 0});
const Tensor kB = I64({3, 2}, {0, 1, 1, 1, 2, 2});
const Tensor kShape = I64({2}, {3, 3});

std::vector<Tensor> RunAll(KernelRunner& r, const std::vector<Tensor>& inputs) {
  absl::StatusOr<std::vector<Tensor>> out = r.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

TEST(SparseAddTest, MergesAndDropsSmallSumsOnly) {
  KernelRunner r("SparseAdd");
  // [1,1]: 2 + -1.95 = 0.05 < 0.1 is dropped; b's lone 0.01 stays.
  auto out = RunAll(r, {kA, Literal<float>({3}, {1, 2, 3}), kShape, kB,
                        Literal<float>({3}, {0.01f, -1.95f, 30}), kShape, Scalar<float>(0.1f)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 0, 0, 1, 2, 0, 2, 2}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {1, 0.01f, 3, 30}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {3, 3}));
  // Unsorted operands: TF's merge, whatever it gives.
  out =
      RunAll(r, {I64({2, 2}, {2, 0, 0, 0}), Literal<float>({2}, {1, 2}), kShape,
                 I64({2, 2}, {1, 1, 0, 0}), Literal<float>({2}, {4, 5}), kShape, Scalar<float>(0)});
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {1, 1, 0, 0, 2, 0, 0, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {4, 5, 1, 2}));
  // Complex: |2 + (-2 + 0.5i)| = 0.5 < 0.6.
  KernelRunner c("SparseAdd");
  out = RunAll(c, {I64({2, 1}, {0, 1}), Literal<complex64>({2}, {{1, 1}, {2, 0}}), I64({1}, {3}),
                   I64({2, 1}, {1, 2}), Literal<complex64>({2}, {{-2, 0.5f}, {0, 3}}),
                   I64({1}, {3}), Scalar<float>(0.6f)});
  EXPECT_THAT(out[0], TensorIs<int64_t>({2, 1}, {0, 2}));
  EXPECT_THAT(out[1], TensorIs<complex64>({2}, {{1, 1}, {0, 3}}));
}

TEST(SparseAddTest, BadOperandsHaveTensorFlowsMessages) {
  KernelRunner r("SparseAdd");
  const Tensor v = Literal<float>({3}, {1, 2, 3});
  EXPECT_THAT(r.Run({kA, v, kShape, kB, v, I64({2}, {3, 4}), Scalar<float>(0)}),
              StatusIs(kInvalid, "Operands' shapes do not match: got 3 and 4 for dimension 1"));
  EXPECT_THAT(r.Run({kA, v, kShape, I64({1, 3}, {0, 1, 1}), Literal<float>({1}, {1}),
                     I64({3}, {3, 3, 1}), Scalar<float>(0)}),
              StatusIs(kInvalid, "Input indices must have the same dimension, got 2 and 3"));
  EXPECT_THAT(r.Run({kA, v, kShape, kB, Literal<float>({2}, {1, 2}), kShape, Scalar<float>(0)}),
              StatusIs(kInvalid, "Expected 3 and 3 non-empty input values, got 3 and 2"));
  EXPECT_THAT(r.Run({kA, v, kShape, kB, v, kShape, Literal<float>({1}, {0})}),
              StatusIs(kInvalid, "The magnitude threshold must be a scalar: got shape [1]"));
  EXPECT_THAT(
      r.Run({I64({1, 2}, {0, 0}), Literal<float>({1}, {1}), I64({3}, {3, 3, 3}),
             I64({1, 2}, {0, 1}), Literal<float>({1}, {1}), I64({3}, {3, 3, 3}), Scalar<float>(0)}),
      StatusIs(kInvalid,
               "Second dimension of a_indices and length of a_shape must match, got 2 "
               "and 3"));
}

TEST(SparseAddGradTest, EachOperandTakesTheSumsGradient) {
  KernelRunner r("SparseAddGrad");
  auto out = RunAll(r, {Literal<float>({5}, {1, 2, 3, 4, 5}), kA, kB,
                        I64({5, 2}, {0, 0, 0, 1, 1, 1, 2, 0, 2, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], TensorIs<float>({3}, {1, 3, 4}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {2, 3, 5}));
  // [1,1] dropped from the sum: 0 for both.
  out =
      RunAll(r, {Literal<float>({4}, {1, 2, 3, 4}), kA, kB, I64({4, 2}, {0, 0, 0, 1, 2, 0, 2, 2})});
  EXPECT_THAT(out[0], TensorIs<float>({3}, {1, 0, 3}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {2, 0, 4}));
  EXPECT_THAT(r.Run({Literal<float>({2}, {1, 2}), I64({1, 2}, {0, 0}), I64({1, 3}, {0, 1, 1}),
                     I64({2, 2}, {0, 0, 0, 1})}),
              StatusIs(kInvalid,
                       "The densified operands should have the same ndims; for A, B, sum got: "
                       "232"));
}

TEST(SparseSparseMinMaxTest, AbsentEntriesCountAsZero) {
  const Tensor a = Literal<float>({3}, {1, -2, 3}), b = Literal<float>({3}, {-10, 5, -1});
  const Tensor b_indices = I64({3, 2}, {0, 1, 1, 1, 2, 0});
  KernelRunner mx("SparseSparseMaximum");
  auto out = RunAll(mx, {kA, a, kShape, b_indices, b, kShape});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], TensorIs<int64_t>({4, 2}, {0, 0, 0, 1, 1, 1, 2, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {1, 0, 5, 3}));
  KernelRunner mn("SparseSparseMinimum");
  EXPECT_THAT(RunAll(mn, {kA, a, kShape, b_indices, b, kShape})[1],
              TensorIs<float>({4}, {0, -10, -2, -1}));
  // NaN wins, as TF's maximum.
  const std::vector<Tensor> nan =
      RunAll(mx, {I64({2, 1}, {0, 1}), Literal<float>({2}, {NAN, -1}), I64({1}, {3}),
                  I64({2, 1}, {1, 2}), Literal<float>({2}, {NAN, -3}), I64({1}, {3})});
  ASSERT_EQ(nan.size(), 2u);
  EXPECT_TRUE(std::isnan(nan[1].data<float>()[0]) && std::isnan(nan[1].data<float>()[1]));
  EXPECT_EQ(nan[1].data<float>()[2], 0.0f);
  EXPECT_THAT(mx.Run({kA, a, kShape, I64({1, 2}, {0, 7}), Literal<float>({1}, {1}), kShape}),
              StatusIs(kInvalid, "Sparse index tuple indices[0, :] = [0, 7] is out of bounds"));
}

Tensor Cwise(const char* op, const Tensor& values, const Tensor& dense) {
  KernelRunner r(op);
  return RunOk(r, {I64({3, 2}, {0, 0, 0, 2, 1, 1}), values, I64({2}, {2, 3}), dense});
}

TEST(SparseDenseCwiseTest, DenseBroadcastsToTheSparseShape) {
  const Tensor v = Literal<float>({3}, {1, 2, 3});
  const Tensor full = Literal<float>({2, 3}, {10, 20, 30, 40, 50, 60});
  EXPECT_THAT(Cwise("SparseDenseCwiseAdd", v, full), TensorIs<float>({3}, {11, 32, 53}));
  EXPECT_THAT(Cwise("SparseDenseCwiseMul", v, Literal<float>({3}, {2, 4, 8})),
              TensorIs<float>({3}, {2, 16, 12}));
  EXPECT_THAT(Cwise("SparseDenseCwiseDiv", v, Literal<float>({2, 1}, {2, 4})),
              TensorIs<float>({3}, {0.5f, 1, 0.75f}));
  EXPECT_THAT(Cwise("SparseDenseCwiseMul", v, Scalar<float>(3)), TensorIs<float>({3}, {3, 6, 9}));
  // Integers truncate: -7 / 2, 7 / -2, 5 / 2.
  EXPECT_THAT(Cwise("SparseDenseCwiseDiv", Literal<int32_t>({3}, {-7, 7, 5}),
                    Literal<int32_t>({3}, {2, 2, -2})),
              TensorIs<int32_t>({3}, {-3, -3, 2}));
}

TEST(SparseDenseCwiseTest, BadOperandsHaveTensorFlowsMessages) {
  KernelRunner r("SparseDenseCwiseMul");
  const Tensor idx = I64({3, 2}, {0, 0, 0, 2, 1, 1}), v = Literal<float>({3}, {1, 2, 3});
  EXPECT_THAT(r.Run({idx, v, I64({2}, {2, 3}), Literal<float>({2}, {2, 4})}),
              StatusIs(kInvalid,
                       "SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
                       "incompatible shapes: [2,3] vs. [2]"));
  EXPECT_THAT(r.Run({I64({1, 2}, {0, 5}), Literal<float>({1}, {1}), I64({2}, {2, 3}),
                     Literal<float>({3}, {2, 4, 8})}),
              StatusIs(kInvalid,
                       "Provided indices are out-of-bounds w.r.t. dense side with broadcasted "
                       "shape"));
  EXPECT_THAT(
      r.Run({idx, Literal<float>({2}, {1, 2}), I64({2}, {2, 3}), Scalar<float>(2)}),
      StatusIs(kInvalid, "The first dimension of values and indices should match. (2 vs. 3)"));
  KernelRunner d("SparseDenseCwiseDiv");
  // A zero the entries use is an error (for floats too); one they do not use is not.
  EXPECT_THAT(d.Run({I64({1, 2}, {0, 1}), Literal<float>({1}, {7}), I64({2}, {2, 3}),
                     Literal<float>({3}, {2, -0.0f, 1})}),
              StatusIs(kInvalid,
                       "SparseDenseCwiseDiv cannot divide by zero,but input dense tensor contains "
                       "zero "));
  EXPECT_THAT(RunOk(d, {I64({1, 2}, {0, 1}), Literal<float>({1}, {7}), I64({2}, {2, 3}),
                        Literal<float>({3}, {2, 3, 0})}),
              TensorNear<float>({1}, {2.3333332538604736f}, 1e-6));
}

// Hypotheses [a b] and [c], truths [a] and [d c] (TF 2.21's distances).
TEST(EditDistanceTest, LevenshteinPerSequence) {
  const Tensor hi = I64({3, 2}, {0, 0, 0, 1, 1, 0}), ti = I64({3, 2}, {0, 0, 1, 0, 1, 1});
  const Tensor hv = Literal<std::string>({3}, {"a", "b", "c"});
  const Tensor tv = Literal<std::string>({3}, {"a", "d", "c"});
  const Tensor shape = I64({2}, {2, 2});
  KernelRunner r("EditDistance");
  EXPECT_THAT(RunOk(r, {hi, hv, shape, ti, tv, shape}), TensorIs<float>({2}, {1, 0.5f}));
  KernelRunner raw("EditDistance");
  raw.Attr("normalize", false);
  EXPECT_THAT(RunOk(raw, {hi, hv, shape, ti, tv, shape}), TensorIs<float>({2}, {1, 1}));
  // A missing truth gives inf (normalized), a missing hypothesis 1; the
  // output spans both shapes.
  KernelRunner n("EditDistance");
  EXPECT_THAT(RunOk(n, {I64({1, 2}, {0, 0}), Literal<int32_t>({1}, {1}), I64({2}, {1, 3}),
                        I64({1, 2}, {2, 0}), Literal<int32_t>({1}, {1}), I64({2}, {3, 1})}),
              TensorIs<float>({3}, {INFINITY, 0, 1}));
  // Runs out of order: each writes its element, as TF's merge does.
  EXPECT_THAT(RunOk(raw, {I64({3, 2}, {1, 0, 0, 0, 1, 1}), Literal<int32_t>({3}, {1, 2, 3}), shape,
                          I64({2, 2}, {0, 0, 1, 0}), Literal<int32_t>({2}, {2, 1}), shape}),
              TensorIs<float>({2}, {1, 1}));
  EXPECT_THAT(n.Run({I64({1, 2}, {3, 0}), Literal<int32_t>({1}, {1}), I64({2}, {1, 2}),
                     I64({1, 2}, {0, 0}), Literal<int32_t>({1}, {1}), I64({2}, {1, 2})}),
              StatusIs(kInvalid,
                       "Got an inner product 3 which would require writing to outside of the "
                       "buffer for the output tensor (max elements 1)"));
  EXPECT_THAT(n.Run({I64({1, 2}, {0, 0}), Literal<int32_t>({1}, {1}), I64({2}, {1, 2}),
                     I64({1, 3}, {0, 0, 0}), Literal<int32_t>({1}, {1}), I64({3}, {1, 2, 1})}),
              StatusIs(kInvalid,
                       "Expected truth and hypothesis to have matching ranks, but their shapes "
                       "are: [3] and [2]"));
}

}  // namespace
}  // namespace towerflow
