#include "kernels/cpu/cwise_ops.h"

#include <cmath>
#include <limits>

#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cwise_functors.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

Tensor Binary(const char* op, const Tensor& x, const Tensor& y) {
  KernelRunner r(op);
  return RunOk(r, {x, y});
}
Tensor Unary(const char* op, const Tensor& x) {
  KernelRunner r(op);
  return RunOk(r, {x});
}

TEST(CwiseTest, AddBroadcastsRowAndColumn) {
  // [2,1] + [3] -> [2,3]
  EXPECT_THAT(Binary("AddV2", Literal<float>({2, 1}, {10, 20}), Literal<float>({3}, {1, 2, 3})),
              TensorIs<float>({2, 3}, {11, 12, 13, 21, 22, 23}));
  // [2,3] * [2,1]
  EXPECT_THAT(
      Binary("Mul", Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Literal<float>({2, 1}, {2, 3})),
      TensorIs<float>({2, 3}, {2, 4, 6, 12, 15, 18}));
  // Rank 4 with a collapsed pattern: [2,1,2,1] - [1,2,1,2].
  EXPECT_THAT(Binary("Sub", Literal<int32_t>({2, 1, 2, 1}, {1, 2, 3, 4}),
                     Literal<int32_t>({1, 2, 1, 2}, {10, 20, 30, 40})),
              TensorIs<int32_t>({2, 2, 2, 2}, {-9, -19, -8, -18, -29, -39, -28, -38, -7, -17, -6,
                                               -16, -27, -37, -26, -36}));
}

TEST(CwiseTest, ScalarsAndOneElementTensors) {
  EXPECT_THAT(Binary("Add", Scalar<float>(1), Literal<float>({3}, {1, 2, 3})),
              TensorIs<float>({3}, {2, 3, 4}));
  // [3] with [1,1] gives [1,3].
  EXPECT_THAT(Binary("Mul", Literal<float>({3}, {1, 2, 3}), Literal<float>({1, 1}, {2})),
              TensorIs<float>({1, 3}, {2, 4, 6}));
}

TEST(CwiseTest, EmptyTensorsBroadcastToEmpty) {
  EXPECT_THAT(Binary("AddV2", Literal<float>({0, 3}, {}), Literal<float>({3}, {1, 2, 3})),
              TensorIs<float>({0, 3}, {}));
  EXPECT_THAT(Binary("Maximum", Literal<float>({2, 0}, {}), Scalar<float>(1)),
              TensorIs<float>({2, 0}, {}));
}

TEST(CwiseTest, DivisionFamilies) {
  EXPECT_THAT(Binary("RealDiv", Literal<float>({2}, {1, 3}), Literal<float>({2}, {2, 4})),
              TensorIs<float>({2}, {0.5f, 0.75f}));
  // Div truncates for integers, FloorDiv floors (Python's //).
  EXPECT_THAT(Binary("Div", Literal<int32_t>({2}, {-7, 7}), Scalar<int32_t>(2)),
              TensorIs<int32_t>({2}, {-3, 3}));
  EXPECT_THAT(Binary("FloorDiv", Literal<int32_t>({3}, {-7, 7, -8}), Scalar<int32_t>(2)),
              TensorIs<int32_t>({3}, {-4, 3, -4}));
  EXPECT_THAT(Binary("FloorDiv", Literal<float>({1}, {-7}), Scalar<float>(2)),
              TensorIs<float>({1}, {-4}));
  // INT_MIN / -1 wraps instead of trapping.
  EXPECT_THAT(
      Binary("Div", Scalar<int32_t>(std::numeric_limits<int32_t>::min()), Scalar<int32_t>(-1)),
      TensorIs<int32_t>({}, {std::numeric_limits<int32_t>::min()}));
}

// Mod keeps the sign of x (C's %, fmod), FloorMod the sign of y (Python's
// %): 7 % 3, -7 % 3, 7 % -3, -7 % -3.
TEST(CwiseTest, ModFamilies) {
  const Tensor x = Literal<int32_t>({4}, {7, -7, 7, -7});
  const Tensor y = Literal<int32_t>({4}, {3, 3, -3, -3});
  EXPECT_THAT(Binary("Mod", x, y), TensorIs<int32_t>({4}, {1, -1, 1, -1}));
  EXPECT_THAT(Binary("FloorMod", x, y), TensorIs<int32_t>({4}, {1, 2, -2, -1}));
  EXPECT_THAT(Binary("FloorMod", Literal<int64_t>({2}, {-8, 9}), Scalar<int64_t>(4)),
              TensorIs<int64_t>({2}, {0, 1}));
  EXPECT_THAT(Binary("FloorMod", Literal<uint8_t>({2}, {250, 7}), Scalar<uint8_t>(4)),
              TensorIs<uint8_t>({2}, {2, 3}));
  EXPECT_THAT(Binary("Mod", Literal<float>({2}, {7.5f, -7.5f}), Scalar<float>(2)),
              TensorIs<float>({2}, {1.5f, -1.5f}));
  EXPECT_THAT(Binary("FloorMod", Literal<double>({2}, {7.5, -7.5}), Scalar<double>(2)),
              TensorIs<double>({2}, {1.5, 0.5}));
  // INT_MIN % -1 is 0 instead of trapping.
  EXPECT_THAT(
      Binary("FloorMod", Scalar<int32_t>(std::numeric_limits<int32_t>::min()), Scalar<int32_t>(-1)),
      TensorIs<int32_t>({}, {0}));
  // DivNoNan: 0 where y is 0, whatever x is.
  EXPECT_THAT(Binary("DivNoNan", Literal<float>({3}, {1, 2, 3}), Literal<float>({3}, {2, 0, -4})),
              TensorIs<float>({3}, {0.5f, 0, -0.75f}));
  EXPECT_THAT(Binary("DivNoNan", Scalar<double>(0), Scalar<double>(0)), TensorIs<double>({}, {0}));
}

// TF 2.21's values (tf.raw_ops): 0 where x is 0 whatever y is, NaN too, for
// the x-is-0 products; 0 where y is 0 for MulNoNan (NaN and infinite x too).
TEST(CwiseTest, SafeProductsAsTensorFlow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Literal<float>({6}, {0, 0, 1, 2, -1, 0});
  EXPECT_THAT(Binary("Xlogy", x, Literal<float>({6}, {0, nan, 0, 3, 2, -1})),
              TensorNear<float>({6}, {0, 0, -inf, 2.1972246f, -0.69314718f, 0}, 1e-6));
  EXPECT_THAT(Binary("Xlog1py", x, Literal<float>({6}, {-1, nan, -1, 3, 2, -2})),
              TensorNear<float>({6}, {0, 0, -inf, 2.7725887f, -1.0986123f, 0}, 1e-6));
  EXPECT_THAT(Binary("Xdivy", x, Literal<float>({6}, {0, nan, 0, 3, 2, -1})),
              TensorNear<float>({6}, {0, 0, inf, 0.66666669f, -0.5f, 0}, 1e-7));
  EXPECT_THAT(Binary("MulNoNan", Literal<float>({6}, {nan, inf, 1, 2, -1, 0}),
                     Literal<float>({6}, {0, 0, nan, 3, inf, -1})),
              TensorIs<float>({6}, {0, 0, nan, 6, -inf, -0.0f}));
  // Broadcasting as the other binary ops.
  EXPECT_THAT(Binary("Xlogy", Literal<double>({2, 1}, {0, 2}), Literal<double>({2}, {1, 4})),
              TensorNear<double>({2, 2}, {0, 0, 0, 2.772588722239781}, 1e-15));
}

// TF 2.21's values: max(min(t, hi), lo) in std::min/std::max's order.
TEST(CwiseTest, ClipByValueAsTensorFlow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor t = Literal<float>({6}, {-2, 0.5f, nan, 3, 1, -0.25f});
  const auto clip = [&](const Tensor& lo, const Tensor& hi) {
    KernelRunner r("ClipByValue");
    return RunOk(r, {t, lo, hi});
  };
  EXPECT_THAT(clip(Scalar<float>(-1), Scalar<float>(2)),
              TensorIs<float>({6}, {-1, 0.5f, nan, 2, 1, -0.25f}));
  // A min above the max gives the min.
  EXPECT_THAT(clip(Scalar<float>(2), Scalar<float>(-1)),
              TensorIs<float>({6}, {2, 2, nan, 2, 2, 2}));
  // A NaN bound lets t through.
  EXPECT_THAT(clip(Literal<float>({6}, {0, 0, 0, 0, nan, 0}), Scalar<float>(2)),
              TensorIs<float>({6}, {0, 0.5f, nan, 2, 1, 0}));
  EXPECT_THAT(clip(Scalar<float>(-1), Literal<float>({6}, {nan, 0, 0, 0, 0, 0})),
              TensorIs<float>({6}, {-1, 0, nan, 0, 0, -0.25f}));
  EXPECT_THAT(
      clip(Literal<float>({6}, {0, 0, 0, 0, 3, 0}), Literal<float>({6}, {nan, 1, 1, 1, 1, -1})),
      TensorIs<float>({6}, {0, 0.5f, nan, 1, 3, 0}));
  KernelRunner ints("ClipByValue");
  EXPECT_THAT(
      RunOk(ints, {Literal<int32_t>({3}, {-5, 5, 50}), Scalar<int32_t>(0), Scalar<int32_t>(10)}),
      TensorIs<int32_t>({3}, {0, 5, 10}));
  KernelRunner bad("ClipByValue");
  EXPECT_THAT(bad.Run({t, Literal<float>({2}, {0, 1}), Scalar<float>(2)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "clip_value_min and clip_value_max must be either of the "
                                "same shape as input, or a scalar. input shape: [6]"));
}

TEST(CwiseTest, InvGradIsReciprocalGrad) {
  EXPECT_THAT(Binary("InvGrad", Literal<float>({2}, {2, -0.5f}), Literal<float>({2}, {3, 4})),
              TensorIs<float>({2}, {-12, -1}));
}

TEST(CwiseTest, IntegerDivisionByZeroIsAnError) {
  KernelRunner r("FloorDiv");
  auto out = r.Run({Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {1, 0})});
  EXPECT_THAT(out.status().message(), HasSubstr("Integer division by zero"));
  for (const char* op : {"Mod", "FloorMod"}) {
    KernelRunner m(op);
    EXPECT_THAT(m.Run({Literal<int32_t>({2}, {5, 6}), Literal<int32_t>({2}, {2, 0})}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "Integer division by zero"))
        << op;
  }
  KernelRunner d("Div");
  EXPECT_THAT(d.Run({Scalar<int64_t>(5), Scalar<int64_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Integer division by zero"));
}

// TruncateDiv rounds toward zero (trunc(x / y) for floating point),
// TruncateMod is C's remainder; TF 2.21's values.
TEST(CwiseTest, TruncateFamilies) {
  EXPECT_THAT(Binary("TruncateDiv", Literal<float>({7}, {7, -7, 7.5f, -7.5f, 1, INFINITY, 0}),
                     Literal<float>({7}, {2, 2, -2, 2, 0, 2, 0})),
              TensorIs<float>({7}, {3, -3, -3, -3, INFINITY, INFINITY, NAN}));
  EXPECT_THAT(Binary("TruncateDiv", Literal<int64_t>({1}, {-7}), Scalar<int64_t>(2)),
              TensorIs<int64_t>({1}, {-3}));
  EXPECT_THAT(Binary("TruncateDiv", Literal<int8_t>({4}, {7, -7, -128, 127}),
                     Literal<int8_t>({4}, {2, 2, -1, -1})),
              TensorIs<int8_t>({4}, {3, -3, -128, -127}));
  EXPECT_THAT(Binary("TruncateMod", Literal<float>({6}, {7, -7, 7.5f, -7.5f, 1, INFINITY}),
                     Literal<float>({6}, {2, 2, -2, 2, 0, 2})),
              TensorIs<float>({6}, {1, -1, 1.5f, -1.5f, NAN, NAN}));
  EXPECT_THAT(Binary("TruncateMod", Literal<int32_t>({3}, {7, -7, -2147483647 - 1}),
                     Literal<int32_t>({3}, {2, -2, -1})),
              TensorIs<int32_t>({3}, {1, -1, 0}));
  for (const char* op : {"TruncateDiv", "TruncateMod"}) {
    KernelRunner r(op);
    EXPECT_THAT(r.Run({Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {1, 0})}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "Integer division by zero"))
        << op;
  }
}

// The 8- and 16-bit and the wide unsigned integers (cwise_int_ops.cc):
// sums and products wrap, division truncates (and -128 / -1 wraps), as
// TF 2.21 computes them.
TEST(CwiseTest, NarrowAndUnsignedIntegers) {
  EXPECT_THAT(Binary("Add", Literal<int8_t>({2}, {100, -100}), Literal<int8_t>({2}, {100, -100})),
              TensorIs<int8_t>({2}, {-56, 56}));
  EXPECT_THAT(Binary("AddV2", Literal<uint16_t>({3}, {100, 65436, 60000}),
                     Literal<uint16_t>({3}, {200, 50, 6000})),
              TensorIs<uint16_t>({3}, {300, 65486, 464}));
  EXPECT_THAT(Binary("Sub", Literal<uint16_t>({2}, {1, 5}), Literal<uint16_t>({2}, {2, 3})),
              TensorIs<uint16_t>({2}, {65535, 2}));
  EXPECT_THAT(Binary("Sub", Literal<uint64_t>({1}, {0}), Literal<uint64_t>({1}, {1})),
              TensorIs<uint64_t>({1}, {18446744073709551615ull}));
  EXPECT_THAT(Binary("Mul", Literal<int8_t>({2}, {100, -100}), Scalar<int8_t>(3)),
              TensorIs<int8_t>({2}, {44, -44}));
  EXPECT_THAT(
      Binary("Div", Literal<int8_t>({4}, {7, -7, -128, 127}), Literal<int8_t>({4}, {2, 2, -1, -1})),
      TensorIs<int8_t>({4}, {3, -3, -128, -127}));
  EXPECT_THAT(Binary("Div", Literal<uint16_t>({2}, {40000, 7}), Literal<uint16_t>({2}, {3, 2})),
              TensorIs<uint16_t>({2}, {13333, 3}));
  EXPECT_THAT(Binary("Div", Literal<uint64_t>({1}, {9223372036854775813ull}), Scalar<uint64_t>(2)),
              TensorIs<uint64_t>({1}, {4611686018427387906ull}));
  EXPECT_THAT(Binary("FloorDiv", Literal<int8_t>({4}, {7, -7, -128, 127}),
                     Literal<int8_t>({4}, {2, 2, -1, -1})),
              TensorIs<int8_t>({4}, {3, -4, -128, -127}));
  EXPECT_THAT(Binary("FloorMod", Literal<int8_t>({4}, {7, -7, -128, 127}),
                     Literal<int8_t>({4}, {2, 2, -1, -3})),
              TensorIs<int8_t>({4}, {1, 1, 0, -2}));
  EXPECT_THAT(
      Binary("Maximum", Literal<int16_t>({2, 1}, {1, -5}), Literal<int16_t>({3}, {0, -7, 3})),
      TensorIs<int16_t>({2, 3}, {1, 1, 3, 0, -5, 3}));
  EXPECT_THAT(Binary("Minimum", Literal<uint8_t>({2, 1}, {1, 5}), Literal<uint8_t>({3}, {0, 7, 3})),
              TensorIs<uint8_t>({2, 3}, {0, 1, 1, 0, 5, 3}));
  EXPECT_THAT(Binary("Less", Literal<uint32_t>({3}, {1, 2, 3}), Scalar<uint32_t>(2)),
              TensorIs<bool>({3}, {true, false, false}));
  EXPECT_THAT(
      Binary("LeftShift", Literal<int8_t>({3}, {1, -1, 64}), Literal<int8_t>({3}, {7, 3, 1})),
      TensorIs<int8_t>({3}, {-128, -8, -128}));
  EXPECT_THAT(
      Binary("RightShift", Literal<uint16_t>({2}, {64000, 1}), Literal<uint16_t>({2}, {4, 40})),
      TensorIs<uint16_t>({2}, {4000, 0}));
  EXPECT_THAT(Unary("Invert", Literal<int8_t>({3}, {0, 5, -128})),
              TensorIs<int8_t>({3}, {-1, -6, 127}));
  EXPECT_THAT(Unary("PopulationCount", Literal<int16_t>({3}, {-1, 5, -128})),
              TensorIs<uint8_t>({3}, {16, 2, 9}));
  EXPECT_THAT(Unary("PopulationCount", Literal<uint64_t>({1}, {18446744073709551615ull})),
              TensorIs<uint8_t>({1}, {64}));
  KernelRunner r("FloorMod");
  EXPECT_THAT(r.Run({Literal<uint16_t>({2}, {5, 6}), Literal<uint16_t>({2}, {2, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Integer division by zero"));
}

TEST(CwiseTest, PowAndSquaredDifference) {
  EXPECT_THAT(Binary("Pow", Literal<float>({3}, {2, 3, 4}), Literal<float>({3}, {3, 2, 0.5f})),
              TensorIs<float>({3}, {8, 9, 2}));
  EXPECT_THAT(Binary("Pow", Literal<int32_t>({2}, {2, -3}), Scalar<int32_t>(3)),
              TensorIs<int32_t>({2}, {8, -27}));
  KernelRunner r("Pow");
  EXPECT_THAT(r.Run({Scalar<int32_t>(2), Scalar<int32_t>(-1)}).status().message(),
              HasSubstr("negative integer powers"));
  EXPECT_THAT(Binary("SquaredDifference", Literal<float>({2}, {1, 5}), Scalar<float>(3)),
              TensorIs<float>({2}, {4, 4}));
}

TEST(CwiseTest, ComparisonsAndLogic) {
  const Tensor x = Literal<float>({4}, {1, 2, 3, 4});
  const Tensor y = Scalar<float>(2.5f);
  EXPECT_THAT(Binary("Less", x, y), TensorIs<bool>({4}, {true, true, false, false}));
  EXPECT_THAT(Binary("GreaterEqual", x, Literal<float>({4}, {1, 3, 3, 5})),
              TensorIs<bool>({4}, {true, false, true, false}));
  EXPECT_THAT(Binary("Equal", Literal<int64_t>({2}, {1, 2}), Literal<int64_t>({2, 1}, {1, 2})),
              TensorIs<bool>({2, 2}, {true, false, false, true}));
  EXPECT_THAT(Binary("NotEqual", x, Scalar<float>(2)),
              TensorIs<bool>({4}, {true, false, true, true}));
  // NaN: every ordered comparison and Equal false, NotEqual true (IEEE, as TF).
  const Tensor nan = Literal<float>({2}, {std::nanf(""), 1});
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal"}) {
    EXPECT_THAT(Binary(op, nan, Scalar<float>(1)).data<bool>()[0], false) << op;
  }
  EXPECT_THAT(Binary("NotEqual", nan, nan), TensorIs<bool>({2}, {true, false}));
  EXPECT_THAT(Binary("LogicalAnd", Literal<bool>({2}, {true, false}), Scalar<bool>(true)),
              TensorIs<bool>({2}, {true, false}));
  EXPECT_THAT(Binary("LogicalOr", Literal<bool>({2}, {true, false}), Scalar<bool>(false)),
              TensorIs<bool>({2}, {true, false}));
  EXPECT_THAT(Unary("LogicalNot", Literal<bool>({2}, {true, false})),
              TensorIs<bool>({2}, {false, true}));
}

TEST(CwiseTest, UnaryMath) {
  EXPECT_THAT(Unary("Neg", Literal<int32_t>({2}, {1, -2})), TensorIs<int32_t>({2}, {-1, 2}));
  EXPECT_THAT(Unary("Abs", Literal<float>({2}, {-1.5f, 2})), TensorIs<float>({2}, {1.5f, 2}));
  EXPECT_THAT(Unary("Square", Literal<float>({2}, {-3, 0.5f})), TensorIs<float>({2}, {9, 0.25f}));
  EXPECT_THAT(Unary("Sqrt", Literal<float>({2}, {4, 9})), TensorIs<float>({2}, {2, 3}));
  EXPECT_THAT(Unary("Rsqrt", Literal<float>({2}, {4, 0.25f})), TensorIs<float>({2}, {0.5f, 2}));
  EXPECT_THAT(Unary("Reciprocal", Literal<float>({2}, {4, -0.5f})),
              TensorIs<float>({2}, {0.25f, -2}));
  EXPECT_THAT(Unary("Sign", Literal<float>({3}, {-2, 0, 5})), TensorIs<float>({3}, {-1, 0, 1}));
  EXPECT_THAT(Unary("Exp", Literal<double>({2}, {0, 1})),
              TensorNear<double>({2}, {1, 2.718281828459045}, 1e-12));
  EXPECT_THAT(Unary("Log", Literal<double>({2}, {1, 10})),
              TensorNear<double>({2}, {0, 2.302585092994046}, 1e-12));
  EXPECT_THAT(Unary("Sigmoid", Literal<float>({3}, {0, 2, -2})),
              TensorNear<float>({3}, {0.5f, 0.880797f, 0.119203f}, 1e-6));
  EXPECT_THAT(Unary("Tanh", Literal<float>({2}, {0, 1})),
              TensorNear<float>({2}, {0, 0.7615942f}, 1e-6));
  // Round is half to even, as TF.
  EXPECT_THAT(Unary("Round", Literal<float>({4}, {0.5f, 1.5f, 2.5f, -0.5f})),
              TensorIs<float>({4}, {0, 2, 2, -0.0f}));
  const Tensor specials = Literal<float>({3}, {1, std::nanf(""), INFINITY});
  EXPECT_THAT(Unary("IsNan", specials), TensorIs<bool>({3}, {false, true, false}));
  EXPECT_THAT(Unary("IsFinite", specials), TensorIs<bool>({3}, {true, false, false}));
}

// The CPU kernels compute with the shared functors of cwise_functors.h and
// keep Eigen's SIMD form where Eigen has one (integer division has none: it
// truncates and wraps).
namespace ei = Eigen::internal;
static_assert(ei::functor_traits<cwise::CpuForm<functor::Add<float>>>::PacketAccess);
static_assert(ei::functor_traits<cwise::CpuForm<functor::Mul<double>>>::PacketAccess);
static_assert(ei::functor_traits<cwise::CpuForm<functor::Div<float>>>::PacketAccess);
static_assert(ei::functor_traits<cwise::CpuForm<functor::Maximum<float>>>::PacketAccess);
static_assert(ei::functor_traits<cwise::CpuForm<functor::Exp<float>>>::PacketAccess);
static_assert(ei::functor_traits<cwise::CpuForm<functor::Tanh<float>>>::PacketAccess);
static_assert(!ei::functor_traits<cwise::CpuForm<functor::Div<int32_t>>>::PacketAccess);

// 19 elements: whole SIMD registers and a scalar tail. Both agree with the
// shared functor's scalar form (Eigen's vector tanh and exp are
// approximations within a few ulps).
TEST(CwiseTest, VectorAndScalarPathsAgreeWithTheSharedFunctor) {
  std::vector<float> x;
  for (int i = 0; i < 19; ++i) x.push_back(-4.5f + 0.5f * static_cast<float>(i));
  for (const char* op : {"Tanh", "Sigmoid", "Exp", "Neg", "Square", "Floor"}) {
    std::vector<float> want;
    for (float v : x) {
      const std::string name = op;
      want.push_back(name == "Tanh"      ? functor::Tanh<float>()(v)
                     : name == "Sigmoid" ? functor::Sigmoid<float>()(v)
                     : name == "Exp"     ? functor::Exp<float>()(v)
                     : name == "Neg"     ? functor::Neg<float>()(v)
                     : name == "Square"  ? functor::Square<float>()(v)
                                         : functor::Floor<float>()(v));
    }
    EXPECT_THAT(Unary(op, Literal<float>({19}, x)), TensorNear<float>({19}, want, 1e-4)) << op;
  }
  std::vector<float> y(19, 0.75f);
  std::vector<float> quotients, maxima;
  for (float v : x) {
    quotients.push_back(functor::Div<float>()(v, 0.75f));
    maxima.push_back(functor::Maximum<float>()(v, 0.75f));
  }
  EXPECT_THAT(Binary("RealDiv", Literal<float>({19}, x), Literal<float>({19}, y)),
              TensorNear<float>({19}, quotients, 1e-6f));
  EXPECT_THAT(Binary("Maximum", Literal<float>({19}, x), Literal<float>({19}, y)),
              TensorIs<float>({19}, maxima));
}

TEST(CwiseTest, MaximumAndMinimumPropagateNaNFromEitherInput) {
  // TF's scalar_max_op<T, T, PropagateNaN>, on the SIMD path (16 elements)
  // and the scalar tail (3).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(19, 1.f), y(19, 2.f);
  x[3] = nan;
  y[5] = nan;
  y[17] = nan;
  for (const char* op : {"Maximum", "Minimum"}) {
    const std::vector<float> z =
        Values<float>(Binary(op, Literal<float>({19}, x), Literal<float>({19}, y)));
    for (int i = 0; i < 19; ++i) {
      if (i == 3 || i == 5 || i == 17) {
        EXPECT_TRUE(std::isnan(z[i])) << op << " at " << i;
      } else {
        EXPECT_EQ(z[i], std::string(op) == "Maximum" ? 2.f : 1.f) << op << " at " << i;
      }
    }
  }
}

TEST(CwiseTest, UnaryGradients) {
  // SigmoidGrad(y, dy) = dy y (1 - y)
  EXPECT_THAT(
      Binary("SigmoidGrad", Literal<float>({2}, {0.5f, 0.25f}), Literal<float>({2}, {1, 2})),
      TensorIs<float>({2}, {0.25f, 0.375f}));
  EXPECT_THAT(Binary("TanhGrad", Literal<float>({1}, {0.5f}), Literal<float>({1}, {2})),
              TensorIs<float>({1}, {1.5f}));
  EXPECT_THAT(Binary("ReciprocalGrad", Literal<float>({1}, {2}), Literal<float>({1}, {3})),
              TensorIs<float>({1}, {-12}));
  KernelRunner r("TanhGrad");
  EXPECT_THAT(r.Run({Literal<float>({2}, {1, 2}), Scalar<float>(1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "TanhGrad needs both inputs of one shape, got [2] and []"));
}

TEST(CwiseTest, AddNSumsAnyCount) {
  KernelRunner r("AddN");
  std::vector<Tensor> in;
  for (int i = 1; i <= 6; ++i) in.push_back(Literal<float>({2}, {float(i), float(10 * i)}));
  EXPECT_THAT(RunOk(r, in), TensorIs<float>({2}, {21, 210}));
  KernelRunner one("AddN");
  EXPECT_THAT(RunOk(one, {Literal<float>({1}, {4})}), TensorIs<float>({1}, {4}));
  KernelRunner bad("AddN");
  EXPECT_THAT(
      bad.Run({Literal<float>({2}, {1, 2}), Literal<float>({3}, {1, 2, 3})}).status().message(),
      HasSubstr("must have the same size and shape"));
}

// Integer arithmetic wraps around as in TensorFlow (two's complement),
// without the undefined behaviour of C++'s signed overflow: CI's sanitizer
// step runs this test under UBSan. Three elements are fewer than one SIMD
// register holds, so the scalar functors compute them.
template <typename T>
void ExpectWrapAround() {
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kHalf = T(1) << (sizeof(T) * 4);  // kHalf² is 2^bits: 0
  const Tensor x = Literal<T>({3}, {kMax, kMin, kHalf});
  EXPECT_THAT(Binary("Add", x, Literal<T>({3}, {1, -1, kMax})),
              TensorIs<T>({3}, {kMin, kMax, T(kMin + (kHalf - 1))}));
  EXPECT_THAT(Binary("AddV2", x, Scalar<T>(1)),
              TensorIs<T>({3}, {kMin, T(kMin + 1), T(kHalf + 1)}));
  EXPECT_THAT(Binary("Sub", x, Literal<T>({3}, {-1, 1, kMin})),
              TensorIs<T>({3}, {kMin, kMax, T(kMin + kHalf)}));
  EXPECT_THAT(Binary("Mul", x, Literal<T>({3}, {2, -1, kHalf})), TensorIs<T>({3}, {-2, kMin, 0}));
  EXPECT_THAT(Binary("SquaredDifference", x, Literal<T>({3}, {-1, 0, 0})),
              TensorIs<T>({3}, {0, 0, 0}));
  EXPECT_THAT(Binary("Pow", x, Literal<T>({3}, {2, 3, 2})), TensorIs<T>({3}, {1, 0, 0}));
  EXPECT_THAT(Unary("Neg", x), TensorIs<T>({3}, {T(kMin + 1), kMin, T(-kHalf)}));
  EXPECT_THAT(Unary("Abs", x), TensorIs<T>({3}, {kMax, kMin, kHalf}));
  EXPECT_THAT(Unary("Square", x), TensorIs<T>({3}, {1, 0, 0}));
  KernelRunner add_n("AddN");
  EXPECT_THAT(RunOk(add_n, {x, x, x, x, x}), TensorIs<T>({3}, {T(kMax - 4), kMin, T(5 * kHalf)}));
}
TEST(CwiseTest, IntegersWrapAroundOnOverflow) {
  ExpectWrapAround<int32_t>();
  ExpectWrapAround<int64_t>();
}

TEST(CwiseTest, SelectByElementRowAndScalar) {
  const Tensor t = Literal<float>({2, 2}, {1, 2, 3, 4});
  const Tensor e = Literal<float>({2, 2}, {-1, -2, -3, -4});
  KernelRunner r("Select");
  EXPECT_THAT(RunOk(r, {Literal<bool>({2, 2}, {true, false, false, true}), t, e}),
              TensorIs<float>({2, 2}, {1, -2, -3, 4}));
  KernelRunner rows("Select");
  EXPECT_THAT(RunOk(rows, {Literal<bool>({2}, {false, true}), t, e}),
              TensorIs<float>({2, 2}, {-1, -2, 3, 4}));
  KernelRunner bad("Select");
  EXPECT_THAT(
      bad.Run({Literal<bool>({3}, {true, true, true}), t, e}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "'condition' must be a scalar, a vector of size 2, or have the shape of"));
  // SelectV2 broadcasts all three.
  KernelRunner v2("SelectV2");
  EXPECT_THAT(RunOk(v2, {Literal<bool>({2, 1}, {true, false}), Literal<float>({2}, {1, 2}),
                         Scalar<float>(0)}),
              TensorIs<float>({2, 2}, {1, 2, 0, 0}));
  // Strings (TF 2's save functions choose a file-name part so).
  KernelRunner strings("Select");
  EXPECT_THAT(RunOk(strings, {Scalar<bool>(false), Literal<std::string>({1}, {"_temp/part"}),
                              Literal<std::string>({1}, {".part"})}),
              TensorIs<std::string>({1}, {".part"}));
  KernelRunner strings_v2("SelectV2");
  EXPECT_THAT(RunOk(strings_v2, {Literal<bool>({2}, {true, false}), Scalar<std::string>("a"),
                                 Literal<std::string>({2}, {"b", "c"})}),
              TensorIs<std::string>({2}, {"a", "c"}));
}

TEST(CwiseTest, EqualAndNotEqualCompareStrings) {
  KernelRunner eq("Equal");
  EXPECT_THAT(RunOk(eq, {Literal<std::string>({3}, {"a", "bc", ""}), Scalar<std::string>("bc")}),
              TensorIs<bool>({3}, {false, true, false}));
  KernelRunner ne("NotEqual");
  EXPECT_THAT(
      RunOk(ne, {Literal<std::string>({2}, {"x", "y"}), Literal<std::string>({2}, {"x", "z"})}),
      TensorIs<bool>({2}, {false, true}));
}

TEST(CwiseTest, IncompatibleShapesAreInvalidArgument) {
  KernelRunner r("AddV2");
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({Literal<float>({2}, {1, 2}), Literal<float>({3}, {1, 2, 3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Incompatible shapes: [2] vs. [3]"));
}

TEST(CwiseTest, LargeBroadcastMatchesLoop) {
  // [64,1,33] + [1,17,33] over the pool.
  std::vector<float> a(64 * 33), b(17 * 33);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
  const Tensor z = Binary("AddV2", Literal<float>({64, 1, 33}, a), Literal<float>({1, 17, 33}, b));
  ASSERT_EQ(z.shape(), TensorShape({64, 17, 33}));
  const float* p = z.data<float>();
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 17; ++j) {
      for (int k = 0; k < 33; ++k) {
        ASSERT_EQ(p[(i * 17 + j) * 33 + k], a[i * 33 + k] + b[j * 33 + k]);
      }
    }
  }
}

// 0, scale, 2 * scale, ... in `shape`.
std::vector<int32_t> Iota(const TensorShape& shape, int scale) {
  std::vector<int32_t> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) * scale;
  return v;
}

// Iota(x) - Iota(y, 1000) over NumPy broadcasting, element by element: the
// reference for the kernels' rows (Note [Broadcasting by rows]). Both have
// the rank of `out`.
std::vector<int32_t> SubByLoop(const TensorShape& xs, const TensorShape& ys,
                               const TensorShape& out) {
  const std::vector<int32_t> x = Iota(xs, 1), y = Iota(ys, 1000);
  std::vector<int32_t> z(out.num_elements());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    int64_t rest = i, xi = 0, yi = 0, xm = 1, ym = 1;
    for (int d = out.dims() - 1; d >= 0; --d) {
      const int64_t at = rest % out.dim_size(d);
      rest /= out.dim_size(d);
      xi += (xs.dim_size(d) == 1 ? 0 : at) * xm;
      yi += (ys.dim_size(d) == 1 ? 0 : at) * ym;
      xm *= xs.dim_size(d);
      ym *= ys.dim_size(d);
    }
    z[i] = x[xi] - y[yi];
  }
  return z;
}

// Long rows (a run of both, a run and a repeated element, each way), short
// rows, and collapsed ranks above TF's 5, on int32, against the loop.
TEST(CwiseTest, BroadcastRowsOfEveryKindMatchLoops) {
  const struct {
    TensorShape x, y, out;
  } cases[] = {
      {{1, 20}, {3, 20}, {3, 20}},
      {{3, 20}, {3, 1}, {3, 20}},
      {{3, 1}, {1, 20}, {3, 20}},
      {{2, 1, 3, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1}, {2, 2, 3, 2, 2, 2, 2}},
      {{2, 1, 2, 1, 2, 1, 17}, {1, 3, 1, 3, 1, 3, 17}, {2, 3, 2, 3, 2, 3, 17}},
      {{4, 1, 40}, {1, 5, 1}, {4, 5, 40}},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(
        Binary("Sub", Literal<int32_t>(c.x, Iota(c.x, 1)), Literal<int32_t>(c.y, Iota(c.y, 1000))),
        TensorIs<int32_t>(c.out, SubByLoop(c.x, c.y, c.out)))
        << c.x.DebugString() << " - " << c.y.DebugString();
  }
}

// Strings broadcast too (Equal of a column against a row), and float rows
// of 24 run as SIMD registers and a remainder.
TEST(CwiseTest, BroadcastStringsAndFloatRows) {
  KernelRunner eq("Equal");
  EXPECT_THAT(RunOk(eq, {Literal<std::string>({2, 1}, {"a", "b"}),
                         Literal<std::string>({3}, {"b", "a", "b"})}),
              TensorIs<bool>({2, 3}, {false, true, false, true, false, true}));
  std::vector<float> x(2 * 24), y(24), want(2 * 24);
  for (int i = 0; i < 48; ++i) x[i] = static_cast<float>(i);
  for (int j = 0; j < 24; ++j) y[j] = 0.5f * static_cast<float>(j);
  for (int i = 0; i < 48; ++i) want[i] = x[i] * y[i % 24];
  KernelRunner mul("Mul");
  EXPECT_THAT(RunOk(mul, {Literal<float>({2, 24}, x), Literal<float>({24}, y)}),
              TensorIs<float>({2, 24}, want));
}

}  // namespace
}  // namespace towerflow

namespace towerflow {
namespace {

// The remaining elementwise kernels, one literal case each.
struct Literal1 {
  const char* op;
  std::vector<float> in, out;
};

TEST(CwiseTest, MoreUnaryLiterals) {
  const std::vector<Literal1> cases = {
      {"Expm1", {0, 1}, {0, 1.7182817f}},
      {"Log1p", {0, 1.7182817f}, {0, 1}},
      {"Floor", {-1.5f, 2.5f}, {-2, 2}},
      {"Ceil", {-1.5f, 2.5f}, {-1, 3}},
      {"Sin", {0, 1.5707964f}, {0, 1}},
      {"Cos", {0, 3.1415927f}, {1, -1}},
      {"Inv", {2, -4}, {0.5f, -0.25f}},
      // TF 2.21's values.
      {"Tan", {0.5f, -0.25f}, {0.5463024973869324f, -0.25534191727638245f}},
      {"Asin", {0.5f, -0.25f}, {0.5235987901687622f, -0.252680242061615f}},
      {"Acos", {0.5f, -0.25f}, {1.0471975803375244f, 1.8234765529632568f}},
      {"Atan", {0.5f, -0.25f}, {0.46364760398864746f, -0.244978666305542f}},
      {"Sinh", {0.5f, -0.25f}, {0.5210952758789062f, -0.25261232256889343f}},
      {"Cosh", {0.5f, -0.25f}, {1.1276259422302246f, 1.0314130783081055f}},
      {"Asinh", {0.5f, -0.25f}, {0.4812118411064148f, -0.24746647477149963f}},
      {"Atanh", {0.5f, -0.25f}, {0.5493061542510986f, -0.2554128170013428f}},
      {"Acosh", {1.5f, 3}, {0.9624236822128296f, 1.7627471685409546f}},
      {"Erfc", {0.5f, -0.25f}, {0.4795001149177551f, 1.2763264179229736f}},
  };
  for (const Literal1& c : cases) {
    KernelRunner r(c.op);
    EXPECT_THAT(RunOk(r, {Literal<float>({2}, c.in)}), TensorNear<float>({2}, c.out, 1e-6)) << c.op;
  }
  KernelRunner inf("IsInf");
  EXPECT_THAT(RunOk(inf, {Literal<float>({3}, {1, -INFINITY, NAN})}),
              TensorIs<bool>({3}, {false, true, false}));
}

// The bitwise ops: TF 2.21's values, shift counts clamped to [0, bits - 1].
TEST(CwiseTest, BitwiseOpsAreTensorFlows) {
  const Tensor x = Literal<int32_t>({4}, {12, -7, 255, 1 << 30});
  const Tensor y = Literal<int32_t>({4}, {10, 3, -1, 5});
  const auto binary = [](const char* op, const Tensor& a, const Tensor& b) {
    KernelRunner r(op);
    return RunOk(r, {a, b});
  };
  EXPECT_THAT(binary("BitwiseAnd", x, y), TensorIs<int32_t>({4}, {8, 1, 255, 0}));
  EXPECT_THAT(binary("BitwiseOr", x, y), TensorIs<int32_t>({4}, {14, -5, -1, 1073741829}));
  EXPECT_THAT(binary("BitwiseXor", x, y), TensorIs<int32_t>({4}, {6, -6, -256, 1073741829}));
  const Tensor shifts = Literal<int32_t>({4}, {1, 40, -3, 2});
  EXPECT_THAT(binary("LeftShift", x, shifts),
              TensorIs<int32_t>({4}, {24, -2147483647 - 1, 255, 0}));
  EXPECT_THAT(binary("RightShift", x, shifts), TensorIs<int32_t>({4}, {6, -1, 255, 268435456}));
  EXPECT_THAT(binary("LeftShift", Literal<uint8_t>({2}, {200, 7}), Literal<uint8_t>({2}, {1, 9})),
              TensorIs<uint8_t>({2}, {144, 128}));
  KernelRunner invert("Invert");
  EXPECT_THAT(RunOk(invert, {x}), TensorIs<int32_t>({4}, {-13, 6, -256, -1073741825}));
  KernelRunner invert8("Invert");
  EXPECT_THAT(RunOk(invert8, {Literal<uint8_t>({2}, {200, 7})}), TensorIs<uint8_t>({2}, {55, 248}));
  KernelRunner popcount("PopulationCount");
  EXPECT_THAT(RunOk(popcount, {x}), TensorIs<uint8_t>({4}, {2, 30, 8, 1}));
}

TEST(CwiseTest, MoreBinaryLiterals) {
  KernelRunner atan2("Atan2");  // TF 2.21's values
  EXPECT_THAT(RunOk(atan2, {Literal<float>({2}, {1, -1}), Literal<float>({2}, {-2, 0.5f})}),
              TensorNear<float>({2}, {2.677945137023926f, -1.1071487665176392f}, 1e-6));
  KernelRunner mn("Minimum"), mx("Maximum");
  EXPECT_THAT(RunOk(mn, {Literal<int32_t>({3}, {1, 5, 3}), Scalar<int32_t>(3)}),
              TensorIs<int32_t>({3}, {1, 3, 3}));
  EXPECT_THAT(RunOk(mx, {Literal<float>({3}, {1, 5, 3}), Scalar<float>(3)}),
              TensorIs<float>({3}, {3, 5, 3}));
  // SqrtGrad(y, dy) = dy / (2y); RsqrtGrad(y, dy) = -dy y^3 / 2.
  KernelRunner sg("SqrtGrad"), rg("RsqrtGrad");
  EXPECT_THAT(RunOk(sg, {Literal<float>({1}, {2}), Literal<float>({1}, {8})}),
              TensorIs<float>({1}, {2}));
  EXPECT_THAT(RunOk(rg, {Literal<float>({1}, {2}), Literal<float>({1}, {1})}),
              TensorIs<float>({1}, {-4}));
  // As TF: no gradient where dy is 0, even at y = 0 (not 0 / 0).
  EXPECT_THAT(RunOk(sg, {Literal<float>({2}, {0, -0.0f}), Literal<float>({2}, {0, -0.0f})}),
              TensorIs<float>({2}, {0, 0}));
  // Round of integers is the integers (TF 2.21's CPU kernel gives 0 there).
  KernelRunner round("Round");
  EXPECT_THAT(RunOk(round, {Literal<int32_t>({3}, {3, -2, 7})}),
              TensorIs<int32_t>({3}, {3, -2, 7}));
  KernelRunner le("LessEqual"), gt("Greater");
  EXPECT_THAT(RunOk(le, {Literal<int32_t>({3}, {1, 2, 3}), Scalar<int32_t>(2)}),
              TensorIs<bool>({3}, {true, true, false}));
  EXPECT_THAT(RunOk(gt, {Literal<uint8_t>({2}, {1, 200}), Scalar<uint8_t>(100)}),
              TensorIs<bool>({2}, {false, true}));
}

}  // namespace
}  // namespace towerflow
