// ExponentialMovingAverage against hand-computed values, and evaluation with
// the averages through a Saver.
#include "train/moving_averages.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/state_ops.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/saver.h"

namespace towerflow {
namespace train {
namespace {

TEST(ExponentialMovingAverageTest, FollowsTheVariable) {
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w", TensorShape({2}), DT_FLOAT, initializers::Constant({10.f, 0.f}));
  Output n = ops::Placeholder(s, DT_INT64);
  ExponentialMovingAverage ema(0.9, n);
  Operation update = ema.Apply(s, {w});
  TW_ASSERT_OK(s.status());
  Variable shadow = ema.Average(w);
  EXPECT_EQ(shadow.name(), "w/ExponentialMovingAverage");
  EXPECT_FALSE(shadow.trainable());
  Output next = ops::Placeholder(s, DT_FLOAT);
  Operation set_w = ops::AssignVariableOp(s, w.handle(), next);
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({shadow.value(s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {10.f, 0.f}));  // starts at the initial value
  // w = [20, 10]; num_updates 0: decay = min(0.9, 1/10) = 0.1, so
  // shadow = 10 - 0.9 (10 - 20) = 19 and 0 - 0.9 (0 - 10) = 9.
  TW_ASSERT_OK(session.Run({{next, {20.f, 10.f}}}, {}, {set_w}, &out));
  TW_ASSERT_OK(session.Run({{n, Scalar<int64_t>(0)}}, {}, {update}, &out));
  TW_ASSERT_OK(session.Run({shadow.value(s)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2}, {19.f, 9.f}, 1e-5));
  // num_updates 1000: decay = 0.9; shadow = 19 - 0.1 (19 - 20) = 19.1, 9.1.
  TW_ASSERT_OK(session.Run({{n, Scalar<int64_t>(1000)}}, {}, {update}, &out));
  TW_ASSERT_OK(session.Run({shadow.value(s)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2}, {19.1f, 9.1f}, 1e-5));
}

TEST(ExponentialMovingAverageTest, EvaluationRestoresTheAverages) {
  const std::string dir = testing::MakeTempDir("ema");
  {
    Scope s = Scope::NewRootScope();
    Variable w = GetVariable(s, "w", TensorShape({}), DT_FLOAT, initializers::Constant(4.f));
    ExponentialMovingAverage ema(0.5);
    Operation update = ema.Apply(s, {w});
    TW_ASSERT_OK(s.status());
    Operation set_w = ops::AssignVariableOp(s, w.handle(), 8.f);
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s));
    ClientSession session(s);
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
    TW_ASSERT_OK(session.Run({}, {}, {set_w}, &out));
    TW_ASSERT_OK(session.Run({}, {}, {update}, &out));  // shadow = 4 - 0.5 (4 - 8) = 6
    TW_ASSERT_OK(saver->Save(session, dir, 1).status());
  }
  // The eval graph has only w; it reads the shadow's value.
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w", TensorShape({}), DT_FLOAT, initializers::Zeros());
  ExponentialMovingAverage ema(0.5);
  SaverOptions options;
  options.var_names = ema.VariablesToRestore({w});
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s, options));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(saver->Restore(session, dir + "/model.ckpt-1"));
  TW_ASSERT_OK(session.Run({w.value(s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {6.f}));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
