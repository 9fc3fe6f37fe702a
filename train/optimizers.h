// The optimizers of TensorFlow 1.x, each one update op per variable (the
// fused ResourceApply* kernels). Updates, with lr the learning rate and g the
// gradient:
//   GradientDescent  var -= lr g
//   Momentum         accum = momentum accum + g
//                    var -= lr accum                (nesterov: lr (g + momentum accum))
//   Adam             m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2
//                    var -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)
//   Adagrad          accum += g^2,  var -= lr g / sqrt(accum)
//   RMSProp          ms = decay ms + (1 - decay) g^2
//                    mom = momentum mom + lr g / sqrt(ms + eps),  var -= mom
// Slots (TensorFlow's names): Momentum "<var>/Momentum"; Adam "<var>/Adam"
// (m) and "<var>/Adam_1" (v) plus the scalars beta1_power, beta2_power;
// Adagrad "<var>/Adagrad"; RMSProp "<var>/RMSProp" (ms, starts at 1) and
// "<var>/RMSProp_1" (mom).
#ifndef TOWERFLOW_TRAIN_OPTIMIZERS_H_
#define TOWERFLOW_TRAIN_OPTIMIZERS_H_

#include <functional>

#include "train/optimizer.h"

namespace towerflow {
namespace train {

class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(Input learning_rate)
      : Optimizer("GradientDescent", std::move(learning_rate)) {}
  bool SupportsSkipping() const override { return true; }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  // Only the gradient's rows: var[indices] -= lr * values (TF's
  // _resource_apply_sparse_duplicate_indices: a scatter, repeats each applied).
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;
};

class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(Input learning_rate, Input momentum, bool use_nesterov = false)
      : Optimizer("Momentum", std::move(learning_rate)),
        momentum_(std::move(momentum)),
        use_nesterov_(use_nesterov) {}
  bool SupportsSkipping() const override { return true; }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;

 private:
  Variable Accumulator(const Scope& scope, const Variable& var);
  const Input momentum_;
  const bool use_nesterov_;
};

class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(Input learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                         double epsilon = 1e-8, bool use_nesterov = false)
      : Optimizer("Adam", std::move(learning_rate)),
        beta1_(beta1),
        beta2_(beta2),
        epsilon_(epsilon),
        use_nesterov_(use_nesterov) {}
  bool SupportsSkipping() const override { return true; }

  // The bias-correction accumulators b1^t and b2^t (invalid before the
  // first ApplyGradients).
  Variable beta1_power() const { return beta1_power_; }
  Variable beta2_power() const { return beta2_power_; }

 protected:
  absl::Status Prepare(const Scope& scope, const std::vector<Variable>& vars) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation Finish(const Scope& scope, const std::vector<Operation>& updates) override;

 private:
  const double beta1_, beta2_, epsilon_;
  const bool use_nesterov_;
  Variable beta1_power_, beta2_power_;
};

class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(Input learning_rate, double initial_accumulator_value = 0.1)
      : Optimizer("Adagrad", std::move(learning_rate)), initial_(initial_accumulator_value) {}
  bool SupportsSkipping() const override { return true; }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;

 private:
  Variable Accumulator(const Scope& scope, const Variable& var);
  const double initial_;
};

class RMSPropOptimizer : public Optimizer {
 public:
  explicit RMSPropOptimizer(Input learning_rate, double decay = 0.9, double momentum = 0.0,
                            double epsilon = 1e-10)
      : Optimizer("RMSProp", std::move(learning_rate)),
        decay_(decay),
        momentum_(momentum),
        epsilon_(epsilon) {}
  bool SupportsSkipping() const override { return true; }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  // TF's sparse RMSProp: ms and mom move only on the rows of the step.
  Operation ApplySparse(const Scope& scope, const IndexedSlices& grad,
                        const Variable& var) override;

 private:
  // The slots "<var>/RMSProp" (ms, starting at 1) and "<var>/RMSProp_1"
  // (mom); false when they could not be made (the scope has the error).
  bool Slots(const Scope& scope, const Variable& var, Variable* ms, Variable* mom);
  // `update` built so that a skipped step leaves var and mom as they were
  // (Note [Skipped steps] in train/optimizer.h).
  Operation Skippable(const Scope& scope, const Variable& var, const Variable& mom,
                      const std::function<Operation(const Scope&)>& update);

  const double decay_, momentum_, epsilon_;
};

// Clips `tensors` (none entries pass through) so their global norm
// sqrt(sum ||t||^2) is at most `clip_norm`: t * clip_norm / max(global_norm,
// clip_norm). Returns the clipped tensors and the global norm (TF's
// tf.clip_by_global_norm). IndexedSlices are clipped on their values.
struct ClippedGradients {
  std::vector<Gradient> tensors;
  Output global_norm;
};
absl::StatusOr<ClippedGradients> ClipByGlobalNorm(const Scope& scope,
                                                  const std::vector<Gradient>& tensors,
                                                  Input clip_norm);
// The same over the gradients of (gradient, variable) pairs.
absl::StatusOr<std::vector<GradAndVar>> ClipByGlobalNorm(const Scope& scope,
                                                         const std::vector<GradAndVar>& grads,
                                                         Input clip_norm,
                                                         Output* global_norm = nullptr);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_OPTIMIZERS_H_
