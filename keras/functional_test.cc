// keras::Model's functional form: several inputs and outputs, merge
// layers, shared layers, Keras's summary with connections, the errors of a
// wrong graph or wrong data, and its replication (per-replica feeds).
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "data/dataset.h"
#include "gtest/gtest.h"
#include "keras/layer.h"
#include "keras/model.h"
#include "ops/gen/array_ops.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

Tensor Matrix(int64_t rows, int64_t cols, const std::vector<float>& values) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

initializers::Initializer Kernel(int64_t rows, int64_t cols, const std::vector<float>& values) {
  return initializers::Constant(
      MakeTensorProto<float>(absl::MakeConstSpan(values), TensorShape({rows, cols})));
}

// Inputs a, b of 2 features; "total" = the sum of a + b's features (a
// Dense of ones), "mix" = [a0 + b0, a1 + b1] (a Dense of a fixed kernel on
// their concatenation).
keras::Model TwoInOut() {
  keras::KerasTensor a = keras::Input({2}, {.name = "a"});
  keras::KerasTensor b = keras::Input({2}, {.name = "b"});
  keras::KerasTensor sum = keras::Add()({a, b});
  keras::KerasTensor total =
      keras::Dense(1, {.kernel_initializer = Kernel(2, 1, {1, 1}), .name = "total"})(sum);
  keras::KerasTensor cat = keras::Concatenate()({a, b});
  keras::KerasTensor mix = keras::Dense(
      2, {.kernel_initializer = Kernel(4, 2, {1, 0, 0, 1, 1, 0, 0, 1}), .name = "mix"})(cat);
  return keras::Model({a, b}, {total, mix}, "two_in_out");
}

// Rows i = 0..3: a = [i, 1], b = [1, -i]; so a + b = [i + 1, 1 - i], total
// 2 everywhere and mix [i + 1, 1 - i]. Targets: total i, mix 0.
keras::TensorMap Inputs() {
  return {{"a", Matrix(4, 2, {0, 1, 1, 1, 2, 1, 3, 1})},
          {"b", Matrix(4, 2, {1, 0, 1, -1, 1, -2, 1, -3})}};
}
keras::TensorMap Targets() {
  return {{"total", Matrix(4, 1, {0, 1, 2, 3})}, {"mix", Matrix(4, 2, {0, 0, 0, 0, 0, 0, 0, 0})}};
}

absl::Status CompileTwo(keras::Model& model, double lr = 0.01) {
  return model.Compile(
      std::make_shared<train::GradientDescentOptimizer>(lr),
      keras::CompileOptions{
          .loss = {{"", "mse"}}, .metrics = {{"total", {"mae"}}}, .loss_weights = {{"mix", 0.5}}});
}

TEST(FunctionalTest, TwoInputsAndOutputsEvaluateAndPredictByHand) {
  keras::Model model = TwoInOut();
  TW_ASSERT_OK(model.status());
  EXPECT_EQ(model.input_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(model.output_names(), (std::vector<std::string>{"total", "mix"}));
  TW_ASSERT_OK(CompileTwo(model));
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap p, model.Predict(Inputs(), 3));  // 3 + 1 rows
  EXPECT_THAT(p.at("total"), TensorNear<float>({4, 1}, {2, 2, 2, 2}, 1e-6));
  EXPECT_THAT(p.at("mix"), TensorNear<float>({4, 2}, {1, 1, 2, 0, 3, -1, 4, -2}, 1e-6));
  // total: squared errors 4, 1, 0, 1 (mse 1.5), absolute 2, 1, 0, 1 (mae
  // 1); mix: squares 1+1, 4+0, 9+1, 16+4 over 8 (mse 4.5);
  // loss 1.5 + 0.5 * 4.5.
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs logs, model.Evaluate(Inputs(), Targets(), 3));
  EXPECT_EQ(logs.size(), 4u);
  EXPECT_NEAR(logs["loss"], 3.75, 1e-5);
  EXPECT_NEAR(logs["total_loss"], 1.5, 1e-6);
  EXPECT_NEAR(logs["mix_loss"], 4.5, 1e-6);
  EXPECT_NEAR(logs["total_mae"], 1.0, 1e-6);
  // Training lowers it; the history has every log.
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History h,
      model.Fit(Inputs(), Targets(), {.batch_size = 2, .epochs = 10, .verbose = 0}));
  EXPECT_EQ(h.history.size(), 4u);
  EXPECT_LT(h.history["loss"].back(), h.history["loss"].front());
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs after, model.Evaluate(Inputs(), Targets()));
  EXPECT_LT(after["loss"], 3.75);
  EXPECT_NEAR(after["loss"], after["total_loss"] + 0.5 * after["mix_loss"], 1e-5);
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs step, model.TrainOnBatch(Inputs(), Targets()));
  EXPECT_NEAR(step["loss"], after["loss"], 1e-5);  // the loss before the step
  // Validation data by name: every log again as "val_...", Evaluate's.
  const keras::TensorMap x = Inputs(), y = Targets();
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History validated,
      model.Fit(
          x, y,
          {.batch_size = 4, .validation_inputs = &x, .validation_targets = &y, .verbose = 0}));
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs now, model.Evaluate(x, y));
  for (const char* name : {"loss", "total_loss", "mix_loss", "total_mae"}) {
    ASSERT_EQ(validated.history.count(absl::StrCat("val_", name)), 1u) << name;
    EXPECT_NEAR(validated.history[absl::StrCat("val_", name)][0], now[name], 1e-5) << name;
  }
  const Tensor half = x.at("a");
  EXPECT_THAT(model.Fit(x, y, {.validation_x = &half, .verbose = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, "validation data needs both"));
}

TEST(FunctionalTest, SummaryShowsConnections) {
  keras::KerasTensor a = keras::Input({2}, {.name = "a"});
  keras::KerasTensor b = keras::Input({3}, {.name = "b"});
  keras::Model model({a, b}, {keras::Dense(1)(keras::Concatenate()({a, b}))}, "two_inputs");
  TW_ASSERT_OK_AND_ASSIGN(std::string summary, model.Summary());
  // Keras's print_summary of such a model (98 columns).
  EXPECT_EQ(summary,
            "Model: \"two_inputs\"\n"
            "__________________________________________________________________________________"
            "________________\n"
            "Layer (type)                    Output Shape         Param #     Connected to     "
            "                \n"
            "=================================================================================="
            "================\n"
            "a (InputLayer)                  (None, 2)            0                            "
            "                \n"
            "__________________________________________________________________________________"
            "________________\n"
            "b (InputLayer)                  (None, 3)            0                            "
            "                \n"
            "__________________________________________________________________________________"
            "________________\n"
            "concatenate (Concatenate)       (None, 5)            0           a[0][0]          "
            "                \n"
            "                                                                 b[0][0]          "
            "                \n"
            "__________________________________________________________________________________"
            "________________\n"
            "dense (Dense)                   (None, 1)            6           concatenate[0][0]"
            "                \n"
            "=================================================================================="
            "================\n"
            "Total params: 6\n"
            "Trainable params: 6\n"
            "Non-trainable params: 0\n"
            "__________________________________________________________________________________"
            "________________\n");
  // A chain is printed as Keras prints a sequential-like model: 65
  // columns, its input layer first.
  keras::KerasTensor x = keras::Input({4});
  keras::Model chain(x, keras::Dense(2)(keras::Dense(3)(x)));
  TW_ASSERT_OK_AND_ASSIGN(std::string table, chain.Summary());
  EXPECT_NE(table.find("\ninput_1 (InputLayer)         (None, 4)                 0         \n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\ndense_1 (Dense)              (None, 2)                 8         \n"),
            std::string::npos)
      << table;
}

TEST(FunctionalTest, ASharedLayerHasOneSetOfWeights) {
  keras::KerasTensor a = keras::Input({2}, {.name = "a"});
  keras::KerasTensor b = keras::Input({2}, {.name = "b"});
  keras::Layer shared =
      keras::Dense(2, {.kernel_initializer = Kernel(2, 2, {1, 2, 3, 4}), .name = "shared"});
  keras::Model model({a, b}, {keras::Add()({shared(a), shared(b)})});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> weights, model.GetWeights());
  ASSERT_EQ(weights.size(), 2u);
  EXPECT_EQ(weights[0].name, "shared/kernel");
  EXPECT_EQ(weights[1].name, "shared/bias");
  // (a + b) . kernel: rows a = [1, 0], b = [0, 1] give [1 + 3, 2 + 4].
  TW_ASSERT_OK_AND_ASSIGN(
      keras::TensorMap p,
      model.Predict(keras::TensorMap{{"a", Matrix(1, 2, {1, 0})}, {"b", Matrix(1, 2, {0, 1})}}));
  EXPECT_THAT(p.at("add"), TensorNear<float>({1, 2}, {4, 6}, 1e-6));
  TW_ASSERT_OK_AND_ASSIGN(std::string summary, model.Summary());
  // Its two calls: nodes 0 and 1 of the layer.
  EXPECT_NE(
      summary.find("shared (Dense)                  (None, 2)            6           a[0][0]"),
      std::string::npos)
      << summary;
  EXPECT_NE(summary.find("add (Add)                       (None, 2)            0           "
                         "shared[0][0]"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("                                                                 "
                         "shared[1][0]"),
            std::string::npos)
      << summary;
  // Training moves the one kernel by both calls' gradients.
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1), "mse"));
  TW_ASSERT_OK(model
                   .TrainOnBatch({{"a", Matrix(1, 2, {1, 0})}, {"b", Matrix(1, 2, {0, 1})}},
                                 {{"add", Matrix(1, 2, {0, 0})}})
                   .status());
  TW_ASSERT_OK_AND_ASSIGN(weights, model.GetWeights());
  // d(mse)/d(out) = out (2 / 2 elements) = [4, 6]; kernel grad = (a + b)^T
  // [4, 6] = [[4, 6], [4, 6]]; kernel - 0.1 * grad.
  EXPECT_THAT(weights[0].tensor, TensorNear<float>({2, 2}, {0.6f, 1.4f, 2.6f, 3.4f}, 1e-5));
}

TEST(FunctionalTest, FitsFromADatasetOfInputsThenTargets) {
  keras::Model a = TwoInOut(), b = TwoInOut();
  TW_ASSERT_OK(CompileTwo(a));
  TW_ASSERT_OK(CompileTwo(b));
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History from_tensors,
      a.Fit(Inputs(), Targets(), {.batch_size = 2, .epochs = 2, .shuffle = false, .verbose = 0}));
  keras::TensorMap x = Inputs(), y = Targets();
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset d,
                          data::Dataset::FromTensorSlices({x["a"], x["b"], y["total"], y["mix"]}));
  TW_ASSERT_OK_AND_ASSIGN(keras::History from_dataset,
                          b.Fit(d.Batch(2), {.epochs = 2, .verbose = 0}));
  for (const char* name : {"loss", "total_loss", "mix_loss", "total_mae"}) {
    for (int e = 0; e < 2; ++e) {
      EXPECT_NEAR(from_dataset.history[name][e], from_tensors.history[name][e], 1e-6) << name;
    }
  }
  // Evaluate and Predict over a dataset equal them over the tensors (the
  // last batch of 3 rows, then 1).
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs on_tensors, b.Evaluate(x, y, 3));
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs on_dataset, b.Evaluate(d.Batch(3)));
  ASSERT_EQ(on_dataset.size(), 4u);
  for (const auto& [name, value] : on_tensors) EXPECT_NEAR(on_dataset[name], value, 1e-6) << name;
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap p, b.Predict(x));
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset inputs, data::Dataset::FromTensorSlices({x["a"], x["b"]}));
  for (const data::Dataset& dataset : {inputs.Batch(3), d.Batch(3)}) {  // targets ignored
    TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap q, b.Predict(dataset));
    ASSERT_EQ(q.size(), 2u);
    for (const auto& [name, t] : p) {
      EXPECT_THAT(q.at(name), TensorNear<float>(t.shape(), Values<float>(t), 1e-6)) << name;
    }
  }
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset two, data::Dataset::FromTensorSlices({x["a"], y["mix"]}));
  EXPECT_THAT(b.Fit(two.Batch(2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "of 2 inputs and 2 targets, got 2"));
  EXPECT_THAT(b.Evaluate(two.Batch(2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "Evaluate: a dataset element"));
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset only_a, data::Dataset::FromTensorSlices({x["a"]}));
  EXPECT_THAT(b.Predict(only_a.Batch(2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "(or of the inputs alone), got 1"));
}

TEST(FunctionalTest, AWrongGraphIsAnError) {
  keras::KerasTensor a = keras::Input({2}, {.name = "a"});
  keras::KerasTensor b = keras::Input({2}, {.name = "b"});
  keras::Model disconnected(a, keras::Dense(1)(b));
  EXPECT_THAT(disconnected.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Graph disconnected: cannot obtain value for Input \"b\""));
  // Every method says so.
  EXPECT_THAT(disconnected.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1), "mse"),
              StatusIs(absl::StatusCode::kInvalidArgument, "Graph disconnected"));
  EXPECT_THAT(disconnected.Summary(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Graph disconnected"));
  EXPECT_THAT(keras::Model(a, keras::Dense(1)({a, a})).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Layer dense (Dense) takes one input, but is called on 2"));
  EXPECT_THAT(keras::Model(a, keras::Concatenate()(a)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "at least 2 inputs"));
  EXPECT_THAT(keras::Model({a, a}, {keras::Dense(1)(a)}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "The same Input is passed twice"));
  EXPECT_THAT(keras::Model({keras::Dense(1)(a)}, {keras::Dense(1)(a)}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must come from keras::Input"));
  EXPECT_THAT(keras::Model({a}, {keras::KerasTensor()}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty KerasTensor"));
  EXPECT_THAT(
      keras::Model({a, b}, {keras::Dense(1, {.name = "x"})(a), keras::Dense(1, {.name = "x"})(b)})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "All layer names should be unique: x"));
  // A layer that checks its inputs when built: the model's error then.
  keras::Model three({a, b}, {keras::Subtract()({a, b, a})});
  TW_ASSERT_OK(three.status());
  EXPECT_THAT(
      three.Predict(keras::TensorMap{{"a", Matrix(1, 2, {1, 2})}, {"b", Matrix(1, 2, {3, 4})}}),
      StatusIs(absl::StatusCode::kInvalidArgument, "exactly two inputs, got 3"));
}

TEST(FunctionalTest, WrongDataOrLossesAreErrors) {
  keras::Model model = TwoInOut();
  EXPECT_THAT(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1),
                            keras::CompileOptions{.loss = {{"nope", "mse"}}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Unknown entry in loss dictionary: \"nope\". Only expected the following "
                       "keys: [total, mix]"));
  EXPECT_THAT(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1),
                            keras::CompileOptions{.loss = {{"total", "mse"}}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "output mix has no loss"));
  EXPECT_THAT(model.Fit(Inputs(), Targets()),
              StatusIs(absl::StatusCode::kFailedPrecondition, "compile"));
  TW_ASSERT_OK(CompileTwo(model));
  keras::TensorMap x = Inputs();
  EXPECT_THAT(model.Fit(x["a"], Targets()["total"]),
              StatusIs(absl::StatusCode::kInvalidArgument, "The model has 2 inputs (a, b)"));
  keras::TensorMap only_a = {{"a", x["a"]}};
  EXPECT_THAT(model.Fit(only_a, Targets()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "No data provided for \"b\". Need data for each key in: [a, b]"));
  keras::TensorMap extra = x;
  extra["c"] = x["a"];
  EXPECT_THAT(model.Predict(extra),
              StatusIs(absl::StatusCode::kInvalidArgument, "Unknown entry in input data"));
  keras::TensorMap short_b = x;
  short_b["b"] = Matrix(3, 2, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(model.Evaluate(short_b, Targets()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "All input arrays should have the same number of samples"));
  keras::TensorMap wide = x;
  wide["a"] = Matrix(4, 3, std::vector<float>(12, 1));
  EXPECT_THAT(model.Predict(wide), StatusIs(absl::StatusCode::kInvalidArgument,
                                            "expected a to be float of shape (None, 2)"));
}

TEST(FunctionalTest, ToModelFnKeysByInputAndOutputNames) {
  keras::Model model = TwoInOut();
  TW_ASSERT_OK(CompileTwo(model));
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, model.ToModelFn());
  Scope s = Scope::NewRootScope();
  const auto rows_of = [&s](int64_t width) {
    return ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape(PartialTensorShape({-1, width})));
  };
  EstimatorSpec spec = fn(s, {{"a", rows_of(2)}, {"b", rows_of(2)}},
                          {{"total", rows_of(1)}, {"mix", rows_of(2)}}, ModeKeys::kEval, Params());
  TW_ASSERT_OK(s.status());
  EXPECT_EQ(spec.predictions.size(), 2u);
  EXPECT_EQ(spec.predictions.count("total"), 1u);
  EXPECT_EQ(spec.predictions.count("mix"), 1u);
  EXPECT_TRUE(spec.loss.valid());
  Scope missing = Scope::NewRootScope();
  fn(missing, {{"a", ops::Placeholder(missing, DT_FLOAT)}}, {}, ModeKeys::kPredict, Params());
  EXPECT_THAT(missing.status(), StatusIs(absl::StatusCode::kInvalidArgument, "feature \"b\""));
}

struct Trained {
  keras::History history;
  keras::Logs logs;
  keras::TensorMap predictions;
  std::vector<NamedTensor> weights;
};

Trained TrainTwo(int replicas) {
  keras::Model model = TwoInOut();
  EXPECT_EQ(CompileTwo(model), absl::OkStatus());
  keras::Model replicated = keras::ReplicatedModel(model, {.replicas = replicas});
  Trained r;
  absl::StatusOr<keras::History> h = replicated.Fit(
      Inputs(), Targets(), {.batch_size = 4, .epochs = 5, .shuffle = false, .verbose = 0});
  EXPECT_EQ(h.status(), absl::OkStatus());
  if (h.ok()) r.history = *h;
  absl::StatusOr<keras::Logs> logs = replicated.Evaluate(Inputs(), Targets(), 4);
  EXPECT_EQ(logs.status(), absl::OkStatus());
  if (logs.ok()) r.logs = *logs;
  absl::StatusOr<keras::TensorMap> p = replicated.Predict(Inputs(), 2);
  EXPECT_EQ(p.status(), absl::OkStatus());
  if (p.ok()) r.predictions = *p;
  absl::StatusOr<std::vector<NamedTensor>> w = replicated.GetWeights();
  EXPECT_EQ(w.status(), absl::OkStatus());
  if (w.ok()) r.weights = *w;
  if (replicas == 2) {
    // Each replica's shard of every input and target in its placeholder.
    absl::StatusOr<GraphDef> graph = replicated.ExportGraphDef();
    EXPECT_EQ(graph.status(), absl::OkStatus());
    std::map<std::string, std::string> devices;
    if (graph.ok()) {
      for (const NodeDef& n : graph->node()) devices[n.name()] = n.device();
    }
    for (const std::string feed : {"a", "b", "total_target", "mix_target"}) {
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(devices[absl::StrCat("infeed-enqueue-", feed, "-", i)],
                  absl::StrCat("/device:CPU:", i));
      }
    }
  }
  return r;
}

TEST(FunctionalTest, ReplicasTrainEvaluateAndPredictAsOne) {
  const Trained one = TrainTwo(1);
  const Trained two = TrainTwo(2);
  for (const auto& [name, values] : one.history.history) {
    ASSERT_EQ(two.history.history.at(name).size(), values.size()) << name;
    for (size_t e = 0; e < values.size(); ++e) {
      EXPECT_NEAR(two.history.history.at(name)[e], values[e], 1e-5) << name << " epoch " << e;
    }
  }
  ASSERT_EQ(one.logs.size(), 4u);
  for (const auto& [name, value] : one.logs) EXPECT_NEAR(two.logs.at(name), value, 1e-5) << name;
  for (const auto& [name, t] : one.predictions) {
    EXPECT_THAT(two.predictions.at(name), TensorNear<float>(t.shape(), Values<float>(t), 1e-5))
        << name;
  }
  ASSERT_EQ(one.weights.size(), 4u);
  ASSERT_EQ(two.weights.size(), 4u);
  for (size_t i = 0; i < one.weights.size(); ++i) {
    EXPECT_EQ(one.weights[i].name, two.weights[i].name);
    EXPECT_THAT(two.weights[i].tensor,
                TensorNear<float>(one.weights[i].tensor.shape(),
                                  Values<float>(one.weights[i].tensor), 1e-5));
  }
}

// Synchronised batch norm in a ReplicatedModel: ReplicateModelFn's replica
// context reaches the Keras layer, so two replicas of 4 rows normalise with
// the statistics of all 8, and train (weights and moving averages) as one
// model on the whole batch; unsynchronised, each replica's own statistics
// give other weights.
std::vector<NamedTensor> TrainWithBatchNorm(int replicas, bool synchronized) {
  keras::KerasTensor x = keras::Input({2}, {.name = "x"});
  keras::KerasTensor h =
      keras::Dense(2, {.kernel_initializer = Kernel(2, 2, {1, 0.5, -0.5, 1}), .name = "d"})(x);
  h = keras::BatchNormalization({.momentum = 0.5, .synchronized = synchronized})(h);
  keras::KerasTensor y =
      keras::Dense(1, {.kernel_initializer = Kernel(2, 1, {1, -1}), .name = "y"})(h);
  keras::Model model({x}, {y}, "bn");
  EXPECT_EQ(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1),
                          keras::CompileOptions{.loss = {{"", "mse"}}}),
            absl::OkStatus());
  keras::Model replicated = keras::ReplicatedModel(model, {.replicas = replicas});
  // The replicas' rows differ in mean and spread.
  const keras::TensorMap inputs = {
      {"x", Matrix(8, 2, {0, 1, 1, 2, 2, 0, 1, 1, 5, -1, 7, 3, 6, 0, 9, 2})}};
  const keras::TensorMap targets = {{"y", Matrix(8, 1, {0, 1, 0, 1, 1, 0, 1, 0})}};
  absl::StatusOr<keras::History> fitted = replicated.Fit(
      inputs, targets, {.batch_size = 8, .epochs = 3, .shuffle = false, .verbose = 0});
  EXPECT_EQ(fitted.status(), absl::OkStatus());
  absl::StatusOr<std::vector<NamedTensor>> weights = replicated.GetWeights();
  EXPECT_EQ(weights.status(), absl::OkStatus());
  return weights.ok() ? *weights : std::vector<NamedTensor>{};
}

TEST(FunctionalTest, SynchronisedBatchNormReplicasTrainAsOne) {
  const std::vector<NamedTensor> one = TrainWithBatchNorm(1, false);
  const std::vector<NamedTensor> synced = TrainWithBatchNorm(2, true);
  const std::vector<NamedTensor> apart = TrainWithBatchNorm(2, false);
  ASSERT_EQ(one.size(), 8u);  // two Dense kernels and biases, gamma, beta, two averages
  ASSERT_EQ(synced.size(), one.size());
  ASSERT_EQ(apart.size(), one.size());
  double apart_worst = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(synced[i].name, one[i].name);
    EXPECT_THAT(synced[i].tensor,
                TensorNear<float>(one[i].tensor.shape(), Values<float>(one[i].tensor), 1e-5))
        << one[i].name;
    for (int64_t k = 0; k < one[i].tensor.NumElements(); ++k) {
      apart_worst = std::max<double>(
          apart_worst, std::abs(apart[i].tensor.data<float>()[k] - one[i].tensor.data<float>()[k]));
    }
  }
  EXPECT_GT(apart_worst, 1e-2);
}

}  // namespace
}  // namespace towerflow
