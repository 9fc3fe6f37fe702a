// The fake-quantisation kernels and QuantizeAndDequantizeV2/V3/V4 against
// TensorFlow 2.21's values and messages (tf.raw_ops and tf.GradientTape on
// these inputs). Their
// gradients are straight-through estimators, not derivatives (the forward
// ops are step functions), so they are checked here against TF's values
// through AddSymbolicGradients rather than against finite differences.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/fake_quant_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

const std::vector<float> kX = {-7, -6.1f, -0.3f, 0, 0.01f, 0.5f, 1.26f, 5.99f, 6.1f, 100};
const std::vector<float> kWeights = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

Tensor X() { return Literal<float>({10}, kX); }

TEST(FakeQuantTest, ArgsMatchTensorFlow) {
  KernelRunner r("FakeQuantWithMinMaxArgs");
  EXPECT_THAT(RunOk(r, {X()}),
              TensorIs<float>({10}, {-6.023529529571533f, -6.023529529571533f, -0.2823529541492462f,
                                     0, 0, 0.5176470875740051f, 1.2705882787704468f,
                                     5.976470470428467f, 5.976470470428467f, 5.976470470428467f}));
  KernelRunner narrow("FakeQuantWithMinMaxArgs");
  narrow.Attr("min", -1.3f)
      .Attr("max", 2.9f)
      .Attr("num_bits", int64_t{4})
      .Attr("narrow_range", true);
  EXPECT_THAT(
      RunOk(narrow, {X()}),
      TensorIs<float>({10}, {-1.1999999284744263f, -1.1999999284744263f, -0.29999998211860657f, 0,
                             0, 0.5999999642372131f, 1.1999999284744263f, 2.999999761581421f,
                             2.999999761581421f, 2.999999761581421f}));
  // A range above 0 is nudged down to start at 0.
  KernelRunner above("FakeQuantWithMinMaxArgs");
  above.Attr("min", 0.5f).Attr("max", 2.0f);
  EXPECT_THAT(RunOk(above, {X()}), TensorIs<float>({10}, {0, 0, 0, 0, 0.0117647061124444f, 0.5,
                                                          1.2588235139846802f, 1.5, 1.5, 1.5}));
  EXPECT_THAT(RunOk(r, {Literal<float>({3}, {NAN, INFINITY, -INFINITY})}),
              TensorIs<float>({3}, {NAN, 5.976470470428467f, -6.023529529571533f}));

  KernelRunner bad("FakeQuantWithMinMaxArgs");
  bad.Attr("min", 2.0f).Attr("max", 1.0f);
  EXPECT_THAT(bad.Run({X()}), StatusIs(kInvalid, "min has to be smaller than max, was: 2 >= 1"));
  for (int64_t bits : {1, 17}) {
    KernelRunner b("FakeQuantWithMinMaxArgs");
    b.Attr("num_bits", bits);
    EXPECT_THAT(b.Run({X()}), StatusIs(kInvalid, "num_bits must be between 2 and 16, inclusive"));
  }
}

TEST(FakeQuantTest, VarsMatchTensorFlow) {
  KernelRunner r("FakeQuantWithMinMaxVars");
  r.Attr("num_bits", int64_t{5});
  EXPECT_THAT(
      RunOk(r, {X(), Scalar<float>(-1.3f), Scalar<float>(2.9f)}),
      TensorIs<float>({10}, {-1.3548386096954346f, -1.3548386096954346f, -0.2709677219390869f, 0, 0,
                             0.5419354438781738f, 1.2193547487258911f, 2.845160961151123f,
                             2.845160961151123f, 2.845160961151123f}));
  // TF does not check a tensor range: min > max and min == max compute.
  KernelRunner d("FakeQuantWithMinMaxVars");
  EXPECT_THAT(RunOk(d, {Literal<float>({2}, {-7, 0.5f}), Scalar<float>(2), Scalar<float>(1)}),
              TensorIs<float>({2}, {1, 1}));
  EXPECT_THAT(RunOk(d, {Literal<float>({2}, {-7, 0.5f}), Scalar<float>(1), Scalar<float>(1)}),
              TensorIs<float>({2}, {NAN, NAN}));
  // [0, 0] turns the op off: zeros out, every gradient through (TF's).
  EXPECT_THAT(RunOk(d, {Literal<float>({2}, {-7, 0.5f}), Scalar<float>(0), Scalar<float>(0)}),
              TensorIs<float>({2}, {0, 0}));
  KernelRunner off("FakeQuantWithMinMaxVarsGradient");
  auto passed = off.Run({Literal<float>({2}, {3, 4}), Literal<float>({2}, {-7, 0.5f}),
                         Scalar<float>(0), Scalar<float>(0)});
  ASSERT_TRUE(passed.ok()) << passed.status();
  EXPECT_THAT((*passed)[0], TensorIs<float>({2}, {3, 4}));
  EXPECT_THAT((*passed)[1], TensorIs<float>({}, {0}));
  EXPECT_THAT(d.Run({X(), Literal<float>({1}, {-1}), Scalar<float>(1)}),
              StatusIs(kInvalid, "`min` must be rank 0 but is rank 1"));

  KernelRunner g("FakeQuantWithMinMaxVarsGradient");
  g.Attr("narrow_range", true);
  auto out =
      g.Run({Literal<float>({10}, kWeights), X(), Scalar<float>(-1.3f), Scalar<float>(2.9f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({10}, {0, 0, 3, 4, 5, 6, 7, 0, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<float>({}, {3}));
  EXPECT_THAT((*out)[2], TensorIs<float>({}, {27}));
}

TEST(FakeQuantTest, PerChannelMatchesTensorFlow) {
  const Tensor y = Literal<float>({3, 3}, {-7, -6.1f, -0.3f, 0, 0.01f, 0.5f, 1.26f, 5.99f, 6.1f});
  const Tensor lo = Literal<float>({3}, {-1, -6, 0});
  const Tensor hi = Literal<float>({3}, {1, 6, 3});
  KernelRunner r("FakeQuantWithMinMaxVarsPerChannel");
  EXPECT_THAT(
      RunOk(r, {y, lo, hi}),
      TensorIs<float>({3, 3}, {-0.9960784912109375f, -6.023529529571533f, 0, 0, 0,
                               0.5058823823928833f, 1.003921627998352f, 5.976470470428467f, 3}));
  // Rank 1 (each element its own channel) and rank 4 (NHWC).
  std::vector<float> ones(10, 1), minus(10, -1);
  EXPECT_THAT(
      RunOk(r, {X(), Literal<float>({10}, minus), Literal<float>({10}, ones)}),
      TensorIs<float>({10}, {-0.9960784912109375f, -0.9960784912109375f, -0.2980392277240753f, 0,
                             0.007843137718737125f, 0.501960813999176f, 1.003921627998352f,
                             1.003921627998352f, 1.003921627998352f, 1.003921627998352f}));
  const Tensor nhwc =
      Literal<float>({2, 1, 2, 2}, {-7, -6.1f, -0.3f, 0, 0.01f, 0.5f, 1.26f, 5.99f});
  EXPECT_THAT(
      RunOk(r, {nhwc, Literal<float>({2}, {-1, -6}), Literal<float>({2}, {1, 6})}),
      TensorIs<float>({2, 1, 2, 2}, {-0.9960784912109375f, -6.023529529571533f,
                                     -0.2980392277240753f, 0, 0.007843137718737125f,
                                     0.5176470875740051f, 1.003921627998352f, 5.976470470428467f}));
  EXPECT_THAT(r.Run({y, Literal<float>({2}, {-1, -6}), Literal<float>({2}, {1, 6})}),
              StatusIs(kInvalid, "min has incorrect size, expected 3 was 2"));
  // TF's kernel CHECK-fails on a scalar; Towerflow refuses it.
  EXPECT_THAT(r.Run({Scalar<float>(1), Literal<float>({1}, {-1}), Literal<float>({1}, {1})}),
              StatusIs(kInvalid, "inputs need a channel dimension"));

  KernelRunner g("FakeQuantWithMinMaxVarsPerChannelGradient");
  auto out = g.Run({Literal<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), y, lo, hi});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({3, 3}, {0, 0, 0, 4, 5, 6, 0, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<float>({3}, {1, 2, 3}));
  EXPECT_THAT((*out)[2], TensorIs<float>({3}, {7, 8, 9}));
}

TEST(FakeQuantTest, ArgsGradientMatchesTensorFlow) {
  KernelRunner g("FakeQuantWithMinMaxArgsGradient");
  g.Attr("min", -1.3f).Attr("max", 2.9f);
  EXPECT_THAT(RunOk(g, {Literal<float>({10}, kWeights), X()}),
              TensorIs<float>({10}, {0, 0, 3, 4, 5, 6, 7, 0, 0, 0}));
  EXPECT_THAT(
      g.Run({Literal<float>({3}, {1, 1, 1}), X()}),
      StatusIs(kInvalid, "must have the same size and shape.  Input 0: [3] != input 1: [10]"));
}

Output C(const Scope& s, const Tensor& t) { return ops::Const(s, t.AsProto()); }

// The registered gradients (straight-through): d/dx, d/dmin and d/dmax of
// sum(w * fake_quant(x)), as tf.GradientTape gives them.
TEST(FakeQuantTest, GradientsAreTensorFlows) {
  Scope s = Scope::NewRootScope();
  const Output x = C(s, Literal<float>({10}, kX));
  const Output w = C(s, Literal<float>({10}, kWeights));
  const Output lo = ops::Const(s, -1.3f), hi = ops::Const(s, 2.9f);
  const Output args = ops::FakeQuantWithMinMaxArgs(
      s, x, ops::FakeQuantWithMinMaxArgs::Min(-1.3f).Max(2.9f).NumBits(4).NarrowRange(true));
  const Output vars =
      ops::FakeQuantWithMinMaxVars(s, x, lo, hi, ops::FakeQuantWithMinMaxVars::NumBits(5));
  const Output c_in =
      C(s, Literal<float>({3, 3}, {-7, -6.1f, -0.3f, 0, 0.01f, 0.5f, 1.26f, 5.99f, 6.1f}));
  const Output c_lo = C(s, Literal<float>({3}, {-1, -6, 0}));
  const Output c_hi = C(s, Literal<float>({3}, {1, 6, 3}));
  const Output c_w = C(s, Literal<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Output channels = ops::FakeQuantWithMinMaxVarsPerChannel(s, c_in, c_lo, c_hi);
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(
                  s,
                  {ops::Sum(s, ops::Mul(s, args, w), 0), ops::Sum(s, ops::Mul(s, vars, w), 0),
                   ops::Sum(s, ops::Mul(s, channels, c_w), {0, 1})},
                  {x, lo, hi, c_in, c_lo, c_hi}, &grads)
                  .ok());
  ClientSession session(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(grads, &out).ok());
  // x's gradient gathers both ops': 2 (args and vars) * w inside both ranges.
  EXPECT_THAT(out[0], TensorIs<float>({10}, {0, 0, 6, 8, 10, 12, 14, 0, 0, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {3}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {27}));
  EXPECT_THAT(out[3], TensorIs<float>({3, 3}, {0, 0, 0, 4, 5, 6, 0, 0, 0}));
  EXPECT_THAT(out[4], TensorIs<float>({3}, {1, 2, 3}));
  EXPECT_THAT(out[5], TensorIs<float>({3}, {7, 8, 9}));
}

template <typename V>
AttrValue A(const V& v) {
  AttrValue a;
  SetAttrValue(v, &a);
  return a;
}

Tensor Q() { return Literal<float>({8}, {-1.3f, -0.5f, 0, 0.26f, 0.7f, 2.9f, 3.1f, -4}); }

// QuantizeAndDequantizeV2 (V4 is the same kernel) with `attrs` on
// (x, input_min, input_max).
Tensor Qdq(const Tensor& x, float lo, float hi,
           std::vector<std::pair<std::string, AttrValue>> attrs) {
  KernelRunner r("QuantizeAndDequantizeV2");
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  return RunOk(r, {x, Scalar<float>(lo), Scalar<float>(hi)});
}

TEST(QuantizeAndDequantizeTest, MatchesTensorFlow) {
  // The range from the input, 4 bits: the minimum limits the scale (2), the
  // maximum moves to 3.5.
  EXPECT_THAT(Qdq(Q(), 0, 0, {{"num_bits", A(int64_t{4})}}),
              TensorIs<float>({8}, {-1.5f, -0.5f, 0, 0.5f, 0.5f, 3, 3, -4}));
  // Given [-1, 2]: the maximum limits the scale (3.5); inputs are clamped
  // to the moved range [-16/7, 2].
  EXPECT_THAT(
      Qdq(Q(), -1, 2, {{"num_bits", A(int64_t{4})}, {"range_given", A(true)}}),
      TensorIs<float>({8}, {-1.4285714626312256f, -0.5714285969734192f, 0, 0.2857142984867096f,
                            0.5714285969734192f, 2, 2, -2.2857143878936768f}));
  EXPECT_THAT(
      Qdq(Q(), 0, 3,
          {{"num_bits", A(int64_t{3})}, {"range_given", A(true)}, {"signed_input", A(false)}}),
      TensorIs<float>({8}, {0, 0, 0, 0.4285714328289032f, 0.8571428656578064f, 3, 3, 0}));
  EXPECT_THAT(Qdq(Q(), 0, 0, {{"num_bits", A(int64_t{3})}, {"narrow_range", A(true)}}),
              TensorIs<float>({8}, {-1.3333333730697632f, -0.0f, 0, 0, 1.3333333730697632f,
                                    2.6666667461395264f, 2.6666667461395264f, -4}));
  const Tensor halves = Literal<float>({5}, {0.5f, 1.5f, -0.5f, -1.5f, 2.5f});
  const std::vector<std::pair<std::string, AttrValue>> given = {{"num_bits", A(int64_t{4})},
                                                                {"range_given", A(true)}};
  EXPECT_THAT(Qdq(halves, -7, 7, given), TensorIs<float>({5}, {0, 2, -0.0f, -2, 2}));
  auto half_up = given;
  half_up.push_back({"round_mode", A("HALF_UP")});
  EXPECT_THAT(Qdq(halves, -7, 7, half_up), TensorIs<float>({5}, {1, 2, 0, -1, 3}));
  // Per column (axis 1), each column's own range.
  KernelRunner axis("QuantizeAndDequantizeV2");
  axis.Attr("num_bits", int64_t{3}).Attr("axis", int64_t{1});
  EXPECT_THAT(RunOk(axis, {Literal<float>({3, 3}, {-1.3f, 0.4f, 5, 2, -0.1f, -6, 0.7f, 0.05f, 1}),
                           Filled<float>({3}, 0), Filled<float>({3}, 0)}),
              TensorIs<float>(
                  {3, 3}, {-1.3333333730697632f, 0.40000003576278687f, 5, 2, -0.13333334028720856f,
                           -6.666666507720947f, 0.6666666865348816f, 0, 1.6666666269302368f}));
  KernelRunner v3("QuantizeAndDequantizeV3");
  v3.Attr("range_given", false);
  EXPECT_THAT(RunOk(v3, {Q(), Scalar<float>(0), Scalar<float>(0), Scalar<int32_t>(5)}),
              TensorIs<float>({8}, {-1.25f, -0.5f, 0, 0.25f, 0.75f, 3, 3, -4}));
}

TEST(QuantizeAndDequantizeTest, V4GradPassesInsideTheRange) {
  KernelRunner r("QuantizeAndDequantizeV4Grad");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          r.Run({Filled<float>({8}, 1), Q(), Scalar<float>(-1), Scalar<float>(2)}));
  EXPECT_THAT(out[0], TensorIs<float>({8}, {0, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {0}));
  KernelRunner axis("QuantizeAndDequantizeV4Grad");
  axis.Attr("axis", int64_t{0});
  TW_ASSERT_OK_AND_ASSIGN(
      out, axis.Run({Filled<float>({3, 3}, 2),
                     Literal<float>({3, 3}, {-1.3f, 0.4f, 5, 2, -0.1f, -6, 0.7f, 0.05f, 1}),
                     Literal<float>({3}, {-1, -2, 0}), Literal<float>({3}, {1, 2, 0.5f})}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 3}, {0, 2, 0, 2, 2, 0, 0, 2, 0}));
  EXPECT_THAT(out[2], TensorIs<float>({3}, {0, 0, 0}));
}

TEST(QuantizeAndDequantizeTest, TensorFlowsMessages) {
  const auto run = [](const char* op, std::vector<std::pair<std::string, AttrValue>> attrs,
                      std::vector<Tensor> in) {
    KernelRunner r(op);
    for (const auto& [name, value] : attrs) r.Attr(name, value);
    return r.Run(in);
  };
  const Tensor zero = Scalar<float>(0);
  EXPECT_THAT(run("QuantizeAndDequantizeV2", {{"num_bits", A(int64_t{0})}}, {Q(), zero, zero}),
              StatusIs(kInvalid, "num_bits is out of range: 0 with signed_input_ 1"));
  EXPECT_THAT(run("QuantizeAndDequantizeV4",
                  {{"num_bits", A(int64_t{63})}, {"signed_input", A(false)}}, {Q(), zero, zero}),
              StatusIs(kInvalid, "num_bits is out of range: 63 with signed_input_ 0"));
  EXPECT_THAT(run("QuantizeAndDequantizeV2", {{"range_given", A(true)}},
                  {Q(), Scalar<float>(2), Scalar<float>(1)}),
              StatusIs(kInvalid, "Invalid range: input_min 2 > input_max 1"));
  EXPECT_THAT(run("QuantizeAndDequantizeV2", {{"range_given", A(true)}},
                  {Q(), Scalar<float>(-1), Literal<float>({1}, {2})}),
              StatusIs(kInvalid, "input_max must be a scalar."));
  EXPECT_THAT(run("QuantizeAndDequantizeV2", {{"axis", A(int64_t{-2})}}, {Q(), zero, zero}),
              StatusIs(kInvalid, "Axis must be at least -1. Found -2"));
  EXPECT_THAT(run("QuantizeAndDequantizeV2", {{"axis", A(int64_t{1})}}, {Q(), zero, zero}),
              StatusIs(kInvalid, "Shape must be at least rank 2 but is rank 1"));
  EXPECT_THAT(
      run("QuantizeAndDequantizeV3", {}, {Q(), zero, zero, Literal<int32_t>({1}, {4})}),
      StatusIs(kInvalid,
               "Invalid shape. The `num_bits` tensor should be a scalar. Got dimensions: 1"));
  EXPECT_THAT(run("QuantizeAndDequantizeV3", {}, {Q(), zero, zero, Scalar<int32_t>(0)}),
              StatusIs(kInvalid, "num_bits is out of range: 0 with `signed_input_` 1"));
  EXPECT_THAT(run("QuantizeAndDequantizeV4Grad", {},
                  {Filled<float>({8}, 1), Q(), Literal<float>({1}, {1}), Scalar<float>(2)}),
              StatusIs(kInvalid, "input_min must be a scalar if axis is unspecified"));
  EXPECT_THAT(run("QuantizeAndDequantizeV4Grad", {},
                  {Filled<float>({7}, 1), Q(), Scalar<float>(1), Scalar<float>(2)}),
              StatusIs(kInvalid, "gradient and input must be the same size"));
  EXPECT_THAT(run("QuantizeAndDequantizeV4Grad", {{"axis", A(int64_t{0})}},
                  {Filled<float>({8}, 1), Q(), Literal<float>({2}, {1, 2}), Scalar<float>(2)}),
              StatusIs(kInvalid, "min has incorrect size, expected 8 was 2"));
}

// QuantizeAndDequantize's straight-through estimators (the op is a step
// function, so finite differences see 0): V2 and V3 pass g, V4 passes g
// where x lies in [input_min, input_max] (TF 2.21's gradients).
TEST(QuantizeAndDequantizeTest, GradientsAreStraightThrough) {
  Scope s = Scope::NewRootScope();
  const Output x = ops::Const(s, {-1.3f, -0.5f, 0.26f, 2.9f});
  const Output lo = ops::Const(s, -1.f), hi = ops::Const(s, 2.f);
  const Output v2 = ops::QuantizeAndDequantizeV2(s, x, lo, hi);
  const Output v3 = ops::QuantizeAndDequantizeV3(s, x, lo, hi, ops::Const(s, 4));
  const Output v4 =
      ops::QuantizeAndDequantizeV4(s, x, lo, hi, ops::QuantizeAndDequantizeV4::RangeGiven(true));
  const Output weights = ops::Const(s, {1.f, 2.f, 3.f, 4.f});
  std::vector<Output> grads;
  for (const Output& y : {v2, v3, v4}) {
    std::vector<Output> g;
    TW_ASSERT_OK(AddSymbolicGradients(s, {ops::Sum(s, ops::Mul(s, y, weights), 0)}, {x}, &g));
    grads.push_back(g[0]);
  }
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run(grads, &out));
  EXPECT_THAT(out[0], TensorIs<float>({4}, {1, 2, 3, 4}));
  EXPECT_THAT(out[1], TensorIs<float>({4}, {1, 2, 3, 4}));
  EXPECT_THAT(out[2], TensorIs<float>({4}, {0, 2, 3, 0}));
}

}  // namespace
}  // namespace towerflow
