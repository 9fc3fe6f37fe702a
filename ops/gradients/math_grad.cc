// Gradients of the elementwise, reduction and matrix ops. Notation: the
// forward op computes z = f(x, y) (or y = f(x)); g is dL/dz (dL/dy); each
// function returns dL/d(input) for every input.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/einsum.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/scan_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;
using GradOutputs = std::vector<Output>;

// Returns dx, dy after summing each down to its input's shape (broadcasting).
absl::Status BinaryResult(const Scope& scope, const Operation& op, const Output& gx,
                          const Output& gy, std::vector<Output>* grad_outputs) {
  const Output x = In(op, 0), y = In(op, 1);
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, gx, x, y));
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, gy, y, x));
  return scope.status();
}

// ---------------------------------------------------------------- unary

// dx = -g
TW_GRAD_FN(NegGrad) {
  grad_outputs->push_back(ops::Neg(scope, grad_inputs[0]));
  return scope.status();
}
// dx = g * sign(x)
TW_GRAD_FN(AbsGrad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Sign(scope, In(op, 0))));
  return scope.status();
}
// dx = g * 2x
TW_GRAD_FN(SquareGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0],
               ops::Mul(scope, grad_util::ConjIfComplex(scope, In(op, 0)), Input(2.0))));
  return scope.status();
}
// y = sqrt(x): dx = g * 0.5 / y
TW_GRAD_FN(SqrtGrad) {
  grad_outputs->push_back(ops::SqrtGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
// y = x^-1/2: dx = g * -0.5 * y^3
TW_GRAD_FN(RsqrtGrad) {
  grad_outputs->push_back(ops::RsqrtGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
// y = e^x: dx = g * y
TW_GRAD_FN(ExpGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], grad_util::ConjIfComplex(scope, op.output(0))));
  return scope.status();
}
// y = e^x - 1: dx = g * (y + 1)
TW_GRAD_FN(Expm1Grad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Exp(scope, In(op, 0))));
  return scope.status();
}
// dx = g / x
TW_GRAD_FN(LogGrad) {
  grad_outputs->push_back(ops::Mul(
      scope, grad_inputs[0], ops::Reciprocal(scope, grad_util::ConjIfComplex(scope, In(op, 0)))));
  return scope.status();
}
// dx = g / (1 + x)
TW_GRAD_FN(Log1pGrad) {
  grad_outputs->push_back(
      ops::RealDiv(scope, grad_inputs[0], ops::Add(scope, In(op, 0), Input(1.0))));
  return scope.status();
}
// y = erf(x): dx = g * 2 / sqrt(pi) * exp(-x^2)
TW_GRAD_FN(ErfGrad) {
  const Output x = In(op, 0);
  const Output two_over_sqrt_pi = ops::Cast(scope, ops::Const(scope, 1.1283791670955126), x.type());
  grad_outputs->push_back(ops::Mul(
      scope, grad_inputs[0],
      ops::Mul(scope, two_over_sqrt_pi, ops::Exp(scope, ops::Neg(scope, ops::Square(scope, x))))));
  return scope.status();
}
// y = sigmoid(x): dx = g * y * (1 - y)
TW_GRAD_FN(SigmoidGrad) {
  grad_outputs->push_back(ops::SigmoidGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
// y = tanh(x): dx = g * (1 - y^2)
TW_GRAD_FN(TanhGrad) {
  grad_outputs->push_back(ops::TanhGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
// y = 1/x: dx = -g * y^2
TW_GRAD_FN(ReciprocalGrad) {
  grad_outputs->push_back(ops::ReciprocalGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
// dx = g * cos(x)
TW_GRAD_FN(SinGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Cos(scope, grad_util::ConjIfComplex(scope, In(op, 0)))));
  return scope.status();
}
// dx = -g * sin(x)
TW_GRAD_FN(CosGrad) {
  grad_outputs->push_back(
      ops::Neg(scope, ops::Mul(scope, grad_inputs[0],
                               ops::Sin(scope, grad_util::ConjIfComplex(scope, In(op, 0))))));
  return scope.status();
}
// The inverse and hyperbolic trigonometric functions, as TF's math_grad.py
// writes them.
// tan: dx = g / cos(x)^2
TW_GRAD_FN(TanGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0],
               ops::Square(scope, ops::Reciprocal(scope, ops::Cos(scope, In(op, 0))))));
  return scope.status();
}
// 1 / sqrt(1 - x^2), the derivative of asin (and minus acos's).
Output InverseSqrtOneMinusSquare(const Scope& scope, const Output& x) {
  return ops::Reciprocal(
      scope, ops::Sqrt(scope, ops::Sub(scope, ops::OnesLike(scope, x), ops::Square(scope, x))));
}
TW_GRAD_FN(AsinGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], InverseSqrtOneMinusSquare(scope, In(op, 0))));
  return scope.status();
}
TW_GRAD_FN(AcosGrad) {
  grad_outputs->push_back(ops::Neg(
      scope, ops::Mul(scope, grad_inputs[0], InverseSqrtOneMinusSquare(scope, In(op, 0)))));
  return scope.status();
}
// atan: dx = g / (1 + x^2)
TW_GRAD_FN(AtanGrad) {
  const Output x = In(op, 0);
  grad_outputs->push_back(ops::Mul(
      scope, grad_inputs[0],
      ops::Reciprocal(scope, ops::AddV2(scope, ops::OnesLike(scope, x), ops::Square(scope, x)))));
  return scope.status();
}
TW_GRAD_FN(SinhGrad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Cosh(scope, In(op, 0))));
  return scope.status();
}
TW_GRAD_FN(CoshGrad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Sinh(scope, In(op, 0))));
  return scope.status();
}
// asinh: dx = g / cosh(y); acosh: dx = g / sinh(y), y the op's output.
TW_GRAD_FN(AsinhGrad) {
  grad_outputs->push_back(ops::Div(scope, grad_inputs[0], ops::Cosh(scope, op.output(0))));
  return scope.status();
}
TW_GRAD_FN(AcoshGrad) {
  grad_outputs->push_back(ops::Div(scope, grad_inputs[0], ops::Sinh(scope, op.output(0))));
  return scope.status();
}
// atanh: dx = g / (1 - x^2)
TW_GRAD_FN(AtanhGrad) {
  const Output x = In(op, 0);
  grad_outputs->push_back(ops::Mul(
      scope, grad_inputs[0],
      ops::Reciprocal(scope, ops::Sub(scope, ops::OnesLike(scope, x), ops::Square(scope, x)))));
  return scope.status();
}
// erfc: dx = -2 / sqrt(pi) * exp(-x^2) * g
TW_GRAD_FN(ErfcGrad) {
  const Output x = In(op, 0);
  const Output scale = ops::Cast(scope, ops::Const(scope, -1.1283791670955126), x.type());
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0],
               ops::Mul(scope, scale, ops::Exp(scope, ops::Neg(scope, ops::Square(scope, x))))));
  return scope.status();
}
// sign is flat almost everywhere: dx = 0
TW_GRAD_FN(SignGrad) {
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  return scope.status();
}

// Second order, for the *Grad ops above: z = h(y, dy).
// z = dy * (1 - y^2): dz/dy = -2 y dy; dz/d(dy) = 1 - y^2
TW_GRAD_FN(TanhGradGrad) {
  const Output y = In(op, 0), dy = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(ops::Mul(scope, g, ops::Mul(scope, ops::Mul(scope, y, dy), Input(-2.0))));
  grad_outputs->push_back(ops::TanhGrad(scope, y, g));
  return scope.status();
}
// z = dy * y * (1 - y): dz/dy = dy * (1 - 2y); dz/d(dy) = y (1 - y)
TW_GRAD_FN(SigmoidGradGrad) {
  const Output y = In(op, 0), dy = In(op, 1), g = grad_inputs[0];
  Output one_minus_2y = ops::Add(scope, ops::Mul(scope, y, Input(-2.0)), Input(1.0));
  grad_outputs->push_back(ops::Mul(scope, g, ops::Mul(scope, dy, one_minus_2y)));
  grad_outputs->push_back(ops::SigmoidGrad(scope, y, g));
  return scope.status();
}
// z = -dy * y^2: dz/dy = -2 y dy; dz/d(dy) = -y^2
TW_GRAD_FN(ReciprocalGradGrad) {
  const Output y = In(op, 0), dy = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(ops::Mul(scope, g, ops::Mul(scope, ops::Mul(scope, y, dy), Input(-2.0))));
  grad_outputs->push_back(ops::ReciprocalGrad(scope, y, g));
  return scope.status();
}
// z = 0.5 dy / y: dz/dy = -z / y; dz/d(dy) = 0.5 / y
TW_GRAD_FN(SqrtGradGrad) {
  const Output y = In(op, 0), g = grad_inputs[0];
  grad_outputs->push_back(
      ops::Neg(scope, ops::Mul(scope, g, ops::RealDiv(scope, op.output(0), y))));
  grad_outputs->push_back(ops::SqrtGrad(scope, y, g));
  return scope.status();
}
// z = -0.5 dy y^3: dz/dy = -1.5 dy y^2; dz/d(dy) = -0.5 y^3
TW_GRAD_FN(RsqrtGradGrad) {
  const Output y = In(op, 0), dy = In(op, 1), g = grad_inputs[0];
  Output d = ops::Mul(scope, ops::Mul(scope, dy, ops::Square(scope, y)), Input(-1.5));
  grad_outputs->push_back(ops::Mul(scope, g, d));
  grad_outputs->push_back(ops::RsqrtGrad(scope, y, g));
  return scope.status();
}

// ---------------------------------------------------------------- binary

// z = x + y: dx = g, dy = g
TW_GRAD_FN(AddGrad) {
  return BinaryResult(scope, op, grad_inputs[0], grad_inputs[0], grad_outputs);
}
// z = x - y: dx = g, dy = -g
TW_GRAD_FN(SubGrad) {
  return BinaryResult(scope, op, grad_inputs[0], ops::Neg(scope, grad_inputs[0]), grad_outputs);
}
// z = x * y: dx = g y, dy = x g (conjugated for complex numbers, as TF)
TW_GRAD_FN(MulGrad) {
  const Output g = grad_inputs[0];
  return BinaryResult(scope, op, ops::Mul(scope, g, grad_util::ConjIfComplex(scope, In(op, 1))),
                      ops::Mul(scope, grad_util::ConjIfComplex(scope, In(op, 0)), g), grad_outputs);
}
// z = x / y: dx = g / y, dy = -g x / y^2 (x, y conjugated for complex)
TW_GRAD_FN(DivGrad) {
  const Output g = grad_inputs[0], x = grad_util::ConjIfComplex(scope, In(op, 0)),
               y = grad_util::ConjIfComplex(scope, In(op, 1));
  Output dy =
      ops::Mul(scope, g, ops::RealDiv(scope, ops::RealDiv(scope, ops::Neg(scope, x), y), y));
  return BinaryResult(scope, op, ops::RealDiv(scope, g, y), dy, grad_outputs);
}
// z = x / y or 0 where y is 0: dx = g / y, dy = -g x / y^2, each 0 where
// y is 0 (TF's _DivNoNanGrad).
TW_GRAD_FN(DivNoNanGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  Output dy =
      ops::Mul(scope, g, ops::DivNoNan(scope, ops::DivNoNan(scope, ops::Neg(scope, x), y), y));
  return BinaryResult(scope, op, ops::DivNoNan(scope, g, y), dy, grad_outputs);
}
// z = x * y, or 0 where y is 0: dx = g * y, dy = x * g, each through
// MulNoNan (TF's _MulNoNanGrad), so a zero y keeps NaNs out of both.
TW_GRAD_FN(MulNoNanGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  return BinaryResult(scope, op, ops::MulNoNan(scope, g, y), ops::MulNoNan(scope, x, g),
                      grad_outputs);
}
// The x-is-0 products (TF's _XLogyGrad, _XLog1pyGrad, _XDivyGrad): dx is
// the same product of (x != 0) instead of x, dy = g * xdivy(x, ...), both
// 0 where x is 0.
Output NonZero(const Scope& scope, const Output& x) {
  return ops::Cast(scope, ops::NotEqual(scope, x, ops::ZerosLike(scope, x)), x.type());
}
TW_GRAD_FN(XlogyGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  return BinaryResult(scope, op, ops::Mul(scope, g, ops::Xlogy(scope, NonZero(scope, x), y)),
                      ops::Mul(scope, g, ops::Xdivy(scope, x, y)), grad_outputs);
}
TW_GRAD_FN(Xlog1pyGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  const Output one = ops::Cast(scope, ops::Const(scope, 1), y.type());
  return BinaryResult(scope, op, ops::Mul(scope, g, ops::Xlog1py(scope, NonZero(scope, x), y)),
                      ops::Mul(scope, g, ops::Xdivy(scope, x, ops::AddV2(scope, y, one))),
                      grad_outputs);
}
// z = x / y or 0 where x is 0: dx = xdivy(x != 0, y), dy = xdivy(-x, y^2).
TW_GRAD_FN(XdivyGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  return BinaryResult(
      scope, op, ops::Mul(scope, g, ops::Xdivy(scope, NonZero(scope, x), y)),
      ops::Mul(scope, g, ops::Xdivy(scope, ops::Neg(scope, x), ops::Square(scope, y))),
      grad_outputs);
}
// y = clip_by_value(t, lo, hi) (TF's _clip_by_value_grad): t's gradient
// where lo <= t <= hi, lo's where t < lo, hi's where t > hi, each bound's
// summed to its shape.
TW_GRAD_FN(ClipByValueGrad) {
  const Output g = grad_inputs[0], t = In(op, 0), lo = In(op, 1), hi = In(op, 2);
  const Output zeros = ops::ZerosLike(scope, g);
  const Output below = ops::Less(scope, t, lo), above = ops::Greater(scope, t, hi);
  grad_outputs->push_back(ops::SelectV2(scope, ops::LogicalOr(scope, below, above), zeros, g));
  grad_outputs->push_back(
      grad_util::SumToShapeOf(scope, ops::SelectV2(scope, below, g, zeros), lo, t));
  grad_outputs->push_back(
      grad_util::SumToShapeOf(scope, ops::SelectV2(scope, above, g, zeros), hi, t));
  return scope.status();
}
// z = x - floor(x / y) y: dx = g, dy = -g floor(x / y) (TF's _FloorModGrad).
TW_GRAD_FN(FloorModGrad) {
  const Output g = grad_inputs[0];
  Output dy = ops::Mul(scope, g, ops::Neg(scope, ops::FloorDiv(scope, In(op, 0), In(op, 1))));
  return BinaryResult(scope, op, g, dy, grad_outputs);
}
// z = max(x, y) (min): the gradient goes to x where x >= y (x <= y), else
// to y; ties go to x, as TensorFlow.
absl::Status MaxMinGrad(const Scope& scope, const Operation& op, const Output& g, bool is_max,
                        std::vector<Output>* grad_outputs) {
  const Output x = In(op, 0), y = In(op, 1);
  Output xmask =
      is_max ? Output(ops::GreaterEqual(scope, x, y)) : Output(ops::LessEqual(scope, x, y));
  Output zeros = ops::ZerosLike(scope, g);
  return BinaryResult(scope, op, ops::SelectV2(scope, xmask, g, zeros),
                      ops::SelectV2(scope, xmask, zeros, g), grad_outputs);
}
TW_GRAD_FN(MaximumGrad) { return MaxMinGrad(scope, op, grad_inputs[0], true, grad_outputs); }
TW_GRAD_FN(MinimumGrad) { return MaxMinGrad(scope, op, grad_inputs[0], false, grad_outputs); }
// z = x^y: dx = g y x^(y-1); dy = g z log(x) where x > 0, else 0
TW_GRAD_FN(PowGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1), z = op.output(0);
  Output dx =
      ops::Mul(scope, g, ops::Mul(scope, y, ops::Pow(scope, x, ops::Sub(scope, y, Input(1.0)))));
  Output positive = ops::Greater(scope, x, ops::ZerosLike(scope, x));
  Output safe_x = ops::SelectV2(scope, positive, x, ops::OnesLike(scope, x));
  Output log_x = ops::SelectV2(scope, positive, ops::Log(scope, safe_x), ops::ZerosLike(scope, x));
  Output dy = ops::Mul(scope, g, ops::Mul(scope, z, log_x));
  return BinaryResult(scope, op, dx, dy, grad_outputs);
}
// z = atan2(y, x): dy = g x / (x^2 + y^2), dx = -g y / (x^2 + y^2)
TW_GRAD_FN(Atan2Grad) {
  const Output g = grad_inputs[0], y = In(op, 0), x = In(op, 1);
  const Output inverse =
      ops::Reciprocal(scope, ops::AddV2(scope, ops::Square(scope, x), ops::Square(scope, y)));
  const Output gi = ops::Mul(scope, g, inverse);
  return BinaryResult(scope, op, ops::Mul(scope, gi, x), ops::Neg(scope, ops::Mul(scope, gi, y)),
                      grad_outputs);
}
// z = (x - y)^2: dx = 2 g (x - y), dy = -dx
TW_GRAD_FN(SquaredDifferenceGrad) {
  const Output g = grad_inputs[0];
  Output dx =
      ops::Mul(scope, g, ops::Mul(scope, ops::Sub(scope, In(op, 0), In(op, 1)), Input(2.0)));
  return BinaryResult(scope, op, dx, ops::Neg(scope, dx), grad_outputs);
}
// z = sum_i x_i: dx_i = g
TW_GRAD_FN(AddNGrad) {
  grad_outputs->assign(op.num_inputs(), grad_inputs[0]);
  return scope.status();
}
// z = select(c, t, e): dc none; dt = g where c; de = g where !c.
TW_GRAD_FN(SelectGrad) {
  const Output c = In(op, 0), g = grad_inputs[0];
  Output zeros = ops::ZerosLike(scope, g);
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::Select(scope, c, g, zeros));
  grad_outputs->push_back(ops::Select(scope, c, zeros, g));
  return scope.status();
}
TW_GRAD_FN(SelectV2Grad) {
  const Output c = In(op, 0), g = grad_inputs[0];
  Output zeros = ops::ZerosLike(scope, g);
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      grad_util::SumToShapeOf(scope, ops::SelectV2(scope, c, g, zeros), In(op, 1), In(op, 2)));
  grad_outputs->push_back(
      grad_util::SumToShapeOf(scope, ops::SelectV2(scope, c, zeros, g), In(op, 2), In(op, 1)));
  return scope.status();
}
// y = cast(x): dx = cast(g) back, between floating types only.
TW_GRAD_FN(CastGrad) {
  const DataType src = op.node()->input_type(0), dst = op.output_type(0);
  auto is_float = [](DataType t) {
    return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
  };
  if (is_float(src) && is_float(dst)) {
    grad_outputs->push_back(ops::Cast(scope, grad_inputs[0], src));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  return scope.status();
}

// ---------------------------------------------------------------- reductions

// y = sum(x, axes): dx = g broadcast back over the reduced axes.
TW_GRAD_FN(SumGrad) {
  grad_outputs->push_back(grad_util::BroadcastReduced(scope, grad_inputs[0], In(op, 0), In(op, 1)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = mean(x, axes): dx = g broadcast back / (size(x) / size(y)).
TW_GRAD_FN(MeanGrad) {
  const Output x = In(op, 0);
  Output dx = grad_util::BroadcastReduced(scope, grad_inputs[0], x, In(op, 1));
  const DataType t = x.type();
  Output count;
  if (x.shape().IsFullyDefined() && op.output(0).shape().IsFullyDefined()) {
    const int64_t out = std::max<int64_t>(op.output(0).shape().num_elements(), 1);
    count =
        ops::Cast(scope, ops::Const(scope, static_cast<double>(x.shape().num_elements() / out)), t);
  } else {
    Output n_in = ops::Cast(scope, ops::Size(scope, x), t);
    Output n_out = ops::Cast(scope, ops::Size(scope, op.output(0)), t);
    count = ops::Maximum(scope, ops::RealDiv(scope, n_in, n_out), ops::OnesLike(scope, n_in));
  }
  grad_outputs->push_back(ops::RealDiv(scope, dx, count));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = max(x, axes) (min): g is shared equally by the elements equal to y.
TW_GRAD_FN(MaxOrMinGrad) {
  const Output x = In(op, 0), axes = In(op, 1);
  Output y = grad_util::BroadcastReduced(scope, op.output(0), x, axes);
  Output indicators = ops::Cast(scope, ops::Equal(scope, x, y), x.type());
  Output count = ops::Sum(scope, indicators, axes, ops::Sum::KeepDims(true));
  Output g = grad_util::BroadcastReduced(scope, grad_inputs[0], x, axes);
  grad_outputs->push_back(ops::RealDiv(scope, ops::Mul(scope, g, indicators), count));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = sqrt(sum(|x|^2, axes)): dx = x g / y (TF's x / (y / g)), broadcast
// back over the reduced axes.
TW_GRAD_FN(EuclideanNormGrad) {
  const Output x = In(op, 0), axes = In(op, 1);
  const Output y = grad_util::BroadcastReduced(scope, op.output(0), x, axes);
  const Output g = grad_util::BroadcastReduced(scope, grad_inputs[0], x, axes);
  grad_outputs->push_back(ops::Div(scope, x, ops::Div(scope, y, g)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// w = cross(u, v): du = cross(v, g), dv = cross(g, u).
TW_GRAD_FN(CrossGrad) {
  const Output u = In(op, 0), v = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(ops::Cross(scope, v, g));
  grad_outputs->push_back(ops::Cross(scope, g, u));
  return scope.status();
}

// y = prod(x, axes): dx_i = g * prod_{j != i} x_j over i's reduced slice.
// Dividing y by x_i fails at zeros, so (TF's way) the reduced axes are
// moved to the front and x viewed as [reduced, other]; the product of the
// others is the exclusive cumulative product from the left times the one
// from the right. Works for run-time axes and shapes.
TW_GRAD_FN(ProdGrad) {
  const Output x = In(op, 0);
  const Output g = grad_util::BroadcastReduced(scope, grad_inputs[0], x, In(op, 1));
  const Output shape = ops::Shape(scope, x);
  const Output rank = ops::Rank(scope, x);
  Output reduced = grad_util::CanonicalAxes(scope, ops::Reshape(scope, In(op, 1), {-1}), rank);
  Output other = ops::ListDiff(scope, ops::Range(scope, 0, rank, 1), reduced).out;
  Output perm = ops::ConcatV2(scope, {reduced, other}, 0);
  Output reduced_num = ops::Prod(scope, ops::GatherV2(scope, shape, reduced, 0), 0);
  Output other_num = ops::Prod(scope, ops::GatherV2(scope, shape, other, 0), 0);
  Output permuted = ops::Transpose(scope, x, perm);
  Output matrix = ops::Reshape(scope, permuted, ops::Pack(scope, {reduced_num, other_num}));
  Output left = ops::Cumprod(scope, matrix, 0, ops::Cumprod::Exclusive(true));
  Output right = ops::Cumprod(scope, matrix, 0, ops::Cumprod::Exclusive(true).Reverse(true));
  Output others = ops::Reshape(scope, ops::Mul(scope, left, right), ops::Shape(scope, permuted));
  grad_outputs->push_back(
      ops::Mul(scope, g, ops::Transpose(scope, others, ops::InvertPermutation(scope, perm))));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// ---------------------------------------------------------------- scans

// y = cumsum(x) (exclusive / reverse): each x_i feeds the y_j on its
// "after" side, so dx = cumsum(g) run the other way with the same
// exclusivity.
TW_GRAD_FN(CumsumGrad) {
  const bool exclusive = grad_util::Attr<bool>(scope, op, "exclusive");
  const bool reverse = grad_util::Attr<bool>(scope, op, "reverse");
  grad_outputs->push_back(ops::Cumsum(scope, grad_inputs[0], In(op, 1),
                                      ops::Cumsum::Exclusive(exclusive).Reverse(!reverse)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = cumprod(x): dy_j/dx_i = y_j / x_i for the j that x_i feeds, so
// dx = cumsum(g y) the other way / x. As TF, this divides by x: a zero in
// x gives inf/NaN there (Prod's gradient above does not).
// TF's: the incoming gradient split by sign so that each part's log
// exists, each summed in log space against the forward output.
TW_GRAD_FN(CumulativeLogsumexpGrad) {
  const bool exclusive = grad_util::Attr<bool>(scope, op, "exclusive");
  const bool reverse = grad_util::Attr<bool>(scope, op, "reverse");
  const Output x = In(op, 0);
  const Output g = grad_inputs[0];
  const Output lowest = ops::Cast(scope, std::numeric_limits<float>::lowest(), x.type());
  const Output zero = ops::ZerosLike(scope, g);
  const auto part = [&](const Output& log_grad) {
    const Output sums =
        ops::CumulativeLogsumexp(scope, ops::Sub(scope, log_grad, op.output(0)), In(op, 1),
                                 ops::CumulativeLogsumexp::Exclusive(exclusive).Reverse(!reverse));
    return ops::Exp(scope, ops::Add(scope, sums, x));
  };
  const Output positive =
      part(ops::SelectV2(scope, ops::Greater(scope, g, zero), ops::Log(scope, g), lowest));
  const Output negative = part(
      ops::SelectV2(scope, ops::Less(scope, g, zero), ops::Log(scope, ops::Neg(scope, g)), lowest));
  *grad_outputs = {ops::Sub(scope, positive, negative), NoGradient()};
  return scope.status();
}

TW_GRAD_FN(CumprodGrad) {
  const bool exclusive = grad_util::Attr<bool>(scope, op, "exclusive");
  const bool reverse = grad_util::Attr<bool>(scope, op, "reverse");
  Output sums = ops::Cumsum(scope, ops::Mul(scope, op.output(0), grad_inputs[0]), In(op, 1),
                            ops::Cumsum::Exclusive(exclusive).Reverse(!reverse));
  grad_outputs->push_back(ops::RealDiv(scope, sums, In(op, 0)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// ---------------------------------------------------------------- matrices

// Z = op(A) op(B), op = optional transpose. For Z = A B:
// dA = G B^T, dB = A^T G; the transposed cases move the transposes around
// (TensorFlow's _MatMulGrad table).
absl::Status MatMulGradCommon(const Scope& scope, const Output& a, bool ta, const Output& b,
                              bool tb, const Output& g, bool batch, GradOutputs* out) {
  auto mm = [&](const Output& x, bool tx, const Output& y, bool ty) -> Output {
    if (batch) return ops::BatchMatMulV2(scope, x, y, ops::BatchMatMulV2::AdjX(tx).AdjY(ty));
    return ops::MatMul(scope, x, y, ops::MatMul::TransposeA(tx).TransposeB(ty));
  };
  if (!ta && !tb) {
    out->push_back(mm(g, false, b, true));
    out->push_back(mm(a, true, g, false));
  } else if (!ta && tb) {
    out->push_back(mm(g, false, b, false));
    out->push_back(mm(g, true, a, false));
  } else if (ta && !tb) {
    out->push_back(mm(b, false, g, true));
    out->push_back(mm(a, false, g, false));
  } else {
    out->push_back(mm(b, true, g, true));
    out->push_back(mm(g, true, a, true));
  }
  return scope.status();
}
TW_GRAD_FN(MatMulGrad) {
  return MatMulGradCommon(scope, In(op, 0), grad_util::Attr<bool>(scope, op, "transpose_a"),
                          In(op, 1), grad_util::Attr<bool>(scope, op, "transpose_b"),
                          grad_inputs[0], false, grad_outputs);
}
// Batch dims broadcast (V2): each gradient is summed back to its input.
TW_GRAD_FN(BatchMatMulGrad) {
  const Output x = In(op, 0), y = In(op, 1);
  GradOutputs raw;
  TW_RETURN_IF_ERROR(MatMulGradCommon(scope, x, grad_util::Attr<bool>(scope, op, "adj_x"), y,
                                      grad_util::Attr<bool>(scope, op, "adj_y"), grad_inputs[0],
                                      true, &raw));
  if (op.node()->IsOp("BatchMatMul")) {
    *grad_outputs = raw;
    return scope.status();
  }
  // raw[i] has the broadcast batch dims and x's (y's) matrix dims.
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, raw[0], x, raw[0]));
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, raw[1], y, raw[1]));
  return scope.status();
}

TW_REGISTER_GRADIENT("Neg", NegGrad);
TW_REGISTER_GRADIENT("Abs", AbsGrad);
TW_REGISTER_GRADIENT("Square", SquareGrad);
TW_REGISTER_GRADIENT("Sqrt", SqrtGrad);
TW_REGISTER_GRADIENT("Rsqrt", RsqrtGrad);
TW_REGISTER_GRADIENT("Exp", ExpGrad);
TW_REGISTER_GRADIENT("Expm1", Expm1Grad);
TW_REGISTER_GRADIENT("Log", LogGrad);
TW_REGISTER_GRADIENT("Log1p", Log1pGrad);
TW_REGISTER_GRADIENT("Erf", ErfGrad);
TW_REGISTER_GRADIENT("Sigmoid", SigmoidGrad);
TW_REGISTER_GRADIENT("Tanh", TanhGrad);
TW_REGISTER_GRADIENT("Reciprocal", ReciprocalGrad);
TW_REGISTER_GRADIENT("Inv", ReciprocalGrad);
TW_REGISTER_GRADIENT("Sin", SinGrad);
TW_REGISTER_GRADIENT("Cos", CosGrad);
TW_REGISTER_GRADIENT("Tan", TanGrad);
TW_REGISTER_GRADIENT("Asin", AsinGrad);
TW_REGISTER_GRADIENT("Acos", AcosGrad);
TW_REGISTER_GRADIENT("Atan", AtanGrad);
TW_REGISTER_GRADIENT("Sinh", SinhGrad);
TW_REGISTER_GRADIENT("Cosh", CoshGrad);
TW_REGISTER_GRADIENT("Asinh", AsinhGrad);
TW_REGISTER_GRADIENT("Acosh", AcoshGrad);
TW_REGISTER_GRADIENT("Atanh", AtanhGrad);
TW_REGISTER_GRADIENT("Erfc", ErfcGrad);
TW_REGISTER_GRADIENT("Atan2", Atan2Grad);
TW_REGISTER_GRADIENT("Sign", SignGrad);
TW_REGISTER_GRADIENT("TanhGrad", TanhGradGrad);
TW_REGISTER_GRADIENT("SigmoidGrad", SigmoidGradGrad);
TW_REGISTER_GRADIENT("ReciprocalGrad", ReciprocalGradGrad);
TW_REGISTER_GRADIENT("InvGrad", ReciprocalGradGrad);
TW_REGISTER_GRADIENT("SqrtGrad", SqrtGradGrad);
TW_REGISTER_GRADIENT("RsqrtGrad", RsqrtGradGrad);
TW_REGISTER_GRADIENT("Add", AddGrad);
TW_REGISTER_GRADIENT("AddV2", AddGrad);
TW_REGISTER_GRADIENT("Sub", SubGrad);
TW_REGISTER_GRADIENT("Mul", MulGrad);
TW_REGISTER_GRADIENT("RealDiv", DivGrad);
TW_REGISTER_GRADIENT("Div", DivGrad);
TW_REGISTER_GRADIENT("DivNoNan", DivNoNanGrad);
TW_REGISTER_GRADIENT("MulNoNan", MulNoNanGrad);
TW_REGISTER_GRADIENT("ClipByValue", ClipByValueGrad);
TW_REGISTER_GRADIENT("Xlogy", XlogyGrad);
TW_REGISTER_GRADIENT("Xlog1py", Xlog1pyGrad);
TW_REGISTER_GRADIENT("Xdivy", XdivyGrad);
TW_REGISTER_GRADIENT("FloorMod", FloorModGrad);
TW_REGISTER_GRADIENT("Maximum", MaximumGrad);
TW_REGISTER_GRADIENT("Minimum", MinimumGrad);
TW_REGISTER_GRADIENT("Pow", PowGrad);
TW_REGISTER_GRADIENT("SquaredDifference", SquaredDifferenceGrad);
TW_REGISTER_GRADIENT("AddN", AddNGrad);
TW_REGISTER_GRADIENT("AccumulateNV2", AddNGrad);
TW_REGISTER_GRADIENT("Select", SelectGrad);
TW_REGISTER_GRADIENT("SelectV2", SelectV2Grad);
TW_REGISTER_GRADIENT("Cast", CastGrad);
TW_REGISTER_GRADIENT("Sum", SumGrad);
TW_REGISTER_GRADIENT("Mean", MeanGrad);
TW_REGISTER_GRADIENT("EuclideanNorm", EuclideanNormGrad);
TW_REGISTER_GRADIENT("Cross", CrossGrad);
TW_REGISTER_GRADIENT("Max", MaxOrMinGrad);
TW_REGISTER_GRADIENT("Min", MaxOrMinGrad);
TW_REGISTER_GRADIENT("Prod", ProdGrad);
TW_REGISTER_GRADIENT("Cumsum", CumsumGrad);
TW_REGISTER_GRADIENT("Cumprod", CumprodGrad);
TW_REGISTER_GRADIENT("CumulativeLogsumexp", CumulativeLogsumexpGrad);
TW_REGISTER_GRADIENT("MatMul", MatMulGrad);
// z = einsum(x[, y]) is linear in each input: dx = einsum(g[, y]) onto x's
// labels, as TF does. Labels x sums away alone (in neither z nor y) cannot
// be an output of that einsum: they come back as size-1 dims broadcast to
// x's size. Ellipsis dims x broadcast (size 1 against n) are summed back to
// 1. The inputs' ranks must be known to resolve an ellipsis. A diagonal
// input gets its gradient on the diagonal, zeros elsewhere (TF's too).
TW_GRAD_FN(EinsumGrad) {
  const std::string equation = grad_util::Attr<std::string>(scope, op, "equation");
  const int num = op.num_inputs();
  TW_ASSIGN_OR_RETURN(EinsumEquation eq, ParseEinsum(equation, num));
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < num; ++i) {
    const PartialTensorShape& shape = In(op, i).shape();
    if (shape.unknown_rank()) {
      return absl::UnimplementedError(
          absl::StrCat("Gradient of Einsum node '", op.name(), "' needs its inputs' ranks"));
    }
    dims.emplace_back(shape.dim_sizes().begin(), shape.dim_sizes().end());
  }
  TW_ASSIGN_OR_RETURN(EinsumDims r, ResolveEinsum(eq, dims));
  const auto contains = [](const std::vector<int>& v, int label) {
    return std::find(v.begin(), v.end(), label) != v.end();
  };
  for (int i = 0; i < num; ++i) {
    const Output x = In(op, i);
    // A label x repeats (a diagonal) is one label of x' = x's diagonal:
    // the gradient is found for x' (its dims: x's first dim of each label),
    // then written onto the diagonal by an einsum that repeats the label.
    const std::vector<int>& all_labels = r.inputs[i];
    std::vector<int> labels;
    std::vector<int32_t> first_dims;
    for (size_t d = 0; d < all_labels.size(); ++d) {
      if (contains(labels, all_labels[d])) continue;
      labels.push_back(all_labels[d]);
      first_dims.push_back(static_cast<int32_t>(d));
    }
    const bool diagonal = labels.size() != all_labels.size();
    const auto int_vector = [&](const std::vector<int32_t>& v) {
      return ops::Const(scope,
                        MakeTensorProto<int32_t>(absl::MakeConstSpan(v),
                                                 TensorShape({static_cast<int64_t>(v.size())})));
    };
    std::vector<std::vector<int>> terms = {r.output};
    std::vector<Output> operands = {grad_inputs[0]};
    if (num == 2) {
      terms.push_back(r.inputs[1 - i]);
      operands.push_back(In(op, 1 - i));
    }
    // x's labels the gradient einsum can produce, and where each of x's
    // dims comes from (kept.size(): a size-1 dim to broadcast).
    std::vector<int> kept;
    std::vector<int32_t> source;
    bool may_broadcast = false;
    for (int label : labels) {
      const bool reachable = contains(r.output, label) || (num == 2 && contains(terms[1], label));
      source.push_back(reachable ? static_cast<int32_t>(kept.size()) : -1);
      if (reachable) kept.push_back(label);
      may_broadcast = may_broadcast || !reachable || label >= kEllipsisLabel;
    }
    for (int32_t& s : source) {
      if (s < 0) s = static_cast<int32_t>(kept.size());
    }
    TW_ASSIGN_OR_RETURN(std::string grad_equation, EinsumLetters(terms, kept));
    Output dx = ops::Einsum(scope, operands, grad_equation);
    if (kept.size() != labels.size()) {
      const Output shape_and_one =
          ops::ConcatV2(scope, {ops::Shape(scope, dx), ops::Const(scope, {1})}, 0);
      dx = ops::Reshape(scope, dx, ops::GatherV2(scope, shape_and_one, int_vector(source), 0));
    }
    if (may_broadcast) {
      Output shape = ops::Shape(scope, x);
      if (diagonal) shape = ops::GatherV2(scope, shape, int_vector(first_dims), 0);
      ops::BroadcastGradientArgs args(scope, shape, ops::Shape(scope, dx));
      dx = ops::BroadcastTo(scope, ops::Sum(scope, dx, args.r0, ops::Sum::KeepDims(true)), shape);
    }
    if (diagonal) {
      TW_ASSIGN_OR_RETURN(std::string inflate, EinsumLetters({labels}, all_labels));
      dx = ops::Einsum(scope, {dx}, inflate);
    }
    grad_outputs->push_back(dx);
  }
  return scope.status();
}

TW_REGISTER_GRADIENT("Einsum", EinsumGrad);
TW_REGISTER_GRADIENT("BatchMatMul", BatchMatMulGrad);
TW_REGISTER_GRADIENT("BatchMatMulV2", BatchMatMulGrad);
TW_REGISTER_GRADIENT("BatchMatMulV3", BatchMatMulGrad);

// Piecewise constant, comparisons, logic, indices: no gradient.
TW_REGISTER_NO_GRADIENT("Floor");
TW_REGISTER_NO_GRADIENT("Ceil");
TW_REGISTER_NO_GRADIENT("Round");
TW_REGISTER_NO_GRADIENT("Rint");
TW_REGISTER_NO_GRADIENT("FloorDiv");
TW_REGISTER_NO_GRADIENT("TruncateDiv");
TW_REGISTER_NO_GRADIENT("Equal");
TW_REGISTER_NO_GRADIENT("NotEqual");
TW_REGISTER_NO_GRADIENT("Greater");
TW_REGISTER_NO_GRADIENT("GreaterEqual");
TW_REGISTER_NO_GRADIENT("Less");
TW_REGISTER_NO_GRADIENT("LessEqual");
TW_REGISTER_NO_GRADIENT("LogicalAnd");
TW_REGISTER_NO_GRADIENT("LogicalOr");
TW_REGISTER_NO_GRADIENT("LogicalNot");
TW_REGISTER_NO_GRADIENT("IsNan");
TW_REGISTER_NO_GRADIENT("IsInf");
TW_REGISTER_NO_GRADIENT("IsFinite");
TW_REGISTER_NO_GRADIENT("ArgMax");
TW_REGISTER_NO_GRADIENT("ArgMin");
TW_REGISTER_NO_GRADIENT("All");
TW_REGISTER_NO_GRADIENT("Any");
TW_REGISTER_NO_GRADIENT("Range");
TW_REGISTER_NO_GRADIENT("ListDiff");

}  // namespace
}  // namespace towerflow
