// The auto_mixed_precision rewrite (auto_mixed_precision.h) on a classifier's
// step: which nodes turn 16-bit and where the casts go, as TF's lists say,
// and values within the 16-bit type's precision of the float32 graph.
#include "runtime/auto_mixed_precision.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "runtime/graph_optimizer.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// x [4, 3] -> MatMul(w1, a variable) -> BiasAdd(b) -> Relu -> MatMul(w2)
// = logits -> Softmax, SparseSoftmaxCrossEntropyWithLogits -> Mean, and
// Exp(logits) + 1, and Reshape(logits).
struct Classifier {
  Scope s = Scope::NewRootScope();
  Output x, probs, loss, exp_plus_one, flat;
  Variable w1;

  Classifier() {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    w1 = GetVariable(s, "w1", TensorShape({3, 5}), DT_FLOAT,
                     initializers::Constant({0.5f, -0.25f, 0.75f, 1.0f, -0.5f, 0.25f, 0.125f, -1.0f,
                                             0.5f, 0.375f, -0.75f, 0.625f, 0.25f, -0.125f, 1.0f}));
    const Output b = ops::Const(s.WithOpName("b"), {0.1f, -0.2f, 0.3f, 0.0f, 0.05f});
    const Output w2 =
        ops::Const(s.WithOpName("w2"),
                   MakeTensorProto<float>({0.3f, -0.6f, 0.9f, 0.2f, 0.4f, -0.1f, -0.5f, 0.7f, 0.1f,
                                           0.6f, -0.3f, 0.8f, 0.25f, -0.4f, 0.35f},
                                          TensorShape({5, 3})));
    const Output h = ops::MatMul(s.WithOpName("mm1"), x, w1.value());
    const Output r = ops::Relu(s.WithOpName("relu"), ops::BiasAdd(s.WithOpName("bias"), h, b));
    const Output logits = ops::MatMul(s.WithOpName("mm2"), r, w2);
    probs = ops::Softmax(s.WithOpName("softmax"), logits);
    const ops::SparseSoftmaxCrossEntropyWithLogits xent(
        s.WithOpName("xent"), logits, ops::Const(s.WithOpName("labels"), {0, 2, 1, 2}));
    loss = ops::Mean(s.WithOpName("loss"), xent.loss, 0);
    exp_plus_one =
        ops::AddV2(s.WithOpName("after_exp"), ops::Exp(s.WithOpName("exp"), logits), 1.0f);
    flat = ops::Reshape(s.WithOpName("flat"), logits, {-1});
  }
};

const Tensor kX = Literal<float>(
    {4, 3}, {1.0f, 2.0f, -1.0f, 0.5f, -0.5f, 1.5f, -2.0f, 0.25f, 1.0f, 0.75f, 1.25f, -0.25f});

struct Ran {
  std::vector<Tensor> outputs;
  std::map<std::string, NodeDef> nodes;
};

absl::StatusOr<Ran> RunStep(const Classifier& c, DataType dtype) {
  SessionOptions options;
  options.optimizer = GraphOptimizerOptions::None();
  options.optimizer.mixed_precision.dtype = dtype;
  options.optimizer.mixed_precision.device_types = {"CPU"};
  ClientSession session(c.s, options);
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session.Run({}, {}, {GlobalVariablesInitializer(c.s)}, &out));
  RunOptions run_options;
  run_options.output_partition_graphs = true;
  RunMetadata metadata;
  Ran ran;
  TW_RETURN_IF_ERROR(session.Run(run_options, {{c.x, kX}},
                                 {c.probs, c.loss, c.exp_plus_one, c.flat}, {}, &ran.outputs,
                                 &metadata));
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) ran.nodes[n.name()] = n;
  }
  return ran;
}

DataType T(const Ran& ran, const std::string& node) {
  auto it = ran.nodes.find(node);
  if (it == ran.nodes.end()) return DT_INVALID;
  return it->second.attr().at("T").type();
}

std::string Input(const Ran& ran, const std::string& node, int i) {
  auto it = ran.nodes.find(node);
  return it == ran.nodes.end() ? "<no node>" : it->second.input(i);
}

TEST(AutoMixedPrecisionTest, PaintsAsTensorFlowsLists) {
  Classifier c;
  TW_ASSERT_OK(c.s.status());
  TW_ASSERT_OK_AND_ASSIGN(Ran ran, RunStep(c, DT_BFLOAT16));
  // Allow: the products. Infer and clear between them: BiasAdd, Relu.
  // Clear next to a product: the Reshape.
  for (const char* node : {"mm1", "bias", "relu", "mm2", "flat"}) {
    EXPECT_EQ(T(ran, node), DT_BFLOAT16) << node;
  }
  // Deny: softmax, exp, the loss and its mean; infer after a deny node.
  for (const char* node : {"softmax", "exp", "xent", "loss", "after_exp"}) {
    EXPECT_EQ(T(ran, node), DT_FLOAT) << node;
  }
  // The variable is read in float32 and cast; the constant bias too.
  const std::string w1_cast = Input(ran, "mm1", 1);
  EXPECT_THAT(w1_cast, ::testing::EndsWith("-0-CastToBf16-AutoMixedPrecision"));
  EXPECT_EQ(ran.nodes.at(w1_cast).attr().at("SrcT").type(), DT_FLOAT);
  EXPECT_EQ(Input(ran, "bias", 1), "b-0-CastToBf16-AutoMixedPrecision");
  // Between 16-bit nodes, no cast.
  EXPECT_EQ(Input(ran, "bias", 0), "mm1");
  EXPECT_EQ(Input(ran, "mm2", 0), "relu");
  // One cast back per tensor, shared by its float32 readers.
  EXPECT_EQ(Input(ran, "softmax", 0), "mm2-0-CastToFp32-AutoMixedPrecision");
  EXPECT_EQ(Input(ran, "xent", 0), "mm2-0-CastToFp32-AutoMixedPrecision");
  EXPECT_EQ(Input(ran, "exp", 0), "mm2-0-CastToFp32-AutoMixedPrecision");
  // Fetches keep their names and dtypes: the reshape is cast back.
  EXPECT_EQ(ran.outputs[3].dtype(), DT_FLOAT);
  EXPECT_EQ(ran.nodes.count("flat-0-CastToFp32-AutoMixedPrecision"), 1);
}

TEST(AutoMixedPrecisionTest, ValuesWithinTheSixteenBitPrecision) {
  Classifier c;
  TW_ASSERT_OK(c.s.status());
  TW_ASSERT_OK_AND_ASSIGN(Ran exact, RunStep(c, DT_INVALID));
  EXPECT_EQ(T(exact, "mm1"), DT_FLOAT);
  for (const auto& [dtype, rtol] : {std::pair{DT_HALF, 4e-3}, std::pair{DT_BFLOAT16, 3e-2}}) {
    SCOPED_TRACE(DataTypeString(dtype));
    TW_ASSERT_OK_AND_ASSIGN(Ran low, RunStep(c, dtype));
    EXPECT_EQ(T(low, "mm2"), dtype);
    for (int i = 0; i < 4; ++i) {
      EXPECT_THAT(low.outputs[i], TensorNear(exact.outputs[i], rtol, rtol)) << i;
    }
  }
}

TEST(AutoMixedPrecisionTest, OnlyTheNamedDeviceTypes) {
  Classifier c;
  GraphDef def;
  TW_ASSERT_OK(c.s.ToGraphDef(&def));
  GraphDef rewritten = def;
  MixedPrecisionOptions options;
  options.dtype = DT_HALF;  // GPUs only, by default
  TW_ASSERT_OK(AutoMixedPrecision(options, "CPU", &rewritten));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(rewritten, def));
  options.device_types = {"CPU"};
  TW_ASSERT_OK(AutoMixedPrecision(options, "CPU", &rewritten));
  EXPECT_GT(rewritten.node_size(), def.node_size());
}

}  // namespace
}  // namespace towerflow
