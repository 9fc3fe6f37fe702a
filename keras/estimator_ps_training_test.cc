// The Estimator as a task of a parameter-server job (RunConfig::server),
// three processes under mpirun (ps_mpirun_test): one ps task holds the
// variables and two workers train them asynchronously, the chief alone
// initializing, restoring and writing. Every process runs the same tests in
// order; each test makes its job's Server on every process.
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
#include "estimator/replicate_model_fn.h"
#include "estimator/testing/job_testing.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "keras/model.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"

namespace towerflow {
namespace distribute {
namespace {

using ::testing::HasSubstr;
using ::towerflow::testing::LatestCheckpointTensors;
using ::towerflow::testing::SumOverProcesses;

// y = x w + b, w and b from 0, mean squared error, gradient descent. On the
// data below (y = 2x + 1, x centred) the loss's Hessian is diag(2.5, 2), so
// each step shrinks the error by 0.75 and 0.8, also on gradients a step or
// two old (asynchronous workers).
EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params&) {
  Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
  Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.0));
  Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
  EstimatorSpec spec(mode);
  spec.predictions["y"] = prediction;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  if (mode != ModeKeys::kTrain) return spec;
  TowerOptimizer optimizer(std::make_shared<train::GradientDescentOptimizer>(0.1));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// The four points in one batch, `repeats` times (-1: forever).
InputFn Points(int64_t repeats) {
  return [=]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices(
                                             {Literal<double>({4, 1}, {-1.5, -0.5, 0.5, 1.5}),
                                              Literal<double>({4, 1}, {-2, 0, 2, 4})}));
    return InputSpec{d.Batch(4).Repeat(repeats), {"x"}, {"y"}};
  };
}

// This process's task of a job of one ps and two workers (or the tasks of
// `jobs`), in rank order, with `cpus` CPU devices.
std::shared_ptr<Server> JobOfThree(int cpus = 1, const std::string& jobs = "ps=1,worker=2") {
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::Parse(jobs);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return nullptr;
  ServerOptions options{*spec};
  options.config.device_count["CPU"] = cpus;
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  return *std::move(server);
}

RunConfig JobConfig(std::shared_ptr<Server> server, const std::string& model_dir,
                    std::ostream* log) {
  std::filesystem::create_directories(model_dir);
  RunConfig config;
  config.model_dir = model_dir;
  config.server = std::move(server);
  config.log = log;
  config.log_step_count_steps = 50;
  config.save_summary_steps = 50;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  return config;
}

std::string ModelDir() { return absl::StrCat(std::getenv("TEST_TMPDIR"), "/estimator_ps_job"); }

// Each worker takes its 100 steps on the variables of the ps: the global
// step counts both workers' updates, and the last worker to update sees all
// 200. The chief alone logs and writes the checkpoint and summaries.
TEST(EstimatorPsTrainingTest, WorkersTrainTheVariablesOfThePsAndTheChiefWrites) {
  std::shared_ptr<Server> server = JobOfThree();
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps", chief = server->is_chief();
  std::ostringstream log;
  Estimator estimator(Regression, JobConfig(server, ModelDir(), &log));
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(100));
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();  // this worker is done; the ps's Train returns once both are
  if (ps) {
    EXPECT_EQ(trained->steps_run, 0);
    EXPECT_EQ(trained->global_step, 0);
  } else {
    EXPECT_EQ(trained->steps_run, 100);
    EXPECT_GE(trained->global_step, 100);
    EXPECT_LE(trained->global_step, 200);
  }
  EXPECT_EQ(SumOverProcesses(trained->steps_run), 200);
  // Each worker reads the global step once its own steps are done: the
  // later reader sees all 200; the earlier one too when the other worker
  // finished before its read (so "at least one", never more than 200).
  EXPECT_GE(SumOverProcesses(!ps && trained->global_step == 200 ? 1 : 0), 1);

  if (ps) return;
  // The chief's checkpoint, written when its own steps ended: at least its
  // 100 updates, and the optimum (each step shrinks the error by 0.8 or less).
  std::map<std::string, Tensor> saved = LatestCheckpointTensors(ModelDir());
  ASSERT_TRUE(saved.count("global_step") && saved.count("w") && saved.count("b"));
  const int64_t saved_step = saved["global_step"].data<int64_t>()[0];
  EXPECT_GE(saved_step, 100);
  EXPECT_LE(saved_step, 200);
  EXPECT_NEAR(saved["w"].data<double>()[0], 2.0, 1e-6);
  EXPECT_NEAR(saved["b"].data<double>()[0], 1.0, 1e-6);
  int events = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ModelDir())) {
    events += entry.path().filename().string().find("tfevents") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(events, 1);
  if (chief) {
    EXPECT_THAT(log.str(), HasSubstr("Loss for final step"));
  } else {
    EXPECT_EQ(log.str(), "");
  }
  // Evaluation runs on this process alone, from the chief's checkpoint.
  absl::StatusOr<MetricMap> metrics = estimator.Evaluate(Points(1));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NEAR(metrics->at("loss"), 0.0, 1e-10);
  EXPECT_EQ(metrics->at("global_step"), saved_step);
}

// A new job on the same model_dir: the chief restores the checkpoint (and
// does not initialize first, so the other worker never trains from the
// initial values), and every worker stops at max_steps of the shared step.
TEST(EstimatorPsTrainingTest, ARestartedJobResumesFromTheChiefsCheckpoint) {
  std::shared_ptr<Server> server = JobOfThree();
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps";
  int64_t saved_step = 0;
  if (server->is_chief()) {
    std::map<std::string, Tensor> saved = LatestCheckpointTensors(ModelDir());
    if (saved.count("global_step")) saved_step = saved["global_step"].data<int64_t>()[0];
  }
  const int64_t start = SumOverProcesses(saved_step);
  ASSERT_GE(start, 100);
  std::ostringstream log;
  Estimator estimator(Regression, JobConfig(server, ModelDir(), &log));
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(-1), {.max_steps = start + 40});
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();
  if (server->is_chief()) {
    EXPECT_THAT(log.str(), HasSubstr("Restoring parameters from"));
  }
  // The worker that took the last step saw every step of both since the
  // restore: 40, or 41 when the other worker's last step overlapped it.
  const int64_t steps = SumOverProcesses(trained->steps_run);
  EXPECT_GE(steps, 40);
  EXPECT_LE(steps, 41);
  EXPECT_GE(SumOverProcesses(!ps && trained->global_step == start + steps ? 1 : 0), 1);
  EXPECT_EQ(SumOverProcesses(!ps && trained->global_step > start + steps ? 1 : 0), 0);
  if (!ps) {
    // Every step of this job started from the restored optimum.
    EXPECT_NEAR(trained->loss, 0.0, 1e-10);
  }
}

// The ps tasks take part in no collective: a model replicated across the
// processes is refused with the node named; replicated within each worker,
// it trains.
TEST(EstimatorPsTrainingTest, TowersWithinEachWorkerButNoCollectiveAcrossTheJob) {
  for (const bool across_processes : {true, false}) {
    SCOPED_TRACE(across_processes);
    std::shared_ptr<Server> server = JobOfThree(/*cpus=*/2);
    ASSERT_NE(server, nullptr);
    const bool ps = server->task().job == "ps";
    absl::StatusOr<ModelFn> towers = ReplicateModelFn(
        Regression, {.devices = {"/cpu:0", "/cpu:1"}, .across_processes = across_processes});
    ASSERT_TRUE(towers.ok()) << towers.status();
    std::ostringstream log;
    Estimator estimator(
        *towers, JobConfig(server, absl::StrCat(ModelDir(), "_towers_", across_processes), &log));
    absl::StatusOr<TrainResult> trained = estimator.Train(Points(5));
    server->Stop();
    if (ps) {
      EXPECT_TRUE(trained.ok()) << trained.status();
    } else if (across_processes) {
      EXPECT_THAT(trained.status(),
                  testing::StatusIs(absl::StatusCode::kInvalidArgument, "MpiAllReduce"));
      EXPECT_THAT(std::string(trained.status().message()), HasSubstr("across_processes = false"));
    } else {
      ASSERT_TRUE(trained.ok()) << trained.status();
      EXPECT_EQ(trained->steps_run, 5);
    }
    EXPECT_EQ(SumOverProcesses(ps             ? 0
                               : trained.ok() ? trained->steps_run
                                              : 0),
              across_processes ? 0 : 10);
  }
}

// With a "chief" job (TF_CONFIG's), its task is the chief, and worker 0
// is not: the chief alone logs and writes.
TEST(EstimatorPsTrainingTest, TheChiefJobsTaskIsTheChief) {
  std::shared_ptr<Server> server = JobOfThree(1, "chief=1,ps=1,worker=1");
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps";
  EXPECT_EQ(server->is_chief(), server->task().job == "chief");
  std::ostringstream log;
  const std::string model_dir = absl::StrCat(ModelDir(), "_chief_job");
  Estimator estimator(Regression, JobConfig(server, model_dir, &log));
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(20));
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();
  EXPECT_EQ(trained->steps_run, ps ? 0 : 20);
  EXPECT_EQ(SumOverProcesses(!ps && trained->global_step == 40 ? 1 : 0), 1);
  if (server->is_chief()) {
    EXPECT_THAT(log.str(), HasSubstr("Loss for final step"));
    EXPECT_TRUE(LatestCheckpoint(model_dir).ok());
  } else {
    EXPECT_EQ(log.str(), "");
  }
}

// A Keras-style model joins the job through ToModelFn: its weights live on
// the ps and both workers' steps update them.
TEST(EstimatorPsTrainingTest, AKerasModelTrainsThroughToModelFn) {
  std::shared_ptr<Server> server = JobOfThree();
  ASSERT_NE(server, nullptr);
  const bool ps = server->task().job == "ps";
  keras::Sequential model({1}, {keras::Dense(1)}, "sequential", DT_DOUBLE);
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1), "mse"));
  TW_ASSERT_OK_AND_ASSIGN(ModelFn model_fn, model.ToModelFn());
  std::ostringstream log;
  const std::string model_dir = absl::StrCat(ModelDir(), "_keras");
  Estimator estimator(model_fn, JobConfig(server, model_dir, &log));
  absl::StatusOr<TrainResult> trained = estimator.Train(Points(100));
  ASSERT_TRUE(trained.ok()) << trained.status();
  server->Stop();
  EXPECT_EQ(trained->steps_run, ps ? 0 : 100);
  // The later of the workers' final reads sees all 200 steps (the earlier
  // one may too: it reads after its own steps, not before the other's).
  EXPECT_GE(SumOverProcesses(!ps && trained->global_step == 200 ? 1 : 0), 1);
  EXPECT_EQ(SumOverProcesses(!ps && trained->global_step > 200 ? 1 : 0), 0);
  if (server->is_chief()) {
    std::map<std::string, Tensor> saved = LatestCheckpointTensors(model_dir);
    ASSERT_TRUE(saved.count("dense/kernel") && saved.count("dense/bias"));
    EXPECT_NEAR(saved["dense/kernel"].data<double>()[0], 2.0, 1e-6);
    EXPECT_NEAR(saved["dense/bias"].data<double>()[0], 1.0, 1e-6);
  }
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
