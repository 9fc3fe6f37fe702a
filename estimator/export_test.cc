// Typed export outputs and serving input receivers (TF's export_output.py
// and build_{raw,parsing}_serving_input_receiver_fn), on TF Serving's
// half_plus_two: y = a x + b with a = 0.5 and b = 2 from a checkpoint, so
// x = [1, 2, 5] gives y = [2.5, 3, 4.5] through every signature.
#include "estimator/export.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/file_io.h"
#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/initializers.h"
#include "proto/example.pb.h"
#include "saved_model/loader.h"
#include "tests/example_testing.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::StatusIs;

// Which export outputs HalfPlusTwo returns (params "outputs").
enum Outputs {
  kNone = 0,       // none: serving_default predicts the predictions
  kHalfPlusTwo,    // TF's half_plus_two: predict, regress_x_to_y, classify_x_to_y
  kOnlyRegress,    // one regression signature under its own key
  kNoDefault,      // two signatures, none of them serving_default
  kIntRegression,  // a regression of int32 values
  kEmptyClassification,
};

EstimatorSpec HalfPlusTwo(const Scope& s, const FeatureMap& features, const FeatureMap&,
                          ModeKeys mode, const Params& params) {
  Variable a = GetVariable(s, "a", TensorShape({}), DT_FLOAT, initializers::Constant(0.0f));
  Variable b = GetVariable(s, "b", TensorShape({}), DT_FLOAT, initializers::Constant(0.0f));
  const Output y = ops::Add(s, ops::Mul(s, a.value(), features.at("x")), b.value());
  EstimatorSpec spec(mode);
  spec.predictions["y"] = y;
  const auto add = [&](const std::string& key, ExportOutput output) {
    spec.export_outputs.emplace(key, std::move(output));
  };
  switch (static_cast<int>(params.Get("outputs"))) {
    case kHalfPlusTwo:
      add("serving_default", ExportOutput::Predict({{"y", y}}));
      add("regress_x_to_y", ExportOutput::Regression(y));
      add("classify_x_to_y",
          ExportOutput::Classification(y, ops::Fill(s, ops::Shape(s, y), std::string("y"))));
      break;
    case kOnlyRegress:
      add("regress", ExportOutput::Regression(y));
      break;
    case kNoDefault:
      add("predict", ExportOutput::Predict({{"y", y}}));
      add("regress", ExportOutput::Regression(y));
      break;
    case kIntRegression:
      add("regress", ExportOutput::Regression(ops::Cast(s, y, DT_INT32)));
      break;
    case kEmptyClassification:
      add("classify", ExportOutput::Classification(Output(), Output()));
      break;
    default:
      break;
  }
  return spec;
}

// An Estimator of HalfPlusTwo whose model_dir holds a = 0.5, b = 2.
struct Fixture {
  explicit Fixture(const std::string& name, int outputs, ModelFn model_fn = HalfPlusTwo) {
    config = RunConfig().set_model_dir(testing::MakeTempDir(name));
    config.log = &log;
    config.session_options.device_count["CPU"] = 2;
    params.values["outputs"] = outputs;
    estimator = std::make_unique<Estimator>(std::move(model_fn), config, params);
    const absl::StatusOr<std::string> written = SaveCheckpoint(
        config.model_dir, "model.ckpt", 0,
        {{"a", Scalar<float>(0.5f)}, {"b", Scalar<float>(2)}, {"global_step", Scalar<int64_t>(0)}},
        5);
    EXPECT_TRUE(written.ok()) << written.status();
    base = testing::MakeTempDir(name + "_export");
  }

  std::ostringstream log;
  RunConfig config;
  Params params;
  std::unique_ptr<Estimator> estimator;
  std::string base;
};

ServingInputReceiverFn ParsingReceiver() {
  return BuildParsingServingInputReceiverFn({{"x", FixedLenFeature{DT_FLOAT, TensorShape({1})}}});
}

std::vector<std::string> Keys(const MetaGraphDef& meta) {
  std::vector<std::string> keys;
  for (const auto& [key, signature] : meta.signature_def()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// TF's half_plus_two signatures, written by the Estimator from typed
// outputs over a parsing receiver: every one takes serialized Examples.
TEST(ExportOutputsTest, TypedSignaturesTakeSerializedExamples) {
  Fixture f("typed", kHalfPlusTwo);
  TW_ASSERT_OK_AND_ASSIGN(std::string dir,
                          f.estimator->ExportSavedModel(f.base, ParsingReceiver()));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  const MetaGraphDef& meta = bundle.meta_graph_def;
  EXPECT_THAT(Keys(meta), ElementsAre("classify_x_to_y", "regress_x_to_y", "serving_default"));

  const SignatureDef& predict = meta.signature_def().at("serving_default");
  EXPECT_EQ(predict.method_name(), kPredictMethodName);
  EXPECT_EQ(predict.inputs().at("examples").name(), "input_example_tensor:0");
  EXPECT_EQ(predict.inputs().at("examples").dtype(), DT_STRING);
  EXPECT_EQ(predict.outputs().at("y").name(), "outputs/y:0");
  const SignatureDef& regress = meta.signature_def().at("regress_x_to_y");
  EXPECT_EQ(regress.method_name(), kRegressMethodName);
  EXPECT_EQ(regress.inputs().at("inputs").name(), "input_example_tensor:0");
  EXPECT_EQ(regress.outputs().at("outputs").name(), "outputs/regress_x_to_y/outputs:0");
  const SignatureDef& classify = meta.signature_def().at("classify_x_to_y");
  EXPECT_EQ(classify.method_name(), kClassifyMethodName);
  EXPECT_EQ(classify.outputs().at("scores").dtype(), DT_FLOAT);
  EXPECT_EQ(classify.outputs().at("classes").dtype(), DT_STRING);

  const Tensor examples = FloatExamples("x", {1, 2, 5});
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"examples", examples}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({3, 1}, {2.5f, 3, 4.5f}));
  TW_ASSERT_OK_AND_ASSIGN(out, bundle.Run("regress_x_to_y", {{"inputs", examples}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({3, 1}, {2.5f, 3, 4.5f}));
  TW_ASSERT_OK_AND_ASSIGN(out, bundle.Run("classify_x_to_y", {{"inputs", examples}}));
  EXPECT_THAT(out.at("scores"), TensorIs<float>({3, 1}, {2.5f, 3, 4.5f}));
  EXPECT_EQ(out.at("classes").shape(), TensorShape({3, 1}));
  EXPECT_THAT(Values<std::string>(out.at("classes")), ElementsAre("y", "y", "y"));

  // An Example without the required feature fails the call, naming it.
  EXPECT_THAT(bundle.Run("regress_x_to_y", {{"inputs", FloatExamples("z", {1})}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "x"));
}

// A raw receiver cannot feed classify and regress signatures: they are left
// out with TF's reason in the log, and the predict signature stays.
TEST(ExportOutputsTest, RawReceiverLeavesOutClassifyAndRegress) {
  Fixture f("raw", kHalfPlusTwo);
  TW_ASSERT_OK_AND_ASSIGN(
      std::string dir,
      f.estimator->ExportSavedModel(f.base, {{"x", {DT_FLOAT, PartialTensorShape({-1, 1})}}}));
  EXPECT_THAT(f.log.str(), HasSubstr("Signature 'classify_x_to_y' is left out of the export: "
                                     "Classification input must be a single string Tensor; "
                                     "got {x: float}"));
  EXPECT_THAT(f.log.str(), HasSubstr("Signature 'regress_x_to_y' is left out of the export: "
                                     "Regression input must be a single string Tensor"));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  EXPECT_THAT(Keys(bundle.meta_graph_def), ElementsAre("serving_default"));
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"x", Literal<float>({1, 1}, {4})}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({1, 1}, {4}));
}

// TF's defaults: no export outputs serve the predictions; a single one is
// served as the default too.
TEST(ExportOutputsTest, DefaultSignatures) {
  Fixture none("none", kNone);
  TW_ASSERT_OK_AND_ASSIGN(std::string dir,
                          none.estimator->ExportSavedModel(none.base, ParsingReceiver()));
  TW_ASSERT_OK_AND_ASSIGN(SavedModel model, ReadSavedModel(dir));
  EXPECT_THAT(Keys(model.meta_graphs(0)), ElementsAre("serving_default"));
  EXPECT_EQ(model.meta_graphs(0).signature_def().at("serving_default").method_name(),
            kPredictMethodName);

  Fixture one("one", kOnlyRegress);
  TW_ASSERT_OK_AND_ASSIGN(dir, one.estimator->ExportSavedModel(one.base, ParsingReceiver()));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  EXPECT_THAT(Keys(bundle.meta_graph_def), ElementsAre("regress", "serving_default"));
  const SignatureDef& served = bundle.meta_graph_def.signature_def().at("serving_default");
  EXPECT_EQ(served.method_name(), kRegressMethodName);
  EXPECT_EQ(served.outputs().at("outputs").name(), "outputs/regress/outputs:0");
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"inputs", FloatExamples("x", {6})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({1, 1}, {5}));
}

TEST(ExportOutputsTest, ScoresAndRegressionValuesOfAnyFloatingType) {
  Scope s = Scope::NewRootScope();
  const Output f64 = ops::Const(s, {0.25, 0.75});
  const Output f16 = ops::Cast(s, f64, DT_HALF);
  const Output classes = ops::Const(s, {std::string("a"), std::string("b")});
  const Output ints = ops::Const(s.WithOpName("ids"), {1, 2});
  TW_ASSERT_OK(s.status());
  // TF's is_floating: float64 and half as well as float32.
  TW_EXPECT_OK(ExportOutput::Classification(f64, classes).Validate());
  TW_EXPECT_OK(ExportOutput::Classification(f16, Output()).Validate());
  TW_EXPECT_OK(ExportOutput::Regression(f64).Validate());
  TW_EXPECT_OK(ExportOutput::Regression(f16).Validate());
  EXPECT_THAT(ExportOutput::Classification(ints, classes).Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Classification scores must be a float32 Tensor; got ids:0 of int32"));
  EXPECT_THAT(ExportOutput::Regression(ints).Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Regression output value must be a float32 Tensor; got ids:0 of int32"));
}

TEST(ExportOutputsTest, RefusesWhatTFRefuses) {
  Fixture several("several", kNoDefault);
  EXPECT_THAT(several.estimator->ExportSavedModel(several.base, ParsingReceiver()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Multiple export_outputs were provided, but none of them is specified as "
                       "the default."));
  Fixture ints("ints", kIntRegression);
  EXPECT_THAT(ints.estimator->ExportSavedModel(ints.base, ParsingReceiver()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Regression output value must be a float32 Tensor; got Cast:0 of int32"));
  Fixture empty("empty", kEmptyClassification);
  EXPECT_THAT(empty.estimator->ExportSavedModel(empty.base, ParsingReceiver()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "At least one of scores and classes must be set."));
  // Only classify over a raw receiver: no signature is left.
  Fixture only("only", kOnlyRegress);
  EXPECT_THAT(
      only.estimator->ExportSavedModel(only.base, {{"x", {DT_FLOAT, PartialTensorShape({-1, 1})}}}),
      StatusIs(absl::StatusCode::kInvalidArgument, "no signature could be built"));
  EXPECT_THAT(ExportOutput::Classification(Output(), Output()).outputs(), ::testing::IsEmpty());
  // Nothing half-written is left in the export base.
  EXPECT_TRUE(std::filesystem::is_empty(several.base));
  EXPECT_TRUE(std::filesystem::is_empty(only.base));
}

// Under ReplicateModelFn every signature's outputs are the towers' rows
// concatenated in order, classes included (shape [batch, 1], which TF
// Serving's classify requires; TF stacks them).
TEST(ExportOutputsTest, ReplicatedTowersMergeTheirOutputs) {
  TW_ASSERT_OK_AND_ASSIGN(ModelFn towers,
                          ReplicateModelFn(HalfPlusTwo, {.devices = {"/cpu:0", "/cpu:1"}}));
  Fixture f("replicated", kHalfPlusTwo, towers);
  TW_ASSERT_OK_AND_ASSIGN(std::string dir,
                          f.estimator->ExportSavedModel(f.base, ParsingReceiver()));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  EXPECT_THAT(Keys(bundle.meta_graph_def),
              ElementsAre("classify_x_to_y", "regress_x_to_y", "serving_default"));
  const Tensor examples = FloatExamples("x", {1, 2, 5, -4});
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"examples", examples}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({4, 1}, {2.5f, 3, 4.5f, 0}));
  TW_ASSERT_OK_AND_ASSIGN(out, bundle.Run("regress_x_to_y", {{"inputs", examples}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({4, 1}, {2.5f, 3, 4.5f, 0}));
  TW_ASSERT_OK_AND_ASSIGN(out, bundle.Run("classify_x_to_y", {{"inputs", examples}}));
  EXPECT_THAT(out.at("scores"), TensorIs<float>({4, 1}, {2.5f, 3, 4.5f, 0}));
  EXPECT_EQ(out.at("classes").shape(), TensorShape({4, 1}));
  // The towers' rows come from two Concat nodes on the consolidation device.
  int concats = 0;
  for (const NodeDef& n : bundle.meta_graph_def.graph_def().node()) {
    concats += n.op() == "ConcatV2" && n.name().rfind("export_outputs/classify_x_to_y/", 0) == 0;
  }
  EXPECT_EQ(concats, 2);
}

// ParseExampleFeatures refuses what tf.Example cannot hold, and defaults
// that do not fit.
TEST(ExportOutputsTest, ParsingSpecErrors) {
  Scope s = Scope::NewRootScope();
  const Output serialized = ops::Placeholder(s, DT_STRING);
  ParseExampleFeatures(s, serialized, {{"x", FixedLenFeature{DT_INT32, TensorShape({1})}}});
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "feature 'x' has dtype int32; tf.Example holds float, int64 or "
                                   "string"));
  Scope t = Scope::NewRootScope();
  ParseExampleFeatures(t, ops::Placeholder(t, DT_STRING),
                       {{"x", FixedLenFeature{DT_FLOAT, TensorShape({2}), Scalar<float>(1)}}});
  EXPECT_THAT(t.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   "the default of feature 'x' is float []; expected float with "
                                   "the 2 elements of shape [2]"));
}

// An asset (TF's ASSET_FILEPATHS): the vocabulary file is copied into
// assets/, and the loaded model's main op sees the copy's path, which a
// local variable keeps.
ModelFn WithVocabulary(const std::string& vocabulary) {
  return [vocabulary](const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params) {
    EstimatorSpec spec = HalfPlusTwo(s, features, labels, mode, params);
    const Output path = ops::Const(s.WithOpName("vocabulary_path"), vocabulary);
    AddToCollection(s.graph(), GraphKeys::kAssetFilepaths, path);
    Variable file = GetVariable(
        s, "vocabulary_file", TensorShape({}), DT_STRING,
        initializers::Initializer("asset", [path](const Scope& scope, const TensorShape&,
                                                  DataType) { return ops::Identity(scope, path); }),
        {.trainable = false, .collections = {GraphKeys::kLocalVariables}});
    spec.export_outputs.emplace(
        "serving_default",
        ExportOutput::Predict({{"y", spec.predictions.at("y")}, {"vocabulary", file.value()}}));
    return spec;
  };
}

TEST(ExportOutputsTest, AssetsAreCopiedAndFedTheirNewPath) {
  const std::string vocabulary = testing::MakeTempDir("vocabulary") + "/words.txt";
  TW_ASSERT_OK(WriteFileAtomically(vocabulary, "half\nplus\ntwo\n"));
  Fixture f("assets", kNone, WithVocabulary(vocabulary));
  TW_ASSERT_OK_AND_ASSIGN(std::string dir,
                          f.estimator->ExportSavedModel(f.base, ParsingReceiver()));
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/assets/words.txt"), "half\nplus\ntwo\n");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  ASSERT_EQ(bundle.meta_graph_def.asset_file_def_size(), 1);
  EXPECT_EQ(bundle.meta_graph_def.asset_file_def(0).tensor_info().name(), "vocabulary_path:0");
  EXPECT_EQ(bundle.meta_graph_def.asset_file_def(0).filename(), "words.txt");
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"examples", FloatExamples("x", {2})}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({1, 1}, {3}));
  EXPECT_EQ(out.at("vocabulary").data<std::string>()[0], dir + "/assets/words.txt");
}

// Defaults fill missing features.
TEST(ExportOutputsTest, ParsedDefaultsFillMissingFeatures) {
  Fixture f("defaults", kNone);
  TW_ASSERT_OK_AND_ASSIGN(
      std::string dir,
      f.estimator->ExportSavedModel(
          f.base,
          BuildParsingServingInputReceiverFn(
              {{"x", FixedLenFeature{DT_FLOAT, TensorShape({1}), Literal<float>({1}, {10})}}})));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  Tensor examples = FloatExamples("x", {4, 0});
  Example empty;
  examples.data<std::string>()[1] = empty.SerializeAsString();
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"examples", examples}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({2, 1}, {4, 7}));
}

}  // namespace
}  // namespace towerflow
