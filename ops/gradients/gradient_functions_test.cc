// Every registered gradient function against central finite differences
// (ComputeGradientError, delta 1e-3): max error < 1e-4 in float and < 1e-10
// in double, TensorFlow's bounds. One table of cases (PyTorch's OpInfo
// style); a coverage test keeps it in step with the registry.
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "ops/grad_registry.h"
#include "ops/ops.h"
#include "testing/gradient_checker.h"

namespace towerflow {
namespace {

using Builder = std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>;

struct InputSpec {
  TensorShape shape;
  double lo = -1, hi = 1;   // values drawn from [lo, hi]
  bool avoid_zero = false;  // |value| >= 0.2
};

struct GradCase {
  std::string name;  // the op whose gradient is checked (plus a variant)
  std::vector<InputSpec> inputs;
  Builder build;
  DataType dtype = DT_FLOAT;
  // Placeholders without static shapes, to exercise the run-time paths.
  bool dynamic_shapes = false;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

// Deterministic, well spread values: a fixed LCG per case.
template <typename T>
Tensor Values(const InputSpec& spec, uint64_t seed) {
  Tensor t(DataTypeToEnum<T>::value, spec.shape);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    double v = spec.lo + (spec.hi - spec.lo) * u;
    if (spec.avoid_zero && std::abs(v) < 0.2) v = v < 0 ? v - 0.2 : v + 0.2;
    t.data<T>()[i] = static_cast<T>(v);
  }
  return t;
}

InputSpec S(std::initializer_list<int64_t> dims, double lo = -1, double hi = 1) {
  return InputSpec{TensorShape(dims), lo, hi, false};
}
InputSpec NonZero(std::initializer_list<int64_t> dims) {
  return InputSpec{TensorShape(dims), -1, 1, true};
}

#define FN [](const Scope& s, const std::vector<Output>& x) -> std::vector<Output>

GradCase Unary(const std::string& name, std::function<Output(const Scope&, Output)> f,
               InputSpec in = S({2, 3})) {
  return {name, {in}, [f](const Scope& s, const std::vector<Output>& x) {
            return std::vector<Output>{f(s, x[0])};
          }};
}

GradCase Binary(const std::string& name, std::function<Output(const Scope&, Output, Output)> f,
                InputSpec a = S({2, 3}), InputSpec b = S({3})) {
  return {name, {a, b}, [f](const Scope& s, const std::vector<Output>& x) {
            return std::vector<Output>{f(s, x[0], x[1])};
          }};
}

GradCase Double(GradCase c) {
  c.name += "/double";
  c.dtype = DT_DOUBLE;
  return c;
}
GradCase Dynamic(GradCase c) {
  c.name += "/dynamic";
  c.dynamic_shapes = true;
  return c;
}

std::vector<GradCase> Cases() {
  // Values keep outputs below 1 in magnitude where they can: float central
  // differences lose about 6e-5 * |y| to rounding.
  const InputSpec positive = S({2, 3}, 0.5, 1.5);
  const InputSpec above_one = S({2, 3}, 1.0, 2.0);
  std::vector<GradCase> c = {
      // Unary math.
      Unary("Neg", [](const Scope& s, Output x) { return ops::Neg(s, x); }),
      Unary(
          "Abs", [](const Scope& s, Output x) { return ops::Abs(s, x); }, NonZero({2, 3})),
      Unary("Square", [](const Scope& s, Output x) { return ops::Square(s, x); }),
      Unary(
          "Sqrt", [](const Scope& s, Output x) { return ops::Sqrt(s, x); }, positive),
      Unary(
          "Rsqrt", [](const Scope& s, Output x) { return ops::Rsqrt(s, x); }, positive),
      Unary("Exp", [](const Scope& s, Output x) { return ops::Exp(s, x); }),
      Unary("Expm1", [](const Scope& s, Output x) { return ops::Expm1(s, x); }),
      Unary(
          "Log", [](const Scope& s, Output x) { return ops::Log(s, x); }, positive),
      Unary(
          "Log1p", [](const Scope& s, Output x) { return ops::Log1p(s, x); }, positive),
      Unary("Sigmoid", [](const Scope& s, Output x) { return ops::Sigmoid(s, x); }),
      Unary("Tanh", [](const Scope& s, Output x) { return ops::Tanh(s, x); }),
      Unary(
          "Reciprocal", [](const Scope& s, Output x) { return ops::Reciprocal(s, x); }, above_one),
      Unary(
          "Inv", [](const Scope& s, Output x) { return ops::Inv(s, x); }, above_one),
      Unary("Sin", [](const Scope& s, Output x) { return ops::Sin(s, x); }),
      Unary("Cos", [](const Scope& s, Output x) { return ops::Cos(s, x); }),
      Unary(
          "Sign", [](const Scope& s, Output x) { return ops::Sign(s, x); }, NonZero({2, 3})),
      // Second order: the *Grad ops.
      Binary(
          "TanhGrad", [](const Scope& s, Output y, Output dy) { return ops::TanhGrad(s, y, dy); },
          S({2, 3}, -0.9, 0.9), S({2, 3})),
      Binary(
          "SigmoidGrad",
          [](const Scope& s, Output y, Output dy) { return ops::SigmoidGrad(s, y, dy); },
          S({2, 3}, 0.1, 0.9), S({2, 3})),
      Binary(
          "ReciprocalGrad",
          [](const Scope& s, Output y, Output dy) { return ops::ReciprocalGrad(s, y, dy); },
          positive, S({2, 3})),
      Binary(
          "SqrtGrad", [](const Scope& s, Output y, Output dy) { return ops::SqrtGrad(s, y, dy); },
          positive, S({2, 3})),
      Binary(
          "RsqrtGrad", [](const Scope& s, Output y, Output dy) { return ops::RsqrtGrad(s, y, dy); },
          positive, S({2, 3})),
      Binary(
          "ReluGrad", [](const Scope& s, Output g, Output f) { return ops::ReluGrad(s, g, f); },
          S({2, 3}), NonZero({2, 3})),
      // Binary math with broadcasting.
      Binary("Add", [](const Scope& s, Output a, Output b) { return ops::Add(s, a, b); }),
      Binary(
          "AddV2", [](const Scope& s, Output a, Output b) { return ops::AddV2(s, a, b); },
          S({3, 1}), S({1, 2})),
      Binary(
          "Sub", [](const Scope& s, Output a, Output b) { return ops::Sub(s, a, b); }, S({3}),
          S({2, 3})),
      Binary("Mul", [](const Scope& s, Output a, Output b) { return ops::Mul(s, a, b); }),
      Binary(
          "RealDiv", [](const Scope& s, Output a, Output b) { return ops::RealDiv(s, a, b); },
          S({2, 3}), S({3}, 1, 2)),
      Binary(
          "Div", [](const Scope& s, Output a, Output b) { return ops::Div(s, a, b); }, S({2, 3}),
          S({2, 3}, -2, -1)),
      Binary(
          "DivNoNan", [](const Scope& s, Output a, Output b) { return ops::DivNoNan(s, a, b); },
          S({2, 3}), S({3}, 1, 2)),
      // x / y in (2.1, 2.95): floor(x / y) = 2 around every point, so
      // FloorMod is x - 2y there (dy = -2 g). Piecewise linear: checked in
      // double, as the linear ops are.
      Double(Binary(
          "FloorMod", [](const Scope& s, Output a, Output b) { return ops::FloorMod(s, a, b); },
          S({2, 3}, 5.1, 5.9), S({3}, 2.0, 2.4))),
      Binary("Maximum", [](const Scope& s, Output a, Output b) { return ops::Maximum(s, a, b); }),
      Binary("Minimum", [](const Scope& s, Output a, Output b) { return ops::Minimum(s, a, b); }),
      Binary(
          "Pow", [](const Scope& s, Output a, Output b) { return ops::Pow(s, a, b); },
          S({2, 3}, 0.5, 1.5), S({3})),
      Binary("SquaredDifference",
             [](const Scope& s, Output a, Output b) { return ops::SquaredDifference(s, a, b); }),
      {"AddN", {S({2, 2}), S({2, 2}), S({2, 2})}, FN{return {ops::AddN(s, {x[0], x[1], x[2]})};
}
}  // namespace
, {"Select", {S({2, 3}), S({2, 3})},
   FN{return {ops::Select(s, ops::Const(s, {true, false}), x[0], x[1])};
}  // namespace towerflow
}
, {"SelectV2", {S({2, 3}), S({3})},
   FN{return {
       ops::SelectV2(s, ops::Const(s, {{true, false, true}, {false, false, true}}), x[0], x[1])};
}
}
,
    Unary("Cast", [](const Scope& s,
                     Output x) { return ops::Cast(s, ops::Cast(s, x, DT_DOUBLE), DT_FLOAT); }),
    // Reductions.
    Unary(
        "Sum", [](const Scope& s, Output x) { return ops::Sum(s, x, {1}); }, S({2, 3, 2})),
    Unary(
        "Sum/keep_dims_negative_axis",
        [](const Scope& s, Output x) {
          return ops::Sum(s, x, {-1, 0}, ops::Sum::KeepDims(true));
        },
        S({2, 3, 2})),
    Unary(
        "Mean",
        [](const Scope& s, Output x) {
          return ops::Mean(s, x, {0, 2});
        },
        S({2, 3, 2})),
    Unary("Max", [](const Scope& s, Output x) { return ops::Max(s, x, {1}); }),
    Unary("Min", [](const Scope& s, Output x) { return ops::Min(s, x, {0}); }),
    // Matrices.
    Binary(
        "MatMul", [](const Scope& s, Output a, Output b) { return ops::MatMul(s, a, b); },
        S({2, 3}), S({3, 4})),
    Binary(
        "MatMul/transpose_a_b",
        [](const Scope& s, Output a, Output b) {
          return ops::MatMul(s, a, b, ops::MatMul::TransposeA(true).TransposeB(true));
        },
        S({3, 2}), S({4, 3})),
    Binary(
        "MatMul/transpose_a",
        [](const Scope& s, Output a, Output b) {
          return ops::MatMul(s, a, b, ops::MatMul::TransposeA(true));
        },
        S({3, 2}), S({3, 4})),
    Binary(
        "MatMul/transpose_b",
        [](const Scope& s, Output a, Output b) {
          return ops::MatMul(s, a, b, ops::MatMul::TransposeB(true));
        },
        S({2, 3}), S({4, 3})),
    Binary(
        "BatchMatMul",
        [](const Scope& s, Output a, Output b) {
          return ops::BatchMatMul(s, a, b, ops::BatchMatMul::AdjY(true));
        },
        S({2, 2, 3}), S({2, 4, 3})),
    Binary(
        "BatchMatMulV2",
        [](const Scope& s, Output a, Output b) { return ops::BatchMatMulV2(s, a, b); },
        S({2, 2, 3}), S({3, 2})),
    // Shapes and data movement.
    Unary("Identity", [](const Scope& s, Output x) { return ops::Identity(s, x); }),
    Unary("Snapshot", [](const Scope& s, Output x) { return ops::Snapshot(s, x); }),
    Unary("PlaceholderWithDefault",
          [](const Scope& s, Output x) {
            return ops::PlaceholderWithDefault(s, x, PartialTensorShape({2, 3}));
          }),
    Unary("Print", [](const Scope& s, Output x) { return ops::Print(s, x, {x}); }),
    Unary("CheckNumerics", [](const Scope& s, Output x) { return ops::CheckNumerics(s, x, "x"); }),
    {"IdentityN", {S({2}), S({3})}, FN{return ops::IdentityN(s, {x[0], x[1]}).output;
}
}
,
    Unary("Reshape",
          [](const Scope& s, Output x) {
            return ops::Reshape(s, x, {3, -1});
          }),
    Unary("ExpandDims", [](const Scope& s, Output x) { return ops::ExpandDims(s, x, 1); }),
    Unary(
        "Squeeze", [](const Scope& s, Output x) { return ops::Squeeze(s, x); }, S({2, 1, 3})),
    Unary(
        "Transpose",
        [](const Scope& s, Output x) {
          return ops::Transpose(s, x, {2, 0, 1});
        },
        S({2, 3, 2})),
    {"ConcatV2", {S({2, 1}), S({2, 3})}, FN{return {ops::ConcatV2(s, {x[0], x[1]}, -1)};
}
}
, {"Concat", {S({1, 3}), S({2, 3})}, FN{return {ops::Concat(s, 0, {x[0], x[1]})};
}
}
,
    Unary(
        "Split", [](const Scope& s, Output x) { return ops::Split(s, 1, x, 2).output[1]; },
        S({2, 4})),
    {"SplitV", {S({2, 5})}, FN{return ops::SplitV(s, x[0], {2, 3}, 1, 2).output;
}
}
, {"Pack", {S({2}), S({2})}, FN{return {ops::Pack(s, {x[0], x[1]}, ops::Pack::Axis(1))};
}
}
, {"Unpack", {S({2, 3})}, FN{return ops::Unpack(s, x[0], 3, ops::Unpack::Axis(1)).output;
}
}
,
    Unary(
        "Slice",
        [](const Scope& s, Output x) {
          return ops::Slice(s, x, {1, 0}, {-1, 2});
        },
        S({3, 3})),
    Unary(
        "StridedSlice",
        [](const Scope& s, Output x) {
          return ops::StridedSlice(s, x, {0, 3}, {3, 0}, {2, -1},
                                   ops::StridedSlice::BeginMask(0).EndMask(2));
        },
        S({3, 4})),
    Unary(
        "StridedSliceGrad",
        [](const Scope& s, Output dy) {
          return ops::StridedSliceGrad(s, {3, 4}, {0, 3}, {3, 0}, {2, -1}, dy,
                                       ops::StridedSliceGrad::BeginMask(0).EndMask(2));
        },
        S({2, 4})),
    Unary(
        "UnsortedSegmentSum",
        [](const Scope& s, Output x) {
          return ops::UnsortedSegmentSum(s, x, {1, -1, 1, 0}, 3);
        },
        S({4, 2})),
    Unary(
        "DynamicPartition",
        [](const Scope& s, Output x) {
          return ops::DynamicPartition(s, x, {1, 0, 1, 2}, 3).outputs[1];
        },
        S({4, 2})),
    {"DynamicStitch", {S({2, 2}), S({3, 2})},
     FN{return {
         ops::DynamicStitch(s, {ops::Const(s, {0, 3}), ops::Const(s, {1, 4, 2})}, {x[0], x[1]})
             .merged};
}
}
,
    Unary(
        "TopKV2", [](const Scope& s, Output x) { return ops::TopKV2(s, x, 2).values; }, S({3, 4})),
    Unary(
        "StridedSlice/shrink",
        [](const Scope& s, Output x) {
          return ops::StridedSlice(s, x, {1}, {2}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
        },
        S({3, 2})),
    Unary("Pad",
          [](const Scope& s, Output x) {
            return ops::Pad(s, x, {{1, 0}, {2, 1}});
          }),
    Unary(
        "ReverseV2",
        [](const Scope& s, Output x) {
          return ops::ReverseV2(s, x, {0, -1});
        },
        S({2, 3, 2})),
    Unary(
        "DepthToSpace", [](const Scope& s, Output x) { return ops::DepthToSpace(s, x, 2); },
        S({1, 1, 2, 8})),
    Unary(
        "SpaceToDepth", [](const Scope& s, Output x) { return ops::SpaceToDepth(s, x, 2); },
        S({1, 2, 4, 1})),
    Unary(
        "MirrorPad/reflect",
        [](const Scope& s, Output x) {
          return ops::MirrorPad(s, x, {{1, 2}, {2, 0}}, "REFLECT");
        },
        S({3, 3})),
    Unary(
        "MirrorPad/symmetric",
        [](const Scope& s, Output x) {
          return ops::MirrorPad(s, x, {{2, 1}, {0, 3}}, "SYMMETRIC");
        },
        S({2, 3})),
    Unary(
        "MirrorPadGrad",
        [](const Scope& s, Output x) {
          return ops::MirrorPadGrad(s, x, {{1, 1}, {0, 2}}, "REFLECT");
        },
        S({5, 5})),
    Unary("PadV2",
          [](const Scope& s, Output x) {
            return ops::PadV2(s, x, {{0, 1}, {1, 1}}, 0.5f);
          }),
    Unary(
        "Tile",
        [](const Scope& s, Output x) {
          return ops::Tile(s, x, {2, 3});
        },
        S({2, 2})),
    Unary(
        "Fill",
        [](const Scope& s, Output x) {
          return ops::Fill(s, {2, 3}, x);
        },
        S({})),
    Unary(
        "BroadcastTo",
        [](const Scope& s, Output x) {
          return ops::BroadcastTo(s, x, {2, 2, 3});
        },
        S({2, 1})),
    Unary(
        "GatherV2",
        [](const Scope& s, Output x) {
          return ops::GatherV2(s, x, {2, 0, 2}, 0);
        },
        S({3, 2})),
    Unary(
        "Gather",
        [](const Scope& s, Output x) {
          return ops::Gather(s, x, {{1, 1}, {0, 2}});
        },
        S({3, 2})),
    Unary(
        "Prod", [](const Scope& s, Output x) { return ops::Prod(s, x, 0); }, NonZero({2, 3})),
    Unary(
        "Prod/two_axes_keep_dims",
        [](const Scope& s, Output x) {
          return ops::Prod(s, x, {0, -1}, ops::Prod::KeepDims(true));
        },
        NonZero({2, 3, 2})),
    Unary(
        "Cumsum", [](const Scope& s, Output x) { return ops::Cumsum(s, x, 1); }, S({2, 3})),
    Unary(
        "Cumsum/exclusive_reverse",
        [](const Scope& s, Output x) {
          return ops::Cumsum(s, x, 0, ops::Cumsum::Exclusive(true).Reverse(true));
        },
        S({3, 2})),
    Unary(
        "Cumprod", [](const Scope& s, Output x) { return ops::Cumprod(s, x, -1); },
        NonZero({2, 3})),
    Unary(
        "Cumprod/exclusive_reverse",
        [](const Scope& s, Output x) {
          return ops::Cumprod(s, x, 0, ops::Cumprod::Exclusive(true).Reverse(true));
        },
        NonZero({3, 2})),
    Unary(
        "GatherV2/axis1",
        [](const Scope& s, Output x) {
          return ops::GatherV2(s, x, {2, 0, 2}, 1);
        },
        S({2, 3, 2})),
    Unary(
        "GatherV2/batch_dims",
        [](const Scope& s, Output x) {
          return ops::GatherV2(s, x, {{2, 0}, {1, 1}}, 1, ops::GatherV2::BatchDims(1));
        },
        S({2, 3, 2})),
    Unary(
        "GatherV2/batch_dims_axis_past_them",
        [](const Scope& s, Output x) {
          return ops::GatherV2(s, x, {{2, 0, 2}, {1, 1, 0}}, 2, ops::GatherV2::BatchDims(-1));
        },
        S({2, 2, 3})),
    Unary(
        "GatherV2/negative_axis_matrix_indices",
        [](const Scope& s, Output x) {
          return ops::GatherV2(s, x, {{1, 0}, {1, 1}}, -1);
        },
        S({2, 3})),
    // Neural-network ops.
    Binary(
        "BiasAdd", [](const Scope& s, Output v, Output b) { return ops::BiasAdd(s, v, b); },
        S({2, 3}), S({3})),
    Binary(
        "BiasAdd/NCHW",
        [](const Scope& s, Output v, Output b) {
          return ops::BiasAdd(s, v, b, ops::BiasAdd::DataFormat("NCHW"));
        },
        S({1, 2, 2, 2}), S({2})),
    Binary(
        "BiasAddV1", [](const Scope& s, Output v, Output b) { return ops::BiasAddV1(s, v, b); },
        S({2, 3}), S({3})),
    Unary(
        "Relu", [](const Scope& s, Output x) { return ops::Relu(s, x); }, NonZero({2, 3})),
    Unary(
        "Relu6", [](const Scope& s, Output x) { return ops::Relu6(s, ops::Mul(s, x, 4.0f)); },
        InputSpec{TensorShape({2, 3}), -2, 2, true}),
    Unary(
        "Elu", [](const Scope& s, Output x) { return ops::Elu(s, x); }, NonZero({2, 3})),
    Unary("Softplus", [](const Scope& s, Output x) { return ops::Softplus(s, x); }),
    Unary(
        "Selu", [](const Scope& s, Output x) { return ops::Selu(s, x); }, NonZero({2, 3})),
    Unary(
        "LeakyRelu",
        [](const Scope& s, Output x) { return ops::LeakyRelu(s, x, ops::LeakyRelu::Alpha(0.3f)); },
        NonZero({2, 3})),
    Unary("Erf", [](const Scope& s, Output x) { return ops::Erf(s, x); }),
    Unary("Softmax", [](const Scope& s, Output x) { return ops::Softmax(s, x); }),
    Unary("LogSoftmax", [](const Scope& s, Output x) { return ops::LogSoftmax(s, x); }),
    // Labels are distributions (the op's backprop assumes rows summing to 1).
    {"SoftmaxCrossEntropyWithLogits", {S({2, 3}), S({2, 3})},
     FN{return {ops::SoftmaxCrossEntropyWithLogits(s, x[0], ops::Softmax(s, x[1])).loss};
}
}
, {"SoftmaxCrossEntropyWithLogits/backprop", {S({2, 3})},
   FN{return {ops::SoftmaxCrossEntropyWithLogits(
                  s, x[0], ops::Const(s, {{0.2f, 0.3f, 0.5f}, {1.f, 0.f, 0.f}}))
                  .backprop};
}
}
, {"SparseSoftmaxCrossEntropyWithLogits", {S({2, 3})},
   FN{return {ops::SparseSoftmaxCrossEntropyWithLogits(s, x[0], {2, 0}).loss};
}
}
, {"Conv2D", {S({1, 4, 4, 2}, -0.5, 0.5), S({3, 3, 2, 2}, -0.5, 0.5)},
   FN{return {ops::Conv2D(s, x[0], x[1], {1, 1, 1, 1}, "SAME")};
}
}
, {"Conv2D/valid_stride2_dilation", {S({1, 5, 5, 1}, -0.5, 0.5), S({2, 2, 1, 2}, -0.5, 0.5)},
   FN{return {ops::Conv2D(s, x[0], x[1], {1, 2, 2, 1}, "VALID")};
}
}
, {"Conv2DBackpropInput", {S({2, 2, 1, 2}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
   FN{return {ops::Conv2DBackpropInput(s, {1, 4, 4, 1}, x[0], x[1], {1, 2, 2, 1}, "SAME")};
}
}
, {"Conv2DBackpropFilter", {S({1, 4, 4, 1}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
   FN{return {ops::Conv2DBackpropFilter(s, x[0], {2, 2, 1, 2}, x[1], {1, 2, 2, 1}, "SAME")};
}
}
,
    Unary(
        "MaxPool",
        [](const Scope& s, Output x) {
          return ops::MaxPool(s, x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
        },
        S({1, 3, 3, 1})),
    Unary(
        "AvgPool",
        [](const Scope& s, Output x) {
          return ops::AvgPool(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
        },
        S({1, 3, 3, 2})),
    Unary(
        "AvgPoolGrad",
        [](const Scope& s, Output g) {
          return ops::AvgPoolGrad(s, {1, 3, 3, 1}, g, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
        },
        S({1, 2, 2, 1})),
    Unary(
        "LRN",
        [](const Scope& s, Output x) {
          return ops::LRN(s, x, ops::LRN::DepthRadius(1).Bias(1.0f).Alpha(0.5f).Beta(0.75f));
        },
        S({1, 2, 1, 4})),
    {"FusedBatchNormV3", {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
     FN{return {ops::FusedBatchNormV3(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                      ops::Const(s, {1.f, 1.f, 1.f}))
                    .y};
}
}
, {"FusedBatchNorm", {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
   FN{return {ops::FusedBatchNorm(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                  ops::Const(s, {1.f, 1.f, 1.f}))
                  .y};
}
}
, {"FusedBatchNormV3/inference", {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
   FN{return {ops::FusedBatchNormV3(s, x[0], x[1], x[2], ops::Const(s, {0.1f, -0.2f, 0.3f}),
                                    ops::Const(s, {1.f, 0.5f, 2.f}),
                                    ops::FusedBatchNormV3::IsTraining(false))
                  .y};
}
}
, {"FusedBatchNormV2", {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
   FN{return {ops::FusedBatchNormV2(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                    ops::Const(s, {1.f, 1.f, 1.f}))
                  .y};
}
}
, {"FusedBatchNormGradV2", {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
   FN{auto fbn =
          ops::FusedBatchNormV2(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                ops::Const(s, {0.f, 0.f, 0.f}), ops::Const(s, {1.f, 1.f, 1.f}));
auto g = ops::FusedBatchNormGradV2(s, x[0], x[1], x[2], fbn.reserve_space_1, fbn.reserve_space_2);
return {g.x_backprop, g.scale_backprop, g.offset_backprop};
}
}
, {"DepthwiseConv2dNative", {S({1, 4, 4, 2}, -0.5, 0.5), S({3, 3, 2, 2}, -0.5, 0.5)},
   FN{return {ops::DepthwiseConv2dNative(s, x[0], x[1], {1, 1, 1, 1}, "SAME")};
}
}
, {"DepthwiseConv2dNative/valid_stride2", {S({1, 5, 5, 3}, -0.5, 0.5), S({2, 2, 3, 1}, -0.5, 0.5)},
   FN{return {ops::DepthwiseConv2dNative(s, x[0], x[1], {1, 2, 2, 1}, "VALID")};
}
}
, {"DepthwiseConv2dNativeBackpropInput", {S({2, 2, 2, 1}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
   FN{return {
       ops::DepthwiseConv2dNativeBackpropInput(s, {1, 4, 4, 2}, x[0], x[1], {1, 2, 2, 1}, "SAME")};
}
}
, {"DepthwiseConv2dNativeBackpropFilter", {S({1, 4, 4, 2}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
   FN{return {
       ops::DepthwiseConv2dNativeBackpropFilter(s, x[0], {2, 2, 2, 1}, x[1], {1, 2, 2, 1}, "SAME")};
}
}
,
    Unary(
        "ResizeBilinear",
        [](const Scope& s, Output x) {
          return ops::ResizeBilinear(s, x, {3, 5});
        },
        S({1, 2, 3, 2})),
    Unary(
        "ResizeBilinear/half_pixel_centers",
        [](const Scope& s, Output x) {
          return ops::ResizeBilinear(s, x, {5, 2}, ops::ResizeBilinear::HalfPixelCenters(true));
        },
        S({2, 3, 3, 1})),
    Unary(
        "ResizeBilinearGrad",
        [](const Scope& s, Output x) {
          return ops::ResizeBilinearGrad(s, x, ops::Fill(s, {1, 2, 3, 2}, 0.f),
                                         ops::ResizeBilinearGrad::AlignCorners(true));
        },
        S({1, 3, 5, 2})),
    Unary(
        "ResizeNearestNeighbor",
        [](const Scope& s, Output x) {
          return ops::ResizeNearestNeighbor(s, x, {3, 5},
                                            ops::ResizeNearestNeighbor::AlignCorners(true));
        },
        S({1, 2, 3, 2})),
    Unary(
        "ResizeNearestNeighborGrad",
        [](const Scope& s, Output x) {
          return ops::ResizeNearestNeighborGrad(
              s, x, {2, 3}, ops::ResizeNearestNeighborGrad::HalfPixelCenters(true));
        },
        S({1, 3, 5, 2})),
    Unary(
        "SpaceToBatchND",
        [](const Scope& s, Output x) {
          return ops::SpaceToBatchND(s, x, {2, 2}, {{0, 0}, {2, 0}});
        },
        S({2, 2, 4, 1})),
    Unary(
        "BatchToSpaceND",
        [](const Scope& s, Output x) {
          return ops::BatchToSpaceND(s, x, {2, 2}, {{0, 0}, {2, 0}});
        },
        S({8, 1, 3, 1})),
    Unary(
        "GatherNd",
        [](const Scope& s, Output x) {
          return ops::GatherNd(s, x, {{0, 1}, {2, 0}, {0, 1}});
        },
        S({3, 2})),
    Unary(
        "ScatterNd",
        [](const Scope& s, Output x) {
          return ops::ScatterNd(s, {{1}, {0}, {1}}, x, {3, 2});
        },
        S({3, 2})),
    {"TensorScatterUpdate", {S({3, 2}), S({2, 2})},
     FN{return {ops::TensorScatterUpdate(s, x[0], {{2}, {0}}, x[1])};
}
}
,
    Binary(
        "Einsum",
        [](const Scope& s, Output a, Output b) {
          return ops::Einsum(s, {a, b}, "ij,jk->ik");
        },
        S({2, 3}), S({3, 2})),
    Binary(
        "Einsum/attention",
        [](const Scope& s, Output a, Output b) {
          return ops::Einsum(s, {a, b}, "aecd,abcd->acbe");
        },
        S({2, 3, 2, 2}), S({2, 2, 2, 2})),
    // i is summed in a alone, j broadcasts over the ellipsis.
    Binary(
        "Einsum/summed_and_broadcast",
        [](const Scope& s, Output a, Output b) {
          return ops::Einsum(s, {a, b}, "...ij,...jk->...k");
        },
        S({2, 1, 2, 3}), S({3, 3, 2})),
    Unary(
        "Einsum/one_input", [](const Scope& s, Output x) { return ops::Einsum(s, {x}, "abc->ca"); },
        S({2, 3, 2})),
    Unary("L2Loss", [](const Scope& s, Output x) { return ops::L2Loss(s, x); }),
    // Two members (on one CPU): each outputs x0 + x1; the gradient is the
    // all-reduce of the members' gradients.
    GradCase{"NcclAllReduce",
             {S({2, 3}), S({2, 3})},
             [](const Scope& s, const std::vector<Output>& x) {
               return std::vector<Output>{ops::NcclAllReduce(s, x[0], "sum", 2, "r"),
                                          ops::NcclAllReduce(s, x[1], "sum", 2, "r")};
             }},
    // Second order: the backprop ops' own gradients.
    Unary(
        "BiasAddGrad", [](const Scope& s, Output x) { return ops::BiasAddGrad(s, x); }, S({2, 3})),
    Unary(
        "BiasAddGrad/NCHW",
        [](const Scope& s, Output x) {
          return ops::BiasAddGrad(s, x, ops::BiasAddGrad::DataFormat("NCHW"));
        },
        S({1, 2, 2, 2})),
    Binary(
        "Relu6Grad",
        [](const Scope& s, Output dy, Output x) {
          return ops::Relu6Grad(s, dy, ops::Mul(s, x, 4.0f));
        },
        S({2, 3}), InputSpec{TensorShape({2, 3}), -2, 2, true}),
    Binary(
        "SoftplusGrad",
        [](const Scope& s, Output dy, Output x) { return ops::SoftplusGrad(s, dy, x); }, S({2, 3}),
        S({2, 3})),
    Binary(
        "SeluGrad",
        [](const Scope& s, Output dy, Output x) { return ops::SeluGrad(s, dy, ops::Selu(s, x)); },
        S({2, 3}), NonZero({2, 3})),
    Binary(
        "LeakyReluGrad",
        [](const Scope& s, Output dy, Output x) {
          return ops::LeakyReluGrad(s, dy, x, ops::LeakyReluGrad::Alpha(0.3f));
        },
        S({2, 3}), NonZero({2, 3})),
    Binary(
        "EluGrad",
        [](const Scope& s, Output dy, Output x) { return ops::EluGrad(s, dy, ops::Elu(s, x)); },
        S({2, 3}), NonZero({2, 3})),
    {"SparseSoftmaxCrossEntropyWithLogits/backprop", {S({2, 3})},
     FN{return {ops::SparseSoftmaxCrossEntropyWithLogits(s, x[0], {2, 0}).backprop};
}
}
, {"MaxPoolGrad", {S({1, 3, 3, 1}), S({1, 2, 2, 1})},
   FN{const std::vector<int64_t> k = {1, 2, 2, 1}, st = {1, 1, 1, 1};
return {ops::MaxPoolGrad(s, x[0], ops::MaxPool(s, x[0], k, st, "VALID"), x[1], k, st, "VALID")};
}
}
, {"MaxPoolGradGrad", {S({1, 3, 3, 1}), S({1, 3, 3, 1})},
   FN{const std::vector<int64_t> k = {1, 2, 2, 1}, st = {1, 1, 1, 1};
return {ops::MaxPoolGradGrad(s, x[0], ops::MaxPool(s, x[0], k, st, "VALID"), x[1], k, st, "VALID")};
}
}
, {"FusedBatchNormGradV3", {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
   FN{auto fbn =
          ops::FusedBatchNormV3(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                ops::Const(s, {0.f, 0.f, 0.f}), ops::Const(s, {1.f, 1.f, 1.f}));
auto g = ops::FusedBatchNormGradV3(s, x[0], x[1], x[2], fbn.reserve_space_1, fbn.reserve_space_2,
                                   fbn.reserve_space_3);
return {g.x_backprop, g.scale_backprop, g.offset_backprop};
}
}
, {"FusedBatchNormGrad/NCHW", {S({2, 3, 2, 1}), S({2, 3, 2, 1}), S({3}, 0.2, 0.6)},
   FN{const auto nchw = ops::FusedBatchNorm::DataFormat("NCHW");
auto fbn =
    ops::FusedBatchNorm(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                        ops::Const(s, {0.f, 0.f, 0.f}), ops::Const(s, {1.f, 1.f, 1.f}), nchw);
auto g = ops::FusedBatchNormGrad(s, x[0], x[1], x[2], fbn.reserve_space_1, fbn.reserve_space_2,
                                 ops::FusedBatchNormGrad::DataFormat("NCHW"));
return {g.x_backprop, g.scale_backprop, g.offset_backprop};
}
}
, {"FusedBatchNormGradV3/inference", {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
   FN{auto g = ops::FusedBatchNormGradV3(
          s, x[0], x[1], x[2], ops::Const(s, {0.1f, -0.2f, 0.3f}), ops::Const(s, {1.f, 0.5f, 2.f}),
          ops::Const(s, {0.f, 0.f, 0.f}), ops::FusedBatchNormGradV3::IsTraining(false));
return {g.x_backprop, g.scale_backprop, g.offset_backprop};
}
}
,
}
;
// Double precision for the linear ops (truncation error vanishes, so
// TF's 1e-10 bound applies).
for (const char* linear : {"Add", "MatMul", "Conv2D", "Transpose", "Sum", "Tile", "Pad"}) {
  for (const GradCase& g : std::vector<GradCase>(c)) {
    if (g.name == linear) c.push_back(Double(g));
  }
}
// Run-time shape paths (no static shapes).
for (const char* name :
     {"Add", "Sub", "Sum", "Mean", "Max", "Reshape", "ConcatV2", "BiasAdd", "BatchMatMulV2",
      "GatherV2", "GatherV2/axis1", "BroadcastTo", "Prod", "Prod/two_axes_keep_dims"}) {
  for (const GradCase& g : std::vector<GradCase>(c)) {
    if (g.name == name) c.push_back(Dynamic(g));
  }
}
return c;
}

class GradientFunctionTest : public ::testing::TestWithParam<GradCase> {};

template <typename T>
absl::StatusOr<double> Check(const GradCase& c) {
  Scope s = Scope::NewRootScope();
  std::vector<Output> xs;
  std::vector<Tensor> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputSpec& in = c.inputs[i];
    PartialTensorShape shape = c.dynamic_shapes
                                   ? PartialTensorShape()
                                   : *PartialTensorShape::FromDims(in.shape.dim_sizes());
    xs.push_back(ops::Placeholder(s, DataTypeToEnum<T>::value, ops::Placeholder::Shape(shape)));
    values.push_back(Values<T>(in, 17 + i));
  }
  std::vector<Output> ys = c.build(s, xs);
  if (!s.ok()) return s.status();
  return ComputeGradientError<T>(s, xs, values, ys);
}

TEST_P(GradientFunctionTest, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  if (c.dtype == DT_DOUBLE) {
    absl::StatusOr<double> err = Check<double>(c);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-10);
  } else {
    absl::StatusOr<double> err = Check<float>(c);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, GradientFunctionTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(GradientCoverageTest, EveryRegisteredGradientHasACase) {
  std::set<std::string> covered;
  for (const GradCase& c : Cases()) covered.insert(c.name.substr(0, c.name.find('/')));
  // Checked with variables in ops/gradients_test.cc (they take a handle).
  covered.insert("ReadVariableOp");
  covered.insert("ResourceGather");
  // Its gradient is an error by design (gradients_test.cc).
  covered.insert("PreventGradient");
  // Control flow: Cond's Switch and Merge (and their Ref forms, the same
  // functions) against finite differences in ops/control_flow_test.cc, where
  // the while loop's refusal is checked too.
  for (const char* op : {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                         "RefExit", "NextIteration", "RefNextIteration"}) {
    covered.insert(op);
  }
  // Function calls refuse too (runtime/function_test.cc checks it).
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf", "Case",
                         "StatelessCase", "While", "StatelessWhile"}) {
    covered.insert(op);
  }
  std::vector<std::string> missing;
  for (const std::string& op : GradientRegistry::Global()->Ops(/*with_gradient=*/true)) {
    if (!covered.count(op)) missing.push_back(op);
  }
  EXPECT_THAT(missing, ::testing::IsEmpty());
}

}  // namespace
}  // namespace towerflow
