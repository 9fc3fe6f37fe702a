#include "examples/resnet/run_loop.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "estimator/mixed_precision.h"
#include "estimator/tower_optimizer.h"
#include "layers/losses.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/variables.h"
#include "train/learning_rate.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace resnet {

Output LearningRateWithDecay(const Scope& scope, const Output& global_step,
                             const LearningRateSchedule& schedule) {
  const Scope s = scope.NewSubScope("learning_rate");
  const double initial = schedule.base_lr * schedule.batch_size / schedule.batch_denom;
  const double batches_per_epoch = schedule.num_images / schedule.batch_size;
  std::vector<int64_t> boundaries;
  for (double epoch : schedule.boundary_epochs) {
    boundaries.push_back(static_cast<int64_t>(batches_per_epoch * epoch));
  }
  std::vector<double> values;
  for (double rate : schedule.decay_rates) values.push_back(initial * rate);
  Output lr = ops::Cast(s, train::PiecewiseConstant(s, global_step, boundaries, values), DT_FLOAT);
  if (schedule.warmup_epochs <= 0) return lr;
  // Linear from 0 over the first epochs.
  const int64_t warmup_steps = static_cast<int64_t>(batches_per_epoch * schedule.warmup_epochs);
  Output step = ops::Cast(s, global_step, DT_FLOAT);
  Output warmup = ops::Mul(s, ops::Const(s, static_cast<float>(initial)),
                           ops::Div(s, step, ops::Const(s, static_cast<float>(warmup_steps))));
  return ops::SelectV2(
      s.WithOpName("warmup"),
      ops::Less(s, global_step, ops::Cast(s, ops::Const(s, warmup_steps), global_step.type())),
      warmup, lr);
}

EstimatorSpec RunLoopModelFn(const Scope& s, const Output& logits, const FeatureMap& labels,
                             ModeKeys mode, const Params& params,
                             const LearningRateSchedule& schedule) {
  EstimatorSpec spec(mode);
  if (!s.ok()) return spec;
  spec.predictions["classes"] = ops::ArgMax(s.WithOpName("classes"), logits, 1);
  spec.predictions["probabilities"] = ops::Softmax(s.WithOpName("probabilities"), logits);
  if (mode == ModeKeys::kPredict) return spec;

  const Output& y = labels.at("labels");
  const double smoothing = params.Get("label_smoothing", 0);
  Output cross_entropy;
  if (smoothing != 0) {
    const int64_t classes = logits.shape().dim_size(1);
    cross_entropy =
        losses::SoftmaxCrossEntropy(s,
                                    ops::OneHot(s, y, ops::Const(s, static_cast<int32_t>(classes)),
                                                ops::Const(s, 1.0f), ops::Const(s, 0.0f)),
                                    logits, smoothing);
  } else {
    cross_entropy = losses::SparseSoftmaxCrossEntropy(s, y, logits);
  }
  cross_entropy = ops::Identity(s.WithOpName("cross_entropy"), cross_entropy);
  // Weight decay on every trainable variable but batch norm's (the
  // official loss_filter_fn).
  std::vector<Output> l2;
  for (const Variable& v : GetVariables(*s.graph(), GraphKeys::kTrainableVariables)) {
    if (!absl::StrContains(v.name(), "batch_normalization"))
      l2.push_back(ops::L2Loss(s, v.value(s)));
  }
  Output decay =
      ops::Mul(s, ops::AddN(s, l2), static_cast<float>(params.Get("weight_decay", 2e-4)));
  spec.loss = ops::AddV2(s.WithOpName("total_loss"), cross_entropy, decay);
  if (mode == ModeKeys::kEval) {
    spec.eval_metric_ops["accuracy"] =
        train::Accuracy(s, y, ops::Cast(s, spec.predictions["classes"], DT_INT32));
    return spec;
  }
  Variable global_step = train::GetOrCreateGlobalStep(s);
  Output lr = LearningRateWithDecay(s, global_step.value(s), schedule);
  TowerOptimizer opt(
      MixedPrecisionOptimizer(params, std::make_shared<train::MomentumOptimizer>(
                                          lr, static_cast<float>(params.Get("momentum", 0.9)))));
  spec.train_op = opt.Minimize(s, spec.loss, global_step);
  return spec;
}

}  // namespace resnet
}  // namespace towerflow
