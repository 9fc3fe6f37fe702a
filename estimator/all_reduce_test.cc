// ReplicateModelFn with aggregation = kAllReduce: the mirrors, their
// placement and collections, training that matches the parameter-server
// aggregation (GradientDescent, Momentum and Adam; even and uneven
// batches), and checkpoints that move between the two and across restarts.
// Runs on two virtual CPU devices; with "/gpu:i" towers the collectives run
// on NCCL where two GPUs are present and softly on the CPU elsewhere.
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "framework/device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

// y = x w + b, mean squared error; params: "optimizer" 0 GradientDescent,
// 1 Momentum, 2 Adam.
EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params& params) {
  const Scope dense = s.WithVariableScope("dense");
  Variable w = GetVariable(dense, "w", TensorShape({2, 1}), DT_DOUBLE, initializers::Constant(0.5));
  Variable b = GetVariable(dense, "b", TensorShape({1}), DT_DOUBLE, initializers::Constant(0.1));
  Output prediction = ops::Add(s, ops::MatMul(s, features.at("x"), w.value()), b.value());
  EstimatorSpec spec(mode);
  spec.predictions["y"] = prediction;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  spec.eval_metric_ops["mean_prediction"] = train::Mean(s, prediction);
  if (mode != ModeKeys::kTrain) return spec;
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

const std::vector<double> kX = {1, 2, 3, -1, 0.5, 1, -2, 1};
const std::vector<double> kY = {1, 0, 2, -1};

ReplicateOptions Options(GradientAggregation aggregation, std::vector<std::string> devices,
                         bool uneven = false) {
  ReplicateOptions options;
  options.devices = std::move(devices);
  options.loss_reduction = LossReduction::kMean;
  options.aggregation = aggregation;
  options.uneven_batches = uneven;
  return options;
}

SessionOptions TwoCpus() {
  SessionOptions options;
  options.device_count["CPU"] = 2;
  options.allow_soft_placement = true;
  return options;
}

struct Built {
  Scope root = Scope::NewRootScope();
  EstimatorSpec spec;
};

// The replicated Regression over the first `rows` examples.
std::unique_ptr<Built> Build(const ReplicateOptions& options, int rows, int optimizer,
                             ModeKeys mode = ModeKeys::kTrain) {
  auto b = std::make_unique<Built>();
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(Regression, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return b;
  const Scope& r = b->root;
  FeatureMap x = {
      {"x", ops::Const(r, MakeTensorProto<double>(absl::MakeConstSpan(kX.data(), 2 * rows),
                                                  TensorShape({rows, 2})))}};
  FeatureMap y = {{"y", ops::Const(r, MakeTensorProto<double>(absl::MakeConstSpan(kY.data(), rows),
                                                              TensorShape({rows, 1})))}};
  Params params;
  params.values["optimizer"] = optimizer;
  b->spec = (*fn)(b->root, x, y, mode, params);
  return b;
}

// The value of variable `name` (global or local).
Tensor Value(ClientSession& session, const Scope& root, const std::string& name) {
  for (const char* key : {GraphKeys::kGlobalVariables, GraphKeys::kLocalVariables}) {
    for (const Variable& v : GetVariables(*root.graph(), key)) {
      if (v.name() != name) continue;
      std::vector<Tensor> out;
      absl::Status st = session.Run({v.value(root.NewSubScope("read"))}, &out);
      EXPECT_TRUE(st.ok()) << st;
      return st.ok() ? out[0] : Tensor();
    }
  }
  ADD_FAILURE() << "no variable " << name;
  return Tensor();
}

std::vector<double> Doubles(const Tensor& t) {
  return std::vector<double>(t.data<double>(), t.data<double>() + t.NumElements());
}

// Initialises (global, then local, as the Estimator does) and trains
// `steps` steps; returns the losses.
std::vector<double> Train(ClientSession& session, const Built& b, int steps) {
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(b.root)}, &out).ok());
  EXPECT_TRUE(session.Run({}, {}, {LocalVariablesInitializer(b.root)}, &out).ok());
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    absl::Status st = session.Run({}, {b.spec.loss}, {b.spec.train_op}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (st.ok()) losses.push_back(out[0].data<double>()[0]);
  }
  return losses;
}

class AllReduceTrainTest : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(AllReduceTrainTest, MatchesTheParameterServerAndKeepsMirrorsEqual) {
  const int gpus = NumLocalDevices(kDeviceGpu);
  if (absl::StrContains(GetParam()[0], "gpu") && gpus == 1) {
    // Soft placement would put both towers on the one GPU, where NCCL
    // cannot reduce between them.
    GTEST_SKIP() << "two GPU towers need no GPU (soft placement to the CPU) or two GPUs";
  }
  for (int optimizer : {0, 1, 2}) {
    for (bool uneven : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "optimizer " << optimizer << " uneven " << uneven);
      const int rows = uneven ? 3 : 4;
      auto ps = Build(Options(GradientAggregation::kParameterServer, GetParam(), uneven), rows,
                      optimizer);
      auto ar =
          Build(Options(GradientAggregation::kAllReduce, GetParam(), uneven), rows, optimizer);
      TW_ASSERT_OK(ps->root.status());
      TW_ASSERT_OK(ar->root.status());
      ClientSession ps_session(ps->root, TwoCpus());
      ClientSession ar_session(ar->root, TwoCpus());
      const std::vector<double> ps_losses = Train(ps_session, *ps, 3);
      const std::vector<double> ar_losses = Train(ar_session, *ar, 3);
      ASSERT_EQ(ar_losses.size(), 3u);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(ar_losses[i], ps_losses[i], 1e-12) << i;
      EXPECT_LT(ar_losses[2], ar_losses[0]);
      for (const std::string name : {"dense/w", "dense/b"}) {
        const std::vector<double> want = Doubles(Value(ps_session, ps->root, name));
        const std::vector<double> got = Doubles(Value(ar_session, ar->root, name));
        ASSERT_EQ(got.size(), want.size());
        for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-12) << name;
        // The mirror holds the same bits: both applied the same sums.
        EXPECT_EQ(Doubles(Value(ar_session, ar->root, name + "/replica_1")), got) << name;
      }
      EXPECT_EQ(Value(ar_session, ar->root, "global_step").data<int64_t>()[0], 3);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AllReduceTrainTest,
                         ::testing::Values(std::vector<std::string>{"/cpu:0", "/cpu:1"},
                                           std::vector<std::string>{"/gpu:0", "/gpu:1"}));

std::vector<std::string> Names(const Graph& graph, const char* key) {
  std::vector<std::string> out;
  for (const Variable& v : GetVariables(graph, key)) out.push_back(v.name());
  return out;
}

TEST(AllReduceTest, MirrorsTheirPlacesCollectionsAndCollectives) {
  auto b = Build(Options(GradientAggregation::kAllReduce, {"/cpu:0", "/cpu:1"}), 4, 2);
  TW_ASSERT_OK(b->root.status());
  const Graph& graph = *b->root.graph();
  // Checkpoints see tower 0's variables and the optimizer's, once.
  EXPECT_EQ(Names(graph, GraphKeys::kGlobalVariables),
            (std::vector<std::string>{"dense/w", "dense/b", "global_step", "beta1_power",
                                      "beta2_power", "dense/w/Adam", "dense/w/Adam_1",
                                      "dense/b/Adam", "dense/b/Adam_1"}));
  EXPECT_EQ(Names(graph, GraphKeys::kTrainableVariables),
            (std::vector<std::string>{"dense/w", "dense/b"}));
  EXPECT_EQ(Names(graph, GraphKeys::kLocalVariables),
            (std::vector<std::string>{
                "mean/total", "mean/count", "dense/w/replica_1", "dense/b/replica_1",
                "tower_1/mean/total", "tower_1/mean/count", "dense/w/replica_1/Adam",
                "dense/w/replica_1/Adam_1", "dense/b/replica_1/Adam", "dense/b/replica_1/Adam_1"}));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, b->root.ToGraphDef());
  std::map<std::string, const NodeDef*> nodes;
  for (const NodeDef& n : def.node()) nodes[n.name()] = &n;
  EXPECT_EQ(nodes.at("dense/w")->device(), "/device:CPU:0");
  EXPECT_EQ(nodes.at("dense/w/replica_1")->device(), "/device:CPU:1");
  EXPECT_EQ(nodes.at("global_step")->device(), "/device:CPU:0");
  EXPECT_EQ(nodes.count("global_step/replica_1"), 0u);
  // The mirror starts as a copy of the variable.
  EXPECT_EQ(nodes.at("dense/w/replica_1/Initializer/ReadVariableOp")->input(0), "dense/w");
  std::map<std::string, int> members;  // shared_name -> ops
  std::set<std::string> devices;
  for (const NodeDef& n : def.node()) {
    EXPECT_FALSE(absl::StartsWith(n.name(), "gradient_aggregating/AddN")) << n.name();
    if (n.op() != "NcclAllReduce") continue;
    ++members[n.attr().at("shared_name").s()];
    EXPECT_EQ(n.attr().at("num_devices").i(), 2);
    EXPECT_EQ(n.attr().at("reduction").s(), "sum");
    devices.insert(n.device());
  }
  EXPECT_EQ(members, (std::map<std::string, int>{{"gradient_aggregating/all_reduce", 2},
                                                 {"gradient_aggregating/all_reduce_1", 2}}));
  EXPECT_EQ(devices, (std::set<std::string>{"/device:CPU:0", "/device:CPU:1"}));
  // Each tower updates its own mirror, on its device.
  EXPECT_EQ(nodes.at("Adam/update_dense/w/ResourceApplyAdam")->device(), "/device:CPU:0");
  EXPECT_EQ(nodes.at("Adam/update_dense/w/replica_1/ResourceApplyAdam")->device(), "/device:CPU:1");
}

// The four examples, batched whole, repeated.
InputFn RegressionInput() {
  return []() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices(
                            {Literal<double>({4, 2}, kX), Literal<double>({4, 1}, kY)}));
    return InputSpec{d.Batch(4).Repeat(), {"x"}, {"y"}};
  };
}

// An Estimator over the replicated Regression (Momentum) in `dir`.
std::unique_ptr<Estimator> MakeEstimator(const std::string& dir, const ReplicateOptions& options,
                                         std::ostringstream* log) {
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(Regression, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  RunConfig config = RunConfig().set_model_dir(dir).set_session_options(TwoCpus());
  config.log = log;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  Params params;
  params.values["optimizer"] = 1;
  return std::make_unique<Estimator>(*fn, config, params);
}

std::map<std::string, std::vector<double>> Checkpoint(const std::string& dir) {
  std::map<std::string, std::vector<double>> out;
  absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
  EXPECT_TRUE(latest.ok()) << latest.status();
  if (!latest.ok()) return out;
  absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(*latest);
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  if (!tensors.ok()) return out;
  for (const NamedTensor& t : *tensors) {
    out[t.name] = t.tensor.dtype() == DT_DOUBLE
                      ? Doubles(t.tensor)
                      : std::vector<double>{static_cast<double>(t.tensor.data<int64_t>()[0])};
  }
  return out;
}

void ExpectNear(const std::map<std::string, std::vector<double>>& got,
                const std::map<std::string, std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, values] : want) {
    ASSERT_EQ(got.count(name), 1u) << name;
    ASSERT_EQ(got.at(name).size(), values.size()) << name;
    for (size_t k = 0; k < values.size(); ++k) EXPECT_NEAR(got.at(name)[k], values[k], 1e-12);
  }
}

TEST(AllReduceTest, CheckpointsMoveBetweenAggregationsAndRestarts) {
  const std::string ar_dir = testing::MakeTempDir("all_reduce");
  const std::string ps_dir = testing::MakeTempDir("parameter_server");
  const std::vector<std::string> towers = {"/cpu:0", "/cpu:1"};
  std::ostringstream log;
  // Three steps, then two more after a restart: the restart restores tower
  // 0's variables and Momentum slots, and the mirrors must follow them.
  for (int64_t steps : {3, 2}) {
    auto ar = MakeEstimator(ar_dir, Options(GradientAggregation::kAllReduce, towers), &log);
    auto ps = MakeEstimator(ps_dir, Options(GradientAggregation::kParameterServer, towers), &log);
    TW_ASSERT_OK(ar->Train(RegressionInput(), {.steps = steps}).status());
    TW_ASSERT_OK(ps->Train(RegressionInput(), {.steps = steps}).status());
    const std::map<std::string, std::vector<double>> saved = Checkpoint(ar_dir);
    ExpectNear(saved, Checkpoint(ps_dir));
    EXPECT_EQ(saved.count("dense/w/Momentum"), 1u);
    for (const auto& [name, values] : saved) EXPECT_FALSE(absl::StrContains(name, "replica"));
  }
  // A model trained by all-reduce evaluates on one device, as one trained
  // on a parameter server does.
  auto one =
      MakeEstimator(ar_dir, Options(GradientAggregation::kParameterServer, {"/cpu:0"}), &log);
  auto reference =
      MakeEstimator(ps_dir, Options(GradientAggregation::kParameterServer, {"/cpu:0"}), &log);
  TW_ASSERT_OK_AND_ASSIGN(MetricMap got, one->Evaluate(RegressionInput(), 1));
  TW_ASSERT_OK_AND_ASSIGN(MetricMap want, reference->Evaluate(RegressionInput(), 1));
  EXPECT_NEAR(got.at("loss"), want.at("loss"), 1e-9);
  EXPECT_EQ(got.at("global_step"), 5);
  // The serving export of the two-tower all-reduce model freezes tower 1's
  // mirrors with the trained variables: it predicts as the other model.
  std::vector<Tensor> predictions;
  for (const std::string& dir : {ar_dir, ps_dir}) {
    auto two = MakeEstimator(dir, Options(GradientAggregation::kAllReduce, towers), &log);
    TW_ASSERT_OK(
        two->Export(dir + "/export", {{"x", {DT_DOUBLE, PartialTensorShape({-1, 2})}}}).status());
    TW_ASSERT_OK_AND_ASSIGN(ExportedModel served, ExportedModel::Load(dir + "/export"));
    TW_ASSERT_OK_AND_ASSIGN(auto out, served.Run({{"x", Literal<double>({4, 2}, kX)}}));
    predictions.push_back(out.at("y"));
  }
  const std::vector<double> ar_y = Doubles(predictions[0]), ps_y = Doubles(predictions[1]);
  ASSERT_EQ(ar_y.size(), 4u);
  for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(ar_y[k], ps_y[k], 1e-12) << k;
}

TEST(AllReduceTowerGradientsTest, SparseNoneAndMirrorNames) {
  // Tower 0's variables on CPU:0, tower 1's mirrors on CPU:1.
  Scope root = Scope::NewRootScope();
  const Scope cpu1 = root.WithDevice("/cpu:1");
  Variable w = GetVariable(root.WithDevice("/cpu:0"), "w", TensorShape({3, 2}), DT_FLOAT,
                           initializers::Zeros());
  Variable w1 =
      GetVariable(cpu1, "w/replica_1", TensorShape({3, 2}), DT_FLOAT, initializers::Zeros());
  Variable b = GetVariable(root, "b", TensorShape({2}), DT_FLOAT, initializers::Zeros());
  Variable b1 = GetVariable(cpu1, "b/replica_1", TensorShape({2}), DT_FLOAT, initializers::Zeros());
  Variable u = GetVariable(root, "u", TensorShape({}), DT_FLOAT, initializers::Zeros());
  Variable u1 = GetVariable(cpu1, "u/replica_1", TensorShape({}), DT_FLOAT, initializers::Zeros());
  const std::map<std::string, std::string> variable_of = {
      {"w/replica_1", "w"}, {"b/replica_1", "b"}, {"u/replica_1", "u"}};
  // w: sparse rows 2 and 0 in tower 0, dense in tower 1; b: tower 0 only;
  // u: no gradient at all.
  const IndexedSlices rows{ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}}), ops::Const(root, {2, 0}),
                           ops::Const(root, {3, 2})};
  const std::vector<std::vector<train::GradAndVar>> grads = {
      {{rows, w}, {ops::Const(root, {5.f, 6.f}), b}, {Gradient(), u}},
      {{ops::Const(root, {{1.f, 1.f}, {1.f, 1.f}, {1.f, 1.f}}), w1},
       {Gradient(), b1},
       {Gradient(), u1}}};
  TW_ASSERT_OK_AND_ASSIGN(std::vector<train::GradAndVar> reduced,
                          AllReduceTowerGradients(root.NewSubScope("agg"), grads, variable_of));
  ASSERT_EQ(reduced.size(), 6u);
  std::vector<std::string> vars;
  for (const train::GradAndVar& gv : reduced) vars.push_back(gv.var.name());
  EXPECT_EQ(vars,
            (std::vector<std::string>{"w", "w/replica_1", "b", "b/replica_1", "u", "u/replica_1"}));
  EXPECT_TRUE(reduced[4].grad.is_none());
  EXPECT_TRUE(reduced[5].grad.is_none());
  EXPECT_EQ(reduced[1].grad.dense().node()->requested_device(), "/device:CPU:1");
  // No GPU: the variables without a device (b, u) stay on CPU:0, one device
  // type with their mirrors on CPU:1 (on a GPU they would meet a CPU mirror
  // in one NCCL all-reduce, which is refused).
  SessionOptions options = TwoCpus();
  options.device_count["GPU"] = 0;
  ClientSession session(root, options);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({reduced[0].grad.dense(), reduced[1].grad.dense(),
                            reduced[2].grad.dense(), reduced[3].grad.dense()},
                           &out));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {4, 5, 1, 1, 2, 3}));
  EXPECT_THAT(out[1], TensorIs<float>({3, 2}, {4, 5, 1, 1, 2, 3}));
  EXPECT_THAT(out[2], TensorIs<float>({2}, {5, 6}));
  EXPECT_THAT(out[3], TensorIs<float>({2}, {5, 6}));
  // A tower listing another variable is the "same optimizer calls" error.
  const std::vector<std::vector<train::GradAndVar>> different = {{{Gradient(), w}},
                                                                 {{Gradient(), b1}}};
  EXPECT_EQ(AllReduceTowerGradients(root, different, variable_of).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AllReduceTest, RoundRobinPlacementAndSharedDevicesAreRefused) {
  ReplicateOptions options = Options(GradientAggregation::kAllReduce, {"/cpu:0", "/cpu:1"});
  options.variable_placement = VariablePlacement::kRoundRobin;
  EXPECT_THAT(ReplicateModelFn(Regression, options).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "takes no variable_placement"));
  EXPECT_THAT(
      ReplicateModelFn(Regression, Options(GradientAggregation::kAllReduce, {"/gpu:1", "/gpu:1"}))
          .status(),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "towers 0 and 1 are both on /device:GPU:1"));
}

}  // namespace
}  // namespace towerflow
