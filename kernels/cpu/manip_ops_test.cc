// The last row of issue 64 against TensorFlow 2.21's values and messages
// (tf.raw_ops on these inputs): Roll, ReverseSequence, UniqueWithCounts,
// LinSpace, Empty, DeepCopy, ParallelConcat, ParallelDynamicStitch,
// AccumulateNV2, BroadcastArgs, Bincount, NthElement, HistogramFixedWidth,
// SparseTensorDenseAdd and RaggedRange. Gradients are checked in
// ops/gradients (finite differences).
#include <cmath>
#include <limits>
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

Tensor Range12() { return Literal<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}); }

Tensor Roll(const Tensor& x, const Tensor& shift, const Tensor& axis) {
  KernelRunner r("Roll");
  return RunOk(r, {x, shift, axis});
}

TEST(ManipTest, RollMatchesTensorFlow) {
  const Tensor x = Range12();
  EXPECT_THAT(Roll(x, Scalar<int32_t>(1), Scalar<int32_t>(1)),
              TensorIs<float>({3, 4}, {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}));
  EXPECT_THAT(Roll(x, Literal<int32_t>({2}, {-1, 5}), Literal<int32_t>({2}, {0, 1})),
              TensorIs<float>({3, 4}, {7, 4, 5, 6, 11, 8, 9, 10, 3, 0, 1, 2}));
  // Shifts of one axis add up: 1 + 2 along axis 1.
  EXPECT_THAT(Roll(x, Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {1, 1})),
              TensorIs<float>({3, 4}, {1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8}));
  EXPECT_THAT(Roll(x, Scalar<int64_t>(-7), Literal<int64_t>({1}, {-1})),
              TensorIs<float>({3, 4}, {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}));
  EXPECT_THAT(Roll(Literal<float>({0, 3}, {}), Scalar<int32_t>(1), Scalar<int32_t>(1)),
              TensorIs<float>({0, 3}, {}));
  KernelRunner s("Roll");
  const Tensor strings = Literal<std::string>({3}, {"a", "b", "c"});
  EXPECT_THAT(RunOk(s, {strings, Scalar<int32_t>(1), Scalar<int32_t>(0)}),
              TensorIs<std::string>({3}, {"c", "a", "b"}));

  KernelRunner r("Roll");
  EXPECT_THAT(r.Run({x, Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({1}, {1})}),
              StatusIs(kInvalid, "shift and axis must have the same size"));
  EXPECT_THAT(r.Run({x, Scalar<int32_t>(1), Scalar<int32_t>(2)}),
              StatusIs(kInvalid, "axis 2 is out of range"));
  EXPECT_THAT(r.Run({Scalar<float>(5), Scalar<int32_t>(1), Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "input must be 1-D or higher"));
  EXPECT_THAT(r.Run({x, Literal<int32_t>({1, 1}, {1}), Literal<int32_t>({1, 1}, {1})}),
              StatusIs(kInvalid, "shift must be a scalar or a 1-D vector. Found: [1,1]"));
}

TEST(ManipTest, ReverseSequenceMatchesTensorFlow) {
  std::vector<int32_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  const Tensor s = Literal<int32_t>({2, 3, 4}, v);
  KernelRunner r("ReverseSequence");
  r.Attr("seq_dim", int64_t{2}).Attr("batch_dim", int64_t{0});
  EXPECT_THAT(RunOk(r, {s, Literal<int64_t>({2}, {2, 4})}),
              TensorIs<int32_t>({2, 3, 4}, {1,  0,  2,  3,  5,  4,  6,  7,  9,  8,  10, 11,
                                            15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20}));
  // The batch after the sequence: seq_dim 0, batch_dim 2 of [3, 2, 4]
  // (np.arange(24).reshape(3, 2, 4), lengths 3, 0, 2, 1).
  KernelRunner t("ReverseSequence");
  t.Attr("seq_dim", int64_t{0}).Attr("batch_dim", int64_t{2});
  EXPECT_THAT(RunOk(t, {Literal<int32_t>({3, 2, 4}, v), Literal<int32_t>({4}, {3, 0, 2, 1})}),
              TensorIs<int32_t>({3, 2, 4}, {16, 1,  10, 3,  20, 5,  14, 7,  8, 9,  2,  11,
                                            12, 13, 6,  15, 0,  17, 18, 19, 4, 21, 22, 23}));
  EXPECT_THAT(r.Run({s, Literal<int64_t>({2}, {5, 1})}),
              StatusIs(kInvalid, "seq_lens(0) > input.dims(2)"));
  EXPECT_THAT(r.Run({s, Literal<int64_t>({2}, {-1, 1})}), StatusIs(kInvalid, "seq_lens(0) < 0"));
  EXPECT_THAT(r.Run({s, Literal<int64_t>({3}, {1, 1, 1})}),
              StatusIs(kInvalid, "Length of seq_lengths != input.dims(0), (3 vs. 2)"));
  EXPECT_THAT(r.Run({s, Literal<int64_t>({1, 2}, {1, 1})}),
              StatusIs(kInvalid, "seq_lengths must be 1-dim, not 2"));
  KernelRunner same("ReverseSequence");
  same.Attr("seq_dim", int64_t{0}).Attr("batch_dim", int64_t{0});
  EXPECT_THAT(same.Run({s, Literal<int64_t>({2}, {1, 1})}),
              StatusIs(kInvalid, "batch_dim == seq_dim == 0"));
  KernelRunner high("ReverseSequence");
  high.Attr("seq_dim", int64_t{3}).Attr("batch_dim", int64_t{0});
  EXPECT_THAT(high.Run({s, Literal<int64_t>({2}, {1, 1})}),
              StatusIs(kInvalid, "seq_dim must be < input rank ( 3 vs. 3)"));
}

TEST(ManipTest, UniqueWithCountsMatchesTensorFlow) {
  KernelRunner r("UniqueWithCounts");
  r.Attr("out_idx", DT_INT64);
  const auto out = r.Run({Literal<int32_t>({9}, {1, 1, 2, 4, 4, 4, 7, 8, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({5}, {1, 2, 4, 7, 8}));
  EXPECT_THAT((*out)[1], TensorIs<int64_t>({9}, {0, 0, 1, 2, 2, 2, 3, 4, 4}));
  EXPECT_THAT((*out)[2], TensorIs<int64_t>({5}, {2, 1, 3, 1, 2}));
  // Each NaN is its own value.
  KernelRunner f("UniqueWithCounts");
  const auto nan = f.Run({Literal<float>({4}, {NAN, 1, NAN, 1})});
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_THAT((*nan)[1], TensorIs<int32_t>({4}, {0, 1, 2, 1}));
  EXPECT_THAT((*nan)[2], TensorIs<int32_t>({3}, {1, 2, 1}));
  EXPECT_THAT(f.Run({Literal<float>({1, 1}, {1})}),
              StatusIs(kInvalid, "unique expects a 1D vector"));
}

TEST(ManipTest, LinSpaceMatchesTensorFlow) {
  KernelRunner r("LinSpace");
  EXPECT_THAT(RunOk(r, {Scalar<float>(10), Scalar<float>(12), Scalar<int32_t>(3)}),
              TensorIs<float>({3}, {10, 11, 12}));
  EXPECT_THAT(RunOk(r, {Scalar<float>(1), Scalar<float>(0), Scalar<int32_t>(4)}),
              TensorIs<float>({4}, {1, 0.6666666269302368f, 0.3333333134651184f, 0}));
  // The step and the sums in float, the last value stop itself.
  EXPECT_THAT(RunOk(r, {Scalar<float>(-1), Scalar<float>(1), Scalar<int32_t>(6)}),
              TensorIs<float>({6}, {-1, -0.6000000238418579f, -0.19999998807907104f,
                                    0.20000004768371582f, 0.6000000238418579f, 1}));
  EXPECT_THAT(RunOk(r, {Scalar<float>(1), Scalar<float>(5), Scalar<int32_t>(1)}),
              TensorIs<float>({1}, {1}));
  EXPECT_THAT(RunOk(r, {Scalar<double>(0), Scalar<double>(1), Scalar<int64_t>(7)}),
              TensorIs<double>({7}, {0, 0.16666666666666666, 0.3333333333333333, 0.5,
                                     0.6666666666666666, 0.8333333333333333, 1}));
  EXPECT_THAT(r.Run({Scalar<float>(1), Scalar<float>(5), Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "Requires num > 0: 0"));
  EXPECT_THAT(r.Run({Literal<float>({1}, {1}), Scalar<float>(5), Scalar<int32_t>(3)}),
              StatusIs(kInvalid, "start must be a scalar, not shape [1]"));
}

TEST(ManipTest, EmptyDeepCopyAndBroadcastArgs) {
  KernelRunner e("Empty");
  e.Attr("dtype", DT_FLOAT).Attr("init", true);
  EXPECT_THAT(RunOk(e, {Literal<int32_t>({2}, {2, 3})}),
              TensorIs<float>({2, 3}, {0, 0, 0, 0, 0, 0}));
  EXPECT_THAT(e.Run({Literal<int32_t>({2}, {2, -3})}),
              StatusIs(kInvalid, "Dimension -3 must be >= 0"));
  EXPECT_THAT(e.Run({Literal<int32_t>({1, 1}, {2})}),
              StatusIs(kInvalid, "shape must be a vector of int32, got shape [1,1]"));

  KernelRunner d("DeepCopy");
  const Tensor x = Literal<int32_t>({2}, {1, 2});
  const Tensor y = RunOk(d, {x});
  EXPECT_THAT(y, TensorIs<int32_t>({2}, {1, 2}));
  EXPECT_FALSE(y.SharesBufferWith(x));

  KernelRunner b("BroadcastArgs");
  EXPECT_THAT(RunOk(b, {Literal<int32_t>({3}, {2, 1, 3}), Literal<int32_t>({2}, {4, 1})}),
              TensorIs<int32_t>({3}, {2, 4, 3}));
  EXPECT_THAT(RunOk(b, {Literal<int64_t>({2}, {0, 1}), Literal<int64_t>({3}, {5, 1, 1})}),
              TensorIs<int64_t>({3}, {5, 0, 1}));
  EXPECT_THAT(b.Run({Literal<int32_t>({2}, {2, 3}), Literal<int32_t>({2}, {4, 1})}),
              StatusIs(kInvalid, "Incompatible shapes: [2,3] vs. [4,1]"));
  EXPECT_THAT(b.Run({Literal<int32_t>({1, 2}, {2, 3}), Literal<int32_t>({2}, {4, 1})}),
              StatusIs(kInvalid, "In[0] must be a vector.[1,2]"));
}

TEST(ManipTest, ParallelConcatStitchAndAccumulate) {
  KernelRunner c("ParallelConcat");
  c.Attr("shape", PartialTensorShape({2, 2}));
  EXPECT_THAT(RunOk(c, {Literal<float>({1, 2}, {1, 2}), Literal<float>({1, 2}, {3, 4})}),
              TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_THAT(c.Run({Literal<float>({1, 2}, {1, 2}), Literal<float>({2, 2}, {3, 4, 5, 6})}),
              StatusIs(kInvalid, "update shape doesn't match: [2,2]"));
  KernelRunner wide("ParallelConcat");
  wide.Attr("shape", PartialTensorShape({2, 3}));
  EXPECT_THAT(wide.Run({Literal<float>({1, 2}, {1, 2}), Literal<float>({1, 2}, {3, 4})}),
              StatusIs(kInvalid, "value and update shape doesn't match [2,3] vs. [1,2]"));
  // TF leaves a row no value fills uninitialized; Towerflow refuses.
  KernelRunner tall("ParallelConcat");
  tall.Attr("shape", PartialTensorShape({3, 2}));
  EXPECT_THAT(tall.Run({Literal<float>({1, 2}, {1, 2}), Literal<float>({1, 2}, {3, 4})}),
              StatusIs(kInvalid, "needs one row for each of its 2 values"));

  KernelRunner s("ParallelDynamicStitch");
  s.Attr("N", int64_t{2});
  EXPECT_THAT(
      RunOk(s, {Literal<int32_t>({2}, {0, 2}), Literal<int32_t>({2}, {1, 3}),
                Literal<float>({2, 2}, {1, 1, 3, 3}), Literal<float>({2, 2}, {2, 2, 4, 4})}),
      TensorIs<float>({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4}));
  KernelRunner gap("ParallelDynamicStitch");
  gap.Attr("N", int64_t{1});
  EXPECT_THAT(RunOk(gap, {Literal<int32_t>({2}, {0, 5}), Literal<float>({2}, {1, 3})}),
              TensorIs<float>({6}, {1, 0, 0, 0, 0, 3}));

  KernelRunner a("AccumulateNV2");
  a.Attr("shape", PartialTensorShape({2}));
  EXPECT_THAT(RunOk(a, {Literal<float>({2}, {1, 2}), Literal<float>({2}, {3, 4}),
                        Literal<float>({2}, {5, 6})}),
              TensorIs<float>({2}, {9, 12}));
}

TEST(ManipTest, BincountMatchesTensorFlow) {
  KernelRunner r("Bincount");
  const Tensor arr = Literal<int32_t>({6}, {1, 1, 3, 0, 3, 3});
  EXPECT_THAT(RunOk(r, {arr, Scalar<int32_t>(5), Literal<float>({0}, {})}),
              TensorIs<float>({5}, {1, 2, 0, 3, 0}));
  // Entries at or past size are dropped.
  EXPECT_THAT(RunOk(r, {arr, Scalar<int32_t>(3), Literal<float>({6}, {1, 2, 3, 4, 5, 6})}),
              TensorIs<float>({3}, {4, 3, 0}));
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({2, 2}, {1, 1, 2, 0}), Scalar<int32_t>(3),
                        Literal<int64_t>({2, 2}, {1, 2, 3, 4})}),
              TensorIs<int64_t>({3}, {4, 3, 3}));
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({0}, {}), Scalar<int32_t>(2), Literal<float>({0}, {})}),
              TensorIs<float>({2}, {0, 0}));
  EXPECT_THAT(
      r.Run({Literal<int32_t>({3}, {1, -1, 3}), Scalar<int32_t>(5), Literal<int32_t>({0}, {})}),
      StatusIs(kInvalid, "Input arr must be non-negative!"));
  EXPECT_THAT(r.Run({arr, Scalar<int32_t>(-1), Literal<int32_t>({0}, {})}),
              StatusIs(kInvalid, "size (-1) must be non-negative"));
  EXPECT_THAT(r.Run({arr, Scalar<int32_t>(3), Literal<int32_t>({3}, {1, 2, 3})}),
              StatusIs(kInvalid, "Input indices and weights must have the same size."));
}

TEST(ManipTest, NthElementMatchesTensorFlow) {
  const Tensor x = Literal<float>({2, 4}, {5, 1, 3, 3, 2, 8, -1, 0});
  KernelRunner r("NthElement");
  EXPECT_THAT(RunOk(r, {x, Scalar<int32_t>(0)}), TensorIs<float>({2}, {1, -1}));
  EXPECT_THAT(RunOk(r, {x, Scalar<int32_t>(2)}), TensorIs<float>({2}, {3, 2}));
  KernelRunner rev("NthElement");
  rev.Attr("reverse", true);
  EXPECT_THAT(RunOk(rev, {x, Scalar<int32_t>(1)}), TensorIs<float>({2}, {3, 2}));
  EXPECT_THAT(RunOk(rev, {Literal<int32_t>({1, 3}, {1, 3, 2}), Scalar<int32_t>(2)}),
              TensorIs<int32_t>({1}, {1}));
  EXPECT_THAT(r.Run({x, Scalar<int32_t>(4)}),
              StatusIs(kInvalid, "Input must have last dimension > n = 4"));
  EXPECT_THAT(r.Run({x, Scalar<int32_t>(-1)}),
              StatusIs(kInvalid, "n must be non-negative but is -1"));
  EXPECT_THAT(r.Run({Scalar<float>(3), Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "Input must be at least rank 1 but is rank 0"));
  EXPECT_THAT(r.Run({x, Literal<int32_t>({1}, {0})}),
              StatusIs(kInvalid, "N must be scalar but has rank 1"));
}

TEST(ManipTest, HistogramFixedWidthMatchesTensorFlow) {
  KernelRunner r("HistogramFixedWidth");
  EXPECT_THAT(RunOk(r, {Literal<float>({6}, {-1, 0, 1.5f, 2, 5, 15}), Literal<float>({2}, {0, 5}),
                        Scalar<int32_t>(5)}),
              TensorIs<int32_t>({5}, {2, 1, 1, 0, 2}));
  KernelRunner wide("HistogramFixedWidth");
  wide.Attr("dtype", DT_INT64);
  EXPECT_THAT(RunOk(wide, {Literal<int32_t>({2, 2}, {-1, 0, 1, 2}), Literal<int32_t>({2}, {0, 4}),
                           Scalar<int32_t>(3)}),
              TensorIs<int64_t>({3}, {3, 1, 0}));
  // The integer extremes land in the end bins.
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({3}, {std::numeric_limits<int32_t>::min(), 0,
                                               std::numeric_limits<int32_t>::max()}),
                        Literal<int32_t>({2}, {-5, 5}), Scalar<int32_t>(4)}),
              TensorIs<int32_t>({4}, {1, 0, 1, 1}));
  const Tensor one = Literal<float>({1}, {1});
  EXPECT_THAT(r.Run({one, Literal<float>({2}, {5, 5}), Scalar<int32_t>(3)}),
              StatusIs(kInvalid,
                       "value_range should satisfy value_range[0] < value_range[1], but "
                       "got '[5, 5]'"));
  EXPECT_THAT(r.Run({one, Literal<float>({2}, {0, 5}), Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "nbins should be a positive number, but got '0'"));
  EXPECT_THAT(r.Run({one, Literal<float>({3}, {0, 5, 6}), Scalar<int32_t>(2)}),
              StatusIs(kInvalid, "value_range should be a vector of 2 elements."));
  EXPECT_THAT(r.Run({Literal<float>({4}, {NAN, INFINITY, -INFINITY, 2.5f}),
                     Literal<float>({2}, {0, 5}), Scalar<int32_t>(2)}),
              StatusIs(kInvalid, "Histogram values must not contain NaN"));
  EXPECT_THAT(RunOk(r, {Literal<float>({3}, {INFINITY, -INFINITY, 2.5f}),
                        Literal<float>({2}, {0, 5}), Scalar<int32_t>(2)}),
              TensorIs<int32_t>({2}, {1, 2}));
}

TEST(ManipTest, SparseTensorDenseAddMatchesTensorFlow) {
  KernelRunner r("SparseTensorDenseAdd");
  const Tensor indices = Literal<int64_t>({2, 2}, {0, 1, 2, 0});
  const Tensor shape = Literal<int64_t>({2}, {3, 2});
  const Tensor ones = Literal<float>({3, 2}, {1, 1, 1, 1, 1, 1});
  EXPECT_THAT(RunOk(r, {indices, Literal<float>({2}, {10, 20}), shape, ones}),
              TensorIs<float>({3, 2}, {1, 11, 1, 1, 21, 1}));
  // Repeated indices add up.
  KernelRunner i("SparseTensorDenseAdd");
  EXPECT_THAT(RunOk(i, {Literal<int32_t>({2, 2}, {0, 1, 0, 1}), Literal<int32_t>({2}, {1, 2}),
                        Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2, 2}, {1, 1, 1, 1})}),
              TensorIs<int32_t>({2, 2}, {1, 4, 1, 1}));
  EXPECT_THAT(r.Run({indices, Literal<float>({2}, {10, 20}), shape,
                     Literal<float>({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})}),
              StatusIs(kInvalid,
                       "Dimension 1 does not equal (no broadcasting is supported): "
                       "sparse side 2 vs dense side 3"));
  EXPECT_THAT(r.Run({Literal<int64_t>({1, 2}, {0, 5}), Literal<float>({1}, {10}), shape, ones}),
              StatusIs(kInvalid,
                       "Sparse tensor has an invalid index on dimension 1: "
                       "a_indices(0,1) = 5, dense tensor shape: 3 2"));
  EXPECT_THAT(r.Run({Literal<int64_t>({1, 2}, {-1, 0}), Literal<float>({1}, {1}), shape, ones}),
              StatusIs(kInvalid, "invalid index on dimension 0: a_indices(0,0) = -1"));
  EXPECT_THAT(r.Run({Literal<int64_t>({2}, {0, 1}), Literal<float>({2}, {1, 2}),
                     Literal<int64_t>({1}, {2}), Literal<float>({2}, {1, 1})}),
              StatusIs(kInvalid, "Input a_indices should be a matrix but received shape: [2]"));
  EXPECT_THAT(r.Run({indices, Literal<float>({1, 2}, {10, 20}), shape, ones}),
              StatusIs(kInvalid,
                       "Inputs a_values and a_shape should be vectors but received "
                       "shapes: [1,2] and [2]"));
  EXPECT_THAT(r.Run({indices, Literal<float>({2}, {10, 20}), shape,
                     Literal<float>({3, 2, 1}, {1, 1, 1, 1, 1, 1})}),
              StatusIs(kInvalid, "Two operands have different ranks; received: 2 and 3"));
}

TEST(ManipTest, RaggedRangeMatchesTensorFlow) {
  KernelRunner r("RaggedRange");
  auto out = r.Run(
      {Literal<int32_t>({3}, {2, 5, 8}), Literal<int32_t>({3}, {3, 5, 12}), Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({4}, {0, 1, 1, 5}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({5}, {2, 8, 9, 10, 11}));
  KernelRunner s32("RaggedRange");
  s32.Attr("Tsplits", DT_INT32);
  out = s32.Run(
      {Scalar<int32_t>(0), Literal<int32_t>({3}, {3, 5, -2}), Literal<int32_t>({3}, {1, 2, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({4}, {0, 3, 6, 8}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({8}, {0, 1, 2, 0, 2, 4, 0, -1}));
  out = r.Run({Literal<float>({2}, {0.5f, -3}), Literal<float>({2}, {-2.5f, 0}),
               Literal<float>({2}, {-1.5f, 0.75f})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({3}, {0, 2, 6}));
  EXPECT_THAT((*out)[1], TensorIs<float>({6}, {0.5f, -1, -3, -2.25f, -1.5f, -0.75f}));
  out = r.Run({Literal<int32_t>({2}, {0, 10}), Literal<int32_t>({2}, {7, -2}),
               Literal<int32_t>({2}, {3, -4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({3}, {0, 3, 6}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({6}, {0, 3, 6, 10, 6, 2}));
  // Scalars alone make one row.
  out = r.Run({Scalar<int32_t>(1), Scalar<int32_t>(3), Scalar<int32_t>(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({2}, {0, 2}));
  EXPECT_THAT(r.Run({Literal<int32_t>({1}, {0}), Scalar<int32_t>(3), Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "Requires delta != 0"));
  EXPECT_THAT(
      r.Run({Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({3}, {3, 4, 5}), Scalar<int32_t>(1)}),
      StatusIs(kInvalid, "starts, limits, and deltas must have the same shape"));
  EXPECT_THAT(r.Run({Literal<int32_t>({1, 1}, {0}), Scalar<int32_t>(3), Scalar<int32_t>(1)}),
              StatusIs(kInvalid, "starts must be a scalar or vector"));
  EXPECT_THAT(r.Run({Literal<float>({1}, {0}), Literal<float>({1}, {1e10f}),
                     Literal<float>({1}, {1e-10f})}),
              StatusIs(kInvalid, "Requires ((limit - start) / delta) <= 9223372036854775807"));
}

// CompareAndBitpack (TF 2.21's Python no longer registers it; the values
// follow its kernel, compare_and_bitpack_op.cc: the first of each eight is
// the top bit).
TEST(ManipTest, CompareAndBitpack) {
  KernelRunner r("CompareAndBitpack");
  EXPECT_THAT(RunOk(r, {Literal<float>({1, 16}, {0.1f, 0.9f, 0.5f, 0.6f, -1, 2, 0.5f, 0.51f, 1, 1,
                                                 1, 1, 1, 1, 1, 0}),
                        Scalar<float>(0.5f)}),
              TensorIs<uint8_t>({1, 2}, {0b01010101, 0b11111110}));
  EXPECT_THAT(RunOk(r, {Literal<bool>({8}, {true, false, true, true, false, false, false, true}),
                        Scalar<bool>(true)}),
              TensorIs<uint8_t>({1}, {0b10110001}));
  EXPECT_THAT(RunOk(r, {Literal<int64_t>({8}, {3, 4, 5, 6, 7, 8, 9, 10}), Scalar<int64_t>(6)}),
              TensorIs<uint8_t>({1}, {0b00001111}));
  EXPECT_THAT(r.Run({Literal<float>({7}, {0, 0, 0, 0, 0, 0, 0}), Scalar<float>(0)}),
              StatusIs(kInvalid, "Inner dimension of input should be divisible by 8"));
  EXPECT_THAT(r.Run({Scalar<float>(0), Scalar<float>(0)}),
              StatusIs(kInvalid, "Input should be at least a vector, but saw a scalar."));
  EXPECT_THAT(r.Run({Literal<float>({8}, std::vector<float>(8, 0)), Literal<float>({1}, {0})}),
              StatusIs(kInvalid, "Compare must be a scalar, but saw shape: [1]"));
}

// TF 2.21's values and messages for the SparseTensor ops of the feature
// columns' path.
TEST(SparseOpsTest, SparseToDenseAsTensorFlow) {
  const auto run = [](std::vector<Tensor> inputs, bool validate = true) {
    KernelRunner r("SparseToDense");
    r.Attr("validate_indices", validate);
    return r.Run(inputs);
  };
  const Tensor shape = Literal<int64_t>({2}, {3, 3});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          run({Literal<int64_t>({3, 2}, {0, 1, 1, 0, 2, 2}), shape,
                               Literal<float>({3}, {5, 6, 7}), Scalar<float>(-1)}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 3}, {-1, 5, -1, 6, -1, -1, -1, -1, 7}));
  // A vector of indices into a vector, one value for all.
  TW_ASSERT_OK_AND_ASSIGN(out, run({Literal<int32_t>({2}, {1, 3}), Literal<int32_t>({1}, {5}),
                                    Scalar<float>(2), Scalar<float>(0)}));
  EXPECT_THAT(out[0], TensorIs<float>({5}, {0, 2, 0, 2, 0}));
  const Tensor backwards = Literal<int64_t>({2, 2}, {1, 0, 0, 1});
  const Tensor two = Literal<float>({2}, {5, 6});
  EXPECT_THAT(run({backwards, shape, two, Scalar<float>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "indices[1] = [0,1] is out of order. Many sparse ops require "
                                "sorted indices."));
  TW_ASSERT_OK_AND_ASSIGN(out, run({backwards, shape, two, Scalar<float>(0)}, false));
  EXPECT_THAT(out[0], TensorIs<float>({3, 3}, {0, 6, 0, 5, 0, 0, 0, 0, 0}));
  EXPECT_THAT(
      run({Literal<int64_t>({2, 2}, {0, 1, 0, 1}), shape, two, Scalar<float>(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices[1] = [0,1] is repeated"));
  // Out of bounds is refused even unvalidated (TF's kernel would write there).
  EXPECT_THAT(run({Literal<int64_t>({2, 2}, {0, 1, 3, 1}), shape, two, Scalar<float>(0)}, false),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "indices[1] = [3,1] is out of bounds: need 0 <= index < [3,3]"));
  EXPECT_THAT(run({Literal<int64_t>({2, 2}, {0, 1, 1, 1}), shape, Literal<float>({3}, {5, 6, 7}),
                   Scalar<float>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "sparse_values has incorrect shape [3], should be [] or [2]"));
  EXPECT_THAT(
      run({Literal<int64_t>({2, 2}, {0, 1, 1, 1}), shape, two, Literal<float>({1}, {0})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "default_value should be a scalar."));
}

// RaggedFillEmptyRows: TF 2.21's outputs and messages for these inputs.
TEST(SparseOpsTest, RaggedFillEmptyRowsAsTensorFlow) {
  KernelRunner fill("RaggedFillEmptyRows");
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      fill.Run({Literal<int64_t>({4}, {2, 0, 0, 4}), Literal<float>({4}, {1, 2, 3, 4}),
                Scalar<int64_t>(6), Scalar<float>(9)}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({7}, {0, 0, 1, 2, 3, 4, 5}));
  EXPECT_THAT(out[1], TensorIs<float>({7}, {2, 3, 9, 1, 9, 4, 9}));
  EXPECT_THAT(out[2], TensorIs<bool>({6}, {false, true, false, true, false, true}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({4}, {3, 0, 1, 5}));
  TW_ASSERT_OK_AND_ASSIGN(out, fill.Run({Literal<int64_t>({0}, {}), Literal<float>({0}, {}),
                                         Scalar<int64_t>(2), Scalar<float>(9)}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {9, 9}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({0}, {}));
  EXPECT_THAT(
      fill.Run({Literal<int64_t>({2}, {0, 7}), Literal<float>({2}, {1, 2}), Scalar<int64_t>(6),
                Scalar<float>(9)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices(1, 0) is invalid: 7 >= 6"));
  EXPECT_THAT(fill.Run({Literal<int64_t>({2}, {0, 1}), Literal<float>({1}, {1}), Scalar<int64_t>(3),
                        Scalar<float>(9)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "The length of `values` (1) must match the first dimension of "
                                "`value_rowids` (2)."));
  EXPECT_THAT(fill.Run({Literal<int64_t>({1}, {0}), Literal<float>({1}, {1}), Scalar<int64_t>(0),
                        Scalar<float>(9)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Received SparseTensor with dense_shape[0] = 0 but "
                                "indices.shape[0] = 1"));
  KernelRunner grad("RaggedFillEmptyRowsGrad");
  TW_ASSERT_OK_AND_ASSIGN(out, grad.Run({Literal<int64_t>({4}, {0, 1, 3, 5}),
                                         Literal<float>({7}, {1, 2, 3, 4, 5, 6, 7})}));
  EXPECT_THAT(out[0], TensorIs<float>({4}, {1, 2, 4, 6}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {15}));
}

TEST(SparseOpsTest, SparseFillEmptyRowsAndReshapeAsTensorFlow) {
  KernelRunner fill("SparseFillEmptyRows");
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      fill.Run({Literal<int64_t>({3, 2}, {1, 0, 3, 2, 1, 1}), Literal<float>({3}, {10, 20, 30}),
                Literal<int64_t>({2}, {5, 3}), Scalar<float>(-1)}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({6, 2}, {0, 0, 1, 0, 1, 1, 2, 0, 3, 2, 4, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({6}, {-1, 10, 30, -1, 20, -1}));
  EXPECT_THAT(out[2], TensorIs<bool>({5}, {true, false, true, false, true}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({3}, {1, 4, 2}));
  EXPECT_THAT(
      fill.Run({Literal<int64_t>({1, 2}, {5, 0}), Literal<float>({1}, {1}),
                Literal<int64_t>({2}, {2, 3}), Scalar<float>(-1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices(0, 0) is invalid: 5 >= 2"));
  KernelRunner grad("SparseFillEmptyRowsGrad");
  TW_ASSERT_OK_AND_ASSIGN(
      out, grad.Run({Literal<int64_t>({3}, {1, 4, 2}), Literal<float>({6}, {1, 2, 3, 4, 5, 6})}));
  EXPECT_THAT(out[0], TensorIs<float>({3}, {2, 5, 3}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {11}));

  KernelRunner reshape("SparseReshape");
  const Tensor indices = Literal<int64_t>({3, 2}, {0, 1, 1, 2, 2, 0});
  const Tensor shape = Literal<int64_t>({2}, {3, 4});
  TW_ASSERT_OK_AND_ASSIGN(out, reshape.Run({indices, shape, Literal<int64_t>({2}, {2, -1})}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {0, 1, 1, 0, 1, 2}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({2}, {2, 6}));
  TW_ASSERT_OK_AND_ASSIGN(out, reshape.Run({indices, shape, Literal<int64_t>({3}, {2, 2, 3})}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 3}, {0, 0, 1, 1, 0, 0, 1, 0, 2}));
  EXPECT_THAT(reshape.Run({indices, shape, Literal<int64_t>({2}, {5, -1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Input to reshape is a SparseTensor with 12 dense values, but the "
                                "requested shape requires a multiple of 5. input_shape=[3,4] "
                                "output_shape=[5,1]"));
  EXPECT_THAT(reshape.Run({indices, shape, Literal<int64_t>({2}, {-1, -1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "only one output dimension may be -1, not both 0 and 1"));
  EXPECT_THAT(reshape.Run({indices, shape, Literal<int64_t>({2}, {5, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Input to reshape is a tensor with 12 dense values, but the "
                                "requested shape has 15. input_shape=[3,4] output_shape=[5,3]"));
}

TEST(SparseOpsTest, SparseTensorDenseMatMulAsTensorFlow) {
  // TF 2.21's products; a duplicate index adds up.
  const Tensor indices = Literal<int64_t>({4, 2}, {0, 1, 2, 0, 2, 3, 0, 1});
  const Tensor values = Literal<float>({4}, {1, 2, -1, 0.5f});
  const Tensor shape = Literal<int64_t>({2}, {3, 4});
  const auto iota = [](int64_t rows, int64_t cols) {
    Tensor t(DT_FLOAT, TensorShape({rows, cols}));
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i);
    return t;
  };
  KernelRunner plain("SparseTensorDenseMatMul");
  EXPECT_THAT(RunOk(plain, {indices, values, shape, iota(4, 2)}),
              TensorIs<float>({3, 2}, {3, 4.5f, 0, 0, -6, -5}));
  KernelRunner adjoint_a("SparseTensorDenseMatMul");
  adjoint_a.Attr("adjoint_a", true);
  EXPECT_THAT(RunOk(adjoint_a, {indices, values, shape, iota(3, 2)}),
              TensorIs<float>({4, 2}, {8, 10, 0, 1.5f, 0, 0, -4, -5}));
  KernelRunner adjoint_b("SparseTensorDenseMatMul");
  adjoint_b.Attr("adjoint_b", true);
  EXPECT_THAT(RunOk(adjoint_b, {indices, values, shape, iota(2, 4)}),
              TensorIs<float>({3, 2}, {1.5f, 7.5f, 0, 0, -3, 1}));
  EXPECT_THAT(plain.Run({indices, values, shape, iota(3, 2)}).status().message(),
              ::testing::HasSubstr(
                  "Cannot multiply A and B because inner dimension does not match: 4 vs. 3."));
  EXPECT_THAT(
      plain.Run({Literal<int64_t>({1, 2}, {0, 4}), Literal<float>({1}, {1}), shape, iota(4, 2)})
          .status()
          .message(),
      ::testing::HasSubstr("k (4) from index[0,1] out of bounds (>=4)"));
  EXPECT_THAT(
      plain.Run({Literal<int64_t>({1, 2}, {3, 0}), Literal<float>({1}, {1}), shape, iota(4, 2)})
          .status()
          .message(),
      ::testing::HasSubstr("m (3) from index[0,0] out of bounds (>=3)"));
  EXPECT_THAT(
      plain.Run({indices, Literal<float>({3}, {1, 2, 3}), shape, iota(4, 2)}).status().message(),
      ::testing::HasSubstr(
          "Number of rows of a_indices does not match number of entries in a_values"));
  EXPECT_THAT(
      plain.Run({indices, values, Literal<int64_t>({3}, {3, 4, 1}), iota(4, 2)}).status().message(),
      ::testing::HasSubstr("Tensor 'a_shape' must have 2 elements"));
}

// TF 2.21's values (tf.raw_ops.ConcatOffset) and messages.
TEST(ShapeOpsTest, ConcatOffset) {
  KernelRunner r("ConcatOffset");
  r.Attr("N", int64_t{3});
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({Scalar<int32_t>(1), Literal<int32_t>({4}, {2, 2, 5, 7}),
             Literal<int32_t>({4}, {2, 3, 5, 7}), Literal<int32_t>({4}, {2, 4, 5, 7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({4}, {0, 0, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({4}, {0, 2, 0, 0}));
  EXPECT_THAT((*out)[2], TensorIs<int32_t>({4}, {0, 5, 0, 0}));
  KernelRunner wide("ConcatOffset");
  wide.Attr("N", int64_t{2});
  out = wide.Run({Scalar<int32_t>(-3), Literal<int64_t>({4}, {2, 2, 5, 7}),
                  Literal<int64_t>({4}, {2, 3, 5, 7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[1], TensorIs<int64_t>({4}, {0, 2, 0, 0}));
  KernelRunner bad("ConcatOffset");
  bad.Attr("N", int64_t{2});
  const Tensor s0 = Literal<int32_t>({4}, {2, 2, 5, 7});
  EXPECT_THAT(
      bad.Run({Scalar<int32_t>(4), s0, Literal<int32_t>({4}, {2, 3, 5, 7})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Concat dim is out of range: 4 vs. 4"));
  EXPECT_THAT(bad.Run({Scalar<int32_t>(1), s0, Literal<int32_t>({3}, {2, 3, 5})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input 1 should contain 4 elements, but got 3"));
  EXPECT_THAT(bad.Run({Scalar<int32_t>(1), s0, Literal<int32_t>({4}, {2, 3, 6, 7})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "All dimensions except 1 must match. Input 1 has shape [2 3 6 7] "
                                "and doesn't match input 0 with shape [2 2 5 7]."));
  EXPECT_THAT(bad.Run({Literal<int32_t>({1}, {1}), s0, s0}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Concat dim tensor should be a scalar integer, but got shape [1]"));
  EXPECT_THAT(bad.Run({Scalar<int32_t>(1), s0, Literal<int32_t>({1, 4}, {2, 3, 6, 7})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input 2 should be a vector, but got shape [1,4]"));
}

// TF 2.21's values (tf.raw_ops.TensorStridedSliceUpdate): the value is
// broadcast to the slice.
TEST(SliceOpsTest, TensorStridedSliceUpdateWritesTheSlice) {
  KernelRunner r("TensorStridedSliceUpdate");
  const Tensor x = Literal<double>({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_THAT(RunOk(r, {x, Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 3}),
                        Literal<int32_t>({2}, {1, 1}), Literal<double>({2, 2}, {9, 8, 7, 6})}),
              TensorIs<double>({2, 3}, {0, 9, 8, 3, 7, 6}));
  EXPECT_THAT(RunOk(r, {x, Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 3}),
                        Literal<int32_t>({2}, {1, 1}), Literal<double>({2}, {9, 8})}),
              TensorIs<double>({2, 3}, {0, 9, 8, 3, 9, 8}));
  EXPECT_THAT(x, TensorIs<double>({2, 3}, {0, 1, 2, 3, 4, 5}));  // the input is not written
  KernelRunner shrink("TensorStridedSliceUpdate");
  shrink.Attr("shrink_axis_mask", int64_t{1});
  EXPECT_THAT(RunOk(shrink, {x, Literal<int32_t>({1}, {1}), Literal<int32_t>({1}, {2}),
                             Literal<int32_t>({1}, {1}), Literal<double>({3}, {5, 5, 5})}),
              TensorIs<double>({2, 3}, {0, 1, 2, 5, 5, 5}));
  EXPECT_THAT(r.Run({x, Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 3}),
                     Literal<int32_t>({2}, {1, 1}), Literal<double>({3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Cannot broadcast input shape [3] into final shape [2,2]"));
}

}  // namespace
}  // namespace towerflow
