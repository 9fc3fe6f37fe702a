// TowerOptimizer: TF's tf.contrib.estimator.TowerOptimizer. Wraps any
// optimizer so that a model_fn replicated by ReplicateModelFn computes its
// gradients per tower and applies them once.
//
//   EstimatorSpec MyModel(const Scope& s, ...) {
//     ...
//     TowerOptimizer opt(std::make_shared<train::MomentumOptimizer>(0.1, 0.9));
//     spec.train_op = opt.Minimize(s, loss, train::GetOrCreateGlobalStep(s));
//   }
//
// Under ReplicateModelFn, each tower's Minimize (or ApplyGradients) records
// its gradients; the towers before the last get a NoOp, the last tower sums
// every variable's gradients over the towers on the variable's device
// (under "gradient_aggregating/": dense by AddN, IndexedSlices by
// concatenation) and applies them once with the wrapped optimizer, under
// tower 0's scopes, incrementing the global step once. ComputeGradients
// scales the tower's loss as the replication asks (1/n for a MEAN
// reduction, the tower's share with uneven batches) so the sum is exact.
// Several optimizer calls per model_fn are fine when every tower makes the
// same calls in the same order.
//
// Outside ReplicateModelFn it is the wrapped optimizer. It is a
// train::Optimizer: errors are recorded in the Scope like every builder's,
// and its slots are the wrapped optimizer's.
//
// Thread-compatible, like graph building.
#ifndef TOWERFLOW_ESTIMATOR_TOWER_OPTIMIZER_H_
#define TOWERFLOW_ESTIMATOR_TOWER_OPTIMIZER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "train/optimizer.h"

namespace towerflow {

class TowerOptimizer final : public train::Optimizer {
 public:
  // REQUIRES: optimizer != nullptr. Takes the wrapped optimizer's name.
  explicit TowerOptimizer(std::shared_ptr<train::Optimizer> optimizer);

  // The wrapped optimizer's gradients of this tower's scaled loss (of its
  // mirrors under all-reduce).
  std::vector<train::GradAndVar> ComputeGradients(
      const Scope& scope, const Output& loss,
      const std::vector<Variable>& var_list = {}) const override;
  // Records this tower's gradients; the last tower aggregates every tower's
  // and applies them once. Errors are recorded in `scope`; InvalidArgument
  // when the towers made different optimizer calls.
  Operation ApplyGradients(const Scope& scope, const std::vector<train::GradAndVar>& grads_and_vars,
                           const std::optional<Variable>& global_step = {}) override;
  Variable GetSlot(const Variable& var, const std::string& slot) const override;

  train::Optimizer& optimizer() const { return *optimizer_; }

 private:
  // The wrapped optimizer's update.
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;

  std::shared_ptr<train::Optimizer> optimizer_;
};

// With ReplicateOptions::aggregation = kAllReduce, tower t computes the
// gradients of its own mirrors of the variables (var_list, or the trainable
// variables, mapped to them), and the last tower all-reduces each
// variable's gradients (AllReduceTowerGradients) and applies the sums to
// every tower's mirror in one ApplyGradients, so the optimizer's own
// variables (Adam's beta powers) and the global step advance once.
//
// Sums each variable's gradients over towers (grads_per_tower[t][j] is
// tower t's gradient of variable j; the variable lists must match) on the
// variable's device, under `scope` ("gradient_aggregating" by
// ReplicateModelFn): dense by AddN, all-IndexedSlices by concatenating
// values and indices, a mix densified first. Towers with no gradient for a
// variable are left out; a variable no tower has a gradient for keeps none.
absl::StatusOr<std::vector<train::GradAndVar>> AggregateTowerGradients(
    const Scope& scope, const std::vector<std::vector<train::GradAndVar>>& grads_per_tower);

// The all-reduce counterpart. grads_per_tower[t][j] is tower t's gradient
// of its mirror of variable j; `variable_of` maps a mirror's name to its
// variable's (tower 0 holds the variables themselves), and the lists must
// match through it. Under `scope`, each variable with a gradient in some
// tower gets one NcclAllReduce (sum) per tower on the device of that tower's
// mirror; a sparse gradient is densified first and a tower without one adds
// zeros. A variable whose gradients are all sparse (or none) gets instead
// every tower's rows concatenated on each mirror's device, and its update
// stays sparse. Returns, variable by variable and tower by tower, each tower's sum
// with its mirror (none where no tower has a gradient).
absl::StatusOr<std::vector<train::GradAndVar>> AllReduceTowerGradients(
    const Scope& scope, const std::vector<std::vector<train::GradAndVar>>& grads_per_tower,
    const std::map<std::string, std::string>& variable_of);

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_TOWER_OPTIMIZER_H_
