// keras::Model::Save and keras::LoadModel: the architecture (keras/
// model_config.proto), the compile settings and the weights come back, so
// the loaded model predicts, evaluates and trains on as the saved one;
// layers that cannot be described and broken files are errors.
#include <algorithm>
#include <fstream>
#include <map>

#include "core/file_io.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "gtest/gtest.h"
#include "keras/layer.h"
#include "keras/model.h"
#include "layers/regularizers.h"
#include "ops/gen/math_ops.h"
#include "saved_model/loader.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

Tensor Rows(int64_t rows, int64_t cols, float scale) {
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  for (int64_t i = 0; i < rows * cols; ++i) t.data<float>()[i] = scale * ((i * 7) % 11 - 5);
  return t;
}

void ExpectSameWeights(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_THAT(b[i].tensor, TensorNear<float>(a[i].tensor.shape(), Values<float>(a[i].tensor), 0))
        << a[i].name;
  }
}

// Keras's `synchronized` argument of BatchNormalization is in its config
// when set, and back from it; absent otherwise (configs as they were).
TEST(LayerConfigTest, ASynchronizedBatchNormKeepsItsFlag) {
  const keras::Layer synced = keras::BatchNormalization({.synchronized = true});
  ASSERT_TRUE(synced.config().has_value());
  EXPECT_EQ(synced.config()->at("synchronized"), "true");
  TW_ASSERT_OK_AND_ASSIGN(
      const keras::Layer back,
      keras::LayerFromConfig("BatchNormalization", "batch_normalization", *synced.config()));
  ASSERT_TRUE(back.config().has_value());
  EXPECT_EQ(back.config()->at("synchronized"), "true");
  const keras::Layer plain = keras::BatchNormalization();
  ASSERT_TRUE(plain.config().has_value());
  EXPECT_EQ(plain.config()->count("synchronized"), 0u);
}

TEST(SaveTest, AFunctionalModelComesBackWhole) {
  // Two inputs, two outputs, merge layers, batch norm, dropout and a
  // regularizer: every kind of argument.
  keras::KerasTensor a = keras::Input({3}, {.name = "a"});
  keras::KerasTensor b = keras::Input({3}, {.name = "b"});
  keras::Layer shared =
      keras::Dense(4, {.activation = "tanh", .kernel_regularizer = regularizers::L2(0.01)});
  keras::KerasTensor h = keras::Concatenate()({shared(a), shared(b)});
  h = keras::Dropout(0.25, 7)(keras::BatchNormalization({.momentum = 0.9})(h));
  keras::KerasTensor score = keras::Dense(1, {.name = "score"})(h);
  keras::KerasTensor kind =
      keras::Dense(3, {.activation = "softmax", .name = "kind"})(keras::Subtract()({a, b}));
  keras::Model model({a, b}, {score, kind}, "two_heads");
  TW_ASSERT_OK(model.SetRandomSeed(3));
  TW_ASSERT_OK(model.Compile(
      keras::Adam(0.01, 0.8),
      keras::CompileOptions{.loss = {{"score", "mse"}, {"kind", "sparse_categorical_crossentropy"}},
                            .metrics = {{"kind", {"accuracy"}}},
                            .loss_weights = {{"score", 0.5}}}));
  const keras::TensorMap x = {{"a", Rows(8, 3, 0.1f)}, {"b", Rows(8, 3, -0.2f)}};
  Tensor labels(DT_INT32, TensorShape({8}));
  for (int i = 0; i < 8; ++i) labels.data<int32_t>()[i] = i % 3;
  const keras::TensorMap y = {{"score", Rows(8, 1, 0.3f)}, {"kind", labels}};
  TW_ASSERT_OK(model.Fit(x, y, {.batch_size = 4, .epochs = 2, .verbose = 0}).status());
  TW_ASSERT_OK(model.SetLearningRate(0.005));
  const std::string dir = testing::MakeTempDir("keras_save") + "/two_heads";
  TW_ASSERT_OK(model.Save(dir));

  TW_ASSERT_OK_AND_ASSIGN(keras::Model loaded, keras::LoadModel(dir));
  EXPECT_EQ(loaded.name(), "two_heads");
  EXPECT_EQ(loaded.input_names(), model.input_names());
  EXPECT_EQ(loaded.output_names(), model.output_names());
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> saved, model.GetWeights());
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> restored, loaded.GetWeights());
  ExpectSameWeights(saved, restored);
  EXPECT_EQ(*loaded.Summary(), *model.Summary());
  // Predictions, metrics (regularization included) and the learning rate.
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap p0, model.Predict(x));
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap p1, loaded.Predict(x));
  for (const auto& [name, t] : p0) {
    EXPECT_THAT(p1.at(name), TensorNear<float>(t.shape(), Values<float>(t), 0)) << name;
  }
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs m0, model.Evaluate(x, y));
  TW_ASSERT_OK_AND_ASSIGN(keras::Logs m1, loaded.Evaluate(x, y));
  ASSERT_EQ(m1.size(), 4u);  // loss, score_loss, kind_loss, kind_accuracy
  for (const auto& [name, v] : m0) EXPECT_DOUBLE_EQ(m1.at(name), v) << name;
  TW_ASSERT_OK_AND_ASSIGN(double lr, loaded.GetLearningRate());
  EXPECT_FLOAT_EQ(lr, 0.005);
  // And it trains on (the optimizer's slots start afresh).
  TW_ASSERT_OK_AND_ASSIGN(keras::History more,
                          loaded.Fit(x, y, {.batch_size = 4, .epochs = 10, .verbose = 0}));
  EXPECT_LT(more.history["loss"].back(), more.history["loss"].front());
}

TEST(SaveTest, ASequentialComesBackAsOne) {
  keras::Sequential model(
      {2, 2, 1}, {keras::Conv2D(2, 2, {.padding = "same"}),
                  keras::MaxPooling2D(2, {.strides = layers::Size2(1, 1)}), keras::Flatten(),
                  keras::Activation("relu"), keras::LayerNormalization(), keras::Dense(2)});
  const std::string dir = testing::MakeTempDir("keras_save_sequential");
  TW_ASSERT_OK(model.Save(dir));  // uncompiled: no training config
  TW_ASSERT_OK_AND_ASSIGN(std::string text, ReadFileToString(dir + "/model.pbtxt"));
  EXPECT_NE(text.find("class_name: \"Sequential\""), std::string::npos) << text;
  EXPECT_EQ(text.find("training_config"), std::string::npos) << text;
  TW_ASSERT_OK_AND_ASSIGN(keras::Model loaded, keras::LoadModel(dir));
  EXPECT_EQ(*loaded.Summary(), *model.Summary());
  Tensor x(DT_FLOAT, TensorShape({3, 2, 2, 1}));
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = 0.5f * (i % 5) - 1;
  TW_ASSERT_OK_AND_ASSIGN(Tensor p0, model.Predict(x));
  TW_ASSERT_OK_AND_ASSIGN(Tensor p1, loaded.Predict(x));
  EXPECT_THAT(p1, TensorNear<float>({3, 2}, Values<float>(p0), 0));
  // The loaded model is not compiled, as Keras's after a TF optimizer.
  EXPECT_THAT(loaded.Fit(x, Tensor(DT_INT32, TensorShape({3}))),
              StatusIs(absl::StatusCode::kFailedPrecondition, "compile"));
}

// save_format "tf": a SavedModel that LoadSavedModel serves with the
// model's predictions, inputs and outputs by their Keras names, and that
// LoadModel reads back whole.
TEST(SaveTest, ASavedModelServesAndComesBack) {
  keras::KerasTensor a = keras::Input({3}, {.name = "a"});
  keras::KerasTensor b = keras::Input({3}, {.name = "b"});
  keras::Layer shared = keras::Dense(4, {.activation = "tanh"});
  keras::KerasTensor h = keras::BatchNormalization()(keras::Concatenate()({shared(a), shared(b)}));
  keras::KerasTensor score = keras::Dense(1, {.name = "score"})(h);
  keras::KerasTensor kind =
      keras::Dense(3, {.activation = "softmax", .name = "kind"})(keras::Subtract()({a, b}));
  keras::Model model({a, b}, {score, kind}, "two_heads");
  TW_ASSERT_OK(model.SetRandomSeed(5));
  TW_ASSERT_OK(model.Compile(
      keras::SGD(0.1),
      keras::CompileOptions{.loss = {{"score", "mse"}, {"kind", "sparse_categorical_crossentropy"}},
                            .metrics = {{"kind", {"accuracy"}}}}));
  const keras::TensorMap x = {{"a", Rows(6, 3, 0.1f)}, {"b", Rows(6, 3, -0.2f)}};
  Tensor labels(DT_INT32, TensorShape({6}));
  for (int i = 0; i < 6; ++i) labels.data<int32_t>()[i] = i % 3;
  const keras::TensorMap y = {{"score", Rows(6, 1, 0.3f)}, {"kind", labels}};
  // Replicated training; the export is the plain inference graph.
  keras::Model replicated = keras::ReplicatedModel(model, {.replicas = 2});
  TW_ASSERT_OK(replicated.Fit(x, y, {.batch_size = 2, .epochs = 2, .verbose = 0}).status());
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap expected, replicated.Predict(x));
  const std::string dir = testing::MakeTempDir("keras_saved_model") + "/two_heads";
  TW_ASSERT_OK(replicated.Save(dir, keras::Model::SaveFormat::kSavedModel));

  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  const SignatureDef& signature = bundle.meta_graph_def.signature_def().at("serving_default");
  EXPECT_EQ(signature.method_name(), kPredictMethodName);
  EXPECT_EQ(signature.inputs().at("a").name(), "a:0");
  EXPECT_EQ(signature.outputs().size(), 2u);  // score and kind, no logits
  EXPECT_EQ(signature.outputs().at("kind").tensor_shape().dim(1).size(), 3);
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors served,
                          bundle.Run("serving_default", {{"a", x.at("a")}, {"b", x.at("b")}}));
  for (const char* name : {"score", "kind"}) {
    EXPECT_THAT(served.at(name), TensorNear<float>(expected.at(name).shape(),
                                                   Values<float>(expected.at(name)), 1e-6))
        << name;
  }
  // The variables are the weights, nothing else (no global step).
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> weights, replicated.GetWeights());
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> saved,
                          ReadCheckpoint(dir + "/variables/variables"));
  std::sort(weights.begin(), weights.end(),
            [](const NamedTensor& l, const NamedTensor& r) { return l.name < r.name; });
  ExpectSameWeights(weights, saved);

  TW_ASSERT_OK_AND_ASSIGN(keras::Model loaded, keras::LoadModel(dir));
  EXPECT_EQ(loaded.output_names(), model.output_names());
  TW_ASSERT_OK_AND_ASSIGN(keras::TensorMap predicted, loaded.Predict(x));
  for (const auto& [name, t] : expected) {
    EXPECT_THAT(predicted.at(name), TensorNear<float>(t.shape(), Values<float>(t), 1e-6)) << name;
  }
  TW_ASSERT_OK(loaded.Fit(x, y, {.batch_size = 3, .verbose = 0}).status());  // compiled as saved

  // Never over an export.
  EXPECT_THAT(model.Save(dir, keras::Model::SaveFormat::kSavedModel),
              StatusIs(absl::StatusCode::kAlreadyExists, "isn't empty"));
}

TEST(SaveTest, WhatCannotBeDescribedIsAnError) {
  keras::Layer custom(
      "Custom", "custom",
      [](const Scope& s, const Output& x, bool, const std::string&) { return ops::Neg(s, x); });
  keras::Sequential with_custom({2}, {keras::Dense(2), custom});
  EXPECT_THAT(
      with_custom.Save(testing::MakeTempDir("keras_save_custom")),
      StatusIs(absl::StatusCode::kFailedPrecondition, "layer custom (Custom) has no config"));
  keras::Sequential with_function(
      {2}, {keras::Dense(2, {.activation = layers::Activation([](const Scope& s, const Output& x) {
                               return ops::Neg(s, x);
                             })})});
  EXPECT_THAT(with_function.Save(testing::MakeTempDir("keras_save_function")),
              StatusIs(absl::StatusCode::kFailedPrecondition, "layer dense (Dense) has no config"));
}

// A saved Dense model's directory with model.pbtxt replaced by `config`.
std::string DirWith(const std::string& name, const std::string& config) {
  keras::Sequential model({2}, {keras::Dense(1)});
  const std::string dir = testing::MakeTempDir(name);
  EXPECT_EQ(model.Save(dir), absl::OkStatus());
  EXPECT_EQ(WriteFileAtomically(dir + "/model.pbtxt", config), absl::OkStatus());
  return dir;
}

TEST(SaveTest, BrokenFilesAreErrorsNamingThem) {
  EXPECT_THAT(keras::LoadModel(testing::MakeTempDir("keras_load_nothing")),
              StatusIs(absl::StatusCode::kNotFound, "model.pbtxt"));
  const std::string input = "inputs { name: \"x\" shape: 2 dtype: \"float\" } ";
  const std::string dense =
      "layers { class_name: \"Dense\" name: \"dense\" "
      "config { key: \"units\" value: \"1\" } } ";
  // Each broken config, and what the error says.
  const std::map<std::string, std::string> cases = {
      {"class_name: \"Model\" " + input + dense + "nodes { layer: 0 inputs: 0 } outputs: 1",
       ""},  // the good one
      {"class_name: \"Model\" nonsense: 1", "model.pbtxt"},
      {"class_name: \"Graph\" " + input + dense + "nodes { layer: 0 inputs: 0 } outputs: 1",
       "expected Sequential or Model"},
      {"class_name: \"Model\" " + input + dense + "nodes { layer: 3 inputs: 0 } outputs: 1",
       "node 0 calls layer 3 of 1"},
      {"class_name: \"Model\" " + input + dense + "nodes { layer: 0 inputs: 5 } outputs: 1",
       "node 0 takes value 5"},
      {"class_name: \"Model\" " + input + dense + "nodes { layer: 0 inputs: 0 } outputs: 9",
       "output value 9 of 2"},
      {"class_name: \"Model\" inputs { name: \"x\" shape: 2 dtype: \"complex999\" } " + dense +
           "nodes { layer: 0 inputs: 0 } outputs: 1",
       "unknown dtype"},
      {"class_name: \"Model\" " + input +
           "layers { class_name: \"Dense\" name: \"dense\" config { key: \"units\" value: "
           "\"ten\" } } nodes { layer: 0 inputs: 0 } outputs: 1",
       "Layer dense (Dense): units is \"ten\", expected an integer"},
      {"class_name: \"Model\" " + input +
           "layers { class_name: \"Dense\" name: \"dense\" config { key: \"unit\" value: "
           "\"1\" } } nodes { layer: 0 inputs: 0 } outputs: 1",
       "unknown argument unit"},
      {"class_name: \"Model\" " + input +
           "layers { class_name: \"Dense\" name: \"dense\" config { key: \"units\" value: \"1\" } "
           "config { key: \"kernel_regularizer\" value: \"l3=1\" } } nodes { layer: 0 inputs: 0 } "
           "outputs: 1",
       "kernel_regularizer is \"l3=1\""},
      {"class_name: \"Model\" " + input +
           "layers { class_name: \"Wormhole\" name: \"w\" } nodes { layer: 0 inputs: 0 } "
           "outputs: 1",
       "unknown layer class Wormhole"},
      {"class_name: \"Model\" " + input + dense +
           "nodes { layer: 0 inputs: 0 } outputs: 1 training_config { optimizer: \"Nadam\" }",
       "Unknown optimizer: Nadam"},
      {"class_name: \"Model\" " + input + dense +
           "nodes { layer: 0 inputs: 0 } outputs: 1 training_config { optimizer: \"SGD\" "
           "loss { key: \"dense\" value: \"hinge\" } }",
       "Unknown loss function: hinge"},
  };
  int i = 0;
  for (const auto& [config, error] : cases) {
    const std::string dir = DirWith(absl::StrCat("keras_load_", i++), config);
    absl::StatusOr<keras::Model> loaded = keras::LoadModel(dir);
    if (error.empty()) {
      EXPECT_EQ(loaded.status(), absl::OkStatus()) << config;
    } else {
      EXPECT_THAT(loaded.status(), StatusIs(absl::StatusCode::kInvalidArgument, error)) << config;
    }
  }
}

}  // namespace
}  // namespace towerflow
