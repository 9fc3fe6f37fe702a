// The Keras-style model under mpirun: the replicas of every process Fit as
// one model, equal to one process training on the whole batches (to 1e-5
// in float), whether Fit takes tensors (every process holds all the data
// and trains on its rows of each batch) or a dataset each process shards;
// the weights start from rank 0's and rank 0 alone prints. Runs as one
// process (bazel test) and under mpirun -np 2 and 3 (cluster_mpirun_test.sh).
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "distribute/cluster.h"
#include "gtest/gtest.h"
#include "keras/layer.h"
#include "keras/model.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace distribute {
namespace {

constexpr int kRows = 10;
const std::vector<float> kX = {1,  2,  3,    -1,    0.5f, 1,    -2,   1,  0,  0.25f,
                               -1, 2,  1.5f, -0.5f, 0,    2,    2,    -1, 3,  0,
                               1,  -1, -1,   -1,    0.5f, 0.5f, 0.5f, 4,  -2, 0.75f};
const std::vector<float> kY = {1, 0, 2, -1, 0.5f, 3, -2, 1, 1.5f, 0};

// A small regression with `replicas` replicas per process, from the same
// weights on every process (but rank 0's when `scrambled`: the cluster
// must broadcast them).
keras::Model MakeModel(int replicas, bool across_processes, bool scrambled, int rank) {
  keras::Sequential model(
      {3}, {keras::Dense(4, {.activation = "tanh"}), keras::Dense(1, {.name = "out"})});
  EXPECT_TRUE(
      model.Compile(std::make_shared<train::MomentumOptimizer>(0.1, 0.9), "mse", {"mae"}).ok());
  keras::Model replicated = keras::ReplicatedModel(
      model, {.replicas = replicas, .uneven_batches = true, .across_processes = across_processes});
  absl::StatusOr<std::vector<NamedTensor>> weights = replicated.GetWeights();
  EXPECT_TRUE(weights.ok()) << weights.status();
  if (!weights.ok()) return replicated;
  int k = 0;
  for (NamedTensor& w : *weights) {
    float* v = w.tensor.data<float>();
    for (int64_t i = 0; i < w.tensor.NumElements(); ++i, ++k) {
      v[i] = 0.5f * std::sin(1.0f + k) * (scrambled ? static_cast<float>(rank + 1) : 1.0f);
    }
  }
  EXPECT_TRUE(replicated.SetWeights(*weights).ok());
  return replicated;
}

void ExpectSameWeights(keras::Model& a, keras::Model& b) {
  absl::StatusOr<std::vector<NamedTensor>> wa = a.GetWeights(), wb = b.GetWeights();
  ASSERT_TRUE(wa.ok() && wb.ok());
  ASSERT_EQ(wa->size(), wb->size());
  for (size_t i = 0; i < wa->size(); ++i) {
    SCOPED_TRACE((*wa)[i].name);
    ASSERT_EQ((*wa)[i].name, (*wb)[i].name);
    for (int64_t j = 0; j < (*wa)[i].tensor.NumElements(); ++j) {
      EXPECT_NEAR((*wa)[i].tensor.data<float>()[j], (*wb)[i].tensor.data<float>()[j], 1e-5) << j;
    }
  }
}

void ExpectSameHistory(const keras::History& a, const keras::History& b) {
  for (const char* log : {"loss", "mae"}) {
    SCOPED_TRACE(log);
    ASSERT_EQ(a.history.count(log), 1u);
    ASSERT_EQ(b.history.count(log), 1u);
    const std::vector<double>& x = a.history.at(log);
    const std::vector<double>& y = b.history.at(log);
    ASSERT_EQ(x.size(), y.size());
    for (size_t e = 0; e < x.size(); ++e) EXPECT_NEAR(x[e], y[e], 1e-5 * (1 + std::abs(y[e])));
  }
}

Cluster* GetCluster() {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *cluster : nullptr;
}

// Batches of 4 over n processes: with 3 processes the last batch (2 rows)
// leaves one process without rows.
TEST(KerasTrainingTest, FitOfTensorsTrainsTheProcessesAsOneModel) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const Tensor x = Literal<float>({kRows, 3}, kX), y = Literal<float>({kRows, 1}, kY);
  for (int replicas : {1, 2}) {
    SCOPED_TRACE(replicas);
    keras::Model together = MakeModel(replicas, true, /*scrambled=*/true, c->rank());
    keras::Model alone = MakeModel(replicas, false, false, c->rank());
    std::ostringstream printed, quiet;
    absl::StatusOr<keras::History> h = together.Fit(
        x, y, {.batch_size = 4, .epochs = 3, .seed = 5, .verbose = 1, .out = &printed});
    ASSERT_TRUE(h.ok()) << h.status();
    absl::StatusOr<keras::History> expected =
        alone.Fit(x, y, {.batch_size = 4, .epochs = 3, .seed = 5, .verbose = 0, .out = &quiet});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ExpectSameHistory(*h, *expected);
    ExpectSameWeights(together, alone);
    // Rank 0 alone prints the progress bar.
    EXPECT_EQ(printed.str().empty(), !c->is_chief()) << printed.str();
  }
}

// Each process its shard of the data in batches of 2: a step of the cluster
// takes rows [2 s n, 2 (s + 1) n), one process's batches of 2 n.
TEST(KerasTrainingTest, FitOfShardedDatasetsTrainsTheProcessesAsOneModel) {
  Cluster* c = GetCluster();
  ASSERT_NE(c, nullptr);
  const int n = c->size();
  const Tensor x = Literal<float>({kRows, 3}, kX), y = Literal<float>({kRows, 1}, kY);
  absl::StatusOr<data::Dataset> all = data::Dataset::FromTensorSlices({x, y});
  ASSERT_TRUE(all.ok()) << all.status();
  for (int replicas : {1, 2}) {
    SCOPED_TRACE(replicas);
    keras::Model together = MakeModel(replicas, true, true, c->rank());
    keras::Model alone = MakeModel(replicas, false, false, c->rank());
    absl::StatusOr<keras::History> h =
        together.Fit(all->Shard(n, c->rank()).Batch(2), {.epochs = 2, .verbose = 0});
    ASSERT_TRUE(h.ok()) << h.status();
    absl::StatusOr<keras::History> expected =
        alone.Fit(all->Batch(2 * n), {.epochs = 2, .verbose = 0});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ExpectSameHistory(*h, *expected);
    ExpectSameWeights(together, alone);
  }
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
