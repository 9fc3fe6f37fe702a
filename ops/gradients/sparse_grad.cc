// Gradients of the SparseTensor ops of ops/sparse_ops.cc that TF's
// sparse_grad.py differentiates (SparseReorder, SparseAdd, SparseSlice,
// SparseSoftmax, SparseDenseCwiseMul/Div) and of SparseMatMul (math_grad.py),
// each as TF builds it. The indices and shapes get none.
#include <vector>

#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/sparse_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// Each input value's gradient is g where its entry went: TF reorders the
// entry numbers the same way and inverts that permutation.
TW_GRAD_FN(SparseReorderGrad) {
  const Output indices = In(op, 0);
  const Output entries = ops::Range(scope, 0, ops::Gather(scope, ops::Shape(scope, indices), 0), 1);
  const Output moved = ops::SparseReorder(scope, indices, entries, In(op, 2)).output_values;
  *grad_outputs = {NoGradient(),
                   ops::Gather(scope, grad_inputs[1], ops::InvertPermutation(scope, moved)),
                   NoGradient()};
  return scope.status();
}

TW_GRAD_FN(SparseAddGrad) {
  const ops::SparseAddGrad g(scope, grad_inputs[1], In(op, 0), In(op, 3), op.output(0));
  *grad_outputs = {NoGradient(), g.a_val_grad, NoGradient(), NoGradient(),
                   g.b_val_grad, NoGradient(), NoGradient()};
  return scope.status();
}

TW_GRAD_FN(SparseSliceGrad) {
  const Output g = ops::SparseSliceGrad(scope, grad_inputs[1], In(op, 0), In(op, 3), op.output(0));
  *grad_outputs = {NoGradient(), g, NoGradient(), NoGradient(), NoGradient()};
  return scope.status();
}

// As SoftmaxGrad over the present entries: (g - sum(g * y)) * y, the sum per
// row by SparseReduceSum over the last dimension.
TW_GRAD_FN(SparseSoftmaxGrad) {
  const Output indices = In(op, 0), shape = In(op, 2), y = op.output(0), g = grad_inputs[0];
  const Output row_sums =
      ops::Neg(scope, ops::SparseReduceSum(scope, indices, ops::Mul(scope, y, g), shape, {-1},
                                           ops::SparseReduceSum::KeepDims(true)));
  const Output shifted = ops::SparseDenseCwiseAdd(scope, indices, g, shape, row_sums);
  *grad_outputs = {NoGradient(), ops::Mul(scope, shifted, y), NoGradient()};
  return scope.status();
}

// x (sparse) times or over y (dense, broadcast): y's value at each entry is
// y at the entry's index scaled down to y's shape (0 along broadcast dims);
// dy sums each entry's contribution there (SparseTensorDenseAdd onto 0s).
absl::Status SparseDenseCwiseMulOrDivGrad(const Scope& scope, const Operation& op,
                                          const std::vector<Output>& grad_inputs,
                                          std::vector<Output>* grad_outputs, bool is_mul) {
  const Output x_indices = In(op, 0), x_values = In(op, 1), x_shape = In(op, 2), y = In(op, 3);
  const Output g = grad_inputs[0];
  const Output y_shape = ops::Cast(scope, ops::Shape(scope, y), DT_INT64);
  const Output added = ops::ExpandDims(
      scope, ops::Sub(scope, ops::Size(scope, x_shape), ops::Size(scope, y_shape)), 0);
  const Output padded_y_shape =
      ops::ConcatV2(scope, {ops::Fill(scope, added, ops::Const(scope, int64_t{1})), y_shape}, 0);
  const Output scaling = ops::FloorDiv(scope, x_shape, padded_y_shape);
  const Output scaled = ops::Slice(scope, ops::FloorDiv(scope, x_indices, scaling),
                                   ops::ConcatV2(scope, {ops::Const(scope, {0}), added}, 0),
                                   ops::Const(scope, {-1, -1}));
  const Output dense_values = ops::GatherNd(scope, y, scaled);
  Output dx, dy_values;
  if (is_mul) {
    dx = ops::Mul(scope, g, dense_values);
    dy_values = ops::Mul(scope, g, x_values);
  } else {
    dx = ops::Div(scope, g, dense_values);
    dy_values = ops::Mul(
        scope, g, ops::Div(scope, ops::Neg(scope, x_values), ops::Square(scope, dense_values)));
  }
  const Output dy =
      ops::SparseTensorDenseAdd(scope, scaled, dy_values, y_shape, ops::ZerosLike(scope, y));
  *grad_outputs = {NoGradient(), dx, NoGradient(), dy};
  return scope.status();
}

TW_GRAD_FN(SparseDenseCwiseMulGrad) {
  return SparseDenseCwiseMulOrDivGrad(scope, op, grad_inputs, grad_outputs, true);
}
TW_GRAD_FN(SparseDenseCwiseDivGrad) {
  return SparseDenseCwiseMulOrDivGrad(scope, op, grad_inputs, grad_outputs, false);
}

// SparseMatMul's gradients are SparseMatMuls too (float products, cast back
// to a bfloat16 operand's type), as MatMul's.
TW_GRAD_FN(SparseMatMulGrad) {
  const bool ta = grad_util::Attr<bool>(scope, op, "transpose_a");
  const bool tb = grad_util::Attr<bool>(scope, op, "transpose_b");
  const Output a = In(op, 0), b = In(op, 1), g = grad_inputs[0];
  const auto product = [&](Output x, Output y, bool tx, bool ty, DataType type) {
    Output p = ops::SparseMatMul(scope, x, y, ops::SparseMatMul::TransposeA(tx).TransposeB(ty));
    return type == DT_FLOAT ? p : ops::Cast(scope, p, type);
  };
  const DataType a_type = a.type(), b_type = b.type();
  if (!ta && !tb) {
    *grad_outputs = {product(g, b, false, true, a_type), product(a, g, true, false, b_type)};
  } else if (!ta && tb) {
    *grad_outputs = {product(g, b, false, false, a_type), product(g, a, true, false, b_type)};
  } else if (ta && !tb) {
    *grad_outputs = {product(b, g, false, true, a_type), product(a, g, false, false, b_type)};
  } else {
    *grad_outputs = {product(b, g, true, true, a_type), product(g, a, true, true, b_type)};
  }
  return scope.status();
}

}  // namespace

TW_REGISTER_GRADIENT("SparseReorder", SparseReorderGrad);
TW_REGISTER_GRADIENT("SparseAdd", SparseAddGrad);
TW_REGISTER_GRADIENT("SparseSlice", SparseSliceGrad);
TW_REGISTER_GRADIENT("SparseSoftmax", SparseSoftmaxGrad);
TW_REGISTER_GRADIENT("SparseDenseCwiseMul", SparseDenseCwiseMulGrad);
TW_REGISTER_GRADIENT("SparseDenseCwiseDiv", SparseDenseCwiseDivGrad);
TW_REGISTER_GRADIENT("SparseMatMul", SparseMatMulGrad);
TW_REGISTER_NO_GRADIENT("SparseConcat");
TW_REGISTER_NO_GRADIENT("SparseAddGrad");
TW_REGISTER_NO_GRADIENT("EditDistance");
// The tf.sets ops, as in TF.
TW_REGISTER_NO_GRADIENT("SetSize");
TW_REGISTER_NO_GRADIENT("DenseToDenseSetOperation");
TW_REGISTER_NO_GRADIENT("DenseToSparseSetOperation");
TW_REGISTER_NO_GRADIENT("SparseToSparseSetOperation");
TW_REGISTER_NO_GRADIENT("SparseCross");  // as in TF, and its V2 and hashed forms
TW_REGISTER_NO_GRADIENT("SparseCrossV2");
TW_REGISTER_NO_GRADIENT("SparseCrossHashed");

}  // namespace towerflow
