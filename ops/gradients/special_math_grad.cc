// Gradients of the special functions (kernels/cpu/special_math_ops.cc), in
// the forms of TF's math_grad.py. Notation as math_grad.cc: z = f(a, x) or
// y = f(x), g = dL/dz. Where TF differentiates only some inputs (Betainc in
// x, Zeta in q, Polygamma in x) the others have no gradient, as in TF.
#include <cmath>

#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;
using grad_util::SumToShapeOf;

Output Scalar(const Scope& scope, double v, const Output& like) {
  return ops::Cast(scope, ops::Const(scope, v), like.type());
}

// u * log(v), and 0 where u is 0 (TF's xlogy); `log_v` is log(v).
Output XLog(const Scope& scope, const Output& u, const Output& log_v) {
  const Output product = ops::Mul(scope, u, log_v);
  return ops::SelectV2(scope, ops::Equal(scope, u, Scalar(scope, 0, u)),
                       ops::ZerosLike(scope, product), product);
}

// y = lgamma(x): dx = g digamma(x).
TW_GRAD_FN(LgammaGrad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Digamma(scope, In(op, 0))));
  return scope.status();
}
// y = digamma(x): dx = g polygamma(1, x).
TW_GRAD_FN(DigammaGrad) {
  const Output x = In(op, 0);
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Polygamma(scope, Scalar(scope, 1, x), x)));
  return scope.status();
}
// y = erfinv(x): dx = g sqrt(pi) / 2 exp(y^2).
TW_GRAD_FN(ErfinvGrad) {
  const Output y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, ops::Mul(scope, grad_inputs[0], Scalar(scope, 0.886226925452758, y)),
               ops::Exp(scope, ops::Square(scope, y))));
  return scope.status();
}
// y = ndtri(x): dx = g sqrt(2 pi) exp(y^2 / 2).
TW_GRAD_FN(NdtriGrad) {
  const Output y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, ops::Mul(scope, grad_inputs[0], Scalar(scope, 2.5066282746310002, y)),
               ops::Exp(scope, ops::Mul(scope, ops::Square(scope, y), Scalar(scope, 0.5, y)))));
  return scope.status();
}
// y = I0(x): dx = g I1(x).
TW_GRAD_FN(BesselI0Grad) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::BesselI1(scope, In(op, 0))));
  return scope.status();
}
// y = I1(x): dx = g (I0(x) - y / x), 1 at x = 0.
TW_GRAD_FN(BesselI1Grad) {
  const Output x = In(op, 0), y = op.output(0);
  const Output slope =
      ops::SelectV2(scope, ops::Equal(scope, x, Scalar(scope, 0, x)), Scalar(scope, 1, x),
                    ops::Sub(scope, ops::BesselI0(scope, x), ops::Div(scope, y, x)));
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], slope));
  return scope.status();
}
// y = I0e(x): dx = g (I1e(x) - sign(x) y).
TW_GRAD_FN(BesselI0eGrad) {
  const Output x = In(op, 0), y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0],
               ops::Sub(scope, ops::BesselI1e(scope, x), ops::Mul(scope, ops::Sign(scope, x), y))));
  return scope.status();
}
// y = I1e(x): dx = g (I0e(x) - y (sign(x) + 1 / x)), 0.5 at x = 0.
TW_GRAD_FN(BesselI1eGrad) {
  const Output x = In(op, 0), y = op.output(0);
  const Output away = ops::Sub(
      scope, ops::BesselI0e(scope, x),
      ops::Mul(scope, y, ops::AddV2(scope, ops::Sign(scope, x), ops::Reciprocal(scope, x))));
  const Output slope =
      ops::SelectV2(scope, ops::Equal(scope, x, Scalar(scope, 0, x)), Scalar(scope, 0.5, x), away);
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], slope));
  return scope.status();
}
// The Bessel functions of tf.math.special, with TF's derivatives:
// J0' = -J1, J1' = J0 - J1 / x (1/2 at 0), Y0' = -Y1, Y1' = Y0 - Y1 / x,
// K0' = -K1, K1' = -K0 - K1 / x, and for the scaled K0e = e^x K0,
// K1e = e^x K1: K0e' = K0e - K1e, K1e' = K1e (1 - 1 / x) - K0e.
TW_GRAD_FN(BesselJ0Grad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Neg(scope, ops::BesselJ1(scope, In(op, 0)))));
  return scope.status();
}
TW_GRAD_FN(BesselJ1Grad) {
  const Output x = In(op, 0), y = op.output(0);
  const Output slope =
      ops::SelectV2(scope, ops::Equal(scope, x, Scalar(scope, 0, x)), Scalar(scope, 0.5, x),
                    ops::Sub(scope, ops::BesselJ0(scope, x), ops::Div(scope, y, x)));
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], slope));
  return scope.status();
}
TW_GRAD_FN(BesselY0Grad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Neg(scope, ops::BesselY1(scope, In(op, 0)))));
  return scope.status();
}
TW_GRAD_FN(BesselY1Grad) {
  const Output x = In(op, 0), y = op.output(0);
  grad_outputs->push_back(ops::Mul(
      scope, grad_inputs[0], ops::Sub(scope, ops::BesselY0(scope, x), ops::Div(scope, y, x))));
  return scope.status();
}
TW_GRAD_FN(BesselK0Grad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Neg(scope, ops::BesselK1(scope, In(op, 0)))));
  return scope.status();
}
TW_GRAD_FN(BesselK1Grad) {
  const Output x = In(op, 0), y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0],
               ops::Sub(scope, ops::Neg(scope, ops::BesselK0(scope, x)), ops::Div(scope, y, x))));
  return scope.status();
}
TW_GRAD_FN(BesselK0eGrad) {
  const Output x = In(op, 0), y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Sub(scope, y, ops::BesselK1e(scope, x))));
  return scope.status();
}
TW_GRAD_FN(BesselK1eGrad) {
  const Output x = In(op, 0), y = op.output(0);
  const Output slope = ops::Sub(
      scope, ops::Mul(scope, y, ops::Sub(scope, Scalar(scope, 1, x), ops::Reciprocal(scope, x))),
      ops::BesselK0e(scope, x));
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], slope));
  return scope.status();
}
// z = P(a, x): da = g igamma_grad_a(a, x), dx = g exp(-x + (a - 1) log x -
// lgamma(a)); `sign` -1 for Q(a, x) = 1 - P(a, x).
absl::Status IncompleteGammaGrad(const Scope& scope, const Operation& op, const Output& g,
                                 double sign, std::vector<Output>* grad_outputs) {
  const Output a = In(op, 0), x = In(op, 1);
  const Output signed_g = sign < 0 ? ops::Neg(scope, g) : g;
  const Output partial_a = ops::IgammaGradA(scope, a, x);
  const Output partial_x = ops::Exp(
      scope,
      ops::Sub(
          scope,
          ops::Sub(scope,
                   ops::Mul(scope, ops::Sub(scope, a, Scalar(scope, 1, a)), ops::Log(scope, x)), x),
          ops::Lgamma(scope, a)));
  grad_outputs->push_back(SumToShapeOf(scope, ops::Mul(scope, partial_a, signed_g), a, x));
  grad_outputs->push_back(SumToShapeOf(scope, ops::Mul(scope, partial_x, signed_g), x, a));
  return scope.status();
}
TW_GRAD_FN(IgammaGrad) { return IncompleteGammaGrad(scope, op, grad_inputs[0], 1, grad_outputs); }
TW_GRAD_FN(IgammacGrad) { return IncompleteGammaGrad(scope, op, grad_inputs[0], -1, grad_outputs); }
// z = I_x(a, b): dx = g x^(a-1) (1-x)^(b-1) / B(a, b), in logs; a and b
// have no gradient, as in TF.
TW_GRAD_FN(BetaincGrad) {
  const Output a = In(op, 0), b = In(op, 1), x = In(op, 2);
  const Output log_beta =
      ops::Sub(scope, ops::AddV2(scope, ops::Lgamma(scope, a), ops::Lgamma(scope, b)),
               ops::Lgamma(scope, ops::AddV2(scope, a, b)));
  const Output one = Scalar(scope, 1, x);
  const Output partial_x =
      ops::Exp(scope, ops::Sub(scope,
                               ops::AddV2(scope,
                                          XLog(scope, ops::Sub(scope, b, one),
                                               ops::Log1p(scope, ops::Neg(scope, x))),
                                          XLog(scope, ops::Sub(scope, a, one), ops::Log(scope, x))),
                               log_beta));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      SumToShapeOf(scope, ops::Mul(scope, partial_x, grad_inputs[0]), x, op.output(0)));
  return scope.status();
}
// z = zeta(x, q): dq = -g x zeta(x + 1, q); x has none.
TW_GRAD_FN(ZetaGrad) {
  const Output x = In(op, 0), q = In(op, 1);
  const Output partial_q = ops::Neg(
      scope, ops::Mul(scope, x, ops::Zeta(scope, ops::AddV2(scope, x, Scalar(scope, 1, x)), q)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(SumToShapeOf(scope, ops::Mul(scope, partial_q, grad_inputs[0]), q, x));
  return scope.status();
}
// z = polygamma(n, x): dx = g polygamma(n + 1, x); n has none.
TW_GRAD_FN(PolygammaGrad) {
  const Output n = In(op, 0), x = In(op, 1);
  const Output partial_x = ops::Polygamma(scope, ops::AddV2(scope, n, Scalar(scope, 1, n)), x);
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(SumToShapeOf(scope, ops::Mul(scope, partial_x, grad_inputs[0]), x, n));
  return scope.status();
}

// d alpha of sum(g sample) for a gamma sample [n leading dims..., alpha's]:
// the leading dims' sum of g RandomGammaGrad(alpha, sample) (TF's implicit
// reparameterisation), alpha given n leading 1s.
Output GammaAlphaGrad(const Scope& scope, const Output& alpha, const Output& sample,
                      const Output& g, const Output& leading_dims) {
  const Output leading_ones =
      ops::Fill(scope, ops::Reshape(scope, leading_dims, {1}), ops::Const(scope, 1));
  const Output broadcastable =
      ops::Reshape(scope, alpha, ops::ConcatV2(scope, {leading_ones, ops::Shape(scope, alpha)}, 0));
  const Output partial_alpha = ops::RandomGammaGrad(scope, broadcastable, sample);
  return ops::Sum(scope, ops::Mul(scope, g, partial_alpha), ops::Range(scope, 0, leading_dims, 1));
}
// RandomGamma(shape, alpha): [shape..., alpha's...].
TW_GRAD_FN(GammaSampleGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      GammaAlphaGrad(scope, In(op, 1), op.output(0), grad_inputs[0], ops::Size(scope, In(op, 0))));
  return scope.status();
}
// StatelessRandomGammaV2(shape, seed, alpha) and V3(shape, key, counter,
// alg, alpha): shape ends with alpha's.
TW_GRAD_FN(StatelessGammaSampleGrad) {
  const int alpha_input = op.num_inputs() - 1;
  const Output alpha = In(op, alpha_input);
  const Output leading_dims = ops::Sub(scope, ops::Size(scope, In(op, 0)), ops::Rank(scope, alpha));
  for (int i = 0; i < alpha_input; ++i) grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(GammaAlphaGrad(scope, alpha, op.output(0), grad_inputs[0], leading_dims));
  return scope.status();
}

// tf.math.special's others, TF's forms: Dawsn' = 1 - 2 x Dawsn(x),
// Expint' = e^x / x, FresnelCos' = cos(pi x^2 / 2), FresnelSin' =
// sin(pi x^2 / 2), Spence' = log(x) / (1 - x) (-1 at x = 1).
TW_GRAD_FN(DawsnGrad) {
  const Output x = In(op, 0);
  const Output two_xy = ops::Mul(scope, ops::Mul(scope, Scalar(scope, 2, x), x), op.output(0));
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Sub(scope, Scalar(scope, 1, x), two_xy)));
  return scope.status();
}
TW_GRAD_FN(ExpintGrad) {
  const Output x = In(op, 0);
  grad_outputs->push_back(ops::Div(scope, ops::Mul(scope, grad_inputs[0], ops::Exp(scope, x)), x));
  return scope.status();
}
// pi x^2 / 2, the Fresnel integrands' angle.
Output FresnelAngle(const Scope& scope, const Output& x) {
  return ops::Mul(scope, Scalar(scope, M_PI / 2, x), ops::Square(scope, x));
}
TW_GRAD_FN(FresnelCosGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Cos(scope, FresnelAngle(scope, In(op, 0)))));
  return scope.status();
}
TW_GRAD_FN(FresnelSinGrad) {
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::Sin(scope, FresnelAngle(scope, In(op, 0)))));
  return scope.status();
}
TW_GRAD_FN(SpenceGrad) {
  const Output x = In(op, 0);
  const Output partial =
      ops::SelectV2(scope, ops::Equal(scope, x, Scalar(scope, 1, x)), Scalar(scope, -1, x),
                    ops::Div(scope, ops::Log(scope, x), ops::Sub(scope, Scalar(scope, 1, x), x)));
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], partial));
  return scope.status();
}

TW_REGISTER_GRADIENT("Lgamma", LgammaGrad);
TW_REGISTER_GRADIENT("Dawsn", DawsnGrad);
TW_REGISTER_GRADIENT("Expint", ExpintGrad);
TW_REGISTER_GRADIENT("FresnelCos", FresnelCosGrad);
TW_REGISTER_GRADIENT("FresnelSin", FresnelSinGrad);
TW_REGISTER_GRADIENT("Spence", SpenceGrad);
TW_REGISTER_GRADIENT("Digamma", DigammaGrad);
TW_REGISTER_GRADIENT("Erfinv", ErfinvGrad);
TW_REGISTER_GRADIENT("Ndtri", NdtriGrad);
TW_REGISTER_GRADIENT("BesselI0", BesselI0Grad);
TW_REGISTER_GRADIENT("BesselI1", BesselI1Grad);
TW_REGISTER_GRADIENT("BesselI0e", BesselI0eGrad);
TW_REGISTER_GRADIENT("BesselI1e", BesselI1eGrad);
TW_REGISTER_GRADIENT("BesselJ0", BesselJ0Grad);
TW_REGISTER_GRADIENT("BesselJ1", BesselJ1Grad);
TW_REGISTER_GRADIENT("BesselY0", BesselY0Grad);
TW_REGISTER_GRADIENT("BesselY1", BesselY1Grad);
TW_REGISTER_GRADIENT("BesselK0", BesselK0Grad);
TW_REGISTER_GRADIENT("BesselK1", BesselK1Grad);
TW_REGISTER_GRADIENT("BesselK0e", BesselK0eGrad);
TW_REGISTER_GRADIENT("BesselK1e", BesselK1eGrad);
TW_REGISTER_GRADIENT("Igamma", IgammaGrad);
TW_REGISTER_GRADIENT("Igammac", IgammacGrad);
TW_REGISTER_GRADIENT("Betainc", BetaincGrad);
TW_REGISTER_GRADIENT("Zeta", ZetaGrad);
TW_REGISTER_GRADIENT("Polygamma", PolygammaGrad);
TW_REGISTER_GRADIENT("RandomGamma", GammaSampleGrad);
TW_REGISTER_GRADIENT("StatelessRandomGammaV2", StatelessGammaSampleGrad);
TW_REGISTER_GRADIENT("StatelessRandomGammaV3", StatelessGammaSampleGrad);
// Not differentiable in TF either.
TW_REGISTER_NO_GRADIENT("IgammaGradA");
TW_REGISTER_NO_GRADIENT("RandomGammaGrad");
TW_REGISTER_NO_GRADIENT("RandomPoisson");
TW_REGISTER_NO_GRADIENT("RandomPoissonV2");
TW_REGISTER_NO_GRADIENT("StatelessRandomPoisson");
TW_REGISTER_NO_GRADIENT("StatelessRandomBinomial");
TW_REGISTER_NO_GRADIENT("StatefulRandomBinomial");

}  // namespace
}  // namespace towerflow
