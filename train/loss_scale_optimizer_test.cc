// LossScaleOptimizer against TF 1.x's MixedPrecisionLossScaleOptimizer
// (TF 2.21, tf.compat.v1.mixed_precision with DynamicLossScale(
// initial_loss_scale=4, increment_period=2, multiplier=2)) on
// loss = sum(w * w * x), w = [1, 2], x fed each step: TF's weights, slots,
// loss scale, good steps and global step after each step. Step 3 feeds inf
// and step 5 feeds 1e38, whose scaled gradient overflows: both are skipped.
#include "train/loss_scale_optimizer.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/training_ops.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/optimizers.h"
#include "train/saver.h"

namespace towerflow {
namespace train {
namespace {

using testing::StatusIs;

struct Step {
  std::vector<float> x;
  std::vector<float> w;
  float scale;
  int64_t good_steps, global_step;
  std::vector<std::vector<float>> slots;
};

struct Model {
  Scope s = Scope::NewRootScope();
  Output x;
  Variable w, global_step;
  Operation train;
};

void Build(Model* m, std::shared_ptr<Optimizer> inner, LossScaleOptimizer** opt_out,
           std::unique_ptr<LossScaleOptimizer>* holder, LossScale scale) {
  m->x = ops::Placeholder(m->s.WithOpName("x"), DT_FLOAT);
  m->w = GetVariable(m->s, "w", TensorShape({2}), DT_FLOAT, initializers::Constant({1.f, 2.f}));
  const Output loss =
      ops::Sum(m->s, ops::Mul(m->s, ops::Mul(m->s, m->w.value(), m->w.value()), m->x), 0);
  m->global_step = GetOrCreateGlobalStep(m->s);
  *holder = std::make_unique<LossScaleOptimizer>(std::move(inner), scale);
  *opt_out = holder->get();
  m->train = (*holder)->Minimize(m->s, loss, m->global_step);
}

void ExpectSteps(std::shared_ptr<Optimizer> inner, const std::vector<std::string>& slot_names,
                 const std::vector<Step>& steps) {
  Model m;
  LossScaleOptimizer* opt;
  std::unique_ptr<LossScaleOptimizer> holder;
  Build(&m, std::move(inner), &opt, &holder, LossScale::Dynamic(4, 2, 2));
  TW_ASSERT_OK(m.s.status());
  ClientSession session(m.s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.s)}, &out));
  std::vector<Output> fetches = {m.w.value(m.s), opt->current_loss_scale().value(m.s),
                                 opt->good_steps().value(m.s), m.global_step.value(m.s)};
  for (const std::string& name : slot_names) {
    const Variable slot = opt->GetSlot(m.w, name);
    ASSERT_TRUE(slot.valid()) << name;
    fetches.push_back(slot.value(m.s));
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    const Step& e = steps[i];
    TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {e.x[0], e.x[1]})}}, {}, {m.train}, &out));
    TW_ASSERT_OK(session.Run(fetches, &out));
    EXPECT_THAT(out[0], TensorNear(Literal<float>({2}, e.w), 2e-6, 2e-6));
    EXPECT_THAT(out[1], TensorIs<float>({}, {e.scale}));
    EXPECT_THAT(out[2], TensorIs<int64_t>({}, {e.good_steps}));
    EXPECT_THAT(out[3], TensorIs<int64_t>({}, {e.global_step}));
    for (size_t k = 0; k < e.slots.size(); ++k) {
      EXPECT_THAT(out[4 + k], TensorNear(Literal<float>({2}, e.slots[k]), 2e-6, 2e-6))
          << slot_names[k];
    }
  }
}

constexpr float kInf = INFINITY;

TEST(LossScaleOptimizerTest, MomentumAsTensorFlow) {
  ExpectSteps(std::make_shared<MomentumOptimizer>(0.1, 0.9), {"momentum"},
              {
                  {{1, 1}, {0.8f, 1.6f}, 4, 1, 1, {{2.0f, 4.0f}}},
                  {{0.5f, -1}, {0.54f, 1.56f}, 8, 0, 2, {{2.6f, 0.39999986f}}},
                  {{1, 2}, {0.198f, 0.90000004f}, 8, 1, 3, {{3.42f, 6.6f}}},
                  {{kInf, 1}, {0.198f, 0.90000004f}, 4, 0, 3, {{3.42f, 6.6f}}},
                  {{1, 1}, {-0.1494f, 0.12600005f}, 4, 1, 4, {{3.474f, 7.74f}}},
                  {{1e38f, 1}, {-0.1494f, 0.12600005f}, 2, 0, 4, {{3.474f, 7.74f}}},
                  {{2, 0.5f}, {-0.40229997f, -0.5831999f}, 2, 1, 5, {{2.5289998f, 7.0919995f}}},
                  {{1, 1}, {-0.5494499f, -1.1048399f}, 4, 0, 6, {{1.4714997f, 5.2163997f}}},
                  {{1, 1}, {-0.5719949f, -1.353348f}, 4, 1, 7, {{0.2254498f, 2.4850795f}}},
              });
}

TEST(LossScaleOptimizerTest, AdamAsTensorFlow) {
  ExpectSteps(std::make_shared<AdamOptimizer>(0.1), {"m", "v"},
              {
                  {{1, 1},
                   {0.90000004f, 1.9f},
                   4,
                   1,
                   1,
                   {{0.20000005f, 0.4000001f}, {0.0039999485f, 0.015999794f}}},
                  {{0.5f, -1},
                   {0.808352f, 1.9026982f},
                   8,
                   0,
                   2,
                   {{0.27000007f, -0.01999998f}, {0.0048059383f, 0.030423608f}}},
                  {{1, 2},
                   {0.7134186f, 1.8521876f},
                   8,
                   1,
                   3,
                   {{0.40467048f, 0.7430795f}, {0.007414831f, 0.088316605f}}},
                  {{kInf, 1},
                   {0.7134186f, 1.8521876f},
                   4,
                   0,
                   3,
                   {{0.40467048f, 0.7430795f}, {0.007414831f, 0.088316605f}}},
                  {{1, 1},
                   {0.6175628f, 1.7923774f},
                   4,
                   1,
                   4,
                   {{0.5068872f, 1.0392091f}, {0.009443254f, 0.10195051f}}},
                  {{1e38f, 1},
                   {0.6175628f, 1.7923774f},
                   2,
                   0,
                   4,
                   {{0.5068872f, 1.0392091f}, {0.009443254f, 0.10195051f}}},
                  {{2, 0.5f},
                   {0.52024156f, 1.7330642f},
                   2,
                   1,
                   5,
                   {{0.70322365f, 1.1145259f}, {0.015535874f, 0.10506114f}}},
                  {{1, 1},
                   {0.42581165f, 1.6679074f},
                   4,
                   0,
                   6,
                   {{0.7369496f, 1.3496863f}, {0.01660293f, 0.116969965f}}},
                  {{1, 1},
                   {0.3347268f, 1.5986041f},
                   4,
                   1,
                   7,
                   {{0.748417f, 1.5482992f}, {0.01731158f, 0.12798052f}}},
              });
}

// RMSProp's skip restores var and its momentum from reads taken before the
// update (no rate makes its step the identity): a skipped step leaves every
// slot and the weights as they were, bit for bit.
TEST(LossScaleOptimizerTest, SkippedStepsLeaveRmsPropWithMomentumUnchanged) {
  Model m;
  LossScaleOptimizer* opt;
  std::unique_ptr<LossScaleOptimizer> holder;
  Build(&m, std::make_shared<RMSPropOptimizer>(0.01, 0.9, 0.5), &opt, &holder,
        LossScale::Dynamic(4, 2, 2));
  TW_ASSERT_OK(m.s.status());
  ClientSession session(m.s);
  std::vector<Tensor> before, after;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.s)}, &before));
  const std::vector<Output> state = {m.w.value(m.s), opt->GetSlot(m.w, "rms").value(m.s),
                                     opt->GetSlot(m.w, "momentum").value(m.s),
                                     m.global_step.value(m.s)};
  TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {1, 1})}}, {}, {m.train}, &before));
  TW_ASSERT_OK(session.Run(state, &before));
  EXPECT_THAT(before[3], TensorIs<int64_t>({}, {1}));
  TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {NAN, 1})}}, {}, {m.train}, &after));
  TW_ASSERT_OK(session.Run(state, &after));
  for (int i = 0; i < 4; ++i) EXPECT_THAT(after[i], TensorEq(before[i])) << state[i].name();
  TW_ASSERT_OK(session.Run({opt->current_loss_scale().value(m.s)}, &after));
  EXPECT_THAT(after[0], TensorIs<float>({}, {2}));
}

// The scale stops at 1; a grown scale that is not finite is not taken; a
// fixed scale applies every step (TF's FixedLossScale checks nothing).
TEST(LossScaleOptimizerTest, ScaleBounds) {
  Model m;
  LossScaleOptimizer* opt;
  std::unique_ptr<LossScaleOptimizer> holder;
  Build(&m, std::make_shared<GradientDescentOptimizer>(0.0), &opt, &holder,
        LossScale::Dynamic(2, 1, 3.0e38));
  TW_ASSERT_OK(m.s.status());
  ClientSession session(m.s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.s)}, &out));
  const Output scale = opt->current_loss_scale().value(m.s);
  TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {kInf, 1})}}, {scale}, {m.train}, &out));
  TW_ASSERT_OK(session.Run({scale}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {1}));  // max(2 / 3e38, 1)
  // Small inputs keep the gradients under 3e38 times the scale finite.
  const Tensor tiny = Literal<float>({2}, {1e-30f, 1e-30f});
  TW_ASSERT_OK(session.Run({{m.x, tiny}}, {}, {m.train}, &out));
  TW_ASSERT_OK(session.Run({scale}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {3.0e38f}));
  TW_ASSERT_OK(session.Run({{m.x, tiny}}, {}, {m.train}, &out));
  TW_ASSERT_OK(session.Run({scale, opt->good_steps().value(m.s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {3.0e38f}));  // 9e76 is not a float
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {0}));

  Model f;
  LossScaleOptimizer* fixed;
  std::unique_ptr<LossScaleOptimizer> fixed_holder;
  Build(&f, std::make_shared<GradientDescentOptimizer>(0.1), &fixed, &fixed_holder,
        LossScale::Fixed(8));
  TW_ASSERT_OK(f.s.status());
  EXPECT_FALSE(fixed->current_loss_scale().valid());
  ClientSession fs(f.s);
  TW_ASSERT_OK(fs.Run({}, {}, {GlobalVariablesInitializer(f.s)}, &out));
  TW_ASSERT_OK(fs.Run({{f.x, Literal<float>({2}, {1, 1})}}, {}, {f.train}, &out));
  TW_ASSERT_OK(fs.Run({f.w.value(f.s), fixed->loss_scale(f.s)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2}, {0.8f, 1.6f}, 1e-6));
  EXPECT_THAT(out[1], TensorIs<float>({}, {8}));
}

TEST(LossScaleOptimizerTest, StateIsSavedAndRestored) {
  const std::string dir = testing::MakeTempDir("loss_scale");
  Model m;
  LossScaleOptimizer* opt;
  std::unique_ptr<LossScaleOptimizer> holder;
  Build(&m, std::make_shared<MomentumOptimizer>(0.1, 0.9), &opt, &holder,
        LossScale::Dynamic(4, 2, 2));
  TW_ASSERT_OK(m.s.status());
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(m.s));
  ClientSession session(m.s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.s)}, &out));
  // Two good steps (scale 4 -> 8), then one good step (good_steps 1).
  for (int i = 0; i < 3; ++i) {
    TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {1, 1})}}, {}, {m.train}, &out));
  }
  TW_ASSERT_OK_AND_ASSIGN(std::string path, saver->Save(session, dir, 3));
  ClientSession fresh(m.s);
  TW_ASSERT_OK(fresh.Run({}, {}, {GlobalVariablesInitializer(m.s)}, &out));
  TW_ASSERT_OK(saver->Restore(fresh, path));
  TW_ASSERT_OK(
      fresh.Run({opt->current_loss_scale().value(m.s), opt->good_steps().value(m.s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {8}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {1}));
  // The next good step grows the scale, as it would have without the restart.
  TW_ASSERT_OK(fresh.Run({{m.x, Literal<float>({2}, {1, 1})}}, {}, {m.train}, &out));
  TW_ASSERT_OK(fresh.Run({opt->current_loss_scale().value(m.s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {16}));
}

TEST(LossScaleOptimizerTest, RefusesAnOptimizerThatCannotSkip) {
  class Plain : public Optimizer {
   public:
    Plain() : Optimizer("Plain", 0.1) {}

   protected:
    Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override {
      return ops::ResourceApplyGradientDescent(scope, var.handle(), LearningRate(scope, DT_FLOAT),
                                               grad);
    }
  };
  Model m;
  LossScaleOptimizer* opt;
  std::unique_ptr<LossScaleOptimizer> holder;
  Build(&m, std::make_shared<Plain>(), &opt, &holder, LossScale::Dynamic());
  EXPECT_THAT(m.s.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     "Plain cannot (Optimizer::SupportsSkipping)"));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
