// ImportGraphDef against the bad inputs of BAD_INPUTS.md template T9 (and
// the T6 type confusions that reach import): each is a Status error naming
// the node, never a crash, and the graph is left unchanged.
#include <string>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

constexpr char kFloatPlaceholder[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }";

struct BadGraph {
  const char* name;
  std::string text;
  absl::StatusCode code;
  std::string message;
};

std::string NodeText(const std::string& body) { return absl::StrCat("node { ", body, " }"); }

// A float constant x and `op` (Sum or Reshape) of x and an int32 constant
// of shape [dim], a splat of one value or no values at all.
std::string HugeConstConsumer(const std::string& op, const std::string& dim, bool with_value) {
  const std::string index_attr = op == "Sum" ? "Tidx" : "Tshape";
  return absl::StrCat(
      NodeText("name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
               "'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
               "float_val: 1 } } }"),
      NodeText(absl::StrCat("name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                            "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { "
                            "dim { size: ",
                            dim, " } } ", with_value ? "int_val: 1 " : "", "} } }")),
      NodeText(absl::StrCat("name: 'r' op: '", op, "' input: 'x' input: 'c' attr { key: 'T' value ",
                            "{ type: DT_FLOAT } } attr { key: '", index_attr,
                            "' value { type: DT_INT32 } }")));
}

std::vector<BadGraph> Cases() {
  const std::string x = kFloatPlaceholder;
  const auto identity = [](const std::string& name, const std::string& input) {
    return NodeText(absl::StrCat("name: '", name, "' op: 'Identity' input: '", input,
                                 "' attr { key: 'T' value { type: DT_FLOAT } }"));
  };
  return {
      {"EmptyOp", NodeText("name: 'a'"), absl::StatusCode::kInvalidArgument,
       "Node 'a' has an empty op"},
      {"UnknownOp", NodeText("name: 'a' op: 'FooBar'"), absl::StatusCode::kNotFound,
       "Node 'a': Op type not registered 'FooBar'"},
      {"EmptyNodeName", NodeText("op: 'NoOp'"), absl::StatusCode::kInvalidArgument,
       "Node 0 of the GraphDef (op 'NoOp') has an empty name"},
      {"InvalidNodeName", NodeText("name: 'a b' op: 'NoOp'"), absl::StatusCode::kInvalidArgument,
       "Node 'a b': the name is not valid"},
      {"MissingAttr", NodeText("name: 'a' op: 'Placeholder'"), absl::StatusCode::kInvalidArgument,
       "Node 'a' (op 'Placeholder'): NodeDef missing attr 'dtype' from op Placeholder"},
      {"IllTypedAttr", NodeText("name: 'a' op: 'Placeholder' attr { key: 'dtype' value { i: 3 } }"),
       absl::StatusCode::kInvalidArgument,
       "attr 'dtype': the AttrValue has a value of type 'int' where 'type' is expected"},
      {"EmptyAttrName", NodeText("name: 'a' op: 'NoOp' attr { key: '' value { i: 3 } }"),
       absl::StatusCode::kInvalidArgument, "NodeDef has an attr with an empty name"},
      {"UnknownAttr", x.substr(0, x.size() - 2) + " attr { key: 'bogus' value { i: 1 } } }",
       absl::StatusCode::kInvalidArgument,
       "NodeDef mentions attr 'bogus', which op Placeholder does not have"},
      {"AttrNotAllowed",
       NodeText("name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
                "attr { key: 'shape' value { list { i: 1 } } }"),
       absl::StatusCode::kInvalidArgument,
       "attr 'shape': the AttrValue has a value of type 'list(int)' where 'shape' is expected"},
      {"ValueOutsideAllowedList",
       x + NodeText("name: 'p' op: 'MaxPool' input: 'x' attr { key: 'ksize' value { list { i: 1 "
                    "i: 2 i: 2 i: 1 } } } attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 "
                    "} } } attr { key: 'padding' value { s: 'FOO' } }"),
       absl::StatusCode::kInvalidArgument,
       "Value for attr 'padding' of \"FOO\" is not in the list of allowed values"},
      {"BelowMinimum",
       x + NodeText("name: 'c' op: 'ConcatV2' input: 'x' input: 'x' attr { key: 'N' value { i: 1 } "
                    "} attr { key: 'T' value { type: DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument, "Value for attr 'N' of 1 must be at least minimum 2"},
      {"DuplicateNodeNames", x + x, absl::StatusCode::kInvalidArgument, "Node 'x' is not unique"},
      {"MissingOutputIndex", x + identity("a", "x:99"), absl::StatusCode::kInvalidArgument,
       "Node 'a' (op 'Identity'): Connecting to invalid output 99 of source node x which has 1 "
       "outputs"},
      {"BadOutputIndex", x + identity("a", "x:abc"), absl::StatusCode::kInvalidArgument,
       "Node 'a': Input 'x:abc' has a bad output index 'abc'"},
      {"NegativeOutputIndex", x + identity("a", "x:-1"), absl::StatusCode::kInvalidArgument,
       "bad output index '-1'"},
      {"MissingInputNode", identity("a", "nope"), absl::StatusCode::kInvalidArgument,
       "Node 'a': Unknown input node 'nope'"},
      {"MissingControlInputNode", NodeText("name: 'a' op: 'NoOp' input: '^nope'"),
       absl::StatusCode::kInvalidArgument, "Node 'a': Unknown input node '^nope'"},
      {"DataInputAfterControlInput",
       x + NodeText("name: 'a' op: 'Identity' input: '^x' input: 'x' attr { key: 'T' value { "
                    "type: DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument, "Node 'a': Non-control input 'x' after a control input"},
      {"TwoNodeCycle", identity("a", "b") + identity("b", "a"), absl::StatusCode::kInvalidArgument,
       "GraphDef contains a cycle: a -> b -> a"},
      {"SelfLoop", identity("a", "a"), absl::StatusCode::kInvalidArgument,
       "GraphDef contains a cycle: a -> a"},
      {"ControlCycle",
       NodeText("name: 'a' op: 'NoOp' input: '^b'") + NodeText("name: 'b' op: 'NoOp' input: '^a'"),
       absl::StatusCode::kInvalidArgument, "GraphDef contains a cycle"},
      {"SelfRecursiveFunction",
       "library { function { signature { name: 'F' } node_def { name: 'n' op: 'F' } } }",
       absl::StatusCode::kInvalidArgument, "Function 'F' is recursive: F -> F"},
      {"MutuallyRecursiveFunctions",
       "library { function { signature { name: 'F' } node_def { name: 'n' op: 'G' } } "
       "function { signature { name: 'G' } node_def { name: 'n' op: 'F' } } }",
       absl::StatusCode::kInvalidArgument, "Function 'F' is recursive: F -> G -> F"},
      {"RecursionThroughAFuncAttr",
       "library { function { signature { name: 'F' } node_def { name: 'n' op: "
       "'PartitionedCall' attr { key: 'f' value { func { name: 'F' } } } } } }",
       absl::StatusCode::kInvalidArgument, "Function 'F' is recursive: F -> F"},
      {"FunctionNamedLikeAnOp", "library { function { signature { name: 'MatMul' } } }",
       absl::StatusCode::kInvalidArgument, "Function 'MatMul' has the name of a registered op"},
      {"DuplicateFunction",
       "library { function { signature { name: 'F' } } function { signature { name: 'F' } } }",
       absl::StatusCode::kInvalidArgument, "Function 'F' is defined twice"},
      {"HugeListLength",
       x + NodeText("name: 's' op: 'AddN' input: 'x' input: 'x' attr { key: 'N' value { i: "
                    "2147483647 } } attr { key: 'T' value { type: DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument,
       "Attr 'N' = 2147483647 sets the length of argument 'inputs' outside [0, 65536]"},
      {"HugeOutputCount",
       x + NodeText("name: 'u' op: 'Unpack' input: 'x' attr { key: 'num' value { i: 1000000000000 "
                    "} } attr { key: 'T' value { type: DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument,
       "Attr 'num' = 1000000000000 sets the length of argument 'output'"},
      {"WrongInputCount",
       x + NodeText("name: 'r' op: 'Relu' input: 'x' input: 'x' attr { key: 'T' "
                    "value { type: DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument, "Expected 1 inputs (float), got 2"},
      {"InputDtypeMismatch",
       x + NodeText("name: 'i' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } }") +
           NodeText("name: 'm' op: 'MatMul' input: 'x' input: 'i' attr { key: 'T' value { type: "
                    "DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument,
       "Node 'm' (op 'MatMul'): Input 1 was passed int32 from i, incompatible with expected "
       "float"},
      {"NonRefIntoRefInput",
       x + NodeText("name: 'a' op: 'Assign' input: 'x' input: 'x' attr { key: 'T' value { type: "
                    "DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument,
       "Input 0 was passed float from x, incompatible with expected float_ref"},
      {"RefTypeInAnAttr",
       NodeText("name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT_REF } }"),
       absl::StatusCode::kInvalidArgument, "ref type float_ref in an attr"},
      {"InvalidDataTypeEnum",
       NodeText("name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: 77 } }"),
       absl::StatusCode::kInvalidArgument, "invalid DataType enum value 77"},
      {"TensorContentSizeMismatch",
       NodeText(
           "name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
           "'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: "
           "2 } } tensor_content: '012345678901' } } }"),
       absl::StatusCode::kInvalidArgument,
       "tensor_content has 12 bytes, but shape [2,2] of float needs 16"},
      {"ConstDtypeDisagreesWithValue",
       NodeText("name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                "'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } }"),
       absl::StatusCode::kInvalidArgument,
       "Node 'c' (op 'Const'): value has dtype int32 but attr dtype is float"},
      {"ShapeOfRank300",
       NodeText(absl::StrCat(
           "name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
           "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { ",
           [] {
             std::string dims;
             for (int i = 0; i < 300; ++i) dims += "dim { size: 1 } ";
             return dims;
           }(),
           "} } } }")),
       absl::StatusCode::kInvalidArgument, "rank 300, more than the maximum rank 254"},
      {"OverflowingShape",
       NodeText(
           "name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { "
           "key: 'shape' value { shape { dim { size: 4294967296 } dim { size: 4294967296 } } } "
           "}") +
           NodeText("name: 'z' op: 'ZerosLike' input: 'p' attr { key: 'T' value { type: DT_FLOAT } "
                    "}") +
           NodeText("name: 'r' op: 'Reshape' input: 'z' input: 's' attr { key: 'T' value { type: "
                    "DT_FLOAT } }") +
           NodeText(
               "name: 's' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { "
               "key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
               "int_val: -1 } } }"),
       absl::StatusCode::kInvalidArgument, "more elements than fit in int64"},
      // A fuzzer's: a constant splat of a huge shape read by a shape
      // function (the axes of Sum, the shape of Reshape) once aborted
      // allocating its elements.
      {"SumOverASplatOf2To62Axes", HugeConstConsumer("Sum", "4611686018427387904", true),
       absl::StatusCode::kInvalidArgument,
       "A constant of shape [4611686018427387904] has 4611686018427387904 elements, more than "
       "the 16777216"},
      {"SumOverAnEmptySplatOf2To62Axes", HugeConstConsumer("Sum", "4611686018427387904", false),
       absl::StatusCode::kInvalidArgument, "more than the 16777216"},
      {"SumOverASplatOf2To33Axes", HugeConstConsumer("Sum", "8589934592", true),
       absl::StatusCode::kInvalidArgument, "more than the 16777216"},
      {"SumOverABillionAxes", HugeConstConsumer("Sum", "1000000000", true),
       absl::StatusCode::kInvalidArgument, "more than the 16777216"},
      {"ReshapeToASplatOf2To62Dims", HugeConstConsumer("Reshape", "4611686018427387904", true),
       absl::StatusCode::kInvalidArgument, "more than the 16777216"},
      {"FunctionPlaceholderOutsideFunction",
       NodeText("name: 'a' op: 'Placeholder' attr { key: 'dtype' value { placeholder: 'T' } }"),
       absl::StatusCode::kInvalidArgument, "only valid inside a function body"},
      {"ShapeInferenceFailure",
       NodeText(
           "name: 'a' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
           "'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: "
           "3 } } } } }") +
           NodeText("name: 'm' op: 'MatMul' input: 'a' input: 'a' attr { key: 'T' value { type: "
                    "DT_FLOAT } }"),
       absl::StatusCode::kInvalidArgument,
       "Node 'm' (op 'MatMul') with input shapes [2,3], [2,3]: Matrix size-incompatible"},
      {"MinConsumerTooNew", "versions { producer: 2000 min_consumer: 9999 }",
       absl::StatusCode::kInvalidArgument,
       "GraphDef min_consumer version 9999 is above Towerflow's GraphDef version 27"},
      {"BadConsumer", "versions { producer: 30 bad_consumers: 27 }",
       absl::StatusCode::kInvalidArgument, "lists Towerflow's version 27 as a bad consumer"},
  };
}

class BadGraphTest : public ::testing::TestWithParam<BadGraph> {};

TEST_P(BadGraphTest, IsRejectedWithAPreciseErrorAndLeavesTheGraphUnchanged) {
  const BadGraph& c = GetParam();
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(c.text, &def));
  Graph graph;
  NodeDef keep;
  keep.set_name("already_here");
  keep.set_op("NoOp");
  TW_ASSERT_OK(graph.AddNode(keep));
  EXPECT_THAT(ImportGraphDef(def, &graph), StatusIs(c.code, c.message));
  EXPECT_EQ(graph.num_nodes(), 1);
  EXPECT_EQ(graph.library().function_size(), 0);
}

INSTANTIATE_TEST_SUITE_P(T9, BadGraphTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadGraph>& info) {
                           return std::string(info.param.name);
                         });

TEST(GraphImportTest, FunctionsAreKeptAndTypeTheirCalls) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      std::string(kFloatPlaceholder) +
          "node { name: 'call' op: 'Twice' input: 'x' }"
          "library { function { signature { name: 'Twice' input_arg { name: 'a' type: DT_FLOAT } "
          "output_arg { name: 'b' type: DT_FLOAT } } node_def { name: 'add' op: 'AddV2' input: "
          "'a' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } } ret { key: 'b' value: "
          "'add:z:0' } } }",
      &def));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  const Node* call = graph.FindNode("call");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->output_type(0), DT_FLOAT);
  GraphDef out;
  graph.ToGraphDef(&out);
  EXPECT_EQ(out.library().function_size(), 1);
  EXPECT_EQ(out.library().function(0).signature().name(), "Twice");
}

TEST(GraphImportTest, NodesMayComeInAnyOrder) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }" +
          std::string(kFloatPlaceholder),
      &def));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  EXPECT_EQ(graph.FindNode("r")->input_node(0)->name(), "x");
}

TEST(GraphImportTest, MissingAttrsTakeOpDefDefaultsAndUnderscoreAttrsStay) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      std::string(kFloatPlaceholder) +
          "node { name: 'm' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: "
          "DT_FLOAT } } attr { key: '_class' value { list { s: 'loc:@x' } } } "
          "attr { key: '_output_shapes' value { list { shape { unknown_rank: true } } } } }",
      &def));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  const Node* m = graph.FindNode("m");
  bool transpose_a = true;
  TW_ASSERT_OK(m->GetAttr("transpose_a", &transpose_a));
  EXPECT_FALSE(transpose_a);
  EXPECT_NE(m->FindAttr("_class"), nullptr);
  EXPECT_NE(m->FindAttr("_output_shapes"), nullptr);
}

// The attrs TensorFlow 2 added to ops of 1.x, as TF 2.21 writes them (every
// attr, defaults included): they import, and export drops them while they
// hold their defaults, so the GraphDef still loads in TF 1.x.
TEST(GraphImportTest, AttrsTensorFlow2AddedImportAndLeaveAtTheirDefaults) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      std::string(kFloatPlaceholder) +
          "node { name: 'i' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }"
          "node { name: 'm' op: 'BatchMatMulV2' input: 'x' input: 'x' "
          "attr { key: 'grad_y' value { b: false } } attr { key: 'grad_x' value { b: false } } "
          "attr { key: 'adj_y' value { b: true } } attr { key: 'adj_x' value { b: false } } "
          "attr { key: 'T' value { type: DT_FLOAT } } }"
          "node { name: 'g' op: 'GatherNd' input: 'x' input: 'i' "
          "attr { key: 'bad_indices_policy' value { s: '' } } "
          "attr { key: 'Tparams' value { type: DT_FLOAT } } "
          "attr { key: 'Tindices' value { type: DT_INT32 } } }"
          "node { name: 'top' op: 'TopKV2' input: 'x' input: 'i' "
          "attr { key: 'sorted' value { b: true } } "
          "attr { key: 'index_type' value { type: DT_INT32 } } "
          "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tk' value { type: DT_INT32 } } }"
          "node { name: 's' op: 'ScatterNd' input: 'i' input: 'x' input: 'i' "
          "attr { key: 'bad_indices_policy' value { s: 'IGNORE' } } "
          "attr { key: 'T' value { type: DT_FLOAT } } "
          "attr { key: 'Tindices' value { type: DT_INT32 } } }",
      &def));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  GraphDef out;
  graph.ToGraphDef(&out);
  for (const NodeDef& node : out.node()) {
    for (const char* added : {"grad_x", "grad_y", "Tk", "index_type"}) {
      EXPECT_FALSE(node.attr().contains(added)) << node.name() << " kept " << added;
    }
    if (node.name() == "g") EXPECT_FALSE(node.attr().contains("bad_indices_policy"));
    // Not at its default: kept.
    if (node.name() == "s") EXPECT_EQ(node.attr().at("bad_indices_policy").s(), "IGNORE");
  }
}

TEST(GraphImportTest, LegacyProducersReadScalarPlaceholderShapesAsUnknown) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { "
      "key: 'shape' value { shape { } } } } versions { producer: 21 }",
      &def));
  Graph old_graph;
  TW_ASSERT_OK(ImportGraphDef(def, &old_graph));
  EXPECT_TRUE(old_graph.FindNode("x")->output_shape(0).unknown_rank());
  def.mutable_versions()->set_producer(22);
  Graph new_graph;
  TW_ASSERT_OK(ImportGraphDef(def, &new_graph));
  EXPECT_EQ(new_graph.FindNode("x")->output_shape(0).DebugString(), "[]");
}

TEST(GraphImportTest, DebugInfoIsPreserved) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(
      "node { name: 'n' op: 'NoOp' experimental_debug_info { original_node_names: 'orig' } }"
      "debug_info { files: 'model.py' traces { key: 'n' value { file_line_cols { line: 7 } } } }",
      &def));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  GraphDef out;
  graph.ToGraphDef(&out);
  EXPECT_EQ(out.node(0).experimental_debug_info().original_node_names(0), "orig");
  EXPECT_EQ(out.debug_info().files(0), "model.py");
  EXPECT_EQ(out.debug_info().traces().at("n").file_line_cols(0).line(), 7);
}

}  // namespace
}  // namespace towerflow
