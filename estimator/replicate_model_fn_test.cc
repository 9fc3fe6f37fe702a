// ReplicateModelFn and TowerOptimizer with TF's replicate_model_fn_test
// numbers: c = 10, features [[1], [2]], labels [[1], [2]],
// loss = sum |features c - labels|, GradientDescent(1.0), two towers.
#include "estimator/replicate_model_fn.h"

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "estimator/tower_optimizer.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/loss_scale_optimizer.h"
#include "train/metrics.h"
#include "train/optimizers.h"
#include "train/sync_replicas_optimizer.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

// Options of the test model, read from Params.
struct ModelKnobs {
  bool plain_optimizer = false;  // a GradientDescentOptimizer not wrapped
  bool mean_loss = false;        // mean instead of sum over the tower's rows
  int optimizer_calls = 1;       // Minimize calls per tower (tower 1: "tower1_calls")
};

EstimatorSpec LinearModel(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                          ModeKeys mode, const Params& params) {
  Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(10.0));
  Output predictions = ops::Mul(s, features.at("x"), c.value());
  EstimatorSpec spec(mode);
  spec.predictions["probabilities"] = predictions;
  // Knobs that make tower 1 differ from tower 0.
  auto tower1 = [&params](const char* knob) {
    return params.tower_index == 1 && params.Get(knob) != 0;
  };
  if (tower1("tower1_doubles")) spec.predictions["doubled"] = ops::Mul(s, predictions, 2.0);
  if (mode == ModeKeys::kPredict) return spec;
  Output error = ops::Abs(s, ops::Sub(s, predictions, labels.at("y")));
  spec.loss = params.Get("mean_loss") != 0 ? Output(ops::Mean(s, error, {0, 1}))
                                           : Output(ops::Sum(s, error, {0, 1}));
  spec.eval_metric_ops[tower1("tower1_renames") ? "renamed" : "accuracy"] =
      train::Accuracy(s, labels.at("y"), predictions);
  spec.eval_metric_ops["mean_prediction"] = train::Mean(s, predictions);
  if (tower1("tower1_extra_metric")) spec.eval_metric_ops["extra"] = train::Mean(s, predictions);
  if (mode != ModeKeys::kTrain) return spec;
  const double lr = params.Get("learning_rate", 1.0);
  if (params.Get("plain_optimizer") != 0) {
    train::GradientDescentOptimizer plain(lr);
    spec.train_op = plain.Minimize(s, spec.loss);
    return spec;
  }
  int calls = static_cast<int>(params.Get("optimizer_calls", 1));
  if (params.tower_index == 1) calls = static_cast<int>(params.Get("tower1_calls", calls));
  std::vector<Operation> ops;
  for (int k = 0; k < calls; ++k) {
    TowerOptimizer opt(std::make_shared<train::GradientDescentOptimizer>(lr));
    Operation op = opt.Minimize(s, spec.loss);
    if (!s.ok()) return spec;
    ops.push_back(op);
  }
  spec.train_op = ops::NoOp(s.WithControlDependencies(ops));
  return spec;
}

SessionOptions TwoCpus() {
  SessionOptions options;
  options.device_count["CPU"] = 2;
  options.allow_soft_placement = true;
  return options;
}

ReplicateOptions Devices(std::vector<std::string> devices,
                         LossReduction reduction = LossReduction::kSum) {
  ReplicateOptions options;
  options.devices = std::move(devices);
  options.loss_reduction = reduction;
  return options;
}

struct Built {
  Scope root = Scope::NewRootScope();
  EstimatorSpec spec;
};

// Builds the replicated LinearModel over `x` and `y` (rows of one column).
std::unique_ptr<Built> Build(const ReplicateOptions& options, ModeKeys mode,
                             const std::vector<double>& x, const std::vector<double>& y,
                             Params params = {}) {
  auto b = std::make_unique<Built>();
  absl::StatusOr<ModelFn> fn = ReplicateModelFn(LinearModel, options);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return b;
  const TensorShape shape({static_cast<int64_t>(x.size()), 1});
  FeatureMap features = {
      {"x", ops::Const(b->root, MakeTensorProto<double>(absl::MakeConstSpan(x), shape))}};
  FeatureMap labels;
  if (!y.empty()) {
    labels["y"] = ops::Const(b->root, MakeTensorProto<double>(absl::MakeConstSpan(y), shape));
  }
  b->spec = (*fn)(b->root, features, labels, mode, params);
  return b;
}

double RunScalar(ClientSession& session, const Output& out) {
  std::vector<Tensor> got;
  absl::Status st = session.Run({out}, &got);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? got[0].data<double>()[0] : -1;
}

Output VariableC(const Scope& root) {
  for (const Variable& v : GetVariables(*root.graph())) {
    if (v.name() == "c") return v.value(root.NewSubScope("check"));
  }
  ADD_FAILURE() << "no variable c";
  return Output();
}

// Trains one step; returns (loss before, c after).
std::pair<double, double> TrainOneStep(const Built& b) {
  ClientSession session(b.root, TwoCpus());
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(b.root)}, &out).ok());
  const double loss = RunScalar(session, b.spec.loss);
  absl::Status st = session.Run({}, {}, {b.spec.train_op}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return {loss, RunScalar(session, VariableC(b.root))};
}

class ReplicateTrainTest : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(ReplicateTrainTest, SumReduction) {
  // loss = (1 * 10 - 1) + (2 * 10 - 2) = 27; d loss / dc = 1 + 2 = 3, c = 10 - 3.
  auto b = Build(Devices(GetParam()), ModeKeys::kTrain, {1, 2}, {1, 2});
  TW_ASSERT_OK(b->root.status());
  auto [loss, c] = TrainOneStep(*b);
  EXPECT_EQ(loss, 27.0);
  EXPECT_EQ(c, 7.0);
}

TEST_P(ReplicateTrainTest, MeanReduction) {
  auto b = Build(Devices(GetParam(), LossReduction::kMean), ModeKeys::kTrain, {1, 2}, {1, 2});
  TW_ASSERT_OK(b->root.status());
  auto [loss, c] = TrainOneStep(*b);
  EXPECT_EQ(loss, 13.5);
  EXPECT_EQ(c, 8.5);
}

// TF's default reduction, SUM_BY_NONZERO_WEIGHTS, averages the towers as
// MEAN does: replicate_model_fn divides by the number of towers for every
// reduction but SUM.
TEST_P(ReplicateTrainTest, DefaultReductionAveragesAsTFs) {
  ReplicateOptions options;
  options.devices = GetParam();
  EXPECT_EQ(options.loss_reduction, LossReduction::kSumByNonzeroWeights);
  auto b = Build(options, ModeKeys::kTrain, {1, 2}, {1, 2});
  TW_ASSERT_OK(b->root.status());
  auto [loss, c] = TrainOneStep(*b);
  EXPECT_EQ(loss, 13.5);
  EXPECT_EQ(c, 8.5);
}

// Two virtual CPU devices; two GPUs (placed softly on the CPU when the
// machine has none, and both on a machine's one GPU); and the multi-GPU
// tutorial's towers on a GPU and the CPU, the variables on the CPU.
INSTANTIATE_TEST_SUITE_P(Devices, ReplicateTrainTest,
                         ::testing::Values(std::vector<std::string>{"/cpu:0", "/cpu:1"},
                                           std::vector<std::string>{"/gpu:0", "/gpu:1"},
                                           std::vector<std::string>{"/gpu:0", "/cpu:0"}));

TEST(ReplicateModelFnTest, AllReduceTakesTheSameStepWithTFsNumbers) {
  // As SumReduction and MeanReduction, with c mirrored on CPU:1.
  for (const auto& [reduction, loss_before, c_after] :
       {std::tuple{LossReduction::kSum, 27.0, 7.0}, std::tuple{LossReduction::kMean, 13.5, 8.5}}) {
    ReplicateOptions options = Devices({"/cpu:0", "/cpu:1"}, reduction);
    options.aggregation = GradientAggregation::kAllReduce;
    auto b = Build(options, ModeKeys::kTrain, {1, 2}, {1, 2});
    TW_ASSERT_OK(b->root.status());
    ClientSession session(b->root, TwoCpus());
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(b->root)}, &out));
    TW_ASSERT_OK(session.Run({}, {}, {LocalVariablesInitializer(b->root)}, &out));
    EXPECT_EQ(RunScalar(session, b->spec.loss), loss_before);
    TW_ASSERT_OK(session.Run({}, {}, {b->spec.train_op}, &out));
    EXPECT_EQ(RunScalar(session, VariableC(b->root)), c_after);
    Output mirror;
    for (const Variable& v : GetVariables(*b->root.graph(), GraphKeys::kLocalVariables)) {
      if (v.name() == "c/replica_1") mirror = v.value(b->root.NewSubScope("check"));
    }
    ASSERT_TRUE(mirror.valid());
    EXPECT_EQ(RunScalar(session, mirror), c_after);
  }
}

// TowerOptimizer over SyncReplicasOptimizer, as in TF: the towers' summed
// gradient goes to the accumulator once, and with replicas_to_aggregate = 1
// the chief's loop applies it as one update: c = 10 - (1 + 2) = 7, global
// step 1.
TEST(ReplicateModelFnTest, SyncReplicasUnderTowerOptimizerTakesOneUpdatePerStep) {
  auto sync = std::make_shared<train::SyncReplicasOptimizer>(
      std::make_shared<train::GradientDescentOptimizer>(1.0), /*replicas_to_aggregate=*/1);
  const ModelFn model = [sync](const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                               ModeKeys mode, const Params&) {
    Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(10.0));
    EstimatorSpec spec(mode);
    spec.loss = ops::Sum(
        s, ops::Abs(s, ops::Sub(s, ops::Mul(s, features.at("x"), c.value()), labels.at("y"))),
        {0, 1});
    spec.train_op = TowerOptimizer(sync).Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    return spec;
  };
  TW_ASSERT_OK_AND_ASSIGN(ModelFn replicated,
                          ReplicateModelFn(model, Devices({"/cpu:0", "/cpu:1"})));
  Scope root = Scope::NewRootScope();
  const TensorShape shape({2, 1});
  const EstimatorSpec spec = replicated(
      root, {{"x", ops::Const(root, MakeTensorProto<double>({1, 2}, shape))}},
      {{"y", ops::Const(root, MakeTensorProto<double>({1, 2}, shape))}}, ModeKeys::kTrain, {});
  // Lock-step: no tokens at the start, so the step returns after its update.
  TW_ASSERT_OK(sync->GetInitTokensOp(root, 0).status());
  TW_ASSERT_OK(root.status());
  ClientSession session(root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  std::unique_ptr<train::QueueRunner> runner;
  TW_ASSERT_OK(sync->StartReplica(session.session(), /*is_chief=*/true, &runner));
  TW_ASSERT_OK(session.Run({}, {}, {spec.train_op}, &out));
  EXPECT_EQ(RunScalar(session, VariableC(root)), 7.0);
  TW_ASSERT_OK(
      session.Run({train::GetGlobalStep(*root.graph())->value(root.NewSubScope("check"))}, &out));
  EXPECT_EQ(out[0].flat<int64_t>()(0), 1);
  TW_ASSERT_OK(session.session()->Close());
  TW_ASSERT_OK(runner->Join());
  EXPECT_EQ(runner->runs(), 1);
}

// TowerOptimizer over a LossScaleOptimizer: the towers' gradients are
// summed before the finiteness check, so a non-finite gradient in one tower
// skips the step for all (c and the global step stay), and a finite step
// applies the unscaled sum: c = 10 - (1 + 2) = 7.
TEST(ReplicateModelFnTest, LossScaleUnderTowerOptimizerSkipsForEveryTower) {
  auto scaled = std::make_shared<train::LossScaleOptimizer>(
      std::make_shared<train::GradientDescentOptimizer>(1.0), train::LossScale::Dynamic(4, 2, 2));
  const ModelFn model = [scaled](const Scope& s, const FeatureMap& features,
                                 const FeatureMap& labels, ModeKeys mode, const Params&) {
    Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(10.0));
    EstimatorSpec spec(mode);
    spec.loss = ops::Sum(
        s, ops::Abs(s, ops::Sub(s, ops::Mul(s, features.at("x"), c.value()), labels.at("y"))),
        {0, 1});
    spec.train_op = TowerOptimizer(scaled).Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    return spec;
  };
  TW_ASSERT_OK_AND_ASSIGN(ModelFn replicated,
                          ReplicateModelFn(model, Devices({"/cpu:0", "/cpu:1"})));
  Scope root = Scope::NewRootScope();
  const TensorShape shape({2, 1});
  const Output x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE,
                                    ops::Placeholder::Shape(PartialTensorShape({2, 1})));
  const EstimatorSpec spec = replicated(
      root, {{"x", x}}, {{"y", ops::Const(root, MakeTensorProto<double>({1, 2}, shape))}},
      ModeKeys::kTrain, {});
  TW_ASSERT_OK(root.status());
  ClientSession session(root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  const Output step = train::GetGlobalStep(*root.graph())->value(root.NewSubScope("check"));
  const Output scale = scaled->current_loss_scale().value(root.NewSubScope("check"));
  TW_ASSERT_OK(
      session.Run({{x, Literal<double>({2, 1}, {1, INFINITY})}}, {}, {spec.train_op}, &out));
  EXPECT_EQ(RunScalar(session, VariableC(root)), 10.0);
  TW_ASSERT_OK(session.Run({step, scale}, &out));
  EXPECT_THAT(out[0], TensorIs<int64_t>({}, {0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {2}));
  TW_ASSERT_OK(session.Run({{x, Literal<double>({2, 1}, {1, 2})}}, {}, {spec.train_op}, &out));
  EXPECT_EQ(RunScalar(session, VariableC(root)), 7.0);
  TW_ASSERT_OK(session.Run({step}, &out));
  EXPECT_THAT(out[0], TensorIs<int64_t>({}, {1}));
}

TEST(ReplicateModelFnTest, OneTowerNeedsNoTowerOptimizer) {
  Params params;
  params.values["plain_optimizer"] = 1;
  auto b = Build(Devices({"/cpu:0"}), ModeKeys::kTrain, {1, 2}, {1, 2}, params);
  TW_ASSERT_OK(b->root.status());
  auto [loss, c] = TrainOneStep(*b);
  EXPECT_EQ(loss, 27.0);
  EXPECT_EQ(c, 7.0);
}

TEST(ReplicateModelFnTest, PlainOptimizerWithSeveralDevicesIsAnError) {
  Params params;
  params.values["plain_optimizer"] = 1;
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kTrain, {1, 2}, {1, 2}, params);
  EXPECT_THAT(b->root.status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Please wrap optimizers with TowerOptimizer in order to use "
                                "replicate_model_fn with multiple `devices`."));
}

TEST(ReplicateModelFnTest, SeveralOptimizerCallsPerTower) {
  // Two applies of the same gradient (3): c = 10 - 3 - 3.
  Params params;
  params.values["optimizer_calls"] = 2;
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kTrain, {1, 2}, {1, 2}, params);
  TW_ASSERT_OK(b->root.status());
  EXPECT_EQ(TrainOneStep(*b).second, 4.0);
}

TEST(ReplicateModelFnTest, DifferentOptimizerCallsAreAnError) {
  for (double tower1_calls : {1.0, 3.0}) {
    Params params;
    params.values["optimizer_calls"] = 2;
    params.values["tower1_calls"] = tower1_calls;
    auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kTrain, {1, 2}, {1, 2}, params);
    EXPECT_THAT(b->root.status(),
                testing::StatusIs(
                    absl::StatusCode::kInvalidArgument,
                    "Each invocation of model_fn was supposed to make the same optimizer calls."))
        << tower1_calls;
  }
}

TEST(ReplicateModelFnTest, IndivisibleBatchIsAnError) {
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kTrain, {1, 2, 3}, {1, 2, 3});
  EXPECT_THAT(b->root.status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Batch size 3 needs to be divisible by the number of GPUs, "
                                "which is 2."));
}

TEST(ReplicateModelFnTest, NoneReductionIsRefusedAtWrapTime) {
  absl::StatusOr<ModelFn> fn =
      ReplicateModelFn(LinearModel, Devices({"/cpu:0", "/cpu:1"}, LossReduction::kNone));
  EXPECT_THAT(fn.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                             "Tower losses need to be reduced in some way, yet "
                                             "none reduction is specified."));
  EXPECT_EQ(ReplicateModelFn(LinearModel, Devices({"/bogus:0"})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReplicateModelFnTest, UnevenBatchMatchesOneTower) {
  // Rows 1, 2, 3 with a mean loss: towers get [1, 2] and [3], weighed 4/3
  // and 2/3. MEAN gives the one-tower mean |9x| = 18 and gradient mean(x)
  // = 2, so c = 8, exactly as one tower on the whole batch.
  Params params;
  params.values["mean_loss"] = 1;
  ReplicateOptions uneven = Devices({"/cpu:0", "/cpu:1"}, LossReduction::kMean);
  uneven.uneven_batches = true;
  auto two = Build(uneven, ModeKeys::kTrain, {1, 2, 3}, {1, 2, 3}, params);
  TW_ASSERT_OK(two->root.status());
  auto one = Build(Devices({"/cpu:0"}), ModeKeys::kTrain, {1, 2, 3}, {1, 2, 3}, params);
  TW_ASSERT_OK(one->root.status());
  auto [loss2, c2] = TrainOneStep(*two);
  auto [loss1, c1] = TrainOneStep(*one);
  EXPECT_DOUBLE_EQ(loss2, 18.0);
  EXPECT_DOUBLE_EQ(c2, 8.0);
  EXPECT_DOUBLE_EQ(loss1, loss2);
  EXPECT_DOUBLE_EQ(c1, c2);
  // SUM: n times the mean, as with an even split.
  uneven.loss_reduction = LossReduction::kSum;
  auto sum = Build(uneven, ModeKeys::kTrain, {1, 2, 3}, {1, 2, 3}, params);
  TW_ASSERT_OK(sum->root.status());
  EXPECT_DOUBLE_EQ(TrainOneStep(*sum).first, 36.0);
}

TEST(ReplicateModelFnTest, UnevenBatchOfRunTimeSize) {
  Params params;
  params.values["mean_loss"] = 1;
  ReplicateOptions uneven = Devices({"/cpu:0", "/cpu:1"}, LossReduction::kMean);
  uneven.uneven_batches = true;
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 1}));
  Output y = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({-1, 1}));
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, ReplicateModelFn(LinearModel, uneven));
  EstimatorSpec spec = fn(root, {{"x", x}}, {{"y", y}}, ModeKeys::kTrain, params);
  TW_ASSERT_OK(root.status());
  ClientSession session(root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  TW_ASSERT_OK(session.Run({{x, Input::Initializer({1.0, 2.0, 3.0}, TensorShape({3, 1}))},
                            {y, Input::Initializer({1.0, 2.0, 3.0}, TensorShape({3, 1}))}},
                           {spec.loss}, &out));
  EXPECT_DOUBLE_EQ(out[0].data<double>()[0], 18.0);
  // A last batch of one example: tower 1 gets none and adds nothing; one
  // step gives c = 10 - 1.
  const Input::Initializer one({1.0}, TensorShape({1, 1}));
  TW_ASSERT_OK(session.Run({{x, one}, {y, one}}, {spec.loss}, &out));
  EXPECT_DOUBLE_EQ(out[0].data<double>()[0], 9.0);
  TW_ASSERT_OK(session.Run({{x, one}, {y, one}}, {}, {spec.train_op}, &out));
  EXPECT_DOUBLE_EQ(RunScalar(session, VariableC(root)), 9.0);
}

TEST(ReplicateModelFnTest, ShardedInputsTakeTheSameStep) {
  // The caller's own shards, one placeholder per tower on its device (as
  // keras::ReplicatedModel feeds them): rows [1, 2] and [3], weighed by
  // their sizes at run time, give UnevenBatchMatchesOneTower's numbers.
  Params params;
  params.values["mean_loss"] = 1;
  ReplicateOptions uneven = Devices({"/cpu:0", "/cpu:1"}, LossReduction::kMean);
  uneven.uneven_batches = true;
  Scope root = Scope::NewRootScope();
  std::vector<FeatureMap> features, labels;
  std::vector<Output> xs, ys;
  for (int i = 0; i < 2; ++i) {
    const Scope tower = root.WithDevice(absl::StrCat("/cpu:", i));
    xs.push_back(ops::Placeholder(tower, DT_DOUBLE, ops::Placeholder::Shape({-1, 1})));
    ys.push_back(ops::Placeholder(tower, DT_DOUBLE, ops::Placeholder::Shape({-1, 1})));
    features.push_back({{"x", xs.back()}});
    labels.push_back({{"y", ys.back()}});
  }
  TW_ASSERT_OK_AND_ASSIGN(ShardedModelFn fn, ReplicateShardedModelFn(LinearModel, uneven));
  EstimatorSpec spec = fn(root, features, labels, ModeKeys::kTrain, params);
  TW_ASSERT_OK(root.status());
  ClientSession session(root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  const Input::Initializer first({1.0, 2.0}, TensorShape({2, 1}));
  const Input::Initializer second({3.0}, TensorShape({1, 1}));
  const ClientSession::FeedType feeds = {
      {xs[0], first}, {ys[0], first}, {xs[1], second}, {ys[1], second}};
  TW_ASSERT_OK(session.Run(feeds, {spec.loss}, &out));
  EXPECT_DOUBLE_EQ(out[0].data<double>()[0], 18.0);
  TW_ASSERT_OK(session.Run(feeds, {}, {spec.train_op}, &out));
  EXPECT_DOUBLE_EQ(RunScalar(session, VariableC(root)), 8.0);
  // One tower's inputs for two towers is an error, not a crash.
  Scope wrong = Scope::NewRootScope();
  fn(wrong, {features[0]}, {}, ModeKeys::kPredict, params);
  EXPECT_THAT(wrong.status().message(), HasSubstr("2 towers got features for 1 and labels for 0"));
}

TEST(ReplicateModelFnTest, EvalReducesMetricsIdempotently) {
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kEval, {1, 2}, {1, 2});
  TW_ASSERT_OK(b->root.status());
  ClientSession session(b->root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(b->root)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {LocalVariablesInitializer(b->root)}, &out));
  EXPECT_EQ(RunScalar(session, b->spec.loss), 27.0);
  const train::Metric& mean = b->spec.eval_metric_ops.at("mean_prediction");
  const train::Metric& accuracy = b->spec.eval_metric_ops.at("accuracy");
  // Two evaluation batches: tower 0 sees 10 twice, tower 1 sees 20 twice.
  for (int step = 0; step < 2; ++step) {
    TW_ASSERT_OK(session.Run({}, {}, {mean.update, accuracy.update}, &out));
  }
  TW_ASSERT_OK(session.Run({mean.value, accuracy.value}, &out));
  EXPECT_EQ(mean.update.node()->name(), "eval_metric_reduction/group_deps");
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 15.0f);
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 0.0f);
}

// TF's error, counted over the metric variables: tower 0 made 4 (accuracy's
// and the mean's total and count), so two towers should make 8; tower 1's
// extra mean makes it 10.
TEST(ReplicateModelFnTest, DifferentMetricsAcrossTowersAreRefusedWithTFsError) {
  Params params;
  params.values["tower1_extra_metric"] = 1;
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kEval, {1, 2}, {1, 2}, params);
  EXPECT_THAT(b->root.status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Different `EstimatorSpec.eval_metric_ops` across `model_fn()` "
                                "calls. Expected 8 local variables, but got 10 instead."));
  // As many variables, under another name: TF would reduce the wrong
  // variables into each other; Towerflow names the metric.
  Params renamed;
  renamed.values["tower1_renames"] = 1;
  b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kEval, {1, 2}, {1, 2}, renamed);
  EXPECT_THAT(b->root.status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Different `EstimatorSpec.eval_metric_ops` across `model_fn()` "
                                "calls. Tower 1 has no metric 'accuracy' of 2 variables, as "
                                "tower 0 has."));
}

TEST(ReplicateModelFnTest, PredictConcatenatesWithoutLabels) {
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kPredict, {1, 2}, {});
  TW_ASSERT_OK(b->root.status());
  ClientSession session(b->root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(b->root)}, &out));
  TW_ASSERT_OK(session.Run({b->spec.predictions.at("probabilities")}, &out));
  EXPECT_THAT(out[0], TensorIs<double>({2, 1}, {10, 20}));
}

// TF's _concat_tensor_dicts: a prediction only tower 1 returns holds tower
// 1's rows alone (x = 2, c = 10: 2 * 20).
TEST(ReplicateModelFnTest, PredictConcatenatesEachKeyOverTheTowersThatReturnIt) {
  Params params;
  params.values["tower1_doubles"] = 1;
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kPredict, {1, 2}, {}, params);
  TW_ASSERT_OK(b->root.status());
  ClientSession session(b->root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(b->root)}, &out));
  TW_ASSERT_OK(session.Run(
      {b->spec.predictions.at("probabilities"), b->spec.predictions.at("doubled")}, &out));
  EXPECT_THAT(out[0], TensorIs<double>({2, 1}, {10, 20}));
  EXPECT_THAT(out[1], TensorIs<double>({1, 1}, {40}));
}

// node name -> requested device of the graph built so far.
std::map<std::string, std::string> Devices(const Scope& root) {
  std::map<std::string, std::string> out;
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  EXPECT_TRUE(def.ok()) << def.status();
  if (!def.ok()) return out;
  for (const NodeDef& node : def->node()) out[node.name()] = node.device();
  return out;
}

TEST(ReplicateModelFnTest, NamesAndPlacement) {
  auto b = Build(Devices({"/cpu:0", "/cpu:1"}), ModeKeys::kTrain, {1, 2}, {1, 2});
  TW_ASSERT_OK(b->root.status());
  const std::map<std::string, std::string> devices = Devices(b->root);
  // One variable, on the consolidation device; tower 0 unprefixed, tower 1
  // under tower_1/ on its device; inputs split under split_inputs/.
  EXPECT_EQ(devices.at("c"), "/device:CPU:0");
  EXPECT_EQ(devices.count("tower_1/c"), 0u);
  EXPECT_EQ(devices.at("Mul"), "/device:CPU:0");
  EXPECT_EQ(devices.at("tower_1/Mul"), "/device:CPU:1");
  EXPECT_EQ(devices.at("split_inputs/split"), "/device:CPU:0");    // x
  EXPECT_EQ(devices.at("split_inputs/split_1"), "/device:CPU:0");  // y
  EXPECT_EQ(devices.at("train_op_placeholder"), "/device:CPU:0");  // tower 0 does not apply
  EXPECT_EQ(devices.at("loss"), "/device:CPU:0");
  bool aggregated = false;
  for (const auto& [name, device] : devices) {
    if (absl::StartsWith(name, "gradient_aggregating/AddN")) {
      aggregated = true;
      EXPECT_EQ(device, "/device:CPU:0") << name;
    }
  }
  EXPECT_TRUE(aggregated);
}

TEST(ReplicateModelFnTest, TowerIndexRoundRobinAndExplicitDevices) {
  std::vector<int> seen;
  ModelFn model = [&seen](const Scope& s, const FeatureMap& f, const FeatureMap&, ModeKeys mode,
                          const Params& p) {
    seen.push_back(p.tower_index * 10 + p.num_towers);
    Variable a = GetVariable(s, "a", TensorShape({}), DT_DOUBLE, initializers::Constant(1.0));
    Variable b = GetVariable(s, "b", TensorShape({}), DT_DOUBLE, initializers::Constant(2.0));
    EstimatorSpec spec(mode);
    // An explicit device inside the model wins over the tower's.
    spec.predictions["y"] =
        ops::Mul(s.WithDevice("/cpu:0").WithOpName("pinned"), f.at("x"), a.value());
    spec.predictions["z"] = ops::Mul(s.WithOpName("free"), f.at("x"), b.value());
    return spec;
  };
  ReplicateOptions options = Devices({"/cpu:0", "/cpu:1"});
  options.variable_placement = VariablePlacement::kRoundRobin;
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, ReplicateModelFn(model, options));
  Scope root = Scope::NewRootScope();
  fn(root, {{"x", ops::Const(root, {{1.0}, {2.0}})}}, {}, ModeKeys::kPredict, Params());
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(seen, (std::vector<int>{2, 12}));
  const std::map<std::string, std::string> devices = Devices(root);
  EXPECT_EQ(devices.at("a"), "/device:CPU:0");
  EXPECT_EQ(devices.at("b"), "/device:CPU:1");
  EXPECT_EQ(devices.at("tower_1/pinned"), "/device:CPU:0");
  EXPECT_EQ(devices.at("tower_1/free"), "/device:CPU:1");
  ClientSession session(root, TwoCpus());
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {}, &out));
}

TEST(ReplicateModelFnTest, UpdateOpsOfEveryTowerOrTheFirst) {
  // Each tower adds one "count += 1" to kUpdateOps (the shared variable
  // counts how many ran).
  ModelFn model = [](const Scope& s, const FeatureMap& f, const FeatureMap& l, ModeKeys mode,
                     const Params& p) {
    EstimatorSpec spec = LinearModel(s, f, l, mode, p);
    VariableOptions local;
    local.trainable = false;
    Variable count =
        GetVariable(s, "count", TensorShape({}), DT_DOUBLE, initializers::Zeros(), local);
    AddToCollection(s.graph(), GraphKeys::kUpdateOps,
                    ops::AssignAddVariableOp(s, count.handle(), 1.0).operation);
    return spec;
  };
  for (bool first_only : {false, true}) {
    ReplicateOptions options = Devices({"/cpu:0", "/cpu:1"});
    options.update_ops_from_first_tower_only = first_only;
    TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, ReplicateModelFn(model, options));
    Scope root = Scope::NewRootScope();
    EstimatorSpec spec = fn(root, {{"x", ops::Const(root, {{1.0}, {2.0}})}},
                            {{"y", ops::Const(root, {{1.0}, {2.0}})}}, ModeKeys::kTrain, Params());
    TW_ASSERT_OK(root.status());
    Output count;
    for (const Variable& v : GetVariables(*root.graph())) {
      if (v.name() == "count") count = v.value(root.NewSubScope("check"));
    }
    ClientSession session(root, TwoCpus());
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, &out));
    TW_ASSERT_OK(session.Run({}, {}, {spec.train_op}, &out));
    EXPECT_EQ(RunScalar(session, count), first_only ? 1.0 : 2.0);
  }
}

TEST(AggregateTowerGradientsTest, DenseSparseMixedAndNone) {
  Scope root = Scope::NewRootScope();
  Variable w = GetVariable(root, "w", TensorShape({3, 2}), DT_FLOAT, initializers::Zeros());
  Variable unused = GetVariable(root, "unused", TensorShape({}), DT_FLOAT, initializers::Zeros());
  const Output shape = ops::Const(root, {3, 2});
  auto slices = [&](std::initializer_list<float> values, std::initializer_list<int32_t> rows) {
    const int64_t n = static_cast<int64_t>(rows.size());
    return IndexedSlices{ops::Const(root, Input::Initializer(values, TensorShape({n, 2}))),
                         ops::Const(root, Input::Initializer(rows, TensorShape({n}))), shape};
  };
  // IndexedSlices from both towers: concatenated, rows kept apart.
  std::vector<std::vector<train::GradAndVar>> sparse = {
      {{slices({1, 2}, {0}), w}, {Gradient(), unused}},
      {{slices({3, 4, 5, 6}, {2, 0}), w}, {Gradient(), unused}}};
  TW_ASSERT_OK_AND_ASSIGN(std::vector<train::GradAndVar> summed,
                          AggregateTowerGradients(root.NewSubScope("agg"), sparse));
  ASSERT_TRUE(summed[0].grad.is_sparse());
  EXPECT_TRUE(summed[1].grad.is_none());
  // A dense and a sparse gradient: the sparse one densified, then AddN.
  std::vector<std::vector<train::GradAndVar>> mixed = {
      {{ops::Const(root, {{1.f, 1.f}, {1.f, 1.f}, {1.f, 1.f}}), w}}, {{slices({3, 4}, {2}), w}}};
  TW_ASSERT_OK_AND_ASSIGN(std::vector<train::GradAndVar> added,
                          AggregateTowerGradients(root.NewSubScope("agg"), mixed));
  ASSERT_FALSE(added[0].grad.is_sparse());
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run(
      {summed[0].grad.slices().values, summed[0].grad.slices().indices, added[0].grad.dense()},
      &out));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({3}, {0, 2, 0}));
  EXPECT_THAT(out[2], TensorIs<float>({3, 2}, {1, 1, 1, 1, 4, 5}));
  // Towers that disagree on the variables are the "same optimizer calls" error.
  std::vector<std::vector<train::GradAndVar>> different = {{{Gradient(), w}},
                                                           {{Gradient(), unused}}};
  EXPECT_EQ(AggregateTowerGradients(root, different).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace towerflow
