// Recurrent layers (layers/recurrent.h): LSTMCell's and GRUCell's steps as
// TF's formulas compute them (values from NumPy on the same weights),
// TF's variable names, sequence_length as tf.compat.v1.nn.dynamic_rnn
// (TF 2.21's values), gradients through the loop against finite
// differences, and a DynamicRnn that learns.
#include "layers/recurrent.h"

#include <cmath>
#include <vector>

#include "framework/tensor_views.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

// An initializer of element k = ((k * mul) % mod - shift) / div.
initializers::Initializer Pattern(int mul, int mod, int shift, double div) {
  return initializers::Initializer(
      "pattern", [=](const Scope& s, const TensorShape& shape, DataType dtype) -> Output {
        std::vector<float> v(shape.num_elements());
        for (size_t k = 0; k < v.size(); ++k) {
          v[k] = static_cast<float>(((static_cast<int64_t>(k) * mul) % mod - shift) / div);
        }
        return ops::Cast(s, ops::Const(s, Literal<float>(shape, v).AsProto()), dtype);
      });
}

// x[b, t, d] = ((index % 5) - 2) / 4, batch 2, time 3, depth 2.
Output Inputs(const Scope& s) {
  std::vector<float> v(12);
  for (int k = 0; k < 12; ++k) v[k] = static_cast<float>(k % 5 - 2) / 4;
  return ops::Const(s, Literal<float>({2, 3, 2}, v).AsProto());
}

std::vector<Tensor> RunInitialized(const Scope& root, const std::vector<Output>& fetches) {
  ClientSession session(root);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr).ok());
  const absl::Status status = session.Run(fetches, &out);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

std::vector<std::string> VariableNames(const Scope& root) {
  std::vector<std::string> names;
  for (const Variable& v : GetVariables(*root.graph())) names.push_back(v.name());
  return names;
}

TEST(DynamicRnnTest, LstmMatchesTheFormula) {
  Scope root = Scope::NewRootScope();
  layers::LstmCell cell(2, {.kernel_initializer = Pattern(7, 11, 5, 10)});
  TW_ASSERT_OK_AND_ASSIGN(layers::RnnResult rnn, layers::DynamicRnn(root, cell, Inputs(root)));
  EXPECT_EQ(rnn.outputs.shape(), PartialTensorShape({2, 3, 2}));
  EXPECT_EQ(VariableNames(root),
            (std::vector<std::string>{"rnn/lstm_cell/kernel", "rnn/lstm_cell/bias"}));
  const std::vector<Tensor> out = RunInitialized(root, {rnn.outputs, rnn.final_state[0]});
  EXPECT_THAT(out[0], TensorNear<float>({2, 3, 2},
                                        {0.030544296, -0.02799024, 0.021637023, -0.054046365,
                                         0.0011167425, 0.071525127, 0.012603313, -0.030274129,
                                         -0.013596846, -0.054968415, 0.022959856, -0.062762926},
                                        1e-6));
  EXPECT_THAT(out[1], TensorNear<float>(
                          {2, 2}, {0.0022781346, 0.14870299, 0.053887411, -0.12907491}, 1e-6));
}

TEST(DynamicRnnTest, GruMatchesTheFormula) {
  Scope root = Scope::NewRootScope();
  // gates/kernel and candidate/kernel take their own patterns.
  const auto kernels = initializers::Initializer(
      "by shape", [](const Scope& s, const TensorShape& shape, DataType dtype) -> Output {
        return shape.dim_size(1) == 4 ? Pattern(5, 9, 4, 8)(s, shape, dtype)
                                      : Pattern(3, 7, 3, 6)(s, shape, dtype);
      });
  layers::GruCell cell(2, {.kernel_initializer = kernels});
  TW_ASSERT_OK_AND_ASSIGN(layers::RnnResult rnn, layers::DynamicRnn(root, cell, Inputs(root)));
  EXPECT_EQ(
      VariableNames(root),
      (std::vector<std::string>{"rnn/gru_cell/gates/kernel", "rnn/gru_cell/gates/bias",
                                "rnn/gru_cell/candidate/kernel", "rnn/gru_cell/candidate/bias"}));
  const std::vector<Tensor> out = RunInitialized(root, {rnn.outputs});
  EXPECT_THAT(out[0], TensorNear<float>({2, 3, 2},
                                        {0.028371946, 0.013359824, 0.056891476, -0.0031545081,
                                         -0.092154028, 0.018967814, 0.031201758, 0.0, 0.061224246,
                                         -0.019295228, 0.078723485, -0.0025153186},
                                        1e-6));
}

// Predicting a sequence's running mean from its last output: the loss
// falls under plain gradient descent, for both cells, the batch and time
// known only at run time.
TEST(DynamicRnnTest, LossFallsWhenTraining) {
  for (bool lstm : {true, false}) {
    Scope root = Scope::NewRootScope();
    const Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, -1, 2}));
    const Output y = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 1}));
    layers::LstmCell lstm_cell(8, {.kernel_initializer = initializers::GlorotUniform(7)});
    layers::GruCell gru_cell(8, {.kernel_initializer = initializers::GlorotUniform(7)});
    TW_ASSERT_OK_AND_ASSIGN(
        layers::RnnResult rnn,
        layers::DynamicRnn(root, lstm ? static_cast<const layers::RnnCell&>(lstm_cell) : gru_cell,
                           x));
    const Output last = rnn.final_state.back();  // h
    const Variable w =
        GetVariable(root, "w", TensorShape({8, 1}), DT_FLOAT, initializers::Constant(0.1));
    const Output pred = ops::MatMul(root, last, w.value());
    const Output loss = ops::Mean(root, ops::Square(root, ops::Sub(root, pred, y)), {0, 1});
    train::GradientDescentOptimizer opt(0.5);
    const Operation train_op = opt.Minimize(root, loss);
    TW_ASSERT_OK(root.status());
    std::vector<float> xs(8 * 5 * 2), ys(8);
    for (int b = 0; b < 8; ++b) {
      float sum = 0;
      for (int k = 0; k < 10; ++k) {
        xs[b * 10 + k] = std::sin(0.7f * (b * 10 + k));
        sum += xs[b * 10 + k];
      }
      ys[b] = sum / 4;  // a spread of about +-1
    }
    const Tensor x_value = Literal<float>({8, 5, 2}, xs), y_value = Literal<float>({8, 1}, ys);
    ClientSession session(root);
    TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
    std::vector<Tensor> out;
    float first = 0, latest = 0;
    for (int step = 0; step < 150; ++step) {
      TW_ASSERT_OK(session.Run({{x, x_value}, {y, y_value}}, {loss}, {train_op}, &out));
      latest = out[0].scalar<float>()();
      if (step == 0) first = latest;
    }
    EXPECT_LT(latest, 0.25f * first)
        << (lstm ? "LSTM" : "GRU") << ": " << first << " -> " << latest;
  }
}

// Batch 2 of 3 steps; LSTM lengths {2, 1}, GRU {3, 0} (int64): outputs past
// a length are zeros, the final state is each sequence's at its end, and
// the loop stops after the longest. tf.compat.v1.nn.dynamic_rnn's values
// with the same kernels.
TEST(DynamicRnnTest, SequenceLengthAsTensorFlow) {
  {
    Scope root = Scope::NewRootScope();
    layers::LstmCell cell(2, {.kernel_initializer = Pattern(7, 11, 5, 10)});
    TW_ASSERT_OK_AND_ASSIGN(layers::RnnResult rnn,
                            layers::DynamicRnn(root, cell, Inputs(root),
                                               {.sequence_length = ops::Const(root, {2, 1})}));
    const std::vector<Tensor> out =
        RunInitialized(root, {rnn.outputs, rnn.final_state[0], rnn.final_state[1]});
    EXPECT_THAT(out[0], TensorNear<float>({2, 3, 2},
                                          {0.030544303f, -0.027990244f, 0.021637026f, -0.054046359f,
                                           0, 0, 0.012603313f, -0.03027413f, 0, 0, 0, 0},
                                          1e-6));
    EXPECT_THAT(
        out[1],
        TensorNear<float>({2, 2}, {0.040832303f, -0.10728884f, 0.026538353f, -0.060622416f}, 1e-6))
        << "c";
    EXPECT_THAT(
        out[2],
        TensorNear<float>({2, 2}, {0.021637026f, -0.054046359f, 0.012603313f, -0.03027413f}, 1e-6))
        << "h";
  }
  Scope root = Scope::NewRootScope();
  const auto kernels = initializers::Initializer(
      "by shape", [](const Scope& s, const TensorShape& shape, DataType dtype) -> Output {
        return shape.dim_size(1) == 4 ? Pattern(5, 9, 4, 8)(s, shape, dtype)
                                      : Pattern(3, 7, 3, 6)(s, shape, dtype);
      });
  layers::GruCell cell(2, {.kernel_initializer = kernels});
  TW_ASSERT_OK_AND_ASSIGN(layers::RnnResult rnn,
                          layers::DynamicRnn(root, cell, Inputs(root),
                                             {.sequence_length = ops::Const(
                                                  root, Literal<int64_t>({2}, {3, 0}).AsProto())}));
  const std::vector<Tensor> out = RunInitialized(root, {rnn.outputs, rnn.final_state[0]});
  EXPECT_THAT(out[0], TensorNear<float>({2, 3, 2},
                                        {0.028371938f, 0.013359823f, 0.056891471f, -0.0031545106f,
                                         -0.092154011f, 0.018967811f, 0, 0, 0, 0, 0, 0},
                                        1e-6));
  EXPECT_THAT(out[1], TensorNear<float>({2, 2}, {-0.092154011f, 0.018967811f, 0, 0}, 1e-6));
}

TEST(DynamicRnnTest, SequenceLengthMustMatchTheBatch) {
  Scope root = Scope::NewRootScope();
  layers::GruCell cell(2);
  EXPECT_THAT(layers::DynamicRnn(
                  root, cell, Inputs(root),
                  {.sequence_length = ops::Const(root, Literal<int32_t>({1, 2}, {3, 3}).AsProto())})
                  .status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "rnn: sequence_length must be a vector [batch], got shape [1,2]"));
  const Output lengths = ops::Placeholder(root, DT_INT32, ops::Placeholder::Shape({-1}));
  TW_ASSERT_OK_AND_ASSIGN(layers::RnnResult rnn, layers::DynamicRnn(root, cell, Inputs(root),
                                                                    {.sequence_length = lengths}));
  ClientSession session(root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  std::vector<Tensor> out;
  EXPECT_THAT(session.Run({{lengths, Literal<int32_t>({3}, {1, 2, 3})}}, {rnn.outputs}, &out),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "sequence_length must have one entry per sequence of the batch: "));
}

// A cell without variables, h' = tanh(x W + h U) with constant W and U, so
// the gradient checker (which initializes nothing) can differentiate the
// whole loop in double.
class TanhCell : public layers::RnnCell {
 public:
  std::vector<int64_t> StateSizes() const override { return {2}; }
  int64_t OutputSize() const override { return 2; }
  absl::StatusOr<StepResult> Step(const Scope& s, const Output& inputs,
                                  const std::vector<Output>& state) const override {
    const Output w = ops::Const(s, Literal<double>({2, 2}, {0.5, -0.3, 0.8, 0.2}).AsProto());
    const Output u = ops::Const(s, Literal<double>({2, 2}, {-0.4, 0.6, 0.1, 0.7}).AsProto());
    const Output h =
        ops::Tanh(s, ops::AddV2(s, ops::MatMul(s, inputs, w), ops::MatMul(s, state[0], u)));
    return StepResult{h, {h}};
  }
};

TEST(DynamicRnnTest, GradientsThroughSequenceLengthMatchFiniteDifferences) {
  for (const std::vector<int32_t>& lengths : {std::vector<int32_t>{3, 1}, {2, 0}}) {
    Scope root = Scope::NewRootScope();
    const Output x = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({2, 3, 2}));
    const Output h0 = ops::Placeholder(root, DT_DOUBLE, ops::Placeholder::Shape({2, 2}));
    TW_ASSERT_OK_AND_ASSIGN(
        layers::RnnResult rnn,
        layers::DynamicRnn(
            root, TanhCell(), x,
            {.initial_state = {h0},
             .sequence_length = ops::Const(root, Literal<int32_t>({2}, lengths).AsProto())}));
    std::vector<double> xs(12);
    for (int k = 0; k < 12; ++k) xs[k] = (k % 7 - 3) / 4.0;
    TW_ASSERT_OK_AND_ASSIGN(
        double error, ComputeGradientError<double>(root, {x, h0},
                                                   {Literal<double>({2, 3, 2}, xs),
                                                    Literal<double>({2, 2}, {0.3, -0.2, 0.1, 0.4})},
                                                   {rnn.outputs, rnn.final_state[0]}, 1e-6));
    EXPECT_LT(error, 1e-8) << "lengths " << lengths[0] << ", " << lengths[1];
  }
}

TEST(DynamicRnnTest, BadInputsAreErrors) {
  Scope root = Scope::NewRootScope();
  layers::LstmCell cell(2);
  EXPECT_THAT(layers::DynamicRnn(root, cell, ops::Const(root, {1.f, 2.f})).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "rnn: DynamicRnn needs inputs of rank 3 with a known depth, got "
                                "shape [2]"));
  EXPECT_THAT(
      layers::DynamicRnn(root, cell, Inputs(root), {.initial_state = {Inputs(root)}}).status(),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "the cell's state has 2 tensors, initial_state 1"));
}

}  // namespace
}  // namespace towerflow
