#include "examples/cifar10/model.h"

#include <memory>

#include "estimator/mixed_precision.h"
#include "estimator/tower_optimizer.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/initializers.h"
#include "ops/variables.h"
#include "train/learning_rate.h"
#include "train/metrics.h"
#include "train/moving_averages.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace cifar10 {
namespace {

// A variable, plus wd * l2_loss(var) in `*decay` (cifar10.py's
// _variable_with_weight_decay).
Output Weights(const Scope& s, const TensorShape& shape, double stddev, double wd,
               std::vector<Output>* decay) {
  Variable v = GetVariable(s, "weights", shape, DT_FLOAT, initializers::TruncatedNormal(stddev));
  if (wd > 0 && decay != nullptr) {
    decay->push_back(
        ops::Mul(s.WithOpName("weight_loss"), ops::L2Loss(s, v.value()), static_cast<float>(wd)));
  }
  return v.value();
}

Output Biases(const Scope& s, int64_t n, float value) {
  return GetVariable(s, "biases", TensorShape({n}), DT_FLOAT, initializers::Constant(value))
      .value();
}

Output Conv(const Scope& scope, const std::string& name, const Output& x, int64_t in, float bias) {
  const Scope s = scope.NewSubScope(name).WithVariableScope(name);
  Output w = Weights(s, TensorShape({5, 5, in, 64}), 5e-2, 0, nullptr);
  Output conv = ops::Conv2D(s, x, w, {1, 1, 1, 1}, "SAME");
  return ops::Relu(s.WithOpName(name), ops::BiasAdd(s, conv, Biases(s, 64, bias)));
}

Output Local(const Scope& scope, const std::string& name, const Output& x, int64_t in, int64_t out,
             double stddev, double wd, float bias, bool relu, std::vector<Output>* decay) {
  const Scope s = scope.NewSubScope(name).WithVariableScope(name);
  Output w = Weights(s, TensorShape({in, out}), stddev, wd, decay);
  Output y = ops::BiasAdd(s, ops::MatMul(s, x, w), Biases(s, out, bias));
  return relu ? Output(ops::Relu(s.WithOpName(name), y)) : y;
}

Output Pool(const Scope& s, const std::string& name, const Output& x) {
  return ops::MaxPool(s.WithOpName(name), x, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME");
}

Output Norm(const Scope& s, const std::string& name, const Output& x) {
  return ops::LRN(s.WithOpName(name), x,
                  ops::LRN::DepthRadius(4).Bias(1.0f).Alpha(0.001f / 9.0f).Beta(0.75f));
}

// cifar10.py's _activation_summary: a histogram of the layer's output and
// the fraction of it that is zero, tagged by the layer ("conv1").
void ActivationSummaries(const Scope& scope, const std::string& layer, const Output& x) {
  const Scope s = scope.NewSubScope(layer);
  AddToCollection(s.graph(), GraphKeys::kSummaries,
                  ops::HistogramSummary(s, layer + "/activations", x));
  Output zeros = ops::Cast(s, ops::Equal(s, x, ops::ZerosLike(s, x)), DT_FLOAT);
  Output zero_fraction =
      ops::Mean(s.WithOpName("zero_fraction"), ops::Reshape(s, zeros, {int64_t{-1}}), {0});
  AddToCollection(s.graph(), GraphKeys::kSummaries,
                  ops::ScalarSummary(s, layer + "/sparsity", zero_fraction));
}

}  // namespace

Output Inference(const Scope& scope, const Output& images, int num_classes, double weight_decay,
                 std::vector<Output>* decay, std::vector<Output>* activations) {
  const PartialTensorShape& shape = images.shape();
  if (shape.dims() != 4 || shape.dim_size(1) < 0 || shape.dim_size(2) < 0 ||
      shape.dim_size(3) < 0) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("cifar10 model: images must be [batch, height, width, channels] with known "
                     "height, width and channels, got ",
                     shape.DebugString())));
    return Output();
  }
  const int64_t height = shape.dim_size(1), width = shape.dim_size(2);
  Output conv1 = Conv(scope, "conv1", images, shape.dim_size(3), 0.0f);
  Output norm1 = Norm(scope, "norm1", Pool(scope, "pool1", conv1));
  Output conv2 = Conv(scope, "conv2", norm1, 64, 0.1f);
  Output pool2 = Pool(scope, "pool2", Norm(scope, "norm2", conv2));
  // Two SAME poolings of stride 2.
  const int64_t dim = ((height + 3) / 4) * ((width + 3) / 4) * 64;
  Output flat = ops::Reshape(scope, pool2, {int64_t{-1}, dim});
  Output local3 = Local(scope, "local3", flat, dim, 384, 0.04, weight_decay, 0.1f, true, decay);
  Output local4 = Local(scope, "local4", local3, 384, 192, 0.04, weight_decay, 0.1f, true, decay);
  Output logits =
      Local(scope, "softmax_linear", local4, 192, num_classes, 1 / 192.0, 0, 0.0f, false, decay);
  if (activations != nullptr) *activations = {conv1, conv2, local3, local4, logits};
  return logits;
}

EstimatorSpec ModelFn(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params) {
  EstimatorSpec spec(mode);
  std::vector<Output> decay, activations;
  Output logits =
      Inference(s, features.at("images"), static_cast<int>(params.Get("num_classes", 10)),
                params.Get("weight_decay", 0.004), &decay, &activations);
  if (!s.ok()) return spec;
  spec.predictions["classes"] = ops::ArgMax(s.WithOpName("classes"), logits, 1);
  spec.predictions["probabilities"] = ops::Softmax(s.WithOpName("probabilities"), logits);
  const std::vector<Variable> trainable = GetVariables(*s.graph(), GraphKeys::kTrainableVariables);
  Variable global_step = train::GetOrCreateGlobalStep(s);
  train::ExponentialMovingAverage ema(params.Get("moving_average_decay", 0.9999),
                                      global_step.value(s));
  if (mode != ModeKeys::kTrain) spec.restore_var_names = ema.VariablesToRestore(trainable);
  if (mode == ModeKeys::kPredict) return spec;

  const Output& y = labels.at("labels");
  Output cross_entropy =
      ops::Mean(s.WithOpName("cross_entropy"),
                ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y).loss, {0});
  decay.push_back(cross_entropy);
  spec.loss = ops::AddN(s.WithOpName("total_loss"), decay);
  if (mode == ModeKeys::kEval) {
    spec.eval_metric_ops["accuracy"] = train::Mean(
        s.NewSubScope("accuracy"), ops::Cast(s, ops::InTopKV2(s, logits, y, int32_t{1}), DT_FLOAT));
    return spec;
  }

  const int64_t decay_steps =
      static_cast<int64_t>(params.Get("steps_per_epoch", 390) * params.Get("decay_epochs", 350));
  Output lr =
      train::ExponentialDecay(s.NewSubScope("learning_rate"), params.Get("learning_rate", 0.1),
                              global_step.value(s), decay_steps, params.Get("decay_factor", 0.1),
                              /*staircase=*/true);
  // The tutorial keeps the last tower's summaries; made on the CPU, which
  // has every summary kernel.
  if (params.tower_index == params.num_towers - 1) {
    const Scope summaries = s.NewSubScope("summaries").WithDevice("/device:CPU:0");
    const char* const layers[] = {"conv1", "conv2", "local3", "local4", "softmax_linear"};
    for (size_t i = 0; i < activations.size(); ++i) {
      ActivationSummaries(summaries, layers[i], activations[i]);
    }
    AddToCollection(s.graph(), GraphKeys::kSummaries,
                    ops::ScalarSummary(summaries, std::string("learning_rate"), lr));
  }
  TowerOptimizer opt(
      MixedPrecisionOptimizer(params, std::make_shared<train::GradientDescentOptimizer>(lr)));
  spec.train_op = opt.Minimize(s, spec.loss, global_step);
  // The towers' gradients are applied once, by the last tower's call: the
  // moving averages follow that update, once per step.
  if (params.tower_index == params.num_towers - 1) {
    spec.train_op = ema.Apply(
        s.NewSubScope("moving_averages").WithControlDependencies({spec.train_op}), trainable);
  }
  return spec;
}

}  // namespace cifar10
}  // namespace towerflow
