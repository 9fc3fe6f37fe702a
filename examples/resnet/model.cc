#include "examples/resnet/model.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "estimator/mixed_precision.h"
#include "estimator/tower_optimizer.h"
#include "layers/layers.h"
#include "layers/losses.h"
#include "ops/initializers.h"
#include "ops/ops.h"
#include "ops/variables.h"
#include "train/learning_rate.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace resnet {
namespace {

constexpr double kBatchNormMomentum = 0.997;
constexpr double kBatchNormEpsilon = 1e-5;

// Batch norm then ReLU. In training the batch's statistics normalise and
// the moving averages follow them (update ops); otherwise the moving
// averages normalise.
Output BatchNormRelu(const Scope& s, const Output& x, bool training) {
  return ops::Relu(s, layers::BatchNormalization(s, x,
                                                 {.axis = 3,
                                                  .momentum = kBatchNormMomentum,
                                                  .epsilon = kBatchNormEpsilon,
                                                  .training = training,
                                                  .fused = true}));
}

// TF's conv2d_fixed_padding: explicit padding at stride > 1, so that the
// output does not depend on the input's size.
Output Conv(const Scope& s, Output x, int64_t filters, int64_t kernel, int64_t stride) {
  std::string padding = "same";
  if (stride > 1) {
    const int64_t total = kernel - 1, begin = total / 2;
    x = ops::Pad(s, x,
                 ops::Const(s, {{int64_t{0}, int64_t{0}},
                                {begin, total - begin},
                                {begin, total - begin},
                                {int64_t{0}, int64_t{0}}}));
    padding = "valid";
  }
  return layers::Conv2D(s, x, filters, kernel,
                        {.strides = stride,
                         .padding = padding,
                         .use_bias = false,
                         .kernel_initializer = initializers::HeNormal()});
}

// Building block v2: BN-ReLU, (projection of the shortcut), conv, BN-ReLU,
// conv, plus the shortcut.
Output Block(const Scope& s, Output x, int64_t filters, int64_t stride, bool projection,
             bool training) {
  Output shortcut = x;
  x = BatchNormRelu(s, x, training);
  if (projection) shortcut = Conv(s, x, filters, 1, stride);
  x = Conv(s, x, filters, 3, stride);
  x = BatchNormRelu(s, x, training);
  x = Conv(s, x, filters, 3, 1);
  return ops::AddV2(s, x, shortcut);
}

}  // namespace

Output Inference(const Scope& scope, const Output& images, int resnet_size, int num_classes,
                 bool training) {
  if (resnet_size < 8 || resnet_size % 6 != 2) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("resnet_size must be 6n + 2 (20, 32, 44, 56, ...), got ", resnet_size)));
    return Output();
  }
  const PartialTensorShape& shape = images.shape();
  if (shape.dims() != 4 || shape.dim_size(3) < 0) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "resnet: images must be [batch, height, width, channels] with known channels, got ",
        shape.DebugString())));
    return Output();
  }
  // TF's _model_variable_scope: every variable under "resnet_model/".
  const Scope s = scope.WithVariableScope("resnet_model");
  const int blocks = (resnet_size - 2) / 6;
  Output x = ops::Identity(s.WithOpName("initial_conv"), Conv(s, images, 16, 3, 1));
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t filters = int64_t{16} << stage;
    for (int b = 0; b < blocks; ++b) {
      x = Block(s, x, filters, b == 0 && stage > 0 ? 2 : 1, /*projection=*/b == 0, training);
    }
    x = ops::Identity(s.WithOpName("block_layer", stage + 1), x);
  }
  x = BatchNormRelu(s, x, training);
  x = ops::Mean(s.WithOpName("final_reduce_mean"), x, {1, 2});
  return ops::Identity(s.WithOpName("final_dense"), layers::Dense(s, x, num_classes));
}

EstimatorSpec ModelFn(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params) {
  EstimatorSpec spec(mode);
  Output logits =
      Inference(s, features.at("images"), static_cast<int>(params.Get("resnet_size", 32)),
                static_cast<int>(params.Get("num_classes", 10)), mode == ModeKeys::kTrain);
  if (!s.ok()) return spec;
  spec.predictions["classes"] = ops::ArgMax(s.WithOpName("classes"), logits, 1);
  spec.predictions["probabilities"] = ops::Softmax(s.WithOpName("probabilities"), logits);
  if (mode == ModeKeys::kPredict) return spec;

  const Output& y = labels.at("labels");
  Output cross_entropy =
      ops::Identity(s.WithOpName("cross_entropy"), losses::SparseSoftmaxCrossEntropy(s, y, logits));
  // Weight decay on every trainable variable but batch norm's.
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

  // 0.1 per 128 examples, divided by 10 at epochs 91, 136 and 182.
  const double initial = 0.1 * params.Get("batch_size", 128) / 128;
  const double steps_per_epoch = params.Get("steps_per_epoch", 390);
  std::vector<int64_t> boundaries;
  for (int epoch : {91, 136, 182})
    boundaries.push_back(static_cast<int64_t>(steps_per_epoch * epoch));
  Variable global_step = train::GetOrCreateGlobalStep(s);
  Output lr =
      train::PiecewiseConstant(s.NewSubScope("learning_rate"), global_step.value(s), boundaries,
                               {initial, initial * 0.1, initial * 0.01, initial * 0.001});
  TowerOptimizer opt(MixedPrecisionOptimizer(
      params, std::make_shared<train::MomentumOptimizer>(
                  ops::Cast(s, lr, DT_FLOAT), static_cast<float>(params.Get("momentum", 0.9)))));
  spec.train_op = opt.Minimize(s, spec.loss, global_step);
  return spec;
}

}  // namespace resnet
}  // namespace towerflow
