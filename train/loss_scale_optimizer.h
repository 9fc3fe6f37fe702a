// Loss scaling for mixed-precision training: TF 1.x's
// MixedPrecisionLossScaleOptimizer with its DynamicLossScale and
// FixedLossScale (tf.compat.v1.mixed_precision).
//
//   auto momentum = std::make_shared<train::MomentumOptimizer>(0.1, 0.9);
//   train::LossScaleOptimizer opt(momentum);  // dynamic: 2^15, x2 per 2000 good steps
//   Operation train_op = opt.Minimize(scope, loss, global_step);
//
// ComputeGradients differentiates loss * scale, so that small float16
// gradients do not flush to zero, and multiplies each gradient by 1/scale.
// ApplyGradients, with a dynamic scale:
// - when every gradient is finite, the wrapped optimizer's update applies;
//   after `increment_period` such steps in a row the scale is multiplied by
//   `multiplier` (kept when the product is not finite);
// - otherwise the step is skipped — the variables, their slots, the
//   optimizer's own variables and the global step stay as they were — and
//   the scale is divided by `multiplier`, not below 1.
// Both happen on the device, by selects (Note [Skipped steps] in
// train/optimizer.h), so a step with a loss scale can be a replayed one.
// With a fixed scale every step applies, as TF's FixedLossScale.
//
// The state is TF's two variables, "current_loss_scale" (float32) and
// "good_steps" (int64), global and not trainable, so a checkpoint saves and
// restores it. Under ReplicateModelFn, wrap it in the TowerOptimizer
// (TowerOptimizer(LossScaleOptimizer(opt))): the towers' gradients are
// summed, and all-reduced across processes, before the check, so every tower
// and every process skips the same steps.
//
// Thread-compatible, as every optimizer.
#ifndef TOWERFLOW_TRAIN_LOSS_SCALE_OPTIMIZER_H_
#define TOWERFLOW_TRAIN_LOSS_SCALE_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "train/optimizer.h"

namespace towerflow {
namespace train {

struct LossScale {
  // TF's DynamicLossScale defaults.
  static LossScale Dynamic(double initial_loss_scale = 32768, int64_t increment_period = 2000,
                           double multiplier = 2) {
    return {true, initial_loss_scale, increment_period, multiplier};
  }
  static LossScale Fixed(double loss_scale) { return {false, loss_scale, 0, 1}; }

  bool dynamic = true;
  double initial_loss_scale = 32768;
  int64_t increment_period = 2000;
  double multiplier = 2;
};

class LossScaleOptimizer final : public Optimizer {
 public:
  // REQUIRES: optimizer != nullptr. Takes the wrapped optimizer's name.
  explicit LossScaleOptimizer(std::shared_ptr<Optimizer> optimizer,
                              LossScale loss_scale = LossScale::Dynamic());

  // The wrapped optimizer's gradients of loss * scale, times 1 / scale.
  // Errors as Optimizer's; InvalidArgument for a loss scale below 1.
  std::vector<GradAndVar> ComputeGradients(
      const Scope& scope, const Output& loss,
      const std::vector<Variable>& var_list = {}) const override;
  // The wrapped optimizer's update, skipped when a gradient is not finite
  // (dynamic scale), and the scale's update. Errors as Optimizer's;
  // InvalidArgument when a dynamic scale wraps an optimizer that cannot
  // skip a step on the device (Optimizer::SupportsSkipping).
  Operation ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                           const std::optional<Variable>& global_step = {}) override;
  Variable GetSlot(const Variable& var, const std::string& slot) const override;

  // The loss scale now: the variable's value, or the fixed scale.
  Output loss_scale(const Scope& scope) const;
  // The state variables (invalid with a fixed scale, or before the first
  // ComputeGradients or ApplyGradients).
  Variable current_loss_scale() const { return current_; }
  Variable good_steps() const { return good_steps_; }
  Optimizer& optimizer() const { return *optimizer_; }

 private:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;
  // Creates (or finds) the state variables; false with the error in scope.
  bool MakeState(const Scope& scope) const;
  // The state's update after a step whose gradients are `finite`.
  std::vector<Operation> UpdateState(const Scope& scope, const Output& finite) const;

  std::shared_ptr<Optimizer> optimizer_;
  const LossScale loss_scale_;
  mutable Variable current_, good_steps_;
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_LOSS_SCALE_OPTIMIZER_H_
