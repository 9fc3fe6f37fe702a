#include "train/optimizer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "framework/attr_value_util.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"

namespace towerflow {
namespace train {

Variable GetOrCreateGlobalStep(const Scope& scope) {
  VariableOptions options;
  options.trainable = false;
  options.collections = {GraphKeys::kGlobalVariables, GraphKeys::kGlobalStep};
  if (std::optional<Variable> existing = GetGlobalStep(*scope.graph())) return *existing;
  return GetVariableByFullName(scope.WithNoControlDependencies(), "global_step",
                               VariableReuse::kAutoReuse, TensorShape({}), DT_INT64,
                               initializers::Zeros(), options);
}

std::optional<Variable> GetGlobalStep(const Graph& graph) {
  std::vector<Variable> steps = GetVariables(graph, GraphKeys::kGlobalStep);
  if (steps.empty()) return std::nullopt;
  return steps[0];
}

std::vector<GradAndVar> Optimizer::ComputeGradients(const Scope& scope, const Output& loss,
                                                    const std::vector<Variable>& var_list) const {
  absl::StatusOr<std::vector<GradAndVar>> grads = SymbolicGradients(scope, loss, var_list);
  if (!grads.ok()) {
    scope.UpdateStatus(grads.status());
    return {};
  }
  return *std::move(grads);
}

Operation Optimizer::ApplyGradients(const Scope& scope,
                                    const std::vector<GradAndVar>& grads_and_vars,
                                    const std::optional<Variable>& global_step) {
  absl::StatusOr<Operation> op = BuildApply(scope, grads_and_vars, global_step);
  if (!op.ok()) {
    scope.UpdateStatus(op.status());
    return Operation();
  }
  return *op;
}

Operation Optimizer::Minimize(const Scope& scope, const Output& loss,
                              const std::optional<Variable>& global_step,
                              const std::vector<Variable>& var_list) {
  std::vector<GradAndVar> grads = ComputeGradients(scope, loss, var_list);
  if (!scope.ok()) return Operation();
  return ApplyGradients(scope, grads, global_step);
}

absl::StatusOr<std::vector<GradAndVar>> Optimizer::SymbolicGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  TW_RETURN_IF_ERROR(scope.status());
  if (!loss.valid()) return absl::InvalidArgumentError("ComputeGradients: invalid loss");
  if (loss.type() != DT_FLOAT && loss.type() != DT_DOUBLE && loss.type() != DT_HALF) {
    return absl::InvalidArgumentError(absl::StrCat("ComputeGradients: loss ", loss.name(),
                                                   " must be a float tensor, got ",
                                                   DataTypeString(loss.type())));
  }
  std::vector<Variable> vars =
      var_list.empty() ? GetVariables(*scope.graph(), GraphKeys::kTrainableVariables) : var_list;
  std::vector<Output> handles;
  for (const Variable& v : vars) handles.push_back(v.handle());
  GradientOptions options;
  options.allow_unreachable = true;
  TW_ASSIGN_OR_RETURN(std::vector<Gradient> grads,
                      ComputeSymbolicGradients(scope, {loss}, handles, {}, options));
  std::vector<GradAndVar> out;
  for (size_t i = 0; i < vars.size(); ++i) out.push_back({grads[i], vars[i]});
  return out;
}

Operation Optimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                 const Variable& var) {
  return ApplyDense(scope, Densify(scope, grad), var);
}

IndexedSlices Optimizer::SumRepeatedRows(const Scope& scope, const IndexedSlices& grad) {
  const ops::Unique unique(scope, grad.indices);
  IndexedSlices summed = grad;
  summed.indices = unique.y;
  summed.values =
      ops::UnsortedSegmentSum(scope, grad.values, unique.idx, ops::Size(scope, unique.y));
  return summed;
}

absl::StatusOr<Operation> Optimizer::BuildApply(const Scope& scope,
                                                const std::vector<GradAndVar>& grads_and_vars,
                                                const std::optional<Variable>& global_step) {
  TW_RETURN_IF_ERROR(scope.status());
  std::vector<const GradAndVar*> with_grad;
  std::vector<Variable> vars;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.var.valid()) return absl::InvalidArgumentError("ApplyGradients: invalid variable");
    if (gv.grad.is_none()) continue;
    with_grad.push_back(&gv);
    vars.push_back(gv.var);
  }
  if (with_grad.empty()) {
    std::vector<std::string> names;
    for (const GradAndVar& gv : grads_and_vars) names.push_back(gv.var.name());
    return absl::InvalidArgumentError(
        absl::StrCat("No gradients provided for any variable: [", absl::StrJoin(names, ", "), "]"));
  }
  // TensorFlow names the returned op "<Name>" and puts the updates under
  // the name scope "<Name>/" beside it.
  const std::string op_name = scope.GetUniqueNameForOp(name_);
  const Scope apply = scope.WithAbsoluteNameScope(op_name);
  TW_RETURN_IF_ERROR(Prepare(apply, vars));
  std::vector<Operation> updates;
  for (const GradAndVar* gv : with_grad) {
    const Scope update =
        apply.NewSubScope(absl::StrCat("update_", gv->var.name())).ColocateWith(gv->var.handle());
    const Output grad = gv->grad.values();
    if (grad.valid() && grad.type() != gv->var.dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gradient for ", gv->var.name(), " is ", DataTypeString(grad.type()),
                       " but the variable is ", DataTypeString(gv->var.dtype())));
    }
    updates.push_back(gv->grad.is_sparse() ? ApplySparse(update, gv->grad.slices(), gv->var)
                                           : ApplyDense(update, grad, gv->var));
  }
  TW_RETURN_IF_ERROR(scope.status());
  Operation finish = Finish(apply.NewSubScope("update"), updates);
  NodeDef def;
  def.set_name(op_name);
  Scope last = scope.WithControlDependencies({finish});
  if (!global_step.has_value()) {
    def.set_op("NoOp");
  } else {
    // global_step += 1 once every update ran (+= 0 when a loss scale
    // skips the step, Note [Skipped steps]).
    Output one = apply_if_.valid() ? Output(ops::Cast(apply, apply_if_, DT_INT64))
                                   : Output(ops::Const(apply, int64_t{1}));
    def.set_op("AssignAddVariableOp");
    def.add_input(global_step->handle().node()->name());
    def.add_input(one.node()->name());
    SetAttrValue(DT_INT64, &(*def.mutable_attr())["dtype"]);
    last = last.ColocateWith(global_step->handle());
  }
  TW_ASSIGN_OR_RETURN(Node * node, last.AddNode(std::move(def)));
  return Operation(node);
}

Variable Optimizer::GetSlot(const Variable& var, const std::string& slot) const {
  auto it = slots_.find({slot, var.name()});
  return it == slots_.end() ? Variable() : it->second;
}

Operation Optimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  return ops::NoOp(scope.WithControlDependencies(updates));
}

Variable Optimizer::CreateSlot(const Scope& scope, const Variable& var, const std::string& slot,
                               const std::string& suffix, const initializers::Initializer& init) {
  auto it = slots_.find({slot, var.name()});
  if (it != slots_.end()) return it->second;
  VariableOptions options;
  options.trainable = false;
  Variable v = GetVariableByFullName(scope.ColocateWith(var.handle()).WithNoControlDependencies(),
                                     absl::StrCat(var.name(), "/", suffix), VariableReuse::kNoReuse,
                                     var.shape(), var.dtype(),
                                     init.valid() ? init : initializers::Zeros(), options);
  if (v.valid()) slots_[{slot, var.name()}] = v;
  return v;
}

Output Optimizer::Gated(const Scope& scope, const Output& value, double skipped) const {
  if (!apply_if_.valid() || !value.valid()) return value;
  return ops::SelectV2(scope, apply_if_, value, AsTensor(scope, skipped, value.type()));
}

Output Optimizer::LearningRate(const Scope& scope, DataType dtype) const {
  if (!learning_rate_.has_value()) {
    scope.UpdateStatus(absl::FailedPreconditionError(
        absl::StrCat("Optimizer ", name_, " has no learning rate of its own")));
    return Output();
  }
  return AsTensor(scope, *learning_rate_, dtype);
}

Output Optimizer::AsTensor(const Scope& scope, const Input& value, DataType dtype) {
  if (value.is_output()) {
    const Output& out = value.output();
    if (out.valid() && out.type() != dtype) return ops::Cast(scope, out, dtype);
    return out;
  }
  if (!value.initializer().status().ok()) {
    scope.UpdateStatus(value.initializer().status());
    return Output();
  }
  absl::StatusOr<TensorProto> converted = ConvertTensorProto(value.initializer().tensor(), dtype);
  if (!converted.ok()) {
    scope.UpdateStatus(converted.status());
    return Output();
  }
  return ops::Const(scope, *converted);
}

}  // namespace train
}  // namespace towerflow
