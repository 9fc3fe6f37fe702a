// resnet_train: the official TensorFlow CIFAR-10 ResNet v2 (cifar10_main.py)
// on the Estimator and ReplicateModelFn. Flags: see
// examples/common/trainer.h, plus --resnet_size (32; 20, 32, 56, ...),
// --weight_decay (2e-4) and --momentum (0.9).
//
//   resnet_train --resnet_size=20 --num_towers=2 --train_seconds=600
#include "examples/common/input.h"
#include "examples/common/trainer.h"
#include "examples/resnet/model.h"

int main(int argc, char** argv) {
  towerflow::examples::ExampleModel model;
  model.name = "resnet_train";
  model.model_fn = towerflow::resnet::ModelFn;
  model.param_flags = {"resnet_size", "weight_decay", "momentum"};
  model.cifar10_input = towerflow::examples::Cifar10ResNetInput;
  model.cifar10_side = 32;
  return towerflow::examples::TrainMain(model, argc, argv);
}
