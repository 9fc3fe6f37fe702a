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
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "ops/variables.h"
#include "tests/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace towerflow {
namespace distribute {
namespace {

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

std::map<std::string, Tensor> Checkpoint(const std::string& model_dir) {
  std::map<std::string, Tensor> out;
  absl::StatusOr<std::string> latest = LatestCheckpoint(model_dir);
  EXPECT_TRUE(latest.ok()) << latest.status();
  if (!latest.ok()) return out;
  absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(*latest);
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  if (!tensors.ok()) return out;
  for (const auto& t : *tensors) out[t.name] = t.tensor;
  return out;
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

  std::map<std::string, Tensor> a = Checkpoint(multi_dir), b = Checkpoint(single_dir);
  for (const char* name : {"w", "b", "w/Momentum", "b/Momentum"}) {
    ASSERT_TRUE(a.count(name) && b.count(name)) << name;
    ASSERT_EQ(a[name].NumElements(), b[name].NumElements());
    for (int64_t i = 0; i < a[name].NumElements(); ++i) {
      EXPECT_NEAR(a[name].data<double>()[i], b[name].data<double>()[i], 1e-9) << name << i;
    }
  }
  // Evaluation: each process its shard, the metrics those of all the data,
  // as one process evaluating all of it (the same checkpoint).
  absl::StatusOr<MetricMap> shard_metrics = multi.Evaluate(Input(n, rank, 2, false), std::nullopt);
  ASSERT_TRUE(shard_metrics.ok()) << shard_metrics.status();
  absl::StatusOr<MetricMap> all_metrics =
      single.Evaluate(Input(1, 0, 2, false), std::nullopt, *LatestCheckpoint(multi_dir));
  ASSERT_TRUE(all_metrics.ok()) << all_metrics.status();
  for (const char* metric : {"loss", "mean_prediction", "global_step"}) {
    ASSERT_EQ(shard_metrics->count(metric), 1u) << metric;
    EXPECT_NEAR(shard_metrics->at(metric), all_metrics->at(metric), 1e-9) << metric;
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
    RunConfig config;
    config.model_dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uneven_np", n, "_rows", rows);
    config.log = &std::cerr;
    config.progress_bar = RunConfig::ProgressBar::kOff;
    std::filesystem::create_directories(config.model_dir);
    absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
    ASSERT_TRUE(replicated.ok()) << replicated.status();
    Estimator estimator(*replicated, config);
    // With n - 1 examples the last process's input is empty from the start.
    absl::StatusOr<TrainResult> trained = estimator.Train(FirstRows(rows, n, rank));
    ASSERT_TRUE(trained.ok()) << trained.status();
    EXPECT_EQ(trained->global_step, steps);
  }
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
