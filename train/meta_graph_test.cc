// ExportMetaGraph: the GraphDef, the SaverDef, collections as TensorFlow's
// import_meta_graph reads them, and a round trip through a session.
#include "train/meta_graph.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "proto/variable.pb.h"
#include "runtime/session.h"
#include "tests/test_util.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace train {
namespace {

using ::testing::ElementsAre;

std::vector<VariableDef> VariableDefs(const MetaGraphDef& meta, const std::string& key) {
  std::vector<VariableDef> out;
  for (const std::string& bytes : meta.collection_def().at(key).bytes_list().value()) {
    VariableDef def;
    EXPECT_TRUE(def.ParseFromString(bytes));
    out.push_back(def);
  }
  return out;
}

const NodeDef* FindNode(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& n : graph.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

struct Model {
  Scope root = Scope::NewRootScope();
  Variable w, counter, step;
  Output x, loss;
  Operation train;
};

// loss = sum(x * w), one step of gradient descent; a counter nothing reads.
void Build(Model* m) {
  const Scope& s = m->root;
  m->w = GetVariable(s.WithVariableScope("dense"), "kernel", TensorShape({2}), DT_FLOAT,
                     initializers::Constant({0.5f, -1.f}));
  m->counter = GetVariable(s, "counter", TensorShape({}), DT_INT32, initializers::Zeros(),
                           {.trainable = false});
  m->step = GetOrCreateGlobalStep(s);
  m->x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  m->loss = ops::Identity(s.WithOpName("loss"), ops::Sum(s, ops::Mul(s, m->x, m->w.value(s)), 0));
  AddToCollection(s.graph(), GraphKeys::kLosses, m->loss);
  m->train = GradientDescentOptimizer(0.25f).Minimize(s.WithOpName("train"), m->loss, m->step);
  AddToCollection(s.graph(), GraphKeys::kTrainOp, m->train);
}

TEST(MetaGraphTest, HoldsTheGraphTheSaverAndTheCollections) {
  Model m;
  Build(&m);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(m.root));
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ExportMetaGraph(m.root, saver.get()));
  EXPECT_EQ(meta.saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta.saver_def().filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(meta.saver_def().version(), SaverDef::V2);
  EXPECT_THAT(meta.collection_def().at("losses").node_list().value(), ElementsAre("loss:0"));
  EXPECT_THAT(meta.collection_def().at("train_op").node_list().value(),
              ElementsAre(m.train.node()->name()));

  const std::vector<VariableDef> variables = VariableDefs(meta, "variables");
  ASSERT_EQ(variables.size(), 3u);
  EXPECT_EQ(variables[0].variable_name(), "dense/kernel:0");
  EXPECT_EQ(variables[0].initializer_name(), "dense/kernel/Assign");
  EXPECT_EQ(variables[0].initial_value_name(), m.w.initial_value().node()->name() + ":0");
  EXPECT_TRUE(variables[0].is_resource());
  EXPECT_TRUE(variables[0].trainable());
  EXPECT_EQ(variables[1].variable_name(), "counter:0");
  EXPECT_FALSE(variables[1].trainable());
  EXPECT_EQ(variables[2].variable_name(), "global_step:0");
  EXPECT_FALSE(variables[2].trainable());
  const std::vector<VariableDef> trainable = VariableDefs(meta, "trainable_variables");
  ASSERT_EQ(trainable.size(), 1u);
  EXPECT_EQ(trainable[0].variable_name(), "dense/kernel:0");
  const std::vector<VariableDef> step = VariableDefs(meta, "global_step");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0].variable_name(), "global_step:0");

  // Each snapshot reads its own variable; the Saver reads every one.
  for (const VariableDef& v : variables) {
    const std::string snapshot = v.snapshot_name();
    ASSERT_TRUE(absl::EndsWith(snapshot, ":0")) << snapshot;
    const NodeDef* read = FindNode(meta.graph_def(), snapshot.substr(0, snapshot.size() - 2));
    ASSERT_NE(read, nullptr) << snapshot;
    EXPECT_EQ(read->op(), "ReadVariableOp");
    EXPECT_EQ(read->input(0) + ":0", v.variable_name());
  }
  EXPECT_EQ(meta.graph_def().node_size(), m.root.ToGraphDef()->node_size());
}

TEST(MetaGraphTest, AVariableNothingReadsGetsTensorFlowsRead) {
  Scope s = Scope::NewRootScope();
  Variable v = GetVariable(s, "lonely", TensorShape({3}), DT_INT64, initializers::Zeros());
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ExportMetaGraph(s, nullptr));
  EXPECT_FALSE(meta.has_saver_def());
  const std::vector<VariableDef> variables = VariableDefs(meta, "variables");
  ASSERT_EQ(variables.size(), 1u);
  EXPECT_EQ(variables[0].snapshot_name(), "lonely/Read/ReadVariableOp:0");
  const NodeDef* read = FindNode(meta.graph_def(), "lonely/Read/ReadVariableOp");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->op(), "ReadVariableOp");
  EXPECT_THAT(read->input(), ElementsAre("lonely"));
  EXPECT_EQ(read->attr().at("dtype").type(), DT_INT64);
  // The exported GraphDef alone: the graph itself is unchanged.
  EXPECT_EQ(s.ToGraphDef()->node_size() + 1, meta.graph_def().node_size());
}

TEST(MetaGraphTest, ASessionOverTheExportRestoresAndTrains) {
  const std::string dir = testing::MakeTempDir("meta_graph");
  Model m;
  Build(&m);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(m.root));
  std::string path;
  {
    ClientSession session(m.root);
    TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(m.root)}, nullptr));
    TW_ASSERT_OK(session.Run({{m.x, Literal<float>({2}, {1, 2})}}, {}, {m.train}, nullptr));
    TW_ASSERT_OK_AND_ASSIGN(path, saver->Save(session, dir, 1));
  }
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ExportMetaGraph(m.root, saver.get()));
  // What import_meta_graph and saver.restore do, on a new session.
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(SessionOptions()));
  TW_ASSERT_OK(session->Create(meta.graph_def()));
  TW_ASSERT_OK(session->Run({{meta.saver_def().filename_tensor_name(), Scalar<std::string>(path)}},
                            {}, {meta.saver_def().restore_op_name()}, nullptr));
  const std::string train_op = meta.collection_def().at("train_op").node_list().value(0);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({{"x", Literal<float>({2}, {1, 2})}}, {"loss:0"}, {train_op}, &out));
  // w = [0.5, -1] - 0.25 * [1, 2] = [0.25, -1.5]: loss 0.25 - 3.
  EXPECT_THAT(out[0], TensorIs<float>({}, {-2.75f}));
  TW_ASSERT_OK(session->Run({}, {VariableDefs(meta, "global_step")[0].snapshot_name()}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int64_t>({}, {2}));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
