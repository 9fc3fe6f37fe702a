// Synchronised batch norm (layers::BatchNormalizationOptions::synchronized):
// towers of uneven batches, on this process's two virtual CPUs and, under
// mpirun (sync_batch_norm_mpirun_test), on every process, give the outputs,
// gradients and moving averages of one unsynchronised layer on the whole
// batch (every tower's rows of every process), built in the same process.
#include <cmath>
#include <string>
#include <vector>

#include "distribute/cluster.h"
#include "gmock/gmock.h"
#include "graph/replica_context.h"
#include "gtest/gtest.h"
#include "layers/layers.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

constexpr int kChannels = 3;
// The rows of the global batch: process p's tower t holds rows
// [Begin(p, t), Begin(p, t + 1)); towers of 3 and 5 rows.
constexpr int kTowerRows[2] = {3, 5};
int Begin(int process, int tower) {
  return process * (kTowerRows[0] + kTowerRows[1]) + (tower > 0 ? kTowerRows[0] : 0) +
         (tower > 1 ? kTowerRows[1] : 0);
}

// Row r of x: varied per channel, different means and spreads.
std::vector<float> Rows(int begin, int end) {
  std::vector<float> v;
  for (int r = begin; r < end; ++r) {
    for (int c = 0; c < kChannels; ++c) {
      v.push_back(static_cast<float>(std::sin(0.7 * r + 1.3 * c) * (c + 1) + 0.5 * c));
    }
  }
  return v;
}

// L = sum over rows and channels of (0.5 y^2 + k_c y) / rows of the global
// batch: nonlinear in y, so its gradient goes through the statistics.
Output TowerLoss(const Scope& s, const Output& y, int global_rows) {
  Output k = ops::Const(s, {0.3f, -1.1f, 0.6f});
  Output terms = ops::AddV2(s, ops::Mul(s, ops::Square(s, y), 0.5f), ops::Mul(s, y, k));
  return ops::RealDiv(s, ops::Sum(s, terms, ops::Const(s, {0, 1})),
                      static_cast<float>(global_rows));
}

layers::BatchNormalizationOptions Options(bool synchronized, int num_towers, int tower) {
  layers::BatchNormalizationOptions o;
  o.training = true;
  o.momentum = 0.9;
  o.epsilon = 1e-3;
  o.gamma_initializer = initializers::Constant(1.5f);
  o.beta_initializer = initializers::Constant(-0.25f);
  o.synchronized = synchronized;
  o.num_towers = num_towers;
  o.tower_index = tower;
  o.name = "bn";
  return o;
}

struct Results {
  std::vector<float> y, dx, dgamma, dbeta, moving_mean, moving_variance;
};

// Runs the graph: the outputs, dL/dx of `xs` in order, dL/dgamma, dL/dbeta,
// then the update ops and the moving averages.
Results RunTowers(const Scope& root, const std::vector<Output>& xs, const std::vector<Output>& ys,
                  const Output& loss) {
  Results r;
  Variable gamma, beta, mean, variance;
  for (const Variable& v : GetVariables(*root.graph())) {
    if (v.name() == "bn/gamma") gamma = v;
    if (v.name() == "bn/beta") beta = v;
    if (v.name() == "bn/moving_mean") mean = v;
    if (v.name() == "bn/moving_variance") variance = v;
  }
  std::vector<Output> wrt = xs;
  wrt.push_back(gamma.handle());
  wrt.push_back(beta.handle());
  std::vector<Output> grads;
  EXPECT_TRUE(AddSymbolicGradients(root, {loss}, wrt, &grads).ok());
  std::vector<Operation> updates = GetCollectionOps(*root.graph(), GraphKeys::kUpdateOps);
  SessionOptions options;
  options.device_count["CPU"] = 2;
  ClientSession session(root, options);
  EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr).ok());
  std::vector<Output> fetches = ys;
  fetches.insert(fetches.end(), grads.begin(), grads.end());
  std::vector<Tensor> out;
  const absl::Status ran = session.Run({}, fetches, updates, &out);
  EXPECT_TRUE(ran.ok()) << ran;
  if (!ran.ok()) return r;
  const auto append = [](const Tensor& t, std::vector<float>* to) {
    to->insert(to->end(), t.data<float>(), t.data<float>() + t.NumElements());
  };
  for (size_t i = 0; i < ys.size(); ++i) append(out[i], &r.y);
  for (size_t i = 0; i < xs.size(); ++i) append(out[ys.size() + i], &r.dx);
  append(out[ys.size() + xs.size()], &r.dgamma);
  append(out[ys.size() + xs.size() + 1], &r.dbeta);
  std::vector<Tensor> moving;
  EXPECT_TRUE(session.Run({mean.value(root), variance.value(root)}, &moving).ok());
  append(moving[0], &r.moving_mean);
  append(moving[1], &r.moving_variance);
  return r;
}

// Element i of a and b to float tolerance.
void ExpectNear(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 2e-5 * (1 + std::abs(b[i]))) << what << " " << i;
  }
}

TEST(SyncBatchNormTest, TowersOfEveryProcessNormaliseAsOneBatch) {
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int rank = (*cluster)->rank(), processes = (*cluster)->size();
  const int global_rows = Begin(processes, 0);

  // This process's two towers, synchronised.
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs, ys;
  Output loss;
  for (int t = 0; t < 2; ++t) {
    Scope tower =
        t == 0 ? root : root.NewSubScope("tower_1").WithVariableScope("", VariableReuse::kReuse);
    tower = tower.WithDevice(absl::StrCat("/device:CPU:", t));
    const std::vector<float> rows = Rows(Begin(rank, t), Begin(rank, t + 1));
    Output x =
        ops::Const(tower, MakeTensorProto<float>(rows, TensorShape({kTowerRows[t], kChannels})));
    xs.push_back(x);
    // The towers as ReplicateModelFn builds them: tower t of 2 in the
    // replica context (the layer's num_towers and tower_index left unset).
    const ScopedReplicaContext replica({.num_replicas = 2, .replica_id = t});
    layers::BatchNormalizationOptions synced = Options(true, 2, t);
    synced.num_towers.reset();
    synced.tower_index.reset();
    ys.push_back(layers::BatchNormalization(tower, x, synced));
    Output l = TowerLoss(tower, ys.back(), global_rows);
    loss = t == 0 ? l : Output(ops::AddV2(root, loss, l));
  }
  TW_ASSERT_OK(root.status());
  Results synced = RunTowers(root, xs, ys, loss);

  // One layer on the whole batch, unsynchronised.
  Scope whole = Scope::NewRootScope();
  Output x = ops::Const(
      whole, MakeTensorProto<float>(Rows(0, global_rows), TensorShape({global_rows, kChannels})));
  layers::BatchNormalizationOptions plain = Options(false, 1, 0);
  plain.across_processes = false;
  Output y = layers::BatchNormalization(whole, x, plain);
  TW_ASSERT_OK(whole.status());
  Results one = RunTowers(whole, {x}, {y}, TowerLoss(whole, y, global_rows));

  // This process's rows of the outputs and of dL/dx.
  const size_t first = static_cast<size_t>(Begin(rank, 0)) * kChannels;
  const size_t count = static_cast<size_t>(Begin(rank, 2) - Begin(rank, 0)) * kChannels;
  const std::vector<float> y_mine(one.y.begin() + first, one.y.begin() + first + count);
  const std::vector<float> dx_mine(one.dx.begin() + first, one.dx.begin() + first + count);
  ExpectNear(synced.y, y_mine, "y");
  ExpectNear(synced.dx, dx_mine, "dx");
  // The parameters' gradients: this process's towers' share, summed over
  // the processes (as TowerOptimizer sums them).
  Tensor dparams(DT_FLOAT, TensorShape({2 * kChannels}));
  std::copy(synced.dgamma.begin(), synced.dgamma.end(), dparams.data<float>());
  std::copy(synced.dbeta.begin(), synced.dbeta.end(), dparams.data<float>() + kChannels);
  TW_ASSERT_OK((*cluster)->AllReduceSum(&dparams));
  ExpectNear(std::vector<float>(dparams.data<float>(), dparams.data<float>() + kChannels),
             one.dgamma, "dgamma");
  ExpectNear(
      std::vector<float>(dparams.data<float>() + kChannels, dparams.data<float>() + 2 * kChannels),
      one.dbeta, "dbeta");
  // Tower 0 alone updated the moving averages, once, with the global
  // statistics.
  ExpectNear(synced.moving_mean, one.moving_mean, "moving_mean");
  ExpectNear(synced.moving_variance, one.moving_variance, "moving_variance");
  // The layer did normalise: the batch's statistics moved the averages.
  EXPECT_GT(std::abs(one.moving_mean[2] - 0.0f), 0.01f);
}

TEST(SyncBatchNormTest, RefusesABadTowerAndTheFusedKernel) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, MakeTensorProto<float>(Rows(0, 2), TensorShape({2, kChannels})));
  layers::BatchNormalizationOptions o = Options(true, 2, 2);
  layers::BatchNormalization(root, x, o);
  EXPECT_THAT(root.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                               "synchronized batch norm: tower 2 of 2"));
  Scope fused = Scope::NewRootScope();
  Output x4 = ops::Const(
      fused, MakeTensorProto<float>(std::vector<float>(8, 1.f), TensorShape({2, 1, 1, 4})));
  o = Options(true, 1, 0);
  o.fused = true;
  layers::BatchNormalization(fused, x4, o);
  EXPECT_THAT(fused.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                "synchronized batch norm is unfused"));
}

}  // namespace
}  // namespace towerflow
