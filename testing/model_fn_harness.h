// A model_fn under test, on literal features and labels: what a user's test
// suite checks before training for real. Part of the public testing library
// (@towerflow//:testing).
//
//   ModelFnHarness harness(MyModelFn, {{"x", Literal<float>({4, 2}, {...})}},
//                          {{"y", Literal<int32_t>({4}, {0, 1, 1, 0})}});
//   TW_ASSERT_OK(harness.CheckEveryTrainableVariableHasGradient());
//   TW_ASSERT_OK(harness.CheckLossDecreases(/*steps=*/50, /*max_ratio=*/0.1));
//   TW_ASSERT_OK_AND_ASSIGN(MetricMap m, harness.Evaluate());       // m["accuracy"]
//   TW_ASSERT_OK_AND_ASSIGN(auto rows, harness.Predict());          // rows[i]["classes"]
//
// The harness drives a real Estimator (a temporary model_dir, no logs or
// summaries), so the model_fn runs as it will in training: the global step
// and checkpoints between modes, and with `num_towers` > 1, ReplicateModelFn
// over that many virtual CPU devices splitting the batch (the number of rows
// must then divide evenly). Every step feeds the same whole batch, so a
// model that learns memorizes it.
#ifndef TOWERFLOW_TESTING_MODEL_FN_HARNESS_H_
#define TOWERFLOW_TESTING_MODEL_FN_HARNESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "estimator/estimator.h"
#include "estimator/model_fn.h"
#include "framework/tensor.h"

namespace towerflow {
namespace testing {

struct ModelFnHarnessOptions {
  // Towers, each on its own virtual CPU device; 1 calls the model_fn as it is.
  int num_towers = 1;
  Params params;
  // The graph-level seed, so initial values are the same from run to run.
  int64_t random_seed = 1;
  // Where checkpoints go; empty: a fresh directory under $TEST_TMPDIR (or
  // the system's temporary directory), removed with the harness.
  std::string model_dir;
};

class ModelFnHarness {
 public:
  // `features` and `labels`: name -> a batch (rows along the first
  // dimension, the same number in every tensor).
  ModelFnHarness(ModelFn model_fn, std::map<std::string, Tensor> features,
                 std::map<std::string, Tensor> labels, ModelFnHarnessOptions options = {});
  ~ModelFnHarness();
  ModelFnHarness(const ModelFnHarness&) = delete;
  ModelFnHarness& operator=(const ModelFnHarness&) = delete;

  // Runs `steps` training steps on the batch, from the last checkpoint (the
  // variables' initial values the first time), and returns each step's loss.
  absl::StatusOr<std::vector<double>> Train(int steps);

  // The EVAL metrics over the batch, as Estimator::Evaluate ("loss" and
  // "global_step" included), with the variables as training left them
  // (NotFound before any Train: no checkpoint yet).
  absl::StatusOr<MetricMap> Evaluate();

  // The PREDICT outputs, one map per row of the batch, from the latest
  // checkpoint (NotFound before any Train).
  absl::StatusOr<std::vector<PredictionMap>> Predict();

  // The TRAIN graph's loss has a gradient for every trainable variable
  // (FailedPrecondition naming the ones it does not reach: a layer left out
  // of the loss, a stop_gradient too many, an op without a gradient).
  absl::Status CheckEveryTrainableVariableHasGradient();

  // Training `steps` steps brings the loss from its first step's value to at
  // most `max_ratio` of it (FailedPrecondition with both losses otherwise):
  // a model that can learn memorizes one batch.
  absl::Status CheckLossDecreases(int steps, double max_ratio = 0.5);

  const std::string& model_dir() const { return model_dir_; }

 private:
  absl::StatusOr<ModelFn> BuildModelFn() const;
  InputFn Input(bool repeat, bool with_labels) const;
  absl::StatusOr<Estimator*> GetEstimator();

  ModelFn model_fn_;
  std::map<std::string, Tensor> features_;
  std::map<std::string, Tensor> labels_;
  ModelFnHarnessOptions options_;
  std::string model_dir_;
  bool owns_model_dir_ = false;
  std::unique_ptr<Estimator> estimator_;
};

}  // namespace testing
}  // namespace towerflow

#endif  // TOWERFLOW_TESTING_MODEL_FN_HARNESS_H_
