// The narrow integer kernels derived from the int32 and int64 ones
// (kernels/cpu/narrow_int_kernels.cc, Note [Narrow integers on the CPU]).
// Expected values are TensorFlow 2.21's (tf.raw_ops on its CPU): wrapped
// where TF's narrow arithmetic wraps, wide where TF's Mean accumulates wide.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

Tensor Reduce(const char* op, const Tensor& x, int32_t axis) {
  KernelRunner r(op);
  return RunOk(r, {x, Scalar<int32_t>(axis)});
}

TEST(NarrowIntTest, ReductionsWrapAsTensorFlowsAndMeanAccumulatesWide) {
  const Tensor u8 = Literal<uint8_t>({3}, {200, 200, 100});
  EXPECT_THAT(Reduce("Sum", u8, 0), TensorIs<uint8_t>({}, {244}));
  EXPECT_THAT(Reduce("Mean", u8, 0), TensorIs<uint8_t>({}, {166}));
  EXPECT_THAT(Reduce("Mean", Literal<int8_t>({3}, {100, 100, 100}), 0),
              TensorIs<int8_t>({}, {100}));
  EXPECT_THAT(Reduce("Mean", Literal<uint32_t>({3}, {2147483648u, 2147483648u, 5}), 0),
              TensorIs<uint32_t>({}, {1431655767u}));
  EXPECT_THAT(Reduce("Prod", Literal<uint32_t>({3}, {200, 200, 100}), 0),
              TensorIs<uint32_t>({}, {4000000}));
  EXPECT_THAT(Reduce("Max", Literal<uint16_t>({2, 2}, {60000, 3, 1, 65535}), 0),
              TensorIs<uint16_t>({2}, {60000, 65535}));
  EXPECT_THAT(Reduce("Min", Literal<uint32_t>({2}, {4000000000u, 5}), 0),
              TensorIs<uint32_t>({}, {5}));
  EXPECT_THAT(Reduce("ArgMax", Literal<int16_t>({2, 3}, {-5, 300, 7, 9, -300, 2}), 1),
              TensorIs<int64_t>({2}, {1, 0}));
}

TEST(NarrowIntTest, ElementwiseOpsWrapAsTensorFlows) {
  KernelRunner abs("Abs");
  EXPECT_THAT(RunOk(abs, {Literal<int8_t>({2}, {-128, 5})}), TensorIs<int8_t>({2}, {-128, 5}));
  KernelRunner square("Square");
  EXPECT_THAT(RunOk(square, {Literal<int8_t>({2}, {-128, 20})}), TensorIs<int8_t>({2}, {0, -112}));
  KernelRunner neg("Neg");
  EXPECT_THAT(RunOk(neg, {Literal<int8_t>({2}, {-128, 20})}), TensorIs<int8_t>({2}, {-128, -20}));
  KernelRunner relu6("Relu6");
  EXPECT_THAT(RunOk(relu6, {Literal<uint32_t>({3}, {200, 3, 100})}),
              TensorIs<uint32_t>({3}, {6, 3, 6}));
  KernelRunner bias("BiasAdd");
  EXPECT_THAT(
      RunOk(bias, {Literal<int8_t>({1, 2}, {100, -100}), Literal<int8_t>({2}, {100, -100})}),
      TensorIs<int8_t>({1, 2}, {-56, 56}));
}

TEST(NarrowIntTest, ScansSelectionsAndWhere) {
  KernelRunner cumprod("Cumprod");
  cumprod.Attr("exclusive", true);
  EXPECT_THAT(RunOk(cumprod, {Literal<uint8_t>({3}, {16, 16, 3}), Scalar<int32_t>(0)}),
              TensorIs<uint8_t>({3}, {1, 16, 0}));
  KernelRunner cumsum("Cumsum");
  EXPECT_THAT(RunOk(cumsum, {Literal<uint8_t>({3}, {200, 200, 100}), Scalar<int32_t>(0)}),
              TensorIs<uint8_t>({3}, {200, 144, 244}));
  KernelRunner select("SelectV2");
  EXPECT_THAT(RunOk(select, {Literal<bool>({2}, {true, false}), Literal<int16_t>({2}, {1, 2}),
                             Literal<int16_t>({2}, {-3, -4})}),
              TensorIs<int16_t>({2}, {1, -4}));
  KernelRunner where("Where");
  EXPECT_THAT(RunOk(where, {Literal<uint8_t>({2, 2}, {0, 3, 255, 0})}),
              TensorIs<int64_t>({2, 2}, {0, 1, 1, 0}));
}

}  // namespace
}  // namespace towerflow
