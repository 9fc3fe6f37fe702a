// Metrics against TensorFlow's documented examples.
#include "train/metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace train {
namespace {

float Value(const Scope& s, const Metric& m, int updates = 1) {
  EXPECT_TRUE(s.ok()) << s.status();
  ClientSession session(s);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {LocalVariablesInitializer(s)}, &out).ok());
  for (int i = 0; i < updates; ++i) EXPECT_TRUE(session.Run({}, {}, {m.update}, &out).ok());
  EXPECT_TRUE(session.Run({m.value}, &out).ok());
  return out[0].data<float>()[0];
}

TEST(MetricsTest, Mean) {
  // [1, 3, 5, 7] -> 4; weights [1, 1, 0, 0] -> 2.
  Scope s = Scope::NewRootScope();
  EXPECT_FLOAT_EQ(Value(s, Mean(s, ops::Const(s, {1.f, 3.f, 5.f, 7.f}))), 4.f);
  Scope w = Scope::NewRootScope();
  EXPECT_FLOAT_EQ(
      Value(w, Mean(w, ops::Const(w, {1.f, 3.f, 5.f, 7.f}), ops::Const(w, {1.f, 1.f, 0.f, 0.f}))),
      2.f);
}

TEST(MetricsTest, AccuracyAccumulatesAndResets) {
  // labels [1, 2, 3, 4], predictions [0, 2, 3, 4] -> 0.75, also over two batches.
  Scope s = Scope::NewRootScope();
  Metric m = Accuracy(s, ops::Const(s, {1, 2, 3, 4}), ops::Const(s, {0, 2, 3, 4}));
  EXPECT_FLOAT_EQ(Value(s, m, 2), 0.75f);
  ASSERT_EQ(m.variables.size(), 2u);
  EXPECT_EQ(m.variables[0].name(), "accuracy/total");
  EXPECT_EQ(GetVariables(*s.graph(), GraphKeys::kMetricVariables).size(), 2u);
  EXPECT_TRUE(GetVariables(*s.graph(), GraphKeys::kTrainableVariables).empty());
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {LocalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {m.update}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {ResetMetrics(s)}, &out));
  TW_ASSERT_OK(session.Run({m.value}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {0.f}));  // nothing seen since the reset
}

TEST(MetricsTest, PrecisionAndRecall) {
  // labels [0, 1, 1, 1], predictions [1, 0, 1, 1]: tp 2, fp 1, fn 1 -> 2/3 each.
  Scope s = Scope::NewRootScope();
  EXPECT_NEAR(Value(s, Precision(s, ops::Const(s, {0, 1, 1, 1}), ops::Const(s, {1, 0, 1, 1}))),
              2.f / 3, 1e-6);
  Scope r = Scope::NewRootScope();
  EXPECT_NEAR(Value(r, Recall(r, ops::Const(r, {0, 1, 1, 1}), ops::Const(r, {1, 0, 1, 1}))),
              2.f / 3, 1e-6);
}

TEST(MetricsTest, AUC) {
  // TF's example: 3 thresholds [-1e-7, 0.5, 1 + 1e-7], labels [0, 0, 1, 1],
  // predictions [0, 0.5, 0.3, 0.9]: tpr [1, 0.5, 0], fpr [1, 0, 0] -> 0.75.
  Scope s = Scope::NewRootScope();
  Metric m = AUC(s, ops::Const(s, {0, 0, 1, 1}), ops::Const(s, {0.f, 0.5f, 0.3f, 0.9f}), 3);
  EXPECT_NEAR(Value(s, m), 0.75f, 1e-6);
  // A perfect ranking with the default 200 thresholds.
  Scope p = Scope::NewRootScope();
  EXPECT_NEAR(
      Value(p, AUC(p, ops::Const(p, {0, 0, 1, 1}), ops::Const(p, {0.1f, 0.2f, 0.8f, 0.9f}))), 1.f,
      1e-6);
}

TEST(MetricsTest, InTopK) {
  // Row 0's target (1) is the largest; row 1's (0) is third of three.
  Scope s = Scope::NewRootScope();
  Metric m =
      InTopK(s, ops::Const(s, {{0.1f, 0.8f, 0.1f}, {0.1f, 0.5f, 0.4f}}), ops::Const(s, {1, 0}), 2);
  EXPECT_FLOAT_EQ(Value(s, m), 0.5f);
}

}  // namespace
}  // namespace train
}  // namespace towerflow
