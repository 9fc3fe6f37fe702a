// The official CIFAR-10 ResNet v2: its structure, and training on two towers
// (batch norm's moving averages follow, the loss falls).
#include "examples/resnet/model.h"

#include <random>
#include <sstream>

#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace {

using testing::StatusIs;

TEST(ResNetModelTest, Resnet20HasTheOfficialStructure) {
  Scope root = Scope::NewRootScope();
  Output images = ops::Placeholder(root, DT_FLOAT,
                                   ops::Placeholder::Shape(PartialTensorShape({-1, 32, 32, 3})));
  Output logits = resnet::Inference(root, images, 20, 10, /*training=*/true);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(logits.shape().DebugString(), "[?,10]");
  std::map<std::string, std::string> shapes;
  int64_t trainable = 0;
  for (const Variable& v : GetVariables(*root.graph())) {
    shapes[v.name()] = v.shape().DebugString();
    if (v.trainable()) trainable += v.shape().num_elements();
  }
  // tf.layers' names under TF's "resnet_model" scope, in creation order: the
  // initial conv, then per block BN, (projection,) conv, BN, conv.
  EXPECT_EQ(shapes["resnet_model/conv2d/kernel"], "[3,3,3,16]");
  EXPECT_EQ(shapes["resnet_model/conv2d_1/kernel"], "[1,1,16,16]");  // stage 1's projection
  EXPECT_EQ(shapes["resnet_model/conv2d_8/kernel"], "[1,1,16,32]");  // stage 2's projection
  EXPECT_EQ(shapes["resnet_model/conv2d_9/kernel"], "[3,3,16,32]");
  EXPECT_EQ(shapes["resnet_model/conv2d_21/kernel"], "[3,3,64,64]");
  EXPECT_EQ(shapes.count("resnet_model/conv2d_22/kernel"), 0u);
  EXPECT_EQ(shapes["resnet_model/batch_normalization/gamma"], "[16]");
  EXPECT_EQ(shapes["resnet_model/batch_normalization_18/moving_variance"], "[64]");
  EXPECT_EQ(shapes.count("resnet_model/batch_normalization_19/moving_variance"), 0u);
  EXPECT_EQ(shapes["resnet_model/dense/kernel"], "[64,10]");
  EXPECT_EQ(shapes["resnet_model/dense/bias"], "[10]");
  // 19 batch norms in training: two moving-average updates each.
  EXPECT_EQ(GetCollectionOps(*root.graph(), GraphKeys::kUpdateOps).size(), 38u);
  // Counted by hand: the initial conv 432; stage 1 4928 + 2 x 4672; stage 2
  // 14432 + 2 x 18560; stage 3 57536 + 2 x 73984; the final batch norm 128
  // and the dense layer 650. The paper's ResNet-20 has 0.27M.
  EXPECT_EQ(trainable, 272538);
  // 1 + 3 x (7 + 2 x 6) + 2 + 2 variables.
  EXPECT_EQ(GetVariables(*root.graph(), GraphKeys::kTrainableVariables).size(), 62u);

  Scope bad = Scope::NewRootScope();
  resnet::Inference(bad, images, 21, 10, true);
  EXPECT_THAT(bad.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "resnet_size must be 6n + 2 (20, 32, 44, 56, ...), got 21"));
}

TEST(ResNetModelTest, TrainsOnTwoTowersAndItsBatchNormFollows) {
  auto input = []() -> absl::StatusOr<InputSpec> {
    std::mt19937 rng(11);
    std::normal_distribution<float> noise;
    Tensor images(DT_FLOAT, TensorShape({8, 8, 8, 3}));
    for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = noise(rng) + 1;
    Tensor labels(DT_INT32, TensorShape({8}));
    for (int i = 0; i < 8; ++i) labels.data<int32_t>()[i] = i % 2;
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images, labels}));
    return InputSpec{d.Batch(8).Repeat(), {"images"}, {"labels"}};
  };
  std::ostringstream log;
  RunConfig config;
  config.model_dir = testing::MakeTempDir("resnet");
  config.log = &log;
  config.log_step_count_steps = 0;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.random_seed = 5;
  config.session_options.device_count["CPU"] = 2;
  ReplicateOptions options;
  options.devices = {"/cpu:0", "/cpu:1"};
  options.loss_reduction = LossReduction::kMean;
  TW_ASSERT_OK_AND_ASSIGN(ModelFn towers, ReplicateModelFn(resnet::ModelFn, options));
  Params params;
  params.values["resnet_size"] = 8;
  params.values["num_classes"] = 2;
  Estimator estimator(towers, config, params);
  auto hook = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK(estimator.Train(input, {.steps = 15, .hooks = {hook}}));
  ASSERT_EQ(hook->losses().size(), 15u);
  EXPECT_LT(hook->losses().back(), 0.5 * hook->losses().front());  // it learns the fixed batch

  // The inputs have mean 1: the first block's moving mean moved from 0
  // towards it (0.997 per step, from both towers).
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(config.model_dir));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> saved, ReadCheckpoint(latest));
  bool found = false;
  for (const NamedTensor& nt : saved) {
    if (nt.name != "resnet_model/batch_normalization/moving_mean") continue;
    found = true;
    for (int c = 0; c < 16; ++c) EXPECT_NE(nt.tensor.data<float>()[c], 0) << c;
  }
  EXPECT_TRUE(found);
  TW_ASSERT_OK_AND_ASSIGN(MetricMap m, estimator.Evaluate(input, /*steps=*/1));
  EXPECT_GE(m["accuracy"], 0);
  EXPECT_LE(m["accuracy"], 1);
}

}  // namespace
}  // namespace towerflow
