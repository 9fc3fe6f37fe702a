// The quadrants model under Towerflow's testing library: every weight gets a
// gradient, one batch is memorized on one tower and on two, and the
// predictions then are the labels.
#include "quadrants_model.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/model_fn_harness.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"

namespace {

using ::towerflow::Literal;
using ::towerflow::PredictionMap;
using ::towerflow::Tensor;
using ::towerflow::TensorEq;
using ::towerflow::TensorNear;
using ::towerflow::testing::IsOk;
using ::towerflow::testing::ModelFnHarness;
using ::towerflow::testing::ModelFnHarnessOptions;

// Eight points, two in each quadrant.
const Tensor kPoints = Literal<float>({8, 2}, {0.5, 0.5, 0.9, 0.1,      // 0
                                               -0.5, 0.5, -0.1, 0.9,    // 1
                                               -0.5, -0.5, -0.9, -0.2,  // 2
                                               0.5, -0.5, 0.2, -0.9});  // 3
const Tensor kQuadrants = Literal<int32_t>({8}, {0, 0, 1, 1, 2, 2, 3, 3});

TEST(MakePointsTest, LabelsAreTheQuadrants) {
  Tensor points, quadrants;
  quadrants::MakePoints(1000, 7, &points, &quadrants);
  const float* p = points.data<float>();
  for (int i = 0; i < 1000; ++i) {
    const int want = p[2 * i + 1] >= 0 ? (p[2 * i] >= 0 ? 0 : 1) : (p[2 * i] < 0 ? 2 : 3);
    ASSERT_EQ(quadrants.data<int32_t>()[i], want) << "point " << i;
  }
}

class QuadrantsModelTest : public ::testing::TestWithParam<int> {
 protected:
  std::unique_ptr<ModelFnHarness> Harness() {
    ModelFnHarnessOptions options;
    options.num_towers = GetParam();
    options.params.values["learning_rate"] = 0.05;
    return std::make_unique<ModelFnHarness>(
        quadrants::QuadrantsModel, std::map<std::string, Tensor>{{"points", kPoints}},
        std::map<std::string, Tensor>{{"quadrant", kQuadrants}}, options);
  }
};

TEST_P(QuadrantsModelTest, EveryWeightGetsAGradient) {
  EXPECT_THAT(Harness()->CheckEveryTrainableVariableHasGradient(), IsOk());
}

TEST_P(QuadrantsModelTest, MemorizesABatchAndPredictsItsLabels) {
  std::unique_ptr<ModelFnHarness> harness = Harness();
  // Cross-entropy over 4 classes starts near ln 4 = 1.39.
  EXPECT_THAT(harness->CheckLossDecreases(/*steps=*/200, /*max_ratio=*/0.1), IsOk());
  TW_ASSERT_OK_AND_ASSIGN(towerflow::MetricMap metrics, harness->Evaluate());
  EXPECT_EQ(metrics["accuracy"], 1.0);
  EXPECT_EQ(metrics["global_step"], 200);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<PredictionMap> rows, harness->Predict());
  ASSERT_EQ(rows.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_THAT(rows[i]["quadrant"],
                TensorEq(towerflow::Scalar<int64_t>(kQuadrants.data<int32_t>()[i])))
        << "point " << i;
    // The probabilities of a row sum to one.
    const float* p = rows[i]["probabilities"].data<float>();
    EXPECT_THAT(Literal<float>({1}, {p[0] + p[1] + p[2] + p[3]}),
                TensorNear(Literal<float>({1}, {1}), 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoTowers, QuadrantsModelTest, ::testing::Values(1, 2));

}  // namespace
