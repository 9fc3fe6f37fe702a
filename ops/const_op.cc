#include "ops/const_op.h"

#include "absl/strings/str_cat.h"
#include "graph/op_builder.h"

namespace towerflow {
namespace ops {

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!scope.ok()) return Output();
  if (!value.status().ok()) {
    scope.UpdateStatus(value.status());
    return Output();
  }
  absl::StatusOr<Node*> node = AddConstNode(scope, value.tensor());
  return node.ok() ? Output(*node, 0) : Output();
}

Output Const(const Scope& scope, const Input::Initializer& value, const TensorShape& shape) {
  if (!scope.ok()) return Output();
  if (!value.status().ok()) {
    scope.UpdateStatus(value.status());
    return Output();
  }
  if (!shape.IsValid()) {
    scope.UpdateStatus(shape.status());
    return Output();
  }
  absl::StatusOr<TensorShape> given = TensorProtoShape(value.tensor());
  if (given.ok() && given->num_elements() != shape.num_elements()) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("Const: ", given->num_elements(), " values cannot have shape ",
                     shape.DebugString(), " (", shape.num_elements(), " elements)")));
    return Output();
  }
  TensorProto reshaped = value.tensor();
  shape.AsProto(reshaped.mutable_tensor_shape());
  return Const(scope, Input::Initializer(reshaped));
}

}  // namespace ops
}  // namespace towerflow
