// cifar10_train: the multi-GPU CIFAR-10 tutorial (cifar10_multi_gpu_train.py
// and cifar10_eval.py) on the Estimator and ReplicateModelFn. Flags: see
// examples/common/trainer.h, plus --learning_rate; --help lists them all.
//
//   cifar10_train --num_towers=2 --train_seconds=180 --model_dir=/tmp/cifar10_train
#include "absl/flags/flag.h"
#include "examples/cifar10/model.h"
#include "examples/common/input.h"
#include "examples/common/trainer.h"

ABSL_FLAG(double, learning_rate, 0.1,
          "initial learning rate (the tutorial's), decayed 10x every 350 epochs");

int main(int argc, char** argv) {
  towerflow::examples::ExampleModel model;
  model.name = "cifar10_train";
  model.description =
      "cifar10_train: the multi-GPU CIFAR-10 tutorial's model and training on towers.";
  model.model_fn = towerflow::cifar10::ModelFn;
  model.flags_to_params = [](towerflow::Params* params) {
    params->values["learning_rate"] = absl::GetFlag(FLAGS_learning_rate);
  };
  model.cifar10_input = towerflow::examples::Cifar10TutorialInput;
  model.cifar10_side = 24;
  return towerflow::examples::TrainMain(model, argc, argv);
}
