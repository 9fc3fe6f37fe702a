// Gradients of the rearrangements of ops/manip_ops.cc (and of NextAfter,
// which TF treats as the identity in x1), of ConjugateTranspose and of
// SparseTensorDenseAdd, SparseToDense, SparseFillEmptyRows,
// RaggedTensorToTensor, RaggedTensorToSparse and RaggedGather, as TF's
// manip_grad.py, array_grad.py and sparse_grad.py: each moves g back to
// where its input's elements came from.
#include <string>
#include <vector>

#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/manip_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/sparse_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// y = roll(x, shift, axis): dx = roll(g, -shift, axis).
TW_GRAD_FN(RollGrad) {
  grad_outputs->push_back(ops::Roll(scope, grad_inputs[0], ops::Neg(scope, In(op, 1)), In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// ReverseSequence is its own inverse: dx = reverse_sequence(g) alike.
TW_GRAD_FN(ReverseSequenceGrad) {
  const int64_t seq_dim = grad_util::Attr<int64_t>(scope, op, "seq_dim");
  const int64_t batch_dim = grad_util::Attr<int64_t>(scope, op, "batch_dim");
  grad_outputs->push_back(ops::ReverseSequence(scope, grad_inputs[0], In(op, 1), seq_dim,
                                               ops::ReverseSequence::BatchDim(batch_dim)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// out = b + a: da_values = g at a's indices, db = g.
TW_GRAD_FN(SparseTensorDenseAddGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::GatherNd(scope, grad_inputs[0], In(op, 0)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(grad_inputs[0]);
  return scope.status();
}

// y = sparse_to_dense(indices, shape, values, default): values' gradient is
// g at the indices (summed to a scalar values), default's the rest of g.
// Indices as rows of rank 1 for a vector output, as TF's kernel reads them
// (TF's _SparseToDenseGrad gathers them as one row there).
TW_GRAD_FN(SparseToDenseGrad) {
  const Output g = grad_inputs[0], indices = In(op, 0), values = In(op, 2);
  const Output rank = ops::Size(scope, ops::Shape(scope, g));
  const Output rows = ops::Reshape(scope, indices, ops::Pack(scope, {ops::Const(scope, -1), rank}));
  Output picked = ops::GatherNd(scope, g, rows);
  const Output picked_sum =
      ops::Sum(scope, picked, ops::Range(scope, 0, ops::Rank(scope, picked), 1));
  const PartialTensorShape& value_shape = values.shape();
  if (value_shape.dims() == 0) picked = picked_sum;  // one value for every index
  const Output all = ops::Sum(scope, g, ops::Range(scope, 0, ops::Rank(scope, g), 1));
  *grad_outputs = {NoGradient(), NoGradient(), picked, ops::Sub(scope, all, picked_sum)};
  return scope.status();
}
// y = sparse_fill_empty_rows(...): the kept values' gradient and the filled
// ones' sum, by SparseFillEmptyRowsGrad.
TW_GRAD_FN(SparseFillEmptyRowsGrad) {
  const ops::SparseFillEmptyRowsGrad g(scope, op.output(3), grad_inputs[1]);
  *grad_outputs = {NoGradient(), g.d_values, NoGradient(), g.d_default_value};
  return scope.status();
}

// y = ragged fill_empty_rows(...): the same by RaggedFillEmptyRowsGrad.
TW_GRAD_FN(RaggedFillEmptyRowsGrad) {
  const ops::RaggedFillEmptyRowsGrad g(scope, op.output(3), grad_inputs[1]);
  *grad_outputs = {NoGradient(), g.d_values, NoGradient(), g.d_default_value};
  return scope.status();
}

// TF's: the values' gradient is the sparse values' reshaped to the values'
// shape; the splits have none.
TW_GRAD_FN(RaggedTensorToSparseGrad) {
  const int ragged = op.num_inputs() - 1;
  for (int i = 0; i < ragged; ++i) grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::Reshape(scope, grad_inputs[1], ops::Shape(scope, In(op, ragged))));
  return scope.status();
}

// TF's: the gathered values' gradient goes back, as IndexedSlices, to the
// values each gathered row covers: row i of params spans values
// [c[i], c[i + 1]) of c, the splits composed level by level.
absl::Status RaggedGatherGrad(const Scope& scope, const Operation& op,
                              const std::vector<Output>& grad_inputs,
                              std::vector<Gradient>* grad_outputs) {
  const int ragged = op.num_inputs() - 2;
  Output combined = In(op, 0);
  for (int k = 1; k < ragged; ++k) combined = ops::Gather(scope, In(op, k), combined);
  const Output flat = ops::Reshape(scope, In(op, ragged + 1), {-1});
  const Output one = ops::Cast(scope, ops::Const(scope, 1), combined.type());
  const ops::RaggedRange rows(scope, ops::Gather(scope, combined, flat),
                              ops::Gather(scope, ops::Slice(scope, combined, {1}, {-1}), flat),
                              one);
  for (int k = 0; k < ragged; ++k) grad_outputs->push_back(Gradient());
  const Output values = In(op, ragged);
  grad_outputs->push_back(
      IndexedSlices{grad_inputs.back(), rows.rt_dense_values, ops::Shape(scope, values)});
  grad_outputs->push_back(Gradient());
  return scope.status();
}

// TF's: the same conversion of each value's index (-1 for padding) says
// where each output element came from; a value's gradient sums g there, the
// default value's sums g over the padding (and over what it was broadcast
// to).
TW_GRAD_FN(RaggedTensorToTensorGrad) {
  const Output values = In(op, 1);
  const Output fill = In(op, 2);
  const std::vector<std::string> types =
      grad_util::Attr<std::vector<std::string>>(scope, op, "row_partition_types");
  const int ragged =
      static_cast<int>(types.size()) - (!types.empty() && types[0] == "FIRST_DIM_SIZE" ? 1 : 0);
  const Output g = grad_inputs[0];
  std::vector<Output> partitions;
  for (int i = 3; i < op.num_inputs(); ++i) partitions.push_back(In(op, i));
  const Output n = ops::Slice(scope, ops::Shape(scope, values), {0}, {1});
  const Output positions = ops::Squeeze(scope, n);
  const Output index =
      ops::RaggedTensorToTensor(scope, ops::Slice(scope, ops::Shape(scope, g), {0}, {ragged + 1}),
                                ops::Range(scope, 0, positions, 1), -1, partitions, types);
  const Output padding = ops::Equal(scope, index, -1);
  // Each output block as a row: [elements, value's shape].
  const Output inner = ops::Slice(scope, ops::Shape(scope, values), {1}, {-1});
  const Output rows =
      ops::Reshape(scope, g, ops::ConcatV2(scope, {ops::Const(scope, {-1}), inner}, 0));
  const Output flat_index =
      ops::Reshape(scope, ops::SelectV2(scope, padding, positions, index), {-1});
  const Output sums =
      ops::UnsortedSegmentSum(scope, rows, flat_index, ops::Add(scope, positions, 1));
  const Output values_grad =
      ops::Slice(scope, sums, ops::ZerosLike(scope, ops::Shape(scope, values)),
                 ops::ConcatV2(scope, {n, ops::Fill(scope, ops::Shape(scope, inner), -1)}, 0));
  const Output pad_rows = ops::Sum(
      scope,
      ops::Mul(scope, rows,
               ops::Cast(scope,
                         ops::Reshape(
                             scope, padding,
                             ops::ConcatV2(
                                 scope, {ops::Const(scope, {-1}), ops::OnesLike(scope, inner)}, 0)),
                         g.type())),
      0);
  const ops::BroadcastGradientArgs reduce(scope, ops::Shape(scope, fill), inner);
  const Output fill_grad =
      ops::Reshape(scope, ops::Sum(scope, pad_rows, reduce.r0), ops::Shape(scope, fill));
  grad_outputs->assign(op.num_inputs(), NoGradient());
  (*grad_outputs)[1] = values_grad;
  (*grad_outputs)[2] = fill_grad;
  return scope.status();
}

// TF's: B's gradient is A (adjoint flipped) times g; a value's is the dot
// product of g's row and B's row that it joined.
// y = sparse_reduce_sum(indices, values, shape, axes): each value's gradient
// is y's gradient at its entry with the reduced coordinates dropped (TF's
// _SparseReduceSumGrad: indices // (shape // kept shape) into the gradient
// reshaped to the kept dims).
TW_GRAD_FN(SparseReduceSumGrad) {
  const Output indices = In(op, 0), shape = In(op, 2), axes = In(op, 3);
  const Output rank = ops::Size(scope, shape);
  const Output canonical = grad_util::CanonicalAxes(scope, ops::Reshape(scope, axes, {-1}), rank);
  const Output marked = ops::Sum(scope, ops::OneHot(scope, canonical, rank, 1, 0), 0);
  const Output kept =
      ops::SelectV2(scope, ops::Greater(scope, marked, 0), ops::OnesLike(scope, shape), shape);
  const Output scale = ops::FloorDiv(scope, shape, kept);
  const Output g = ops::Reshape(scope, grad_inputs[0], kept);
  *grad_outputs = {NoGradient(), ops::GatherNd(scope, g, ops::FloorDiv(scope, indices, scale)),
                   NoGradient(), NoGradient()};
  return scope.status();
}
TW_GRAD_FN(SparseTensorDenseMatMulGrad) {
  const bool adjoint_a = grad_util::Attr<bool>(scope, op, "adjoint_a");
  const bool adjoint_b = grad_util::Attr<bool>(scope, op, "adjoint_b");
  const Output indices = In(op, 0);
  const Output b = In(op, 3);
  const Output g = grad_inputs[0];
  Output b_grad = ops::SparseTensorDenseMatMul(scope, indices, In(op, 1), In(op, 2), g,
                                               ops::SparseTensorDenseMatMul::AdjointA(!adjoint_a));
  if (adjoint_b) b_grad = ops::Transpose(scope, b_grad, {1, 0});
  const Output rows = ops::Reshape(scope, ops::Slice(scope, indices, {0, 0}, {-1, 1}), {-1});
  const Output cols = ops::Reshape(scope, ops::Slice(scope, indices, {0, 1}, {-1, 1}), {-1});
  const Output parts_g = ops::GatherV2(scope, g, adjoint_a ? cols : rows, 0);
  const Output parts_b = ops::GatherV2(scope, adjoint_b ? ops::Transpose(scope, b, {1, 0}) : b,
                                       adjoint_a ? rows : cols, 0);
  const Output values_grad = ops::Sum(scope, ops::Mul(scope, parts_g, parts_b), 1);
  *grad_outputs = {NoGradient(), values_grad, NoGradient(), b_grad};
  return scope.status();
}

// y = conj(transpose(x, perm)): dx = conj(transpose(g, inverse perm)).
TW_GRAD_FN(ConjugateTransposeGrad) {
  const Output g = grad_inputs[0];
  const Output inverse = ops::InvertPermutation(scope, In(op, 1));
  const DataType t = g.type();
  if (t == DT_COMPLEX64 || t == DT_COMPLEX128) {
    grad_outputs->push_back(ops::ConjugateTranspose(scope, g, inverse));
  } else {
    grad_outputs->push_back(ops::Transpose(scope, g, inverse));
  }
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// y = nextafter(x1, x2): TF's _NextAfterGrad, dx1 = g (summed back to x1's
// shape), dx2 = 0.
TW_GRAD_FN(NextAfterGrad) {
  const Output x1 = In(op, 0), x2 = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, g, x1, x2));
  grad_outputs->push_back(ops::ZerosLike(scope, x2));
  return scope.status();
}

TW_REGISTER_GRADIENT("Roll", RollGrad);
TW_REGISTER_GRADIENT("SparseReduceSum", SparseReduceSumGrad);
TW_REGISTER_GRADIENT("SparseTensorDenseMatMul", SparseTensorDenseMatMulGrad);
TW_REGISTER_GRADIENT("RaggedTensorToTensor", RaggedTensorToTensorGrad);
TW_REGISTER_GRADIENT("RaggedTensorToSparse", RaggedTensorToSparseGrad);
TW_REGISTER_GRADIENT("RaggedGather", RaggedGatherGrad);
TW_REGISTER_GRADIENT("ReverseSequence", ReverseSequenceGrad);
TW_REGISTER_GRADIENT("SparseTensorDenseAdd", SparseTensorDenseAddGrad);
TW_REGISTER_GRADIENT("SparseToDense", SparseToDenseGrad);
TW_REGISTER_GRADIENT("SparseFillEmptyRows", SparseFillEmptyRowsGrad);
TW_REGISTER_GRADIENT("RaggedFillEmptyRows", RaggedFillEmptyRowsGrad);
TW_REGISTER_GRADIENT("ConjugateTranspose", ConjugateTransposeGrad);
TW_REGISTER_GRADIENT("NextAfter", NextAfterGrad);
TW_REGISTER_NO_GRADIENT("LinSpace");  // as TF's math_grad.py
TW_REGISTER_NO_GRADIENT("ApproximateEqual");

}  // namespace
}  // namespace towerflow
