#include "train/loss_scale_optimizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace train {

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<Optimizer> optimizer, LossScale loss_scale)
    : Optimizer(optimizer->name()), optimizer_(std::move(optimizer)), loss_scale_(loss_scale) {}

bool LossScaleOptimizer::MakeState(const Scope& scope) const {
  if (loss_scale_.initial_loss_scale < 1 || (loss_scale_.dynamic && loss_scale_.multiplier < 1) ||
      (loss_scale_.dynamic && loss_scale_.increment_period < 1)) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("LossScaleOptimizer: the loss scale (", loss_scale_.initial_loss_scale,
                     "), its multiplier (", loss_scale_.multiplier, ") and its increment period (",
                     loss_scale_.increment_period, ") must be at least 1")));
    return false;
  }
  if (!loss_scale_.dynamic || current_.valid()) return scope.ok();
  VariableOptions options;
  options.trainable = false;
  const Scope at = scope.WithNoControlDependencies();
  current_ = GetVariableByFullName(at, "current_loss_scale", VariableReuse::kAutoReuse,
                                   TensorShape({}), DT_FLOAT,
                                   initializers::Constant(loss_scale_.initial_loss_scale), options);
  good_steps_ = GetVariableByFullName(at, "good_steps", VariableReuse::kAutoReuse, TensorShape({}),
                                      DT_INT64, initializers::Zeros(), options);
  return scope.ok();
}

Output LossScaleOptimizer::loss_scale(const Scope& scope) const {
  if (!MakeState(scope)) return Output();
  if (!loss_scale_.dynamic)
    return ops::Const(scope, static_cast<float>(loss_scale_.initial_loss_scale));
  return current_.value(scope);
}

std::vector<GradAndVar> LossScaleOptimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  const Output scale = loss_scale(scope);
  if (!scope.ok() || !loss.valid()) return optimizer_->ComputeGradients(scope, loss, var_list);
  const Output scaled = ops::Mul(scope, loss, ops::Cast(scope, scale, loss.type()));
  std::vector<GradAndVar> grads = optimizer_->ComputeGradients(scope, scaled, var_list);
  const Output reciprocal = ops::Reciprocal(scope, scale);
  for (GradAndVar& gv : grads) {
    if (gv.grad.is_none()) continue;
    const Output g = gv.grad.values();
    const Scope at = scope.ColocateWith(g);
    gv.grad = gv.grad.WithValues(ops::Mul(at, g, ops::Cast(at, reciprocal, g.type())));
  }
  return grads;
}

std::vector<Operation> LossScaleOptimizer::UpdateState(const Scope& scope,
                                                       const Output& finite) const {
  const Scope s = scope.ColocateWith(current_.handle());
  const Output scale = current_.value(s);
  const Output good = good_steps_.value(s);
  const Output good_after = ops::Add(s, good, int64_t{1});
  const Output grow =
      ops::LogicalAnd(s, finite, ops::GreaterEqual(s, good_after, loss_scale_.increment_period));
  const Output multiplier = ops::Const(s, static_cast<float>(loss_scale_.multiplier));
  const Output grown = ops::Mul(s, scale, multiplier);
  // The grown scale only when it is finite (TF's _assign_if_finite).
  const Output kept_or_grown =
      ops::SelectV2(s, ops::LogicalAnd(s, grow, ops::IsFinite(s, grown)), grown, scale);
  const Output shrunk = ops::Maximum(s, ops::RealDiv(s, scale, multiplier), 1.0f);
  const Output new_scale = ops::SelectV2(s, finite, kept_or_grown, shrunk);
  const Output zero = ops::Const(s, int64_t{0});
  const Output new_good = ops::SelectV2(s, finite, ops::SelectV2(s, grow, zero, good_after), zero);
  return {ops::AssignVariableOp(s, current_.handle(), new_scale),
          ops::AssignVariableOp(s, good_steps_.handle(), new_good)};
}

Operation LossScaleOptimizer::ApplyGradients(const Scope& scope,
                                             const std::vector<GradAndVar>& grads_and_vars,
                                             const std::optional<Variable>& global_step) {
  if (!loss_scale_.dynamic) return optimizer_->ApplyGradients(scope, grads_and_vars, global_step);
  if (!MakeState(scope)) return Operation();
  if (!optimizer_->SupportsSkipping()) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("LossScaleOptimizer: a dynamic loss scale skips steps on the device, which ",
                     optimizer_->name(), " cannot (Optimizer::SupportsSkipping)")));
    return Operation();
  }
  // Whether every gradient is finite, then the gradients zeroed when one
  // is not (0 * NaN is NaN: a gated rate alone would not keep a variable).
  // Each gradient times zero, summed where the gradient is: 0 when all its
  // elements are finite, NaN when one is not (infinity times zero is NaN),
  // so one float per gradient crosses to the check, never a bool tensor.
  const Scope check = scope.NewSubScope("loss_scale");
  std::vector<Output> zero_sums;
  for (const GradAndVar& gv : grads_and_vars) {
    if (gv.grad.is_none()) continue;
    const Output t = gv.grad.values();
    const Scope at = check.ColocateWith(t);
    const Output zero = ops::Const(at, 0.0f);
    const Output zeroed =
        ops::Mul(at, t, t.type() == DT_FLOAT ? zero : ops::Cast(at, zero, t.type()));
    const Output sum = ops::Sum(at, zeroed, ops::Range(at, 0, ops::Rank(at, t), 1));
    zero_sums.push_back(t.type() == DT_FLOAT ? sum : ops::Cast(at, sum, DT_FLOAT));
  }
  if (zero_sums.empty()) return optimizer_->ApplyGradients(scope, grads_and_vars, global_step);
  const Output finite = ops::IsFinite(check, ops::AddN(check, zero_sums));
  std::vector<GradAndVar> gated = grads_and_vars;
  for (GradAndVar& gv : gated) {
    if (gv.grad.is_none()) continue;
    const Output g = gv.grad.values();
    const Scope at = check.ColocateWith(g);
    gv.grad = gv.grad.WithValues(ops::SelectV2(at, finite, g, ops::ZerosLike(at, g)));
  }
  optimizer_->apply_if_ = finite;
  const Operation apply = optimizer_->ApplyGradients(scope, gated, global_step);
  optimizer_->apply_if_ = Output();
  if (!scope.ok()) return Operation();
  std::vector<Operation> all = UpdateState(check, finite);
  all.push_back(apply);
  return ops::NoOp(scope.WithControlDependencies(all));
}

Variable LossScaleOptimizer::GetSlot(const Variable& var, const std::string& slot) const {
  return optimizer_->GetSlot(var, slot);
}

Operation LossScaleOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                         const Variable& var) {
  return ApplyDenseOf(*optimizer_, scope, grad, var);
}

Operation LossScaleOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                          const Variable& var) {
  return ApplySparseOf(*optimizer_, scope, grad, var);
}

}  // namespace train
}  // namespace towerflow
