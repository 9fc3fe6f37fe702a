// Gradients of the matrix ops over the last two dimensions (ops/
// matrix_ops.cc): the band ops as TF's array_grad.py (reading a band and
// writing one are each other's adjoints; V2 packs LEFT_LEFT, V3 says how
// in `align`), the linear algebra as its linalg_grad.py.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/tensor_proto_util.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/matrix_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

std::string AlignOf(const Scope& scope, const Operation& op) {
  if (op.node()->FindAttr("align") == nullptr) return "LEFT_LEFT";  // V2
  return grad_util::Attr<std::string>(scope, op, "align");
}
Output Zero(const Scope& scope, const Output& like) {
  return ops::Cast(scope, ops::Const(scope, 0), like.type());
}

// y = matrix_diag(d): dd = the diagonal of g.
TW_GRAD_FN(MatrixDiagGrad) {
  grad_outputs->push_back(ops::MatrixDiagPart(scope, grad_inputs[0]));
  return scope.status();
}
// y = matrix_diag(d, k, rows, cols, pad): dd = g's band k.
TW_GRAD_FN(MatrixDiagV2Grad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(ops::MatrixDiagPartV3(scope, g, In(op, 1), Zero(scope, g),
                                                ops::MatrixDiagPartV3::Align(AlignOf(scope, op))));
  for (int i = 1; i < 5; ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = diag_part(x): dx = zeros with g on the diagonal.
TW_GRAD_FN(MatrixDiagPartGrad) {
  grad_outputs->push_back(
      ops::MatrixSetDiag(scope, ops::ZerosLike(scope, In(op, 0)), grad_inputs[0]));
  return scope.status();
}
TW_GRAD_FN(MatrixDiagPartV2Grad) {
  grad_outputs->push_back(ops::MatrixSetDiagV3(scope, ops::ZerosLike(scope, In(op, 0)),
                                               grad_inputs[0], In(op, 1),
                                               ops::MatrixSetDiagV3::Align(AlignOf(scope, op))));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = set_diag(x, d): dx = g with zeros on the band, dd = g's band.
TW_GRAD_FN(MatrixSetDiagGrad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(ops::MatrixSetDiag(scope, g, ops::ZerosLike(scope, In(op, 1))));
  grad_outputs->push_back(ops::MatrixDiagPart(scope, g));
  return scope.status();
}
TW_GRAD_FN(MatrixSetDiagV2Grad) {
  const Output g = grad_inputs[0], k = In(op, 2);
  const std::string align = AlignOf(scope, op);
  grad_outputs->push_back(ops::MatrixSetDiagV3(scope, g, ops::ZerosLike(scope, In(op, 1)), k,
                                               ops::MatrixSetDiagV3::Align(align)));
  grad_outputs->push_back(
      ops::MatrixDiagPartV3(scope, g, k, Zero(scope, g), ops::MatrixDiagPartV3::Align(align)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = band_part(x, lower, upper): dx = the same band of g.
TW_GRAD_FN(MatrixBandPartGrad) {
  grad_outputs->push_back(ops::MatrixBandPart(scope, grad_inputs[0], In(op, 1), In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(DiagGrad) {
  grad_outputs->push_back(ops::DiagPart(scope, grad_inputs[0]));
  return scope.status();
}
TW_GRAD_FN(DiagPartGrad) {
  grad_outputs->push_back(ops::Diag(scope, grad_inputs[0]));
  return scope.status();
}

// ---- Linear algebra, as TF's linalg_grad.py (real types: adjoint is
// transpose).

// x with its last two dimensions swapped.
Output Transposed(const Scope& scope, const Output& x) {
  const Output rank = ops::Rank(scope, x);
  const Output perm =
      ops::ConcatV2(scope,
                    {ops::Range(scope, 0, ops::Sub(scope, rank, 2), 1),
                     ops::Pack(scope, {ops::Sub(scope, rank, 1), ops::Sub(scope, rank, 2)})},
                    0);
  return ops::Transpose(scope, x, perm);
}
Output MatMul(const Scope& scope, const Output& a, const Output& b, bool adj_a, bool adj_b) {
  return ops::BatchMatMulV2(scope, a, b, ops::BatchMatMulV2::AdjX(adj_a).AdjY(adj_b));
}
// The Kronecker products of two batches of m x m matrices: [..., m*m, m*m].
Output Kronecker(const Scope& scope, const Output& b1, const Output& b2, const Output& batch,
                 const Output& m) {
  const Output one = ops::Const(scope, {1});
  const Output p1 = ops::Reshape(scope, b1, ops::ConcatV2(scope, {batch, m, one, m, one}, 0));
  const Output p2 = ops::Reshape(scope, b2, ops::ConcatV2(scope, {batch, one, m, one, m}, 0));
  const Output mm = ops::Mul(scope, m, m);
  return ops::Reshape(scope, ops::Mul(scope, p1, p2), ops::ConcatV2(scope, {batch, mm, mm}, 0));
}
// r = sqrtm(a), a = r r: da = r dr + dr r, a Sylvester equation solved as
// TF's linalg_grad.py does, vec(dr) = (I (x) r^T + r (x) I)^-1 vec(g^T).
TW_GRAD_FN(MatrixSquareRootGrad) {
  const Output r = op.output(0), g = grad_inputs[0];
  const Output shape = ops::Shape(scope, r);
  const Output batch = ops::StridedSlice(scope, shape, {0}, {-2}, {1});
  const Output m = ops::StridedSlice(scope, shape, {-1}, {0}, {1}, ops::StridedSlice::EndMask(1));
  const Output eye = ops::MatrixSetDiag(scope, ops::ZerosLike(scope, r),
                                        ops::OnesLike(scope, ops::MatrixDiagPart(scope, r)));
  const Output k = ops::AddV2(scope, Kronecker(scope, eye, Transposed(scope, r), batch, m),
                              Kronecker(scope, r, eye, batch, m));
  const Output vec_g =
      ops::Reshape(scope, Transposed(scope, g),
                   ops::ConcatV2(scope, {batch, ops::Mul(scope, m, m), ops::Const(scope, {1})}, 0));
  const Output dr = ops::Reshape(scope, ops::MatrixSolve(scope, k, vec_g), shape);
  grad_outputs->push_back(Transposed(scope, dr));
  return scope.status();
}
// y = inv(a) (inv(a^T) with `adjoint`): da = -y^T g y^T, or -y g^T y.
TW_GRAD_FN(MatrixInverseGrad) {
  const Output y = op.output(0), g = grad_inputs[0];
  const bool adjoint = grad_util::Attr<bool>(scope, op, "adjoint");
  grad_outputs->push_back(
      ops::Neg(scope, MatMul(scope, y, MatMul(scope, g, y, adjoint, !adjoint), !adjoint, false)));
  return scope.status();
}
// y = det(a): da = g y inv(a)^T.
TW_GRAD_FN(MatrixDeterminantGrad) {
  const Output a = In(op, 0);
  const Output scale = ops::ExpandDims(
      scope, ops::ExpandDims(scope, ops::Mul(scope, grad_inputs[0], op.output(0)), -1), -1);
  grad_outputs->push_back(
      ops::Mul(scope, scale, ops::MatrixInverse(scope, a, ops::MatrixInverse::Adjoint(true))));
  return scope.status();
}
// (sign, log|det a|): da = g_log inv(a)^T; the sign has none.
TW_GRAD_FN(LogMatrixDeterminantGrad) {
  const Output a = In(op, 0);
  const Output scale = ops::ExpandDims(scope, ops::ExpandDims(scope, grad_inputs[1], -1), -1);
  grad_outputs->push_back(
      ops::Mul(scope, scale, ops::MatrixInverse(scope, a, ops::MatrixInverse::Adjoint(true))));
  return scope.status();
}
// c = solve(a, b): db = solve(a^T, g), da = -db c^T (with adjoint: -c db^T).
TW_GRAD_FN(MatrixSolveGrad) {
  const Output a = In(op, 0), c = op.output(0);
  const bool adjoint = grad_util::Attr<bool>(scope, op, "adjoint");
  const Output db = ops::MatrixSolve(scope, a, grad_inputs[0], ops::MatrixSolve::Adjoint(!adjoint));
  grad_outputs->push_back(ops::Neg(
      scope, adjoint ? MatMul(scope, c, db, false, true) : MatMul(scope, db, c, false, true)));
  grad_outputs->push_back(db);
  return scope.status();
}
// The same through the triangle, da kept to that triangle.
TW_GRAD_FN(MatrixTriangularSolveGrad) {
  const Output a = In(op, 0), c = op.output(0);
  const bool adjoint = grad_util::Attr<bool>(scope, op, "adjoint");
  const bool lower = grad_util::Attr<bool>(scope, op, "lower");
  const Output db = ops::MatrixTriangularSolve(
      scope, a, grad_inputs[0], ops::MatrixTriangularSolve::Lower(lower).Adjoint(!adjoint));
  const Output da = ops::Neg(
      scope, adjoint ? MatMul(scope, c, db, false, true) : MatMul(scope, db, c, false, true));
  grad_outputs->push_back(ops::MatrixBandPart(scope, da, lower ? -1 : 0, lower ? 0 : -1));
  grad_outputs->push_back(db);
  return scope.status();
}
// l = cholesky(a): TF's _CholeskyGrad (Murray, 2016): with
// P = phi(l^T g) (the lower triangle, its diagonal halved),
// da = sym(l^-T P l^-1) / 2 where sym(x) = x + x^T.
TW_GRAD_FN(CholeskyGrad) {
  const Output l = op.output(0), g = grad_inputs[0];
  const Output shape = ops::Shape(scope, l);
  // The identity of l's order, batched: matrix_diag of ones of shape[:-1].
  const Output ones = ops::Fill(scope, ops::StridedSlice(scope, shape, {0}, {-1}, {1}),
                                ops::Cast(scope, ops::Const(scope, 1), l.type()));
  const Output l_inverse = ops::MatrixTriangularSolve(scope, l, ops::MatrixDiag(scope, ones));
  Output middle = MatMul(scope, l, g, true, false);
  middle = ops::MatrixSetDiag(scope, middle,
                              ops::Mul(scope, ops::MatrixDiagPart(scope, middle),
                                       ops::Cast(scope, ops::Const(scope, 0.5), l.type())));
  middle = ops::MatrixBandPart(scope, middle, -1, 0);
  Output da = MatMul(scope, MatMul(scope, l_inverse, middle, true, false), l_inverse, false, false);
  da = ops::AddV2(scope, da, Transposed(scope, da));
  grad_outputs->push_back(ops::Mul(scope, da, ops::Cast(scope, ops::Const(scope, 0.5), l.type())));
  return scope.status();
}

// x / (x^2 + 1e-20): 1 / x away from 0, 0 at 0 (TF's _SafeReciprocal).
Output SafeReciprocal(const Scope& scope, const Output& x) {
  return ops::Mul(
      scope, x,
      ops::Reciprocal(scope, ops::AddV2(scope, ops::Mul(scope, x, x),
                                        ops::Cast(scope, ops::Const(scope, 1e-20), x.type()))));
}

// (e, v) = self_adjoint_eig(a): TF's _SelfAdjointEigV2Grad: with
// f[i][j] = 1 / (e_j - e_i) off the diagonal, da = v (diag(ge) + f * (v^T
// gv)) v^T, symmetrised onto the lower triangle the op reads (its diagonal
// halved). Without v, v is computed again.
TW_GRAD_FN(SelfAdjointEigV2Grad) {
  const Output e = op.output(0), ge = grad_inputs[0];
  Output inner = ops::MatrixDiag(scope, ge);
  Output v;
  if (grad_util::Attr<bool>(scope, op, "compute_v")) {
    v = op.output(1);
    const Output f = ops::MatrixSetDiag(
        scope,
        SafeReciprocal(
            scope, ops::Sub(scope, ops::ExpandDims(scope, e, -2), ops::ExpandDims(scope, e, -1))),
        ops::ZerosLike(scope, e));
    inner =
        ops::AddV2(scope, inner, ops::Mul(scope, f, MatMul(scope, v, grad_inputs[1], true, false)));
  } else {
    v = ops::SelfAdjointEigV2(scope, In(op, 0)).v;
  }
  Output da = MatMul(scope, v, MatMul(scope, inner, v, false, true), false, false);
  da = ops::MatrixBandPart(scope, ops::AddV2(scope, da, Transposed(scope, da)), -1, 0);
  da = ops::MatrixSetDiag(scope, da,
                          ops::Mul(scope, ops::MatrixDiagPart(scope, da),
                                   ops::Cast(scope, ops::Const(scope, 0.5), da.type())));
  grad_outputs->push_back(da);
  return scope.status();
}

// Columns [from, to) of the matrices t of rank `rank` (to -1: to the end).
Output Columns(const Scope& scope, const Output& t, int rank, int64_t from, int64_t to) {
  std::vector<int64_t> begin(rank, 0), size(rank, -1);
  begin[rank - 1] = from;
  if (to >= 0) size[rank - 1] = to - from;
  return ops::Slice(
      scope, t,
      ops::Const(scope, MakeTensorProto<int64_t>(absl::MakeConstSpan(begin), TensorShape({rank}))),
      ops::Const(scope, MakeTensorProto<int64_t>(absl::MakeConstSpan(size), TensorShape({rank}))));
}

// x r^-T for upper-triangular r, by a triangular solve.
Output TimesInverseAdjoint(const Scope& scope, const Output& x, const Output& r) {
  return Transposed(scope, ops::MatrixTriangularSolve(scope, r, Transposed(scope, x),
                                                      ops::MatrixTriangularSolve::Lower(false)));
}
// (q, r) = qr(a) with rows >= columns (TF's _QrGradSquareAndDeepMatrices,
// arXiv:2009.10071): with M = lower(q^T dq - dq^T q + r dr^T - dr r^T),
// da = q (dr + M r^-T) + (dq - q q^T dq) r^-T.
Output QrGradDeep(const Scope& scope, const Output& q, const Output& r, const Output& dq,
                  const Output& dr) {
  const Output qdq = MatMul(scope, q, dq, true, false);
  const Output rdr = MatMul(scope, r, dr, false, true);
  const Output tril =
      ops::MatrixBandPart(scope,
                          ops::AddV2(scope, ops::Sub(scope, qdq, Transposed(scope, qdq)),
                                     ops::Sub(scope, rdr, Transposed(scope, rdr))),
                          -1, 0);
  const Output grad_a =
      MatMul(scope, q, ops::AddV2(scope, dr, TimesInverseAdjoint(scope, tril, r)), false, false);
  const Output grad_b =
      TimesInverseAdjoint(scope, ops::Sub(scope, dq, MatMul(scope, q, qdq, false, false)), r);
  return ops::AddV2(scope, grad_a, grad_b);
}
// Wide matrices reduce to the square case: a = [x, y], r = [u, v] with x
// and u square: dx from (q, u) with dq + y dv^T, dy = q dv. Like TF's, this
// needs static sizes, and full_matrices with more rows than columns is
// not differentiable.
TW_GRAD_FN(QrGrad) {
  const Output q = op.output(0), r = op.output(1), dq = grad_inputs[0], dr = grad_inputs[1];
  const PartialTensorShape& qs = q.shape();
  const PartialTensorShape& rs = r.shape();
  if (qs.unknown_rank() || rs.unknown_rank() || qs.dim_size(qs.dims() - 2) < 0 ||
      rs.dim_size(rs.dims() - 2) < 0 || rs.dim_size(rs.dims() - 1) < 0) {
    return absl::UnimplementedError(absl::StrCat(
        "QrGrad not implemented with dynamic shapes. Received r.shape: ", rs.DebugString()));
  }
  const int64_t rows = qs.dim_size(qs.dims() - 2), cols = rs.dim_size(rs.dims() - 1);
  if (rs.dim_size(rs.dims() - 2) > cols && qs.dim_size(qs.dims() - 1) == rows) {
    return absl::UnimplementedError(absl::StrCat(
        "QrGrad not implemented when nrows > ncols and full_matrices is true. Received r.shape=",
        rs.DebugString()));
  }
  if (rows >= cols) {
    grad_outputs->push_back(QrGradDeep(scope, q, r, dq, dr));
    return scope.status();
  }
  const Output a = In(op, 0);
  const int rank = rs.dims();
  const Output y = Columns(scope, a, rank, rows, -1), u = Columns(scope, r, rank, 0, rows);
  const Output dv = Columns(scope, dr, rank, rows, -1), du = Columns(scope, dr, rank, 0, rows);
  const Output dy = MatMul(scope, q, dv, false, false);
  const Output dx =
      QrGradDeep(scope, q, u, ops::AddV2(scope, dq, MatMul(scope, y, dv, false, true)), du);
  grad_outputs->push_back(ops::ConcatV2(scope, {dx, dy}, -1));
  return scope.status();
}

// x = cholesky_solve(l, rhs): l l^T x = rhs by two triangular solves.
Output CholeskySolve(const Scope& scope, const Output& l, const Output& rhs) {
  const Output y = ops::MatrixTriangularSolve(scope, l, rhs);
  return ops::MatrixTriangularSolve(scope, l, y, ops::MatrixTriangularSolve::Adjoint(true));
}
// x = solve_ls(a, b, l2) (fast): TF's _MatrixSolveLsGrad through the
// Cholesky factor of the regularised Gramian, of the first kind (a^T a +
// l2 I) with at least as many rows as columns, else of the second (a a^T +
// l2 I). Like TF's, not defined for fast=False; the sizes must be static
// here (TF branches at run time).
TW_GRAD_FN(MatrixSolveLsGrad) {
  if (!grad_util::Attr<bool>(scope, op, "fast")) {
    return absl::InvalidArgumentError("Gradient not defined for fast=False");
  }
  const Output a = In(op, 0), b = In(op, 1), g = grad_inputs[0];
  const PartialTensorShape& shape = a.shape();
  if (shape.unknown_rank() || shape.dim_size(shape.dims() - 2) < 0 ||
      shape.dim_size(shape.dims() - 1) < 0) {
    return absl::UnimplementedError(absl::StrCat(
        "MatrixSolveLs's gradient needs the matrix sizes statically, got ", shape.DebugString()));
  }
  const bool first_kind = shape.dim_size(shape.dims() - 2) >= shape.dim_size(shape.dims() - 1);
  const Output l2 = ops::Cast(scope, In(op, 2), a.type());
  Output gramian = first_kind ? MatMul(scope, a, a, true, false) : MatMul(scope, a, a, false, true);
  gramian = ops::MatrixSetDiag(scope, gramian,
                               ops::AddV2(scope, ops::MatrixDiagPart(scope, gramian), l2));
  const Output chol = ops::Cholesky(scope, gramian);
  if (first_kind) {
    const Output x = op.output(0);
    const Output z = CholeskySolve(scope, chol, g);
    const Output xzt = MatMul(scope, x, z, false, true);
    const Output zx_sym = ops::AddV2(scope, xzt, Transposed(scope, xzt));
    grad_outputs->push_back(ops::AddV2(scope,
                                       ops::Neg(scope, MatMul(scope, a, zx_sym, false, false)),
                                       MatMul(scope, b, z, false, true)));
    grad_outputs->push_back(MatMul(scope, a, z, false, false));
  } else {
    const Output grad_b = CholeskySolve(scope, chol, MatMul(scope, a, g, false, false));
    const Output tmp = CholeskySolve(scope, chol, b);
    const Output a1 =
        ops::Neg(scope, MatMul(scope, grad_b, MatMul(scope, tmp, a, true, false), false, false));
    const Output a2 =
        MatMul(scope, tmp, ops::Sub(scope, g, MatMul(scope, a, grad_b, true, false)), false, true);
    grad_outputs->push_back(ops::AddV2(scope, a1, a2));
    grad_outputs->push_back(grad_b);
  }
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// (s, u, v) = svd(a): TF's _SvdGrad (real matrices). With m <= n (else
// on the adjoint, u and v swapped), f[i][j] = 1 / (s_j^2 - s_i^2) off the
// diagonal and v1 v's first m columns:
//   da = u (diag(gs) + (F_u + F_u^T) S + S (F_v + F_v^T)) v1^T
//      + u S^-1 (gv1^T - gv1^T v1 v1^T [- v1^T gv2 v2^T, full]), m < n,
// F_u = f * (u^T gu), F_v = f * (v1^T gv1). Without u and v, they are
// computed again. Static inner sizes are needed, as in TF; with full
// matrices, |m - n| <= 1.
TW_GRAD_FN(SvdGrad) {
  const Output a = In(op, 0);
  const Output gs_mat = ops::MatrixDiag(scope, grad_inputs[0]);
  if (!grad_util::Attr<bool>(scope, op, "compute_uv")) {
    const ops::Svd svd(scope, a);
    grad_outputs->push_back(
        MatMul(scope, svd.u, MatMul(scope, gs_mat, svd.v, false, true), false, false));
    return scope.status();
  }
  const PartialTensorShape& shape = a.shape();
  if (shape.unknown_rank() || shape.dim_size(shape.dims() - 2) < 0 ||
      shape.dim_size(shape.dims() - 1) < 0) {
    return absl::UnimplementedError(
        "SVD gradient has not been implemented for input with unknown inner matrix shape.");
  }
  const int rank = shape.dims();
  int64_t m = shape.dim_size(rank - 2), n = shape.dim_size(rank - 1);
  const bool full = grad_util::Attr<bool>(scope, op, "full_matrices");
  Output s = op.output(0), u = op.output(1), v = op.output(2);
  Output gu = grad_inputs[1], gv = grad_inputs[2];
  const bool adjoint = m > n;
  if (adjoint) {
    std::swap(m, n);
    std::swap(u, v);
    std::swap(gu, gv);
  }
  if (full && n - m > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True. "
        "Received: m=",
        m, " and n=", n));
  }
  const Output s_mat = ops::MatrixDiag(scope, s);
  const Output s2 = ops::Square(scope, s);
  const Output f = ops::MatrixSetDiag(
      scope,
      SafeReciprocal(
          scope, ops::Sub(scope, ops::ExpandDims(scope, s2, -2), ops::ExpandDims(scope, s2, -1))),
      ops::ZerosLike(scope, s));
  const Output v1 = Columns(scope, v, rank, 0, m), gv1 = Columns(scope, gv, rank, 0, m);
  const Output f_u = ops::Mul(scope, f, MatMul(scope, u, gu, true, false));
  const Output f_v = ops::Mul(scope, f, MatMul(scope, v1, gv1, true, false));
  const Output middle = ops::AddV2(
      scope,
      ops::AddV2(
          scope, gs_mat,
          MatMul(scope, ops::AddV2(scope, f_u, Transposed(scope, f_u)), s_mat, false, false)),
      MatMul(scope, s_mat, ops::AddV2(scope, f_v, Transposed(scope, f_v)), false, false));
  Output da = MatMul(scope, u, MatMul(scope, middle, v1, false, true), false, false);
  if (m != n) {
    const Output gv1t = Transposed(scope, gv1);
    Output rest = ops::Sub(scope, gv1t,
                           MatMul(scope, MatMul(scope, gv1t, v1, false, false), v1, false, true));
    if (full) {
      const Output v2 = Columns(scope, v, rank, m, n), gv2 = Columns(scope, gv, rank, m, n);
      rest = ops::Sub(scope, rest,
                      MatMul(scope, MatMul(scope, v1, gv2, true, false), v2, false, true));
    }
    const Output s_inv = ops::MatrixDiag(scope, SafeReciprocal(scope, s));
    da = ops::AddV2(scope, da,
                    MatMul(scope, MatMul(scope, u, s_inv, false, false), rest, false, false));
  }
  grad_outputs->push_back(adjoint ? Transposed(scope, da) : da);
  return scope.status();
}

// ---- Banded and tridiagonal systems, as TF's linalg_grad.py.

// x[..., begin:end] along `axis` (-1 or -2); end 0: to the end.
Output SliceAlong(const Scope& scope, const Output& x, int axis, int64_t begin, int64_t end) {
  const int64_t open_end = end == 0 ? 1 : 0;
  if (axis == -1) {
    return ops::StridedSlice(scope, x, {0, begin}, {0, end}, {1, 1},
                             ops::StridedSlice::EllipsisMask(1).EndMask(open_end << 1));
  }
  return ops::StridedSlice(scope, x, {0, begin, 0}, {0, end, 0}, {1, 1, 1},
                           ops::StridedSlice::EllipsisMask(1).EndMask((open_end << 1) | 4));
}
// x moved one place along `axis`, a zero coming in: `up`, y[i] = x[i + 1]
// (TF's _LeftShift); else y[i] = x[i - 1] (_RightShift).
Output Shifted(const Scope& scope, const Output& x, int axis, bool up) {
  const Output zeros = ops::ZerosLike(scope, SliceAlong(scope, x, axis, 0, 1));
  return up ? ops::ConcatV2(scope, {SliceAlong(scope, x, axis, 1, 0), zeros}, axis)
            : ops::ConcatV2(scope, {zeros, SliceAlong(scope, x, axis, 0, -1)}, axis);
}
// sum(a * b, -1) kept as a row: [..., 1, M] from [..., M, K].
Output RowOfSums(const Scope& scope, const Output& a, const Output& b) {
  return ops::ExpandDims(scope, ops::Sum(scope, ops::Mul(scope, a, b), -1), -2);
}
// `grad` of an input whose batch dimensions (all but the last two) were
// broadcast against `other`'s, summed back to `input`'s shape.
Output UnbroadcastBatch(const Scope& scope, const Output& grad, const Output& input,
                        const Output& other) {
  const Output shape = ops::Shape(scope, input);
  const auto batch = [&](const Output& s) { return ops::StridedSlice(scope, s, {0}, {-2}, {1}); };
  const ops::BroadcastGradientArgs axes(scope, batch(shape), batch(ops::Shape(scope, other)));
  return ops::Reshape(scope, ops::Sum(scope, grad, axes.r0), shape);
}

// x = banded_triangular_solve(a, b): as MatrixTriangularSolve's, da read
// back into a's bands (matrix_diag_part, LEFT_RIGHT), the broadcast batch
// dimensions summed.
TW_GRAD_FN(BandedTriangularSolveGrad) {
  const Output a = In(op, 0), b = In(op, 1), c = op.output(0);
  const bool adjoint = grad_util::Attr<bool>(scope, op, "adjoint");
  const bool lower = grad_util::Attr<bool>(scope, op, "lower");
  const Output db = ops::BandedTriangularSolve(
      scope, a, grad_inputs[0], ops::BandedTriangularSolve::Lower(lower).Adjoint(!adjoint));
  const Output full = ops::Neg(
      scope, adjoint ? MatMul(scope, c, db, false, true) : MatMul(scope, db, c, false, true));
  const Output bands_below = ops::Sub(
      scope, ops::StridedSlice(scope, ops::Shape(scope, a), {-2}, {-1}, {1}), ops::Const(scope, 1));
  const Output zero = ops::Const(scope, {0});
  const Output k = lower ? ops::ConcatV2(scope, {ops::Neg(scope, bands_below), zero}, 0)
                         : ops::ConcatV2(scope, {zero, bands_below}, 0);
  const Output da = ops::MatrixDiagPartV3(scope, full, k, Zero(scope, full),
                                          ops::MatrixDiagPartV3::Align("LEFT_RIGHT"));
  grad_outputs->push_back(UnbroadcastBatch(scope, da, a, b));
  grad_outputs->push_back(UnbroadcastBatch(scope, db, b, a));
  return scope.status();
}
// x = tridiagonal_solve(diags, rhs): drhs solves the transposed system
// (its superdiagonal the subdiagonal moved up, its subdiagonal the
// superdiagonal moved down), ddiags = -(the three diagonals of drhs x^T).
TW_GRAD_FN(TridiagonalSolveGrad) {
  const Output diags = In(op, 0), x = op.output(0);
  const Output super = SliceAlong(scope, diags, -2, 0, 1);
  const Output main = SliceAlong(scope, diags, -2, 1, 2);
  const Output sub = SliceAlong(scope, diags, -2, 2, 3);
  const Output transposed = ops::ConcatV2(
      scope, {Shifted(scope, sub, -1, true), main, Shifted(scope, super, -1, false)}, -2);
  const Output drhs = ops::TridiagonalSolve(
      scope, transposed, grad_inputs[0],
      ops::TridiagonalSolve::PartialPivoting(grad_util::Attr<bool>(scope, op, "partial_pivoting"))
          .PerturbSingular(grad_util::Attr<bool>(scope, op, "perturb_singular")));
  const Output three =
      ops::ConcatV2(scope,
                    {RowOfSums(scope, drhs, Shifted(scope, x, -2, true)), RowOfSums(scope, drhs, x),
                     RowOfSums(scope, drhs, Shifted(scope, x, -2, false))},
                    -2);
  grad_outputs->push_back(ops::Neg(scope, three));
  grad_outputs->push_back(drhs);
  return scope.status();
}
// y = tridiagonal_matmul(super, main, sub, rhs), y[i] = sub[i] rhs[i-1] +
// main[i] rhs[i] + super[i] rhs[i+1].
TW_GRAD_FN(TridiagonalMatMulGrad) {
  const Output g = grad_inputs[0];
  const auto conj = [&](const Output& t) { return grad_util::ConjIfComplex(scope, t); };
  const Output rhs = conj(In(op, 3));
  grad_outputs->push_back(RowOfSums(scope, Shifted(scope, rhs, -2, true), g));
  grad_outputs->push_back(RowOfSums(scope, rhs, g));
  grad_outputs->push_back(RowOfSums(scope, Shifted(scope, rhs, -2, false), g));
  const auto column = [&](int i) { return conj(Transposed(scope, In(op, i))); };
  grad_outputs->push_back(ops::AddN(
      scope,
      {Shifted(scope, ops::Mul(scope, column(0), g), -2, false), ops::Mul(scope, column(1), g),
       Shifted(scope, ops::Mul(scope, column(2), g), -2, true)}));
  return scope.status();
}

TW_REGISTER_GRADIENT("MatrixDiag", MatrixDiagGrad);
TW_REGISTER_GRADIENT("MatrixDiagV2", MatrixDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagV3", MatrixDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagPart", MatrixDiagPartGrad);
TW_REGISTER_GRADIENT("MatrixDiagPartV2", MatrixDiagPartV2Grad);
TW_REGISTER_GRADIENT("MatrixDiagPartV3", MatrixDiagPartV2Grad);
TW_REGISTER_GRADIENT("MatrixSetDiag", MatrixSetDiagGrad);
TW_REGISTER_GRADIENT("MatrixSetDiagV2", MatrixSetDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixSetDiagV3", MatrixSetDiagV2Grad);
TW_REGISTER_GRADIENT("MatrixBandPart", MatrixBandPartGrad);
TW_REGISTER_GRADIENT("Diag", DiagGrad);
TW_REGISTER_GRADIENT("DiagPart", DiagPartGrad);
TW_REGISTER_GRADIENT("MatrixInverse", MatrixInverseGrad);
TW_REGISTER_GRADIENT("MatrixSquareRoot", MatrixSquareRootGrad);
TW_REGISTER_GRADIENT("MatrixDeterminant", MatrixDeterminantGrad);
TW_REGISTER_GRADIENT("LogMatrixDeterminant", LogMatrixDeterminantGrad);
TW_REGISTER_GRADIENT("MatrixSolve", MatrixSolveGrad);
TW_REGISTER_GRADIENT("MatrixTriangularSolve", MatrixTriangularSolveGrad);
TW_REGISTER_GRADIENT("Cholesky", CholeskyGrad);
TW_REGISTER_GRADIENT("SelfAdjointEigV2", SelfAdjointEigV2Grad);
TW_REGISTER_GRADIENT("Qr", QrGrad);
TW_REGISTER_GRADIENT("MatrixSolveLs", MatrixSolveLsGrad);
TW_REGISTER_GRADIENT("Svd", SvdGrad);
TW_REGISTER_GRADIENT("BandedTriangularSolve", BandedTriangularSolveGrad);
TW_REGISTER_GRADIENT("TridiagonalSolve", TridiagonalSolveGrad);
TW_REGISTER_GRADIENT("TridiagonalMatMul", TridiagonalMatMulGrad);

}  // namespace
}  // namespace towerflow
