// Synchronous training through the Estimator on a parameter-server job (TF's
// SyncReplicasOptimizer with make_session_run_hook), one ps task and the
// other processes workers, under mpirun -np 3 and 4 (sync_ps_mpirun_test).
// Every process runs the same tests in order; each test makes its job's
// Server on every process.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "estimator/estimator.h"
#include "estimator/testing/job_testing.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"
#include "train/sync_replicas_optimizer.h"
#include "training/sync_replicas_hook.h"

namespace towerflow {
namespace distribute {
namespace {

using ::towerflow::testing::LatestCheckpointTensors;
using ::towerflow::testing::SumOverProcesses;

constexpr double kLearningRate = 0.1;

// The points of y = 2x + 1 (x centred), one batch of four.
const std::vector<double> kX = {-1.5, -0.5, 0.5, 1.5}, kY = {-2, 0, 2, 4};

InputFn Points(int64_t repeats) {
  return [=]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices(
                            {Literal<double>({4, 1}, kX), Literal<double>({4, 1}, kY)}));
    return InputSpec{d.Batch(4).Repeat(repeats), {"x"}, {"y"}};
  };
}

// y = x w + b, mean squared error, gradient descent under a
// SyncReplicasOptimizer that averages `replicas_to_aggregate` of the
// `workers` workers' gradients per update; the hook it makes is kept in
// `*hook`.
ModelFn SyncRegression(int replicas_to_aggregate, int workers,
                       std::shared_ptr<training::SyncReplicasHook>* hook) {
  return [=](const Scope& s, const FeatureMap& features, const FeatureMap& labels, ModeKeys mode,
             const Params&) {
    Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
    Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.0));
    Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
    EstimatorSpec spec(mode);
    spec.predictions["y"] = prediction;
    if (mode == ModeKeys::kPredict) return spec;
    spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
    if (mode != ModeKeys::kTrain) return spec;
    auto sync = std::make_shared<train::SyncReplicasOptimizer>(
        std::make_shared<train::GradientDescentOptimizer>(kLearningRate), replicas_to_aggregate,
        workers);
    spec.train_op = TowerOptimizer(sync).Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    // Whether this worker is the chief: the Estimator says.
    *hook = std::make_shared<training::SyncReplicasHook>(sync);
    spec.training_hooks.push_back(*hook);
    return spec;
  };
}

// w and b after `steps` steps of one process on the whole batch:
// w <- w - lr * 2 mean(x (xw + b - y)), b <- b - lr * 2 mean(xw + b - y).
std::pair<double, double> OneProcess(int steps) {
  double w = 0, b = 0;
  for (int i = 0; i < steps; ++i) {
    double gw = 0, gb = 0;
    for (int j = 0; j < 4; ++j) {
      const double r = kX[j] * w + b - kY[j];
      gw += 2 * kX[j] * r / 4;
      gb += 2 * r / 4;
    }
    w -= kLearningRate * gw;
    b -= kLearningRate * gb;
  }
  return {w, b};
}

// This process's task: rank 0 the ps, the others workers.
std::shared_ptr<Server> Job() {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  absl::StatusOr<ClusterSpec> spec =
      ClusterSpec::Parse(absl::StrCat("ps=1,worker=", (*cluster)->size() - 1));
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(ServerOptions{*spec});
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  return *std::move(server);
}

int Workers() {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  return cluster.ok() ? (*cluster)->size() - 1 : 0;
}

RunConfig JobConfig(std::shared_ptr<Server> server, const std::string& model_dir,
                    std::ostream* log) {
  std::filesystem::create_directories(model_dir);
  RunConfig config;
  config.model_dir = model_dir;
  config.server = std::move(server);
  config.log = log;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  return config;
}

std::string ModelDir(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/sync_ps_", Workers(), "_", name);
}

// Every worker trains on the whole batch and every update averages 2
// gradients (of 2 or 3 workers, TF's initial tokens): the global step
// advances once per update, and the chief's sync loop made exactly the 20
// updates max_steps asks for. A gradient reaches an update only if it was
// computed from the variables of that update's step (a slower worker's,
// computed before the last update, is dropped by the accumulators), so
// each update averages gradients equal to one process's on the whole
// batch: the ps's variables are those of 20 steps of one process, however
// the workers interleave. Every process returns, and the chief's
// checkpoint holds the 20th step.
TEST(SyncPsTrainingTest, TheGlobalStepAdvancesOncePerRoundOfGradients) {
  constexpr int kSteps = 20;
  std::shared_ptr<Server> server = Job();
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps", chief = server->is_chief();
  std::ostringstream log;
  std::shared_ptr<training::SyncReplicasHook> hook;
  Estimator estimator(SyncRegression(2, Workers(), &hook),
                      JobConfig(server, ModelDir("rounds"), &log));
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(-1), {.max_steps = kSteps});
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();
  if (chief) {
    ASSERT_NE(hook, nullptr);
    EXPECT_EQ(hook->updates(), kSteps);
    EXPECT_EQ(trained->global_step, kSteps);
  } else if (!ps) {
    EXPECT_LE(trained->global_step, kSteps);
  }
  // Each update took at least 2 gradients, each of a step that ended (a
  // worker's last step, which may have waited for a token the queue's
  // closing took away, is not counted).
  EXPECT_GE(SumOverProcesses(trained->steps_run), 2 * kSteps - Workers());
  if (!chief) return;
  std::map<std::string, Tensor> saved = LatestCheckpointTensors(ModelDir("rounds"));
  ASSERT_TRUE(saved.count("global_step") && saved.count("w") && saved.count("b"));
  EXPECT_EQ(saved["global_step"].data<int64_t>()[0], kSteps);
  const auto [w, b] = OneProcess(kSteps);
  EXPECT_GT(w, 1.5);  // it did move
  EXPECT_NEAR(saved["w"].data<double>()[0], w, 1e-12);
  EXPECT_NEAR(saved["b"].data<double>()[0], b, 1e-12);
}

// The chief stops at global step 10; the other workers would go on, but
// every update needs a gradient of each worker (the chief's too), so
// without the chief they would wait for a token forever (as in TF). The
// chief's end closes the token queue after its last checkpoint: each of
// them returns, without error, and the job ends. (Fast workers may add a
// second gradient to a round, so an update or two may still come after
// the chief's last step.)
TEST(SyncPsTrainingTest, TheChiefsEndReleasesEveryWorker) {
  std::shared_ptr<Server> server = Job();
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps", chief = server->is_chief();
  std::ostringstream log;
  std::shared_ptr<training::SyncReplicasHook> hook;
  Estimator estimator(SyncRegression(Workers(), Workers(), &hook),
                      JobConfig(server, ModelDir("release"), &log));
  const int64_t last = chief ? 10 : 1'000'000;
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(-1), {.max_steps = last});
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();
  EXPECT_EQ(SumOverProcesses(ps ? 0 : 1), Workers());  // every worker got here
  if (!chief) return;
  EXPECT_GE(trained->global_step, 10);
  EXPECT_GE(hook->updates(), trained->global_step);
  std::map<std::string, Tensor> saved = LatestCheckpointTensors(ModelDir("release"));
  ASSERT_TRUE(saved.count("global_step"));
  EXPECT_GE(saved["global_step"].data<int64_t>()[0], 10);
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
