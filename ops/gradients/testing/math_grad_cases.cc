// The finite-difference cases of the math gradients (math_grad.cc):
// see gradient_functions_test.cc.
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/matrix_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {

// x + c I for a batch of 3 x 3 matrices x.
Output Shifted(const Scope& s, const Output& x, double c) {
  return ops::AddV2(
      s, x, ops::Cast(s, ops::Const(s, {{c, 0.0, 0.0}, {0.0, c, 0.0}, {0.0, 0.0, c}}), x.type()));
}

// Tridiagonal diagonals [..., 3, M] with 3 added to the main diagonal (the
// middle row): a diagonally dominant, well-conditioned system.
Output DominantMain(const Scope& s, const Output& diagonals) {
  return ops::AddV2(s, diagonals,
                    ops::Cast(s, ops::Const(s, {{0.0}, {3.0}, {0.0}}), diagonals.type()));
}

std::vector<GradCase> MathCases() {
  const InputSpec positive = S({2, 3}, 0.5, 1.5);
  const InputSpec above_one = S({2, 3}, 1.0, 2.0);
  return {
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
          "Tan", [](const Scope& s, Output x) { return ops::Tan(s, x); }, S({2, 3}, -1, 1)),
      Unary(
          "Asin", [](const Scope& s, Output x) { return ops::Asin(s, x); }, S({2, 3}, -0.8, 0.8)),
      Unary(
          "Acos", [](const Scope& s, Output x) { return ops::Acos(s, x); }, S({2, 3}, -0.8, 0.8)),
      Unary("Atan", [](const Scope& s, Output x) { return ops::Atan(s, x); }),
      Unary("Sinh", [](const Scope& s, Output x) { return ops::Sinh(s, x); }),
      Unary("Cosh", [](const Scope& s, Output x) { return ops::Cosh(s, x); }),
      Unary("Asinh", [](const Scope& s, Output x) { return ops::Asinh(s, x); }),
      Unary(
          "Acosh", [](const Scope& s, Output x) { return ops::Acosh(s, x); }, S({2, 3}, 1.5, 3)),
      Unary(
          "Atanh", [](const Scope& s, Output x) { return ops::Atanh(s, x); }, S({2, 3}, -0.8, 0.8)),
      Precise({"SelfAdjointEigV2",
               {S({3, 3})},
               [](const Scope& s, const Outs& x) -> Outs {
                 // A symmetric input (the op reads the lower triangle); v squared,
                 // so each column's sign does not matter.
                 const Output a = ops::AddV2(s, x[0], ops::Transpose(s, x[0], {1, 0}));
                 const ops::SelfAdjointEigV2 eig(s, a);
                 return {eig.e, ops::Square(s, eig.v)};
               },
               DT_DOUBLE},
              1e-6, 1e-8),
      Precise({"SelfAdjointEigV2/values only",
               {S({2, 3, 3})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const Output a = ops::AddV2(s, x[0], ops::Transpose(s, x[0], {0, 2, 1}));
                 return {ops::SelfAdjointEigV2(s, a, ops::SelfAdjointEigV2::ComputeV(false)).e};
               },
               DT_DOUBLE},
              1e-6, 1e-8),
      Precise({"MatrixSolveLs",
               {S({4, 3}), S({4, 2})},
               [](const Scope& s, const Outs& x) -> Outs {
                 return {ops::MatrixSolveLs(s, x[0], x[1], ops::Const(s, 0.25))};
               }},
              1e-6, 1e-8),
      Precise({"MatrixSolveLs/wide",
               {S({2, 3, 5}), S({2, 3, 2})},
               [](const Scope& s, const Outs& x) -> Outs {
                 return {ops::MatrixSolveLs(s, x[0], x[1], ops::Const(s, 0.5))};
               }},
              1e-6, 1e-8),
      Precise({"Svd",
               {S({4, 3})},
               [](const Scope& s, const Outs& x) -> Outs {
                 // u and v squared: each singular vector's sign is free.
                 const ops::Svd svd(s, x[0]);
                 return {svd.s, ops::Square(s, svd.u), ops::Square(s, svd.v)};
               }},
              1e-6, 1e-8),
      Precise({"Svd/wide full",
               {S({2, 3, 4})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const ops::Svd svd(s, x[0], ops::Svd::FullMatrices(true));
                 return {svd.s, ops::Square(s, svd.u), ops::Square(s, svd.v)};
               }},
              1e-6, 1e-8),
      Precise({"Svd/values only",
               {S({3, 5})},
               [](const Scope& s, const Outs& x) -> Outs {
                 return {ops::Svd(s, x[0], ops::Svd::ComputeUv(false)).s};
               }},
              1e-6, 1e-8),
      Precise({"Qr",
               {S({4, 3})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const ops::Qr qr(s, x[0]);
                 return {qr.q, qr.r};
               },
               DT_DOUBLE},
              1e-6, 1e-8),
      Precise({"Qr/wide",
               {S({2, 3, 5})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const ops::Qr qr(s, x[0]);
                 return {qr.q, qr.r};
               },
               DT_DOUBLE},
              1e-6, 1e-8),
      Unary("Erfc", [](const Scope& s, Output x) { return ops::Erfc(s, x); }),
      Binary(
          "Atan2", [](const Scope& s, Output y, Output x) { return ops::Atan2(s, y, x); },
          S({2, 3}, 0.5, 2), S({3}, 0.5, 2)),
      // Special functions, in double with a step of 1e-5: their third derivatives
      // reach the hundreds here, and steps of 1e-3 would err by 1e-5.
      Precise(Unary(
                  "Lgamma", [](const Scope& s, Output x) { return ops::Lgamma(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "Digamma", [](const Scope& s, Output x) { return ops::Digamma(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "Erfinv", [](const Scope& s, Output x) { return ops::Erfinv(s, x); },
                  S({2, 3}, -0.8, 0.8)),
              1e-5, 1e-8),
      Precise(Unary(
                  "Ndtri", [](const Scope& s, Output x) { return ops::Ndtri(s, x); },
                  S({2, 3}, 0.1, 0.9)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselI0", [](const Scope& s, Output x) { return ops::BesselI0(s, x); },
                  S({2, 3}, -2, 2)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselI1", [](const Scope& s, Output x) { return ops::BesselI1(s, x); },
                  S({2, 3}, -2, 2)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselI0e", [](const Scope& s, Output x) { return ops::BesselI0e(s, x); },
                  NonZero({2, 3})),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselI1e", [](const Scope& s, Output x) { return ops::BesselI1e(s, x); },
                  NonZero({2, 3})),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselJ0", [](const Scope& s, Output x) { return ops::BesselJ0(s, x); },
                  S({2, 3}, -3, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselJ1", [](const Scope& s, Output x) { return ops::BesselJ1(s, x); },
                  S({2, 3}, -3, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselY0", [](const Scope& s, Output x) { return ops::BesselY0(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselY1", [](const Scope& s, Output x) { return ops::BesselY1(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselK0", [](const Scope& s, Output x) { return ops::BesselK0(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselK1", [](const Scope& s, Output x) { return ops::BesselK1(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselK0e", [](const Scope& s, Output x) { return ops::BesselK0e(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "BesselK1e", [](const Scope& s, Output x) { return ops::BesselK1e(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(
          Unary(
              "Dawsn", [](const Scope& s, Output x) { return ops::Dawsn(s, x); }, S({2, 3}, -2, 2)),
          1e-5, 1e-8),
      Precise(Unary(
                  "Expint", [](const Scope& s, Output x) { return ops::Expint(s, x); },
                  S({2, 3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(Unary(
                  "FresnelCos", [](const Scope& s, Output x) { return ops::FresnelCos(s, x); },
                  S({2, 3}, -1.5, 1.5)),
              1e-5, 1e-8),
      Precise(Unary(
                  "FresnelSin", [](const Scope& s, Output x) { return ops::FresnelSin(s, x); },
                  S({2, 3}, -1.5, 1.5)),
              1e-5, 1e-8),
      Precise(Unary(
                  "Spence", [](const Scope& s, Output x) { return ops::Spence(s, x); },
                  S({2, 3}, 0.2, 3)),
              1e-5, 1e-8),
      Precise(Binary(
                  "Igamma", [](const Scope& s, Output a, Output x) { return ops::Igamma(s, a, x); },
                  S({2, 3}, 0.5, 3), S({3}, 0.5, 3)),
              1e-5, 1e-8),
      Precise(
          Binary(
              "Igammac", [](const Scope& s, Output a, Output x) { return ops::Igammac(s, a, x); },
              S({2, 3}, 0.5, 3), S({3}, 0.5, 3)),
          1e-5, 1e-8),
      Precise(Unary(
                  "Betainc",
                  [](const Scope& s, Output x) {
                    return ops::Betainc(s, ops::Cast(s, ops::Const(s, 2.5), x.type()),
                                        ops::Cast(s, ops::Const(s, 1.5), x.type()), x);
                  },
                  S({2, 3}, 0.1, 0.9)),
              1e-5, 1e-8),
      Precise(Unary(
                  "Zeta",
                  [](const Scope& s, Output q) {
                    return ops::Zeta(s, ops::Cast(s, ops::Const(s, {2.0, 3.0, 4.5}), q.type()), q);
                  },
                  S({2, 3}, 1, 3)),
              1e-5, 1e-8),
      Precise(
          Unary(
              "Polygamma",
              [](const Scope& s, Output x) {
                return ops::Polygamma(s, ops::Cast(s, ops::Const(s, {0.0, 1.0, 2.0}), x.type()), x);
              },
              S({2, 3}, 1, 3)),
          1e-5, 1e-8),
      // Linear algebra on well-conditioned matrices: x + 3 I, and x x^T + I
      // (positive definite) for Cholesky.
      Precise(Unary(
                  "MatrixInverse",
                  [](const Scope& s, Output x) { return ops::MatrixInverse(s, Shifted(s, x, 3)); },
                  S({2, 3, 3})),
              1e-5, 1e-8),
      Precise(Unary(
                  "MatrixInverse/adjoint",
                  [](const Scope& s, Output x) {
                    return ops::MatrixInverse(s, Shifted(s, x, 3),
                                              ops::MatrixInverse::Adjoint(true));
                  },
                  S({2, 3, 3})),
              1e-5, 1e-8),
      Precise(
          Unary(
              "MatrixDeterminant",
              [](const Scope& s, Output x) { return ops::MatrixDeterminant(s, Shifted(s, x, 2)); },
              S({2, 3, 3})),
          1e-5, 1e-8),
      Precise(Unary(
                  "LogMatrixDeterminant",
                  [](const Scope& s, Output x) {
                    return ops::LogMatrixDeterminant(s, Shifted(s, x, 3)).log_abs_determinant;
                  },
                  S({2, 3, 3})),
              1e-5, 1e-8),
      Precise(Binary(
                  "MatrixSolve",
                  [](const Scope& s, Output a, Output b) {
                    return ops::MatrixSolve(s, Shifted(s, a, 3), b);
                  },
                  S({2, 3, 3}), S({2, 3, 2})),
              1e-5, 1e-8),
      Precise(Binary(
                  "MatrixSolve/adjoint",
                  [](const Scope& s, Output a, Output b) {
                    return ops::MatrixSolve(s, Shifted(s, a, 3), b,
                                            ops::MatrixSolve::Adjoint(true));
                  },
                  S({2, 3, 3}), S({2, 3, 2})),
              1e-5, 1e-8),
      Precise(Binary(
                  "MatrixTriangularSolve",
                  [](const Scope& s, Output a, Output b) {
                    return ops::MatrixTriangularSolve(s, Shifted(s, a, 3), b);
                  },
                  S({2, 3, 3}), S({2, 3, 2})),
              1e-5, 1e-8),
      Precise(Binary(
                  "MatrixTriangularSolve/upper_adjoint",
                  [](const Scope& s, Output a, Output b) {
                    return ops::MatrixTriangularSolve(
                        s, Shifted(s, a, 3), b,
                        ops::MatrixTriangularSolve::Lower(false).Adjoint(true));
                  },
                  S({2, 3, 3}), S({2, 3, 2})),
              1e-5, 1e-8),
      // Banded systems: bands in [1, 2] (the diagonal away from zero), one
      // case with rhs broadcast over the bands' batch; tridiagonal systems
      // with 3 added to the main diagonal.
      Precise(Binary(
                  "BandedTriangularSolve",
                  [](const Scope& s, Output a, Output b) {
                    return ops::BandedTriangularSolve(s, a, b);
                  },
                  S({2, 2, 4}, 1, 2), S({2, 4, 3})),
              1e-5, 1e-8),
      Dynamic(Precise(Binary(
                          "BandedTriangularSolve/upper_adjoint_broadcast",
                          [](const Scope& s, Output a, Output b) {
                            return ops::BandedTriangularSolve(
                                s, a, b, ops::BandedTriangularSolve::Lower(false).Adjoint(true));
                          },
                          S({2, 3, 4}, 1, 2), S({4, 2})),
                      1e-5, 1e-8)),
      Precise(Binary(
                  "TridiagonalSolve",
                  [](const Scope& s, Output d, Output b) {
                    return ops::TridiagonalSolve(s, DominantMain(s, d), b);
                  },
                  S({2, 3, 4}), S({2, 4, 2})),
              1e-5, 1e-8),
      Precise(Binary(
                  "TridiagonalSolve/thomas",
                  [](const Scope& s, Output d, Output b) {
                    return ops::TridiagonalSolve(s, DominantMain(s, d), b,
                                                 ops::TridiagonalSolve::PartialPivoting(false));
                  },
                  S({3, 5}), S({5, 1})),
              1e-5, 1e-8),
      Precise(GradCase{"TridiagonalMatMul",
                       {S({2, 1, 4}), S({2, 1, 4}), S({2, 1, 4}), S({2, 4, 3})},
                       [](const Scope& s, const Outs& x) {
                         return Outs{ops::TridiagonalMatMul(s, x[0], x[1], x[2], x[3])};
                       }},
              1e-5, 1e-8),
      Precise(Unary(
                  "MatrixSquareRoot",
                  [](const Scope& s, Output x) {
                    const Output gram = ops::BatchMatMulV2(s, x, x, ops::BatchMatMulV2::AdjY(true));
                    return ops::MatrixSquareRoot(s, Shifted(s, gram, 1));
                  },
                  S({2, 3, 3})),
              1e-5, 1e-8),
      Precise(Unary(
                  "Cholesky",
                  [](const Scope& s, Output x) {
                    const Output gram = ops::BatchMatMulV2(s, x, x, ops::BatchMatMulV2::AdjY(true));
                    return ops::Cholesky(s, Shifted(s, gram, 1));
                  },
                  S({2, 3, 3})),
              1e-5, 1e-8),
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
          "InvGrad", [](const Scope& s, Output y, Output dy) { return ops::InvGrad(s, y, dy); },
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
      // The x-is-0 products away from x = 0 (where TF's dx is 0 by
      // definition, not the derivative) and MulNoNan away from y = 0.
      Precise(Binary(
                  "Xlogy", [](const Scope& s, Output a, Output b) { return ops::Xlogy(s, a, b); },
                  NonZero({2, 3}), S({3}, 0.5, 2)),
              1e-6, 1e-8),
      Precise(
          Binary(
              "Xlog1py", [](const Scope& s, Output a, Output b) { return ops::Xlog1py(s, a, b); },
              NonZero({2, 3}), S({3}, -0.5, 1)),
          1e-6, 1e-8),
      Precise(Binary(
                  "Xdivy", [](const Scope& s, Output a, Output b) { return ops::Xdivy(s, a, b); },
                  NonZero({2, 3}), S({3}, 1, 2)),
              1e-6, 1e-8),
      Double(Binary(
          "MulNoNan", [](const Scope& s, Output a, Output b) { return ops::MulNoNan(s, a, b); },
          S({2, 3}), NonZero({3}))),
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
      {"AddN",
       {S({2, 2}), S({2, 2}), S({2, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::AddN(s, {x[0], x[1], x[2]})};
       }},
      {"AccumulateNV2",
       {S({2, 2}), S({2, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Square(s, ops::AccumulateNV2(s, {x[0], x[1]}, PartialTensorShape({2, 2})))};
       },
       DT_DOUBLE},
      {"Select",
       {S({2, 3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Select(s, ops::Const(s, {true, false}), x[0], x[1])};
       }},
      // Bounds as a scalar and as t's shape; t in [-1, 1] on both sides of
      // them, away from the kinks.
      Double({"ClipByValue",
              {S({2, 3}), S({}, -0.6, -0.5), S({2, 3}, 0.2, 0.3)},
              [](const Scope& s, const Outs& x) -> Outs {
                return {ops::ClipByValue(s, x[0], x[1], x[2])};
              }}),
      {"SelectV2",
       {S({2, 3}), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::SelectV2(s, ops::Const(s, {{true, false, true}, {false, false, true}}), x[0],
                               x[1])};
       }},
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
      Unary(
          "EuclideanNorm",
          [](const Scope& s, Output x) {
            return ops::EuclideanNorm(s, x, {0, 2});
          },
          S({2, 3, 2})),
      Unary("EuclideanNorm/keep_dims",
            [](const Scope& s, Output x) {
              return ops::EuclideanNorm(s, x, {1}, ops::EuclideanNorm::KeepDims(true));
            }),
      {"Cross",
       {S({2, 3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs { return {ops::Cross(s, x[0], x[1])}; }},
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
      Binary(
          "BatchMatMulV3",
          [](const Scope& s, Output a, Output b) {
            return ops::BatchMatMulV3(s, a, b, a.type(), ops::BatchMatMulV3::AdjX(true));
          },
          S({3, 2}), S({2, 3, 2})),
  };
}

}  // namespace grad_cases
}  // namespace towerflow
