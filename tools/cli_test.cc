// The inspect report and the Graphviz output, on a TF-written fixture and on
// small graphs with towers, devices and unknown ops.
#include "absl/strings/str_replace.h"
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

tools::DotOptions Full() {
  tools::DotOptions options;
  options.full = true;
  return options;
}

TEST(DotTest, TowersAreClustersDevicesAreColoursControlEdgesDashed) {
  const std::string dot = tools::DotFromGraphDef(Parse(kTwoTowers), Full());
  EXPECT_THAT(dot, HasSubstr("digraph towerflow {"));
  EXPECT_THAT(dot, HasSubstr("subgraph \"cluster_tower_1\" {"));
  EXPECT_THAT(dot, HasSubstr("\"tower_1/y\" [label=\"y\\nMatMul\", fillcolor=\"#d1e7dd\"];"));
  EXPECT_THAT(dot, HasSubstr("\"y\" [label=\"y\\nMatMul\", fillcolor=\"#cfe2ff\"];"));
  EXPECT_THAT(dot, HasSubstr("\"x\" -> \"tower_1/y\";"));
  EXPECT_THAT(dot, HasSubstr("\"tower_1/y\" -> \"tower_1/done\" [style=dashed"));
  EXPECT_THAT(dot, HasSubstr("label=\"/device:CPU:1\", fillcolor=\"#d1e7dd\""));
  // Same graph, same picture.
  EXPECT_EQ(dot, tools::DotFromGraphDef(Parse(kTwoTowers), Full()));
}

TEST(DotTest, NestedScopesNestClusters) {
  const std::string dot = tools::DotFromGraphDef(
      Parse("node { name: 'a/b/c' op: 'NoOp' } node { name: 'a/d' op: 'NoOp' }"), Full());
  const size_t a = dot.find("subgraph \"cluster_a\"");
  const size_t ab = dot.find("subgraph \"cluster_a/b\"");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(ab, std::string::npos);
  EXPECT_LT(a, ab);
  EXPECT_THAT(dot, HasSubstr("\"a/d\" [label=\"d\\nNoOp\"];"));
  // A node named after its op shows the op once.
  EXPECT_THAT(tools::DotFromGraphDef(Parse("node { name: 's/NoOp' op: 'NoOp' }"), Full()),
              HasSubstr("\"s/NoOp\" [label=\"NoOp\"];"));
}

// Two towers of one layer, its variables on the parameter server /cpu:0.
constexpr char kLayerOnTwoTowers[] = R"pb(
  node {
    name: "images"
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
          dim { size: 8 }
          dim { size: 4 }
        }
      }
    }
  }
  node {
    name: "conv1/weights"
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
    name: "conv1/weights/Read"
    op: "ReadVariableOp"
    input: "conv1/weights"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "conv1/biases"
    op: "VarHandleOp"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape { dim { size: 2 } } }
    }
  }
  node {
    name: "conv1/biases/Read"
    op: "ReadVariableOp"
    input: "conv1/biases"
    device: "/device:CPU:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "tower_0/conv1/MatMul"
    op: "MatMul"
    input: "images"
    input: "conv1/weights/Read"
    device: "/device:CPU:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "tower_0/conv1/BiasAdd"
    op: "BiasAdd"
    input: "tower_0/conv1/MatMul"
    input: "conv1/biases/Read"
    device: "/device:CPU:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "tower_1/conv1/MatMul"
    op: "MatMul"
    input: "images"
    input: "conv1/weights/Read"
    device: "/device:CPU:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node { name: "tower_1/done" op: "NoOp" input: "^tower_1/conv1/MatMul" device: "/device:CPU:1" }
  node {
    name: "train"
    op: "NoOp"
    input: "^tower_0/conv1/BiasAdd"
    input: "^tower_1/done"
    device: "/device:CPU:0"
  }
)pb";

TEST(DotTest, ScopesCollapseIntoBoxesAndTheirEdgesAddUp) {
  const std::string dot = tools::DotFromGraphDef(Parse(kLayerOnTwoTowers));
  // A box per tower, labelled with its ops and coloured by its device.
  EXPECT_THAT(dot, HasSubstr("\"[tower_0]\" [label=\"tower_0\\n2 ops\", shape=box, "
                             "style=\"filled,bold\", fillcolor=\"#cfe2ff\"];"));
  EXPECT_THAT(dot, HasSubstr("\"[tower_1]\" [label=\"tower_1\\n2 ops\", shape=box, "
                             "style=\"filled,bold\", fillcolor=\"#d1e7dd\"];"));
  // The variables' scopes: one box for their device.
  EXPECT_THAT(dot, HasSubstr("\"[variables on /device:CPU:0]\" [label=\"variables on "
                             "/device:CPU:0\\n4 ops, 2 variables\""));
  EXPECT_THAT(dot, Not(HasSubstr("[conv1]")));
  // Inputs stay nodes; the root's other ops make the "top level" box.
  EXPECT_THAT(dot, HasSubstr("\"images\" [label=\"images\\nPlaceholder\", "
                             "fillcolor=\"#cfe2ff\"];"));
  EXPECT_THAT(dot, HasSubstr("\"[top level]\" [label=\"top level\\n1 op\""));
  // Edges between boxes: the distinct tensors crossing, and their bytes from
  // shape inference (weights 4x2 and biases 2 floats; images 8x4 floats).
  EXPECT_THAT(dot, HasSubstr("\"[variables on /device:CPU:0]\" -> \"[tower_0]\" "
                             "[label=\"2 tensors, 40 B\", penwidth=2];"));
  EXPECT_THAT(dot, HasSubstr("\"[variables on /device:CPU:0]\" -> \"[tower_1]\" "
                             "[label=\"1 tensor, 32 B\"];"));
  EXPECT_THAT(dot, HasSubstr("\"images\" -> \"[tower_1]\" [label=\"1 tensor, 128 B\"];"));
  // Control edges between boxes are dashed; those inside a box vanish.
  EXPECT_THAT(dot, HasSubstr("\"[tower_1]\" -> \"[top level]\" [style=dashed"));
  EXPECT_THAT(dot, Not(HasSubstr("tower_1/done")));
  EXPECT_EQ(dot, tools::DotFromGraphDef(Parse(kLayerOnTwoTowers)));
}

// ReplicateModelFn's towers: tower 0 unprefixed (TF's replicate_model_fn),
// the others under tower_K.
std::string UnprefixedTowerZero() {
  return absl::StrReplaceAll(kLayerOnTwoTowers, {{"tower_0/", ""}});
}

TEST(DotTest, UnprefixedTowerZeroIsOneBox) {
  const std::string dot = tools::DotFromGraphDef(Parse(UnprefixedTowerZero()));
  // conv1's ops are tower 0's (tower_1/conv1 exists); its variables stay
  // in the parameter server's box.
  EXPECT_THAT(dot, HasSubstr("\"[tower_0]\" [label=\"tower_0\\n2 ops\", shape=box, "
                             "style=\"filled,bold\", fillcolor=\"#cfe2ff\"];"));
  EXPECT_THAT(dot, HasSubstr("\"[variables on /device:CPU:0]\" [label=\"variables on "
                             "/device:CPU:0\\n4 ops, 2 variables\""));
  EXPECT_THAT(dot, Not(HasSubstr("[conv1]")));
  // train has no twin in tower_1: it stays at the top level.
  EXPECT_THAT(dot, HasSubstr("\"[top level]\" [label=\"top level\\n1 op\""));
  EXPECT_THAT(dot, HasSubstr("\"[variables on /device:CPU:0]\" -> \"[tower_0]\" "
                             "[label=\"2 tensors, 40 B\", penwidth=2];"));
  // --expand tower_0 shows its scopes again.
  tools::DotOptions options;
  options.expand = {"tower_0"};
  EXPECT_THAT(tools::DotFromGraphDef(Parse(UnprefixedTowerZero()), options),
              HasSubstr("\"[conv1]\" [label=\"conv1\\n2 ops\""));
}

TEST(DotTest, ExpandOpensAScopeAndItsParents) {
  tools::DotOptions options;
  options.expand = {"tower_0"};
  std::string dot = tools::DotFromGraphDef(Parse(kLayerOnTwoTowers), options);
  EXPECT_THAT(dot, HasSubstr("\"[tower_0/conv1]\" [label=\"tower_0/conv1\\n2 ops\""));
  EXPECT_THAT(dot, HasSubstr("\"[tower_1]\""));
  options.expand = {"tower_0/conv1"};
  dot = tools::DotFromGraphDef(Parse(kLayerOnTwoTowers), options);
  EXPECT_THAT(dot, HasSubstr("\"tower_0/conv1/MatMul\" [label=\"MatMul\""));
  EXPECT_THAT(dot, HasSubstr("\"tower_0/conv1/MatMul\" -> \"tower_0/conv1/BiasAdd\""));
  // Opening a variable's scope shows its variables again.
  options.expand = {"conv1"};
  dot = tools::DotFromGraphDef(Parse(kLayerOnTwoTowers), options);
  EXPECT_THAT(dot, HasSubstr("\"[conv1/weights]\""));
  EXPECT_THAT(dot, Not(HasSubstr("variables on")));
}

}  // namespace
}  // namespace towerflow
