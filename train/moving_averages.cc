#include "train/moving_averages.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace train {

Operation ExponentialMovingAverage::Apply(const Scope& scope, const std::vector<Variable>& vars) {
  absl::StatusOr<Operation> op = BuildApply(scope, vars);
  if (!op.ok()) {
    scope.UpdateStatus(op.status());
    return Operation();
  }
  return *op;
}

absl::StatusOr<Operation> ExponentialMovingAverage::BuildApply(const Scope& scope,
                                                               const std::vector<Variable>& vars) {
  TW_RETURN_IF_ERROR(scope.status());
  const Scope s = scope.NewSubScope(name_);
  std::vector<Operation> updates;
  for (const Variable& var : vars) {
    if (!var.valid())
      return absl::InvalidArgumentError("ExponentialMovingAverage: invalid variable");
    if (var.dtype() != DT_FLOAT && var.dtype() != DT_DOUBLE && var.dtype() != DT_HALF) {
      return absl::InvalidArgumentError(absl::StrCat("ExponentialMovingAverage of ", var.name(),
                                                     ": the variable must be float, got ",
                                                     DataTypeString(var.dtype())));
    }
    Variable& shadow = shadows_[var.name()];
    if (!shadow.valid()) {
      // Starts at the variable's value right after its initializer ran (in
      // the same initialisation step, so a random initial value is shared).
      const Variable v = var;
      initializers::Initializer copy(
          "copy_of_variable", [v](const Scope& at, const TensorShape&, DataType) -> Output {
            return ops::ReadVariableOp(at.WithControlDependencies({v.initializer()}), v.handle(),
                                       v.dtype());
          });
      VariableOptions options;
      options.trainable = false;
      shadow = GetVariableByFullName(scope.ColocateWith(var.handle()).WithNoControlDependencies(),
                                     AverageName(var), VariableReuse::kNoReuse, var.shape(),
                                     var.dtype(), copy, options);
      TW_RETURN_IF_ERROR(scope.status());
    }
    const Scope at = s.NewSubScope(var.name()).ColocateWith(shadow.handle());
    Output decay = ops::Cast(at, ops::Const(at, static_cast<float>(decay_)), var.dtype());
    if (num_updates_.has_value()) {
      Output n = ops::Cast(at, *num_updates_, var.dtype());
      Output ramp = ops::RealDiv(at, ops::Add(at, n, ops::Cast(at, 1.0f, var.dtype())),
                                 ops::Add(at, n, ops::Cast(at, 10.0f, var.dtype())));
      decay = ops::Minimum(at, decay, ramp);
    }
    Output one_minus = ops::Sub(at, ops::OnesLike(at, decay), decay);
    Output delta = ops::Mul(at, ops::Sub(at, shadow.value(at), var.value(at)), one_minus);
    updates.push_back(ops::AssignSubVariableOp(at, shadow.handle(), delta));
  }
  Operation all = ops::NoOp(s.WithOpName("update").WithControlDependencies(updates));
  TW_RETURN_IF_ERROR(scope.status());
  return all;
}

Variable ExponentialMovingAverage::Average(const Variable& var) const {
  auto it = shadows_.find(var.name());
  return it == shadows_.end() ? Variable() : it->second;
}

std::map<std::string, Variable> ExponentialMovingAverage::VariablesToRestore(
    const std::vector<Variable>& vars) const {
  std::map<std::string, Variable> out;
  for (const Variable& v : vars) out[AverageName(v)] = v;
  return out;
}

}  // namespace train
}  // namespace towerflow
