// ExponentialMovingAverage: shadow copies of variables that follow them
// slowly (TensorFlow's tf.train.ExponentialMovingAverage). The CIFAR-10
// tutorial averages every trainable variable with decay 0.9999 and
// num_updates = global_step, and evaluates with the averages.
//
//   train::ExponentialMovingAverage ema(0.9999, step.value());
//   Operation update = ema.Apply(root, trainable);   // errors go to root's status
//   // run `update` after each training step (e.g. with control deps)
//   SaverOptions eval;  eval.var_names = ema.VariablesToRestore(trainable);
//
// Apply creates, per variable, the shadow "<var>/ExponentialMovingAverage"
// (initialised to the variable's initial value; not trainable) and the
// update
//   decay_t = min(decay, (1 + num_updates) / (10 + num_updates))  (num_updates given)
//   shadow -= (1 - decay_t) * (shadow - var)
#ifndef TOWERFLOW_TRAIN_MOVING_AVERAGES_H_
#define TOWERFLOW_TRAIN_MOVING_AVERAGES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/variables.h"

namespace towerflow {
namespace train {

class ExponentialMovingAverage {
 public:
  explicit ExponentialMovingAverage(double decay, std::optional<Output> num_updates = std::nullopt,
                                    std::string name = "ExponentialMovingAverage")
      : decay_(decay), num_updates_(std::move(num_updates)), name_(std::move(name)) {}

  // One op updating every shadow of `vars` (creating them on first use).
  // Errors are recorded in `scope` (and an invalid Operation returned), like
  // every builder's: InvalidArgument for an invalid or non-float variable.
  Operation Apply(const Scope& scope, const std::vector<Variable>& vars);

  // The shadow of `var`; invalid before Apply.
  Variable Average(const Variable& var) const;
  std::string AverageName(const Variable& var) const { return var.name() + "/" + name_; }

  // Checkpoint name -> variable, so that a Saver restores each shadow's
  // value into its variable (evaluating with the averages).
  std::map<std::string, Variable> VariablesToRestore(const std::vector<Variable>& vars) const;

 private:
  absl::StatusOr<Operation> BuildApply(const Scope& scope, const std::vector<Variable>& vars);

  const double decay_;
  const std::optional<Output> num_updates_;
  const std::string name_;
  std::map<std::string, Variable> shadows_;  // by variable name
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_MOVING_AVERAGES_H_
