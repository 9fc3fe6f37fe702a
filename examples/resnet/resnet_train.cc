// resnet_train: the official TensorFlow CIFAR-10 ResNet v2 (cifar10_main.py)
// on the Estimator and ReplicateModelFn. Flags: see
// examples/common/trainer.h, plus --resnet_size, --weight_decay and
// --momentum; --help lists them all.
//
//   resnet_train --resnet_size=20 --num_towers=2 --train_seconds=600
#include "absl/flags/flag.h"
#include "examples/common/input.h"
#include "examples/common/trainer.h"
#include "examples/resnet/model.h"

ABSL_FLAG(int32_t, resnet_size, 32, "layers: 6n+2 (20, 32, 44, 56, 110, ...)");
ABSL_FLAG(double, weight_decay, 2e-4, "L2 weight of the kernels (the official model's)");
ABSL_FLAG(double, momentum, 0.9, "the optimizer's momentum");

int main(int argc, char** argv) {
  towerflow::examples::ExampleModel model;
  model.name = "resnet_train";
  model.description =
      "resnet_train: the official TensorFlow CIFAR-10 ResNet v2 and its training on towers.";
  model.model_fn = towerflow::resnet::ModelFn;
  model.flags_to_params = [](towerflow::Params* params) {
    params->values["resnet_size"] = absl::GetFlag(FLAGS_resnet_size);
    params->values["weight_decay"] = absl::GetFlag(FLAGS_weight_decay);
    params->values["momentum"] = absl::GetFlag(FLAGS_momentum);
  };
  model.cifar10_input = towerflow::examples::Cifar10ResNetInput;
  model.cifar10_side = 32;
  return towerflow::examples::TrainMain(model, argc, argv);
}
