#include "examples/resnet/imagenet_model.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/resnet/run_loop.h"

namespace towerflow {
namespace resnet {

absl::StatusOr<ResNetConfig> ImageNetConfig(int resnet_size, int version, bool channels_first,
                                            int num_classes) {
  // imagenet_main.py's _get_block_sizes.
  static const auto* kBlocks = new std::map<int, std::vector<int>>{
      {18, {2, 2, 2, 2}},   {34, {3, 4, 6, 3}},   {50, {3, 4, 6, 3}},
      {101, {3, 4, 23, 3}}, {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}};
  auto it = kBlocks->find(resnet_size);
  if (it == kBlocks->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Could not find layers for selected Resnet size. Size received: ", resnet_size,
                     "; sizes allowed: 18, 34, 50, 101, 152, 200."));
  }
  ResNetConfig config;
  config.version = version;
  config.bottleneck = resnet_size >= 50;
  config.num_filters = 64;
  config.kernel_size = 7;
  config.conv_stride = 2;
  config.first_pool_size = 3;
  config.first_pool_stride = 2;
  config.block_sizes = it->second;
  config.block_strides = {1, 2, 2, 2};
  config.channels_first = channels_first;
  config.num_classes = num_classes;
  return config;
}

EstimatorSpec ImageNetModelFn(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                              ModeKeys mode, const Params& params) {
  absl::StatusOr<ResNetConfig> config = ImageNetConfig(
      static_cast<int>(params.Get("resnet_size", 50)),
      static_cast<int>(params.Get("resnet_version", 1)), params.Get("channels_first", 0) != 0,
      static_cast<int>(params.Get("num_classes", kImageNetClasses)));
  if (!config.ok()) {
    s.UpdateStatus(config.status());
    return EstimatorSpec(mode);
  }
  const Output logits = ResNet(s, features.at("images"), *config, mode == ModeKeys::kTrain);
  LearningRateSchedule schedule;
  schedule.batch_size = params.Get("batch_size", 256);
  schedule.batch_denom = 256;
  schedule.num_images = params.Get("num_images", kImageNetTrainImages);
  schedule.base_lr = params.Get("base_lr", 0.128);
  schedule.boundary_epochs = {30, 60, 80, 90};
  schedule.decay_rates = {1, 0.1, 0.01, 0.001, 1e-4};
  schedule.warmup_epochs = params.Get("warmup_epochs", 0);
  Params with_decay = params;
  if (!params.values.count("weight_decay")) with_decay.values["weight_decay"] = 1e-4;
  return RunLoopModelFn(s, logits, labels, mode, with_decay, schedule);
}

}  // namespace resnet
}  // namespace towerflow
