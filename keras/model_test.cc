// keras::: the progress bar and summary as Keras prints them, fit /
// evaluate / predict with hand-computed values, and replication: 1, 2 and 4
// replicas train to the same weights and evaluate and predict alike.
#include "keras/model.h"

#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "gtest/gtest.h"
#include "keras/mixed_precision.h"
#include "keras/progbar.h"
#include "ops/gen/array_ops.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

TEST(ProgbarTest, OneLinePerEpochOnAPipe) {
  std::ostringstream out;
  double now = 0;
  keras::Progbar bar(3, &out, /*dynamic=*/false, [&now] { return now; });
  now = 1;
  bar.Update(1, {{"loss", 0.75}, {"accuracy", 0.5}}, 2);
  now = 2;
  bar.Update(2, {{"loss", 0.25}, {"accuracy", 1}}, 2);
  now = 3;
  bar.Update(3, {{"loss", 0.5}, {"accuracy", 0.75}}, 4);
  EXPECT_EQ(out.str(), "");  // nothing until the epoch ends
  bar.Finish({{"val_loss", 0.0001}});
  // Means weighted by batch size: loss (1.5 + 0.5 + 2) / 8, accuracy (1 + 2 + 3) / 8.
  EXPECT_EQ(out.str(),
            "3/3 [==============================] - 3s 1s/step - loss: 0.5000 - accuracy: 0.7500 "
            "- val_loss: 1.0000e-04\n");
}

TEST(ProgbarTest, RedrawsInPlaceOnATerminal) {
  std::ostringstream out;
  double now = 0;
  keras::Progbar bar(20, &out, /*dynamic=*/true, [&now] { return now; });
  now = 0.5;
  bar.Update(5, {{"loss", 2}});
  EXPECT_EQ(out.str(), "\r 5/20 [======>.......................] - ETA: 1s - loss: 2.0000");
  now = 0.04 * 20;
  bar.Update(20, {{"loss", 1}});
  bar.Finish();
  EXPECT_EQ(out.str().substr(out.str().rfind('\r')),
            "\r20/20 [==============================] - 1s 40ms/step - loss: 1.5000\n");
}

keras::Sequential SmallModel() {
  // Fixed weights: kernel [4, 5] of 0.1 * (i % 7 - 3), kernel [5, 3] of 0.
  std::vector<float> k1(20);
  for (int i = 0; i < 20; ++i) k1[i] = 0.1f * (i % 7 - 3);
  return keras::Sequential(
      {4},
      {keras::Dense(5, {.activation = "relu",
                        .kernel_initializer = initializers::Constant(
                            MakeTensorProto<float>(absl::MakeConstSpan(k1), TensorShape({4, 5})))}),
       keras::Dense(3, {.activation = "softmax", .kernel_initializer = initializers::Zeros()})});
}

// 16 examples of 4 features; labels 0, 1, 2 by the features' sign pattern.
void Data(Tensor* x, Tensor* y) {
  *x = Tensor(DT_FLOAT, TensorShape({16, 4}));
  *y = Tensor(DT_INT32, TensorShape({16}));
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 4; ++j) x->data<float>()[i * 4 + j] = ((i * 5 + j * 3) % 11) / 5.0f - 1;
    y->data<int32_t>()[i] = i % 3;
  }
}

TEST(SequentialTest, SummaryIsKerasTable) {
  keras::Sequential model({4}, {keras::Dense(3, {.activation = "relu"}), keras::Dropout(0.5),
                                keras::Dense(2), keras::BatchNormalization()});
  TW_ASSERT_OK_AND_ASSIGN(std::string summary, model.Summary());
  EXPECT_EQ(summary,
            "Model: \"sequential\"\n"
            "_________________________________________________________________\n"
            "Layer (type)                 Output Shape              Param #   \n"
            "=================================================================\n"
            "dense (Dense)                (None, 3)                 15        \n"
            "_________________________________________________________________\n"
            "dropout (Dropout)            (None, 3)                 0         \n"
            "_________________________________________________________________\n"
            "dense_1 (Dense)              (None, 2)                 8         \n"
            "_________________________________________________________________\n"
            "batch_normalization (BatchNo (None, 2)                 8         \n"
            "=================================================================\n"
            "Total params: 31\n"
            "Trainable params: 27\n"
            "Non-trainable params: 4\n"
            "_________________________________________________________________\n");
}

TEST(SequentialTest, EvaluatesFitsAndPredicts) {
  keras::Sequential model = SmallModel();
  Tensor x, y;
  Data(&x, &y);
  EXPECT_THAT(model.Fit(x, y), StatusIs(absl::StatusCode::kFailedPrecondition, "compile"));
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy", {"accuracy"}));
  // Zero output weights: every class 1/3, loss log 3; argmax picks class 0,
  // right for 6 of 16 labels.
  TW_ASSERT_OK_AND_ASSIGN(auto before, model.Evaluate(x, y, 5));
  EXPECT_NEAR(before["loss"], std::log(3.0), 1e-6);
  EXPECT_NEAR(before["accuracy"], 6.0 / 16, 1e-6);
  std::ostringstream log;
  TW_ASSERT_OK_AND_ASSIGN(keras::History history, model.Fit(x, y,
                                                            {.batch_size = 8,
                                                             .epochs = 5,
                                                             .seed = 3,
                                                             .validation_x = &x,
                                                             .validation_y = &y,
                                                             .out = &log}));
  ASSERT_EQ(history.history["loss"].size(), 5u);
  EXPECT_EQ(history.history.count("val_accuracy"), 1u);
  EXPECT_LT(history.history["loss"].back(), history.history["loss"].front());
  EXPECT_NEAR(history.history["val_loss"].back(), (*model.Evaluate(x, y, 16))["loss"], 1e-6);
  EXPECT_EQ(log.str().substr(0, 10), "Epoch 1/5\n");
  EXPECT_NE(log.str().find("2/2 [==============================] - "), std::string::npos);
  TW_ASSERT_OK_AND_ASSIGN(Tensor p, model.Predict(x, 5));  // 5 + 5 + 5 + 1 rows
  ASSERT_EQ(p.shape(), TensorShape({16, 3}));
  for (int i = 0; i < 16; ++i) {
    const float* row = p.data<float>() + 3 * i;
    EXPECT_NEAR(row[0] + row[1] + row[2], 1, 1e-6);
  }
  EXPECT_THAT(
      model.Evaluate(Tensor(DT_FLOAT, TensorShape({0, 4})), Tensor(DT_INT32, TensorShape({0}))),
      StatusIs(absl::StatusCode::kInvalidArgument, "dense_input has no examples (0 rows)"));
  // A model_fn without its feature is an error, not a crash.
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, model.ToModelFn());
  Scope s = Scope::NewRootScope();
  fn(s, {{"images", ops::Placeholder(s, DT_FLOAT)}}, {}, ModeKeys::kPredict, Params());
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kInvalidArgument, "feature \"x\""));
  Tensor wrong(DT_FLOAT, TensorShape({2, 5}));
  EXPECT_THAT(model.Predict(wrong),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "expected dense_input to be float of shape (None, 4)"));
}

// Under a mixed policy the model trains as in float32 to the 16-bit type's
// precision, with float32 weights; under mixed_float16 its optimizer has a
// loss scale.
TEST(SequentialTest, MixedPrecisionPolicies) {
  Tensor x, y;
  Data(&x, &y);
  std::map<std::string, std::vector<double>> losses;
  std::map<std::string, Tensor> predictions;
  for (const char* policy : {"float32", "mixed_bfloat16", "mixed_float16"}) {
    SCOPED_TRACE(policy);
    TW_ASSERT_OK(keras::mixed_precision::SetGlobalPolicy(policy));
    EXPECT_EQ(keras::mixed_precision::GlobalPolicy().name(), policy);
    keras::Sequential model = SmallModel();
    TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                               "sparse_categorical_crossentropy"));
    TW_ASSERT_OK_AND_ASSIGN(
        keras::History history,
        model.Fit(x, y, {.batch_size = 8, .epochs = 10, .seed = 3, .verbose = 0}));
    losses[policy] = history.history["loss"];
    TW_ASSERT_OK_AND_ASSIGN(predictions[policy], model.Predict(x));
    EXPECT_EQ(predictions[policy].dtype(), DT_FLOAT);
    TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> weights, model.GetWeights());
    for (const NamedTensor& w : weights) EXPECT_EQ(w.tensor.dtype(), DT_FLOAT) << w.name;
    TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, model.ToModelFn());
    Scope s = Scope::NewRootScope();
    fn(s,
       {{"x", ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape(PartialTensorShape({-1, 4})))}},
       {{"y", ops::Placeholder(s, DT_INT32)}}, ModeKeys::kTrain, Params());
    TW_ASSERT_OK(s.status());
    bool scaled = false;
    for (const Variable& v : GetVariables(*s.graph())) scaled |= v.name() == "current_loss_scale";
    EXPECT_EQ(scaled, std::string(policy) == "mixed_float16");
  }
  TW_ASSERT_OK(keras::mixed_precision::SetGlobalPolicy("float32"));
  EXPECT_THAT(keras::mixed_precision::SetGlobalPolicy("float16"),
              StatusIs(absl::StatusCode::kInvalidArgument, "none of float32"));
  EXPECT_EQ(keras::mixed_precision::GlobalPolicy().compute_dtype(), DT_FLOAT);
  // The 16-bit math ran: its losses are not float32's bit for bit.
  EXPECT_NE(losses["mixed_bfloat16"], losses["float32"]);
  EXPECT_NE(losses["mixed_float16"], losses["float32"]);
  for (const auto& [policy, rtol] : {std::pair{"mixed_bfloat16", 3e-2}, {"mixed_float16", 4e-3}}) {
    SCOPED_TRACE(policy);
    ASSERT_EQ(losses[policy].size(), 10u);
    for (size_t e = 0; e < 10; ++e) EXPECT_NEAR(losses[policy][e], losses["float32"][e], rtol);
    EXPECT_THAT(predictions[policy], TensorNear(predictions["float32"], rtol, rtol));
  }
}

TEST(SequentialTest, ToModelFnGivesAnEstimatorModel) {
  keras::Sequential model = SmallModel();
  EXPECT_THAT(model.ToModelFn().status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5), "mse"));
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, model.ToModelFn());
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 4}));
  Output y = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 3}));
  EstimatorSpec spec = fn(root, {{"x", x}}, {{"y", y}}, ModeKeys::kTrain, Params());
  TW_ASSERT_OK(root.status());
  EXPECT_TRUE(spec.loss.valid());
  EXPECT_TRUE(spec.train_op.valid());
  EXPECT_EQ(spec.predictions.at("output").shape().DebugString(), "[?,3]");
  EXPECT_EQ(spec.predictions.at("logits").node()->name(), "dense_1/BiasAdd");
}

TEST(SequentialTest, TrainOnBatchValidationSplitAndEmbeddings) {
  Tensor x, y;
  Data(&x, &y);
  keras::Sequential model = SmallModel();
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy", {"accuracy"}));
  // The first step starts from uniform outputs: loss log 3.
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs first, model.TrainOnBatch(x, y));
  EXPECT_NEAR(first["loss"], std::log(3.0), 1e-6);
  EXPECT_NEAR(first["accuracy"], 6.0 / 16, 1e-6);
  TW_ASSERT_OK_AND_ASSIGN(Tensor p, model.PredictOnBatch(x));
  EXPECT_EQ(p.shape(), TensorShape({16, 3}));
  // validation_split 0.25 holds out the last 4 rows: val_* equal their evaluation.
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History h, model.Fit(x, y, {.batch_size = 4, .validation_split = 0.25, .verbose = 0}));
  Tensor xv(DT_FLOAT, TensorShape({4, 4})), yv(DT_INT32, TensorShape({4}));
  std::copy(x.data<float>() + 48, x.data<float>() + 64, xv.data<float>());
  std::copy(y.data<int32_t>() + 12, y.data<int32_t>() + 16, yv.data<int32_t>());
  TW_ASSERT_OK_AND_ASSIGN(auto val, model.Evaluate(xv, yv));
  ASSERT_EQ(h.history["val_loss"].size(), 1u);
  ASSERT_EQ(h.history["val_accuracy"].size(), 1u);
  EXPECT_NEAR(h.history["val_loss"][0], val["loss"], 1e-6);
  EXPECT_NEAR(h.history["val_accuracy"][0], val["accuracy"], 1e-6);

  // Integer inputs through an Embedding: rows of the table, averaged.
  keras::Sequential words({2}, {keras::Embedding(5, 3), keras::Flatten(), keras::Dense(2)}, "words",
                          DT_INT32);
  TW_ASSERT_OK_AND_ASSIGN(std::string summary, words.Summary());
  EXPECT_NE(summary.find("embedding (Embedding)        (None, 2, 3)              15"),
            std::string::npos)
      << summary;
  Tensor ids(DT_INT32, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) ids.data<int32_t>()[i] = i;
  TW_ASSERT_OK_AND_ASSIGN(Tensor out, words.Predict(ids));
  EXPECT_EQ(out.shape(), TensorShape({2, 2}));
}

TEST(SequentialTest, ARandomSeedMakesRunsAlike) {
  // Glorot-uniform kernels and dropout: the same seed, the same numbers.
  const auto run = [](std::optional<int64_t> seed) -> std::vector<NamedTensor> {
    keras::Sequential model({4}, {keras::Dense(5), keras::Dropout(0.5), keras::Dense(3)});
    if (seed.has_value()) {
      EXPECT_EQ(model.SetRandomSeed(*seed), absl::OkStatus());
    }
    EXPECT_EQ(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1), "mse"),
              absl::OkStatus());
    Tensor x, y;
    Data(&x, &y);
    Tensor targets(DT_FLOAT, TensorShape({16, 3}));
    for (int i = 0; i < 48; ++i) targets.data<float>()[i] = (i % 3) * 0.5f;
    EXPECT_EQ(model.Fit(x, targets, {.batch_size = 8, .verbose = 0}).status(), absl::OkStatus());
    EXPECT_THAT(model.SetRandomSeed(1), StatusIs(absl::StatusCode::kFailedPrecondition, "built"));
    absl::StatusOr<std::vector<NamedTensor>> w = model.GetWeights();
    EXPECT_EQ(w.status(), absl::OkStatus());
    return w.ok() ? *w : std::vector<NamedTensor>();
  };
  const std::vector<NamedTensor> a = run(42), b = run(42), c = run(43);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  ASSERT_EQ(c.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_THAT(b[i].tensor, TensorNear<float>(a[i].tensor.shape(), Values<float>(a[i].tensor), 0))
        << a[i].name;
  }
  EXPECT_NE(Values<float>(a[0].tensor), Values<float>(c[0].tensor));
}

TEST(SequentialTest, FitsFromADatasetOfBatches) {
  Tensor x, y;
  Data(&x, &y);
  keras::Sequential a = SmallModel(), b = SmallModel();
  for (keras::Sequential* m : {&a, &b}) {
    TW_ASSERT_OK(m->Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                            "sparse_categorical_crossentropy", {"accuracy"}));
  }
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History from_tensors,
      a.Fit(x, y, {.batch_size = 8, .epochs = 2, .shuffle = false, .verbose = 0}));
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
  std::ostringstream log;
  TW_ASSERT_OK_AND_ASSIGN(keras::History from_dataset,
                          b.Fit(d.Batch(8), {.epochs = 2, .out = &log}));
  for (int e = 0; e < 2; ++e) {
    EXPECT_NEAR(from_dataset.history["loss"][e], from_tensors.history["loss"][e], 1e-6);
    EXPECT_NEAR(from_dataset.history["accuracy"][e], from_tensors.history["accuracy"][e], 1e-6);
  }
  // Without a known number of steps, Keras's bar counts them.
  EXPECT_EQ(log.str().substr(0, 28), "Epoch 1/2\n      2/Unknown - ");
  TW_ASSERT_OK_AND_ASSIGN(data::Dataset only_x, data::Dataset::FromTensorSlices({x}));
  EXPECT_THAT(b.Fit(only_x.Batch(8)), StatusIs(absl::StatusCode::kInvalidArgument,
                                               "a dataset element must be a batch (x, y)"));
}

TEST(SequentialTest, RecompilingAndReplicatingKeepTheWeights) {
  Tensor x, y;
  Data(&x, &y);
  keras::Sequential model = SmallModel();
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy"));
  TW_ASSERT_OK(model.Fit(x, y, {.epochs = 2, .verbose = 0}).status());
  TW_ASSERT_OK_AND_ASSIGN(Tensor trained, model.Predict(x));
  // TF's tpu_model starts from the model's weights.
  keras::Model two = keras::ReplicatedModel(model, {.replicas = 2});
  TW_ASSERT_OK_AND_ASSIGN(Tensor replicated, two.Predict(x, 8));
  EXPECT_THAT(replicated, TensorNear<float>({16, 3}, Values<float>(trained), 1e-6));
  // Compiling again changes the loss, not the weights.
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.1),
                             "sparse_categorical_crossentropy", {"accuracy"}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor recompiled, model.Predict(x));
  EXPECT_EQ(Values<float>(recompiled), Values<float>(trained));
}

TEST(SequentialTest, TheEstimatorTrainsItReplicated) {
  keras::Sequential model = SmallModel();
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy"));
  TW_ASSERT_OK_AND_ASSIGN(ModelFn fn, model.ToModelFn());
  ReplicateOptions replicate;
  replicate.devices = {"/cpu:0", "/cpu:1"};
  TW_ASSERT_OK_AND_ASSIGN(ModelFn towers, ReplicateModelFn(fn, replicate));
  RunConfig config;
  config.model_dir = testing::MakeTempDir("keras_estimator");
  config.log_step_count_steps = 0;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.session_options.device_count["CPU"] = 2;
  Estimator estimator(towers, config);
  const InputFn input = []() -> absl::StatusOr<InputSpec> {
    Tensor x, y;
    Data(&x, &y);
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
    return InputSpec{d.Batch(8).Repeat(), {"x"}, {"y"}};
  };
  const InputFn once = [&input]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(InputSpec spec, input());
    spec.dataset = spec.dataset.Take(2);
    return spec;
  };
  TW_ASSERT_OK(estimator.Train(input, {.steps = 10}).status());
  TW_ASSERT_OK_AND_ASSIGN(MetricMap after, estimator.Evaluate(once));
  // Zero output weights start at log 3; ten steps lower it.
  EXPECT_LT(after["loss"], std::log(3.0));
}

struct Trained {
  keras::History history;
  std::map<std::string, double> metrics;
  Tensor predictions;
  std::vector<NamedTensor> weights;
};

Trained Train(int replicas, bool uneven, int64_t batch) {
  keras::Sequential model = SmallModel();
  EXPECT_EQ(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                          "sparse_categorical_crossentropy", {"accuracy"}),
            absl::OkStatus());
  keras::Model replicated =
      keras::ReplicatedModel(model, {.replicas = replicas, .uneven_batches = uneven});
  Tensor x, y;
  Data(&x, &y);
  Trained t;
  absl::StatusOr<keras::History> h =
      replicated.Fit(x, y, {.batch_size = batch, .epochs = 5, .seed = 3, .verbose = 0});
  EXPECT_EQ(h.status(), absl::OkStatus());
  if (h.ok()) t.history = *h;
  absl::StatusOr<std::map<std::string, double>> m = replicated.Evaluate(x, y, batch);
  EXPECT_EQ(m.status(), absl::OkStatus());
  if (m.ok()) t.metrics = *m;
  absl::StatusOr<Tensor> p = replicated.Predict(x, batch);
  EXPECT_EQ(p.status(), absl::OkStatus());
  if (p.ok()) t.predictions = *p;
  absl::StatusOr<std::vector<NamedTensor>> w = replicated.GetWeights();
  EXPECT_EQ(w.status(), absl::OkStatus());
  if (w.ok()) t.weights = *w;
  return t;
}

void ExpectSame(const Trained& a, const Trained& b) {
  for (const auto& [name, values] : a.history.history) {
    ASSERT_EQ(b.history.history.at(name).size(), values.size()) << name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR(b.history.history.at(name)[i], values[i], 1e-5) << name << " epoch " << i;
    }
  }
  EXPECT_NEAR(a.metrics.at("loss"), b.metrics.at("loss"), 1e-5);
  EXPECT_NEAR(a.metrics.at("accuracy"), b.metrics.at("accuracy"), 1e-6);
  EXPECT_THAT(b.predictions, TensorNear<float>({16, 3}, Values<float>(a.predictions), 1e-5));
  // The same weights after the 10 steps.
  ASSERT_EQ(a.weights.size(), 4u);
  ASSERT_EQ(b.weights.size(), 4u);
  for (size_t i = 0; i < a.weights.size(); ++i) {
    EXPECT_EQ(a.weights[i].name, b.weights[i].name);
    EXPECT_THAT(b.weights[i].tensor, TensorNear<float>(a.weights[i].tensor.shape(),
                                                       Values<float>(a.weights[i].tensor), 1e-5))
        << a.weights[i].name;
  }
}

TEST(ReplicatedModelTest, OneTwoAndFourReplicasTrainAlike) {
  // 10 steps of 8 examples (2 per epoch); the shards' losses scaled by 1/N
  // and their gradients summed give the unreplicated step.
  const Trained one = Train(1, false, 8);
  EXPECT_LT(one.metrics.at("loss"), std::log(3.0));
  ExpectSame(one, Train(2, false, 8));
  ExpectSame(one, Train(4, false, 8));
}

TEST(ReplicatedModelTest, SumReductionAddsTheReplicasSteps) {
  // CrossShardOptimizer's SUM: two replicas' unscaled mean-loss gradients
  // add up to twice the plain step, so learning rate 0.25 with SUM is the
  // plain model at 0.5.
  Tensor x, y;
  Data(&x, &y);
  std::vector<std::vector<NamedTensor>> weights;
  for (const auto& [rate, reduction] :
       {std::make_pair(0.5, LossReduction::kMean), std::make_pair(0.25, LossReduction::kSum)}) {
    keras::Sequential model = SmallModel();
    TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(rate),
                               "sparse_categorical_crossentropy"));
    keras::Model two = keras::ReplicatedModel(model, {.replicas = 2, .loss_reduction = reduction});
    TW_ASSERT_OK(two.Fit(x, y, {.batch_size = 8, .epochs = 3, .seed = 1, .verbose = 0}).status());
    TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> w, two.GetWeights());
    weights.push_back(w);
  }
  ASSERT_EQ(weights[0].size(), weights[1].size());
  for (size_t i = 0; i < weights[0].size(); ++i) {
    EXPECT_THAT(weights[1][i].tensor, TensorNear<float>(weights[0][i].tensor.shape(),
                                                        Values<float>(weights[0][i].tensor), 1e-5))
        << weights[0][i].name;
  }
  keras::Model none = keras::ReplicatedModel(
      SmallModel(), {.replicas = 2, .loss_reduction = LossReduction::kSumByNonzeroWeights});
  EXPECT_THAT(none.Predict(x, 8),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be kMean or kSum"));
}

TEST(ReplicatedModelTest, ReplicasRunOnTheirDevices) {
  keras::Sequential model = SmallModel();
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy"));
  keras::Model two = keras::ReplicatedModel(model, {.replicas = 2});
  EXPECT_EQ(two.replicas(), 2);
  EXPECT_EQ(model.replicas(), 1);
  Tensor x, y;
  Data(&x, &y);
  TW_ASSERT_OK(two.Fit(x, y, {.batch_size = 8, .verbose = 0}).status());
  TW_ASSERT_OK_AND_ASSIGN(GraphDef graph, two.ExportGraphDef());
  std::map<std::string, std::string> devices;
  for (const NodeDef& n : graph.node()) devices[n.name()] = n.device();
  // Each replica's shard of the inputs and targets in its own placeholder
  // on its device (tpu_model's names); the weights once, on the first
  // device (the parameter server); each replica on its device.
  EXPECT_EQ(devices.count("dense_input"), 0u);
  EXPECT_EQ(devices["infeed-enqueue-dense_input-0"], "/device:CPU:0");
  EXPECT_EQ(devices["infeed-enqueue-dense_input-1"], "/device:CPU:1");
  EXPECT_EQ(devices["infeed-enqueue-dense_1_target-0"], "/device:CPU:0");
  EXPECT_EQ(devices["infeed-enqueue-dense_1_target-1"], "/device:CPU:1");
  EXPECT_EQ(devices.count("infeed-enqueue-dense_input-2"), 0u);
  EXPECT_EQ(devices.count("split_inputs/split"), 0u);
  EXPECT_EQ(devices["dense/kernel"], "/device:CPU:0");
  EXPECT_EQ(devices["dense/MatMul"], "/device:CPU:0");
  EXPECT_EQ(devices["tower_1/dense/MatMul"], "/device:CPU:1");
  EXPECT_EQ(devices["training/tower_1/dense_1/MatMul"], "/device:CPU:1");
  EXPECT_EQ(devices.count("tower_2/dense/MatMul"), 0u);
}

TEST(ReplicatedModelTest, UnevenBatchesAreRefusedOrWeighted) {
  keras::Sequential model = SmallModel();
  TW_ASSERT_OK(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                             "sparse_categorical_crossentropy", {"accuracy"}));
  keras::Model four = keras::ReplicatedModel(model, {.replicas = 4});
  Tensor x, y;
  Data(&x, &y);
  EXPECT_THAT(four.Fit(x, y, {.batch_size = 6, .verbose = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "batch_size must be divisible by num_replicas (batch_size 6, "
                       "num_replicas 4)"));
  // Batches of 6, 6 and 4: three replicas split the last one 2, 1, 1.
  ExpectSame(Train(1, false, 6), Train(3, true, 6));
}

}  // namespace
}  // namespace towerflow
