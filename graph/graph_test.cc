// Graph: adding nodes from NodeDefs, edges, removal, and GraphDef export.
#include "graph/graph.h"

#include "core/proto_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

NodeDef MakeNode(const std::string& text) {
  NodeDef def;
  EXPECT_TRUE(ParseTextProto(text, &def).ok()) << text;
  return def;
}

class GraphTest : public ::testing::Test {
 protected:
  Node* Add(const std::string& text) {
    absl::StatusOr<Node*> node = graph_.AddNode(MakeNode(text));
    EXPECT_TRUE(node.ok()) << node.status();
    return node.ok() ? *node : nullptr;
  }
  Node* Placeholder(const std::string& name, const std::string& shape = "dim { size: 2 }") {
    return Add("name: '" + name +
               "' op: 'Placeholder' attr { key: 'dtype' value { type: "
               "DT_FLOAT } } attr { key: 'shape' value { shape { " +
               shape + " } } }");
  }
  Graph graph_;
};

TEST_F(GraphTest, AddNodeFillsDefaultsTypesAndShapes) {
  Node* x = Placeholder("x", "dim { size: 2 } dim { size: 3 }");
  Node* m =
      Add("name: 'm' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: "
          "DT_FLOAT } } attr { key: 'transpose_b' value { b: true } }");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->num_inputs(), 2);
  EXPECT_EQ(m->input_type(1), DT_FLOAT);
  EXPECT_EQ(m->output_shape(0).DebugString(), "[2,2]");
  EXPECT_EQ(m->input_node(0), x);
  bool transpose_a = true;
  TW_ASSERT_OK(m->GetAttr("transpose_a", &transpose_a));
  EXPECT_FALSE(transpose_a);
  EXPECT_TRUE(m->def().input().empty());  // edges hold the inputs
  EXPECT_EQ(graph_.num_nodes(), 2);
  EXPECT_EQ(graph_.FindNode("m"), m);
  EXPECT_EQ(graph_.FindNodeId(m->id()), m);
}

TEST_F(GraphTest, BadNodesAreRejectedAndNotAdded) {
  Placeholder("x");
  EXPECT_THAT(graph_.AddNode(MakeNode("name: 'x' op: 'NoOp'")),
              StatusIs(absl::StatusCode::kInvalidArgument, "Node 'x': the name is not unique"));
  EXPECT_THAT(graph_.AddNode(MakeNode("op: 'NoOp'")),
              StatusIs(absl::StatusCode::kInvalidArgument, "has an empty name"));
  EXPECT_THAT(graph_.AddNode(MakeNode("name: '_x' op: 'NoOp'")),
              StatusIs(absl::StatusCode::kInvalidArgument, "the name is not valid"));
  EXPECT_THAT(graph_.AddNode(MakeNode("name: 'y' op: 'Nope'")),
              StatusIs(absl::StatusCode::kNotFound, "Op type not registered 'Nope'"));
  EXPECT_THAT(graph_.AddNode(MakeNode("name: 'r' op: 'Relu' input: 'x' input: 'x' attr { key: "
                                      "'T' value { type: DT_FLOAT } }")),
              StatusIs(absl::StatusCode::kInvalidArgument, "Expected 1 inputs (float), got 2"));
  // Shape inference failure removes the node again.
  EXPECT_THAT(graph_.AddNode(MakeNode("name: 'm' op: 'MatMul' input: 'x' input: 'x' attr { "
                                      "key: 'T' value { type: DT_FLOAT } }")),
              StatusIs(absl::StatusCode::kInvalidArgument, "Shape must be rank 2 but is rank 1"));
  EXPECT_EQ(graph_.FindNode("m"), nullptr);
  EXPECT_EQ(graph_.num_nodes(), 1);
  EXPECT_TRUE(graph_.FindNode("x")->out_edges().empty());
}

TEST_F(GraphTest, InternalNamesOnlyWhenAllowed) {
  EXPECT_THAT(graph_.AddNode(MakeNode("name: '_retval_0' op: 'NoOp'")),
              StatusIs(absl::StatusCode::kInvalidArgument, "the name is not valid"));
  graph_.set_allow_internal_names(true);  // as the runtime's partition graphs
  TW_EXPECT_OK(graph_.AddNode(MakeNode("name: '_retval_0' op: 'NoOp'")).status());
  EXPECT_THAT(graph_.AddNode(MakeNode("name: '_' op: 'NoOp'")),
              StatusIs(absl::StatusCode::kInvalidArgument, "the name is not valid"));
}

TEST_F(GraphTest, RefOutputsFeedValueInputs) {
  Node* v =
      Add("name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
          "attr { key: 'shape' value { shape { dim { size: 3 } } } }");
  EXPECT_EQ(v->output_type(0), DT_FLOAT_REF);
  Node* read =
      Add("name: 'read' op: 'Identity' input: 'v' attr { key: 'T' value { type: "
          "DT_FLOAT } }");
  EXPECT_EQ(read->output_shape(0).DebugString(), "[3]");
  Node* assign =
      Add("name: 'a' op: 'Assign' input: 'v' input: 'read' attr { key: 'T' value "
          "{ type: DT_FLOAT } }");
  EXPECT_EQ(assign->input_type(0), DT_FLOAT_REF);
}

TEST_F(GraphTest, ControlEdgesAreDeduplicatedAndExportedSorted) {
  Placeholder("b");
  Placeholder("a");
  Node* n = Add("name: 'n' op: 'NoOp' input: '^b' input: '^a' input: '^b'");
  EXPECT_EQ(n->in_edges().size(), 2u);
  GraphDef def;
  graph_.ToGraphDef(&def);
  EXPECT_EQ(def.node(2).input_size(), 2);
  EXPECT_EQ(def.node(2).input(0), "^a");
  EXPECT_EQ(def.node(2).input(1), "^b");
}

TEST_F(GraphTest, RemoveNodeDropsItsEdges) {
  Node* x = Placeholder("x");
  Node* r = Add("name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }");
  graph_.AddControlEdge(x, r);
  EXPECT_EQ(x->out_edges().size(), 2u);
  graph_.RemoveNode(r);
  EXPECT_TRUE(x->out_edges().empty());
  EXPECT_EQ(graph_.FindNode("r"), nullptr);
  EXPECT_EQ(graph_.num_nodes(), 1);
  EXPECT_EQ(graph_.num_node_ids(), 2);
  EXPECT_EQ(graph_.FindNodeId(1), nullptr);
  // The name is free again.
  Add("name: 'r' op: 'NoOp'");
}

TEST_F(GraphTest, AddDataEdgeChecksIndicesAndTypes) {
  Node* x = Placeholder("x");
  Node* i = Add("name: 'i' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } }");
  Node* r = Add("name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }");
  EXPECT_THAT(graph_.AddDataEdge(x, 0, r, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, "is already fed"));
  graph_.RemoveEdge(r->input_edge(0));
  EXPECT_THAT(graph_.AddDataEdge(i, 0, r, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, "Cannot feed int32 into input 0"));
  EXPECT_THAT(graph_.AddDataEdge(x, 1, r, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, "has no output 1"));
  TW_EXPECT_OK(graph_.AddDataEdge(x, 0, r, 0));
}

TEST_F(GraphTest, ExportDropsLateDefaultAttrsOnly) {
  Placeholder("x", "dim { size: 1 } dim { size: 4 } dim { size: 4 } dim { size: 1 }");
  Placeholder("f", "dim { size: 2 } dim { size: 2 } dim { size: 1 } dim { size: 1 }");
  Add("name: 'c' op: 'Conv2D' input: 'x' input: 'f' attr { key: 'T' value { type: DT_FLOAT } }"
      " attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } }"
      " attr { key: 'padding' value { s: 'SAME' } }");
  GraphDef def;
  graph_.ToGraphDef(&def);
  const NodeDef& conv = def.node(2);
  // explicit_paddings (added after TF 1.x) is left out at its default, so
  // TensorFlow 1.x loads the graph; older attrs keep their defaults.
  EXPECT_FALSE(conv.attr().contains("explicit_paddings"));
  EXPECT_TRUE(conv.attr().contains("use_cudnn_on_gpu"));
  EXPECT_TRUE(conv.attr().contains("data_format"));
  GraphExportOptions strip;
  strip.strip_default_attrs = true;
  graph_.ToGraphDef(&def, strip);
  EXPECT_FALSE(def.node(2).attr().contains("data_format"));
  EXPECT_TRUE(def.node(2).attr().contains("padding"));
}

TEST_F(GraphTest, ExportKeepsCreationOrderAndVersions) {
  Placeholder("z");
  Placeholder("a");
  GraphDef def;
  graph_.ToGraphDef(&def);
  EXPECT_EQ(def.node(0).name(), "z");
  EXPECT_EQ(def.node(1).name(), "a");
  EXPECT_EQ(def.versions().producer(), kGraphDefVersion);
  EXPECT_FALSE(def.has_library());
}

TEST_F(GraphTest, FunctionsCanOnlyBeRemovedWhenUnused) {
  FunctionDefLibrary lib;
  TW_ASSERT_OK(ParseTextProto("function { signature { name: 'F' } }", &lib));
  TW_ASSERT_OK(graph_.AddFunctionLibrary(lib));
  Node* call = Add("name: 'call' op: 'F'");
  EXPECT_THAT(graph_.RemoveFunction("F"),
              StatusIs(absl::StatusCode::kFailedPrecondition, "called by node 'call'"));
  graph_.RemoveNode(call);
  TW_EXPECT_OK(graph_.RemoveFunction("F"));
  EXPECT_THAT(graph_.RemoveFunction("F"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(graph_.LookUpOp("F"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace towerflow
