// losses::: TF's losses_test.py numbers for each loss, weight and reduction,
// the collections, and gradients of the composite losses against finite
// differences.
#include "layers/losses.h"

#include <cmath>
#include <vector>

#include "framework/tensor_views.h"
#include "gtest/gtest.h"
#include "layers/layers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using losses::LossOptions;
using losses::Reduction;
using ::towerflow::testing::StatusIs;

float Eval(const Scope& root, const Output& loss) {
  EXPECT_EQ(root.status(), absl::OkStatus());
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status st = session.Run({loss}, &out);
  EXPECT_EQ(st, absl::OkStatus());
  return st.ok() ? out[0].scalar<float>()() : NAN;
}

// TF's AbsoluteDifferenceLossTest fixture.
struct AbsoluteDifference : public ::testing::Test {
  Scope root = Scope::NewRootScope();
  Output predictions = ops::Const(root, {{4.f, 8.f, 12.f}, {8.f, 1.f, 3.f}});
  Output labels = ops::Const(root, {{1.f, 9.f, 2.f}, {-5.f, -2.f, 6.f}});
};

TEST_F(AbsoluteDifference, TensorFlowsNumbers) {
  // |errors| = [[3, 1, 10], [13, 3, 3]]: sum 33 over 6 elements.
  EXPECT_NEAR(Eval(root, losses::AbsoluteDifference(root, labels, predictions)), 5.5, 1e-5);
  EXPECT_NEAR(Eval(root, losses::AbsoluteDifference(root, labels, predictions, {.weights = 2.3f})),
              5.5 * 2.3, 1e-5);
  // Per-example weights [1.2, 0]: (14 * 1.2) / 3.
  Output per_example = ops::Const(root, {{1.2f}, {0.f}});
  EXPECT_NEAR(
      Eval(root, losses::AbsoluteDifference(root, labels, predictions, {.weights = per_example})),
      5.6, 1e-5);
  // Per-element weights [[3, 0, 0], [0, 0, 2]]: (9 + 6) / 2.
  Output per_element = ops::Const(root, {{3.f, 0.f, 0.f}, {0.f, 0.f, 2.f}});
  EXPECT_NEAR(
      Eval(root, losses::AbsoluteDifference(root, labels, predictions, {.weights = per_element})),
      7.5, 1e-5);
  // All weights 0: 0, not NaN.
  EXPECT_EQ(Eval(root, losses::AbsoluteDifference(root, labels, predictions, {.weights = 0.f})),
            0.f);
}

TEST_F(AbsoluteDifference, EveryReduction) {
  Output w = ops::Const(root, {{3.f, 0.f, 0.f}, {0.f, 0.f, 2.f}});
  const auto loss = [&](Reduction r) {
    return Eval(root, losses::AbsoluteDifference(root, labels, predictions,
                                                 {.weights = w, .reduction = r}));
  };
  // Weighted losses [[9, 0, 0], [0, 0, 6]]: sum 15, weights sum 5, 6 elements, 2 nonzero.
  EXPECT_NEAR(loss(Reduction::kSum), 15, 1e-5);
  EXPECT_NEAR(loss(Reduction::kMean), 3, 1e-5);
  EXPECT_NEAR(loss(Reduction::kSumOverBatchSize), 2.5, 1e-5);
  EXPECT_NEAR(loss(Reduction::kSumByNonzeroWeights), 7.5, 1e-5);
  EXPECT_NEAR(loss(Reduction::kSumOverNonzeroWeights), 7.5, 1e-5);
  Output none = losses::AbsoluteDifference(root, labels, predictions,
                                           {.weights = w, .reduction = Reduction::kNone});
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({none}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2, 3}, {9, 0, 0, 0, 0, 6}, 0));
}

TEST_F(AbsoluteDifference, NamesAndCollections) {
  Output loss = losses::AbsoluteDifference(root, labels, predictions);
  Output quiet = losses::AbsoluteDifference(root, labels, predictions, {.loss_collection = ""});
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(loss.node()->name(), "absolute_difference/weighted_loss/value");
  EXPECT_EQ(quiet.node()->name(), "absolute_difference_1/weighted_loss/value");
  const std::vector<Output> collected = losses::GetLosses(*root.graph());
  ASSERT_EQ(collected.size(), 1u);
  EXPECT_EQ(collected[0], loss);
}

TEST_F(AbsoluteDifference, BadShapesAreRefused) {
  Output wrong = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  losses::AbsoluteDifference(root, labels, wrong);
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Shapes [2,2] and [2,3] are incompatible"));
  Scope invalid = Scope::NewRootScope();
  losses::MeanSquaredError(invalid, Output(), ops::Const(invalid, 1.f));
  EXPECT_THAT(invalid.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be valid tensors"));
  Scope s = Scope::NewRootScope();
  Output p = ops::Const(s, {{4.f, 8.f, 12.f}, {8.f, 1.f, 3.f}});
  losses::AbsoluteDifference(s, p, p, {.weights = ops::Const(s, {1.f, 2.f})});
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "weights can not be broadcast to values. values.shape=[2,3]. "
                                   "weights.shape=[2]."));
}

TEST(LossesTest, MeanSquaredErrorTensorFlowsNumbers) {
  // TF's MeanSquaredErrorTest: same predictions and labels as above.
  Scope root = Scope::NewRootScope();
  Output predictions = ops::Const(root, {{4.f, 8.f, 12.f}, {8.f, 1.f, 3.f}});
  Output labels = ops::Const(root, {{1.f, 9.f, 2.f}, {-5.f, -2.f, 6.f}});
  EXPECT_NEAR(Eval(root, losses::MeanSquaredError(root, labels, predictions)), 49.5, 1e-3);
  EXPECT_NEAR(Eval(root, losses::MeanSquaredError(root, labels, predictions, {.weights = 2.3f})),
              49.5 * 2.3, 1e-3);
  Output per_example = ops::Const(root, {{1.2f}, {3.4f}});
  EXPECT_NEAR(
      Eval(root, losses::MeanSquaredError(root, labels, predictions, {.weights = per_example})),
      767.8 / 6.0, 1e-3);
}

TEST(LossesTest, HuberLossIsQuadraticThenLinear) {
  Scope root = Scope::NewRootScope();
  Output labels = ops::Const(root, {0.f, 0.f, 0.f, 0.f});
  Output predictions = ops::Const(root, {0.5f, -1.f, 3.f, -2.5f});
  // delta 1: 0.125, 0.5, 2.5, 2 -> mean 1.28125.
  EXPECT_NEAR(Eval(root, losses::HuberLoss(root, labels, predictions)), 1.28125, 1e-6);
  // delta 2: 0.125, 0.5, 2 * (3 - 1) = 4, 2 * (2.5 - 1) = 3 -> sum 7.625.
  EXPECT_NEAR(
      Eval(root, losses::HuberLoss(root, labels, predictions, 2.0, {.reduction = Reduction::kSum})),
      7.625, 1e-6);
}

TEST(LossesTest, SigmoidCrossEntropyWithAndWithoutSmoothing) {
  Scope root = Scope::NewRootScope();
  // TF's SigmoidCrossEntropyLossTest: logits +-100 on the right labels give 0.
  Output logits = ops::Const(root, {{100.f, -100.f, -100.f}, {-100.f, 100.f, -100.f}});
  Output labels = ops::Const(root, {{1, 0, 0}, {0, 1, 0}});
  EXPECT_NEAR(Eval(root, losses::SigmoidCrossEntropy(root, labels, logits)), 0, 1e-6);
  // ... and on all-wrong labels 100 per element.
  Output wrong = ops::Const(root, {{0, 1, 1}, {1, 0, 1}});
  EXPECT_NEAR(Eval(root, losses::SigmoidCrossEntropy(root, wrong, logits)), 100, 1e-3);
  // Smoothing 0.1 on logit 100, label 1: z = 0.95, loss = 100 - 95 = 5;
  // on logit -100, label 0: z = 0.05, loss = 5 too.
  EXPECT_NEAR(Eval(root, losses::SigmoidCrossEntropy(root, labels, logits, 0.1)), 5, 1e-3);
  // A logit of 0 costs log 2 whatever the label.
  Output zero = ops::Const(root, {{0.f}});
  EXPECT_NEAR(Eval(root, losses::SigmoidCrossEntropy(root, ops::Const(root, {{1.f}}), zero)),
              std::log(2.0), 1e-6);
}

TEST(LossesTest, SoftmaxCrossEntropyWithSmoothing) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, {{100.f, -100.f, -100.f}, {-100.f, 100.f, -100.f}});
  Output labels = ops::Const(root, {{1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}});
  EXPECT_NEAR(Eval(root, losses::SoftmaxCrossEntropy(root, labels, logits)), 0, 1e-6);
  // TF's testSoftmaxLabelSmoothing: smoothing 0.1 over 3 classes puts
  // 0.1 / 3 on each wrong class, each costing 200: 400 / 30 per example.
  EXPECT_NEAR(Eval(root, losses::SoftmaxCrossEntropy(root, labels, logits, 0.1)), 400.0 / 30, 1e-3);
  // Per-example weights [1.2, 0]: the second example is left out.
  Output wrong = ops::Const(root, {{0.f, 0.f, 1.f}, {1.f, 0.f, 0.f}});
  EXPECT_NEAR(Eval(root, losses::SoftmaxCrossEntropy(root, wrong, logits, 0,
                                                     {.weights = ops::Const(root, {1.2f, 0.f})})),
              1.2 * 200, 1e-2);
}

TEST(LossesTest, SparseSoftmaxCrossEntropy) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, {{10.f, 0.f, 0.f}, {0.f, 10.f, 0.f}, {0.f, 0.f, 10.f}});
  Output right = ops::Const(root, {0, 1, 2});
  Output wrong = ops::Const(root, {2, 0, 1});
  const double small = std::log1p(2 * std::exp(-10.0));  // -log softmax of the 10
  EXPECT_NEAR(Eval(root, losses::SparseSoftmaxCrossEntropy(root, right, logits)), small, 1e-6);
  EXPECT_NEAR(Eval(root, losses::SparseSoftmaxCrossEntropy(root, wrong, logits)), 10 + small, 1e-5);
  // Weights [1, 2, 0], the default reduction: (10.x + 2 * 10.x) / 2.
  EXPECT_NEAR(Eval(root, losses::SparseSoftmaxCrossEntropy(
                             root, wrong, logits, {.weights = ops::Const(root, {1.f, 2.f, 0.f})})),
              1.5 * (10 + small), 1e-4);
}

TEST(LossesTest, TotalLossAddsRegularization) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1.f, 1.f}});
  Output y = layers::Dense(root, x, 1,
                           {.kernel_initializer = initializers::Constant({1.f, 3.f}),
                            .kernel_regularizer = regularizers::L2(0.5)});
  losses::MeanSquaredError(root, ops::Const(root, {{1.f}}), y);
  Output total = losses::GetTotalLoss(root);
  Output data_only = losses::GetTotalLoss(root.NewSubScope("data"), false);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(total.node()->name(), "total_loss");
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  TW_ASSERT_OK(session.Run({total, data_only}, &out));
  // (4 - 1)^2 = 9, plus 0.5 * (1 + 9) = 5.
  EXPECT_NEAR(out[0].scalar<float>()(), 14, 1e-5);
  EXPECT_NEAR(out[1].scalar<float>()(), 9, 1e-5);
  Scope empty = Scope::NewRootScope();
  losses::GetTotalLoss(empty);
  EXPECT_THAT(empty.status(), StatusIs(absl::StatusCode::kInvalidArgument, "no losses"));
}

TEST(LossesTest, GradientsMatchFiniteDifferences) {
  const Tensor p = Literal<double>({2, 3}, {0.3, -1.2, 2.0, 0.7, -0.4, 3.1});
  const auto check = [&](const std::function<Output(const Scope&, const Output&)>& loss) {
    Scope root = Scope::NewRootScope();
    Output x = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({2, 3}));
    Output y = loss(root, x);
    TW_EXPECT_OK(root.status());
    absl::StatusOr<double> error = ComputeGradientError<double>(root, {x}, {p}, {y});
    TW_EXPECT_OK(error);
    return error.ok() ? *error : 1.0;
  };
  const auto labels = [](const Scope& s) { return ops::Const(s, {{0., 1., 0.}, {1., 0., 0.}}); };
  EXPECT_LT(check([&](const Scope& s, const Output& x) {
              return losses::HuberLoss(s, labels(s), x, 1.0, {.weights = 2.0});
            }),
            1e-6);
  EXPECT_LT(check([&](const Scope& s, const Output& x) {
              return losses::SigmoidCrossEntropy(s, labels(s), x, 0.2);
            }),
            1e-6);
  EXPECT_LT(check([&](const Scope& s, const Output& x) {
              return losses::SoftmaxCrossEntropy(s, labels(s), x, 0.3);
            }),
            1e-6);
  EXPECT_LT(check([&](const Scope& s, const Output& x) {
              return losses::MeanSquaredError(s, labels(s), x, {.reduction = Reduction::kMean});
            }),
            1e-6);
}

}  // namespace
}  // namespace towerflow
