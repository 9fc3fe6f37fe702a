// Mixed precision through the Estimator: a small classifier on two virtual
// CPU towers trains in mixed_bfloat16 and mixed_float16 to the test
// accuracy of float32 (within half a point) at the same step, with its
// products in the 16-bit type and float32 variables.
#include "estimator/mixed_precision.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/variables.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/loss_scale_optimizer.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// Points of the plane in three classes: inside the circle of radius 0.6,
// outside it above the line y = x / 2, outside it below.
void Points(int n, double phase, std::vector<float>* xy, std::vector<int32_t>* label) {
  for (int i = 0; i < n; ++i) {
    const double x = std::sin(1.37 * i + phase), y = std::cos(0.91 * i + 2 * phase);
    xy->push_back(static_cast<float>(x));
    xy->push_back(static_cast<float>(y));
    label->push_back(x * x + y * y < 0.36 ? 0 : (y > x / 2 ? 1 : 2));
  }
}

InputFn Input(int n, double phase, int64_t batch, int64_t times) {
  return [=]() -> absl::StatusOr<InputSpec> {
    std::vector<float> xy;
    std::vector<int32_t> label;
    Points(n, phase, &xy, &label);
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices(
                            {Literal<float>({n, 2}, xy), Literal<int32_t>({n}, label)}));
    return InputSpec{d.Repeat(times).Batch(batch), {"xy"}, {"label"}};
  };
}

Output Dense(const Scope& s, const std::string& name, const Output& in, int64_t from, int64_t to) {
  Variable w = GetVariable(s, name + "/kernel", TensorShape({from, to}), DT_FLOAT,
                           initializers::GlorotUniform(/*seed=*/7));
  Variable b = GetVariable(s, name + "/bias", TensorShape({to}), DT_FLOAT, initializers::Zeros());
  return ops::BiasAdd(s, ops::MatMul(s, in, w.value()), b.value());
}

EstimatorSpec Classifier(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params& params) {
  Output h = ops::Relu(s, Dense(s, "hidden1", features.at("xy"), 2, 32));
  h = ops::Relu(s, Dense(s, "hidden2", h, 32, 32));
  const Output logits = Dense(s, "logits", h, 32, 3);
  EstimatorSpec spec(mode);
  const Output predicted = ops::ArgMax(s, logits, 1, ops::ArgMax::OutputType(DT_INT32));
  spec.predictions["class"] = predicted;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss =
      ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels.at("label")).loss, 0);
  spec.eval_metric_ops["accuracy"] = train::Accuracy(s, labels.at("label"), predicted);
  if (mode != ModeKeys::kTrain) return spec;
  TowerOptimizer opt(
      MixedPrecisionOptimizer(params, std::make_shared<train::MomentumOptimizer>(0.05, 0.9)));
  spec.train_op = opt.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// Trains 2000 steps of 64 points on two towers (at 400, bfloat16 is still
// 2 points behind: its trajectory differs, and it converges as float32 to
// within 0.2); returns the accuracy on 2000 other points.
double TestAccuracy(Precision precision, std::string* checkpoint) {
  RunConfig config;
  config.model_dir = testing::MakeTempDir(PrecisionName(precision));
  config.session_options.device_count["CPU"] = 2;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  std::ostringstream log;
  config.log = &log;
  config.random_seed = 3;
  Params params;
  SetPrecision(precision, &config.session_options, &params);
  absl::StatusOr<ModelFn> towers = ReplicateModelFn(Classifier, {.devices = {"/cpu:0", "/cpu:1"}});
  EXPECT_TRUE(towers.ok()) << towers.status();
  if (!towers.ok()) return -1;
  Estimator estimator(*towers, config, params);
  absl::StatusOr<TrainResult> trained = estimator.Train(Input(512, 0.0, 64, -1), {.steps = 2000});
  EXPECT_TRUE(trained.ok()) << trained.status();
  absl::StatusOr<MetricMap> metrics = estimator.Evaluate(Input(2000, 0.5, 500, 1));
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  if (!metrics.ok()) return -1;
  if (checkpoint != nullptr) *checkpoint = *LatestCheckpoint(config.model_dir);
  return metrics->at("accuracy");
}

TEST(MixedPrecisionTest, TrainsToFloat32sAccuracy) {
  const double float32 = TestAccuracy(Precision::kFloat32, nullptr);
  EXPECT_GT(float32, 0.9);
  std::string checkpoint;
  for (Precision p : {Precision::kMixedBfloat16, Precision::kMixedFloat16}) {
    SCOPED_TRACE(PrecisionName(p));
    const double mixed = TestAccuracy(p, &checkpoint);
    EXPECT_NEAR(mixed, float32, 0.005);
    // Float32 masters: the checkpoint's variables are float, and under
    // float16 the loss scale's state is saved with them.
    TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> saved, ReadCheckpoint(checkpoint));
    bool scale_saved = false;
    for (const NamedTensor& t : saved) {
      if (t.name == "hidden1/kernel") {
        EXPECT_EQ(t.tensor.dtype(), DT_FLOAT);
      }
      if (t.name == "current_loss_scale") scale_saved = true;
    }
    EXPECT_EQ(scale_saved, p == Precision::kMixedFloat16);
  }
}

TEST(MixedPrecisionTest, NamesAndParams) {
  TW_ASSERT_OK_AND_ASSIGN(Precision parsed, ParsePrecision("mixed_bfloat16"));
  EXPECT_EQ(parsed, Precision::kMixedBfloat16);
  EXPECT_THAT(ParsePrecision("fp16"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "precision 'fp16' is none of float32, mixed_float16 and mixed_bfloat16"));
  SessionOptions options;
  Params params;
  SetPrecision(Precision::kMixedFloat16, &options, &params);
  EXPECT_EQ(options.optimizer.mixed_precision.dtype, DT_HALF);
  EXPECT_EQ(PrecisionOf(params), Precision::kMixedFloat16);
  auto plain = std::make_shared<train::GradientDescentOptimizer>(0.1);
  EXPECT_NE(dynamic_cast<train::LossScaleOptimizer*>(MixedPrecisionOptimizer(params, plain).get()),
            nullptr);
  SetPrecision(Precision::kMixedBfloat16, &options, &params);
  EXPECT_EQ(MixedPrecisionOptimizer(params, plain), plain);
}

}  // namespace
}  // namespace towerflow
