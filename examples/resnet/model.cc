#include "examples/resnet/model.h"

#include "absl/strings/str_cat.h"
#include "examples/resnet/resnet_model.h"
#include "examples/resnet/run_loop.h"

namespace towerflow {
namespace resnet {

Output Inference(const Scope& scope, const Output& images, int resnet_size, int num_classes,
                 bool training) {
  if (resnet_size < 8 || resnet_size % 6 != 2) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("resnet_size must be 6n + 2 (20, 32, 44, 56, ...), got ", resnet_size)));
    return Output();
  }
  // cifar10_main.py's Cifar10Model: 16 filters, a 3x3 first convolution at
  // stride 1 and no pool, three layers of building blocks, version 2.
  ResNetConfig config;
  config.version = 2;
  config.num_filters = 16;
  config.kernel_size = 3;
  config.conv_stride = 1;
  config.first_pool_size = 0;
  const int blocks = (resnet_size - 2) / 6;
  config.block_sizes = {blocks, blocks, blocks};
  config.block_strides = {1, 2, 2};
  config.num_classes = num_classes;
  return ResNet(scope, images, config, training);
}

EstimatorSpec ModelFn(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params) {
  Output logits =
      Inference(s, features.at("images"), static_cast<int>(params.Get("resnet_size", 32)),
                static_cast<int>(params.Get("num_classes", 10)), mode == ModeKeys::kTrain);
  // cifar10_main.py: 0.1 per 128 examples, divided by 10 at epochs 91, 136
  // and 182 (an epoch of 50,000 images, or steps_per_epoch batches).
  LearningRateSchedule schedule;
  schedule.batch_size = params.Get("batch_size", 128);
  schedule.batch_denom = 128;
  schedule.num_images = params.Get("steps_per_epoch", 390) * schedule.batch_size;
  schedule.base_lr = 0.1;
  schedule.boundary_epochs = {91, 136, 182};
  schedule.decay_rates = {1, 0.1, 0.01, 0.001};
  return RunLoopModelFn(s, logits, labels, mode, params, schedule);
}

}  // namespace resnet
}  // namespace towerflow
