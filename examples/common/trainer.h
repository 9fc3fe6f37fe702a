// The examples' training program: towers over the GPUs (or virtual CPUs),
// train with the Estimator, evaluate on the test set, export for serving,
// and write the training GraphDef and a Graphviz picture of the towers.
//
// Trains on CIFAR-10 binaries when --data_dir has them, else on
// Fashion-MNIST (Debian's dataset-fashion-mnist). Flags (--name=value):
//   --data_dir           CIFAR-10 binaries (data_batch_1.bin ... test_batch.bin)
//   --fashion_mnist_dir  default /usr/share/datasets/fashion-mnist
//   --model_dir          checkpoints and outputs (default /tmp/<name>); training
//                        resumes from its latest checkpoint
//   --num_towers         towers (default: one per GPU, else 2 virtual CPUs)
//   --devices            comma-separated devices instead (/gpu:0,/gpu:1)
//   --aggregation        parameter_server (the tutorial's: variables and
//                        gradient sums on one device) or all_reduce
//                        (variables mirrored per tower, NCCL on GPUs)
//   --batch_size         examples per tower per step (128)
//   --max_steps          stop at this global step (1000000, the tutorial's)
//   --train_seconds      also stop after this many seconds (0: no limit)
//   --log_every          a step line every N steps (10, the tutorial's)
//   --profile_every      a Chrome trace of every Nth step in model_dir,
//                        timeline-<step>.json (0: none)
//   --seed               random seed (1)
//   --eval               evaluate after training (true)
// and the model's own (ExampleModel::param_flags), which set Params.
//
// The model_fn gets Params "num_classes" (10), "batch_size" (the global
// batch), "steps_per_epoch", plus its defaults and flags.
#ifndef TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_
#define TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_

#include <functional>
#include <string>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/common/input.h"

namespace towerflow {
namespace examples {

struct ExampleModel {
  std::string name;  // the program's, for messages and the default model_dir
  ModelFn model_fn;
  Params params;                         // defaults
  std::vector<std::string> param_flags;  // flags that set Params of these names
  // CIFAR-10's input_fn, and the side of the images it yields.
  std::function<absl::StatusOr<InputSpec>(const std::string& data_dir, bool train,
                                          int64_t batch_size, uint64_t seed,
                                          const PipelineOptions& options)>
      cifar10_input;
  int64_t cifar10_side = 32;
};

// main() of an example: 0 on success, else 1 with the error on stderr.
int TrainMain(const ExampleModel& model, int argc, char** argv);

}  // namespace examples
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_
