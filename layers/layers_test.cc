// layers::: TF's names, shapes and values with fixed initializers, towers
// sharing weights, regularization, batch norm's moving statistics, dropout,
// and gradients of the composite layers against finite differences.
#include "layers/layers.h"

#include <cmath>
#include <functional>
#include <vector>

#include "framework/tensor_views.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gradients.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

std::vector<std::string> VariableNames(const Scope& s,
                                       absl::string_view key = GraphKeys::kGlobalVariables) {
  std::vector<std::string> names;
  for (const Variable& v : GetVariables(*s.graph(), key)) names.push_back(v.name());
  return names;
}

// Initializes the variables, then fetches `fetches` with `feeds`.
std::vector<Tensor> Fetch(const Scope& root, const std::vector<Output>& fetches,
                          const ClientSession::FeedType& feeds = {},
                          const std::vector<Operation>& targets = {}) {
  ClientSession session(root);
  std::vector<Tensor> out;
  Operation init = GlobalVariablesInitializer(root);
  absl::Status st = session.Run({}, {}, {init}, nullptr);
  if (st.ok()) st = session.Run(feeds, fetches, targets, &out);
  EXPECT_EQ(st, absl::OkStatus());
  return out;
}

TEST(LayersTest, DenseNamesItsVariablesAsTensorFlowDoes) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 4}));
  Output h = layers::Dense(root, x, 3);
  Output y = layers::Dense(root, h, 2, {.use_bias = false});
  Output z = layers::Dense(root, y, 1, {.name = "logits"});
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(VariableNames(root), ElementsAre("dense/kernel", "dense/bias", "dense_1/kernel",
                                               "logits/kernel", "logits/bias"));
  EXPECT_EQ(h.node()->name(), "dense/BiasAdd");
  EXPECT_EQ(y.node()->name(), "dense_1/MatMul");
  EXPECT_EQ(z.shape().DebugString(), "[?,1]");
  // The default initializers: Glorot-uniform kernel, zero bias.
  const Variable kernel = GetVariables(*root.graph())[0];
  EXPECT_EQ(kernel.shape(), TensorShape({4, 3}));
  const Tensor k = Fetch(root, {kernel.value(root)})[0];
  const float limit = std::sqrt(6.0f / (4 + 3));
  for (float v : Values<float>(k)) EXPECT_LE(std::abs(v), limit);
}

TEST(LayersTest, TowersReusingTheVariableScopeShareTheLayersWeights) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 2}));
  layers::Dense(root, layers::Dense(root, x, 3), 1);
  // ReplicateModelFn's second tower: a name scope, the root's variable
  // scope with reuse.
  Scope tower = root.NewSubScope("tower_1").WithVariableScope("", VariableReuse::kReuse);
  Output h = layers::Dense(tower, x, 3);
  Output y = layers::Dense(tower, h, 1);
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(VariableNames(root),
              ElementsAre("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"));
  EXPECT_EQ(h.node()->name(), "tower_1/dense/BiasAdd");
  EXPECT_EQ(y.node()->name(), "tower_1/dense_1/BiasAdd");
  // A third Dense in the tower has no first-tower variable to reuse.
  layers::Dense(tower, y, 1);
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Variable dense_2/kernel does not exist"));
}

TEST(LayersTest, DenseComputesWithFixedInitializers) {
  Scope root = Scope::NewRootScope();
  const layers::DenseOptions options{
      .activation = "relu",
      .kernel_initializer = initializers::Constant({1.f, 2.f, -3.f, 4.f, 5.f, -6.f}),
      .bias_initializer = initializers::Constant(0.5f)};
  Output x2 = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  Output y2 = layers::Dense(root, x2, 3, options);
  // Rank 3: multiplied along the last axis, shape [1, 2, 3].
  Output x3 = ops::Const(root, {{{1.f, 2.f}, {3.f, 4.f}}});
  Output y3 = layers::Dense(root, x3, 3, options);
  TW_ASSERT_OK(root.status());
  const std::vector<Tensor> out = Fetch(root, {y2, y3});
  // [[1, 2], [3, 4]] . [[1, 2, -3], [4, 5, -6]] + 0.5, then relu.
  EXPECT_THAT(out[0], TensorNear<float>({2, 3}, {9.5f, 12.5f, 0.f, 19.5f, 26.5f, 0.f}, 1e-6));
  EXPECT_THAT(out[1], TensorNear<float>({1, 2, 3}, {9.5f, 12.5f, 0.f, 19.5f, 26.5f, 0.f}, 1e-6));
}

TEST(LayersTest, RegularizersAddPenaltiesOncePerWeight) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1.f, 2.f}});
  const layers::DenseOptions options{
      .kernel_initializer = initializers::Constant({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}),
      .kernel_regularizer = regularizers::L2(0.1),
      .bias_regularizer = regularizers::L1(0.5)};
  layers::Dense(root, x, 3, options);
  // Reusing the weights adds no second penalty.
  layers::Dense(root.NewSubScope("tower_1").WithVariableScope("", VariableReuse::kReuse), x, 3,
                options);
  Output total = GetRegularizationLoss(root);
  TW_ASSERT_OK(root.status());
  const std::vector<Output> penalties =
      GetCollection(*root.graph(), GraphKeys::kRegularizationLosses);
  ASSERT_EQ(penalties.size(), 2u);
  EXPECT_EQ(penalties[0].node()->name(), "dense/kernel/Regularizer/Mul");
  EXPECT_EQ(total.node()->name(), "total_regularization_loss");
  const std::vector<Tensor> out = Fetch(root, {penalties[0], penalties[1], total});
  // 0.1 * (1 + 4 + 9 + 16 + 25 + 36) = 9.1; the bias is 0, so its L1 is 0.
  EXPECT_NEAR(out[0].scalar<float>()(), 9.1f, 1e-5);
  EXPECT_NEAR(out[1].scalar<float>()(), 0.f, 1e-7);
  EXPECT_NEAR(out[2].scalar<float>()(), 9.1f, 1e-5);
  // With no penalties the total is 0.
  Scope empty = Scope::NewRootScope();
  EXPECT_NEAR(Fetch(empty, {GetRegularizationLoss(empty)})[0].scalar<float>()(), 0.f, 0);
}

TEST(LayersTest, Conv2DPaddingDilationAndDataFormat) {
  Scope root = Scope::NewRootScope();
  Output image =
      ops::Const(root, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f}, TensorShape({1, 3, 3, 1}));
  const auto ones = initializers::Ones();
  Output valid = layers::Conv2D(root, image, 1, 2, {.kernel_initializer = ones});
  Output same = layers::Conv2D(root, image, 1, 2, {.padding = "SAME", .kernel_initializer = ones});
  Output dilated = layers::Conv2D(root, image, 1, 2,
                                  {.dilation_rate = 2,
                                   .kernel_initializer = ones,
                                   .bias_initializer = initializers::Constant(0.5f)});
  Output nchw = layers::Conv2D(
      root, ops::Reshape(root, image, ops::Const(root, {1, 1, 3, 3})), 2, {2, 1},
      {.data_format = "channels_first", .kernel_initializer = ones, .name = "first"});
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(VariableNames(root),
              ElementsAre("conv2d/kernel", "conv2d/bias", "conv2d_1/kernel", "conv2d_1/bias",
                          "conv2d_2/kernel", "conv2d_2/bias", "first/kernel", "first/bias"));
  EXPECT_EQ(GetVariables(*root.graph())[6].shape(), TensorShape({2, 1, 1, 2}));
  const std::vector<Tensor> out = Fetch(root, {valid, same, dilated, nchw});
  EXPECT_THAT(out[0], TensorNear<float>({1, 2, 2, 1}, {12, 16, 24, 28}, 1e-5));
  // SAME pads at the bottom and right.
  EXPECT_THAT(out[1], TensorNear<float>({1, 3, 3, 1}, {12, 16, 9, 24, 28, 15, 15, 17, 9}, 1e-5));
  // Taps at (0, 0), (0, 2), (2, 0), (2, 2), plus the bias.
  EXPECT_THAT(out[2], TensorNear<float>({1, 1, 1, 1}, {20.5f}, 1e-5));
  // A 2 x 1 kernel, two filters, channels first: [1, 2, 2, 3].
  EXPECT_THAT(out[3],
              TensorNear<float>({1, 2, 2, 3}, {5, 7, 9, 11, 13, 15, 5, 7, 9, 11, 13, 15}, 1e-5));
}

TEST(LayersTest, PoolingFlattenAndGlobalAverage) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(
      root, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f, 11.f, 12.f, 13.f, 14.f, 15.f, 16.f},
      TensorShape({1, 4, 4, 1}));
  Output max = layers::MaxPooling2D(root, x, 2);
  Output avg = layers::AveragePooling2D(root, x, 2);
  Output overlapping = layers::MaxPooling2D(root, x, 2, {.strides = 1});
  Output global = layers::GlobalAveragePooling2D(root, x);
  Output flat = layers::Flatten(root, max);
  Output unknown = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, -1, 3}));
  Output flat_unknown = layers::Flatten(root, unknown);
  TW_ASSERT_OK(root.status());
  EXPECT_EQ(max.node()->name(), "max_pooling2d/MaxPool");
  EXPECT_EQ(overlapping.node()->name(), "max_pooling2d_1/MaxPool");
  EXPECT_EQ(avg.node()->name(), "average_pooling2d/AvgPool");
  EXPECT_EQ(flat.shape().DebugString(), "[1,4]");
  const std::vector<Tensor> out =
      Fetch(root, {max, avg, overlapping, global, flat, flat_unknown},
            {{unknown, Literal<float>({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}});
  EXPECT_THAT(out[0], TensorNear<float>({1, 2, 2, 1}, {6, 8, 14, 16}, 0));
  EXPECT_THAT(out[1], TensorNear<float>({1, 2, 2, 1}, {3.5f, 5.5f, 11.5f, 13.5f}, 1e-6));
  EXPECT_THAT(out[2], TensorNear<float>({1, 3, 3, 1}, {6, 7, 8, 10, 11, 12, 14, 15, 16}, 0));
  EXPECT_THAT(out[3], TensorNear<float>({1, 1}, {8.5f}, 1e-6));
  EXPECT_THAT(out[4], TensorNear<float>({1, 4}, {6, 8, 14, 16}, 0));
  EXPECT_THAT(out[5], TensorNear<float>({2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 0));
}

TEST(LayersTest, DropoutScalesKeptUnitsAndRepeatsWithASeed) {
  const auto build = [](Scope& root, Output* x, Output* flag, Output* train, Output* off,
                        Output* switched) {
    *x = ops::Placeholder(root, DT_FLOAT);
    *flag = ops::PlaceholderWithDefault(root, false, TensorShape());
    *train = layers::Dropout(root, *x, 0.75, {.training = true, .seed = 7});
    *off = layers::Dropout(root, *x, 0.75);
    *switched = layers::Dropout(root, *x, 0.75, {.training = *flag, .seed = 7});
  };
  Scope a = Scope::NewRootScope(), b = Scope::NewRootScope();
  Output xa, fa, ta, oa, sa, xb, fb, tb, ob, sb;
  build(a, &xa, &fa, &ta, &oa, &sa);
  build(b, &xb, &fb, &tb, &ob, &sb);
  TW_ASSERT_OK(a.status());
  const Tensor ones = Filled<float>(TensorShape({4000}), 1.f);
  const std::vector<Tensor> ra = Fetch(a, {ta, oa, sa}, {{xa, ones}});
  const std::vector<Tensor> rb = Fetch(b, {tb}, {{xb, ones}});
  // Kept units are scaled by 1 / (1 - 0.75) = 4; about a quarter is kept.
  int kept = 0;
  for (float v : Values<float>(ra[0])) {
    ASSERT_TRUE(v == 0.f || v == 4.f) << v;
    kept += v == 4.f;
  }
  EXPECT_GT(kept, 900);
  EXPECT_LT(kept, 1100);
  // The same seed in the same graph draws the same units.
  EXPECT_EQ(Values<float>(ra[0]), Values<float>(rb[0]));
  // Not training (the default, and the flag's default): the identity.
  EXPECT_EQ(Values<float>(ra[1]), Values<float>(ones));
  EXPECT_EQ(Values<float>(ra[2]), Values<float>(ones));
  const std::vector<Tensor> on = Fetch(a, {sa}, {{xa, ones}, {fa, true}});
  int kept_on = 0;
  for (float v : Values<float>(on[0])) kept_on += v == 4.f;
  EXPECT_GT(kept_on, 900);
  EXPECT_LT(kept_on, 1100);
  // A rate outside [0, 1) is refused.
  layers::Dropout(a, xa, 1.0);
  EXPECT_THAT(a.status(), StatusIs(absl::StatusCode::kInvalidArgument, "[0, 1)"));
}

TEST(LayersTest, BatchNormalizationTrainsOnTheBatchAndFollowsItWithMovingAverages) {
  Scope root = Scope::NewRootScope();
  // Unfused (2-D): columns [1, 2, 3, 4] and [2, 4, 6, 8].
  Output x = ops::Const(root, {{1.f, 2.f}, {2.f, 4.f}, {3.f, 6.f}, {4.f, 8.f}});
  Output y = layers::BatchNormalization(root, x, {.training = true});
  // Fused (4-D NHWC): one channel of [1, 2, 3, 4].
  Output image = ops::Const(root, {1.f, 2.f, 3.f, 4.f}, TensorShape({1, 2, 2, 1}));
  Output fused = layers::BatchNormalization(root, image, {.training = true});
  Output inference = layers::BatchNormalization(root.WithVariableScope("", VariableReuse::kReuse),
                                                image, {.name = "batch_normalization_1"});
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(
      VariableNames(root),
      ElementsAre("batch_normalization/gamma", "batch_normalization/beta",
                  "batch_normalization/moving_mean", "batch_normalization/moving_variance",
                  "batch_normalization_1/gamma", "batch_normalization_1/beta",
                  "batch_normalization_1/moving_mean", "batch_normalization_1/moving_variance"));
  EXPECT_THAT(VariableNames(root, GraphKeys::kTrainableVariables),
              ElementsAre("batch_normalization/gamma", "batch_normalization/beta",
                          "batch_normalization_1/gamma", "batch_normalization_1/beta"));
  const std::vector<Operation> updates = GetCollectionOps(*root.graph(), GraphKeys::kUpdateOps);
  ASSERT_EQ(updates.size(), 4u);  // two per layer in training, none in inference
  EXPECT_EQ(updates[0].node()->name(), "batch_normalization/AssignMovingAvg/AssignSubVariableOp");
  EXPECT_EQ(fused.node()->type_string(), "FusedBatchNormV3");

  const std::vector<Variable> vars = GetVariables(*root.graph());
  std::vector<Output> fetches = {y, fused};
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  TW_ASSERT_OK(session.Run({}, fetches, updates, &out));
  // Biased batch variances 1.25 and 5, epsilon 1e-3.
  const float a = 1 / std::sqrt(1.25f + 1e-3f), b = 1 / std::sqrt(5.f + 1e-3f);
  EXPECT_THAT(
      out[0],
      TensorNear<float>(
          {4, 2}, {-1.5f * a, -3 * b, -0.5f * a, -1 * b, 0.5f * a, 1 * b, 1.5f * a, 3 * b}, 1e-5));
  EXPECT_THAT(out[1],
              TensorNear<float>({1, 2, 2, 1}, {-1.5f * a, -0.5f * a, 0.5f * a, 1.5f * a}, 1e-5));
  TW_ASSERT_OK(session.Run({vars[2].value(root), vars[3].value(root), vars[6].value(root),
                            vars[7].value(root), inference},
                           &out));
  // m -= (m - batch) * 0.01: means 0.025 and 0.05; variances 1 + 0.01 * (v - 1).
  EXPECT_THAT(out[0], TensorNear<float>({2}, {0.025f, 0.05f}, 1e-6));
  EXPECT_THAT(out[1], TensorNear<float>({2}, {1.0025f, 1.04f}, 1e-6));
  // The fused kernel's moving variance follows the unbiased variance, 5 / 3.
  EXPECT_THAT(out[2], TensorNear<float>({1}, {0.025f}, 1e-6));
  EXPECT_THAT(out[3], TensorNear<float>({1}, {1 + 0.01f * (5.f / 3 - 1)}, 1e-6));
  // Inference normalises with the moving statistics.
  const float m = 0.025f, s = 1 / std::sqrt(1 + 0.01f * (5.f / 3 - 1) + 1e-3f);
  EXPECT_THAT(
      out[4],
      TensorNear<float>({1, 2, 2, 1}, {(1 - m) * s, (2 - m) * s, (3 - m) * s, (4 - m) * s}, 1e-5));
}

TEST(LayersTest, BatchNormalizationWithATrainingTensor) {
  Scope root = Scope::NewRootScope();
  Output training = ops::PlaceholderWithDefault(root, false, TensorShape());
  Output x = ops::Const(root, {{1.f}, {3.f}});
  Output y = layers::BatchNormalization(root, x, {.momentum = 0.5, .training = training});
  TW_ASSERT_OK(root.status());
  // One graph for both modes: a Cond runs either the training or the
  // inference normalisation (TF's smart_cond), never both.
  EXPECT_EQ(y.node()->type_string(), "Merge");
  const std::vector<Operation> updates = GetCollectionOps(*root.graph(), GraphKeys::kUpdateOps);
  ASSERT_EQ(updates.size(), 2u);
  const Variable mean = GetVariables(*root.graph())[2];
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  // Not training: the updates leave the moving mean alone.
  TW_ASSERT_OK(session.Run({}, {y}, updates, &out));
  EXPECT_THAT(out[0],
              TensorNear<float>({2, 1}, {1 / std::sqrt(1.001f), 3 / std::sqrt(1.001f)}, 1e-5));
  TW_ASSERT_OK(session.Run({mean.value(root)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({1}, {0.f}, 0));
  // Training: batch statistics (mean 2, variance 1), moving mean 0 -> 1.
  TW_ASSERT_OK(session.Run({{training, true}}, {y}, updates, &out));
  EXPECT_THAT(out[0],
              TensorNear<float>({2, 1}, {-1 / std::sqrt(1.001f), 1 / std::sqrt(1.001f)}, 1e-5));
  TW_ASSERT_OK(session.Run({mean.value(root)}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({1}, {1.f}, 1e-6));
}

TEST(LayersTest, LayerNormalizationNormalisesEachExample) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1.f, 2.f, 3.f}, {2.f, 4.f, 9.f}});
  Output y = layers::LayerNormalization(
      root, x, {.beta_initializer = initializers::Constant({0.f, 1.f, 0.f})});
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(VariableNames(root),
              ElementsAre("layer_normalization/gamma", "layer_normalization/beta"));
  // Row 1: mean 2, variance 2/3; row 2: mean 5, variance 26/3.
  const float a = 1 / std::sqrt(2.f / 3 + 1e-3f), b = 1 / std::sqrt(26.f / 3 + 1e-3f);
  EXPECT_THAT(Fetch(root, {y})[0],
              TensorNear<float>({2, 3}, {-a, 1, a, -3 * b, 1 - b, 4 * b}, 1e-5));
}

TEST(LayersTest, EmbeddingGathersRowsAndItsGradientIsSparse) {
  Scope root = Scope::NewRootScope();
  Output ids = ops::Const(root, {{2, 0}, {2, 1}});
  Output e = layers::Embedding(
      root, ids, 3, 2,
      {.embeddings_initializer = initializers::Constant({0.f, 1.f, 2.f, 3.f, 4.f, 5.f})});
  TW_ASSERT_OK(root.status());
  EXPECT_THAT(VariableNames(root), ElementsAre("embedding/embeddings"));
  EXPECT_EQ(e.shape().DebugString(), "[2,2,2]");
  EXPECT_THAT(Fetch(root, {e})[0], TensorNear<float>({2, 2, 2}, {4, 5, 0, 1, 4, 5, 2, 3}, 0));
  const Variable table = GetVariables(*root.graph())[0];
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Gradient> grads,
                          ComputeSymbolicGradients(root, {e}, {table.handle()}));
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_TRUE(grads[0].is_sparse());
  // d sum(e) / d table counts each row's uses: ids 2, 0, 2, 1.
  EXPECT_THAT(Fetch(root, {Densify(root, grads[0])})[0],
              TensorNear<float>({3, 2}, {1, 1, 1, 1, 2, 2}, 0));
}

TEST(LayersTest, ActivationsByName) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {-1.f, 0.f, 1.f, 8.f});
  std::vector<Output> ys;
  for (const char* name : {"linear", "relu", "relu6", "elu", "selu", "sigmoid", "hard_sigmoid",
                           "tanh", "softplus", "softsign", "swish"}) {
    ys.push_back(layers::Activation(name)(root, x));
  }
  TW_ASSERT_OK(root.status());
  const std::vector<Tensor> out = Fetch(root, ys);
  const float e1 = std::exp(-1.f);
  const float sel = 1.0507009873554805f, alpha = 1.6732632423543772f;
  const auto sig = [](float v) { return 1 / (1 + std::exp(-v)); };
  EXPECT_THAT(out[0], TensorNear<float>({4}, {-1, 0, 1, 8}, 0));
  EXPECT_THAT(out[1], TensorNear<float>({4}, {0, 0, 1, 8}, 0));
  EXPECT_THAT(out[2], TensorNear<float>({4}, {0, 0, 1, 6}, 0));
  EXPECT_THAT(out[3], TensorNear<float>({4}, {e1 - 1, 0, 1, 8}, 1e-6));
  EXPECT_THAT(out[4], TensorNear<float>({4}, {sel * alpha * (e1 - 1), 0, sel, 8 * sel}, 1e-5));
  EXPECT_THAT(out[5], TensorNear<float>({4}, {sig(-1), 0.5f, sig(1), sig(8)}, 1e-6));
  EXPECT_THAT(out[6], TensorNear<float>({4}, {0.3f, 0.5f, 0.7f, 1}, 1e-6));
  EXPECT_THAT(out[7],
              TensorNear<float>({4}, {std::tanh(-1.f), 0, std::tanh(1.f), std::tanh(8.f)}, 1e-6));
  EXPECT_THAT(out[8], TensorNear<float>({4},
                                        {std::log1p(e1), std::log(2.f), 1 + std::log1p(e1),
                                         8 + std::log1p(std::exp(-8.f))},
                                        1e-5));
  EXPECT_THAT(out[9], TensorNear<float>({4}, {-0.5f, 0, 0.5f, 8.f / 9}, 1e-6));
  EXPECT_THAT(out[10], TensorNear<float>({4}, {-sig(-1), 0, sig(1), 8 * sig(8)}, 1e-5));
  layers::Activation("gelu_typo")(root, x);
  EXPECT_THAT(root.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "Unknown activation function: gelu_typo"));
}

TEST(LayersTest, GradientsOfCompositeLayersMatchFiniteDifferences) {
  const Tensor x_value =
      Literal<double>({3, 4}, {0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.2, -2.3, 1.6, 0.9, -0.8, 0.5});
  const auto check = [&](const std::function<Output(const Scope&, const Output&)>& layer) {
    Scope root = Scope::NewRootScope();
    Output x = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({3, 4}));
    Output y = layer(root, x);
    TW_EXPECT_OK(root.status());
    absl::StatusOr<double> error = ComputeGradientError<double>(root, {x}, {x_value}, {y});
    TW_EXPECT_OK(error);
    return error.ok() ? *error : 1.0;
  };
  EXPECT_LT(check([](const Scope& s, const Output& x) {
              // The checker's session initializes no variables: no gamma or beta.
              return layers::LayerNormalization(s, x, {.center = false, .scale = false});
            }),
            1e-6);
  EXPECT_LT(check([](const Scope& s, const Output& x) {
              return layers::BatchNormalization(
                  s, x, {.center = false, .scale = false, .training = true});
            }),
            1e-6);
  for (const char* name : {"selu", "softplus", "softsign", "swish", "hard_sigmoid"}) {
    EXPECT_LT(
        check([name](const Scope& s, const Output& x) { return layers::Activation(name)(s, x); }),
        1e-6)
        << name;
  }
}

TEST(LayersTest, BadInputsAreErrorsNamingTheLayer) {
  Scope root = Scope::NewRootScope();
  Output unknown = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, -1}));
  layers::Dense(root, unknown, 3);
  EXPECT_THAT(root.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dense: the last dimension of the inputs must be known, got shape [?,?]"));
  Scope conv = Scope::NewRootScope();
  layers::Conv2D(conv, ops::Placeholder(conv, DT_FLOAT, ops::Placeholder::Shape({1, 4, 4, 1})), 2,
                 3, {.padding = "full"});
  EXPECT_THAT(conv.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "must be one of \"valid\", \"same\". Received: "
                                      "full"));
  Scope pool = Scope::NewRootScope();
  layers::MaxPooling2D(pool, ops::Placeholder(pool, DT_FLOAT, ops::Placeholder::Shape({4, 4})), 2);
  EXPECT_THAT(pool.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                      "max_pooling2d: expected "
                                      "inputs of rank 4"));
  for (const auto& layer : std::vector<std::function<Output(const Scope&)>>{
           [](const Scope& s) { return layers::Dense(s, Output(), 3); },
           [](const Scope& s) { return layers::Conv2D(s, Output(), 3, 3); },
           [](const Scope& s) { return layers::MaxPooling2D(s, Output(), 2); },
           [](const Scope& s) { return layers::GlobalAveragePooling2D(s, Output()); },
           [](const Scope& s) { return layers::Flatten(s, Output()); },
           [](const Scope& s) { return layers::Dropout(s, Output(), 0.5); },
           [](const Scope& s) { return layers::BatchNormalization(s, Output()); },
           [](const Scope& s) { return layers::LayerNormalization(s, Output()); },
           [](const Scope& s) { return layers::Embedding(s, Output(), 3, 2); },
           [](const Scope& s) { return layers::Activation("relu")(s, Output()); },
       }) {
    // The Output of a builder that failed: an error, never a crash.
    Scope s = Scope::NewRootScope();
    EXPECT_FALSE(layer(s).valid());
    EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kInvalidArgument, "not a valid tensor"));
  }
  Scope bn = Scope::NewRootScope();
  layers::BatchNormalization(bn, ops::Placeholder(bn, DT_FLOAT, ops::Placeholder::Shape({2, 3})),
                             {.fused = true});
  EXPECT_THAT(bn.status(), StatusIs(absl::StatusCode::kInvalidArgument, "fused batch norm needs"));
}

}  // namespace
}  // namespace towerflow
