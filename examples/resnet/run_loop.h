// The official ResNet's training loop pieces (models/official/resnet,
// resnet_run_loop.py) that the CIFAR-10 and ImageNet models share: its
// model_fn around the logits and learning_rate_with_decay.
#ifndef TOWERFLOW_EXAMPLES_RESNET_RUN_LOOP_H_
#define TOWERFLOW_EXAMPLES_RESNET_RUN_LOOP_H_

#include <vector>

#include "estimator/model_fn.h"

namespace towerflow {
namespace resnet {

// learning_rate_with_decay: base_lr * batch_size / batch_denom, times
// decay_rates[i] from epoch boundary_epochs[i - 1] on (an epoch is
// num_images / batch_size steps); with warmup_epochs > 0, rising linearly
// from 0 over those first epochs.
struct LearningRateSchedule {
  double batch_size = 128;
  double batch_denom = 128;
  double num_images = 50000;
  double base_lr = 0.1;
  std::vector<double> boundary_epochs;
  std::vector<double> decay_rates;  // one more than the boundaries
  double warmup_epochs = 0;
};
// The learning rate (float) at `global_step` (int64).
Output LearningRateWithDecay(const Scope& scope, const Output& global_step,
                             const LearningRateSchedule& schedule);

// resnet_model_fn around `logits` [batch, classes]: predictions "classes"
// and "probabilities"; the loss, the mean softmax cross-entropy with
// labels["labels"] (int32; smoothed by params "label_smoothing" when not 0)
// plus "weight_decay" (2e-4) times the L2 of every trainable variable but
// batch norm's; EVAL "accuracy"; TRAIN Momentum ("momentum", 0.9) under
// TowerOptimizer, in the mixed precision params ask for, at the schedule's
// rate.
EstimatorSpec RunLoopModelFn(const Scope& scope, const Output& logits, const FeatureMap& labels,
                             ModeKeys mode, const Params& params,
                             const LearningRateSchedule& schedule);

}  // namespace resnet
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_RESNET_RUN_LOOP_H_
