// Gradients of the TensorArray ops, as TF's tensor_array_grad.py: each
// works on the gradient array of (handle, source) (TensorArrayGradV3),
// writing there what a forward read gave and reading back what a forward
// write took. The flows order them: a read's gradient writes after the
// gradient array exists, a write's gradient reads after the writes of the
// gradients downstream of it (whose flow is its flow_out's gradient).
// `source` names the gradient computation (the "gradients" name scope the
// builder opened), so two computations keep apart arrays, as in TF.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// TF's _GetGradSource: the op name's path up to its first component that
// starts with "gradients".
std::string GradSource(const Scope& scope) {
  const std::string name = scope.GetUniqueNameForOp("TensorArrayGrad");
  std::vector<std::string> parts = absl::StrSplit(name, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (absl::StartsWith(parts[i], "gradients")) {
      parts.resize(i + 1);
      return absl::StrJoin(parts, "/");
    }
  }
  return "gradients";
}

// The gradient array of `handle`, made once `flow` is ready.
ops::TensorArrayGradV3 GradArray(const Scope& scope, const Output& handle, const Output& flow) {
  return ops::TensorArrayGradV3(scope, handle, flow, GradSource(scope));
}

// value = read(index): the gradient array gets g at index.
TW_GRAD_FN(TensorArrayReadGrad) {
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), In(op, 2));
  const Output flow =
      ops::TensorArrayWriteV3(scope, g.grad_handle, In(op, 1), grad_inputs[0], g.flow_out);
  *grad_outputs = {NoGradient(), NoGradient(), flow};
  return scope.status();
}
// flow_out = write(index, value): value's gradient is the gradient array's
// element at index, once the writes behind flow_out's gradient are done.
TW_GRAD_FN(TensorArrayWriteGrad) {
  const Output flow_grad = grad_inputs[0];
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), flow_grad);
  const DataType dtype = grad_util::Attr<DataType>(scope, op, "T");
  const Output value = ops::TensorArrayReadV3(scope, g.grad_handle, In(op, 1), g.flow_out, dtype);
  *grad_outputs = {NoGradient(), NoGradient(), value, flow_grad};
  return scope.status();
}
// value = gather(indices): the gradient array gets g's rows at indices.
TW_GRAD_FN(TensorArrayGatherGrad) {
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), In(op, 2));
  const Output flow =
      ops::TensorArrayScatterV3(scope, g.grad_handle, In(op, 1), grad_inputs[0], g.flow_out);
  *grad_outputs = {NoGradient(), NoGradient(), flow};
  return scope.status();
}
// flow_out = scatter(indices, value): value's gradient gathers the
// gradient array at indices.
TW_GRAD_FN(TensorArrayScatterGrad) {
  const Output flow_grad = grad_inputs[0];
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), flow_grad);
  const DataType dtype = grad_util::Attr<DataType>(scope, op, "T");
  const Output value = ops::TensorArrayGatherV3(scope, g.grad_handle, In(op, 1), g.flow_out, dtype);
  *grad_outputs = {NoGradient(), NoGradient(), value, flow_grad};
  return scope.status();
}
// value, lengths = concat(): the gradient array gets g split by lengths.
TW_GRAD_FN(TensorArrayConcatGrad) {
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), In(op, 1));
  const Output flow =
      ops::TensorArraySplitV3(scope, g.grad_handle, grad_inputs[0], op.output(1), g.flow_out);
  *grad_outputs = {NoGradient(), flow};
  return scope.status();
}
// flow_out = split(value, lengths): value's gradient concatenates the
// gradient array.
TW_GRAD_FN(TensorArraySplitGrad) {
  const Output flow_grad = grad_inputs[0];
  const ops::TensorArrayGradV3 g = GradArray(scope, In(op, 0), flow_grad);
  const DataType dtype = grad_util::Attr<DataType>(scope, op, "T");
  const ops::TensorArrayConcatV3 value(scope, g.grad_handle, g.flow_out, dtype);
  *grad_outputs = {NoGradient(), value.value, NoGradient(), flow_grad};
  return scope.status();
}

TW_REGISTER_GRADIENT("TensorArrayReadV3", TensorArrayReadGrad);
TW_REGISTER_GRADIENT("TensorArrayWriteV3", TensorArrayWriteGrad);
TW_REGISTER_GRADIENT("TensorArrayGatherV3", TensorArrayGatherGrad);
TW_REGISTER_GRADIENT("TensorArrayScatterV3", TensorArrayScatterGrad);
TW_REGISTER_GRADIENT("TensorArrayConcatV3", TensorArrayConcatGrad);
TW_REGISTER_GRADIENT("TensorArraySplitV3", TensorArraySplitGrad);
// As in TF: creating, sizing, closing and the gradient arrays themselves.
TW_REGISTER_NO_GRADIENT("TensorArrayV3");
TW_REGISTER_NO_GRADIENT("TensorArrayGradV3");
TW_REGISTER_NO_GRADIENT("TensorArraySizeV3");
TW_REGISTER_NO_GRADIENT("TensorArrayCloseV3");

}  // namespace
}  // namespace towerflow
