// The session's graph rewrites (graph_optimizer.h): each rewritten graph
// gives the values of the graph as written, and the partitions that ran
// show the rewrite.
#include "runtime/graph_optimizer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/session_testing.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

// Deterministic values in [-1, 1) for a tensor of `shape`.
template <typename T>
Tensor Wavy(const TensorShape& shape, double phase = 0.0) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    t.data<T>()[i] = static_cast<T>(std::sin(0.7 * i + phase));
  }
  return t;
}

Output C(const Scope& scope, const Tensor& value) { return ops::Const(scope, value.AsProto()); }

struct Ran {
  std::vector<Tensor> outputs;
  std::vector<NodeDef> nodes;  // of every partition that ran
};

// Runs `fetches` of `scope`'s graph with `optimizer`, keeping the
// partitions (fed Placeholders become _Arg nodes there).
absl::StatusOr<Ran> RunWith(const Scope& scope, const GraphOptimizerOptions& optimizer,
                            const ClientSession::FeedType& feeds,
                            const std::vector<Output>& fetches) {
  SessionOptions options;
  options.optimizer = optimizer;
  ClientSession session(scope, options);
  RunOptions run_options;
  run_options.output_partition_graphs = true;
  RunMetadata metadata;
  Ran ran;
  TW_RETURN_IF_ERROR(session.Run(run_options, feeds, fetches, {}, &ran.outputs, &metadata));
  for (const GraphDef& g : metadata.partition_graphs) {
    for (const NodeDef& n : g.node()) ran.nodes.push_back(n);
  }
  return ran;
}

std::vector<std::string> Ops(const Ran& ran) {
  std::vector<std::string> ops;
  for (const NodeDef& n : ran.nodes) {
    if (n.op()[0] != '_' || absl::StartsWith(n.op(), "_Fused")) ops.push_back(n.op());
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

const NodeDef* FindNode(const Ran& ran, const std::string& name) {
  for (const NodeDef& n : ran.nodes) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> ListAttr(const NodeDef& n, const std::string& name) {
  const auto& list = n.attr().at(name).list().s();
  return std::vector<std::string>(list.begin(), list.end());
}

// Runs with and without the optimizer: the values agree to `atol`.
void ExpectSameValues(const Scope& scope, const ClientSession::FeedType& feeds,
                      const std::vector<Output>& fetches, double atol, Ran* optimized) {
  TW_ASSERT_OK_AND_ASSIGN(Ran plain, RunWith(scope, GraphOptimizerOptions::None(), feeds, fetches));
  TW_ASSERT_OK_AND_ASSIGN(*optimized, RunWith(scope, GraphOptimizerOptions(), feeds, fetches));
  ASSERT_EQ(plain.outputs.size(), optimized->outputs.size());
  for (size_t i = 0; i < plain.outputs.size(); ++i) {
    EXPECT_THAT(optimized->outputs[i], TensorNear(plain.outputs[i], atol)) << "fetch " << i;
  }
}

TEST(GraphOptimizerTest, ConvBiasReluBecomesOneNodeNamedAfterTheRelu) {
  Scope root = Scope::NewRootScope();
  // Fed, so that constant folding leaves the chain to the remapper.
  auto x = ops::Placeholder(root, DT_FLOAT);
  const Tensor x_value = Literal<float>({1, 2, 2, 1}, {1, 2, 3, 4});
  auto filter = C(root, Literal<float>({1, 1, 1, 2}, {1, -1}));
  auto conv = ops::Conv2D(root.WithOpName("conv"), x, filter, {1, 1, 1, 1}, "VALID");
  auto biased = ops::BiasAdd(root.WithOpName("bias"), conv, {0.5f, 0.5f});
  auto relu = ops::Relu(root.WithOpName("relu"), biased);

  TW_ASSERT_OK_AND_ASSIGN(Ran ran, RunWith(root, GraphOptimizerOptions(), {{x, x_value}}, {relu}));
  EXPECT_THAT(ran.outputs[0],
              TensorNear(Literal<float>({1, 2, 2, 2}, {1.5f, 0, 2.5f, 0, 3.5f, 0, 4.5f, 0}), 1e-6));
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "_FusedConv2D"));
  const NodeDef* fused = FindNode(ran, "relu");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->op(), "_FusedConv2D");
  EXPECT_THAT(ListAttr(*fused, "fused_ops"), ElementsAre("BiasAdd", "Relu"));
  EXPECT_THAT(ListAttr(*fused, "_fused_nodes"), ElementsAre("conv", "bias", "relu"));

  TW_ASSERT_OK_AND_ASSIGN(Ran plain,
                          RunWith(root, GraphOptimizerOptions::None(), {{x, x_value}}, {relu}));
  EXPECT_THAT(Ops(plain), ElementsAre("BiasAdd", "Const", "Const", "Conv2D", "Relu"));
  EXPECT_THAT(plain.outputs[0], TensorEq(ran.outputs[0]));
}

TEST(GraphOptimizerTest, FusedConvolutionsMatchTheGraphAsWritten) {
  Scope root = Scope::NewRootScope();
  // float NHWC, strided SAME, oneDNN with a bias and a clip; double NCHW
  // on the im2col path.
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto f = C(root, Wavy<float>({3, 3, 4, 5}, 1.0));
  auto y = ops::Relu6(root, ops::BiasAdd(root, ops::Conv2D(root, x, f, {1, 2, 2, 1}, "SAME"),
                                         C(root, Wavy<float>({5}, 2.0))));
  auto xd = ops::Placeholder(root, DT_DOUBLE);
  auto fd = C(root, Wavy<double>({2, 3, 4, 3}, 3.0));
  auto yd = ops::BiasAdd(
      root, ops::Conv2D(root, xd, fd, {1, 1, 1, 1}, "VALID", ops::Conv2D::DataFormat("NCHW")),
      C(root, Wavy<double>({3}, 4.0)), ops::BiasAdd::DataFormat("NCHW"));
  Tensor x_value = Wavy<float>({2, 7, 6, 4});
  for (int64_t i = 0; i < x_value.NumElements(); ++i) x_value.data<float>()[i] *= 4;  // past 6
  Ran ran;
  ExpectSameValues(root, {{x, x_value}, {xd, Wavy<double>({2, 4, 5, 6})}}, {Output(y), Output(yd)},
                   1e-5, &ran);
  EXPECT_THAT(Ops(ran),
              ElementsAre("Const", "Const", "Const", "Const", "_FusedConv2D", "_FusedConv2D"));
}

TEST(GraphOptimizerTest, FusedMatMulMatchesTheGraphAsWritten) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Placeholder(root, DT_FLOAT);
  auto w = C(root, Wavy<float>({6, 9}, 1.0));
  auto y =
      ops::Relu(root, ops::BiasAdd(root, ops::MatMul(root, a, w, ops::MatMul::TransposeB(true)),
                                   C(root, Wavy<float>({6}, 2.0))));
  Ran ran;
  ExpectSameValues(root, {{a, Wavy<float>({5, 9})}}, {Output(y)}, 1e-6, &ran);
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "_FusedMatMul"));

  // By hand: [1, 2] x [[1, -1], [1, 1]] = [3, 1]; + [-4, 0.5] = [-1, 1.5];
  // Relu: [0, 1.5].
  Scope s = Scope::NewRootScope();
  auto x = ops::Placeholder(s, DT_FLOAT);
  auto product = ops::MatMul(s, x, C(s, Literal<float>({2, 2}, {1, -1, 1, 1})));
  auto z = ops::Relu(s, ops::BiasAdd(s, product, C(s, Literal<float>({2}, {-4, 0.5f}))));
  TW_ASSERT_OK_AND_ASSIGN(
      ran, RunWith(s, GraphOptimizerOptions(), {{x, Literal<float>({1, 2}, {1, 2})}}, {z}));
  EXPECT_THAT(ran.outputs[0], TensorEq(Literal<float>({1, 2}, {0, 1.5f})));
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "_FusedMatMul"));
}

TEST(GraphOptimizerTest, EachRewriteCanBeSwitchedOff) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto filter = ops::Sqrt(root.WithOpName("filter"), C(root, Filled<float>({1, 1, 1, 1}, 4.0f)));
  auto conv = ops::Conv2D(root, ops::Pad(root, x, {{0, 0}, {1, 0}, {0, 1}, {0, 0}}), filter,
                          {1, 1, 1, 1}, "VALID");
  auto y = ops::Relu(root, ops::BiasAdd(root, conv, {-1.0f}));
  const ClientSession::FeedType feeds = {{x, Literal<float>({1, 1, 1, 1}, {3})}};
  // Padded to [[0, 0], [3, 0]] (top row and right column), * 2 - 1, Relu.
  const Tensor expected = Literal<float>({1, 2, 2, 1}, {0, 0, 5, 0});
  struct Case {
    GraphOptimizerOptions options;
    std::vector<std::string> ops;
  };
  GraphOptimizerOptions no_folding, no_remapping, no_pads;
  no_folding.constant_folding = false;
  no_remapping.remapping = false;
  no_pads.pad_fusion = false;
  for (const Case& c : std::vector<Case>{
           {GraphOptimizerOptions(), {"Const", "Const", "_FusedConv2D"}},
           {no_folding, {"Const", "Const", "Sqrt", "_FusedConv2D"}},
           {no_remapping, {"BiasAdd", "Const", "Const", "Conv2D", "Relu"}},
           {no_pads, {"Const", "Const", "Const", "Pad", "_FusedConv2D"}},
       }) {
    TW_ASSERT_OK_AND_ASSIGN(Ran ran, RunWith(root, c.options, feeds, {y}));
    EXPECT_THAT(ran.outputs[0], TensorEq(expected));
    EXPECT_THAT(Ops(ran), ::testing::ElementsAreArray(c.ops));
  }
}

TEST(GraphOptimizerTest, InferenceBatchNormFoldsIntoTheConvolution) {
  Scope root = Scope::NewRootScope();
  // conv = 2 * 3 = 6; (6 - mean 4) * scale 2 / sqrt(variance 3 + epsilon 1)
  // + offset 1 = 3.
  auto image = ops::Placeholder(root, DT_FLOAT);
  auto conv =
      ops::Conv2D(root, image, C(root, Literal<float>({1, 1, 1, 1}, {3})), {1, 1, 1, 1}, "VALID");
  auto bn = ops::FusedBatchNormV3(root, conv, {2.0f}, {1.0f}, {4.0f}, {3.0f},
                                  ops::FusedBatchNormV3::IsTraining(false).Epsilon(1.0f));
  TW_ASSERT_OK_AND_ASSIGN(Ran ran, RunWith(root, GraphOptimizerOptions(),
                                           {{image, Literal<float>({1, 1, 1, 1}, {2})}}, {bn.y}));
  EXPECT_THAT(ran.outputs[0], TensorNear(Literal<float>({1, 1, 1, 1}, {3}), 1e-6));
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "Const", "Const", "Const", "_FusedConv2D"));

  // A larger one with a Relu, against the graph as written.
  Scope s = Scope::NewRootScope();
  auto x = ops::Placeholder(s, DT_FLOAT);
  auto c = ops::Conv2D(s, x, C(s, Wavy<float>({3, 3, 3, 8}, 1.0)), {1, 1, 1, 1}, "SAME");
  Tensor variance = Wavy<float>({8}, 4.0);
  for (int64_t i = 0; i < 8; ++i) variance.data<float>()[i] += 1.5f;
  auto b = ops::FusedBatchNormV3(s, c, C(s, Wavy<float>({8}, 2.0)), C(s, Wavy<float>({8}, 3.0)),
                                 C(s, Wavy<float>({8}, 5.0)), C(s, variance),
                                 ops::FusedBatchNormV3::IsTraining(false));
  auto y = ops::Relu(s, b.y);
  ExpectSameValues(s, {{x, Wavy<float>({2, 6, 6, 3})}}, {Output(y)}, 1e-5, &ran);
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "Const", "Const", "Const", "_FusedConv2D"));
  EXPECT_THAT(ListAttr(*FindNode(ran, y.node()->name()), "fused_ops"),
              ElementsAre("FusedBatchNorm", "Relu"));
}

TEST(GraphOptimizerTest, ConstantSubgraphsAreComputedOnce) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // sqrt(2 * 8) = 4, whatever is fed.
  auto scale = ops::Sqrt(root.WithOpName("scale"), ops::Mul(root, ops::Const(root, 2.0f), 8.0f));
  auto y = ops::Mul(root.WithOpName("y"), x, scale);
  // Stateful: a seeded random stream advances every step, so it stays.
  auto noise = ops::RandomUniform(root.WithOpName("noise"), {2}, DT_FLOAT,
                                  ops::RandomUniform::Seed(1).Seed2(2));
  Ran ran;
  ExpectSameValues(root, {{x, Literal<float>({2}, {1, -2})}}, {Output(y), Output(noise)}, 0, &ran);
  EXPECT_THAT(ran.outputs[0], TensorEq(Literal<float>({2}, {4, -8})));
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "Mul", "RandomUniform"));
  EXPECT_EQ(FindNode(ran, "scale")->op(), "Const");
}

// A node of several outputs folds into one constant per output, its readers
// pointed at them; a NoOp of its name keeps the control edges leaving it.
TEST(GraphOptimizerTest, NodesOfSeveralOutputsFoldIntoAConstantEach) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  // The reduction axes of a [2, 3] + [3] broadcast's gradient: r0 = {}, r1 = {0}.
  auto args = ops::BroadcastGradientArgs(root.WithOpName("args"), ops::Const(root, {2, 3}),
                                         ops::Const(root, {3}));
  auto sum0 = ops::Sum(root.WithOpName("sum0"), x, args.r0);
  auto sum1 = ops::Sum(root.WithOpName("sum1"), x, args.r1);
  auto after = ops::Identity(root.WithOpName("after").WithControlDependencies({args.r0.op()}), x);
  Ran ran;
  ExpectSameValues(root, {{x, Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})}},
                   {Output(sum0), Output(sum1), Output(after)}, 0, &ran);
  EXPECT_THAT(ran.outputs[0], TensorEq(Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})));
  EXPECT_THAT(ran.outputs[1], TensorEq(Literal<float>({3}, {5, 7, 9})));
  EXPECT_THAT(Ops(ran), ElementsAre("Const", "Const", "Identity", "NoOp", "Sum", "Sum"));
  EXPECT_EQ(FindNode(ran, "args")->op(), "NoOp");
  EXPECT_EQ(FindNode(ran, "args/_folded_1")->op(), "Const");
  EXPECT_EQ(FindNode(ran, "sum1")->input(1), "args/_folded_1");
}

TEST(GraphOptimizerTest, TrainingBatchNormAndReluFuseWithTheirGradient) {
  for (const std::string format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_FLOAT);
    auto scale = ops::Placeholder(root, DT_FLOAT);
    auto offset = ops::Placeholder(root, DT_FLOAT);
    auto empty = C(root, Tensor(DT_FLOAT, TensorShape({0})));
    auto bn = ops::FusedBatchNormV3(root, x, scale, offset, empty, empty,
                                    ops::FusedBatchNormV3::DataFormat(format));
    auto y = ops::Relu(root, bn.y);
    const TensorShape per_channel = format == "NHWC" ? TensorShape({3}) : TensorShape({3, 1, 1});
    auto loss =
        ops::Sum(root, ops::Square(root, ops::Mul(root, y, C(root, Wavy<float>(per_channel, 1.0)))),
                 {0, 1, 2, 3});
    std::vector<Output> grads;
    TW_ASSERT_OK(AddSymbolicGradients(root, {loss}, {x, scale, offset}, &grads));
    const TensorShape shape =
        format == "NHWC" ? TensorShape({2, 4, 5, 3}) : TensorShape({2, 3, 4, 5});
    Ran ran;
    // The batch norm's mean and variance outputs are read from the fused
    // node; the gradient through the Relu is masked inside the fused one.
    ExpectSameValues(root,
                     {{x, Wavy<float>(shape)},
                      {scale, Literal<float>({3}, {1.5f, -0.5f, 2})},
                      {offset, Literal<float>({3}, {0.1f, 0.2f, -0.3f})}},
                     {Output(y), bn.batch_mean, bn.batch_variance, grads[0], grads[1], grads[2]},
                     1e-5, &ran);
    const std::vector<std::string> ops = Ops(ran);
    EXPECT_THAT(ops, ::testing::Contains("_FusedBatchNormEx"));
    EXPECT_THAT(ops, ::testing::Contains("_FusedBatchNormGradEx"));
    EXPECT_THAT(ops, ::testing::Not(::testing::Contains("Relu")));
    EXPECT_THAT(ops, ::testing::Not(::testing::Contains("ReluGrad")));
    EXPECT_EQ(FindNode(ran, y.node()->name())->op(), "_FusedBatchNormEx");
  }
}

TEST(GraphOptimizerTest, ChainsWithOtherReadersOrTrainingBatchNormStayAsWritten) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto f = C(root, Wavy<float>({1, 1, 2, 2}));
  // The convolution is fetched too: no fusion.
  auto conv = ops::Conv2D(root, x, f, {1, 1, 1, 1}, "VALID");
  auto biased = ops::BiasAdd(root, conv, {1.0f, 2.0f});
  // A training batch norm computes its own statistics: no fusion.
  auto conv2 = ops::Conv2D(root, x, f, {1, 1, 1, 1}, "VALID");
  auto bn = ops::FusedBatchNormV3(root, conv2, {1.0f, 1.0f}, {0.0f, 0.0f},
                                  C(root, Tensor(DT_FLOAT, TensorShape({0}))),
                                  C(root, Tensor(DT_FLOAT, TensorShape({0}))));
  Ran ran;
  ExpectSameValues(root, {{x, Wavy<float>({1, 3, 3, 2})}}, {Output(conv), Output(biased), bn.y},
                   1e-6, &ran);
  EXPECT_THAT(Ops(ran), ElementsAre("BiasAdd", "Const", "Const", "Const", "Const", "Const", "Const",
                                    "Conv2D", "Conv2D", "FusedBatchNormV3"));
}

TEST(GraphOptimizerTest, PadFoldsIntoTheConvolutionAndItsGradients) {
  // The official ResNet's strided convolution: an explicit Pad, then VALID.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto f = ops::Placeholder(root, DT_FLOAT);
  auto padded = ops::Pad(root, x, {{0, 0}, {1, 2}, {0, 1}, {0, 0}});
  auto conv = ops::Conv2D(root, padded, f, {1, 2, 2, 1}, "VALID");
  auto loss = ops::Sum(root, ops::Square(root, conv), {0, 1, 2, 3});
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {loss}, {x, f}, &grads));
  Ran ran;
  ExpectSameValues(root, {{x, Wavy<float>({2, 5, 5, 3})}, {f, Wavy<float>({3, 3, 3, 4}, 1.0)}},
                   {Output(conv), grads[0], grads[1]}, 1e-5, &ran);
  for (const std::string& op : Ops(ran)) EXPECT_NE(op, "Pad");
  EXPECT_EQ(FindNode(ran, conv.node()->name())->attr().at("padding").s(), "EXPLICIT");

  // Finite differences through the rewritten graph (ClientSession's
  // default options optimize).
  Scope s = Scope::NewRootScope();
  auto xs = ops::Placeholder(s, DT_FLOAT);
  auto y = ops::Conv2D(s, ops::Pad(s, xs, {{0, 0}, {2, 0}, {1, 1}, {0, 0}}),
                       C(s, Wavy<float>({2, 2, 2, 3}, 2.0)), {1, 1, 2, 1}, "VALID");
  TW_ASSERT_OK_AND_ASSIGN(const double error,
                          ComputeGradientError<float>(s, {xs}, {Wavy<float>({1, 3, 4, 2})}, {y}));
  EXPECT_LT(error, 1e-3);
}

TEST(GraphOptimizerTest, PadsThatAreNotSpatialZerosStay) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto f = C(root, Wavy<float>({1, 1, 3, 2}));
  // Channels padded: not a convolution's padding.
  auto channels = ops::Conv2D(root, ops::Pad(root, x, {{0, 0}, {1, 1}, {1, 1}, {0, 1}}),
                              C(root, Wavy<float>({1, 1, 4, 2})), {1, 1, 1, 1}, "VALID");
  // Padded with ones.
  auto ones = ops::Conv2D(root, ops::PadV2(root, x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, 1.0f), f,
                          {1, 1, 1, 1}, "VALID");
  Ran ran;
  ExpectSameValues(root, {{x, Wavy<float>({1, 2, 2, 3})}}, {Output(channels), Output(ones)}, 1e-6,
                   &ran);
  EXPECT_THAT(Ops(ran), ::testing::Contains("Pad"));
  EXPECT_THAT(Ops(ran), ::testing::Contains("PadV2"));
}

TEST(GraphOptimizerTest, AFusedNodesErrorNamesTheNodesItReplaced) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto bias = ops::Placeholder(root, DT_FLOAT);
  auto conv = ops::Conv2D(root.WithOpName("conv"), x, C(root, Wavy<float>({1, 1, 2, 2})),
                          {1, 1, 1, 1}, "VALID");
  auto y = ops::Relu(root.WithOpName("relu"), ops::BiasAdd(root.WithOpName("bias"), conv, bias));
  ClientSession session(root);
  std::vector<Tensor> out;
  EXPECT_THAT(
      session.Run({{x, Wavy<float>({1, 2, 2, 2})}, {bias, Wavy<float>({3})}}, {y}, &out),
      StatusIs(absl::StatusCode::kInvalidArgument, "(_FusedConv2D, fused from conv, bias, relu)"));
}

TEST(GraphOptimizerTest, FusedKernelsRefuseWhatTheyDoNotCompute) {
  const std::string conv_attrs =
      "attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
      "attr { key: 'padding' value { s: 'VALID' } } ";
  const std::string inputs =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  const auto fused = [&](const std::string& ops, int num_args) {
    std::string node = absl::StrCat("node { name: 'f' op: '_FusedConv2D' input: 'x' input: 'x' ");
    for (int i = 0; i < num_args; ++i) absl::StrAppend(&node, "input: 'x' ");
    return absl::StrCat(inputs, node, conv_attrs, "attr { key: 'num_args' value { i: ", num_args,
                        " } } attr { key: 'fused_ops' value { list { ", ops, " } } } }");
  };
  for (const auto& [graph, message] : std::vector<std::pair<std::string, std::string>>{
           {fused("s: 'Elu'", 1), "fused_ops [Elu] is not supported"},
           {fused("s: 'BiasAdd' s: 'Relu'", 2), "takes 1 args, got num_args 2"},
           {fused("s: 'FusedBatchNorm'", 1), "takes 4 args, got num_args 1"},
       }) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(graph));
    std::vector<Tensor> out;
    EXPECT_THAT(s->Run({{"x", Wavy<float>({1, 1, 1, 1})}}, {"f"}, {}, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
  // _FusedBatchNormEx: Identity or Relu, no side inputs.
  const std::string bn_inputs = absl::StrCat(
      inputs,
      "node { name: 'v' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
  const auto batch_norm = [&](const std::string& mode, int side_inputs) {
    std::string node =
        "node { name: 'b' op: '_FusedBatchNormEx' input: 'x' input: 'v' "
        "input: 'v' input: 'v' input: 'v' ";
    for (int i = 0; i < side_inputs; ++i) absl::StrAppend(&node, "input: 'x' ");
    return absl::StrCat(bn_inputs, node,
                        "attr { key: 'T' value { type: DT_FLOAT } } "
                        "attr { key: 'U' value { type: DT_FLOAT } } "
                        "attr { key: 'activation_mode' value { s: '",
                        mode, "' } } attr { key: 'num_side_inputs' value { i: ", side_inputs,
                        " } } }");
  };
  for (const auto& [graph, message] : std::vector<std::pair<std::string, std::string>>{
           {batch_norm("Elu", 0), "activation_mode 'Elu' is not supported"},
           {batch_norm("Relu", 1), "num_side_inputs = 1 is not supported"},
       }) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(graph));
    std::vector<Tensor> out;
    EXPECT_THAT(
        s->Run({{"x", Wavy<float>({1, 1, 1, 1})}, {"v", Wavy<float>({1})}}, {"b"}, {}, &out),
        StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
}

}  // namespace
}  // namespace towerflow
