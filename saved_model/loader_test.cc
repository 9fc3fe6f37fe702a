// LoadSavedModel on TensorFlow's own SavedModels (TF Serving's test models):
// half_plus_two (y = 0.5 x + 2 through every signature), counter (stateful
// signatures), the TF 2 one (signatures as function calls), and broken
// directories.
#include "saved_model/loader.h"

#include <algorithm>
#include <filesystem>

#include "core/file_io.h"
#include "core/proto_io.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "ops/gradients.h"
#include "proto/example.pb.h"
#include "testing/tensor_testing.h"
#include "tests/example_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// The export directory of fixture `model`, or "" (and the test skips).
#define TW_FIXTURE_DIR(var, model)                                                     \
  std::string var;                                                                     \
  TW_SKIP_WITHOUT_REFERENCE(var, "tf/saved_models/" model "/00000123/saved_model.pb"); \
  var = var.substr(0, var.size() - std::string("/saved_model.pb").size())

TEST(LoadSavedModelTest, HalfPlusTwoPredictsThroughEverySignature) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));

  // serving_default (tensorflow/serving/predict): x -> y = 0.5 x + 2.
  TW_ASSERT_OK_AND_ASSIGN(const SignatureDef* sig,
                          bundle.Signature(kDefaultServingSignatureDefKey));
  EXPECT_EQ(sig->method_name(), kPredictMethodName);
  TW_ASSERT_OK_AND_ASSIGN(
      SignatureTensors out,
      bundle.Run("serving_default", {{"x", Literal<float>({3, 1}, {1, 2, 5})}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out.at("y"), TensorIs<float>({3, 1}, {2.5f, 3.0f, 4.5f}));

  // regress_x_to_y: serialized Examples through ParseExample.
  TW_ASSERT_OK_AND_ASSIGN(
      out, bundle.Run("regress_x_to_y", {{"inputs", FloatExamples("x", {1, 2, 5})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({3, 1}, {2.5f, 3.0f, 4.5f}));
  // regress_x_to_y2: y2 = a2 x + c2 = 0.5 x + 3.
  TW_ASSERT_OK_AND_ASSIGN(out,
                          bundle.Run("regress_x_to_y2", {{"inputs", FloatExamples("x", {2})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({1, 1}, {4.0f}));
  // classify_x_to_y: the scores are y.
  TW_ASSERT_OK_AND_ASSIGN(out,
                          bundle.Run("classify_x_to_y", {{"inputs", FloatExamples("x", {4})}}));
  EXPECT_THAT(out.at("scores"), TensorIs<float>({1, 1}, {4.0f}));
  // regress_x2_to_y3: y3 = 0.5 x2 + 3, with x2 fed directly.
  TW_ASSERT_OK_AND_ASSIGN(
      out, bundle.Run("regress_x2_to_y3", {{"inputs", Literal<float>({2, 1}, {1, 4})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({2, 1}, {3.5f, 5.0f}));

  // Examples without the required feature, or with another type, are refused
  // as TF refuses them.
  EXPECT_THAT(bundle.Run("regress_x_to_y", {{"inputs", FloatExamples("z", {1})}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Feature: x (data type: float) is required but could not be found"));
  Tensor ints(DT_STRING, TensorShape({1}));
  Example e;
  (*e.mutable_features()->mutable_feature())["x"].mutable_int64_list()->add_value(1);
  ints.data<std::string>()[0] = e.SerializeAsString();
  EXPECT_THAT(bundle.Run("regress_x_to_y", {{"inputs", ints}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Data types don't match"));

  // Signature keys are checked.
  EXPECT_THAT(bundle.Run("nope", {}),
              StatusIs(absl::StatusCode::kNotFound,
                       "it has: classify_x_to_y, regress_x2_to_y3, regress_x_to_y, "
                       "regress_x_to_y2, serving_default"));
  EXPECT_THAT(bundle.Run("serving_default", {{"z", Scalar<float>(1)}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "has no input 'z'; its inputs: x"));
  EXPECT_THAT(bundle.Run("serving_default", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "needs input 'x' (x:0)"));
}

TEST(LoadSavedModelTest, HalfPlusTwoRestoresItsVariablesAndRunsItsMainOp) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  std::vector<Tensor> out;
  TW_ASSERT_OK(bundle.session->Run({}, {"a:0", "b:0", "c:0", "filename_tensor:0"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {0.5f}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {2.0f}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {3.0f}));
  // The main op (saved_model_main_op: group_deps) assigned "foo.txt" to the
  // variable filename_tensor, whose initializer holds "".
  EXPECT_EQ(*out[3].data<std::string>(), "foo.txt");
}

// TF's own sharded saver subgraph in half_plus_two (StringJoin,
// ShardedFilename, SaveV2 into <prefix>_temp_<id>/, MergeV2Checkpoints)
// runs as TF runs it: a checkpoint at the prefix, TF's bytes, no temp
// directory left.
TEST(LoadSavedModelTest, TensorFlowsSaverSubgraphSavesTensorFlowsBytes) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  const SaverDef& saver = bundle.meta_graph_def.saver_def();
  ASSERT_TRUE(saver.sharded());
  const std::string out_dir = testing::MakeTempDir("tf_saver");
  Tensor prefix(DT_STRING, TensorShape());
  *prefix.data<std::string>() = out_dir + "/model.ckpt-5";
  std::vector<Tensor> out;
  TW_ASSERT_OK(bundle.session->Run({{saver.filename_tensor_name(), prefix}},
                                   {saver.save_tensor_name()}, {}, &out));
  EXPECT_EQ(*out[0].data<std::string>(), out_dir + "/model.ckpt-5");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out_dir)) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files,
              ::testing::ElementsAre("model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index"));
  EXPECT_EQ(testing::ReadFileOrDie(out_dir + "/model.ckpt-5.index"),
            testing::ReadFileOrDie(dir + "/variables/variables.index"));
  EXPECT_EQ(testing::ReadFileOrDie(out_dir + "/model.ckpt-5.data-00000-of-00001"),
            testing::ReadFileOrDie(dir + "/variables/variables.data-00000-of-00001"));
}

TEST(LoadSavedModelTest, CounterSignaturesIncrementResetAndRead) {
  TW_FIXTURE_DIR(dir, "counter");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  const auto run = [&](const std::string& key, SignatureTensors in) -> float {
    absl::StatusOr<SignatureTensors> out = bundle.Run(key, in);
    EXPECT_TRUE(out.ok()) << key << ": " << out.status();
    return out.ok() ? *out->at("output").data<float>() : -1.0f;
  };
  EXPECT_EQ(run("get_counter", {}), 0.0f);
  EXPECT_EQ(run("incr_counter", {}), 1.0f);
  EXPECT_EQ(run("incr_counter", {}), 2.0f);
  EXPECT_EQ(run("incr_counter_by", {{"delta", Scalar<float>(3)}}), 5.0f);
  EXPECT_EQ(run("get_counter", {}), 5.0f);
  EXPECT_EQ(run("reset_counter", {}), 0.0f);
  EXPECT_EQ(run("get_counter", {}), 0.0f);
}

// Written by TF 2: every signature is a StatefulPartitionedCall into the
// function library, variables are restored by one (the SaverDef's restore
// op, with RestoreV2 and AssignVariableOps in its body), and the init op
// assigns the asset's path to a variable.
TEST(LoadSavedModelTest, TensorFlow2HalfPlusTwoRunsItsFunctions) {
  TW_FIXTURE_DIR(dir, "half_plus_two_tf2_cpu");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"x", Literal<float>({1}, {5})}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({1}, {4.5f}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, bundle.Run("regress_x_to_y", {{"inputs", FloatExamples("x", {1, 2, 5})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({3, 1}, {2.5f, 3.0f, 4.5f}));
  // y2 = a x + c = 0.5 x + 3.
  TW_ASSERT_OK_AND_ASSIGN(out,
                          bundle.Run("regress_x_to_y2", {{"inputs", FloatExamples("x", {2})}}));
  EXPECT_THAT(out.at("outputs"), TensorIs<float>({1, 1}, {4.0f}));

  std::vector<Tensor> values;
  TW_ASSERT_OK(bundle.session->Run({},
                                   {"a/Read/ReadVariableOp:0", "b/Read/ReadVariableOp:0",
                                    "c/Read/ReadVariableOp:0", "Variable/Read/ReadVariableOp:0"},
                                   {}, &values));
  EXPECT_THAT(values[0], TensorIs<float>({}, {0.5f}));
  EXPECT_THAT(values[1], TensorIs<float>({}, {2.0f}));
  EXPECT_THAT(values[2], TensorIs<float>({}, {3.0f}));
  EXPECT_EQ(*values[3].data<std::string>(), dir + "/assets/foo.txt");
}

// The same model differentiated through its StatefulPartitionedCall, as a
// user fine-tuning it would: y = a x + b, so at x = 5 (the signature takes
// one value) dy/dx = a = 0.5, dy/da = 5 and dy/db = 1. The variables reach the call as
// resource handles; the gradients run in the bundle's session.
TEST(LoadSavedModelTest, TensorFlow2HalfPlusTwoDifferentiatesThroughItsFunction) {
  TW_FIXTURE_DIR(dir, "half_plus_two_tf2_cpu");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(const SignatureDef* signature, bundle.Signature("serving_default"));
  Scope root = Scope::NewRootScope();
  Graph& graph = *root.graph();
  TW_ASSERT_OK(ImportGraphDef(bundle.meta_graph_def.graph_def(), &graph));
  const int loaded = graph.num_node_ids();
  const auto tensor = [&](const std::string& name) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    Node* node = id.ok() ? graph.FindNode(id->node) : nullptr;
    EXPECT_NE(node, nullptr) << name;
    return node == nullptr ? Output() : Output(node, id->index);
  };
  const Output x = tensor(signature->inputs().at("x").name());
  const Output y = tensor(signature->outputs().at("y").name());
  ASSERT_EQ(y.node()->type_string(), "StatefulPartitionedCall");
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {y}, {x, tensor("a"), tensor("b")}, &grads));

  GraphDef all, added;
  graph.ToGraphDef(&all);
  for (const NodeDef& node : all.node()) {
    if (graph.FindNode(node.name())->id() >= loaded) *added.add_node() = node;
  }
  TW_ASSERT_OK(bundle.session->Extend(added));
  std::vector<std::string> names;
  for (const Output& g : grads) names.push_back(g.name());
  std::vector<Tensor> out;
  TW_ASSERT_OK(bundle.session->Run({{x.name(), Literal<float>({1}, {5})}}, names, {}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({1}, {0.5f}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {5}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {1}));
}

TEST(LoadSavedModelTest, MissingDirectoriesTagsAndFilesAreClearErrors) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  EXPECT_THAT(LoadSavedModel(dir, {"train"}),
              StatusIs(absl::StatusCode::kNotFound,
                       "Could not find meta graph def matching supplied tags: { train }"));
  EXPECT_THAT(LoadSavedModel(dir, {"serve", "gpu"}),
              StatusIs(absl::StatusCode::kNotFound, "have tags: { serve }"));
  const std::string empty = testing::MakeTempDir("empty_export");
  EXPECT_THAT(LoadSavedModel(empty, {kSavedModelTagServe}),
              StatusIs(absl::StatusCode::kNotFound, "SavedModel not found in export directory"));

  // A copy whose variables lost their data file: the restore names it.
  const std::string copy = testing::MakeTempDir("no_data") + "/1";
  std::filesystem::copy(dir, copy, std::filesystem::copy_options::recursive);
  std::filesystem::remove(copy + "/variables/variables.data-00000-of-00001");
  EXPECT_THAT(LoadSavedModel(copy, {kSavedModelTagServe}),
              StatusIs(absl::StatusCode::kDataLoss, "variables.data-00000-of-00001"));
}

// saved_model.pbtxt is read when there is no saved_model.pb; a SavedModel
// without variables/ loads without restoring anything, as in TF.
TEST(LoadSavedModelTest, ReadsTextProtosAndModelsWithoutVariables) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  const std::string copy = testing::MakeTempDir("text_export") + "/1";
  std::filesystem::copy(dir, copy, std::filesystem::copy_options::recursive);
  TW_ASSERT_OK_AND_ASSIGN(SavedModel model, ReadSavedModel(copy));
  std::filesystem::remove(copy + "/saved_model.pb");
  TW_ASSERT_OK(WriteFileAtomically(copy + "/saved_model.pbtxt", PrintTextProto(model)));
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(copy, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors out,
                          bundle.Run("serving_default", {{"x", Literal<float>({1, 1}, {4})}}));
  EXPECT_THAT(out.at("y"), TensorIs<float>({1, 1}, {4.0f}));

  std::filesystem::remove_all(copy + "/variables");
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bare, LoadSavedModel(copy, {kSavedModelTagServe}));
  EXPECT_THAT(bare.Run("serving_default", {{"x", Literal<float>({1, 1}, {4})}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, ""));

  TW_ASSERT_OK(WriteFileAtomically(copy + "/saved_model.pbtxt", "meta_graphs { nonsense: 1 }"));
  EXPECT_THAT(LoadSavedModel(copy, {kSavedModelTagServe}),
              StatusIs(absl::StatusCode::kDataLoss, "saved_model.pbtxt"));
}

// Truncations and bit flips of saved_model.pb never crash: they are DataLoss
// naming the file, or a graph the importer refuses, or (a flip in a string
// or a number) a model that loads.
TEST(LoadSavedModelTest, CorruptSavedModelProtosNeverCrash) {
  TW_FIXTURE_DIR(dir, "half_plus_two_cpu");
  const std::string copy = testing::MakeTempDir("corrupt") + "/1";
  std::filesystem::copy(dir, copy, std::filesystem::copy_options::recursive);
  std::filesystem::permissions(copy + "/saved_model.pb", std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  const std::string good = testing::ReadFileOrDie(dir + "/saved_model.pb");
  int refused = 0;
  for (size_t n = 1; n < good.size(); n += 97) {
    TW_ASSERT_OK(WriteFileAtomically(copy + "/saved_model.pb", good.substr(0, n)));
    const absl::Status s = LoadSavedModel(copy, {kSavedModelTagServe}).status();
    if (!s.ok()) ++refused;
    if (absl::IsDataLoss(s)) {
      EXPECT_THAT(s.message(), ::testing::HasSubstr("saved_model.pb"));
    }
  }
  EXPECT_GT(refused, 100);
  for (size_t byte = 0; byte < good.size(); byte += 53) {
    std::string bad = good;
    bad[byte] ^= static_cast<char>(1 << (byte % 8));
    TW_ASSERT_OK(WriteFileAtomically(copy + "/saved_model.pb", bad));
    (void)LoadSavedModel(copy, {kSavedModelTagServe}).status();
  }
}

}  // namespace
}  // namespace towerflow
