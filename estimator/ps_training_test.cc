// Parameter-server training across processes (TF 1.x between-graph
// replication), three processes under mpirun (ps_mpirun_test): the workers
// build the model with ReplicaDeviceSetter and run it in sessions over the
// cluster, the ps tasks serve. Every process runs the same tests in order;
// each test makes its cluster's Server on every process.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/device_setter.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/queue_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"
#include "train/saver.h"
#include "train/session_manager.h"
#include "train/sync_replicas_optimizer.h"

namespace towerflow {
namespace distribute {
namespace {

using ::testing::HasSubstr;

// y = 2x + 1 on four points: the least-squares optimum is w = 2, b = 1. The
// points are centred, so the loss's Hessian is diag(2.5, 2): gradient
// descent converges fast, and stays stable on gradients a few updates old
// (asynchronous workers) for learning rates well below 0.3.
struct Regression {
  GraphDef graph;
  std::string train, loss, step, w, b, init;
  train::ReadyOp ready;
};

Regression BuildRegression(const TaskId& task, int ps_tasks, double learning_rate,
                           const std::function<void(const Scope&, const Variable& b)>& extra = {}) {
  Regression r;
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = ps_tasks;
  setter.worker_device = task.name();
  absl::StatusOr<DeviceFunction> fn = ReplicaDeviceSetter(setter);
  EXPECT_TRUE(fn.ok()) << fn.status();
  const Scope s = root.WithDeviceFunction(*fn);
  Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
  Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.0));
  Output x = ops::Const(s, MakeTensorProto<double>({-1.5, -0.5, 0.5, 1.5}, TensorShape({4, 1})));
  Output y = ops::Const(s, MakeTensorProto<double>({-2, 0, 2, 4}, TensorShape({4, 1})));
  Output prediction = ops::Add(s, ops::MatMul(s, x, w.value()), b.value());
  Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, y)), {0, 1});
  Variable step = train::GetOrCreateGlobalStep(s);
  train::GradientDescentOptimizer optimizer(learning_rate);
  Operation train_op = optimizer.Minimize(s, loss, step);
  Operation init = GlobalVariablesInitializer(s);
  if (extra) extra(root, b);
  absl::StatusOr<train::ReadyOp> ready = train::ReportUninitializedVariables(s);
  EXPECT_TRUE(ready.ok()) << ready.status();
  if (ready.ok()) r.ready = *ready;
  r.train = train_op.node()->name();
  r.loss = loss.name();
  r.step = step.value().name();
  r.w = w.value().name();
  r.b = b.value().name();
  r.init = init.node()->name();
  const absl::Status built = root.ToGraphDef(&r.graph);
  EXPECT_TRUE(built.ok()) << built;
  return r;
}

double Scalar(const Tensor& t) {
  return t.dtype() == DT_INT64 ? t.flat<int64_t>()(0) : t.flat<double>()(0);
}

absl::StatusOr<double> Fetch(Session* session, const std::string& name) {
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session->Run({}, {name}, {}, &out));
  return Scalar(out[0]);
}

std::string DeviceOf(const GraphDef& graph, const std::string& node) {
  for (const NodeDef& n : graph.node()) {
    if (n.name() == node) return n.device();
  }
  return "(no node " + node + ")";
}

// This process's Server of `options`; null on a ps task, after it has
// served until the workers stopped.
std::unique_ptr<Server> WorkerOrServe(const ServerOptions& options) {
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  if ((*server)->task().job != "ps") return *std::move(server);
  const absl::Status joined = (*server)->Join();
  EXPECT_TRUE(joined.ok()) << joined;
  return nullptr;
}

// Two workers train asynchronously on one ps: every update reaches the
// shared variables, the global step counts both workers' steps, and the
// convex problem reaches its optimum.
TEST(PsTrainingTest, AsynchronousWorkersConvergeAndCountEveryStep) {
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
  std::unique_ptr<Server> server = WorkerOrServe(ServerOptions{spec});
  if (server == nullptr) return;
  constexpr int kStepsPerWorker = 300;
  // The other worker tells the chief it is done through a queue on the ps:
  // the chief's dequeue waits for that event.
  const Regression model =
      BuildRegression(server->task(), 1, 0.1, [](const Scope& root, const Variable&) {
        const Scope ps = root.WithDevice("/job:ps/task:0");
        Output done = ops::FIFOQueueV2(ps.WithOpName("done_queue"), {DT_INT64},
                                       ops::FIFOQueueV2::Attrs().SharedName("done_queue"));
        ops::QueueEnqueueV2(ps.WithOpName("done_enqueue"), done, {ops::Const(ps, int64_t{1})});
        ops::QueueDequeueV2(ps.WithOpName("done_dequeue"), done, {DT_INT64});
      });
  EXPECT_EQ(DeviceOf(model.graph, "w"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(model.graph, "MatMul"), absl::StrCat(server->task().name()));
  {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, server->NewSession({}));
    TW_ASSERT_OK(session->Create(model.graph));
    if (server->is_chief()) {
      TW_ASSERT_OK_AND_ASSIGN(std::vector<std::string> missing,
                              train::UninitializedVariables(session.get(), model.ready));
      EXPECT_THAT(missing, ::testing::ElementsAre("w", "b", "global_step"));
      TW_ASSERT_OK(session->Run({}, {}, {model.init}, nullptr));
    } else {
      TW_ASSERT_OK(train::WaitForVariables(session.get(), model.ready, absl::Minutes(5)));
    }
    for (int i = 0; i < kStepsPerWorker; ++i) {
      TW_ASSERT_OK(session->Run({}, {}, {model.train}, nullptr));
    }
    TW_ASSERT_OK_AND_ASSIGN(double step, Fetch(session.get(), model.step));
    EXPECT_GE(step, kStepsPerWorker);
    if (!server->is_chief()) {
      TW_ASSERT_OK(session->Run({}, {}, {"done_enqueue"}, nullptr));
    } else {
      TW_ASSERT_OK(session->Run({}, {}, {"done_dequeue"}, nullptr));
      TW_ASSERT_OK_AND_ASSIGN(step, Fetch(session.get(), model.step));
      EXPECT_EQ(step, 2 * kStepsPerWorker);
      TW_ASSERT_OK_AND_ASSIGN(double w, Fetch(session.get(), model.w));
      TW_ASSERT_OK_AND_ASSIGN(double b, Fetch(session.get(), model.b));
      EXPECT_NEAR(w, 2.0, 1e-6);
      EXPECT_NEAR(b, 1.0, 1e-6);
      TW_ASSERT_OK_AND_ASSIGN(double loss, Fetch(session.get(), model.loss));
      EXPECT_LT(loss, 1e-10);
    }
  }
  server->Stop();
  EXPECT_GT(server->bytes_sent(), 0);
  EXPECT_GT(server->bytes_received(), 0);
}

// Two ps tasks: the setter puts w on task 0 and b on task 1, the partitions
// that run there hold them, and one worker's training equals one process
// running the same graph (to the last bit: the same kernels in the same
// order). Feeds consumed on a ps, values fetched from one, and an error on
// a ps (named with its task) work as in one process.
TEST(PsTrainingTest, TwoPsTasksHoldTheirVariablesAndTrainAsOneProcess) {
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse(R"({"ps": ["a:1", "b:1"],
                                                                  "worker": ["c:1"]})"));
  std::unique_ptr<Server> server = WorkerOrServe(ServerOptions{spec});
  if (server == nullptr) return;
  EXPECT_TRUE(server->is_chief());
  // Beside the model, an update fed from the worker and applied on ps
  // task 1, and a bad reshape there.
  const Regression model =
      BuildRegression(server->task(), 2, 0.05, [](const Scope& root, const Variable& b) {
        const Scope ps1 = root.WithDevice("/job:ps/task:1");
        Output delta = ops::Placeholder(root.WithOpName("delta"), DT_DOUBLE,
                                        ops::Placeholder::Attrs().Shape(PartialTensorShape({1})));
        ops::AssignAddVariableOp(ps1.WithOpName("bump_b"), b.handle(), delta);
        Output shape = ops::Placeholder(root.WithOpName("shape"), DT_INT32,
                                        ops::Placeholder::Attrs().Shape(PartialTensorShape({1})));
        ops::Reshape(ps1.WithOpName("bad_reshape"), b.value(ps1), shape);
      });
  EXPECT_EQ(DeviceOf(model.graph, "w"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(model.graph, "b"), "/job:ps/task:1");
  EXPECT_EQ(DeviceOf(model.graph, "global_step"), "/job:ps/task:0");
  SessionOptions local_options;
  local_options.allow_soft_placement = true;  // the job names mean nothing in one process
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> local, NewSession(local_options));
  TW_ASSERT_OK(local->Create(model.graph));
  TW_ASSERT_OK(local->Run({}, {}, {model.init}, nullptr));
  {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, server->NewSession({}));
    TW_ASSERT_OK(session->Create(model.graph));
    TW_ASSERT_OK(session->Run({}, {}, {model.init}, nullptr));
    for (int i = 0; i < 20; ++i) {
      std::vector<Tensor> remote_out, local_out;
      TW_ASSERT_OK(session->Run({}, {model.loss}, {model.train}, &remote_out));
      TW_ASSERT_OK(local->Run({}, {model.loss}, {model.train}, &local_out));
      EXPECT_EQ(Scalar(remote_out[0]), Scalar(local_out[0])) << "step " << i;
    }
    RunOptions trace;
    trace.output_partition_graphs = true;
    RunMetadata metadata;
    std::vector<Tensor> out;
    TW_ASSERT_OK(session->Run(trace, {}, {model.w, model.b}, {}, &out, &metadata));
    std::vector<std::string> b_holders;
    for (const GraphDef& partition : metadata.partition_graphs) {
      for (const NodeDef& n : partition.node()) {
        if (n.op() == "VarHandleOp") b_holders.push_back(n.name() + "@" + n.device());
      }
    }
    EXPECT_THAT(b_holders,
                ::testing::UnorderedElementsAre("w@/job:ps/replica:0/task:0/device:CPU:0",
                                                "b@/job:ps/replica:0/task:1/device:CPU:0"));
    TW_ASSERT_OK_AND_ASSIGN(double local_w, Fetch(local.get(), model.w));
    TW_ASSERT_OK_AND_ASSIGN(double local_b, Fetch(local.get(), model.b));
    EXPECT_EQ(Scalar(out[0]), local_w);
    EXPECT_EQ(Scalar(out[1]), local_b);
    TW_ASSERT_OK_AND_ASSIGN(double step, Fetch(session.get(), model.step));
    EXPECT_EQ(step, 20);

    // A feed consumed on ps task 1.
    Tensor delta(DT_DOUBLE, TensorShape({1}));
    delta.flat<double>()(0) = 0.5;
    TW_ASSERT_OK(session->Run({{"delta", delta}}, {}, {"bump_b"}, nullptr));
    TW_ASSERT_OK_AND_ASSIGN(double bumped, Fetch(session.get(), model.b));
    EXPECT_EQ(bumped, local_b + 0.5);

    // An error on ps task 1 names the node and the task; the session goes on.
    Tensor two(DT_INT32, TensorShape({1}));
    two.flat<int32_t>()(0) = 2;
    const absl::Status bad = session->Run({{"shape", two}}, {"bad_reshape"}, {}, &out);
    EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(bad.message(), HasSubstr("bad_reshape"));
    EXPECT_THAT(bad.message(), HasSubstr("/job:ps/replica:0/task:1"));
    TW_ASSERT_OK_AND_ASSIGN(double after, Fetch(session.get(), model.b));
    EXPECT_EQ(after, bumped);
  }
}

// SyncReplicasOptimizer, 1 ps + 2 workers, replicas_to_aggregate = 2, in
// lock-step (no tokens at the start): each worker trains on its half of the
// batch, every update averages one gradient of each, the global step counts
// the updates, and after 10 the variables equal one process training on the
// whole batch.
TEST(PsTrainingTest, SyncReplicasEqualsOneProcessOnTheWholeBatch) {
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
  std::unique_ptr<Server> server = WorkerOrServe(ServerOptions{spec});
  if (server == nullptr) return;
  constexpr int kUpdates = 10;
  const std::vector<double> x = {-1.5, -0.5, 0.5, 1.5}, y = {-2, 0, 2, 4};
  // y = x w + b, mean squared error over `rows` rows from `first`.
  struct Model {
    GraphDef graph;
    std::string train, init, init_tokens, token, step, w, b;
    train::ReadyOp ready;
    std::shared_ptr<train::SyncReplicasOptimizer> sync;
  };
  const auto build = [&](int first, int rows, const TaskId* task) {
    Model m;
    Scope root = Scope::NewRootScope();
    Scope s = root;
    if (task != nullptr) {
      ReplicaDeviceSetterOptions setter;
      setter.ps_tasks = 1;
      setter.worker_device = task->name();
      absl::StatusOr<DeviceFunction> fn = ReplicaDeviceSetter(setter);
      EXPECT_TRUE(fn.ok()) << fn.status();
      s = root.WithDeviceFunction(*fn);
    }
    Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
    Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.0));
    const auto rows_of = [&](const std::vector<double>& v) {
      return ops::Const(s, MakeTensorProto<double>(absl::MakeConstSpan(v.data() + first, rows),
                                                   TensorShape({rows, 1})));
    };
    Output prediction = ops::Add(s, ops::MatMul(s, rows_of(x), w.value()), b.value());
    Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, rows_of(y))), {0, 1});
    Variable step = train::GetOrCreateGlobalStep(s);
    auto gd = std::make_shared<train::GradientDescentOptimizer>(0.1);
    if (task == nullptr) {
      m.train = gd->Minimize(s, loss, step).node()->name();
    } else {
      m.sync = std::make_shared<train::SyncReplicasOptimizer>(gd, 2, 2);
      m.train = m.sync->Minimize(s, loss, step).node()->name();
      absl::StatusOr<Operation> tokens = m.sync->GetInitTokensOp(s, 0);
      EXPECT_TRUE(tokens.ok()) << tokens.status();
      if (tokens.ok()) m.init_tokens = tokens->node()->name();
      m.token = "sync_token_q_Dequeue:0";
      absl::StatusOr<train::ReadyOp> ready = train::ReportUninitializedVariables(s);
      EXPECT_TRUE(ready.ok()) << ready.status();
      if (ready.ok()) m.ready = *ready;
    }
    m.init = GlobalVariablesInitializer(s).node()->name();
    m.step = step.value().name();
    m.w = w.value().name();
    m.b = b.value().name();
    EXPECT_TRUE(root.ToGraphDef(&m.graph).ok()) << root.status();
    return m;
  };
  const int task = server->task().task;
  Model model = build(2 * task, 2, &server->task());
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_ASSERT_OK(session->Create(model.graph));
  if (server->is_chief()) {
    TW_ASSERT_OK(session->Run({}, {}, {model.init}, nullptr));
  } else {
    TW_ASSERT_OK(train::WaitForVariables(session.get(), model.ready, absl::Minutes(5)));
  }
  std::unique_ptr<train::QueueRunner> runner;
  TW_ASSERT_OK(model.sync->StartReplica(session.get(), server->is_chief(), &runner));
  int steps = 0;
  for (double token = 0; token < kUpdates; ++steps) {
    std::vector<Tensor> out;
    TW_ASSERT_OK(session->Run({}, {model.token}, {model.train}, &out));
    token = Scalar(out[0]);
    EXPECT_EQ(token, steps + 1);
  }
  EXPECT_EQ(steps, kUpdates);
  if (server->is_chief()) {
    TW_ASSERT_OK_AND_ASSIGN(double step, Fetch(session.get(), model.step));
    EXPECT_EQ(step, kUpdates);
    TW_ASSERT_OK_AND_ASSIGN(double w, Fetch(session.get(), model.w));
    TW_ASSERT_OK_AND_ASSIGN(double b, Fetch(session.get(), model.b));
    const Model whole = build(0, 4, nullptr);
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> local, NewSession({}));
    TW_ASSERT_OK(local->Create(whole.graph));
    TW_ASSERT_OK(local->Run({}, {}, {whole.init}, nullptr));
    for (int i = 0; i < kUpdates; ++i) TW_ASSERT_OK(local->Run({}, {}, {whole.train}, nullptr));
    TW_ASSERT_OK_AND_ASSIGN(double local_w, Fetch(local.get(), whole.w));
    TW_ASSERT_OK_AND_ASSIGN(double local_b, Fetch(local.get(), whole.b));
    EXPECT_NEAR(w, local_w, 1e-12);
    EXPECT_NEAR(b, local_b, 1e-12);
    EXPECT_GT(std::abs(local_w), 0.5);  // it did move
    // Closing the session ends the chief's loop, which waits for the next
    // update's gradients.
    TW_ASSERT_OK(session->Close());
    TW_ASSERT_OK(runner->Join());
    EXPECT_EQ(runner->runs(), kUpdates);
  } else {
    EXPECT_EQ(runner, nullptr);
  }
}

// The chief saves a checkpoint (TF's Saver, through a ClientSession over the
// cluster session); the job ends; a restarted job (fresh servers: the ps
// holds nothing) has its chief restore it, and training goes on from the
// saved global step and values while the other worker waits for them.
TEST(PsTrainingTest, ARestartedJobResumesFromTheChiefsCheckpoint) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/ps_resume");
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
  double saved_w = 0;
  for (int run = 0; run < 2; ++run) {
    std::unique_ptr<Server> server = WorkerOrServe(ServerOptions{spec});
    if (server == nullptr) continue;
    Scope root = Scope::NewRootScope();
    ReplicaDeviceSetterOptions setter;
    setter.ps_tasks = 1;
    setter.worker_device = server->task().name();
    TW_ASSERT_OK_AND_ASSIGN(DeviceFunction fn, ReplicaDeviceSetter(setter));
    const Scope s = root.WithDeviceFunction(fn);
    Variable w = GetVariable(s, "w", TensorShape({}), DT_DOUBLE, initializers::Constant(0.0));
    Output loss = ops::Square(s, ops::Sub(s, w.value(), 3.0));
    Variable step = train::GetOrCreateGlobalStep(s);
    train::GradientDescentOptimizer optimizer(0.1);
    Operation train_op = optimizer.Minimize(s, loss, step);
    Operation init = GlobalVariablesInitializer(s);
    TW_ASSERT_OK_AND_ASSIGN(train::ReadyOp ready, train::ReportUninitializedVariables(s));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<train::Saver> saver, train::Saver::Create(root));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> cluster_session, server->NewSession({}));
    std::vector<Tensor> out;
    if (!server->is_chief()) {
      // The non-chief waits for the chief's initialization or restore.
      const std::string w_value = w.value(root).name();
      TW_ASSERT_OK_AND_ASSIGN(GraphDef graph, root.ToGraphDef());
      TW_ASSERT_OK(cluster_session->Create(graph));
      TW_ASSERT_OK(train::WaitForVariables(cluster_session.get(), ready, absl::Minutes(5)));
      TW_ASSERT_OK(cluster_session->Run({}, {w_value}, {}, &out));
      if (run == 1) {
        EXPECT_NE(out[0].data<double>()[0], 0.0);  // restored, not initialized
      }
      continue;
    }
    ClientSession session(root, std::move(cluster_session));
    if (run == 0) {
      TW_ASSERT_OK(session.Run({}, {}, {init}, &out));
      for (int i = 0; i < 5; ++i) TW_ASSERT_OK(session.Run({}, {}, {train_op}, &out));
      TW_ASSERT_OK(session.Run({w.value(root)}, &out));
      saved_w = out[0].data<double>()[0];
      TW_ASSERT_OK(saver->Save(session, dir, 5).status());
    } else {
      absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
      TW_ASSERT_OK(latest.status());
      TW_ASSERT_OK(saver->Restore(session, *latest));
      TW_ASSERT_OK(session.Run({w.value(root), step.value(root)}, &out));
      EXPECT_EQ(out[0].data<double>()[0], saved_w);
      EXPECT_EQ(out[1].data<int64_t>()[0], 5);
      TW_ASSERT_OK(session.Run({}, {}, {train_op}, &out));
      TW_ASSERT_OK(session.Run({step.value(root)}, &out));
      EXPECT_EQ(out[0].data<int64_t>()[0], 6);
    }
  }
}

// TowerOptimizer over SyncReplicasOptimizer with two towers per worker (the
// worker's two virtual CPUs), variables on the ps: each aggregated update
// averages the two workers' tower-averaged gradients, the global step
// advances once per update (not per tower or worker), and after 10 the
// variables equal one process on the whole batch.
TEST(PsTrainingTest, SyncReplicasUnderTowerOptimizerWithTwoTowersPerWorker) {
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
  ServerOptions options{spec};
  options.config.device_count["CPU"] = 2;
  std::unique_ptr<Server> server = WorkerOrServe(options);
  if (server == nullptr) return;
  constexpr int kUpdates = 10;
  const std::vector<double> x = {-1.5, -0.5, 0.5, 1.5}, y = {-2, 0, 2, 4};
  auto sync = std::make_shared<train::SyncReplicasOptimizer>(
      std::make_shared<train::GradientDescentOptimizer>(0.1), 2, 2);
  const ModelFn model = [sync](const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                               ModeKeys mode, const Params&) {
    Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
    Variable b = GetVariable(s, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.0));
    Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
    EstimatorSpec spec(mode);
    spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
    spec.train_op = TowerOptimizer(sync).Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    return spec;
  };
  ReplicateOptions replicate;
  replicate.devices = {"/cpu:0", "/cpu:1"};
  replicate.across_processes = false;  // the ps aggregates across the workers
  TW_ASSERT_OK_AND_ASSIGN(ModelFn replicated, ReplicateModelFn(model, replicate));
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = 1;
  setter.worker_device = server->task().name();
  TW_ASSERT_OK_AND_ASSIGN(DeviceFunction fn, ReplicaDeviceSetter(setter));
  const Scope s = root.WithDeviceFunction(fn);
  const int first = 2 * server->task().task;
  const auto rows = [&](const std::vector<double>& v) {
    return ops::Const(
        s, MakeTensorProto<double>(absl::MakeConstSpan(v.data() + first, 2), TensorShape({2, 1})));
  };
  const EstimatorSpec trained =
      replicated(s, {{"x", rows(x)}}, {{"y", rows(y)}}, ModeKeys::kTrain, {});
  TW_ASSERT_OK(sync->GetInitTokensOp(s, 0).status());
  const std::string init = GlobalVariablesInitializer(s).node()->name();
  TW_ASSERT_OK_AND_ASSIGN(train::ReadyOp ready, train::ReportUninitializedVariables(s));
  std::string w_value, step_value;
  for (const Variable& v : GetVariables(*root.graph())) {
    if (v.name() == "w") w_value = v.value(root.NewSubScope("check")).name();
    if (v.name() == "global_step") step_value = v.value(root.NewSubScope("check")).name();
  }
  TW_ASSERT_OK_AND_ASSIGN(GraphDef graph, root.ToGraphDef());
  EXPECT_EQ(DeviceOf(graph, "w"), "/job:ps/task:0/device:CPU:0");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_ASSERT_OK(session->Create(graph));
  if (server->is_chief()) {
    TW_ASSERT_OK(session->Run({}, {}, {init}, nullptr));
  } else {
    TW_ASSERT_OK(train::WaitForVariables(session.get(), ready, absl::Minutes(5)));
  }
  std::unique_ptr<train::QueueRunner> runner;
  TW_ASSERT_OK(sync->StartReplica(session.get(), server->is_chief(), &runner));
  for (int i = 0; i < kUpdates; ++i) {
    std::vector<Tensor> out;
    TW_ASSERT_OK(
        session->Run({}, {"sync_token_q_Dequeue:0"}, {trained.train_op.node()->name()}, &out));
    EXPECT_EQ(Scalar(out[0]), i + 1);
  }
  if (!server->is_chief()) return;
  TW_ASSERT_OK_AND_ASSIGN(double step, Fetch(session.get(), step_value));
  EXPECT_EQ(step, kUpdates);
  TW_ASSERT_OK_AND_ASSIGN(double w, Fetch(session.get(), w_value));
  // One process, the whole batch: w after 10 steps of the mean loss's
  // gradient descent.
  const Regression whole = BuildRegression({"worker", 0}, 0, 0.1);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> local, NewSession({}));
  TW_ASSERT_OK(local->Create(whole.graph));
  TW_ASSERT_OK(local->Run({}, {}, {whole.init}, nullptr));
  for (int i = 0; i < kUpdates; ++i) TW_ASSERT_OK(local->Run({}, {}, {whole.train}, nullptr));
  TW_ASSERT_OK_AND_ASSIGN(double local_w, Fetch(local.get(), whole.w));
  EXPECT_NEAR(w, local_w, 1e-12);
  TW_ASSERT_OK(session->Close());
  TW_ASSERT_OK(runner->Join());
  EXPECT_EQ(runner->runs(), kUpdates);
}

// Tasks from TF's flags (ServerOptions::job_name, task_index) instead of the
// rank order: here rank 2 is the ps; a session of either worker reaches it.
// Two processes claiming one task are an error on every process, not a hang.
TEST(PsTrainingTest, TasksFromFlagsInAnyRankOrder) {
  TW_ASSERT_OK_AND_ASSIGN(Cluster * cluster, Cluster::Get());
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
  ServerOptions clash{spec};
  clash.job_name = "worker";
  clash.task_index = cluster->rank() == 0 ? 1 : 0;  // ranks 1 and 2 both claim worker 0
  const absl::Status duplicate = Server::Create(clash).status();
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kInvalidArgument) << duplicate;
  EXPECT_THAT(duplicate.message(), HasSubstr("are both task /job:worker/replica:0/task:0"));

  ServerOptions options{spec};
  options.job_name = cluster->rank() == 2 ? "ps" : "worker";
  options.task_index = cluster->rank() == 2 ? 0 : 1 - cluster->rank();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Server> server, Server::Create(options));
  EXPECT_EQ(server->task().job, options.job_name);
  EXPECT_EQ(server->task().task, options.task_index);
  if (server->task().job == "ps") {
    TW_ASSERT_OK(server->Join());
    return;
  }
  EXPECT_EQ(server->is_chief(), cluster->rank() == 1);
  Scope root = Scope::NewRootScope();
  Output on_ps =
      ops::Identity(root.WithDevice("/job:ps/task:0").WithOpName("on_ps"), ops::Const(root, 41.0));
  ops::AddV2(root.WithOpName("here"), on_ps, 1.0);
  TW_ASSERT_OK_AND_ASSIGN(GraphDef graph, root.ToGraphDef());
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {"here"}, {}, &out));
  EXPECT_EQ(Scalar(out[0]), 42.0);
  std::vector<std::string> ps_devices;
  for (const DeviceAttributes& d : session->ListDevices()) {
    if (absl::StrContains(d.name, "/job:ps")) ps_devices.push_back(d.name);
  }
  EXPECT_THAT(ps_devices, ::testing::ElementsAre("/job:ps/replica:0/task:0/device:CPU:0"));
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
