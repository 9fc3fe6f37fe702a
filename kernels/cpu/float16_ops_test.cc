// half and bfloat16 on the CPU: Cast among the numeric types, and the
// kernels derived from the float ones (kernels/cpu/float16_kernels.cc).
// Expected values are TensorFlow 2.21's (tf.raw_ops on its CPU), written as
// bit patterns where the result is exact and as values with the type's
// tolerance where TensorFlow's kernel rounds intermediates differently.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// A relative tolerance of a few units in the last place.
constexpr double kHalfRtol = 2e-3;        // 11 significant bits
constexpr double kBfloat16Rtol = 1.6e-2;  // 8 significant bits

Tensor CastTo(DataType to, const Tensor& x) {
  KernelRunner c("Cast");
  c.Attr("DstT", to);
  return RunOk(c, {x});
}

TEST(Float16CastTest, FloatToHalfRoundsToNearestEvenAsTensorFlow) {
  // 1, 0.1, -2.5, the largest half, the first value that rounds to inf,
  // under half the smallest subnormal, a subnormal, pi, NaN, inf, -0, a tie
  // (rounds to even) and above a tie.
  const Tensor x =
      Literal<float>({13}, {1.0f, 0.1f, -2.5f, 65504.0f, 65520.0f, 1e-8f, 6e-8f, 3.14159265f, NAN,
                            INFINITY, -0.0f, 1.00048828125f, 1.0009765625f});
  EXPECT_THAT(CastTo(DT_HALF, x),
              TensorEq(Bits<half>({13}, {0x3c00, 0x2e66, 0xc100, 0x7bff, 0x7c00, 0x0000, 0x0001,
                                         0x4248, 0x7e00, 0x7c00, 0x8000, 0x3c00, 0x3c01})));
  EXPECT_THAT(CastTo(DT_BFLOAT16, x),
              TensorEq(Bits<bfloat16>({13}, {0x3f80, 0x3dcd, 0xc020, 0x4780, 0x4780, 0x322c, 0x3381,
                                             0x4049, 0x7fc0, 0x7f80, 0x8000, 0x3f80, 0x3f80})));
  // bfloat16 ties go to even; above a tie, up.
  EXPECT_THAT(CastTo(DT_BFLOAT16, Literal<float>({4}, {1.00390625f, 1.01171875f, 3.0e38f,
                                                       1.0f + 0x1p-8f + 0x1p-20f})),
              TensorEq(Bits<bfloat16>({4}, {0x3f80, 0x3f82, 0x7f62, 0x3f81})));
}

TEST(Float16CastTest, HalfToOtherTypesAsTensorFlow) {
  const Tensor h = Rounded<half>({6}, {1.5f, -2.0f, 65504.0f, INFINITY, 300.7f, -3.9f});
  EXPECT_THAT(CastTo(DT_FLOAT, h),
              TensorIs<float>({6}, {1.5f, -2.0f, 65504.0f, INFINITY, 300.75f, -3.900390625f}));
  EXPECT_THAT(CastTo(DT_BFLOAT16, h),
              TensorEq(Bits<bfloat16>({6}, {0x3fc0, 0xc000, 0x4780, 0x7f80, 0x4396, 0xc07a})));
  // To integers: truncation toward zero; out of range and NaN as the float
  // casts (saturating, NaN to 0: TF's is undefined behaviour there).
  EXPECT_THAT(CastTo(DT_INT32, h),
              TensorIs<int32_t>({6}, {1, -2, 65504, std::numeric_limits<int32_t>::max(), 300, -3}));
  EXPECT_THAT(CastTo(DT_BOOL, Rounded<half>({4}, {0.0f, -0.0f, 1e-7f, NAN})),
              TensorIs<bool>({4}, {false, false, true, true}));
  EXPECT_THAT(CastTo(DT_HALF, Literal<int32_t>({4}, {1, 2049, 70000, -3})),
              TensorEq(Bits<half>({4}, {0x3c00, 0x6800, 0x7c00, 0xc200})));
  EXPECT_THAT(CastTo(DT_HALF, Literal<bool>({2}, {true, false})),
              TensorEq(Bits<half>({2}, {0x3c00, 0x0000})));
  // double narrows through float, as TF's (and Eigen's) conversion.
  EXPECT_THAT(CastTo(DT_HALF, Literal<double>({2}, {0.1, 1.0 + 0x1p-11 + 0x1p-40})),
              TensorEq(Bits<half>({2}, {0x2e66, 0x3c00})));
}

// Elementwise arithmetic rounds the float result once: TensorFlow's bits.
TEST(Float16KernelsTest, BinaryArithmeticGivesTensorFlowsBits) {
  struct Case {
    const char* op;
    std::initializer_list<uint16_t> half_bits, bfloat16_bits;
  };
  const Case cases[] = {
      {"Add", {0x3f33, 0x3f00, 0x34cc, 0x63d0}, {0x3fe6, 0x3fe0, 0x3e9a, 0x447a}},
      {"Sub", {0x3ccd, 0xc640, 0xae66, 0x63d0}, {0x3f9a, 0xc0c8, 0xbdcd, 0x447a}},
      {"Mul", {0x3734, 0xc880, 0x251e, 0x53d0}, {0x3ee7, 0xc110, 0x3ca4, 0x427a}},
      {"RealDiv", {0x4500, 0xb880, 0x3800, 0x73d0}, {0x40a0, 0xbf10, 0x3f00, 0x467a}},
      {"Maximum", {0x3e00, 0x4400, 0x3266, 0x63d0}, {0x3fc0, 0x4080, 0x3e4d, 0x447a}},
      {"Minimum", {0x34cd, 0xc080, 0x2e66, 0x2c00}, {0x3e9a, 0xc010, 0x3dcd, 0x3d80}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    KernelRunner r(c.op);
    EXPECT_THAT(RunOk(r, {Rounded<half>({4}, {1.5f, -2.25f, 0.1f, 1000.0f}),
                          Rounded<half>({4}, {0.3f, 4.0f, 0.2f, 0.0625f})}),
                TensorEq(Bits<half>({4}, c.half_bits)));
    KernelRunner b(c.op);
    EXPECT_THAT(RunOk(b, {Rounded<bfloat16>({4}, {1.5f, -2.25f, 0.1f, 1000.0f}),
                          Rounded<bfloat16>({4}, {0.3f, 4.0f, 0.2f, 0.0625f})}),
                TensorEq(Bits<bfloat16>({4}, c.bfloat16_bits)));
  }
}

TEST(Float16KernelsTest, UnaryOpsAndComparisons) {
  KernelRunner abs("Abs");
  EXPECT_THAT(RunOk(abs, {Rounded<half>({3}, {-0.1f, 2.5f, -65504.0f})}),
              TensorEq(Bits<half>({3}, {0x2e66, 0x4100, 0x7bff})));
  KernelRunner abs_b("Abs");
  EXPECT_THAT(RunOk(abs_b, {Rounded<bfloat16>({3}, {-0.1f, 2.5f, -3e38f})}),
              TensorEq(Bits<bfloat16>({3}, {0x3dcd, 0x4020, 0x7f62})));
  KernelRunner relu("Relu");
  EXPECT_THAT(RunOk(relu, {Rounded<half>({4}, {1.5f, -2.0f, 0.1f, -0.0f})}),
              TensorEq(Rounded<half>({4}, {1.5f, 0.0f, 0.1f, -0.0f})));
  KernelRunner less("Less");
  EXPECT_THAT(
      RunOk(less, {Rounded<bfloat16>({3}, {1.5f, 0.1f, 0.25f}), Rounded<bfloat16>({}, {0.25f})}),
      TensorIs<bool>({3}, {false, true, false}));
  KernelRunner zeros("ZerosLike");
  EXPECT_THAT(RunOk(zeros, {Rounded<half>({2}, {1.5f, NAN})}),
              TensorEq(Bits<half>({2}, {0x0000, 0x0000})));
}

TEST(Float16KernelsTest, CheckNumericsNamesTheMessage) {
  KernelRunner r("CheckNumerics");
  r.Attr("message", "halfcheck");
  EXPECT_THAT(
      r.Run({Rounded<half>({2}, {1.0f, NAN})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "halfcheck : Tensor had NaN values"));
  KernelRunner b("CheckNumerics");
  b.Attr("message", "bf");
  EXPECT_THAT(b.Run({Rounded<bfloat16>({2}, {1.0f, INFINITY})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "bf : Tensor had Inf values"));
  EXPECT_THAT(RunOk(b, {Rounded<bfloat16>({1}, {2.5f})}), TensorEq(Rounded<bfloat16>({1}, {2.5f})));
}

// A float32 accumulator: 1000 halves of 0.1 (0.0999755859375) sum to
// 99.9755859375, which rounds to 100 in half. TensorFlow's GPU kernel
// accumulates in float too; its CPU kernel gives 99.75 (it rounds partial
// sums to half), and 4096 ones to 4096 as here.
TEST(Float16KernelsTest, ReductionsAccumulateInFloat) {
  const Tensor tenths = Filled<half>({1000}, half(0.1f));
  KernelRunner sum("Sum");
  EXPECT_THAT(RunOk(sum, {tenths, Scalar<int32_t>(0)}), TensorEq(Rounded<half>({}, {100.0f})));
  KernelRunner mean("Mean");
  EXPECT_THAT(RunOk(mean, {tenths, Scalar<int32_t>(0)}), TensorEq(Bits<half>({}, {0x2e66})));
  KernelRunner ones("Sum");
  EXPECT_THAT(RunOk(ones, {Filled<half>({4096}, half(1.0f)), Scalar<int32_t>(0)}),
              TensorEq(Rounded<half>({}, {4096.0f})));
  // bfloat16: 0.10009765625 each; TF's CPU gives 100 and 0.10009765625.
  KernelRunner bsum("Sum");
  EXPECT_THAT(RunOk(bsum, {Filled<bfloat16>({1000}, bfloat16(0.1f)), Scalar<int32_t>(0)}),
              TensorEq(Rounded<bfloat16>({}, {100.0f})));
  KernelRunner bmean("Mean");
  EXPECT_THAT(RunOk(bmean, {Filled<bfloat16>({1000}, bfloat16(0.1f)), Scalar<int32_t>(0)}),
              TensorEq(Rounded<bfloat16>({}, {0.10009765625f})));
}

TEST(Float16KernelsTest, MatMulAndConv2DAsTensorFlow) {
  KernelRunner mm("MatMul");
  EXPECT_THAT(RunOk(mm, {Rounded<half>({2, 3}, {1.5f, -2.0f, 0.25f, 3.0f, 0.1f, -1.0f}),
                         Rounded<half>({3, 2}, {0.5f, 1.0f, 2.0f, -1.0f, 0.3f, 4.0f})}),
              TensorEq(Bits<half>({2, 2}, {0xc25a, 0x4480, 0x3d9a, 0xbc66})));
  KernelRunner mm_b("MatMul");
  EXPECT_THAT(RunOk(mm_b, {Rounded<bfloat16>({2, 3}, {1.5f, -2.0f, 0.25f, 3.0f, 0.1f, -1.0f}),
                           Rounded<bfloat16>({3, 2}, {0.5f, 1.0f, 2.0f, -1.0f, 0.3f, 4.0f})}),
              TensorEq(Bits<bfloat16>({2, 2}, {0xc04b, 0x4090, 0x3fb3, 0xbf8d})));
  // (iota - 5) / 4 over a 4x4 image, a 2x2 filter, VALID.
  KernelRunner conv("Conv2D");
  conv.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  Tensor image =
      Rounded<bfloat16>({1, 4, 4, 1}, {-1.25f, -1.0f, -0.75f, -0.5f, -0.25f, 0.0f, 0.25f, 0.5f,
                                       0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.25f, 2.5f});
  EXPECT_THAT(RunOk(conv, {image, Rounded<bfloat16>({2, 2, 1, 1}, {1.0f, -1.0f, 0.5f, 2.0f})}),
              TensorEq(Rounded<bfloat16>({1, 3, 3, 1}, {-0.375f, 0.25f, 0.875f, 2.125f, 2.75f,
                                                        3.375f, 4.625f, 5.25f, 5.875f})));
}

TEST(Float16KernelsTest, SoftmaxAndLossesAsTensorFlow) {
  const std::initializer_list<float> logits = {1, 2, 3, 0.5f, -1, 4};
  // The exact log-softmax rounded to each type. TF's CPU kernel, which
  // rounds intermediates to 16 bits, gives -0.036438 in half (6 units in the
  // last place off) and -0.038330 in bfloat16 (8 off) for the last element,
  // and the same values elsewhere to within one unit.
  KernelRunner ls("LogSoftmax");
  EXPECT_THAT(RunOk(ls, {Rounded<half>({2, 3}, logits)}),
              TensorNear(Rounded<half>({2, 3}, {-2.408203125f, -1.4072265625f, -0.40771484375f,
                                                -3.537109375f, -5.03515625f, -0.0362548828125f}),
                         0, kHalfRtol));
  KernelRunner ls_b("LogSoftmax");
  EXPECT_THAT(RunOk(ls_b, {Rounded<bfloat16>({2, 3}, logits)}),
              TensorNear(Rounded<bfloat16>({2, 3}, {-2.40625f, -1.40625f, -0.408203125f, -3.53125f,
                                                    -5.03125f, -0.036376953125f}),
                         0, kBfloat16Rtol));
  KernelRunner xent("SparseSoftmaxCrossEntropyWithLogits");
  absl::StatusOr<std::vector<Tensor>> out =
      xent.Run({Rounded<half>({2, 3}, logits), Literal<int32_t>({2}, {2, 0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorNear(Rounded<half>({2}, {0.407958984375f, 3.537109375f}), 0, kHalfRtol));
  EXPECT_THAT((*out)[1], TensorNear(Rounded<half>({2, 3}, {0.09002685546875f, 0.24462890625f,
                                                           -0.3349609375f, -0.970703125f,
                                                           0.006496429443359375f, 0.96435546875f}),
                                    1e-4, kHalfRtol));
}

// T = half with float statistics (U), as TF's mixed-precision batch norm.
TEST(Float16KernelsTest, FusedBatchNormV3KeepsFloatStatistics) {
  KernelRunner bn("FusedBatchNormV3");
  bn.Attr("epsilon", 0.001f).Attr("is_training", true);
  absl::StatusOr<std::vector<Tensor>> out =
      bn.Run({Rounded<half>({1, 2, 2, 3}, {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f,
                                           3.5f, 4.0f, 4.5f}),
              Literal<float>({3}, {1.0f, 2.0f, 0.5f}), Literal<float>({3}, {0.0f, 1.0f, -1.0f}),
              Literal<float>({0}, {}), Literal<float>({0}, {})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      (*out)[0],
      TensorNear(Rounded<half>({1, 2, 2, 3},
                               {-1.341796875f, -1.6826171875f, -1.6708984375f, -0.447021484375f,
                                0.105712890625f, -1.2236328125f, 0.447021484375f, 1.89453125f,
                                -0.7763671875f, 1.341796875f, 3.68359375f, -0.329345703125f}),
                 1e-3, kHalfRtol));
  EXPECT_THAT((*out)[1], TensorNear<float>({3}, {1.25f, 1.75f, 2.25f}, 1e-6));
  // Bessel-corrected for the moving variance, as TF's batch_variance output.
  EXPECT_THAT((*out)[2], TensorNear<float>({3}, {3.75f, 3.75f, 3.75f}, 1e-5));
}

TEST(Float16KernelsTest, ErrorsOfTheFloatKernelReachTheCaller) {
  KernelRunner mm("MatMul");
  EXPECT_THAT(
      mm.Run({Rounded<half>({2, 3}, {1, 2, 3, 4, 5, 6}), Rounded<half>({2, 2}, {1, 2, 3, 4})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "In[0]: [2,3], In[1]: [2,2]"));
}

// 16-bit variables update in the 16-bit type, as TF's CPU kernels: each
// operation rounded (bf16(0.999) is 1, so bfloat16 Adam's v stays 0 and
// the step is 0, as in TF).
TEST(Float16KernelsTest, VariableUpdatesAsTensorFlow) {
  KernelRunner gd("ApplyGradientDescent");
  EXPECT_THAT(RunOk(gd, {Rounded<half>({3}, {1.0f, 0.1f, -3.0f}), Rounded<half>({}, {0.01f}),
                         Rounded<half>({3}, {0.5f, 0.3f, 7.0f})}),
              TensorEq(Bits<half>({3}, {0x3bf6, 0x2e35, 0xc224})));
  KernelRunner gd_b("ApplyGradientDescent");
  EXPECT_THAT(
      RunOk(gd_b, {Rounded<bfloat16>({3}, {1.0f, 0.1f, -3.0f}), Rounded<bfloat16>({}, {0.01f}),
                   Rounded<bfloat16>({3}, {0.5f, 0.3f, 7.0f})}),
      TensorEq(Bits<bfloat16>({3}, {0x3f7f, 0x3dc7, 0xc044})));
  const auto h = [](float v) { return Rounded<half>({}, {v}); };
  KernelRunner adam("ApplyAdam");
  EXPECT_THAT(RunOk(adam, {Rounded<half>({3}, {1.0f, 0.1f, -3.0f}), Filled<half>({3}, half(0)),
                           Filled<half>({3}, half(0)), h(0.9f), h(0.999f), h(0.01f), h(0.9f),
                           h(0.999f), h(1e-3f), Rounded<half>({3}, {0.5f, 0.3f, 7.0f})}),
              TensorEq(Bits<half>({3}, {0x3bed, 0x2dd2, 0xc205})));
  KernelRunner add("AssignAdd");
  EXPECT_THAT(
      RunOk(add, {Rounded<half>({3}, {1.0f, 0.1f, -3.0f}), Rounded<half>({3}, {0.5f, 0.3f, 7.0f})}),
      TensorEq(Bits<half>({3}, {0x3e00, 0x3666, 0x4400})));
  KernelRunner add_b("AssignAdd");
  EXPECT_THAT(RunOk(add_b, {Rounded<bfloat16>({3}, {1.0f, 0.1f, -3.0f}),
                            Rounded<bfloat16>({3}, {0.5f, 0.3f, 7.0f})}),
              TensorEq(Bits<bfloat16>({3}, {0x3fc0, 0x3ecd, 0x4080})));
}

}  // namespace
}  // namespace towerflow
