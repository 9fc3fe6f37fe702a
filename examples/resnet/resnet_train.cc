// resnet_train: the official TensorFlow ResNets on the Estimator and
// ReplicateModelFn: CIFAR-10's v2 (cifar10_main.py, the default) or
// ImageNet's (imagenet_main.py: --dataset=imagenet, sizes 18-200, v1 or v2,
// on TFRecord shards in --data_dir or --use_synthetic_data). Flags: see
// examples/common/trainer.h, plus the ones below; --help lists them all.
//
//   resnet_train --resnet_size=20 --num_towers=2 --train_seconds=600
//   resnet_train --dataset=imagenet --resnet_size=50 --data_dir=/data/imagenet
//   resnet_train --dataset=imagenet --use_synthetic_data --batch_size=32 --max_steps=20
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "examples/common/input.h"
#include "examples/common/trainer.h"
#include "examples/resnet/imagenet_model.h"
#include "examples/resnet/model.h"

ABSL_FLAG(std::string, dataset, "cifar10",
          "cifar10 (32x32, 10 classes) or imagenet (224x224, 1,001 classes: TFRecord shards in "
          "--data_dir, as examples/resnet/make_imagenet_records writes them)");
ABSL_FLAG(bool, use_synthetic_data, false,
          "imagenet: one constant batch instead of the shards (throughput alone)");
ABSL_FLAG(int32_t, resnet_size, 0,
          "layers: cifar10 6n+2 (20, 32, 44, 56, 110; 32 if unset), imagenet 18, 34, 50, 101, "
          "152, 200 (50 if unset)");
ABSL_FLAG(int32_t, resnet_version, 0, "imagenet: 1 or 2 (1 if unset); cifar10 is version 2");
ABSL_FLAG(std::string, data_format, "",
          "imagenet: channels_first or channels_last (the default: channels_first on GPUs)");
ABSL_FLAG(double, weight_decay, -1, "L2 weight of the kernels (2e-4 cifar10, 1e-4 imagenet)");
ABSL_FLAG(double, momentum, 0.9, "the optimizer's momentum");
ABSL_FLAG(double, label_smoothing, 0, "imagenet: smoothing of the one-hot labels");
ABSL_FLAG(double, warmup_epochs, 0, "imagenet: epochs of linear learning-rate warm-up");

namespace {

using towerflow::Params;

bool ImageNet() { return absl::GetFlag(FLAGS_dataset) == "imagenet"; }

towerflow::EstimatorSpec ModelFn(const towerflow::Scope& s, const towerflow::FeatureMap& f,
                                 const towerflow::FeatureMap& l, towerflow::ModeKeys mode,
                                 const Params& params) {
  return params.Get("imagenet", 0) != 0 ? towerflow::resnet::ImageNetModelFn(s, f, l, mode, params)
                                        : towerflow::resnet::ModelFn(s, f, l, mode, params);
}

}  // namespace

int main(int argc, char** argv) {
  towerflow::examples::ExampleModel model;
  model.name = "resnet_train";
  model.description =
      "resnet_train: the official TensorFlow ResNets (CIFAR-10 v2; ImageNet v1/v2, 18-200) and "
      "their training on towers.";
  model.model_fn = ModelFn;
  model.flags_to_params = [](Params* params) {
    const bool imagenet = ImageNet();
    params->values["imagenet"] = imagenet ? 1 : 0;
    const int size = absl::GetFlag(FLAGS_resnet_size);
    params->values["resnet_size"] = size != 0 ? size : imagenet ? 50 : 32;
    const double decay = absl::GetFlag(FLAGS_weight_decay);
    params->values["weight_decay"] = decay >= 0 ? decay : imagenet ? 1e-4 : 2e-4;
    params->values["momentum"] = absl::GetFlag(FLAGS_momentum);
    if (!imagenet) return;
    const int version = absl::GetFlag(FLAGS_resnet_version);
    params->values["resnet_version"] = version != 0 ? version : 1;
    std::string format = absl::GetFlag(FLAGS_data_format);
    if (format.empty()) {
      format = towerflow::NumLocalDevices("GPU") > 0 ? "channels_first" : "channels_last";
    }
    params->values["channels_first"] = format == "channels_first" ? 1 : 0;
    params->values["label_smoothing"] = absl::GetFlag(FLAGS_label_smoothing);
    params->values["warmup_epochs"] = absl::GetFlag(FLAGS_warmup_epochs);
  };
  model.cifar10_input = towerflow::examples::Cifar10ResNetInput;
  model.cifar10_side = 32;
  model.own_data = [](const std::string& data_dir)
      -> absl::StatusOr<std::optional<towerflow::examples::DataSource>> {
    const std::string dataset = absl::GetFlag(FLAGS_dataset);
    if (dataset == "cifar10") return std::nullopt;
    if (dataset != "imagenet") {
      return absl::InvalidArgumentError(
          absl::StrCat("--dataset must be cifar10 or imagenet, not '", dataset, "'"));
    }
    towerflow::examples::DataSource source;
    source.side = towerflow::resnet::kImageNetSide;
    source.num_classes = towerflow::resnet::kImageNetClasses;
    source.train_examples = towerflow::resnet::kImageNetTrainImages;
    if (absl::GetFlag(FLAGS_use_synthetic_data)) {
      source.description = "synthetic 224x224 images";
      source.input = [](bool train, int64_t batch, uint64_t seed) {
        return towerflow::examples::SyntheticImageInput(train, batch,
                                                        towerflow::resnet::kImageNetSide,
                                                        towerflow::resnet::kImageNetClasses, seed);
      };
      return source;
    }
    if (towerflow::examples::ImageNetShards(data_dir, /*train=*/true).empty()) {
      return absl::NotFoundError(absl::StrCat(
          "--dataset=imagenet: no train-*-of-* shards in --data_dir='", data_dir,
          "' (examples/resnet/make_imagenet_records writes a small set; or --use_synthetic_data)"));
    }
    source.description = "ImageNet TFRecords from " + data_dir;
    source.input = [data_dir](bool train, int64_t batch, uint64_t seed) {
      return towerflow::examples::ImageNetInput(data_dir, train, batch, seed, {.threads = 2});
    };
    return source;
  };
  return towerflow::examples::TrainMain(model, argc, argv);
}
