#include "examples/resnet/model.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "estimator/tower_optimizer.h"
#include "graph/collections.h"
#include "ops/variables.h"
#include "ops/initializers.h"
#include "ops/ops.h"
#include "train/learning_rate.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace resnet {
namespace {

constexpr float kBatchNormMomentum = 0.997f;
constexpr float kBatchNormEpsilon = 1e-5f;

// A name scope and a variable scope of the same name.
Scope Sub(const Scope& scope, const std::string& name) {
  return scope.NewSubScope(name).WithVariableScope(name);
}

// Batch norm then ReLU. In training the batch's statistics normalise and
// the moving averages follow them (update ops); otherwise the moving
// averages normalise.
Output BatchNormRelu(const Scope& scope, const Output& x, int64_t channels, bool training) {
  const Scope s = Sub(scope, "batch_normalization");
  const TensorShape shape({channels});
  Variable gamma = GetVariable(s, "gamma", shape, DT_FLOAT, initializers::Ones());
  Variable beta = GetVariable(s, "beta", shape, DT_FLOAT, initializers::Zeros());
  VariableOptions frozen;
  frozen.trainable = false;
  Variable mean = GetVariable(s, "moving_mean", shape, DT_FLOAT, initializers::Zeros(), frozen);
  Variable variance =
      GetVariable(s, "moving_variance", shape, DT_FLOAT, initializers::Ones(), frozen);
  ops::FusedBatchNormV3 bn(s, x, gamma.value(), beta.value(), mean.value(), variance.value(),
                           ops::FusedBatchNormV3::Epsilon(kBatchNormEpsilon).IsTraining(training));
  if (training) {
    const float rate = 1 - kBatchNormMomentum;
    const auto follow = [&](const Variable& v, const Output& batch) {
      Output step = ops::Mul(s, ops::Sub(s, v.value(), batch), rate);
      AddToCollection(s.graph(), GraphKeys::kUpdateOps,
                      Operation(ops::AssignSubVariableOp(s, v.handle(), step).operation));
    };
    follow(mean, bn.batch_mean);
    follow(variance, bn.batch_variance);
  }
  return ops::Relu(s, bn.y);
}

// TF's conv2d_fixed_padding: explicit padding at stride > 1, so that the
// output does not depend on the input's size.
Output Conv(const Scope& scope, const std::string& name, Output x, int64_t in, int64_t out,
            int64_t kernel, int64_t stride) {
  const Scope s = Sub(scope, name);
  Variable w = GetVariable(s, "kernel", TensorShape({kernel, kernel, in, out}), DT_FLOAT,
                           initializers::HeNormal());
  std::string padding = "SAME";
  if (stride > 1) {
    const int64_t total = kernel - 1, begin = total / 2;
    x = ops::Pad(s, x,
                 ops::Const(s, {{int64_t{0}, int64_t{0}},
                                {begin, total - begin},
                                {begin, total - begin},
                                {int64_t{0}, int64_t{0}}}));
    padding = "VALID";
  }
  return ops::Conv2D(s, x, w.value(), {1, stride, stride, 1}, padding);
}

// Building block v2.
Output Block(const Scope& scope, Output x, int64_t in, int64_t filters, int64_t stride,
             bool projection, bool training) {
  Output shortcut = x;
  x = BatchNormRelu(Sub(scope, "preact"), x, in, training);
  if (projection) shortcut = Conv(scope, "projection", x, in, filters, 1, stride);
  x = Conv(scope, "conv1", x, in, filters, 3, stride);
  x = BatchNormRelu(Sub(scope, "bn2"), x, filters, training);
  x = Conv(scope, "conv2", x, filters, filters, 3, 1);
  return ops::AddV2(scope, x, shortcut);
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
  const int blocks = (resnet_size - 2) / 6;
  Output x = Conv(scope, "initial_conv", images, shape.dim_size(3), 16, 3, 1);
  int64_t in = 16;
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t filters = int64_t{16} << stage;
    for (int b = 0; b < blocks; ++b) {
      const Scope s = Sub(scope, absl::StrCat("block_layer", stage + 1, "/block", b));
      x = Block(s, x, in, filters, b == 0 && stage > 0 ? 2 : 1, /*projection=*/b == 0, training);
      in = filters;
    }
  }
  x = BatchNormRelu(Sub(scope, "final"), x, in, training);
  x = ops::Mean(scope.WithOpName("global_average_pool"), x, {1, 2});
  const Scope dense = Sub(scope, "dense");
  Variable w = GetVariable(dense, "kernel", TensorShape({in, num_classes}), DT_FLOAT,
                           initializers::GlorotUniform());
  Variable b =
      GetVariable(dense, "bias", TensorShape({num_classes}), DT_FLOAT, initializers::Zeros());
  return ops::BiasAdd(dense.WithOpName("logits"), ops::MatMul(dense, x, w.value()), b.value());
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
      ops::Mean(s.WithOpName("cross_entropy"),
                ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y).loss, {0});
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
  TowerOptimizer opt(std::make_shared<train::MomentumOptimizer>(
      ops::Cast(s, lr, DT_FLOAT), static_cast<float>(params.Get("momentum", 0.9))));
  spec.train_op = opt.Minimize(s, spec.loss, global_step);
  return spec;
}

}  // namespace resnet
}  // namespace towerflow
