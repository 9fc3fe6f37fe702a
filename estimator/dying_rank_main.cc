// A job whose last process stops taking part in the collectives at step 3,
// for dying_rank_test.sh; the others are then waiting on it. How it stops
// is the argument:
//   die   killed (SIGKILL): mpirun names it and stops the others;
//   fail  it reports an error (Cluster::Abort) and stays alive: the others'
//         collectives return Aborted with its error;
//   hang  it stays alive without a word: the others' collectives time out
//         (TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS) and name it;
//   train the processes train a model with the Estimator; on the last one
//         a hook fails at step 3: its Train returns the hook's error and the
//         others' Train returns Aborted with it (the failed one stays alive).
// A process whose collective (or Train) fails prints the error and exits 3.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

// y = x w, mean squared error, plain SGD.
EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params&) {
  Variable w = GetVariable(s, "w", TensorShape({2, 1}), DT_FLOAT, initializers::Zeros());
  EstimatorSpec spec(mode);
  Output prediction = ops::MatMul(s, features.at("x"), w.value());
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  TowerOptimizer optimizer(std::make_shared<train::GradientDescentOptimizer>(0.1));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// Fails after step 3.
class FailingHook : public SessionRunHook {
 public:
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) override {
    if (step.global_step == 3) return absl::InternalError("disk full");
    return absl::OkStatus();
  }
};

int Train(distribute::Cluster* c) {
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  if (!replicated.ok()) return 2;
  RunConfig config;
  config.model_dir = absl::StrCat(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp",
                                  "/dying_rank_train_", getpid());
  config.progress_bar = RunConfig::ProgressBar::kOff;
  Estimator estimator(*replicated, config);
  InputFn input = []() -> absl::StatusOr<InputSpec> {
    Tensor x(DT_FLOAT, TensorShape({4, 2})), y(DT_FLOAT, TensorShape({4, 1}));
    for (int i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i % 3);
    for (int i = 0; i < 4; ++i) y.data<float>()[i] = 1;
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
    return InputSpec{d.Batch(2).Repeat(), {"x"}, {"y"}};
  };
  TrainOptions options{.steps = 1000};
  const bool failing = c->rank() == c->size() - 1;
  if (failing) options.hooks.push_back(std::make_shared<FailingHook>());
  const absl::StatusOr<TrainResult> trained = estimator.Train(input, options);
  if (trained.ok()) {
    std::printf("rank %d finished all its steps\n", c->rank());
    return 0;
  }
  std::fprintf(stderr, "rank %d: %s\n", c->rank(), trained.status().ToString().c_str());
  if (failing) pause();  // until mpirun stops the job
  return 3;
}

int Main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "die" && mode != "fail" && mode != "hang" && mode != "train") {
    std::fprintf(stderr, "usage: dying_rank_main die|fail|hang|train\n");
    return 2;
  }
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (!cluster.ok()) return 2;
  distribute::Cluster* c = *cluster;
  if (mode == "train") return Train(c);
  for (int step = 0; step < 1000; ++step) {
    if (step == 3 && c->rank() == c->size() - 1) {
      if (mode == "die") std::raise(SIGKILL);
      if (mode == "fail") c->Abort(absl::InternalError("disk full"));
      pause();  // until mpirun stops the job
    }
    Tensor t(DT_FLOAT, TensorShape({4}));
    for (int i = 0; i < 4; ++i) t.data<float>()[i] = 1;
    if (const absl::Status s = c->AllReduceSum(&t); !s.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", c->rank(), s.ToString().c_str());
      return 3;
    }
  }
  std::printf("rank %d finished all its steps\n", c->rank());
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::Main(argc, argv); }
