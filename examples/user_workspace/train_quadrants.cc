// Trains the quadrants model on two towers (two virtual CPU devices; one per
// GPU where there are GPUs) with Towerflow's Estimator, then evaluates it on
// points it has not seen:
//
//   bazel run //:train_quadrants -- --model_dir=/tmp/quadrants --steps=600
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "quadrants_model.h"
#include "tools/flags.h"

ABSL_FLAG(std::string, model_dir, "/tmp/quadrants", "checkpoints and TensorBoard events");
ABSL_FLAG(int64_t, steps, 600, "training steps (of 128 points, 64 per tower)");

using namespace towerflow;  // NOLINT: the example reads as a user's code

namespace {

InputFn Points(int64_t n, uint64_t seed, int64_t batch, bool repeat) {
  return [=]() -> absl::StatusOr<InputSpec> {
    Tensor points, quadrant;
    quadrants::MakePoints(n, seed, &points, &quadrant);
    absl::StatusOr<data::Dataset> slices = data::Dataset::FromTensorSlices({points, quadrant});
    if (!slices.ok()) return slices.status();
    data::Dataset dataset = slices->Batch(batch);
    if (repeat) dataset = dataset.Shuffle(1024, seed).Repeat();
    return InputSpec{dataset, {"points"}, {"quadrant"}};
  };
}

absl::Status Main(const std::string& model_dir, int64_t steps) {
  ReplicateOptions towers;
  towers.devices = {"/cpu:0", "/cpu:1"};
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(quadrants::QuadrantsModel, towers);
  if (!replicated.ok()) return replicated.status();
  RunConfig config;
  config.model_dir = model_dir;
  config.session_options.device_count["CPU"] = 2;
  config.random_seed = 1;
  Estimator estimator(*replicated, config);
  TrainOptions train;
  train.steps = steps;
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(4096, 1, 128, true), train);
  if (!trained.ok()) return trained.status();
  absl::StatusOr<MetricMap> metrics = estimator.Evaluate(Points(1000, 2, 100, false));
  if (!metrics.ok()) return metrics.status();
  std::cout << "global step " << (*metrics)["global_step"] << ": accuracy "
            << (*metrics)["accuracy"] << " on 1000 new points, loss " << (*metrics)["loss"] << "\n";
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args = ParseCommandLine(
      argc, argv,
      "train_quadrants: trains the quadrants model on two towers, then evaluates it on new "
      "points.\n\nusage: train_quadrants [FLAGS]");
  if (!args.empty()) {
    std::cerr << "train_quadrants: unexpected argument '" << args[0] << "'\n";
    return 2;
  }
  const absl::Status status = Main(absl::GetFlag(FLAGS_model_dir), absl::GetFlag(FLAGS_steps));
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
