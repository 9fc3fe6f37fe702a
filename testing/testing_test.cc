// The public testing library: the matchers' verdicts and messages, and the
// model_fn harness on TF's replicate_model_fn_test model (c = 10,
// x = [[1], [2]], y = [[1], [2]]) with a mean absolute loss, so one step
// of GradientDescent(0.1) moves c by 0.1 * mean(x) = 0.15.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "estimator/model_fn.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "testing/files.h"
#include "testing/model_fn_harness.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::towerflow::testing::IsOk;
using ::towerflow::testing::MakeTempDir;
using ::towerflow::testing::ModelFnHarness;
using ::towerflow::testing::ModelFnHarnessOptions;
using ::towerflow::testing::ReadFileOrDie;
using ::towerflow::testing::StatusIs;

// What `matcher` says about `value` when it does not match.
template <typename M, typename T>
std::string Explain(const M& matcher, const T& value) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(matcher, value, &listener));
  return listener.str();
}

TEST(TensorMatchersTest, TensorEqComparesDtypeShapeAndEveryValue) {
  const Tensor expected = Literal<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(Literal<float>({2, 2}, {1, 2, 3, 4}), TensorEq(expected));
  EXPECT_EQ(Explain(TensorEq(expected), Literal<float>({2, 2}, {1, 2.5, 3, 5})),
            "2 of 4 values differ; the first at [0, 1] (flat 1): 2.5 where 2 was expected");
  EXPECT_EQ(Explain(TensorEq(expected), Literal<float>({4}, {1, 2, 3, 4})),
            "shape [4] where [2,2] was expected");
  EXPECT_EQ(Explain(TensorEq(expected), Literal<int32_t>({2, 2}, {1, 2, 3, 4})),
            "dtype int32 where float was expected");
  // The shape-and-values form is the same matcher.
  EXPECT_THAT(Literal<float>({2, 2}, {1, 2, 3, 4}), TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(Explain(TensorIs<float>({2, 2}, {1, 2, 3, 5}), expected),
            "1 of 4 values differ; the first at [1, 1] (flat 3): 4 where 5 was expected");
  EXPECT_EQ(Explain(TensorIs<float>({2, 2}, {1, 2, 3}), expected),
            "the expected values are 3 for shape [2,2]");
  EXPECT_THAT(Literal<float>({2}, {0.5, 0.2501}), TensorNear<float>({2}, {0.5, 0.25}, 1e-3));
  EXPECT_EQ(Explain(TensorEq(Literal<std::string>({2}, {"a", "b"})),
                    Literal<std::string>({2}, {"a", "c"})),
            "1 of 2 values differ; the first at [1] (flat 1): \"c\" where \"b\" was expected");
}

TEST(TensorMatchersTest, TensorNearAllowsAtolPlusRtolOfTheExpectedValue) {
  const Tensor expected = Literal<double>({3}, {1, 100, -2});
  // Tolerances 0.1 + 0.01 * |e|: 0.11, 1.1, 0.12.
  EXPECT_THAT(Literal<double>({3}, {1.1, 101, -2.11}), TensorNear(expected, 0.1, 0.01));
  EXPECT_EQ(Explain(TensorNear(expected, 0.1, 0.01), Literal<double>({3}, {1.1, 101.25, -2})),
            "1 of 3 values differ; the first at [1] (flat 1): 101.25 where 100 was expected "
            "(|difference| 1.25 > tolerance 1.1)");
  // TF's ExpectClose: NaN matches NaN; an infinity only itself.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(Literal<double>({2}, {nan, inf}), TensorNear(Literal<double>({2}, {nan, inf}), 1));
  EXPECT_THAT(Literal<double>({1}, {nan}), Not(TensorNear(Literal<double>({1}, {0}), 1)));
  EXPECT_THAT(Literal<double>({1}, {inf}), Not(TensorNear(Literal<double>({1}, {-inf}), 1)));
}

TEST(FilesTest, MakeTempDirIsFreshAndEmptyAndFilesReadBack) {
  const std::string dir = MakeTempDir("files_test");
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  { std::ofstream(dir + "/log.csv") << "epoch,loss\n0,0.5\n"; }
  EXPECT_EQ(ReadFileOrDie(dir + "/log.csv"), "epoch,loss\n0,0.5\n");
  // Made again, the directory is empty: nothing of the run before is left.
  EXPECT_EQ(MakeTempDir("files_test"), dir);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(StatusMatchersTest, StatusIsAndIsOk) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  const absl::Status error = absl::NotFoundError("no checkpoint in /tmp/x");
  EXPECT_THAT(error, Not(IsOk()));
  EXPECT_EQ(Explain(IsOk(), error), "whose status is NOT_FOUND: no checkpoint in /tmp/x");
  EXPECT_THAT(error, StatusIs(absl::StatusCode::kNotFound, "/tmp/x"));
  EXPECT_THAT(error, Not(StatusIs(absl::StatusCode::kNotFound, "/tmp/y")));
  EXPECT_THAT(absl::StatusOr<int>(error), StatusIs(absl::StatusCode::kNotFound));
}

// predictions = x * c; loss = mean |predictions - y|; Params: learning_rate,
// and `unused` for a variable the loss never reads.
EstimatorSpec LinearModel(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                          ModeKeys mode, const Params& params) {
  Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(10.0));
  if (params.Get("unused") != 0) {
    GetVariable(s, "unused", TensorShape({2}), DT_DOUBLE, initializers::Constant(1.0));
  }
  Output predictions = ops::Mul(s, features.at("x"), c.value());
  EstimatorSpec spec(mode);
  spec.predictions["predictions"] = predictions;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Mean(s, ops::Abs(s, ops::Sub(s, predictions, labels.at("y"))), {0, 1});
  spec.eval_metric_ops["mean_prediction"] = train::Mean(s, predictions);
  if (mode != ModeKeys::kTrain) return spec;
  TowerOptimizer opt(
      std::make_shared<train::GradientDescentOptimizer>(params.Get("learning_rate", 0.1)));
  spec.train_op = opt.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

std::unique_ptr<ModelFnHarness> LinearHarness(int num_towers, Params params = {}) {
  ModelFnHarnessOptions options;
  options.num_towers = num_towers;
  options.params = std::move(params);
  return std::make_unique<ModelFnHarness>(
      LinearModel, std::map<std::string, Tensor>{{"x", Literal<double>({2, 1}, {1, 2})}},
      std::map<std::string, Tensor>{{"y", Literal<double>({2, 1}, {1, 2})}}, options);
}

class ModelFnHarnessTest : public ::testing::TestWithParam<int> {};

TEST_P(ModelFnHarnessTest, TrainsEvaluatesAndPredictsTheBatch) {
  auto harness = LinearHarness(/*num_towers=*/GetParam());
  // As the Estimator: nothing to evaluate before training wrote a checkpoint.
  EXPECT_THAT(harness->Evaluate(), StatusIs(absl::StatusCode::kNotFound));
  // Each step's loss, from c = 10, 9.85, 9.7.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> losses, harness->Train(3));
  ASSERT_EQ(losses.size(), 3u);
  EXPECT_NEAR(losses[0], 13.5, 1e-12);
  EXPECT_NEAR(losses[1], 13.275, 1e-12);
  EXPECT_NEAR(losses[2], 13.05, 1e-12);
  // c = 9.55 after three steps (metrics are float32, as TF's).
  TW_ASSERT_OK_AND_ASSIGN(MetricMap after, harness->Evaluate());
  EXPECT_NEAR(after["loss"], 12.825, 1e-5);
  EXPECT_NEAR(after["mean_prediction"], 14.325, 1e-5);
  EXPECT_DOUBLE_EQ(after["global_step"], 3);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<PredictionMap> rows, harness->Predict());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0]["predictions"], TensorNear(Literal<double>({1}, {9.55}), 1e-12));
  EXPECT_THAT(rows[1]["predictions"], TensorNear(Literal<double>({1}, {19.1}), 1e-12));
  // Training goes on from the checkpoint.
  TW_ASSERT_OK_AND_ASSIGN(losses, harness->Train(1));
  EXPECT_NEAR(losses[0], 12.825, 1e-12);
}

TEST_P(ModelFnHarnessTest, EveryTrainableVariableGetsAGradient) {
  EXPECT_THAT(LinearHarness(GetParam())->CheckEveryTrainableVariableHasGradient(), IsOk());
  Params params;
  params.values["unused"] = 1;
  EXPECT_THAT(LinearHarness(GetParam(), params)->CheckEveryTrainableVariableHasGradient(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "the loss has no gradient for 1 of 2 trainable variables: unused"));
}

TEST_P(ModelFnHarnessTest, LossGoesDownOnABatchItCanMemorize) {
  Params fast;
  fast.values["learning_rate"] = 1.0;  // c = 10, 8.5, 7, ..., 1 after 6 steps: loss 0
  EXPECT_THAT(LinearHarness(GetParam(), fast)->CheckLossDecreases(7, 0.01), IsOk());
  Params frozen;
  frozen.values["learning_rate"] = 0;
  EXPECT_THAT(LinearHarness(GetParam(), frozen)->CheckLossDecreases(5),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "the loss went from 13.5 to 13.5 in 5 steps on one batch"));
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoTowers, ModelFnHarnessTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat(info.param, "Towers");
                         });

TEST(ModelFnHarnessErrorsTest, NamesWhatIsWrong) {
  EXPECT_THAT(LinearHarness(1)->Train(0),
              StatusIs(absl::StatusCode::kInvalidArgument, "steps is 0; at least 1"));
  EXPECT_THAT(LinearHarness(0)->Train(1),
              StatusIs(absl::StatusCode::kInvalidArgument, "num_towers is 0; at least 1"));
}

}  // namespace
}  // namespace towerflow
