#include "ops/const_op.h"

#include "absl/strings/str_cat.h"
#include "graph/attr_value_util.h"

namespace towerflow {
namespace ops {

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!scope.ok()) return Output();
  if (!value.status().ok()) {
    scope.UpdateStatus(value.status());
    return Output();
  }
  NodeDef def;
  def.set_name(scope.GetUniqueNameForOp("Const"));
  def.set_op("Const");
  SetAttrValue(value.tensor().dtype(), &(*def.mutable_attr())["dtype"]);
  SetAttrValue(value.tensor(), &(*def.mutable_attr())["value"]);
  absl::StatusOr<Node*> node = scope.AddNode(std::move(def));
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
