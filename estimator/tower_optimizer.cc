#include "estimator/tower_optimizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/gradients.h"
#include "ops/ops.h"

namespace towerflow {
namespace estimator_internal {
namespace {
thread_local Replication* current_replication = nullptr;
}  // namespace

Replication* CurrentReplication() { return current_replication; }

ScopedReplication::ScopedReplication(Replication* r) : previous_(current_replication) {
  current_replication = r;
}
ScopedReplication::~ScopedReplication() { current_replication = previous_; }

}  // namespace estimator_internal

using estimator_internal::CurrentReplication;
using estimator_internal::kDifferentOptimizerCalls;
using estimator_internal::Replication;

absl::StatusOr<std::vector<train::GradAndVar>> AggregateTowerGradients(
    const Scope& scope, const std::vector<std::vector<train::GradAndVar>>& grads_per_tower) {
  if (grads_per_tower.empty()) return std::vector<train::GradAndVar>();
  const std::vector<train::GradAndVar>& first = grads_per_tower[0];
  for (const auto& tower : grads_per_tower) {
    bool same = tower.size() == first.size();
    for (size_t j = 0; same && j < first.size(); ++j) {
      same = tower[j].var.name() == first[j].var.name();
    }
    if (!same) return absl::InvalidArgumentError(kDifferentOptimizerCalls);
  }
  std::vector<train::GradAndVar> out;
  for (size_t j = 0; j < first.size(); ++j) {
    const Variable& var = first[j].var;
    std::vector<Gradient> grads;
    for (const auto& tower : grads_per_tower) grads.push_back(tower[j].grad);
    const std::string& device = var.handle().node()->requested_device();
    TW_ASSIGN_OR_RETURN(Gradient sum,
                        AddGradients(device.empty() ? scope : scope.WithDevice(device), grads));
    out.push_back({sum, var});
  }
  TW_RETURN_IF_ERROR(scope.status());
  return out;
}

TowerOptimizer::TowerOptimizer(std::shared_ptr<train::Optimizer> optimizer)
    : optimizer_(std::move(optimizer)) {}

absl::StatusOr<std::vector<train::GradAndVar>> TowerOptimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  Replication* r = CurrentReplication();
  Output scaled = loss;
  if (r != nullptr && r->tower < static_cast<int>(r->loss_scale.size()) &&
      r->loss_scale[r->tower].valid() && loss.valid()) {
    scaled = ops::Mul(scope.WithOpName("scaled_loss"), loss,
                      ops::Cast(scope, r->loss_scale[r->tower], loss.type()));
  }
  return optimizer_->ComputeGradients(scope, scaled, var_list);
}

absl::StatusOr<Operation> TowerOptimizer::ApplyGradients(
    const Scope& scope, const std::vector<train::GradAndVar>& grads_and_vars,
    const std::optional<Variable>& global_step) {
  Replication* r = CurrentReplication();
  if (r == nullptr) return optimizer_->ApplyGradients(scope, grads_and_vars, global_step);
  r->tower_optimizer_used = true;
  if (static_cast<int>(r->calls.size()) < r->num_towers) r->calls.resize(r->num_towers);
  r->calls[r->tower].push_back(grads_and_vars);
  if (r->tower != r->num_towers - 1) {
    // Only the last tower applies; the others return a placeholder op.
    return Operation(ops::NoOp(scope.WithOpName("train_op_placeholder")));
  }
  const size_t k = r->calls[r->tower].size() - 1;
  std::vector<std::vector<train::GradAndVar>> per_tower;
  for (const auto& tower_calls : r->calls) {
    if (tower_calls.size() <= k) return absl::InvalidArgumentError(kDifferentOptimizerCalls);
    per_tower.push_back(tower_calls[k]);
  }
  const Scope& apply = r->apply_scope.has_value() ? *r->apply_scope : scope;
  TW_ASSIGN_OR_RETURN(
      std::vector<train::GradAndVar> summed,
      AggregateTowerGradients(apply.NewSubScope("gradient_aggregating"), per_tower));
  return optimizer_->ApplyGradients(apply, summed, global_step);
}

absl::StatusOr<Operation> TowerOptimizer::Minimize(const Scope& scope, const Output& loss,
                                                   const std::optional<Variable>& global_step,
                                                   const std::vector<Variable>& var_list) {
  TW_ASSIGN_OR_RETURN(std::vector<train::GradAndVar> grads,
                      ComputeGradients(scope, loss, var_list));
  return ApplyGradients(scope, grads, global_step);
}

}  // namespace towerflow
