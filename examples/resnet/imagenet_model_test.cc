// The official ImageNet ResNet (imagenet_main.py), as its imagenet_test.py
// checks it: the output and intermediate tensor shapes of every size, both
// versions and both data formats; the EstimatorSpec of each mode; and
// training on towers.
#include "examples/resnet/imagenet_model.h"

#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/resnet/run_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// The shape of the node whose name ends with "/<name>".
std::string ShapeOf(const Graph& graph, const std::string& name) {
  for (Node* n : graph.nodes()) {
    if (absl::EndsWith(n->name(), "/" + name)) return n->output_shape(0).DebugString();
  }
  return "missing";
}

int64_t TrainableParameters(const Graph& graph) {
  int64_t n = 0;
  for (const Variable& v : GetVariables(graph, GraphKeys::kTrainableVariables)) {
    n += v.shape().num_elements();
  }
  return n;
}

TEST(ImageNetResNetTest, TensorShapesAreTheOfficialOnes) {
  for (int size : {18, 34, 50, 101, 152, 200}) {
    for (int version : {1, 2}) {
      for (bool channels_first : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "resnet " << size << " v" << version
                                          << (channels_first ? " channels_first" : ""));
        TW_ASSERT_OK_AND_ASSIGN(const resnet::ResNetConfig config,
                                resnet::ImageNetConfig(size, version, channels_first, 456));
        Scope root = Scope::NewRootScope();
        const Output images =
            ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({8, 224, 224, 3}));
        const Output logits = resnet::ResNet(root, images, config, /*training=*/true);
        TW_ASSERT_OK(root.status());
        const int64_t out = size >= 50 ? 4 : 1;  // bottlenecks widen 4x
        const auto shape = [&](int64_t side, int64_t channels) {
          return channels_first ? absl::StrCat("[8,", channels, ",", side, ",", side, "]")
                                : absl::StrCat("[8,", side, ",", side, ",", channels, "]");
        };
        const Graph& g = *root.graph();
        EXPECT_EQ(ShapeOf(g, "initial_conv"), shape(112, 64));
        EXPECT_EQ(ShapeOf(g, "initial_max_pool"), shape(56, 64));
        EXPECT_EQ(ShapeOf(g, "block_layer1"), shape(56, 64 * out));
        EXPECT_EQ(ShapeOf(g, "block_layer2"), shape(28, 128 * out));
        EXPECT_EQ(ShapeOf(g, "block_layer3"), shape(14, 256 * out));
        EXPECT_EQ(ShapeOf(g, "block_layer4"), shape(7, 512 * out));
        EXPECT_EQ(ShapeOf(g, "final_reduce_mean"), shape(1, 512 * out));
        EXPECT_EQ(ShapeOf(g, "final_dense"), "[8,456]");
        EXPECT_EQ(logits.shape().DebugString(), "[8,456]");
      }
    }
  }
}

// Parameters: ResNet-50 v1 with 1,000 classes has torchvision's resnet50's
// 25,557,032 (the same convolutions, batch norms and dense layer); the
// others as counted from the block layout (TF's official model projects
// the first block of every layer, so its ResNet-18 and -34 have a 1x1
// convolution and batch norm more than torchvision's).
TEST(ImageNetResNetTest, ParameterCounts) {
  const auto count = [](int size, int version, int classes) -> int64_t {
    Scope root = Scope::NewRootScope();
    const Output images =
        ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 224, 224, 3}));
    absl::StatusOr<resnet::ResNetConfig> config =
        resnet::ImageNetConfig(size, version, false, classes);
    EXPECT_TRUE(config.ok());
    resnet::ResNet(root, images, *config, true);
    EXPECT_TRUE(root.ok()) << root.status();
    return TrainableParameters(*root.graph());
  };
  EXPECT_EQ(count(50, 1, 1000), 25557032);
  EXPECT_EQ(count(50, 1, 1001), 25559081);
  EXPECT_EQ(count(50, 2, 1001), 25551401);
  EXPECT_EQ(count(18, 1, 1001), 11694249);
  EXPECT_EQ(count(152, 2, 1001), 60187177);
  EXPECT_THAT(resnet::ImageNetConfig(42, 1, false, 1001).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Size received: 42"));
}

struct Built {
  Scope root = Scope::NewRootScope();
  EstimatorSpec spec{ModeKeys::kTrain};
};

std::unique_ptr<Built> Build(ModeKeys mode, const Params& params) {
  auto b = std::make_unique<Built>();
  const Output images =
      ops::Placeholder(b->root, DT_FLOAT, ops::Placeholder::Shape({-1, 224, 224, 3}));
  const Output labels = ops::Placeholder(b->root, DT_INT32, ops::Placeholder::Shape({-1}));
  b->spec =
      resnet::ImageNetModelFn(b->root, {{"images", images}}, {{"labels", labels}}, mode, params);
  return b;
}

TEST(ImageNetResNetTest, EstimatorSpecOfEachMode) {
  Params params;
  params.values = {{"resnet_size", 18}, {"batch_size", 32}};
  const auto predict = Build(ModeKeys::kPredict, params);
  TW_ASSERT_OK(predict->root.status());
  EXPECT_EQ(predict->spec.predictions.at("classes").shape().DebugString(), "[?]");
  EXPECT_EQ(predict->spec.predictions.at("probabilities").shape().DebugString(), "[?,1001]");
  EXPECT_FALSE(predict->spec.loss.node());
  const auto eval = Build(ModeKeys::kEval, params);
  TW_ASSERT_OK(eval->root.status());
  EXPECT_EQ(eval->spec.loss.shape().DebugString(), "[]");
  EXPECT_EQ(eval->spec.loss.type(), DT_FLOAT);
  EXPECT_EQ(eval->spec.eval_metric_ops.count("accuracy"), 1u);
  EXPECT_FALSE(eval->spec.train_op.node());
  // Training: the schedule's rate and a train op; weight decay skips batch
  // norm's variables; label smoothing takes the one-hot loss.
  params.values["label_smoothing"] = 0.1;
  params.values["warmup_epochs"] = 5;
  const auto train = Build(ModeKeys::kTrain, params);
  TW_ASSERT_OK(train->root.status());
  EXPECT_TRUE(train->spec.train_op.node());
  EXPECT_EQ(train->spec.loss.shape().DebugString(), "[]");
  int l2 = 0, smoothed = 0, warmup = 0;
  for (Node* n : train->root.graph()->nodes()) {
    l2 += n->type_string() == "L2Loss";
    smoothed += n->type_string() == "SoftmaxCrossEntropyWithLogits";
    warmup += absl::EndsWith(n->name(), "learning_rate/warmup");
  }
  EXPECT_EQ(l2, 23);  // 21 convolutions, the dense kernel and bias; no batch norm
  EXPECT_EQ(smoothed, 1);
  EXPECT_EQ(warmup, 1);
  Params bad = params;
  bad.values["resnet_size"] = 19;
  const auto wrong = Build(ModeKeys::kTrain, bad);
  EXPECT_THAT(wrong->root.status(), StatusIs(absl::StatusCode::kInvalidArgument, "19"));
}

// The learning rate: 0.128 per 256 examples, x0.1 after epochs 30, 60, 80,
// 90 (piecewise_constant's boundary steps keep the earlier rate), and the
// linear warm-up over 5 epochs (imagenet_main.py's values).
TEST(ImageNetResNetTest, LearningRateScheduleIsTheOfficialOne) {
  resnet::LearningRateSchedule schedule;
  schedule.batch_size = 512;
  schedule.batch_denom = 256;
  schedule.num_images = 5120;  // 10 steps an epoch
  schedule.base_lr = 0.128;
  schedule.boundary_epochs = {30, 60, 80, 90};
  schedule.decay_rates = {1, 0.1, 0.01, 0.001, 1e-4};
  schedule.warmup_epochs = 5;
  Scope root = Scope::NewRootScope();
  const Output step = ops::Placeholder(root, DT_INT64, ops::Placeholder::Shape({}));
  const Output lr = resnet::LearningRateWithDecay(root, step, schedule);
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  const std::pair<int64_t, double> expected[] = {{0, 0},          {25, 0.256 * 0.5}, {50, 0.256},
                                                 {300, 0.256},    {301, 0.0256},     {601, 0.00256},
                                                 {801, 0.000256}, {901, 0.0000256}};
  for (const auto& [at, want] : expected) {
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run({{step, Scalar<int64_t>(at)}}, {lr}, &out));
    EXPECT_NEAR(out[0].data<float>()[0], want, 1e-7) << "step " << at;
  }
}

TEST(ImageNetResNetTest, TrainsOnTwoTowers) {
  auto input = []() -> absl::StatusOr<InputSpec> {
    std::mt19937 rng(3);
    std::normal_distribution<float> noise;
    Tensor images(DT_FLOAT, TensorShape({8, 32, 32, 3}));
    for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = noise(rng);
    Tensor labels(DT_INT32, TensorShape({8}));
    for (int i = 0; i < 8; ++i) labels.data<int32_t>()[i] = i % 4;
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images, labels}));
    return InputSpec{d.Batch(8).Repeat(), {"images"}, {"labels"}};
  };
  std::ostringstream log;
  RunConfig config;
  config.model_dir = testing::MakeTempDir("imagenet_resnet");
  config.log = &log;
  config.log_step_count_steps = 0;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.random_seed = 5;
  config.session_options.device_count["CPU"] = 2;
  ReplicateOptions options;
  options.devices = {"/cpu:0", "/cpu:1"};
  options.loss_reduction = LossReduction::kMean;
  TW_ASSERT_OK_AND_ASSIGN(ModelFn towers, ReplicateModelFn(resnet::ImageNetModelFn, options));
  Params params;
  params.values = {{"resnet_size", 18},
                   {"num_classes", 4},
                   {"batch_size", 8},
                   {"base_lr", 0.4},
                   {"num_images", 8000}};
  Estimator estimator(towers, config, params);
  auto hook = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK(estimator.Train(input, {.steps = 8, .hooks = {hook}}));
  ASSERT_EQ(hook->losses().size(), 8u);
  EXPECT_LT(hook->losses().back(), hook->losses().front());  // it learns the fixed batch
}

}  // namespace
}  // namespace towerflow
