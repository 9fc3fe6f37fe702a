// Gradients of the rearrangements of ops/manip_ops.cc and of
// SparseTensorDenseAdd, as TF's manip_grad.py, array_grad.py and
// sparse_grad.py: each moves g back to where its input's elements came from.
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

TW_REGISTER_GRADIENT("Roll", RollGrad);
TW_REGISTER_GRADIENT("ReverseSequence", ReverseSequenceGrad);
TW_REGISTER_GRADIENT("SparseTensorDenseAdd", SparseTensorDenseAddGrad);
TW_REGISTER_NO_GRADIENT("LinSpace");  // as TF's math_grad.py

}  // namespace
}  // namespace towerflow
