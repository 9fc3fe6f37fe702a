// One process of a job across simulated hosts (tests/multihost_test.sh):
// the processes train y = x w (w of 2) with the Estimator, replicated
// across them (ReplicateModelFn, one tower each; rank r reads rows r, r + n,
// ... of 8), writing a checkpoint every step to $MULTIHOST_MODEL_DIR.
//   multihost_main STEPS [MARKER]
// trains STEPS steps; rank 0 prints "w = a b" (17 digits) at the end and
// every process "rank R finished all its steps". With MARKER, rank 0
// creates that file once the global step reaches 3 (the test then breaks
// the job: a host's link down, its processes killed) and training goes on
// until STEPS. A process whose Train fails prints "rank R: STATUS" and
// exits 3.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "ops/ops.h"
#include "ops/variables.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params&) {
  Variable w = GetVariable(s, "w", TensorShape({2, 1}), DT_DOUBLE, initializers::Zeros());
  EstimatorSpec spec(mode);
  Output prediction = ops::MatMul(s, features.at("x"), w.value());
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  TowerOptimizer optimizer(std::make_shared<train::GradientDescentOptimizer>(0.05));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// Creates `path` after the step that reaches global step 3.
class MarkerHook : public SessionRunHook {
 public:
  explicit MarkerHook(std::string path) : path_(std::move(path)) {}
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) override {
    if (step.global_step >= 3 && !written_) {
      written_ = true;
      std::ofstream(path_) << step.global_step << "\n";
    }
    return absl::OkStatus();
  }

 private:
  const std::string path_;
  bool written_ = false;
};

int Main(int argc, char** argv) {
  int64_t steps = 0;
  const char* model_dir = std::getenv("MULTIHOST_MODEL_DIR");
  if (argc < 2 || !absl::SimpleAtoi(argv[1], &steps) || steps <= 0 || model_dir == nullptr) {
    std::fprintf(stderr, "usage: MULTIHOST_MODEL_DIR=DIR multihost_main STEPS [MARKER]\n");
    return 2;
  }
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str());
    return 2;
  }
  const int rank = (*cluster)->rank(), size = (*cluster)->size();
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  if (!replicated.ok()) return 2;
  RunConfig config;
  config.model_dir = model_dir;
  config.save_checkpoints_steps = 1;
  config.save_checkpoints_secs = 0;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.log_step_count_steps = 0;
  Estimator estimator(*replicated, config);
  // Rank r's rows of x = (i, 1) and y = 2i - 1, i = 0..7: the global batch
  // is all 8 every step.
  InputFn input = [rank, size]() -> absl::StatusOr<InputSpec> {
    const int rows = 8 / size;
    Tensor x(DT_DOUBLE, TensorShape({rows, 2})), y(DT_DOUBLE, TensorShape({rows, 1}));
    for (int j = 0; j < rows; ++j) {
      const int i = rank + j * size;
      x.data<double>()[2 * j] = i;
      x.data<double>()[2 * j + 1] = 1;
      y.data<double>()[j] = 2.0 * i - 1;
    }
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
    return InputSpec{d.Batch(rows).Repeat(), {"x"}, {"y"}};
  };
  TrainOptions options{.max_steps = steps};
  if (argc > 2 && rank == 0) options.hooks.push_back(std::make_shared<MarkerHook>(argv[2]));
  const absl::StatusOr<TrainResult> trained = estimator.Train(input, options);
  if (!trained.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, trained.status().ToString().c_str());
    return 3;
  }
  if (rank == 0) {
    absl::StatusOr<std::vector<NamedTensor>> saved = absl::NotFoundError("no checkpoint");
    if (absl::StatusOr<std::string> latest = LatestCheckpoint(model_dir); latest.ok()) {
      saved = ReadCheckpoint(*latest);
    }
    for (const NamedTensor& t : saved.ok() ? *saved : std::vector<NamedTensor>{}) {
      if (t.name == "w") {
        std::printf("w = %.17g %.17g\n", t.tensor.data<double>()[0], t.tensor.data<double>()[1]);
      }
    }
  }
  std::printf("rank %d finished all its steps\n", rank);
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::Main(argc, argv); }
