// The Estimator under mpirun: processes started with different seeds train
// as one job on their shards of the data, and end where one process
// training on all of it ends (to 1e-9); rank 0 alone logs and writes
// checkpoints and summaries. Runs as one process (bazel test) and under
// mpirun -np 2 and 3 (cluster_mpirun_test.sh).
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/testing/job_testing.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace towerflow {
namespace distribute {
namespace {

using ::towerflow::testing::LatestCheckpointTensors;

// y = x w + b with randomly initialized w (the seed decides), mean squared
// error, Momentum.
EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params& params) {
  Variable w = GetVariable(s, "w", TensorShape({3, 1}), DT_DOUBLE, initializers::RandomNormal());
  Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::RandomNormal());
  Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
  EstimatorSpec spec(mode);
  spec.predictions["y"] = prediction;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  spec.eval_metric_ops["mean_prediction"] = train::Mean(s, prediction);
  if (mode != ModeKeys::kTrain) return spec;
  TowerOptimizer optimizer(std::make_shared<train::MomentumOptimizer>(0.05, 0.9));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

constexpr int kRows = 12;
const std::vector<double> kX = {1,   2,    3,   -1, 0.5, 1,    -2, 1, 0, 0.25, -1, 2,
                                1.5, -0.5, 0,   2,  2,   -1,   3,  0, 1, -1,   -1, -1,
                                0.5, 0.5,  0.5, 4,  -2,  0.75, 1,  1, 1, -3,   2,  0.125};
const std::vector<double> kY = {1, 0, 2, -1, 0.5, 3, -2, 1, 1.5, 0, 2.5, -0.5};

// The data in batches of `batch` rows, shard `index` of `shards`, repeated
// (for training) or once.
InputFn Input(int shards, int index, int batch, bool repeat = true) {
  return [=]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices(
                            {Literal<double>({kRows, 3}, kX), Literal<double>({kRows, 1}, kY)}));
    d = d.Shard(shards, index).Batch(batch);
    return InputSpec{repeat ? d.Repeat() : d, {"x"}, {"y"}};
  };
}

// A RunConfig logging to stderr without a progress bar, its model_dir made.
RunConfig QuietConfig(const std::string& model_dir, bool across_processes = true) {
  std::filesystem::create_directories(model_dir);
  RunConfig config;
  config.model_dir = model_dir;
  config.log = &std::cerr;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.across_processes = across_processes;
  return config;
}

TEST(EstimatorTrainingTest, ProcessesTrainAsOneProcessAndRankZeroAloneWrites) {
  absl::StatusOr<Cluster*> got = Cluster::Get();
  ASSERT_TRUE(got.ok()) << got.status();
  Cluster* cluster = *got;
  const int n = cluster->size(), rank = cluster->rank();
  const std::string base = absl::StrCat(std::getenv("TEST_TMPDIR"), "/np", n);
  const std::string multi_dir = base + "/multi";
  const std::string single_dir = absl::StrCat(base, "/single_", rank);
  std::filesystem::create_directories(multi_dir);
  std::filesystem::create_directories(single_dir);

  // Every process: its shard, its own seed (rank 0's variables win).
  std::ostringstream multi_log;
  RunConfig config;
  config.model_dir = multi_dir;
  config.random_seed = 100 + rank;
  config.log = &multi_log;
  config.log_step_count_steps = 1;
  config.save_summary_steps = 1;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  ASSERT_TRUE(replicated.ok()) << replicated.status();
  Estimator multi(*replicated, config);
  absl::StatusOr<TrainResult> trained =
      multi.Train(Input(n, rank, kRows / n), TrainOptions{.steps = 5});
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(trained->global_step, 5);
  TW_ASSERT_OK(cluster->Barrier());  // rank 0's checkpoint is written

  // One process alone, rank 0's seed, the whole batch.
  std::ostringstream single_log;
  RunConfig alone = config;
  alone.model_dir = single_dir;
  alone.random_seed = 100;
  alone.across_processes = false;
  alone.log = &single_log;
  absl::StatusOr<ModelFn> one_tower =
      ReplicateModelFn(Regression, {.devices = {"/cpu:0"}, .across_processes = false});
  ASSERT_TRUE(one_tower.ok()) << one_tower.status();
  Estimator single(*one_tower, alone);
  absl::StatusOr<TrainResult> expected = single.Train(Input(1, 0, kRows), TrainOptions{.steps = 5});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_NEAR(trained->loss, expected->loss, 1e-9);

  std::map<std::string, Tensor> a = LatestCheckpointTensors(multi_dir),
                                b = LatestCheckpointTensors(single_dir);
  for (const char* name : {"w", "b", "w/Momentum", "b/Momentum"}) {
    ASSERT_TRUE(a.count(name) && b.count(name)) << name;
    ASSERT_EQ(a[name].NumElements(), b[name].NumElements());
    for (int64_t i = 0; i < a[name].NumElements(); ++i) {
      EXPECT_NEAR(a[name].data<double>()[i], b[name].data<double>()[i], 1e-9) << name << i;
    }
  }
  // Evaluation: each process its shard, the metrics those of all the data,
  // as one process evaluating all of it (the same checkpoint), to float32
  // rounding: the metrics' totals are float32 (TF's), summed per shard and
  // then across the shards.
  absl::StatusOr<MetricMap> shard_metrics = multi.Evaluate(Input(n, rank, 2, false), std::nullopt);
  ASSERT_TRUE(shard_metrics.ok()) << shard_metrics.status();
  absl::StatusOr<MetricMap> all_metrics =
      single.Evaluate(Input(1, 0, 2, false), std::nullopt, *LatestCheckpoint(multi_dir));
  ASSERT_TRUE(all_metrics.ok()) << all_metrics.status();
  for (const char* metric : {"loss", "mean_prediction", "global_step"}) {
    ASSERT_EQ(shard_metrics->count(metric), 1u) << metric;
    EXPECT_NEAR(shard_metrics->at(metric), all_metrics->at(metric), 1e-6) << metric;
  }

  // Rank 0 alone logged and wrote one event file; the others were quiet.
  int events = 0;
  for (const auto& entry : std::filesystem::directory_iterator(multi_dir)) {
    events += absl::StrContains(entry.path().filename().string(), "tfevents") ? 1 : 0;
  }
  EXPECT_EQ(events, 1);
  if (rank == 0) {
    EXPECT_THAT(multi_log.str(), ::testing::HasSubstr("Loss for final step"));
  } else {
    EXPECT_EQ(multi_log.str(), "");
  }
}

// The first `rows` examples in batches of 2 (the last partial one
// dropped), shard `index` of `shards`: shards of unequal lengths.
InputFn FirstRows(int rows, int shards, int index) {
  return [=]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices(
                            {Literal<double>({kRows, 3}, kX), Literal<double>({kRows, 1}, kY)}));
    return InputSpec{
        d.Take(rows).Shard(shards, index).Batch(2, /*drop_remainder=*/true), {"x"}, {"y"}};
  };
}

TEST(EstimatorTrainingTest, TheFirstInputToEndEndsEveryProcess) {
  absl::StatusOr<Cluster*> got = Cluster::Get();
  ASSERT_TRUE(got.ok()) << got.status();
  const int n = (*got)->size(), rank = (*got)->rank();
  // 11 examples: the last shard is the shortest, with (11 - (n - 1)) / n
  // rounded up examples, so 5, 2 and 1 batches for 1, 2 and 3 processes.
  const int64_t expected_steps = ((11 - (n - 1) + n - 1) / n) / 2;
  for (const auto& [rows, steps] :
       {std::pair<int, int64_t>{11, expected_steps}, std::pair<int, int64_t>{n - 1, 0}}) {
    SCOPED_TRACE(rows);
    const RunConfig config =
        QuietConfig(absl::StrCat(std::getenv("TEST_TMPDIR"), "/uneven_np", n, "_rows", rows));
    absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
    ASSERT_TRUE(replicated.ok()) << replicated.status();
    Estimator estimator(*replicated, config);
    // With n - 1 examples the last process's input is empty from the start.
    absl::StatusOr<TrainResult> trained = estimator.Train(FirstRows(rows, n, rank));
    ASSERT_TRUE(trained.ok()) << trained.status();
    EXPECT_EQ(trained->global_step, steps);
  }
}

// The variables of `model_dir`'s latest checkpoint equal `expected`'s (to
// 1e-9), global step included.
void ExpectSameCheckpoint(const std::string& model_dir, const std::string& expected_dir) {
  std::map<std::string, Tensor> a = LatestCheckpointTensors(model_dir),
                                b = LatestCheckpointTensors(expected_dir);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : b) {
    SCOPED_TRACE(name);
    ASSERT_EQ(a.count(name), 1u);
    ASSERT_EQ(a[name].dtype(), tensor.dtype());
    ASSERT_EQ(a[name].NumElements(), tensor.NumElements());
    for (int64_t i = 0; i < tensor.NumElements(); ++i) {
      if (tensor.dtype() == DT_INT64) {
        EXPECT_EQ(a[name].data<int64_t>()[i], tensor.data<int64_t>()[i]);
      } else {
        EXPECT_NEAR(a[name].data<double>()[i], tensor.data<double>()[i], 1e-9) << i;
      }
    }
  }
}

// Rows [begin, end) of the data as one batch, every step.
InputFn Rows(int begin, int end) {
  return [=]() -> absl::StatusOr<InputSpec> {
    const std::vector<double> x(kX.begin() + 3 * begin, kX.begin() + 3 * end);
    const std::vector<double> y(kY.begin() + begin, kY.begin() + end);
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices({Literal<double>({end - begin, 3}, x),
                                                         Literal<double>({end - begin, 1}, y)}));
    return InputSpec{d.Batch(end - begin).Repeat(), {"x"}, {"y"}};
  };
}

// Processes whose batches differ in size train as one process on the union
// of their batches: each tower's loss weighs by its share of the cluster's
// rows. Process r takes r + 1 rows (1 + 2 + 3 = 6 with 3 processes), with one
// tower or two (an uneven split inside the process too).
TEST(EstimatorTrainingTest, BatchesOfDifferentSizesWeighByTheirRows) {
  absl::StatusOr<Cluster*> got = Cluster::Get();
  ASSERT_TRUE(got.ok()) << got.status();
  const int n = (*got)->size(), rank = (*got)->rank();
  const int begin = rank * (rank + 1) / 2, all = n * (n + 1) / 2;
  for (const std::vector<std::string>& devices :
       {std::vector<std::string>{"/cpu:0"}, std::vector<std::string>{"/cpu:0", "/cpu:1"}}) {
    SCOPED_TRACE(devices.size());
    const std::string base =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/unequal_np", n, "_towers", devices.size());
    const auto train = [&](bool across_processes, const std::string& model_dir, InputFn input) {
      RunConfig config = QuietConfig(model_dir, across_processes);
      config.random_seed = 7;
      config.session_options.device_count["CPU"] = 2;
      absl::StatusOr<ModelFn> replicated = ReplicateModelFn(
          Regression,
          {.devices = devices, .uneven_batches = true, .across_processes = across_processes});
      ASSERT_TRUE(replicated.ok()) << replicated.status();
      Estimator estimator(*replicated, config);
      absl::StatusOr<TrainResult> trained = estimator.Train(input, TrainOptions{.steps = 5});
      ASSERT_TRUE(trained.ok()) << trained.status();
    };
    train(true, base + "/cluster", Rows(begin, begin + rank + 1));
    TW_ASSERT_OK((*got)->Barrier());  // rank 0's checkpoint is written
    const std::string alone = absl::StrCat(base, "/alone_", rank);
    train(false, alone, Rows(0, all));
    ExpectSameCheckpoint(base + "/cluster", alone);
  }
}

// Asks to stop after the step ending at `stop_at` (never when negative) and
// keeps the examples of every step.
class StopAndCountHook : public SessionRunHook {
 public:
  explicit StopAndCountHook(int64_t stop_at) : stop_at_(stop_at) {}
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&,
                        bool* request_stop) override {
    examples.push_back(step.batch_size);
    if (step.global_step == stop_at_) *request_stop = true;
    return absl::OkStatus();
  }
  std::vector<int64_t> examples;

 private:
  const int64_t stop_at_;
};

TEST(EstimatorTrainingTest, AHookStoppingOneProcessStopsEveryProcessAndStepsCountTheCluster) {
  absl::StatusOr<Cluster*> got = Cluster::Get();
  ASSERT_TRUE(got.ok()) << got.status();
  const int n = (*got)->size(), rank = (*got)->rank();
  const RunConfig config =
      QuietConfig(absl::StrCat(std::getenv("TEST_TMPDIR"), "/hook_stop_np", n));
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  ASSERT_TRUE(replicated.ok()) << replicated.status();
  Estimator estimator(*replicated, config);
  // The last process alone asks to stop, after step 3 of 10.
  auto hook = std::make_shared<StopAndCountHook>(rank == n - 1 ? 3 : -1);
  absl::StatusOr<TrainResult> trained =
      estimator.Train(Input(n, rank, kRows / n), TrainOptions{.steps = 10, .hooks = {hook}});
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ(trained->global_step, 3);
  // Each step trains on the cluster's batch: all 12 rows.
  EXPECT_EQ(hook->examples, std::vector<int64_t>(3, kRows));
}

constexpr auto kCopyAll =
    std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing;

// Checkpoints do not depend on the number of processes: the cluster's
// checkpoint resumes in one process, one process's resumes in the cluster,
// and both end where one process training straight through ends. Rank 0
// alone writes: the other processes are given model_dirs of their own,
// which stay empty (they restore rank 0's variables by broadcast).
TEST(EstimatorTrainingTest, CheckpointsResumeOnAnyNumberOfProcesses) {
  absl::StatusOr<Cluster*> got = Cluster::Get();
  ASSERT_TRUE(got.ok()) << got.status();
  Cluster* cluster = *got;
  const int n = cluster->size(), rank = cluster->rank();
  const std::string base = absl::StrCat(std::getenv("TEST_TMPDIR"), "/resume_np", n);
  const auto dir = [&](const std::string& name) {
    const std::string path = absl::StrCat(base, "/", name);
    std::filesystem::create_directories(path);
    return path;
  };
  const auto config = [&](const std::string& model_dir, bool across_processes) {
    RunConfig c = QuietConfig(model_dir, across_processes);
    c.random_seed = 100 + (across_processes ? rank : 0);
    return c;
  };
  absl::StatusOr<ModelFn> cluster_model = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  absl::StatusOr<ModelFn> alone_model =
      ReplicateModelFn(Regression, {.devices = {"/cpu:0"}, .across_processes = false});
  ASSERT_TRUE(cluster_model.ok() && alone_model.ok());
  const auto train_in_cluster = [&](const std::string& shared_dir) {
    const std::string model_dir =
        rank == 0 ? shared_dir
                  : dir(absl::StrCat(std::filesystem::path(shared_dir).filename().string(), "_rank",
                                     rank));
    Estimator estimator(*cluster_model, config(model_dir, true));
    absl::StatusOr<TrainResult> trained =
        estimator.Train(Input(n, rank, kRows / n), TrainOptions{.steps = 5});
    ASSERT_TRUE(trained.ok()) << trained.status();
    if (rank != 0) {
      EXPECT_TRUE(std::filesystem::is_empty(model_dir)) << model_dir;
    }
    TW_ASSERT_OK(cluster->Barrier());  // rank 0's checkpoint is written
  };
  const auto train_alone = [&](const std::string& model_dir) {
    Estimator estimator(*alone_model, config(model_dir, false));
    absl::StatusOr<TrainResult> trained =
        estimator.Train(Input(1, 0, kRows), TrainOptions{.steps = 5});
    ASSERT_TRUE(trained.ok()) << trained.status();
  };
  const auto copy = [&](const std::string& from, const std::string& to) {
    if (rank == 0) {
      std::filesystem::copy(from, to, kCopyAll);
    }
    TW_ASSERT_OK(cluster->Barrier());
  };
  // Every process computes the expectation alone: 10 steps straight.
  const std::string straight = dir(absl::StrCat("straight_", rank));
  train_alone(straight);
  train_alone(straight);

  // The cluster's 5 steps, then 5 in one process.
  const std::string cluster_first = dir("cluster_first");
  train_in_cluster(cluster_first);
  const std::string then_alone = dir(absl::StrCat("then_alone_", rank));
  std::filesystem::copy(cluster_first, then_alone, kCopyAll);
  train_alone(then_alone);
  ExpectSameCheckpoint(then_alone, straight);

  // One process's 5 steps (rank 0's), then 5 in the cluster.
  const std::string alone_first = dir("alone_first");
  if (rank == 0) train_alone(alone_first);
  TW_ASSERT_OK(cluster->Barrier());
  const std::string then_cluster = dir("then_cluster");
  copy(alone_first, then_cluster);
  train_in_cluster(then_cluster);
  ExpectSameCheckpoint(then_cluster, straight);
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
