// Gradients through while loops (ops/while_gradients.h) and the stack ops
// they keep forward values on.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gradients.h"
#include "ops/initializers.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

using Outputs = std::vector<Output>;
using Result = absl::StatusOr<Outputs>;

// (i, v) -> (i + 1, v * w) while i < n, from (0, x): v = x * w^n.
Result PowerLoop(const Scope& s, Output x, Output w, Output n, int parallel_iterations = 10) {
  ops::WhileLoopOptions options;
  options.parallel_iterations = parallel_iterations;
  return ops::WhileLoop(
      s, {ops::Const(s, 0), x},
      [n](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
        return ops::Less(c, v[0], n);
      },
      [w](const Scope& b, const Outputs& v) -> Result {
        return Outputs{ops::AddV2(b, v[0], 1), ops::Mul(b, v[1], w)};
      },
      options);
}

double ScalarOf(const Tensor& t) { return t.scalar<double>()(); }

// The condition of a loop whose variable 0 counts up to `n`.
ops::LoopCondFn CountsTo(int n) {
  return [n](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
    return ops::Less(c, v[0], n);
  };
}

TEST(WhileLoopGradientTest, MultipliesThroughEveryIteration) {
  // y = x * w^n: dy/dx = w^n, dy/dw = n x w^(n-1). At x = 1.5, w = 2, n = 3:
  // y = 12, dy/dx = 8, dy/dw = 18. With n = 0 the loop never iterates:
  // y = x, dy/dx = 1, dy/dw = 0.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, PowerLoop(root, x, w, n));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  for (int run = 0; run < 2; ++run) {  // each step's stacks are its own
    TW_ASSERT_OK(
        session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}, {n, Scalar<int32_t>(3)}},
                    {r[1], grads[0], grads[1]}, &out));
    EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 12);
    EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 8);
    EXPECT_DOUBLE_EQ(ScalarOf(out[2]), 18);
  }
  TW_ASSERT_OK(
      session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}, {n, Scalar<int32_t>(0)}},
                  {r[1], grads[0], grads[1]}, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 1.5);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 1);
  EXPECT_DOUBLE_EQ(ScalarOf(out[2]), 0);
}

// A body whose next values all come from one node (an IdentityN, as a
// lowered While's body): the counter's path through that node back into the
// loop is the next iteration's, not this one's, so x w^3 still differentiates.
TEST(WhileLoopGradientTest, NextValuesFromOneNode) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r,
      ops::WhileLoop(
          root, {ops::Const(root, 0), x}, CountsTo(3),
          [w](const Scope& b, const Outputs& v) -> Result {
            return ops::IdentityN(b, {ops::AddV2(b, v[0], 1), ops::Mul(b, v[1], w)}).output;
          }));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  // At x = 1.5, w = 2: dy/dx = w^3 = 8, dy/dw = 3 x w^2 = 18.
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}}, grads, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 8);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 18);
}

TEST(WhileLoopGradientTest, TwoGradientsOfOneLoopRunTogether) {
  // Each backward loop pops stacks of its own: the second gradient (an
  // optimizer's, say, beside a user's) neither steals the first's values nor
  // differentiates the first's backward loop.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, PowerLoop(root, x, w, ops::Const(root, 3)));
  std::vector<Output> dx, dw;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x}, &dx));
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {w}, &dw));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(
      session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}}, {dx[0], dw[0]}, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 8);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 18);
}

TEST(WhileLoopGradientTest, MatchesFiniteDifferences) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, PowerLoop(root, x, w, ops::Const(root, 4)));
  TW_ASSERT_OK_AND_ASSIGN(
      double error, ComputeGradientError<double>(
                        root, {x, w}, {Scalar<double>(1.5), Scalar<double>(0.9)}, {r[1]}, 1e-5));
  EXPECT_LT(error, 1e-8);
}

// An Elman RNN over the 20 rows of X: h <- tanh(h W + x_t U), from h0.
struct Rnn {
  Output x, w, u, h0;
  Output h;  // after the 20 steps
};

absl::StatusOr<Rnn> BuildRnn(const Scope& root, int parallel_iterations) {
  Rnn rnn;
  rnn.x = ops::Placeholder(root.WithOpName("X"), DT_DOUBLE, ops::Placeholder::Shape({20, 3}));
  rnn.w = ops::Placeholder(root.WithOpName("W"), DT_DOUBLE, ops::Placeholder::Shape({4, 4}));
  rnn.u = ops::Placeholder(root.WithOpName("U"), DT_DOUBLE, ops::Placeholder::Shape({3, 4}));
  rnn.h0 = ops::Placeholder(root.WithOpName("h0"), DT_DOUBLE, ops::Placeholder::Shape({1, 4}));
  ops::WhileLoopOptions options;
  options.parallel_iterations = parallel_iterations;
  options.name = "rnn";
  TW_ASSIGN_OR_RETURN(
      Outputs out, ops::WhileLoop(
                       root, {ops::Const(root, 0), rnn.h0}, CountsTo(20),
                       [&rnn](const Scope& b, const Outputs& v) -> Result {
                         const Output x_t = ops::ExpandDims(b, ops::GatherV2(b, rnn.x, v[0], 0), 0);
                         const Output h = ops::Tanh(b, ops::AddV2(b, ops::MatMul(b, v[1], rnn.w),
                                                                  ops::MatMul(b, x_t, rnn.u)));
                         return Outputs{ops::AddV2(b, v[0], 1), h};
                       },
                       options));
  rnn.h = out[1];
  return rnn;
}

std::vector<Tensor> RnnValues() {
  std::vector<double> x;
  for (int k = 0; k < 60; ++k) x.push_back(0.5 * std::sin(0.7 * k));
  return {Literal<double>({20, 3}, x),
          Literal<double>({4, 4}, {0.30, -0.20, 0.10, 0.05,   //
                                   -0.15, 0.25, -0.05, 0.20,  //
                                   0.10, 0.05, 0.35, -0.25,   //
                                   -0.30, 0.15, 0.05, 0.10}),
          Literal<double>({3, 4}, {0.4, -0.3, 0.2, 0.1,   //
                                   -0.2, 0.5, 0.3, -0.4,  //
                                   0.1, 0.2, -0.5, 0.3}),
          Literal<double>({1, 4}, {0.1, -0.2, 0.3, -0.4})};
}

TEST(WhileLoopGradientTest, RnnOverTwentyStepsMatchesFiniteDifferences) {
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK_AND_ASSIGN(Rnn rnn, BuildRnn(root, 10));
  TW_ASSERT_OK_AND_ASSIGN(
      double error, ComputeGradientError<double>(root, {rnn.x, rnn.w, rnn.u, rnn.h0}, RnnValues(),
                                                 {rnn.h}, 1e-5));
  EXPECT_LT(error, 1e-8);
}

TEST(WhileLoopGradientTest, ParallelIterationsOneAndTenGiveTheSameGradients) {
  std::vector<std::vector<Tensor>> results;
  for (int parallel : {1, 10}) {
    Scope root = Scope::NewRootScope();
    TW_ASSERT_OK_AND_ASSIGN(Rnn rnn, BuildRnn(root, parallel));
    std::vector<Output> grads;
    TW_ASSERT_OK(AddSymbolicGradients(root, {ops::Sum(root, rnn.h, {0, 1})},
                                      {rnn.x, rnn.w, rnn.u, rnn.h0}, &grads));
    const std::vector<Tensor> values = RnnValues();
    ClientSession session(root);
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run(
        {{rnn.x, values[0]}, {rnn.w, values[1]}, {rnn.u, values[2]}, {rnn.h0, values[3]}}, grads,
        &out));
    results.push_back(out);
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    ASSERT_EQ(results[0][i].shape(), results[1][i].shape());
    for (int64_t k = 0; k < results[0][i].NumElements(); ++k) {
      EXPECT_EQ(results[0][i].data<double>()[k], results[1][i].data<double>()[k])
          << "gradient " << i << " element " << k;
    }
  }
}

TEST(WhileLoopGradientTest, VariableReadInEachIteration) {
  // s = x * v summed over 4 iterations: ds/dx = 4v = 10, ds/dv = 4x = 6 at
  // x = 1.5, v = 2.5.
  Scope root = Scope::NewRootScope();
  const Output v =
      GetVariable(root, "v", TensorShape({}), DT_FLOAT, initializers::Constant(2.5f)).handle();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::WhileLoopOptions options;  // the variable's reads have no static shape
  options.shape_invariants = {PartialTensorShape({}), PartialTensorShape()};
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r,
      ops::WhileLoop(
          root, {ops::Const(root, 0), ops::Const(root, 0.0f)}, CountsTo(4),
          [&](const Scope& b, const Outputs& s) -> Result {
            return Outputs{
                ops::AddV2(b, s[0], 1),
                ops::AddV2(b, s[1], ops::Mul(b, x, ops::ReadVariableOp(b, v, DT_FLOAT)))};
          },
          options));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x, v}, &grads));
  ClientSession session(root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(1.5f)}}, {r[1], grads[0], grads[1]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 15);
  EXPECT_FLOAT_EQ(out[1].scalar<float>()(), 10);
  EXPECT_FLOAT_EQ(out[2].scalar<float>()(), 6);
}

TEST(WhileLoopGradientTest, NestedLoops) {
  // Three outer iterations, each multiplying v by w twice in an inner loop
  // that starts from the outer iteration's v: y = x w^6. At x = 1.5, w = 1.1:
  // dy/dx = w^6 = 1.771561, dy/dw = 6 x w^5 = 14.494590.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(root, {ops::Const(root, 0), x}, CountsTo(3),
                                [&](const Scope& b, const Outputs& v) -> Result {
                                  TW_ASSIGN_OR_RETURN(Outputs inner,
                                                      PowerLoop(b, v[1], w, ops::Const(b, 2)));
                                  return Outputs{ops::AddV2(b, v[0], 1), inner[1]};
                                }));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(1.1)}}, grads, &out));
  EXPECT_NEAR(ScalarOf(out[0]), 1.771561, 1e-12);
  EXPECT_NEAR(ScalarOf(out[1]), 14.4945900, 1e-9);
  TW_ASSERT_OK_AND_ASSIGN(
      double error, ComputeGradientError<double>(
                        root, {x, w}, {Scalar<double>(1.5), Scalar<double>(1.1)}, {r[1]}, 1e-5));
  EXPECT_LT(error, 1e-8);
}

TEST(WhileLoopGradientTest, LoopsInTwoTowers) {
  // Tower t computes x * w^(t + 2) on its own device; the gradient of the
  // sum is w^2 + w^3 = 12 for x and 2xw + 3xw^2 = 24 for w at x = 1.5, w = 2.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  Outputs ys;
  for (int t = 0; t < 2; ++t) {
    const Scope tower =
        root.NewSubScope(absl::StrCat("tower_", t)).WithDevice(absl::StrCat("/cpu:", t));
    TW_ASSERT_OK_AND_ASSIGN(Outputs r, PowerLoop(tower, x, w, ops::Const(tower, t + 2)));
    ys.push_back(r[1]);
  }
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {ops::AddV2(root, ys[0], ys[1])}, {x, w}, &grads));
  SessionOptions options;
  options.device_count["CPU"] = 2;
  ClientSession session(root, options);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}}, grads, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 12);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 24);
}

TEST(WhileLoopGradientTest, ImportedLoop) {
  // The loop of MultipliesThroughEveryIteration, through a GraphDef: the
  // gradient reads the loop's structure from the graph, not from the DSL.
  GraphDef def;
  {
    Scope built = Scope::NewRootScope();
    auto x = ops::Placeholder(built.WithOpName("x"), DT_DOUBLE);
    auto w = ops::Placeholder(built.WithOpName("w"), DT_DOUBLE);
    TW_ASSERT_OK_AND_ASSIGN(Outputs r, PowerLoop(built, x, w, ops::Const(built, 3)));
    ops::Identity(built.WithOpName("y"), r[1]);
    TW_ASSERT_OK(built.status());
    built.graph()->ToGraphDef(&def);
  }
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK(ImportGraphDef(def, root.graph()));
  const Output x(root.graph()->FindNode("x"), 0);
  const Output w(root.graph()->FindNode("w"), 0);
  const Output y(root.graph()->FindNode("y"), 0);
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {y}, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2)}}, grads, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 8);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 18);
}

TEST(WhileLoopGradientTest, CondInTheBody) {
  // v <- (i < 2 ? v + w : v) * 3 over 4 iterations, from x: y = 81x + 108w
  // (w added in iterations 0 and 1, then tripled 4 and 3 times).
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE, ops::Placeholder::Shape({}));
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE, ops::Placeholder::Shape({}));
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(root, {ops::Const(root, 0), x}, CountsTo(4),
                                [&](const Scope& b, const Outputs& v) -> Result {
                                  TW_ASSIGN_OR_RETURN(
                                      Outputs y,
                                      ops::Cond(
                                          b, ops::Less(b, v[0], 2),
                                          [&](const Scope& t) -> Result {
                                            return Outputs{ops::AddV2(t, v[1], w)};
                                          },
                                          [&](const Scope&) -> Result { return Outputs{v[1]}; }));
                                  return Outputs{ops::AddV2(b, v[0], 1), ops::Mul(b, y[0], 3.0)};
                                }));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {r[1]}, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1)}, {w, Scalar<double>(2)}}, grads, &out));
  EXPECT_DOUBLE_EQ(ScalarOf(out[0]), 81);
  EXPECT_DOUBLE_EQ(ScalarOf(out[1]), 108);
}

TEST(WhileLoopGradientTest, CondInTheBodyNeedingItsBranchesValues) {
  // v <- i is even ? v * v * w : sin(v) + w, over 5 iterations: the
  // gradients need each branch's values, pushed and popped only in the
  // iterations that took it.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE, ops::Placeholder::Shape({}));
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE, ops::Placeholder::Shape({}));
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(root, {ops::Const(root, 0), x}, CountsTo(5),
                                [&](const Scope& b, const Outputs& v) -> Result {
                                  TW_ASSIGN_OR_RETURN(
                                      Outputs y,
                                      ops::Cond(
                                          b, ops::Equal(b, ops::FloorMod(b, v[0], 2), 0),
                                          [&](const Scope& t) -> Result {
                                            return Outputs{ops::Mul(t, ops::Mul(t, v[1], v[1]), w)};
                                          },
                                          [&](const Scope& f) -> Result {
                                            return Outputs{ops::AddV2(f, ops::Sin(f, v[1]), w)};
                                          }));
                                  return Outputs{ops::AddV2(b, v[0], 1), y[0]};
                                }));
  TW_ASSERT_OK_AND_ASSIGN(
      double error, ComputeGradientError<double>(
                        root, {x, w}, {Scalar<double>(0.7), Scalar<double>(0.9)}, {r[1]}, 1e-5));
  EXPECT_LT(error, 1e-6);  // gradients near 10: the differences' truncation
}

TEST(WhileLoopGradientTest, ATensorOfOneIterationIsRefusedAsAY) {
  Scope root = Scope::NewRootScope();
  auto z = ops::Placeholder(root.WithOpName("z"), DT_FLOAT);
  Output inside;
  TW_ASSERT_OK_AND_ASSIGN(Outputs r,
                          ops::WhileLoop(root, {ops::Const(root, 0), z}, CountsTo(3),
                                         [&](const Scope& b, const Outputs& v) -> Result {
                                           inside = ops::Mul(b, v[1], 2.0f);
                                           return Outputs{ops::AddV2(b, v[0], 1), inside};
                                         }));
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(root, {inside}, {z}, &grads),
              StatusIs(absl::StatusCode::kInvalidArgument, "is inside the while loop"));
}

// ---- The stack ops ----

TEST(StackTest, PopsInReverseOrderEveryStep) {
  Scope root = Scope::NewRootScope();
  const ops::StackV2 stack(root, ops::Const(root, -1), DT_FLOAT);
  const ops::StackPushV2 a(root, stack.handle, ops::Const(root, 1.0f));
  const ops::StackPushV2 b(root.WithControlDependencies(a.output), stack.handle,
                           ops::Const(root, 2.0f));
  const ops::StackPopV2 first(root.WithControlDependencies(b.output), stack.handle, DT_FLOAT);
  const ops::StackPopV2 second(root.WithControlDependencies(first.elem), stack.handle, DT_FLOAT);
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> out;
  for (int run = 0; run < 2; ++run) {  // a new stack each step
    TW_ASSERT_OK(session.Run({first.elem, second.elem, b.output}, &out));
    EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 2);
    EXPECT_FLOAT_EQ(out[1].scalar<float>()(), 1);
    EXPECT_FLOAT_EQ(out[2].scalar<float>()(), 2);  // a push forwards its value
  }
}

TEST(StackTest, StacksOfOneNameAreStillTwo) {
  Scope root = Scope::NewRootScope();
  const auto name = ops::StackV2::StackName("same");
  const ops::StackV2 one(root, ops::Const(root, -1), DT_FLOAT, name);
  const ops::StackV2 two(root, ops::Const(root, -1), DT_FLOAT, name);
  const ops::StackPushV2 a(root, one.handle, ops::Const(root, 1.0f));
  const ops::StackPushV2 b(root, two.handle, ops::Const(root, 2.0f));
  const ops::StackPopV2 from_one(root.WithControlDependencies({a.operation, b.operation}),
                                 one.handle, DT_FLOAT);
  const ops::StackPopV2 from_two(root.WithControlDependencies({a.operation, b.operation}),
                                 two.handle, DT_FLOAT);
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({from_one.elem, from_two.elem}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 1);
  EXPECT_FLOAT_EQ(out[1].scalar<float>()(), 2);
}

TEST(StackTest, BadUseIsAClearError) {
  {
    Scope root = Scope::NewRootScope();
    const ops::StackV2 stack(root, ops::Const(root, -1), DT_FLOAT, ops::StackV2::StackName("s"));
    const ops::StackPopV2 pop(root, stack.handle, DT_FLOAT);
    ClientSession session(root);
    std::vector<Tensor> out;
    EXPECT_THAT(session.Run({pop.elem}, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, "is empty"));
  }
  {
    Scope root = Scope::NewRootScope();
    const ops::StackV2 stack(root, ops::Const(root, 1), DT_FLOAT, ops::StackV2::StackName("s"));
    const ops::StackPushV2 a(root, stack.handle, ops::Const(root, 1.0f));
    const ops::StackPushV2 b(root.WithControlDependencies(a.output), stack.handle,
                             ops::Const(root, 2.0f));
    ClientSession session(root);
    std::vector<Tensor> out;
    EXPECT_THAT(session.Run({b.output}, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, "overflowed its max_size (1)"));
  }
  {
    Scope root = Scope::NewRootScope();
    const ops::StackV2 stack(root, ops::Const(root, -1), DT_FLOAT, ops::StackV2::StackName("s"));
    const ops::StackPushV2 a(root, stack.handle, ops::Const(root, 1.0f));
    const ops::StackPopV2 pop(root.WithControlDependencies(a.output), stack.handle, DT_INT32);
    const ops::StackCloseV2 close(root.WithControlDependencies(a.output), stack.handle);
    const ops::StackPushV2 after(root.WithControlDependencies({close.operation}), stack.handle,
                                 ops::Const(root, 2.0f));
    ClientSession session(root);
    std::vector<Tensor> out;
    EXPECT_THAT(session.Run({pop.elem}, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, "holds float, not int32"));
    EXPECT_THAT(session.Run({after.output}, &out),
                StatusIs(absl::StatusCode::kInvalidArgument, "has already been closed"));
  }
}

}  // namespace
}  // namespace towerflow
