// Trains the quadrants model on two towers (two virtual CPU devices; one per
// GPU where there are GPUs) with Towerflow's Estimator, then evaluates it on
// points it has not seen:
//
//   bazel run //:train_quadrants -- /tmp/quadrants
#include <iostream>
#include <string>

#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "quadrants_model.h"

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

absl::Status Main(const std::string& model_dir) {
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
  train.steps = 600;
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
  const absl::Status status = Main(argc > 1 ? argv[1] : "/tmp/quadrants");
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
