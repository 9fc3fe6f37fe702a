#include "estimator/tower_optimizer.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "estimator/replication_internal.h"
#include "framework/device_name.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gradients.h"
#include "ops/initializers.h"
#include "ops/variables.h"

namespace towerflow {
namespace estimator_internal {
namespace {
thread_local Replication* current_replication = nullptr;
}  // namespace

Replication* CurrentReplication() { return current_replication; }

namespace {

// Every tower's share of the rows (Replication::weigh_by_rows), built once.
const std::vector<Output>& RowWeights(const Replication& r) {
  if (!r.row_weights.empty()) return r.row_weights;
  const Scope& s = *r.weights_scope;
  std::vector<Output> rows;
  for (const Output& x : r.row_sources) {
    rows.push_back(ops::Cast(
        s,
        ops::StridedSlice(s, ops::Shape(s, x), {0}, {1}, {1}, ops::StridedSlice::ShrinkAxisMask(1)),
        DT_DOUBLE));
  }
  Output total = ops::AddN(s, rows);
  if (r.num_processes > 1) {
    // The first collective of the step on every process: the loss and the
    // gradients depend on it.
    total = ops::MpiAllReduce(s.WithDevice("/device:CPU:0").WithOpName("cluster_rows"), {total},
                              ops::MpiAllReduce::FusionThresholdBytes(r.fusion_threshold_bytes))
                .sum[0];
  }
  const double towers = static_cast<double>(r.num_towers) * r.num_processes;
  for (const Output& b : rows) {
    r.row_weights.push_back(ops::RealDiv(s, ops::Mul(s, b, towers), total));
  }
  return r.row_weights;
}

}  // namespace

Output LossScale(const Scope& scope, const Replication& r, int tower) {
  Output weight;
  if (r.weigh_by_rows) weight = RowWeights(r)[tower];
  if (r.loss_factor == 1.0) return weight;
  if (!weight.valid()) return ops::Const(scope, r.loss_factor);
  return ops::Mul(scope, weight, r.loss_factor);
}

ScopedReplication::ScopedReplication(Replication* r) : previous_(current_replication) {
  current_replication = r;
}
ScopedReplication::~ScopedReplication() { current_replication = previous_; }

}  // namespace estimator_internal

using estimator_internal::CurrentReplication;
using estimator_internal::kDifferentOptimizerCalls;
using estimator_internal::Replication;

namespace {

// The scope on `var`'s device (the scope itself when it has none).
Scope OnDeviceOf(const Scope& scope, const Variable& var) {
  const std::string& device = var.handle().node()->requested_device();
  return device.empty() ? scope : scope.WithDevice(device);
}

// InvalidArgument unless every tower lists the same variables (a mirror
// counting as its variable).
absl::Status CheckSameVariables(const std::vector<std::vector<train::GradAndVar>>& grads_per_tower,
                                const std::map<std::string, std::string>& variable_of) {
  const auto name = [&](const Variable& v) -> const std::string& {
    auto it = variable_of.find(v.name());
    return it == variable_of.end() ? v.name() : it->second;
  };
  const std::vector<train::GradAndVar>& first = grads_per_tower[0];
  for (const auto& tower : grads_per_tower) {
    bool same = tower.size() == first.size();
    for (size_t j = 0; same && j < first.size(); ++j) {
      same = name(tower[j].var) == name(first[j].var);
    }
    if (!same) return absl::InvalidArgumentError(kDifferentOptimizerCalls);
  }
  return absl::OkStatus();
}

// Where the gradient sums cross processes: the host, or with
// nccl_across_processes the GPU of the first of them (when on a GPU).
std::string CrossingDevice(const std::vector<train::GradAndVar>& summed, const Replication& r) {
  if (r.nccl_across_processes) {
    for (const train::GradAndVar& g : summed) {
      if (g.grad.is_none() || g.grad.is_sparse()) continue;
      const std::string& device = g.grad.dense().node()->requested_device();
      const absl::StatusOr<DeviceSpec> spec = DeviceSpec::Parse(device);
      if (spec.ok() && spec->type == "GPU") return device;
      break;
    }
  }
  return "/device:CPU:0";
}

// The summed gradients (one per variable, or per mirror under all-reduce,
// where a variable's mirrors hold equal sums) summed again over the
// cluster's processes: one MpiAllReduce (on the host, or on a GPU with
// nccl_across_processes) over each variable's dense gradient, and one
// MpiAllGather on the host over the values and indices of each sparse one
// (Horovod's: every process's rows, which the sparse update sums).
absl::StatusOr<std::vector<train::GradAndVar>> AllReduceAcrossProcesses(
    const Scope& scope, const std::vector<train::GradAndVar>& summed, Replication* r) {
  const Scope host = scope.WithDevice(CrossingDevice(summed, *r));
  std::vector<Output> inputs, rows;              // rows: values and indices, by turns
  std::map<std::string, int> input_of, rows_of;  // variable name -> its input(s)
  std::vector<int> input_for(summed.size(), -1), rows_for(summed.size(), -1);
  // The other mirrors' sums: equal to the one that crosses, but their
  // NcclAllReduce members must still run (a collective completes only with
  // all of them), so the cross-process sum waits for them.
  std::vector<Node*> also_run;
  for (size_t j = 0; j < summed.size(); ++j) {
    if (summed[j].grad.is_none()) continue;
    const std::string& name = summed[j].var.name();
    auto mirror = r->variable_of.find(name);
    const std::string& variable = mirror == r->variable_of.end() ? name : mirror->second;
    if (summed[j].grad.is_sparse()) {
      // The mirrors' rows are alike: the first mirror's cross.
      auto [it, first] = rows_of.emplace(variable, static_cast<int>(rows.size()));
      if (first) {
        rows.push_back(summed[j].grad.slices().values);
        rows.push_back(summed[j].grad.slices().indices);
      }
      rows_for[j] = it->second;
      continue;
    }
    auto [it, first] = input_of.emplace(variable, static_cast<int>(inputs.size()));
    if (first) {
      inputs.push_back(summed[j].grad.dense());
    } else {
      also_run.push_back(summed[j].grad.dense().node());
    }
    input_for[j] = it->second;
  }
  std::vector<train::GradAndVar> out = summed;
  if (!inputs.empty()) {
    const ops::MpiAllReduce sums(
        host, inputs, ops::MpiAllReduce::FusionThresholdBytes(r->fusion_threshold_bytes));
    TW_RETURN_IF_ERROR(scope.status());
    for (Node* n : also_run) scope.graph()->AddControlEdge(n, sums.operation.node());
    for (size_t j = 0; j < summed.size(); ++j) {
      if (input_for[j] >= 0) out[j].grad = Gradient(sums.sum[input_for[j]]);
    }
  }
  if (!rows.empty()) {
    const ops::MpiAllGather gathered(scope.WithDevice("/device:CPU:0"), rows);
    TW_RETURN_IF_ERROR(scope.status());
    for (size_t j = 0; j < summed.size(); ++j) {
      if (rows_for[j] < 0) continue;
      out[j].grad =
          Gradient(IndexedSlices{gathered.gathered[rows_for[j]], gathered.gathered[rows_for[j] + 1],
                                 summed[j].grad.slices().dense_shape});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<train::GradAndVar>> AllReduceTowerGradients(
    const Scope& scope, const std::vector<std::vector<train::GradAndVar>>& grads_per_tower,
    const std::map<std::string, std::string>& variable_of) {
  if (grads_per_tower.empty()) return std::vector<train::GradAndVar>();
  TW_RETURN_IF_ERROR(CheckSameVariables(grads_per_tower, variable_of));
  const int64_t n = static_cast<int64_t>(grads_per_tower.size());
  std::vector<train::GradAndVar> out;
  for (size_t j = 0; j < grads_per_tower[0].size(); ++j) {
    bool any = false;
    for (const auto& tower : grads_per_tower) any = any || !tower[j].grad.is_none();
    if (!any) {
      for (const auto& tower : grads_per_tower) out.push_back({Gradient(), tower[j].var});
      continue;
    }
    // All sparse (or none): every tower's rows, concatenated on each
    // mirror's device (as TF's MirroredStrategy gathers IndexedSlices), so
    // each mirror's update stays sparse, as one tower's is.
    bool sparse = true;
    for (const auto& tower : grads_per_tower) {
      sparse = sparse && (tower[j].grad.is_none() || tower[j].grad.is_sparse());
    }
    if (sparse) {
      std::vector<Gradient> grads;
      for (const auto& tower : grads_per_tower) grads.push_back(tower[j].grad);
      const Scope gather = scope.NewSubScope("all_gather");
      for (const auto& tower : grads_per_tower) {
        TW_ASSIGN_OR_RETURN(Gradient rows, AddGradients(OnDeviceOf(gather, tower[j].var), grads));
        out.push_back({rows, tower[j].var});
      }
      continue;
    }
    // One collective per variable, named by its scope.
    const Scope reduce = scope.NewSubScope("all_reduce");
    for (const auto& tower : grads_per_tower) {
      const Variable& var = tower[j].var;
      const Scope on = OnDeviceOf(reduce, var);
      const Output grad = tower[j].grad.is_none()
                              ? initializers::Zeros()(on, var.shape(), var.dtype())
                              : Densify(on, tower[j].grad);
      out.push_back({Gradient(Output(ops::NcclAllReduce(on, grad, "sum", n, reduce.name()))), var});
    }
  }
  TW_RETURN_IF_ERROR(scope.status());
  return out;
}

absl::StatusOr<std::vector<train::GradAndVar>> AggregateTowerGradients(
    const Scope& scope, const std::vector<std::vector<train::GradAndVar>>& grads_per_tower) {
  if (grads_per_tower.empty()) return std::vector<train::GradAndVar>();
  TW_RETURN_IF_ERROR(CheckSameVariables(grads_per_tower, {}));
  const std::vector<train::GradAndVar>& first = grads_per_tower[0];
  std::vector<train::GradAndVar> out;
  for (size_t j = 0; j < first.size(); ++j) {
    const Variable& var = first[j].var;
    std::vector<Gradient> grads;
    for (const auto& tower : grads_per_tower) grads.push_back(tower[j].grad);
    TW_ASSIGN_OR_RETURN(Gradient sum, AddGradients(OnDeviceOf(scope, var), grads));
    out.push_back({sum, var});
  }
  TW_RETURN_IF_ERROR(scope.status());
  return out;
}

TowerOptimizer::TowerOptimizer(std::shared_ptr<train::Optimizer> optimizer)
    : train::Optimizer(optimizer->name()), optimizer_(std::move(optimizer)) {}

std::vector<train::GradAndVar> TowerOptimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  Replication* r = CurrentReplication();
  Output scaled = loss;
  const Output scale =
      r != nullptr && loss.valid() ? estimator_internal::LossScale(scope, *r, r->tower) : Output();
  if (scale.valid()) {
    scaled = ops::Mul(scope.WithOpName("scaled_loss"), loss, ops::Cast(scope, scale, loss.type()));
  }
  std::vector<Variable> vars = var_list;
  if (r != nullptr && r->all_reduce && r->tower < static_cast<int>(r->mirrors.size()) &&
      !r->mirrors[r->tower].empty()) {
    // This tower's mirrors in place of the variables.
    const std::map<std::string, Variable>& mirrors = r->mirrors[r->tower];
    if (vars.empty()) vars = GetVariables(*scope.graph(), GraphKeys::kTrainableVariables);
    for (Variable& v : vars) {
      auto it = mirrors.find(v.name());
      if (it != mirrors.end()) v = it->second;
    }
  }
  return optimizer_->ComputeGradients(scope, scaled, vars);
}

Operation TowerOptimizer::ApplyGradients(const Scope& scope,
                                         const std::vector<train::GradAndVar>& grads_and_vars,
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
    if (tower_calls.size() <= k) {
      scope.UpdateStatus(absl::InvalidArgumentError(kDifferentOptimizerCalls));
      return Operation();
    }
    per_tower.push_back(tower_calls[k]);
  }
  const Scope& apply = r->apply_scope.has_value() ? *r->apply_scope : scope;
  const Scope aggregating = apply.NewSubScope("gradient_aggregating");
  absl::StatusOr<std::vector<train::GradAndVar>> summed =
      r->all_reduce ? AllReduceTowerGradients(aggregating, per_tower, r->variable_of)
                    : AggregateTowerGradients(aggregating, per_tower);
  if (summed.ok() && r->num_processes > 1) {
    summed = AllReduceAcrossProcesses(aggregating.NewSubScope("across_processes"), *summed, r);
  }
  if (!summed.ok()) {
    scope.UpdateStatus(summed.status());
    return Operation();
  }
  return optimizer_->ApplyGradients(apply, *summed, global_step);
}

Variable TowerOptimizer::GetSlot(const Variable& var, const std::string& slot) const {
  return optimizer_->GetSlot(var, slot);
}

Operation TowerOptimizer::ApplyDense(const Scope& scope, const Output& grad, const Variable& var) {
  return ApplyDenseOf(*optimizer_, scope, grad, var);
}

Operation TowerOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                      const Variable& var) {
  return ApplySparseOf(*optimizer_, scope, grad, var);
}

}  // namespace towerflow
