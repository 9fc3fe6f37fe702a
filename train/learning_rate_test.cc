// Schedules against values computed by hand from their formulas.
#include "train/learning_rate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace train {
namespace {

// The schedule's value at each step, fed as an int64 global step.
std::vector<float> At(const std::function<Output(const Scope&, const Output&)>& schedule,
                      const std::vector<int64_t>& steps) {
  Scope s = Scope::NewRootScope();
  Output step = ops::Placeholder(s, DT_INT64);
  Output lr = schedule(s, step);
  EXPECT_TRUE(s.ok()) << s.status();
  ClientSession session(s);
  std::vector<float> out;
  for (int64_t v : steps) {
    std::vector<Tensor> t;
    EXPECT_TRUE(session.Run({{step, Scalar<int64_t>(v)}}, {lr}, &t).ok());
    out.push_back(t[0].data<float>()[0]);
  }
  return out;
}

using ::testing::ElementsAre;
using ::testing::FloatNear;

TEST(LearningRateTest, ExponentialDecay) {
  // 0.1 * 0.5^(150/100) = 0.0353553; staircase: 0.1 * 0.5^1 = 0.05.
  EXPECT_THAT(
      At([](const Scope& s, const Output& x) { return ExponentialDecay(s, 0.1, x, 100, 0.5); },
         {0, 150, 200}),
      ElementsAre(FloatNear(0.1f, 1e-7), FloatNear(0.0353553f, 1e-7), FloatNear(0.025f, 1e-7)));
  EXPECT_THAT(At([](const Scope& s,
                    const Output& x) { return ExponentialDecay(s, 0.1, x, 100, 0.5, true); },
                 {99, 150, 200}),
              ElementsAre(FloatNear(0.1f, 1e-7), FloatNear(0.05f, 1e-7), FloatNear(0.025f, 1e-7)));
}

TEST(LearningRateTest, PiecewiseConstant) {
  EXPECT_THAT(At(
                  [](const Scope& s, const Output& x) {
                    return PiecewiseConstant(s, x, {100, 200}, {1.0, 0.5, 0.1});
                  },
                  {0, 100, 101, 200, 201}),
              ElementsAre(1.0f, 1.0f, 0.5f, 0.5f, 0.1f));
  Scope s = Scope::NewRootScope();
  PiecewiseConstant(s, ops::Const(s, int64_t{1}), {1, 2}, {1.0});
  EXPECT_THAT(s.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            "needs one more value than boundaries"));
}

TEST(LearningRateTest, PolynomialDecay) {
  // (0.1 - 0.01) * (1 - 50/100)^2 + 0.01 = 0.0325; past decay_steps: 0.01.
  EXPECT_THAT(
      At([](const Scope& s, const Output& x) { return PolynomialDecay(s, 0.1, x, 100, 0.01, 2.0); },
         {0, 50, 200}),
      ElementsAre(FloatNear(0.1f, 1e-7), FloatNear(0.0325f, 1e-7), FloatNear(0.01f, 1e-7)));
}

TEST(LearningRateTest, CosineDecay) {
  // 0.1 * 0.5 (1 + cos(pi / 2)) = 0.05; with alpha 0.1 the floor is 0.01.
  EXPECT_THAT(At([](const Scope& s, const Output& x) { return CosineDecay(s, 0.1, x, 100); },
                 {0, 50, 100, 300}),
              ElementsAre(FloatNear(0.1f, 1e-7), FloatNear(0.05f, 1e-7), FloatNear(0.f, 1e-7),
                          FloatNear(0.f, 1e-7)));
  EXPECT_THAT(
      At([](const Scope& s, const Output& x) { return CosineDecay(s, 0.1, x, 100, 0.1); }, {100}),
      ElementsAre(FloatNear(0.01f, 1e-7)));
}

TEST(LearningRateTest, LinearWarmup) {
  EXPECT_THAT(
      At([](const Scope& s,
            const Output& x) { return LinearWarmup(s, ops::Const(s, 0.4f), x, 10); },
         {0, 5, 10, 20}),
      ElementsAre(0.f, FloatNear(0.2f, 1e-7), FloatNear(0.4f, 1e-7), FloatNear(0.4f, 1e-7)));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
