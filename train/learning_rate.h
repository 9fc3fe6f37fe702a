// Learning-rate schedules as graph ops of the global step (TensorFlow 1.x's
// tf.train.*_decay). Each returns a float scalar; `step` is the global
// step's value (any integer or float scalar).
//
//   Output lr = train::ExponentialDecay(root, 0.1, step.value(), 350 * batches_per_epoch, 0.1,
//                                       /*staircase=*/true);
//   train::MomentumOptimizer opt(lr, 0.9);
#ifndef TOWERFLOW_TRAIN_LEARNING_RATE_H_
#define TOWERFLOW_TRAIN_LEARNING_RATE_H_

#include <cstdint>
#include <vector>

#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace train {

// lr * rate^(step / decay_steps), the exponent floored when `staircase`.
Output ExponentialDecay(const Scope& scope, double learning_rate, const Output& step,
                        int64_t decay_steps, double decay_rate, bool staircase = false);

// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] <
// step <= boundaries[i], values.back() after the last boundary.
// REQUIRES (else a sticky InvalidArgument): values.size() ==
// boundaries.size() + 1, boundaries increasing.
Output PiecewiseConstant(const Scope& scope, const Output& step,
                         const std::vector<int64_t>& boundaries, const std::vector<double>& values);

// (lr - end) * (1 - min(step, decay_steps) / decay_steps)^power + end.
Output PolynomialDecay(const Scope& scope, double learning_rate, const Output& step,
                       int64_t decay_steps, double end_learning_rate = 0.0001, double power = 1.0);

// lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
// decay_steps)) + alpha).
Output CosineDecay(const Scope& scope, double learning_rate, const Output& step,
                   int64_t decay_steps, double alpha = 0.0);

// Linear warm-up: lr * step / warmup_steps while step < warmup_steps, then
// `learning_rate` (the official ResNet's warm-up).
Output LinearWarmup(const Scope& scope, const Output& learning_rate, const Output& step,
                    int64_t warmup_steps);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_LEARNING_RATE_H_
