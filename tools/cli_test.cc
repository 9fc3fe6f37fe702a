// The inspect report and the Graphviz output, on a TF-written fixture and on
// small graphs with towers, devices and unknown ops.
#include "core/proto_io.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tools/dot.h"
#include "tools/inspect.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(ParseTextProto(text, &def).ok());
  return def;
}

constexpr char kTwoTowers[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: -1 }
          dim { size: 4 }
        }
      }
    }
  }
  node {
    name: "w"
    op: "VarHandleOp"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: 4 }
          dim { size: 2 }
        }
      }
    }
  }
  node {
    name: "r"
    op: "ReadVariableOp"
    input: "w"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "y"
    op: "MatMul"
    input: "x"
    input: "r"
    device: "/device:CPU:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "tower_1/y"
    op: "MatMul"
    input: "x"
    input: "r"
    device: "/device:CPU:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node { name: "tower_1/done" op: "NoOp" input: "^tower_1/y" device: "/device:CPU:1" }
)pb";

TEST(InspectTest, ReportsOpsPlaceholdersVariablesDevicesAndSinks) {
  const std::string report = tools::InspectGraphDef(Parse(kTwoTowers), "two.pbtxt");
  EXPECT_THAT(report, HasSubstr("Graph: two.pbtxt"));
  EXPECT_THAT(report, HasSubstr("Nodes: 6   op types: 5"));
  EXPECT_THAT(report, HasSubstr("Towerflow import: OK"));
  EXPECT_THAT(report, HasSubstr("     2  MatMul"));
  EXPECT_THAT(report, HasSubstr("  x  float [?,4]\n"));
  EXPECT_THAT(report, HasSubstr("  w  VarHandleOp float [4,2]  /device:CPU:0\n"));
  EXPECT_THAT(report, HasSubstr("  /device:CPU:0  4 nodes"));
  EXPECT_THAT(report, HasSubstr("  /device:CPU:1  2 nodes"));
  EXPECT_THAT(report, HasSubstr("Sinks (nodes nothing consumes) (2):"));
  EXPECT_THAT(report, HasSubstr("  tower_1/done  NoOp"));
  EXPECT_THAT(report, Not(HasSubstr("does not know")));
}

TEST(InspectTest, ListsUnknownOpsInsteadOfFailing) {
  const std::string report = tools::InspectGraphDef(
      Parse("node { name: 'a' op: 'FancyNewOp' } node { name: 'b' op: 'FancyNewOp' input: 'a' }"),
      "g");
  EXPECT_THAT(report, HasSubstr("Ops Towerflow does not know (1):"));
  EXPECT_THAT(report, HasSubstr("  FancyNewOp  2 node(s), e.g. a"));
  EXPECT_THAT(report, HasSubstr("Towerflow import: fails: NOT_FOUND"));
}

TEST(InspectTest, DescribesTheMnistFixture) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_before.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef def, ReadGraphDef(path));
  const std::string report = tools::InspectGraphDef(def, path);
  EXPECT_THAT(report, HasSubstr("Towerflow import: OK"));
  EXPECT_THAT(report, HasSubstr("    41  Const"));
  EXPECT_THAT(report, HasSubstr("Placeholders (2):"));
  EXPECT_THAT(report, HasSubstr("float [?,784]"));
  EXPECT_THAT(report, HasSubstr("int64 [?]"));
  EXPECT_THAT(report, HasSubstr("Variables (8):"));
  EXPECT_THAT(report, HasSubstr("VariableV2 float [5,5,1,32]"));
}

TEST(DotTest, TowersAreClustersDevicesAreColoursControlEdgesDashed) {
  const std::string dot = tools::DotFromGraphDef(Parse(kTwoTowers));
  EXPECT_THAT(dot, HasSubstr("digraph towerflow {"));
  EXPECT_THAT(dot, HasSubstr("subgraph \"cluster_tower_1\" {"));
  EXPECT_THAT(dot, HasSubstr("\"tower_1/y\" [label=\"y\\nMatMul\", fillcolor=\"#d1e7dd\"];"));
  EXPECT_THAT(dot, HasSubstr("\"y\" [label=\"y\\nMatMul\", fillcolor=\"#cfe2ff\"];"));
  EXPECT_THAT(dot, HasSubstr("\"x\" -> \"tower_1/y\";"));
  EXPECT_THAT(dot, HasSubstr("\"tower_1/y\" -> \"tower_1/done\" [style=dashed"));
  EXPECT_THAT(dot, HasSubstr("label=\"/device:CPU:1\", fillcolor=\"#d1e7dd\""));
  // Same graph, same picture.
  EXPECT_EQ(dot, tools::DotFromGraphDef(Parse(kTwoTowers)));
}

TEST(DotTest, NestedScopesNestClusters) {
  const std::string dot = tools::DotFromGraphDef(
      Parse("node { name: 'a/b/c' op: 'NoOp' } node { name: 'a/d' op: 'NoOp' }"));
  const size_t a = dot.find("subgraph \"cluster_a\"");
  const size_t ab = dot.find("subgraph \"cluster_a/b\"");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(ab, std::string::npos);
  EXPECT_LT(a, ab);
  EXPECT_THAT(dot, HasSubstr("\"a/d\" [label=\"d\\nNoOp\"];"));
  // A node named after its op shows the op once.
  EXPECT_THAT(tools::DotFromGraphDef(Parse("node { name: 's/NoOp' op: 'NoOp' }")),
              HasSubstr("\"s/NoOp\" [label=\"NoOp\"];"));
}

}  // namespace
}  // namespace towerflow
