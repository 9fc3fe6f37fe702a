// The gradient engine, with TensorFlow's own gradients_test cases and
// numbers.
#include "ops/gradients.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

std::vector<Tensor> Fetch(const Scope& s, const std::vector<Output>& fetch,
                          const ClientSession::FeedType& feeds = {}) {
  ClientSession session(s);
  std::vector<Tensor> out;
  absl::Status st = session.Run(feeds, fetch, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

TEST(GradientsTest, DependentGradOutputs) {
  // x = u v, z = x y with dz = 5: dx = 5 * 4 = 20, dv = dx * u = 40.
  Scope s = Scope::NewRootScope();
  Output u = ops::Const(s, {{2}}), v = ops::Const(s, {{3}});
  Output x = ops::MatMul(s, u, v);
  Output y = ops::Const(s, {{4}});
  Output z = ops::MatMul(s, x, y);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {z}, {v, x}, {ops::Const(s, {{5}})}, &grads));
  std::vector<Tensor> out = Fetch(s, grads);
  EXPECT_THAT(out[0], TensorIs<int32_t>({1, 1}, {40}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({1, 1}, {20}));
}

TEST(GradientsTest, DependentOutputsAreSummed) {
  // y0 = x^2, y1 = y0^2, y2 = y1^2 at x = 3: d(y0 + y2)/dx = 6 + 8 x^7 = 17502.
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y0 = ops::Square(s, x);
  Output y1 = ops::Square(s, y0);
  Output y2 = ops::Square(s, y1);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {y0, y2}, {x}, &grads));
  EXPECT_THAT(Fetch(s, grads, {{x, {3.0f}}})[0], TensorIs<float>({1}, {17502.0f}));
}

TEST(GradientsTest, MultiOutputNodeDependentOutputs) {
  // y1 = y0^2, y2 = y0^2, y3 = y2^2: d(y0 + y1 + y3)/dx at 3 = 17610.
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y0 = ops::Square(s, x);
  Output y1 = ops::Square(s, y0);
  Output y2 = ops::Square(s, y0);
  Output y3 = ops::Square(s, y2);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {y0, y1, y3}, {x}, &grads));
  EXPECT_THAT(Fetch(s, grads, {{x, {3.0f}}})[0], TensorIs<float>({1}, {17610.0f}));
}

TEST(GradientsTest, UnreachableEdgesAreIgnored) {
  // m = x y, dm = [[0.5], [0.5]]: dy = x^T dm = [2.5, 3.5, 4.5]. z is in the
  // graph but off every path.
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Output y = ops::Const(s, {{1.0}, {2.0}, {3.0}});
  Output z = ops::Const(s, {{9.0, 10.0, 11.0}});
  Output m1 = ops::MatMul(s, x, y);
  Output m2 = ops::MatMul(s, y, z);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {m1}, {y}, {ops::Const(s, {{0.5}, {0.5}})}, &grads));
  EXPECT_THAT(Fetch(s, grads)[0], TensorNear<double>({3, 1}, {2.5, 3.5, 4.5}, 1e-12));

  // Both outputs: dy = x^T dm1 + dm2 z^T = [17.5, 24.7, 26.8].
  Output dm2 = ops::Const(s, {{0.5, 0.5, 0.5}, {0.6, 0.7, 0.8}, {0.6, 0.7, 0.9}});
  TW_ASSERT_OK(
      AddSymbolicGradients(s, {m1, m2}, {y}, {ops::Const(s, {{0.5}, {0.5}}), dm2}, &grads));
  EXPECT_THAT(Fetch(s, grads)[0], TensorNear<double>({3, 1}, {17.5, 24.7, 26.8}, 1e-12));
}

TEST(GradientsTest, UnreachableInputIsAnError) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Output y = ops::Const(s, {{1.0}, {2.0}, {3.0}});
  Output z = ops::Const(s.WithOpName("z"), {{9.0, 10.0, 11.0}});
  Output m1 = ops::MatMul(s, x, y);
  ops::MatMul(s, y, z);  // m2: uses z, but m1 does not
  std::vector<Output> grads;
  absl::Status st = AddSymbolicGradients(s, {m1}, {z}, {ops::Const(s, {{0.5}, {0.5}})}, &grads);
  EXPECT_EQ(st, absl::InvalidArgumentError("Cannot compute the partial derivative for node 'z' "
                                           "as it's unreachable from the output node(s)."));
  EXPECT_EQ(s.status(), st);  // sticky

  // An optimizer asks for NoGradient instead.
  Scope s2 = Scope::NewRootScope();
  Output a = ops::Const(s2, 1.0f), b = ops::Const(s2.WithOpName("b"), 2.0f);
  Output y2 = ops::Square(s2, a);
  GradientOptions options;
  options.allow_unreachable = true;
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Gradient> g,
                          ComputeSymbolicGradients(s2, {y2}, {a, b}, {}, options));
  EXPECT_FALSE(g[0].is_none());
  EXPECT_TRUE(g[1].is_none());
}

TEST(GradientsTest, OpWithoutGradientIsNotFound) {
  // LRNGrad has no gradient (nor has it in TF).
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y = ops::LRNGrad(s, x, x, ops::LRN(s, x));
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(s, {y}, {x}, &grads),
              StatusIs(absl::StatusCode::kNotFound, "No gradient defined for op: LRNGrad"));
}

TEST(GradientsTest, ProdGradientWithZeros) {
  // d prod / dx_i is the product of the others, also where x holds zeros
  // (dividing y by x would give NaN): columns [0, 3] and [2, 4], and the
  // whole matrix with a single zero.
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, {{0.f, 2.f}, {3.f, 4.f}});
  std::vector<Output> columns, all;
  TW_ASSERT_OK(AddSymbolicGradients(s, {ops::Prod(s, x, 0)}, {x}, &columns));
  TW_ASSERT_OK(AddSymbolicGradients(s, {ops::Prod(s, x, {0, 1})}, {x}, &all));
  std::vector<Tensor> out = Fetch(s, {columns[0], all[0]});
  EXPECT_THAT(out[0], TensorIs<float>({2, 2}, {3, 4, 0, 2}));
  EXPECT_THAT(out[1], TensorIs<float>({2, 2}, {24, 0, 0, 0}));
}

TEST(GradientsTest, MultipleNodeOutputGrads) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, MakeFilledTensorProto(1, TensorShape({3, 4, 2})));
  ops::Unpack unpack(s, x, 3);
  Output pack = ops::Pack(s, unpack.output);
  Output dx = ops::Const(s, {40, 41, 42, 43, 44, 45, 46, 47, 50, 51, 52, 53,
                             55, 55, 56, 57, 60, 61, 62, 63, 66, 66, 66, 67},
                         TensorShape({3, 4, 2}));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {pack}, unpack.output, {dx}, &grads));
  std::vector<Tensor> out = Fetch(s, grads);
  EXPECT_THAT(out[0], TensorIs<int32_t>({4, 2}, {40, 41, 42, 43, 44, 45, 46, 47}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({4, 2}, {50, 51, 52, 53, 55, 55, 56, 57}));
  EXPECT_THAT(out[2], TensorIs<int32_t>({4, 2}, {60, 61, 62, 63, 66, 66, 66, 67}));
}

// Three Identity edges out of z = x y (x = y = I), some through StopGradient,
// seeded with g0, g1, g2: dz is the sum of the unstopped seeds.
class StopGradientMatrixTest : public ::testing::TestWithParam<std::vector<bool>> {};

TEST_P(StopGradientMatrixTest, SumsUnstoppedEdges) {
  const std::vector<bool> stop = GetParam();
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, {{1, 0}, {0, 1}}), y = ops::Const(s, {{1, 0}, {0, 1}});
  Output z = ops::MatMul(s, x, y);
  std::vector<Output> outs;
  for (int i = 0; i < 3; ++i) {
    Output id = ops::Identity(s, z);
    outs.push_back(stop[i] ? Output(ops::StopGradient(s, id)) : id);
  }
  std::vector<Output> seeds = {ops::Const(s, {{1, 2}, {3, 4}}), ops::Const(s, {{5, 6}, {7, 8}}),
                               ops::Const(s, {{9, 10}, {11, 12}})};
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, outs, {z}, seeds, &grads));
  std::vector<int32_t> expected(4, 0);
  const int32_t seed[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
  bool any = false;
  for (int i = 0; i < 3; ++i) {
    if (stop[i]) continue;
    any = true;
    for (int k = 0; k < 4; ++k) expected[k] += seed[i][k];
  }
  if (!any) {
    EXPECT_EQ(grads[0], NoGradient());
    return;
  }
  EXPECT_THAT(Fetch(s, grads)[0], TensorIs<int32_t>({2, 2}, expected));
}

INSTANTIATE_TEST_SUITE_P(
    AllEightCombinations, StopGradientMatrixTest,
    ::testing::Values(std::vector<bool>{false, false, false}, std::vector<bool>{true, false, false},
                      std::vector<bool>{false, true, false}, std::vector<bool>{false, false, true},
                      std::vector<bool>{true, true, false}, std::vector<bool>{false, true, true},
                      std::vector<bool>{true, false, true}, std::vector<bool>{true, true, true}));

TEST(GradientsTest, StoppedOutputsOfAMultiOutputOpGetZeros) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Const(s, MakeFilledTensorProto(1, TensorShape({3, 2, 4})));
  ops::Unpack y(s, x, 3);
  std::vector<Output> outs = {y.output[0], ops::StopGradient(s, y.output[1]), y.output[2]};
  std::vector<Output> seeds = {
      ops::Const(s, {1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({2, 4})),
      ops::Const(s, {9, 10, 11, 12, 13, 14, 15, 16}, TensorShape({2, 4})),
      ops::Const(s, {17, 18, 19, 20, 21, 22, 23, 24}, TensorShape({2, 4}))};
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, outs, {x}, seeds, &grads));
  EXPECT_THAT(Fetch(s, grads)[0],
              TensorIs<int32_t>({3, 2, 4}, {1, 2, 3, 4, 5,  6,  7,  8,  0,  0,  0,  0,
                                            0, 0, 0, 0, 17, 18, 19, 20, 21, 22, 23, 24}));
}

TEST(GradientsTest, PathsAreSummedWithAddNUnderGradientsScope) {
  // y = x * x + x: dy/dx = 2x + 1 = 7 at x = 3, from two summed paths.
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output y = ops::Add(s, ops::Mul(s, x, x), x);
  // Off the path from x: never differentiated.
  Output unrelated = ops::Mul(s.WithOpName("unrelated"), ops::Const(s, 2.0f), ops::Const(s, 3.0f));
  Output y2 = ops::Add(s, y, unrelated);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {y2}, {x}, &grads));
  EXPECT_THAT(Fetch(s, grads, {{x, {3.0f}}})[0], TensorIs<float>({1}, {7.0f}));
  EXPECT_EQ(grads[0].node()->type_string(), "AddN");
  EXPECT_EQ(grads[0].node()->name(), "gradients/x_grad/AddN");
  for (Node* n : s.graph()->nodes()) {
    EXPECT_THAT(n->name(), ::testing::Not(HasSubstr("unrelated_grad")));
  }
}

TEST(GradientsTest, BackwardOpsAreColocatedWithTheirForwardOp) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y = ops::Tanh(s.WithDevice("/cpu:1").WithOpName("tower_1/Tanh"), x);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {y}, {x}, &grads));
  const Node* g = grads[0].node();
  EXPECT_EQ(g->name(), "gradients/tower_1/Tanh_grad/TanhGrad");
  EXPECT_EQ(g->requested_device(), "/device:CPU:1");
  const AttrValue* cls = g->FindAttr("_class");
  ASSERT_NE(cls, nullptr);
  EXPECT_EQ(cls->list().s(0), "loc:@tower_1/Tanh");
}

TEST(GradientsTest, ResourceGatherGivesIndexedSlices) {
  Scope s = Scope::NewRootScope();
  Variable emb =
      GetVariable(s, "emb", TensorShape({4, 2}), DT_FLOAT,
                  initializers::Constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}, {7.f, 8.f}}));
  Output rows = ops::ResourceGather(s, emb.handle(), {2, 0, 2}, DT_FLOAT);
  Output loss = ops::Sum(s, ops::Mul(s, rows, {{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}}), {0, 1});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Gradient> g,
                          ComputeSymbolicGradients(s, {loss}, {emb.handle()}));
  ASSERT_TRUE(g[0].is_sparse());
  std::vector<Output> dense;
  TW_ASSERT_OK(AddSymbolicGradients(s, {loss}, {emb.handle()}, &dense));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run(
      {g[0].slices().values, g[0].slices().indices, g[0].slices().dense_shape, dense[0]}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {1, 1, 2, 2, 3, 3}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({3}, {2, 0, 2}));
  EXPECT_THAT(out[2], TensorIs<int32_t>({2}, {4, 2}));
  // Row 2 is gathered twice: 1 + 3.
  EXPECT_THAT(out[3], TensorIs<float>({4, 2}, {2, 2, 0, 0, 4, 4, 0, 0}));
}

// TF's _ResourceGatherNdGrad: the dense scatter of g into the variable's
// shape, rows gathered twice adding up.
TEST(GradientsTest, ResourceGatherNdScattersIntoTheVariablesShape) {
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w_nd", TensorShape({2, 3}), DT_FLOAT,
                           initializers::Constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));
  Output picked = ops::ResourceGatherNd(s, w.handle(), {{1, 2}, {0, 0}, {1, 2}}, DT_FLOAT);
  Output loss = ops::Sum(s, ops::Mul(s, picked, {1.f, 2.f, 3.f}), 0);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {loss}, {w.handle()}, &grads));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({picked, grads[0]}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({3}, {6, 1, 6}));
  EXPECT_THAT(out[1], TensorIs<float>({2, 3}, {2, 0, 0, 0, 0, 4}));
}

TEST(GradientsTest, VariableReadTwiceSumsBothReads) {
  // loss = sum(w * w) with two reads: dloss/dw = 2 w.
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s, "w", TensorShape({2}), DT_FLOAT, initializers::Constant({1.f, -2.f}));
  Output loss = ops::Sum(s, ops::Mul(s, w.value(), w.value()), 0);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {loss}, {w.handle()}, &grads));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run(grads, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {2.f, -4.f}));
}

TEST(GradientsTest, BadArgumentsAreInvalidArgument) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y = ops::Square(s, x);
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(s, {y}, {x}, {}, &grads),
              StatusIs(absl::StatusCode::kInvalidArgument, "Got 0 grad_ys for 1 ys"));
  Scope s2 = Scope::NewRootScope();
  Output x2 = ops::Placeholder(s2, DT_FLOAT);
  Output y2 = ops::Square(s2, x2);
  EXPECT_THAT(AddSymbolicGradients(s2, {y2}, {x2}, {ops::Const(s2, 1)}, &grads),
              StatusIs(absl::StatusCode::kInvalidArgument, "grad_ys[0]"));
  Scope s3 = Scope::NewRootScope();
  EXPECT_THAT(AddSymbolicGradients(s3, {Output()}, {x}, &grads),
              StatusIs(absl::StatusCode::kInvalidArgument, "ys[0] is not a valid output"));
}

TEST(GradientsTest, PreventGradientSaysWhy) {
  Scope s = Scope::NewRootScope();
  Output x = ops::Placeholder(s, DT_FLOAT);
  Output y = ops::PreventGradient(s, x, ops::PreventGradient::Message("no second order"));
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(s, {y}, {x}, &grads),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Gradient explicitly disabled. Reason: no second order"));
}

}  // namespace
}  // namespace towerflow
