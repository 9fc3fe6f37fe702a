// The examples' training program: towers over the GPUs (or virtual CPUs),
// train with the Estimator, evaluate on the test set, export for serving,
// and write the training GraphDef and a Graphviz picture of the towers.
//
// Trains on CIFAR-10 binaries when --data_dir has them, else on
// Fashion-MNIST (Debian's dataset-fashion-mnist). The flags are Abseil
// flags defined in trainer.cc (`PROGRAM --help` lists them with their
// defaults): --data_dir, --fashion_mnist_dir, --model_dir, --num_towers,
// --devices, --aggregation, --batch_size, --max_steps, --train_seconds,
// --log_every, --profile_every, --seed, --eval; and the model's own, which
// its program defines and ExampleModel::flags_to_params copies into Params.
//
// The model_fn gets Params "num_classes" (10), "batch_size" (the global
// batch), "steps_per_epoch", plus its defaults and flags.
#ifndef TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_
#define TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/common/input.h"

namespace towerflow {
namespace examples {

// What a model trains on: its input_fn and the images it yields.
struct DataSource {
  std::string description;  // "CIFAR-10 from DIR", for the log
  std::function<absl::StatusOr<InputSpec>(bool train, int64_t batch_size, uint64_t seed)> input;
  int64_t side = 32, channels = 3;
  int num_classes = 10;
  int64_t train_examples = 50000;
};

struct ExampleModel {
  std::string name;         // the program's, for messages and the default model_dir
  std::string description;  // what the program is, opening its --help
  ModelFn model_fn;
  Params params;  // defaults
  // Sets Params from the program's own flags, after the command line is
  // parsed; may be empty.
  std::function<void(Params*)> flags_to_params;
  // CIFAR-10's input_fn, and the side of the images it yields.
  std::function<absl::StatusOr<InputSpec>(const std::string& data_dir, bool train,
                                          int64_t batch_size, uint64_t seed,
                                          const PipelineOptions& options)>
      cifar10_input;
  int64_t cifar10_side = 32;
  // A data set of the model's own, chosen by its flags (ImageNet's): when
  // it gives one, training uses it instead of CIFAR-10 / Fashion-MNIST.
  std::function<absl::StatusOr<std::optional<DataSource>>(const std::string& data_dir)> own_data;
};

// main() of an example: parses the command line (tools/flags.h), trains.
// 0 on success, 1 with the error on stderr, 2 for a usage error.
int TrainMain(const ExampleModel& model, int argc, char** argv);

}  // namespace examples
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_COMMON_TRAINER_H_
