// Gradients of the rearrangements of ops/manip_ops.cc and of
// SparseTensorDenseAdd, SparseToDense and SparseFillEmptyRows, as TF's
// manip_grad.py, array_grad.py and sparse_grad.py: each moves g back to
// where its input's elements came from.
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"
#include "ops/ops.h"

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

TW_REGISTER_GRADIENT("Roll", RollGrad);
TW_REGISTER_GRADIENT("ReverseSequence", ReverseSequenceGrad);
TW_REGISTER_GRADIENT("SparseTensorDenseAdd", SparseTensorDenseAddGrad);
TW_REGISTER_GRADIENT("SparseToDense", SparseToDenseGrad);
TW_REGISTER_GRADIENT("SparseFillEmptyRows", SparseFillEmptyRowsGrad);
TW_REGISTER_NO_GRADIENT("LinSpace");  // as TF's math_grad.py

}  // namespace
}  // namespace towerflow
