// Optimizers: one and two steps on loss = |w|^2 / 2 (gradient w) from
// w = [1, 2], against values computed by hand from the update rules in
// optimizers.h.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/state_ops.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace train {
namespace {

using testing::StatusIs;

struct Steps {
  std::vector<float> after_one, after_two;
};

// Builds w, the loss and opt.Minimize; runs two steps; returns w after each.
void ExpectTwoSteps(Optimizer& opt, const Steps& expected, double tolerance = 1e-6) {
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w", TensorShape({2}), DT_FLOAT, initializers::Constant({1.f, 2.f}));
  Output loss = ops::L2Loss(s, w.value());
  Variable step = GetOrCreateGlobalStep(s);
  Operation train = opt.Minimize(s, loss, step);
  TW_ASSERT_OK(s.status());
  EXPECT_EQ(train.name(), opt.name());
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {train}, &out));
  TW_ASSERT_OK(session.Run({w.value(s), step.value(s)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2}, expected.after_one, tolerance));
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {1}));
  TW_ASSERT_OK(session.Run({}, {}, {train}, &out));
  TW_ASSERT_OK(session.Run({w.value(s), step.value(s)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2}, expected.after_two, tolerance));
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {2}));
}

TEST(OptimizerTest, GradientDescent) {
  // w -= 0.1 w: 0.9 w, then 0.81 w.
  GradientDescentOptimizer opt(0.1);
  ExpectTwoSteps(opt, {{0.9f, 1.8f}, {0.81f, 1.62f}});
}

TEST(OptimizerTest, Momentum) {
  // accum = g = [1, 2], w = [0.9, 1.8]; accum = 0.9 [1, 2] + [0.9, 1.8] =
  // [1.8, 3.6], w = [0.72, 1.44].
  MomentumOptimizer opt(0.1, 0.9);
  ExpectTwoSteps(opt, {{0.9f, 1.8f}, {0.72f, 1.44f}});
}

TEST(OptimizerTest, NesterovMomentum) {
  // w -= 0.1 (g + 0.9 accum): [0.81, 1.62]; then accum = [1.71, 3.42],
  // w -= 0.1 ([0.81, 1.62] + 0.9 accum) = [0.5751, 1.1502].
  MomentumOptimizer opt(0.1, 0.9, /*use_nesterov=*/true);
  ExpectTwoSteps(opt, {{0.81f, 1.62f}, {0.5751f, 1.1502f}});
}

TEST(OptimizerTest, Adam) {
  // Step 1 moves each weight by lr * sign(g) = 0.1.
  AdamOptimizer opt(0.1);
  ExpectTwoSteps(opt, {{0.9f, 1.9f}, {0.8004123f, 1.8001665f}}, 2e-6);
}

TEST(OptimizerTest, Adagrad) {
  // accum = 0.1 + g^2 = [1.1, 4.1]; w -= 0.1 g / sqrt(accum).
  AdagradOptimizer opt(0.1);
  ExpectTwoSteps(opt, {{0.9046537f, 1.901227f}, {0.8393387f, 1.8327767f}});
}

TEST(OptimizerTest, RMSProp) {
  // ms = 0.9 + 0.1 g^2 = [1.0, 1.3]; w -= 0.1 g / sqrt(ms).
  RMSPropOptimizer opt(0.1);
  ExpectTwoSteps(opt, {{0.9f, 1.8245884f}, {0.8091326f, 1.6757558f}});
  RMSPropOptimizer with_momentum(0.1, 0.9, 0.5);
  ExpectTwoSteps(with_momentum, {{0.9f, 1.8245884f}, {0.7591326f, 1.58805f}});
}

TEST(OptimizerTest, SlotsAreNamedAsTensorFlowNamesThem) {
  Scope s = Scope::NewRootScope();
  Scope conv = s.WithVariableScope("conv1");
  Variable w =
      GetVariable(conv, "weights", TensorShape({2}), DT_FLOAT, initializers::Constant({1.f, 2.f}));
  Output loss = ops::L2Loss(s, w.value());
  MomentumOptimizer momentum(0.1, 0.9);
  momentum.Minimize(s, loss);
  TW_ASSERT_OK(s.status());
  EXPECT_EQ(momentum.GetSlot(w, "momentum").name(), "conv1/weights/Momentum");
  AdamOptimizer adam;
  adam.Minimize(s, loss);
  TW_ASSERT_OK(s.status());
  EXPECT_EQ(adam.GetSlot(w, "m").name(), "conv1/weights/Adam");
  EXPECT_EQ(adam.GetSlot(w, "v").name(), "conv1/weights/Adam_1");
  EXPECT_EQ(adam.beta1_power().name(), "beta1_power");
  EXPECT_FALSE(adam.GetSlot(w, "momentum").valid());
  // Slots are global, not trainable.
  std::vector<std::string> trainable;
  for (const Variable& v : GetVariables(*s.graph(), GraphKeys::kTrainableVariables)) {
    trainable.push_back(v.name());
  }
  EXPECT_THAT(trainable, ::testing::ElementsAre("conv1/weights"));
  EXPECT_NE(s.graph()->FindNode("Momentum/update_conv1/weights/ResourceApplyMomentum"), nullptr);
}

TEST(OptimizerTest, SparseGradientsUpdateOnlyGatheredRows) {
  Scope s = Scope::NewRootScope();
  Variable emb = GetVariable(s, "emb", TensorShape({3, 2}), DT_FLOAT,
                             initializers::Constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}}));
  Output rows = ops::ResourceGather(s, emb.handle(), {2, 2}, DT_FLOAT);
  Output loss = ops::Sum(s, rows, {0, 1});
  GradientDescentOptimizer opt(0.5);
  std::vector<GradAndVar> grads = opt.ComputeGradients(s, loss);
  TW_ASSERT_OK(s.status());
  EXPECT_TRUE(grads[0].grad.is_sparse());
  Operation train = opt.ApplyGradients(s, grads);
  TW_ASSERT_OK(s.status());
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {train}, &out));
  TW_ASSERT_OK(session.Run({emb.value(s)}, &out));
  // Row 2 gathered twice: 3 - 0.5 - 0.5 = 2.
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {1, 1, 2, 2, 2, 2}));
  // A scatter of the rows (TF's sparse update), not a dense [3, 2] gradient.
  EXPECT_NE(s.graph()->FindNode("GradientDescent/update_emb/ResourceScatterSub"), nullptr);
  for (const Node* n : s.graph()->nodes()) EXPECT_NE(n->type_string(), "UnsortedSegmentSum");
}

// An embedding read through fed ids: the rows-only gradient of each step.
struct EmbeddingStep {
  Scope s = Scope::NewRootScope();
  Variable emb;
  Output ids;
  Output loss;
  EmbeddingStep() {
    emb = GetVariable(s, "emb", TensorShape({3, 2}), DT_FLOAT,
                      initializers::Constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}}));
    ids = ops::Placeholder(s, DT_INT32);
    loss = ops::Sum(s, ops::ResourceGather(s, emb.handle(), ids, DT_FLOAT), {0, 1});
  }
  // Builds opt.Minimize(loss), initialises, and runs one step per entry of
  // `steps` (the ids fed); `session` stays for reading the results.
  absl::Status Train(Optimizer& opt, const std::vector<std::vector<int32_t>>& steps) {
    Operation train = opt.Minimize(s, loss);
    TW_RETURN_IF_ERROR(s.status());
    session = std::make_unique<ClientSession>(s);
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session->Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
    for (const std::vector<int32_t>& step : steps) {
      Tensor fed(DT_INT32, TensorShape({static_cast<int64_t>(step.size())}));
      std::copy(step.begin(), step.end(), fed.data<int32_t>());
      TW_RETURN_IF_ERROR(session->Run({{ids, fed}}, {}, {train}, &out));
    }
    return absl::OkStatus();
  }
  std::unique_ptr<ClientSession> session;
};

// TF's sparse Momentum: repeated rows summed first, and only the rows of
// the step decay their accumulator.
TEST(OptimizerTest, SparseMomentumUpdatesOnlyTheRowsOfTheStep) {
  EmbeddingStep e;
  MomentumOptimizer opt(0.5, 0.9);
  // Row 1: accum 1, var 2 - 0.5. Then row 2 alone: row 1 keeps accum 1 and
  // its value (a dense step would decay it to 0.9 and move the row by
  // 0.45). Then row 0 twice, summed: accum 2, var 1 - 0.5 * 2.
  TW_ASSERT_OK(e.Train(opt, {{1}, {2}, {0, 0}}));
  EXPECT_NE(e.s.graph()->FindNode("Momentum/update_emb/ResourceSparseApplyMomentum"), nullptr);
  std::vector<Tensor> out;
  TW_ASSERT_OK(e.session->Run({e.emb.value(e.s), opt.GetSlot(e.emb, "momentum").value(e.s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {0, 0, 1.5f, 1.5f, 2.5f, 2.5f}));
  EXPECT_THAT(out[1], TensorIs<float>({3, 2}, {2, 2, 1, 1, 1, 1}));
}

TEST(OptimizerTest, SparseAdagradSumsRepeatedRowsFirst) {
  EmbeddingStep e;
  AdagradOptimizer opt(0.5);
  TW_ASSERT_OK(e.Train(opt, {{2, 2}}));
  std::vector<Tensor> out;
  TW_ASSERT_OK(e.session->Run({e.emb.value(e.s)}, &out));
  // Row 2's gradient 2: accum 0.1 + 4, var 3 - 0.5 * 2 / sqrt(4.1).
  const float row2 = 3 - 0.5f * 2 / std::sqrt(4.1f);
  EXPECT_THAT(out[0], TensorNear<float>({3, 2}, {1, 1, 2, 2, row2, row2}, 1e-6));
}

// TF's sparse RMSProp: ms and mom move only on the rows of the step.
TEST(OptimizerTest, SparseRMSPropMovesOnlyTheRowsOfTheStep) {
  EmbeddingStep e;
  RMSPropOptimizer opt(0.5, /*decay=*/0.9, /*momentum=*/0.5);
  // Row 1 (g 1): ms 1, mom 0.5 * 1 / sqrt(1) = 0.5, var 2 - 0.5. Then row 2
  // alone, the same; row 1 keeps ms 1, mom 0.5 and its value (a dense step
  // would make them 0.9 and 0.25 and move the row to 1.25). Then row 0
  // twice, summed (g 2): ms 1 + (4 - 1) * 0.1 = 1.3, mom 0.5 * 2 /
  // sqrt(1.3), var 1 - mom.
  TW_ASSERT_OK(e.Train(opt, {{1}, {2}, {0, 0}}));
  EXPECT_NE(e.s.graph()->FindNode("RMSProp/update_emb/ResourceSparseApplyRMSProp"), nullptr);
  std::vector<Tensor> out;
  TW_ASSERT_OK(e.session->Run({e.emb.value(e.s), opt.GetSlot(e.emb, "rms").value(e.s),
                               opt.GetSlot(e.emb, "momentum").value(e.s)},
                              &out));
  const float mom0 = 1 / std::sqrt(1.3f);
  EXPECT_THAT(out[0],
              TensorNear<float>({3, 2}, {1 - mom0, 1 - mom0, 1.5f, 1.5f, 2.5f, 2.5f}, 1e-6));
  EXPECT_THAT(out[1], TensorNear<float>({3, 2}, {1.3f, 1.3f, 1, 1, 1, 1}, 1e-6));
  EXPECT_THAT(out[2], TensorNear<float>({3, 2}, {mom0, mom0, 0.5f, 0.5f, 0.5f, 0.5f}, 1e-6));
}

TEST(OptimizerTest, VariablesWithoutGradientAreSkipped) {
  Scope s = Scope::NewRootScope();
  Variable used = GetVariable(s, "used", TensorShape({}), DT_FLOAT, initializers::Constant(1.f));
  Variable unused =
      GetVariable(s, "unused", TensorShape({}), DT_FLOAT, initializers::Constant(1.f));
  GradientDescentOptimizer opt(1.0);
  std::vector<GradAndVar> grads = opt.ComputeGradients(s, used.value());
  TW_ASSERT_OK(s.status());
  EXPECT_TRUE(grads[1].grad.is_none());
  EXPECT_TRUE(opt.ApplyGradients(s, grads).valid());
  TW_ASSERT_OK(s.status());
  std::vector<GradAndVar> none = {grads[1]};
  EXPECT_FALSE(opt.ApplyGradients(s, none).valid());
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "No gradients provided for any variable: [unused]"));
}

TEST(OptimizerTest, LearningRateMayBeATensor) {
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w", TensorShape({}), DT_FLOAT, initializers::Constant(1.f));
  Output lr = ops::Placeholder(s, DT_FLOAT);
  GradientDescentOptimizer opt(lr);
  Operation train = opt.Minimize(s, ops::Mul(s, w.value(), 3.f));
  TW_ASSERT_OK(s.status());
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({{lr, 0.25f}}, {}, {train}, &out));
  TW_ASSERT_OK(session.Run({w.value(s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {0.25f}));  // 1 - 0.25 * 3
}

TEST(ClipByGlobalNormTest, ScalesDownOnlyAboveTheBound) {
  Scope s = Scope::NewRootScope();
  Output a = ops::Const(s, {3.f}), b = ops::Const(s, {{4.f}});
  // Global norm 5: clipped to 2.5 halves every tensor; a bound of 10 keeps them.
  absl::StatusOr<ClippedGradients> c = ClipByGlobalNorm(s, {a, Gradient(), b}, 2.5);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<ClippedGradients> kept = ClipByGlobalNorm(s, {a, b}, 10.0);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE(c->tensors[1].is_none());
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run(
      {c->global_norm, c->tensors[0].dense(), c->tensors[2].dense(), kept->tensors[0].dense()},
      &out));
  EXPECT_THAT(out[0], TensorNear<float>({}, {5.f}, 1e-6));
  EXPECT_THAT(out[1], TensorNear<float>({1}, {1.5f}, 1e-6));
  EXPECT_THAT(out[2], TensorNear<float>({1, 1}, {2.f}, 1e-6));
  EXPECT_THAT(out[3], TensorNear<float>({1}, {3.f}, 1e-6));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
