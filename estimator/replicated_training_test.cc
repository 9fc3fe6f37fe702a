// ReplicateModelFn and TowerOptimizer across the processes of a cluster:
// every process trains on its shard of one global batch, and the loss of
// every step and the final variables equal one process training on the
// whole batch (built in the same process with across_processes = false).
// GradientDescent, Momentum and Adam; 1 and 2 towers per process; the
// parameter-server and the all-reduce aggregation inside each process.
// Runs as one process (bazel test) and under mpirun -np 2 and 3
// (cluster_mpirun_test.sh).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "distribute/cluster.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/loss_scale_optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace distribute {
namespace {

// y = x w + b, mean squared error; params: "optimizer" 0 GradientDescent,
// 1 Momentum, 2 Adam.
EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params& params) {
  const Scope dense = s.WithVariableScope("dense");
  Variable w = GetVariable(dense, "w", TensorShape({3, 1}), DT_DOUBLE, initializers::Constant(0.5));
  Variable b = GetVariable(dense, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.1));
  Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
  EstimatorSpec spec(mode);
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  std::shared_ptr<train::Optimizer> optimizer;
  switch (static_cast<int>(params.Get("optimizer"))) {
    case 1:
      optimizer = std::make_shared<train::MomentumOptimizer>(0.1, 0.9);
      break;
    case 2:
      optimizer = std::make_shared<train::AdamOptimizer>(0.1);
      break;
    default:
      optimizer = std::make_shared<train::GradientDescentOptimizer>(0.1);
  }
  TowerOptimizer tower_optimizer(optimizer);
  spec.train_op = tower_optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// The global batch: 12 examples, divisible by 1, 2, 3 processes of 1 or 2
// towers.
constexpr int kRows = 12;
const std::vector<double> kX = {1,   2,    3,   -1, 0.5, 1,    -2, 1, 0, 0.25, -1, 2,
                                1.5, -0.5, 0,   2,  2,   -1,   3,  0, 1, -1,   -1, -1,
                                0.5, 0.5,  0.5, 4,  -2,  0.75, 1,  1, 1, -3,   2,  0.125};
const std::vector<double> kY = {1, 0, 2, -1, 0.5, 3, -2, 1, 1.5, 0, 2.5, -0.5};

struct TrainingRun {
  std::vector<double> losses;
  std::vector<double> w, b;
};

// Trains `steps` steps on rows [first, first + rows) of the global batch.
TrainingRun Train(const ReplicateOptions& options, int optimizer, int first, int rows, int steps) {
  TrainingRun run;
  Scope root = Scope::NewRootScope();
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(Regression, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return run;
  FeatureMap x = {{"x", ops::Const(root, MakeTensorProto<double>(
                                             absl::MakeConstSpan(kX.data() + 3 * first, 3 * rows),
                                             TensorShape({rows, 3})))}};
  FeatureMap y = {
      {"y", ops::Const(root, MakeTensorProto<double>(absl::MakeConstSpan(kY.data() + first, rows),
                                                     TensorShape({rows, 1})))}};
  Params params;
  params.values["optimizer"] = optimizer;
  EstimatorSpec spec = (*fn)(root, x, y, ModeKeys::kTrain, params);
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return run;
  SessionOptions session_options;
  session_options.device_count["CPU"] = 2;
  ClientSession session(root, session_options);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out).ok());
  EXPECT_TRUE(session.Run({}, {}, {LocalVariablesInitializer(root)}, &out).ok());
  for (int i = 0; i < steps; ++i) {
    const absl::Status st = session.Run({}, {spec.loss}, {spec.train_op}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) return run;
    run.losses.push_back(out[0].data<double>()[0]);
  }
  for (const Variable& v : GetVariables(*root.graph(), GraphKeys::kTrainableVariables)) {
    EXPECT_TRUE(session.Run({v.value(root.NewSubScope("read"))}, &out).ok());
    std::vector<double>& dst = v.name() == "dense/w" ? run.w : run.b;
    dst.assign(out[0].data<double>(), out[0].data<double>() + out[0].NumElements());
  }
  return run;
}

TEST(ReplicatedTrainingTest, ProcessesTrainAsOneProcessOnTheGlobalBatch) {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int n = (*cluster)->size(), rank = (*cluster)->rank();
  const int rows = kRows / n;
  ReplicateOptions single;
  single.devices = {"/cpu:0"};
  single.across_processes = false;
  for (int optimizer : {0, 1, 2}) {
    const TrainingRun expected = Train(single, optimizer, 0, kRows, 4);
    for (const GradientAggregation aggregation :
         {GradientAggregation::kParameterServer, GradientAggregation::kAllReduce}) {
      for (const std::vector<std::string>& devices :
           {std::vector<std::string>{"/cpu:0"}, std::vector<std::string>{"/cpu:0", "/cpu:1"}}) {
        SCOPED_TRACE(::testing::Message()
                     << "optimizer " << optimizer << ", " << devices.size() << " towers, "
                     << (aggregation == GradientAggregation::kAllReduce ? "all-reduce" : "ps"));
        ReplicateOptions options;
        options.devices = devices;
        options.aggregation = aggregation;
        const TrainingRun got = Train(options, optimizer, rank * rows, rows, 4);
        ASSERT_EQ(got.losses.size(), 4u);
        for (int step = 0; step < 4; ++step) {
          EXPECT_NEAR(got.losses[step], expected.losses[step], 1e-9) << "step " << step;
        }
        ASSERT_EQ(got.w.size(), 3u);
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(got.w[i], expected.w[i], 1e-9);
        ASSERT_EQ(got.b.size(), 1u);
        EXPECT_NEAR(got.b[0], expected.b[0], 1e-9);
      }
    }
  }
}

// An embedding of 6 rows of 2 read by id (ResourceGather: a sparse
// gradient), y = emb[id] . (1, -0.5), mean squared error, Momentum.
EstimatorSpec EmbeddingModel(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                             ModeKeys mode, const Params&) {
  Variable emb = GetVariable(
      s, "emb", TensorShape({6, 2}), DT_DOUBLE,
      initializers::Constant(
          {{1.0, 0.5}, {-1.0, 2.0}, {0.25, 0.0}, {3.0, -2.0}, {0.5, 0.5}, {-0.75, 1.0}}));
  const Output rows = ops::ResourceGather(s, emb.handle(), features.at("id"), DT_DOUBLE);
  const Output prediction = ops::MatMul(s, rows, ops::Const(s, {{1.0}, {-0.5}}));
  EstimatorSpec spec(mode);
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  TowerOptimizer optimizer(std::make_shared<train::MomentumOptimizer>(0.1, 0.9));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// Three steps of 12 ids: rows 0-2 in the first two steps only, row 5
// never, so a row keeps a momentum it gets no gradient for: a sparse update
// leaves it, a dense one moves it.
const std::vector<std::vector<int32_t>> kIds = {
    {0, 1, 2, 3, 0, 1, 2, 3, 4, 4, 0, 3},
    {2, 2, 1, 0, 3, 3, 4, 1, 0, 2, 4, 3},
    {3, 4, 3, 4, 3, 4, 4, 3, 3, 4, 4, 3},
};

struct EmbeddingRun {
  std::vector<double> losses, emb;
  int all_gathers = 0, sparse_updates = 0;
};

// Trains the embedding on ids [first, first + rows) of each step's batch.
EmbeddingRun TrainEmbedding(const ReplicateOptions& options, int first, int rows) {
  EmbeddingRun run;
  Scope root = Scope::NewRootScope();
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(EmbeddingModel, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return run;
  const Output id = ops::Placeholder(root, DT_INT32, ops::Placeholder::Shape({-1}));
  const Output y = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 1}));
  EstimatorSpec spec = (*fn)(root, {{"id", id}}, {{"y", y}}, ModeKeys::kTrain, Params());
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return run;
  for (Node* node : root.graph()->nodes()) {
    run.all_gathers += node->type_string() == "MpiAllGather";
    run.sparse_updates += node->type_string() == "ResourceSparseApplyMomentum";
  }
  SessionOptions session_options;
  session_options.device_count["CPU"] = 2;
  // As the Estimator's sessions: a tower's gather of a variable on the
  // parameter server runs where the variable is, and so do its gradient's
  // ops, which are colocated with it but ask for the tower's device.
  session_options.allow_soft_placement = true;
  ClientSession session(root, session_options);
  std::vector<Tensor> out;
  TW_EXPECT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  TW_EXPECT_OK(session.Run({}, {}, {LocalVariablesInitializer(root)}, &out));
  for (const std::vector<int32_t>& ids : kIds) {
    std::vector<double> labels;
    for (int i = 0; i < rows; ++i) labels.push_back(0.5 * ids[first + i] - 1);
    const absl::Status st = session.Run(
        {{id, Literal<int32_t>(
                  {rows}, std::vector<int32_t>(ids.begin() + first, ids.begin() + first + rows))},
         {y, Literal<double>({rows, 1}, labels)}},
        {spec.loss}, {spec.train_op}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) return run;
    run.losses.push_back(out[0].data<double>()[0]);
  }
  const Variable emb = GetVariables(*root.graph(), GraphKeys::kTrainableVariables).at(0);
  EXPECT_TRUE(session.Run({emb.value(root.NewSubScope("read"))}, &out).ok());
  run.emb.assign(out[0].data<double>(), out[0].data<double>() + out[0].NumElements());
  return run;
}

// A sparse gradient crosses towers and processes as rows (concatenated
// inside the process, MpiAllGather of its values and indices across) and
// stays sparse: Momentum updates only the rows of the step, as one process
// on the global batch does (a densified gradient would decay and move the
// rows that left the batch), under both aggregations.
TEST(ReplicatedTrainingTest, SparseGradientsCrossProcessesAsRows) {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int n = (*cluster)->size(), rank = (*cluster)->rank();
  const int rows = kRows / n;
  for (const GradientAggregation aggregation :
       {GradientAggregation::kParameterServer, GradientAggregation::kAllReduce}) {
    const bool ps = aggregation == GradientAggregation::kParameterServer;
    ReplicateOptions single;
    single.devices = {"/cpu:0"};
    single.aggregation = aggregation;
    single.across_processes = false;
    const EmbeddingRun expected = TrainEmbedding(single, 0, kRows);
    EXPECT_EQ(expected.sparse_updates, 1);
    ASSERT_EQ(expected.emb.size(), 12u);
    // Row 5 never had a gradient; rows 0-2 left the batch in step 3 with a
    // momentum: the sparse update kept them where step 2 left them, which
    // the losses and values of the multi-process runs must match.
    EXPECT_EQ(expected.emb[10], -0.75);
    EXPECT_EQ(expected.emb[11], 1.0);
    for (const std::vector<std::string>& devices :
         {std::vector<std::string>{"/cpu:0"}, std::vector<std::string>{"/cpu:0", "/cpu:1"}}) {
      SCOPED_TRACE(::testing::Message()
                   << devices.size() << " towers, " << (ps ? "ps" : "all-reduce"));
      ReplicateOptions options;
      options.devices = devices;
      options.aggregation = aggregation;
      const EmbeddingRun got = TrainEmbedding(options, rank * rows, rows);
      EXPECT_EQ(got.all_gathers, n > 1 ? 1 : 0);
      // One update of the variable, or of each tower's mirror.
      EXPECT_EQ(got.sparse_updates, ps ? 1 : static_cast<int>(devices.size()));
      ASSERT_EQ(got.losses.size(), kIds.size());
      for (size_t step = 0; step < kIds.size(); ++step) {
        EXPECT_NEAR(got.losses[step], expected.losses[step], 1e-12) << "step " << step;
      }
      ASSERT_EQ(got.emb.size(), 12u);
      for (int i = 0; i < 12; ++i) EXPECT_NEAR(got.emb[i], expected.emb[i], 1e-12) << i;
    }
  }
}

// Under a dynamic loss scale, a gradient that is not finite in one
// process's shard skips the step in every process: the check reads the
// gradients summed across processes. Step 1 carries an infinite x in the
// last row, which one process holds; every process keeps its weights and
// momentum through it, halves the scale (8 -> 4), and doubles it again
// after two finite steps, as one process on the global batch does.
struct ScaledRun {
  std::vector<double> w, b;
  float scale = 0;
  int64_t global_step = -1;
};

ScaledRun TrainScaled(const ReplicateOptions& options, int first, int rows) {
  ScaledRun run;
  auto scaled = std::make_shared<train::LossScaleOptimizer>(
      std::make_shared<train::MomentumOptimizer>(0.1, 0.9), train::LossScale::Dynamic(8, 2, 2));
  const ModelFn model = [scaled](const Scope& s, const FeatureMap& features,
                                 const FeatureMap& labels, ModeKeys mode, const Params&) {
    const Scope dense = s.WithVariableScope("dense");
    Variable w =
        GetVariable(dense, "w", TensorShape({3, 1}), DT_DOUBLE, initializers::Constant(0.5));
    Variable b = GetVariable(dense, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.1));
    Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
    EstimatorSpec spec(mode);
    spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
    spec.train_op = TowerOptimizer(scaled).Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    return spec;
  };
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(model, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return run;
  Scope root = Scope::NewRootScope();
  const Output x = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 3}));
  const Output y = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 1}));
  const EstimatorSpec spec = (*fn)(root, {{"x", x}}, {{"y", y}}, ModeKeys::kTrain, Params());
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return run;
  SessionOptions session_options;
  session_options.device_count["CPU"] = 2;
  ClientSession session(root, session_options);
  std::vector<Tensor> out;
  TW_EXPECT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  TW_EXPECT_OK(session.Run({}, {}, {LocalVariablesInitializer(root)}, &out));
  for (int step = 0; step < 4; ++step) {
    std::vector<double> xs(kX.begin() + 3 * first, kX.begin() + 3 * (first + rows));
    if (step == 1 && first + rows == kRows) xs.back() = INFINITY;
    const absl::Status st = session.Run(
        {{x, Literal<double>({rows, 3}, xs)},
         {y, Literal<double>({rows, 1},
                             std::vector<double>(kY.begin() + first, kY.begin() + first + rows))}},
        {}, {spec.train_op}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) return run;
  }
  const Scope read = root.NewSubScope("read");
  TW_EXPECT_OK(session.Run(
      {scaled->current_loss_scale().value(read), train::GetGlobalStep(*root.graph())->value(read)},
      &out));
  run.scale = out[0].data<float>()[0];
  run.global_step = out[1].data<int64_t>()[0];
  for (const Variable& v : GetVariables(*root.graph(), GraphKeys::kTrainableVariables)) {
    EXPECT_TRUE(session.Run({v.value(read)}, &out).ok());
    std::vector<double>& dst = v.name() == "dense/w" ? run.w : run.b;
    dst.assign(out[0].data<double>(), out[0].data<double>() + out[0].NumElements());
  }
  return run;
}

TEST(ReplicatedTrainingTest, ALossScaleSkipsTheSameStepsInEveryProcess) {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int n = (*cluster)->size(), rank = (*cluster)->rank();
  const int rows = kRows / n;
  ReplicateOptions single;
  single.devices = {"/cpu:0"};
  single.across_processes = false;
  const ScaledRun expected = TrainScaled(single, 0, kRows);
  // Steps 0, 2 and 3 applied; step 1 skipped and halved the scale, which
  // two finite steps doubled back.
  EXPECT_EQ(expected.global_step, 3);
  EXPECT_EQ(expected.scale, 8.0f);
  for (const GradientAggregation aggregation :
       {GradientAggregation::kParameterServer, GradientAggregation::kAllReduce}) {
    for (const std::vector<std::string>& devices :
         {std::vector<std::string>{"/cpu:0"}, std::vector<std::string>{"/cpu:0", "/cpu:1"}}) {
      SCOPED_TRACE(::testing::Message()
                   << devices.size() << " towers, "
                   << (aggregation == GradientAggregation::kAllReduce ? "all-reduce" : "ps"));
      ReplicateOptions options;
      options.devices = devices;
      options.aggregation = aggregation;
      const ScaledRun got = TrainScaled(options, rank * rows, rows);
      EXPECT_EQ(got.global_step, expected.global_step);
      EXPECT_EQ(got.scale, expected.scale);
      ASSERT_EQ(got.w.size(), 3u);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(got.w[i], expected.w[i], 1e-9) << i;
      ASSERT_EQ(got.b.size(), 1u);
      EXPECT_NEAR(got.b[0], expected.b[0], 1e-9);
    }
  }
}

// Where the cluster's collectives are placed: the row counts and the loss
// on the host; the gradient sums on the host, or with nccl_across_processes
// on the GPU that holds them: under all-reduce aggregation (the parameter
// server of GPU towers sums on the host, and towers on CPUs keep them there
// too). Only the graph is built: no GPU is needed.
TEST(ReplicatedTrainingTest, GradientSumsCrossOnTheirGpuWithNccl) {
  absl::StatusOr<Cluster*> cluster = Cluster::Get();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  if ((*cluster)->size() == 1) GTEST_SKIP() << "one process builds no cross-process collective";
  const auto devices_of_collectives = [](const std::vector<std::string>& towers, bool nccl,
                                         GradientAggregation aggregation =
                                             GradientAggregation::kAllReduce) {
    ReplicateOptions options;
    options.devices = towers;
    options.aggregation = aggregation;
    options.nccl_across_processes = nccl;
    Scope root = Scope::NewRootScope();
    absl::StatusOr<ModelFn> fn = ReplicateModelFn(Regression, options);
    EXPECT_TRUE(fn.ok()) << fn.status();
    FeatureMap x = {{"x", ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 3}))}};
    FeatureMap y = {{"y", ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 1}))}};
    Params params;
    params.values["optimizer"] = 0;
    (void)(*fn)(root, x, y, ModeKeys::kTrain, params);
    EXPECT_TRUE(root.ok()) << root.status();
    std::vector<std::string> devices;  // in node order
    for (Node* node : root.graph()->nodes()) {
      if (node->type_string() == "MpiAllReduce") devices.push_back(node->requested_device());
    }
    return devices;
  };
  // Rows, gradients, loss.
  EXPECT_EQ(devices_of_collectives({"/gpu:0", "/gpu:1"}, false),
            std::vector<std::string>(3, "/device:CPU:0"));
  std::vector<std::string> nccl = devices_of_collectives({"/gpu:0", "/gpu:1"}, true);
  std::sort(nccl.begin(), nccl.end());
  EXPECT_EQ(nccl, (std::vector<std::string>{"/device:CPU:0", "/device:CPU:0", "/device:GPU:0"}));
  EXPECT_EQ(
      devices_of_collectives({"/gpu:0", "/gpu:1"}, true, GradientAggregation::kParameterServer),
      std::vector<std::string>(3, "/device:CPU:0"));
  EXPECT_EQ(devices_of_collectives({"/cpu:0", "/cpu:1"}, true),
            std::vector<std::string>(3, "/device:CPU:0"));
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
