// Optimizers: the training half of TensorFlow 1.x's tf.train.
//
//   Variable step = train::GetOrCreateGlobalStep(root);
//   train::MomentumOptimizer opt(/*learning_rate=*/0.1, /*momentum=*/0.9);
//   absl::StatusOr<Operation> train_op = opt.Minimize(root, loss, step);
//
// Minimize = ComputeGradients (d loss / d var through each variable's handle,
// ops/gradients.h) + ApplyGradients (one update op per variable that has a
// gradient, then global_step += 1). The two halves are public so that a
// wrapper can run ComputeGradients per tower and apply once, as
// TowerOptimizer does (estimator/).
//
// Names follow TensorFlow's: the apply ops live under "<Name>/update_<var>/",
// the returned op is named "<Name>" (the global-step increment when a step
// is given), slot variables are "<var>/<Name>" ("<var>/Momentum",
// "<var>/Adam", "<var>/Adam_1"), colocated with their variable, not
// trainable, in kGlobalVariables.
//
// Sparse gradients (IndexedSlices, from ResourceGather) update only their
// rows, as TF's sparse updates: GradientDescent by a ResourceScatterSub,
// Momentum and Adagrad by ResourceSparseApply* once repeated rows are
// summed (so Momentum decays only the accumulator rows present, as in TF,
// not every row as its dense update does). Adam and RMSProp densify them
// with UnsortedSegmentSum before the dense update.
//
// Thread-compatible: one thread builds with an optimizer at a time.
#ifndef TOWERFLOW_TRAIN_OPTIMIZER_H_
#define TOWERFLOW_TRAIN_OPTIMIZER_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/gradients.h"
#include "ops/variables.h"

namespace towerflow {
namespace train {

struct GradAndVar {
  Gradient grad;  // none when the loss does not depend on `var`
  Variable var;
};

// The int64 scalar variable "global_step" (collections kGlobalVariables and
// kGlobalStep, not trainable), created on first use.
Variable GetOrCreateGlobalStep(const Scope& scope);
// The global step if the graph has one.
std::optional<Variable> GetGlobalStep(const Graph& graph);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // TensorFlow's name ("GradientDescent", "Momentum", "Adam", ...).
  const std::string& name() const { return name_; }

  // Gradients of `loss` for `var_list` (empty: the trainable variables).
  // A variable the loss does not reach gets a none gradient. Errors
  // (recorded in `scope`, and an empty list returned): those of
  // AddSymbolicGradients; InvalidArgument for a non-float loss.
  virtual std::vector<GradAndVar> ComputeGradients(
      const Scope& scope, const Output& loss, const std::vector<Variable>& var_list = {}) const;

  // Updates each variable with a gradient; then, when given, increments
  // `global_step`. Returns the op to run. Errors (recorded in `scope`, and
  // an invalid Operation returned): InvalidArgument when no variable has a
  // gradient ("No gradients provided for any variable").
  virtual Operation ApplyGradients(const Scope& scope,
                                   const std::vector<GradAndVar>& grads_and_vars,
                                   const std::optional<Variable>& global_step = {});

  // ComputeGradients, then ApplyGradients unless it failed.
  Operation Minimize(const Scope& scope, const Output& loss,
                     const std::optional<Variable>& global_step = {},
                     const std::vector<Variable>& var_list = {});

  // Slot `slot` ("momentum", "m", "v", "accumulator", "rms") of `var`;
  // invalid when ApplyGradients has not created it.
  virtual Variable GetSlot(const Variable& var, const std::string& slot) const;

  // A hyper-parameter as a tensor of `dtype`: literals become constants,
  // tensors of another type are cast.
  static Output AsTensor(const Scope& scope, const Input& value, DataType dtype);

  // Whether updates built by this optimizer can be skipped on the device
  // (Note [Skipped steps]): true for the built-in optimizers. A dynamic
  // LossScaleOptimizer wraps only those.
  virtual bool SupportsSkipping() const { return false; }

 protected:
  // `learning_rate`: a literal or a scalar tensor (a schedule).
  Optimizer(std::string name, Input learning_rate)
      : name_(std::move(name)), learning_rate_(std::move(learning_rate)) {}
  // For an optimizer that wraps another and has no learning rate of its own
  // (LearningRate records FailedPrecondition).
  explicit Optimizer(std::string name) : name_(std::move(name)) {}

  // Builds the update of one variable under `scope` (colocated with it).
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) = 0;
  // Builds the update of one variable from rows of a gradient (IndexedSlices,
  // from a ResourceGather; rows may repeat). By default the dense update of
  // their sum (Densify). The optimizers whose TF form has a sparse update
  // (GradientDescent, Momentum, Adagrad, RMSProp) update only the rows, as
  // TF does: for Momentum and RMSProp that differs from the dense update,
  // which moves the slots (and so the variable) of every row.
  virtual Operation ApplySparse(const Scope& scope, const IndexedSlices& grad, const Variable& var);
  // `other`'s update of one variable, for optimizers that wrap another.
  static Operation ApplyDenseOf(Optimizer& other, const Scope& scope, const Output& grad,
                                const Variable& var) {
    return other.ApplyDense(scope, grad, var);
  }
  static Operation ApplySparseOf(Optimizer& other, const Scope& scope, const IndexedSlices& grad,
                                 const Variable& var) {
    return other.ApplySparse(scope, grad, var);
  }
  // `grad` with its repeated rows summed into one (Unique, then
  // UnsortedSegmentSum), as TF does before its sparse updates.
  static IndexedSlices SumRepeatedRows(const Scope& scope, const IndexedSlices& grad);
  // Before the updates, with every variable that will be updated (Adam's
  // beta powers).
  virtual absl::Status Prepare(const Scope& scope, const std::vector<Variable>& vars) {
    return absl::OkStatus();
  }
  // The op that completes the step once `updates` ran; by default a NoOp
  // depending on them.
  virtual Operation Finish(const Scope& scope, const std::vector<Operation>& updates);

  // Creates `<var>/<suffix>` initialised by `init` (zeros by default),
  // remembered as slot `slot`.
  Variable CreateSlot(const Scope& scope, const Variable& var, const std::string& slot,
                      const std::string& suffix, const initializers::Initializer& init = {});
  Output LearningRate(const Scope& scope, DataType dtype) const;

  // Note [Skipped steps]
  // A LossScaleOptimizer skips a step whose gradients are not all finite
  // without a host round trip (so the step can be a replayed one): it zeroes
  // the gradients by a select and sets `apply_if`, a boolean scalar, while
  // the wrapped optimizer builds its updates. Each optimizer that
  // SupportsSkipping() passes its rates through Gated, with the value that
  // makes its update the identity (a learning rate of 0, a momentum or beta
  // of 1; RMSProp, which has none, restores var and mom by selects), so a
  // skipped step leaves the variable, its slots and the optimizer's own
  // variables (Adam's beta powers) as they were, bit for bit, and the
  // global step is not incremented (as TF 1.x's
  // MixedPrecisionLossScaleOptimizer, whose update sits in a cond).
  // `value` when the step applies, `skipped` when it is skipped; `value`
  // itself when no LossScaleOptimizer gates this optimizer.
  Output Gated(const Scope& scope, const Output& value, double skipped) const;
  // The learning rate, gated to 0.
  Output Rate(const Scope& scope, DataType dtype) const {
    return Gated(scope, LearningRate(scope, dtype), 0);
  }
  const Output& apply_if() const { return apply_if_; }

 private:
  absl::StatusOr<std::vector<GradAndVar>> SymbolicGradients(
      const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const;
  absl::StatusOr<Operation> BuildApply(const Scope& scope,
                                       const std::vector<GradAndVar>& grads_and_vars,
                                       const std::optional<Variable>& global_step);

  const std::string name_;
  const std::optional<Input> learning_rate_;
  // (slot, variable name) -> slot variable.
  std::map<std::pair<std::string, std::string>, Variable> slots_;
  friend class LossScaleOptimizer;
  // Set while a LossScaleOptimizer builds this optimizer's updates.
  Output apply_if_;
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_OPTIMIZER_H_
