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
#include "ops/variables.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
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

// Four 12x12x1 images of fixed noise and their labels, repeated.
InputFn FixedBatch() {
  return []() -> absl::StatusOr<InputSpec> {
    std::mt19937 rng(7);
    std::normal_distribution<float> noise;
    Tensor images(DT_FLOAT, TensorShape({4, 12, 12, 1}));
    for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = noise(rng);
    Tensor labels(DT_INT32, TensorShape({4}));
    for (int i = 0; i < 4; ++i) labels.data<int32_t>()[i] = (3 * i) % 10;
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images, labels}));
    return InputSpec{d.Batch(4).Repeat(), {"images"}, {"labels"}};
  };
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

}  // namespace
}  // namespace towerflow
