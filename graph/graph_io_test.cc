// GraphDef files: the real TensorFlow-written fixtures import, text and
// binary forms agree, exports are deterministic, and the text parser takes
// every spelling TensorFlow writes.
#include "graph/graph_io.h"

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::MakeTempDir;
using ::towerflow::testing::StatusIs;

bool SameGraphDef(const GraphDef& a, const GraphDef& b) {
  return SerializeDeterministic(a) == SerializeDeterministic(b);
}

class FixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FixtureTest, ImportsIntoAGraph) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, absl::StrCat("tf/graphs/", GetParam()));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, ReadGraphDef(path));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  EXPECT_EQ(graph.num_nodes(), def.node_size());
  EXPECT_EQ(graph.versions().producer(), def.versions().producer());
}

TEST_P(FixtureTest, ImportExportImportIsStable) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, absl::StrCat("tf/graphs/", GetParam()));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, ReadGraphDef(path));
  Graph first;
  TW_ASSERT_OK(ImportGraphDef(def, &first));
  GraphDef exported;
  first.ToGraphDef(&exported);
  Graph second;
  TW_ASSERT_OK(ImportGraphDef(exported, &second));
  GraphDef again;
  second.ToGraphDef(&again);
  EXPECT_TRUE(SameGraphDef(exported, again));
}

INSTANTIATE_TEST_SUITE_P(TensorFlowGraphs, FixtureTest,
                         ::testing::Values("mnist_deep_cnn_before.pbtxt",
                                           "mnist_deep_cnn_after.pbtxt",
                                           "vr_gesture_softmax_regression.pbtxt",
                                           "mnist_partition_graph.pb",
                                           "mnist_partition_graph.protoc_decoded.pbtxt"));

TEST(GraphIoTest, BinaryAndProtocDecodedTextParseToTheSameGraphDef) {
  std::string pb, pbtxt;
  TW_SKIP_WITHOUT_REFERENCE(pb, "tf/graphs/mnist_partition_graph.pb");
  TW_SKIP_WITHOUT_REFERENCE(pbtxt, "tf/graphs/mnist_partition_graph.protoc_decoded.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef binary, ReadGraphDef(pb));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef text, ReadGraphDef(pbtxt));
  EXPECT_EQ(binary.node_size(), 119);
  EXPECT_EQ(binary.node(0).name(), "Placeholder");
  EXPECT_EQ(binary.node(0).device(), "/job:worker/task:3");
  EXPECT_TRUE(SameGraphDef(binary, text));
  // TF wrote map entries in hash order; ours are sorted, so equal graphs
  // give equal bytes whatever order they were read in.
  EXPECT_EQ(SerializeDeterministic(binary), SerializeDeterministic(text));
}

TEST(GraphIoTest, BinaryTextRoundTripsAreLossless) {
  std::string pbtxt;
  TW_SKIP_WITHOUT_REFERENCE(pbtxt, "tf/graphs/mnist_deep_cnn_after.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef text, ReadGraphDef(pbtxt));
  const std::string dir = MakeTempDir("round_trip");
  TW_ASSERT_OK(WriteGraphDef(text, dir + "/g.pb"));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef binary, ReadGraphDef(dir + "/g.pb"));
  TW_ASSERT_OK(WriteGraphDef(binary, dir + "/g.pbtxt"));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef back, ReadGraphDef(dir + "/g.pbtxt"));
  EXPECT_TRUE(SameGraphDef(text, binary));
  EXPECT_TRUE(SameGraphDef(text, back));
}

TEST(GraphIoTest, MetaGraphDefParses) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_partition.meta");
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ReadMetaGraphDef(path));
  EXPECT_EQ(meta.meta_info_def().tensorflow_version(), "1.7.0");
  EXPECT_GT(meta.meta_info_def().stripped_op_list().op_size(), 0);
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(meta.graph_def(), &graph));
  EXPECT_EQ(graph.num_nodes(), meta.graph_def().node_size());
}

TEST(GraphIoTest, ImportedFixtureKeepsTensorFlowDetails) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_before.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, ReadGraphDef(path));
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  // Placeholders keep their shapes; VariableV2 outputs are refs.
  const Node* x = graph.FindNode("Placeholder");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->output_shape(0).DebugString(), "[?,784]");
  int variables = 0;
  for (const Node* n : graph.nodes()) {
    if (n->IsOp("VariableV2")) {
      ++variables;
      EXPECT_TRUE(IsRefType(n->output_type(0))) << n->name();
    }
  }
  EXPECT_EQ(variables, 8);
}

// The text parser: everything TensorFlow and people write.
constexpr char kTrickyText[] =
    "# a comment line\r\n"
    "node { name: \"a\" op: \"Placeholder\" attr: { key: \"dtype\" value: { type: DT_FLOAT } } "
    "}\r\n"
    "node <\r\n"
    "  name: 'b'; op: \"Const\"\r\n"
    "  attr { key: \"dtype\" value { type: 1 } }  # enum by number\r\n"
    "  attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }\r\n"
    "    float_val: [1.0, 2.5f] } } }\r\n"
    ">\r\n"
    "versions { producer: 27 }\r\n";

TEST(GraphIoTest, TextParserAcceptsCommentsCrlfColonsAndOneLineNodes) {
  GraphDef def;
  TW_ASSERT_OK(ParseTextProto(kTrickyText, &def));
  ASSERT_EQ(def.node_size(), 2);
  EXPECT_EQ(def.node(1).name(), "b");
  EXPECT_EQ(def.node(1).attr().at("value").tensor().float_val_size(), 2);
  Graph graph;
  TW_ASSERT_OK(ImportGraphDef(def, &graph));
  EXPECT_EQ(graph.FindNode("b")->output_shape(0).DebugString(), "[2]");
}

TEST(GraphIoTest, TextErrorsGiveLineAndColumn) {
  GraphDef def;
  EXPECT_THAT(ParseTextProto("node {\n  name: \"a\"\n  bogus: 3\n}\n", &def),
              StatusIs(absl::StatusCode::kInvalidArgument, "line 3:"));
}

TEST(GraphIoTest, MissingFileIsNotFound) {
  EXPECT_THAT(ReadGraphDef("/nonexistent/graph.pb"),
              StatusIs(absl::StatusCode::kNotFound, "/nonexistent/graph.pb"));
}

TEST(GraphIoTest, GarbageBinaryIsDataLoss) {
  const std::string dir = MakeTempDir("garbage");
  TW_ASSERT_OK(WriteFileAtomically(dir + "/g.pb", std::string("\xff\xff\xff\x01garbage", 11)));
  EXPECT_THAT(ReadGraphDef(dir + "/g.pb"), StatusIs(absl::StatusCode::kDataLoss, "GraphDef"));
}

TEST(GraphIoTest, TextNamedAsBinaryStillReads) {
  const std::string dir = MakeTempDir("text_as_pb");
  TW_ASSERT_OK(WriteFileAtomically(dir + "/g.pb", kTrickyText));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, ReadGraphDef(dir + "/g.pb"));
  EXPECT_EQ(def.node_size(), 2);
}

}  // namespace
}  // namespace towerflow
