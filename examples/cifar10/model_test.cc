// The CIFAR-10 tutorial model: its variables, and the same training step on
// one tower and on two (LossReduction::kMean, two virtual CPUs).
#include "examples/cifar10/model.h"

#include <filesystem>
#include <random>
#include <sstream>

#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "saved_model/loader.h"
#include "testing/model_fn_harness.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

TEST(Cifar10ModelTest, HasTheTutorialsVariables) {
  Scope root = Scope::NewRootScope();
  Output images = ops::Placeholder(root, DT_FLOAT,
                                   ops::Placeholder::Shape(PartialTensorShape({-1, 24, 24, 3})));
  std::vector<Output> decay;
  Output logits = cifar10::Inference(root, images, 10, 0.004, &decay);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(logits.shape().DebugString(), "[?,10]");
  std::map<std::string, std::string> shapes;
  for (const Variable& v : GetVariables(*root.graph())) shapes[v.name()] = v.shape().DebugString();
  EXPECT_EQ(shapes, (std::map<std::string, std::string>{
                        {"conv1/weights", "[5,5,3,64]"},
                        {"conv1/biases", "[64]"},
                        {"conv2/weights", "[5,5,64,64]"},
                        {"conv2/biases", "[64]"},
                        {"local3/weights", "[2304,384]"},  // 6 * 6 * 64 after two poolings
                        {"local3/biases", "[384]"},
                        {"local4/weights", "[384,192]"},
                        {"local4/biases", "[192]"},
                        {"softmax_linear/weights", "[192,10]"},
                        {"softmax_linear/biases", "[10]"},
                    }));
  EXPECT_EQ(decay.size(), 2u);  // local3 and local4

  Scope bad = Scope::NewRootScope();
  cifar10::Inference(bad, ops::Placeholder(bad, DT_FLOAT), 10, 0.004, nullptr);
  EXPECT_THAT(bad.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "images must be [batch, height, width, channels]"));
}

// Four 12x12x1 images of fixed noise, and their labels.
void FixedImages(Tensor* images, Tensor* labels) {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise;
  *images = Tensor(DT_FLOAT, TensorShape({4, 12, 12, 1}));
  for (int64_t i = 0; i < images->NumElements(); ++i) images->data<float>()[i] = noise(rng);
  *labels = Tensor(DT_INT32, TensorShape({4}));
  for (int i = 0; i < 4; ++i) labels->data<int32_t>()[i] = (3 * i) % 10;
}

// FixedImages' batch, repeated.
InputFn FixedBatch() {
  return []() -> absl::StatusOr<InputSpec> {
    Tensor images, labels;
    FixedImages(&images, &labels);
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images, labels}));
    return InputSpec{d.Batch(4).Repeat(), {"images"}, {"labels"}};
  };
}

// The testing library's checks of a model_fn, on two towers: the loss
// reaches every weight (not the moving averages: they are not trainable),
// and training memorizes a batch.
TEST(Cifar10ModelTest, EveryWeightGetsAGradientAndTwoTowersLearnABatch) {
  Tensor images, labels;
  FixedImages(&images, &labels);
  testing::ModelFnHarnessOptions options;
  options.num_towers = 2;
  testing::ModelFnHarness harness(cifar10::ModelFn, {{"images", images}}, {{"labels", labels}},
                                  options);
  TW_EXPECT_OK(harness.CheckEveryTrainableVariableHasGradient());
  TW_EXPECT_OK(harness.CheckLossDecreases(/*steps=*/30, /*max_ratio=*/0.5));
  TW_ASSERT_OK_AND_ASSIGN(MetricMap metrics, harness.Evaluate());
  EXPECT_EQ(metrics["global_step"], 30);
}

RunConfig Config(const std::string& dir, std::ostream* log) {
  RunConfig config;
  config.model_dir = dir;
  config.log = log;
  config.log_step_count_steps = 0;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.random_seed = 3;
  config.session_options.device_count["CPU"] = 2;
  return config;
}

// The check: a 2-tower and a 1-tower run of the same model on the
// same data reach the same loss after one step. Both start from one
// checkpoint (the towers' graphs differ, so their seeded initial values
// would too).
TEST(Cifar10ModelTest, TwoTowersTakeTheSameStepAsOne) {
  std::ostringstream log;
  const std::string init = testing::MakeTempDir("init");
  Params frozen;
  frozen.values["learning_rate"] = 0;  // one step that changes nothing
  {
    TW_ASSERT_OK_AND_ASSIGN(ModelFn one, ReplicateModelFn(cifar10::ModelFn, {}));
    Estimator start(one, Config(init, &log), frozen);
    TW_ASSERT_OK(start.Train(FixedBatch(), {.steps = 1}));
  }
  std::map<int, std::vector<double>> losses;
  for (int towers : {1, 2}) {
    const std::string dir = testing::MakeTempDir(absl::StrCat("towers_", towers));
    std::filesystem::copy(init, dir,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
    ReplicateOptions options;
    options.loss_reduction = LossReduction::kMean;
    for (int i = 0; i < towers; ++i) options.devices.push_back(absl::StrCat("/cpu:", i));
    TW_ASSERT_OK_AND_ASSIGN(ModelFn model, ReplicateModelFn(cifar10::ModelFn, options));
    Estimator estimator(model, Config(dir, &log));
    auto hook = std::make_shared<StepHistoryHook>();
    TW_ASSERT_OK_AND_ASSIGN(TrainResult r,
                            estimator.Train(FixedBatch(), {.steps = 3, .hooks = {hook}}));
    EXPECT_EQ(r.global_step, 4);
    losses[towers] = hook->losses();
  }
  ASSERT_EQ(losses[1].size(), 3u);
  ASSERT_EQ(losses[2].size(), 3u);
  // The first loss is the shared start's; the next ones follow one and two
  // updates, which must agree.
  for (int step = 0; step < 3; ++step) {
    EXPECT_NEAR(losses[2][step], losses[1][step], 1e-5 * std::abs(losses[1][step]))
        << "step " << step;
  }
  EXPECT_NE(losses[1][1], losses[1][0]);  // training moved
}

// The tutorial model on two towers, trained a few steps and exported as a
// SavedModel: LoadSavedModel of it predicts the same classes (and the same
// probabilities) as the Estimator in process on 100 images, and its
// signature is the Estimator's.
TEST(Cifar10ModelTest, SavedModelPredictsTheSameClassesAsTheEstimator) {
  std::ostringstream log;
  const std::string dir = testing::MakeTempDir("saved_model_towers");
  ReplicateOptions options;
  options.devices = {"/cpu:0", "/cpu:1"};
  TW_ASSERT_OK_AND_ASSIGN(ModelFn model, ReplicateModelFn(cifar10::ModelFn, options));
  Estimator estimator(model, Config(dir, &log));
  TW_ASSERT_OK(estimator.Train(FixedBatch(), {.steps = 3}));
  Signature features = {{"images", {DT_FLOAT, PartialTensorShape({-1, 12, 12, 1})}}};
  TW_ASSERT_OK_AND_ASSIGN(std::string export_dir,
                          estimator.ExportSavedModel(dir + "/export", features));

  std::mt19937 rng(11);
  std::normal_distribution<float> noise;
  Tensor images(DT_FLOAT, TensorShape({100, 12, 12, 1}));
  for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = noise(rng);
  auto input = [&]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images}));
    return InputSpec{d.Batch(20), {"images"}, {}};
  };
  TW_ASSERT_OK_AND_ASSIGN(std::vector<PredictionMap> in_process, estimator.Predict(input));
  ASSERT_EQ(in_process.size(), 100u);

  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle,
                          LoadSavedModel(export_dir, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(const SignatureDef* sig, bundle.Signature("serving_default"));
  EXPECT_EQ(sig->inputs().at("images").dtype(), DT_FLOAT);
  EXPECT_EQ(sig->outputs().at("classes").dtype(), DT_INT64);
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors served,
                          bundle.Run("serving_default", {{"images", images}}));
  const Tensor& classes = served.at("classes");
  const Tensor& probabilities = served.at("probabilities");
  ASSERT_EQ(classes.NumElements(), 100);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(classes.data<int64_t>()[i], in_process[i]["classes"].data<int64_t>()[0]) << i;
    for (int k = 0; k < 10; ++k) {
      EXPECT_NEAR(probabilities.data<float>()[i * 10 + k],
                  in_process[i]["probabilities"].data<float>()[k], 1e-5);
    }
  }
}

}  // namespace
}  // namespace towerflow
