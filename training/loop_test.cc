// The training loop on one process: loss = (w - x)^2 / 2 stepped by
// gradient descent at rate 1/2 from w = 0 with x = 2 fed each step, so
// w = 1, 1.5, 1.75 and the losses 2, 0.5, 0.125 (by hand).
#include "training/loop.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/queue_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "tests/test_util.h"
#include "train/optimizers.h"
#include "train/saver.h"
#include "training/cluster_roles.h"

namespace towerflow {
namespace training {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::MakeTempDir;
using ::towerflow::testing::StatusIs;

struct Model {
  Scope root = Scope::NewRootScope();
  Variable w, step;
  Output x, loss, x_log, step_after;
  Operation train;

  Model() {
    w = GetVariable(root, "w", TensorShape({}), DT_FLOAT, initializers::Constant({0.f}));
    x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    loss = ops::L2Loss(root, ops::Sub(root, w.value(), x));
    x_log = ops::Identity(root, x);
    step = train::GetOrCreateGlobalStep(root);
    train = train::GradientDescentOptimizer(0.5).Minimize(root, loss, step);
    step_after =
        ops::ReadVariableOp(root.WithControlDependencies({train}), step.handle(), DT_INT64);
  }

  // `batches` batches of x = 2, 4 examples each.
  NextBatchFn Batches(int batches, int* taken) const {
    return [this, batches, taken]() -> absl::StatusOr<std::optional<Batch>> {
      if (*taken == batches) return std::nullopt;
      ++*taken;
      Tensor two(DT_FLOAT, TensorShape({}));
      two.data<float>()[0] = 2;
      return Batch{{{x, two}}, 4};
    };
  }
};

// Records what it is given, as `name`, into a shared log of calls.
class Recorder : public SessionRunHook {
 public:
  Recorder(std::string name, std::vector<std::string>* calls, std::vector<Output> fetch = {})
      : name_(std::move(name)), calls_(calls), fetch_(std::move(fetch)) {}
  absl::Status Begin(const Scope&) override {
    calls_->push_back(name_ + " begin");
    return absl::OkStatus();
  }
  absl::Status AfterCreateSession(const ClientSession&, int64_t global_step) override {
    calls_->push_back(absl::StrCat(name_, " session ", global_step));
    return absl::OkStatus();
  }
  std::vector<Output> BeforeRun() override { return fetch_; }
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values, bool*) override {
    steps.push_back(step);
    fetched.push_back(values);
    calls_->push_back(absl::StrCat(name_, " step ", step.global_step));
    return absl::OkStatus();
  }
  absl::Status End(const ClientSession&, int64_t global_step) override {
    calls_->push_back(absl::StrCat(name_, " end ", global_step));
    return absl::OkStatus();
  }
  std::vector<StepResult> steps;
  std::vector<std::vector<Tensor>> fetched;

 private:
  const std::string name_;
  std::vector<std::string>* const calls_;
  const std::vector<Output> fetch_;
};

TEST(LoopTest, StepsUntilTheDataEndsAndHooksSeeEachStepInOrder) {
  Model m;
  std::vector<std::string> calls;
  auto first = std::make_shared<Recorder>("a", &calls, std::vector<Output>{m.w.value()});
  auto second = std::make_shared<Recorder>("b", &calls);
  Loop loop(
      {.loss = m.loss, .train_ops = {m.train}, .global_step = m.step_after, .logs = {m.x_log}},
      {first, second}, /*cluster=*/nullptr);
  TW_ASSERT_OK(loop.Begin(m.root));
  ClientSession session(m.root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root)}, nullptr));
  TW_ASSERT_OK(loop.AfterCreateSession(session, 0));
  EXPECT_TRUE(std::isnan(loop.loss()));
  int taken = 0;
  TW_ASSERT_OK(loop.Run(session, m.Batches(3, &taken)));
  TW_ASSERT_OK(loop.End(session));
  EXPECT_THAT(
      calls, ElementsAre("a begin", "b begin", "a session 0", "b session 0", "a step 1", "b step 1",
                         "a step 2", "b step 2", "a step 3", "b step 3", "a end 3", "b end 3"));
  ASSERT_EQ(first->steps.size(), 3u);
  const double losses[] = {2, 0.5, 0.125};
  for (int i = 0; i < 3; ++i) {
    const StepResult& step = first->steps[i];
    EXPECT_EQ(step.global_step, i + 1);
    EXPECT_EQ(step.loss, losses[i]);
    EXPECT_EQ(step.batch_size, 4);
    EXPECT_THAT(step.logs, ElementsAre(2.0));
    // w as the step read it, before its update: 0, 1, 1.5.
    ASSERT_EQ(first->fetched[i].size(), 1u);
    EXPECT_EQ(first->fetched[i][0].data<float>()[0], i == 0 ? 0.f : i == 1 ? 1.f : 1.5f);
    EXPECT_TRUE(second->fetched[i].empty());
  }
  EXPECT_EQ(loop.global_step(), 3);
  EXPECT_EQ(loop.steps_run(), 3);
  EXPECT_EQ(loop.loss(), 0.125);
}

TEST(LoopTest, CountsStepsWithoutAGlobalStepAndCarriesOnAcrossRuns) {
  Model m;
  auto history = std::make_shared<StepHistoryHook>();
  Loop loop({.loss = m.loss, .train_ops = {m.train}}, {history}, nullptr);
  TW_ASSERT_OK(loop.Begin(m.root));
  ClientSession session(m.root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root)}, nullptr));
  TW_ASSERT_OK(loop.AfterCreateSession(session, 10));
  int taken = 0;
  TW_ASSERT_OK(loop.Run(session, m.Batches(2, &taken)));  // an epoch
  taken = 0;
  TW_ASSERT_OK(loop.Run(session, m.Batches(1, &taken)));  // the next
  ASSERT_EQ(history->steps().size(), 3u);
  EXPECT_EQ(history->steps()[0].global_step, 11);
  EXPECT_EQ(history->steps()[2].global_step, 13);
  EXPECT_THAT(history->losses(), ElementsAre(2, 0.5, 0.125));
  EXPECT_TRUE(history->steps()[0].logs.empty());
}

TEST(LoopTest, AStopRequestEndsTheLoopAndLaterRunsTakeNoStep) {
  Model m;
  auto stop = std::make_shared<StopAtStepHook>(StopAtStepHook::NumSteps(2));
  auto history = std::make_shared<StepHistoryHook>();
  Loop loop({.loss = m.loss, .train_ops = {m.train}, .global_step = m.step_after}, {stop, history},
            nullptr);
  TW_ASSERT_OK(loop.Begin(m.root));
  ClientSession session(m.root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root)}, nullptr));
  TW_ASSERT_OK(loop.AfterCreateSession(session, 0));
  int taken = 0;
  TW_ASSERT_OK(loop.Run(session, m.Batches(5, &taken)));
  EXPECT_EQ(taken, 2);
  EXPECT_TRUE(loop.stop_requested());
  TW_ASSERT_OK(loop.Run(session, m.Batches(5, &taken)));
  EXPECT_EQ(taken, 2);  // the data is not even read
  EXPECT_EQ(history->steps().size(), 2u);

  Loop stopped({.loss = m.loss, .train_ops = {m.train}}, {}, nullptr);
  stopped.RequestStop();
  taken = 0;
  TW_ASSERT_OK(stopped.Run(session, m.Batches(5, &taken)));
  EXPECT_EQ(taken, 0);
  EXPECT_EQ(stopped.steps_run(), 0);
}

TEST(LoopTest, AnErrorEndsTheLoopAtOnce) {
  Model m;
  struct Failing : SessionRunHook {
    absl::Status AfterRun(const StepResult&, const std::vector<Tensor>&, bool*) override {
      return absl::InternalError("disk full");
    }
  };
  auto history = std::make_shared<StepHistoryHook>();
  Loop loop({.loss = m.loss, .train_ops = {m.train}}, {std::make_shared<Failing>(), history},
            nullptr);
  ClientSession session(m.root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root)}, nullptr));
  int taken = 0;
  EXPECT_THAT(loop.Run(session, m.Batches(3, &taken)),
              StatusIs(absl::StatusCode::kInternal, "disk full"));
  EXPECT_TRUE(history->steps().empty());  // no later hook saw the step
  // The data's error, and a loss that is no number.
  EXPECT_THAT(loop.Run(session,
                       []() -> absl::StatusOr<std::optional<Batch>> {
                         return absl::DataLossError("corrupt record");
                       }),
              StatusIs(absl::StatusCode::kDataLoss, "corrupt record"));
  Loop strings({.loss = ops::Const(m.root, std::string("no")), .train_ops = {m.train}}, {},
               nullptr);
  taken = 0;
  EXPECT_THAT(strings.Run(session, m.Batches(1, &taken)),
              StatusIs(absl::StatusCode::kInvalidArgument, "loss must be a number, got string"));
}

// Note [A step's OutOfRange]: a step whose graph reads a closed queue past
// its end (an input read in the graph, a synchronous worker's tokens) ends
// training as the data's end does: no error, the step not counted.
TEST(LoopTest, AStepsOutOfRangeEndsTheLoopAsTheDataDoes) {
  Model m;
  const Output queue = ops::FIFOQueueV2(m.root, {DT_FLOAT});
  const Operation fill =
      ops::QueueEnqueueManyV2(m.root, queue, {ops::Const(m.root, {1.f, 2.f})}).operation;
  const Operation close = ops::QueueCloseV2(m.root, queue).operation;
  const ops::QueueDequeueV2 token(m.root, queue, {DT_FLOAT});
  const Operation step = ops::NoOp(m.root.WithControlDependencies({m.train, token.operation}));
  auto history = std::make_shared<StepHistoryHook>();
  Loop loop({.loss = m.loss, .train_ops = {step}}, {history}, nullptr);
  TW_ASSERT_OK(loop.Begin(m.root));
  ClientSession session(m.root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root), fill}, nullptr));
  TW_ASSERT_OK(session.Run({}, {}, {close}, nullptr));
  TW_ASSERT_OK(loop.AfterCreateSession(session, 0));
  int taken = 0;
  TW_ASSERT_OK(loop.Run(session, m.Batches(5, &taken)));
  EXPECT_EQ(taken, 3);  // the third step found the queue closed and empty
  EXPECT_EQ(loop.steps_run(), 2);
  EXPECT_EQ(history->steps().size(), 2u);
  EXPECT_TRUE(loop.stop_requested());
  TW_ASSERT_OK(loop.End(session));
}

TEST(ClusterRolesTest, AloneEveryDecisionIsThisProcesss) {
  TW_ASSERT_OK_AND_ASSIGN(ProcessRole role, RoleOf(/*across_processes=*/false, nullptr));
  EXPECT_EQ(role.cluster, nullptr);
  EXPECT_TRUE(role.chief);
  EXPECT_FALSE(role.is_ps_task());
  TW_ASSERT_OK_AND_ASSIGN(bool every, EveryProcess(nullptr, false));
  EXPECT_FALSE(every);
  TW_ASSERT_OK_AND_ASSIGN(bool decided, RankZeroDecides(nullptr, true));
  EXPECT_TRUE(decided);
  TW_ASSERT_OK_AND_ASSIGN(std::optional<int64_t> examples, StepTogether(nullptr, true, 7));
  EXPECT_EQ(examples, 7);
  TW_ASSERT_OK_AND_ASSIGN(examples, StepTogether(nullptr, false, 7));
  EXPECT_EQ(examples, std::nullopt);
  std::vector<double> logs = {0.5, 2};
  TW_ASSERT_OK(MeanOverProcesses(nullptr, 3, &logs));
  EXPECT_THAT(logs, ElementsAre(0.5, 2));
}

TEST(ClusterRolesTest, StartSessionInitializesOrRestores) {
  Model m;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<train::Saver> saver, train::Saver::Create(m.root));
  SessionStart start;
  start.init_global = GlobalVariablesInitializer(m.root);
  start.init_local = LocalVariablesInitializer(m.root);
  Operation set_w = ops::AssignVariableOp(m.root, m.w.handle(), ops::Const(m.root, 5.f));
  TW_ASSERT_OK(m.root.status());
  const std::string dir = MakeTempDir("start_session");
  std::string checkpoint;
  {
    ClientSession session(m.root);
    std::ostringstream log;
    TW_ASSERT_OK(StartSession(session, ProcessRole{}, start, log));
    EXPECT_EQ(log.str(), "");
    std::vector<Tensor> w;
    TW_ASSERT_OK(session.Run({m.w.value()}, &w));
    EXPECT_EQ(w[0].data<float>()[0], 0.f);
    TW_ASSERT_OK(session.Run({}, {}, {set_w}, nullptr));
    TW_ASSERT_OK_AND_ASSIGN(checkpoint, saver->Save(session, dir, 0));
  }
  ClientSession session(m.root);
  start.checkpoint = checkpoint;
  EXPECT_THAT(StartSession(session, ProcessRole{}, start, std::cerr),
              StatusIs(absl::StatusCode::kInvalidArgument, "a checkpoint to restore but no Saver"));
  start.saver = saver.get();
  std::ostringstream log;
  TW_ASSERT_OK(StartSession(session, ProcessRole{}, start, log));
  EXPECT_THAT(log.str(), ::testing::HasSubstr("Restoring parameters from " + checkpoint));
  std::vector<Tensor> w;
  TW_ASSERT_OK(session.Run({m.w.value()}, &w));
  EXPECT_EQ(w[0].data<float>()[0], 5.f);
}

}  // namespace
}  // namespace training
}  // namespace towerflow
