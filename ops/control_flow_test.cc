#include "ops/control_flow.h"

#include "core/proto_io.h"
#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/functional_ops.h"
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

using Outputs = std::vector<Output>;
using Result = absl::StatusOr<Outputs>;

// while i <= n: (i, sum) = (i + 1, sum + i), from (1, 0).
Result SumLoop(const Scope& s, Output n, ops::WhileLoopOptions options = {}) {
  return ops::WhileLoop(
      s, {ops::Const(s, 1), ops::Const(s, 0)},
      [n](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
        return ops::LessEqual(c, v[0], n);
      },
      [](const Scope& b, const Outputs& v) -> Result {
        return Outputs{ops::AddV2(b, v[0], 1), ops::AddV2(b, v[1], v[0])};
      },
      options);
}

TEST(WhileLoopTest, SumsOneToTen) {
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, SumLoop(root, ops::Const(root, 10)));
  EXPECT_EQ(r[0].node()->type_string(), "Exit");
  EXPECT_EQ(r[0].node()->name(), "while/Exit");
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({r[1], r[0]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 55);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 11);
}

TEST(WhileLoopTest, ParallelIterationsOneAndTenAgree) {
  for (int parallel : {1, 10}) {
    Scope root = Scope::NewRootScope();
    ops::WhileLoopOptions options;
    options.parallel_iterations = parallel;
    TW_ASSERT_OK_AND_ASSIGN(Outputs r, SumLoop(root, ops::Const(root, 100), options));
    ClientSession session(root);
    std::vector<Tensor> out;
    TW_ASSERT_OK(session.Run({r[1]}, &out));
    EXPECT_EQ(out[0].scalar<int32_t>()(), 5050) << "parallel_iterations " << parallel;
  }
}

TEST(WhileLoopTest, CapturedTensorsAreLoopInvariants) {
  // x (fed) and a Const made outside are used in cond and body: x * 3 added
  // while i < limit.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT,
                            ops::Placeholder::Shape(PartialTensorShape::Scalar()));
  auto limit = ops::Const(root, 4);
  auto three = ops::Const(root, 3.0f);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r,
      ops::WhileLoop(
          root, {ops::Const(root, 0), ops::Const(root, 0.0f)},
          [&](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
            return ops::Less(c, v[0], limit);
          },
          [&](const Scope& b, const Outputs& v) -> Result {
            return Outputs{ops::AddV2(b, v[0], 1), ops::AddV2(b, v[1], ops::Mul(b, x, three))};
          }));
  int constant_enters = 0;
  for (const Node* n : root.graph()->nodes()) {
    bool is_constant = false;
    if (n->IsOp("Enter") && n->GetAttr("is_constant", &is_constant).ok() && is_constant) {
      ++constant_enters;
    }
  }
  EXPECT_EQ(constant_enters, 3);  // limit, x, three
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(1.5f)}}, {r[1]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 4 * 4.5f);
}

TEST(WhileLoopTest, NestedLoops) {
  // For i = 1..4, the inner loop sums 1..i: 1 + 3 + 6 + 10 = 20.
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(
                     root, {ops::Const(root, 1), ops::Const(root, 0)},
                     [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                       return ops::LessEqual(c, v[0], 4);
                     },
                     [](const Scope& b, const Outputs& v) -> Result {
                       TW_ASSIGN_OR_RETURN(Outputs inner, SumLoop(b, v[0]));
                       return Outputs{ops::AddV2(b, v[0], 1), ops::AddV2(b, v[1], inner[1])};
                     }));
  EXPECT_NE(root.graph()->FindNode("while/while/Exit"), nullptr);
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({r[1]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 20);
}

TEST(WhileLoopTest, ReadsAVariableInEachIteration) {
  Scope root = Scope::NewRootScope();
  const Output v =
      GetVariable(root, "v", TensorShape({}), DT_FLOAT, initializers::Constant(2.5f)).handle();
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(
                     root, {ops::Const(root, 0), ops::Const(root, 0.0f)},
                     [](const Scope& c, const Outputs& x) -> absl::StatusOr<Output> {
                       return ops::Less(c, x[0], 4);
                     },
                     [&](const Scope& b, const Outputs& x) -> Result {
                       return Outputs{ops::AddV2(b, x[0], 1),
                                      ops::AddV2(b, x[1], ops::ReadVariableOp(b, v, DT_FLOAT))};
                     }));
  ClientSession session(root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({r[1]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 10.0f);
}

TEST(WhileLoopTest, CondInsideTheBody) {
  // sum of i for i = 1..10 where i < 5: 1 + 2 + 3 + 4 = 10.
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs r, ops::WhileLoop(
                     root, {ops::Const(root, 1), ops::Const(root, 0)},
                     [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                       return ops::LessEqual(c, v[0], 10);
                     },
                     [](const Scope& b, const Outputs& v) -> Result {
                       TW_ASSIGN_OR_RETURN(
                           Outputs sum, ops::Cond(
                                            b, ops::Less(b, v[0], 5),
                                            [&](const Scope& t) -> Result {
                                              return Outputs{ops::AddV2(t, v[1], v[0])};
                                            },
                                            [&](const Scope&) -> Result { return Outputs{v[1]}; }));
                       return Outputs{ops::AddV2(b, v[0], 1), sum[0]};
                     }));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({r[1]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 10);
}

TEST(WhileLoopTest, LoopsInTwoTowersHaveTheirOwnFrames) {
  Scope root = Scope::NewRootScope();
  Outputs sums;
  for (int t = 0; t < 2; ++t) {
    Scope tower = root.NewSubScope(absl::StrCat("tower_", t)).WithDevice(absl::StrCat("/cpu:", t));
    TW_ASSERT_OK_AND_ASSIGN(Outputs r, SumLoop(tower, ops::Const(tower, 10 * (t + 1))));
    sums.push_back(r[1]);
  }
  std::string frame;
  TW_ASSERT_OK(root.graph()->FindNode("tower_1/while/Enter")->GetAttr("frame_name", &frame));
  EXPECT_EQ(frame, "tower_1/while/while_context");
  SessionOptions options;
  options.device_count["CPU"] = 2;
  ClientSession session(root, options);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({sums[0], sums[1]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 55);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 210);
}

TEST(WhileLoopTest, ShapeInvariants) {
  // x doubles in length each iteration: [1] -> [8] after three.
  const auto grow = [](const Scope& root, ops::WhileLoopOptions options) {
    return ops::WhileLoop(
        root, {ops::Const(root, 0), ops::Const(root, {7})},
        [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
          return ops::Less(c, v[0], 3);
        },
        [](const Scope& b, const Outputs& v) -> Result {
          return Outputs{ops::AddV2(b, v[0], 1), ops::ConcatV2(b, {v[1], v[1]}, 0)};
        },
        options);
  };
  Scope bad = Scope::NewRootScope();
  EXPECT_THAT(grow(bad, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "enters the loop with shape [1], but has shape [2] after one iteration"));
  Scope root = Scope::NewRootScope();
  ops::WhileLoopOptions options;
  options.shape_invariants = {PartialTensorShape({}), PartialTensorShape({-1})};
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, grow(root, options));
  EXPECT_EQ(r[1].node()->output_shape(0).DebugString(), "[?]");
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({r[1]}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({8}, {7, 7, 7, 7, 7, 7, 7, 7}));
}

// A loop whose condition never turns false ends at the step's deadline,
// and the session goes on serving other steps.
TEST(WhileLoopTest, ALoopThatNeverEndsEndsAtTheDeadline) {
  Scope root = Scope::NewRootScope();
  TW_ASSERT_OK_AND_ASSIGN(Outputs forever,
                          ops::WhileLoop(
                              root, {ops::Const(root, 0)},
                              [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                                return ops::Less(c, v[0], 10);
                              },
                              [](const Scope& b, const Outputs& v) -> Result {
                                return Outputs{ops::Identity(b, v[0])};
                              }));
  TW_ASSERT_OK_AND_ASSIGN(Outputs sum, SumLoop(root.NewSubScope("sum"), ops::Const(root, 10)));
  ClientSession session(root);
  RunOptions run_options;
  run_options.timeout_in_ms = 100;
  std::vector<Tensor> out;
  EXPECT_THAT(session.Run(run_options, {}, {forever[0]}, {}, &out, nullptr),
              StatusIs(absl::StatusCode::kDeadlineExceeded, "timeout of 100 ms"));
  TW_ASSERT_OK(session.Run({sum[1]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>()(), 55);
  // The session's default deadline, when the run gives none.
  SessionOptions options;
  options.operation_timeout_in_ms = 50;
  ClientSession bounded(root, options);
  EXPECT_THAT(bounded.Run({forever[0]}, &out),
              StatusIs(absl::StatusCode::kDeadlineExceeded, "timeout of 50 ms"));
}

TEST(WhileLoopTest, BadLoopsAreRefused) {
  Scope root = Scope::NewRootScope();
  const auto cond = [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
    return ops::Less(c, v[0], 3);
  };
  EXPECT_THAT(ops::WhileLoop(root, {ops::Const(root, 0)}, cond,
                             [](const Scope& b, const Outputs& v) -> Result {
                               return Outputs{ops::Cast(b, v[0], DT_FLOAT)};
                             })
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "the body returns [float]"));
  EXPECT_THAT(ops::WhileLoop(
                  root, {ops::Const(root, 0)},
                  [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> { return v[0]; },
                  [](const Scope&, const Outputs& v) -> Result { return v; })
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must return a bool"));
  EXPECT_THAT(ops::WhileLoop(root, {}, cond, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "needs a loop variable"));
}

// x > 0 ? x * 2 : -x, and the branch index.
Result Abs2(const Scope& root, Output x) {
  return ops::Cond(
      root, ops::Greater(root, x, 0.0f),
      [&](const Scope& t) -> Result {
        return Outputs{ops::Mul(t, x, 2.0f), ops::Const(t, 1)};
      },
      [&](const Scope& f) -> Result {
        return Outputs{ops::Neg(f, x), ops::Const(f, 0)};
      });
}

TEST(CondTest, TakesTheFedBranch) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, Abs2(root, x));
  EXPECT_EQ(r[0].node()->type_string(), "Merge");
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(3)}}, {r[0], r[1]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 6);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 1);
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(-4)}}, {r[0], r[1]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 4);
  EXPECT_EQ(out[1].scalar<int32_t>()(), 0);
}

TEST(CondTest, OnlyTheTakenBranchRuns) {
  // Each branch adds to its own counter variable; one run bumps only one.
  Scope root = Scope::NewRootScope();
  auto pred = ops::Placeholder(root.WithOpName("pred"), DT_BOOL);
  const Output a =
      GetVariable(root, "a", TensorShape({}), DT_FLOAT, initializers::Zeros()).handle();
  const Output b =
      GetVariable(root, "b", TensorShape({}), DT_FLOAT, initializers::Zeros()).handle();
  const auto bump = [](const Output& var) {
    return [var](const Scope& s) -> Result {
      auto add = ops::AssignAddVariableOp(s, var, 1.0f);
      return Outputs{
          ops::Identity(s.WithControlDependencies({add.operation}), ops::Const(s, 1.0f))};
    };
  };
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, ops::Cond(root, pred, bump(a), bump(b)));
  ClientSession session(root);
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(root)}, nullptr));
  std::vector<Tensor> out;
  for (bool p : {true, true, false})
    TW_ASSERT_OK(session.Run({{pred, Scalar<bool>(p)}}, {r[0]}, &out));
  TW_ASSERT_OK(session.Run(
      {ops::ReadVariableOp(root, a, DT_FLOAT), ops::ReadVariableOp(root, b, DT_FLOAT)}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 2);
  EXPECT_FLOAT_EQ(out[1].scalar<float>()(), 1);
}

TEST(CondTest, FetchingTheUntakenBranchIsAnError) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output inside;
  TW_ASSERT_OK_AND_ASSIGN(Outputs r, ops::Cond(
                                         root, ops::Greater(root, x, 0.0f),
                                         [&](const Scope& t) -> Result {
                                           inside = ops::Mul(t.WithOpName("doubled"), x, 2.0f);
                                           return Outputs{inside};
                                         },
                                         [&](const Scope&) -> Result { return Outputs{x}; }));
  ClientSession session(root);
  std::vector<Tensor> out;
  EXPECT_THAT(session.Run({{x, Scalar<float>(-1)}}, {inside}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument, "'cond/doubled:0' is dead"));
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(-1)}}, {r[0]}, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), -1);
}

TEST(CondTest, BranchesMustAgree) {
  Scope root = Scope::NewRootScope();
  EXPECT_THAT(ops::Cond(
                  root, ops::Const(root, true),
                  [](const Scope& t) -> Result { return Outputs{ops::Const(t, 1)}; },
                  [](const Scope& f) -> Result { return Outputs{ops::Const(f, 1.0f)}; })
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "the true branch returns [int32], the false branch [float]"));
  EXPECT_THAT(ops::Cond(
                  root, ops::Const(root, 1), [](const Scope& t) -> Result { return Outputs{}; },
                  [](const Scope& f) -> Result { return Outputs{}; })
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a bool"));
}

TEST(CondGradientTest, MatchesFiniteDifferencesOnBothBranches) {
  // y = x > 0 ? x * x * w : w - 3x, with w captured from outside by both
  // branches and x by both: the gradients flow back through the Merge to the
  // taken branch only, and through the Switches to x and w.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_DOUBLE);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs y,
      ops::Cond(
          root, ops::Greater(root, x, 0.0),
          [&](const Scope& t) -> Result { return Outputs{ops::Mul(t, ops::Mul(t, x, x), w)}; },
          [&](const Scope& f) -> Result { return Outputs{ops::Sub(f, w, ops::Mul(f, x, 3.0))}; }));
  for (double xv : {1.5, -0.5}) {
    TW_ASSERT_OK_AND_ASSIGN(
        double error, ComputeGradientError<double>(
                          root, {x, w}, {Scalar<double>(xv), Scalar<double>(2.0)}, {y[0]}, 1e-4));
    EXPECT_LT(error, 1e-6) << "x = " << xv;
  }
  // And the values: dy/dx = 2xw = 6 at x = 1.5, w = 2; -3 at x = -0.5.
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, y, {x, w}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(1.5)}, {w, Scalar<double>(2.0)}}, grads, &out));
  EXPECT_DOUBLE_EQ(out[0].scalar<double>()(), 6.0);
  EXPECT_DOUBLE_EQ(out[1].scalar<double>()(), 2.25);
  TW_ASSERT_OK(session.Run({{x, Scalar<double>(-0.5)}, {w, Scalar<double>(2.0)}}, grads, &out));
  EXPECT_DOUBLE_EQ(out[0].scalar<double>()(), -3.0);
  EXPECT_DOUBLE_EQ(out[1].scalar<double>()(), 1.0);
}

TEST(CondGradientTest, BranchWithoutTheInputGivesZero) {
  // y = pred ? x * 2 : 5: dy/dx is 2 when taken, 0 (not dead) otherwise.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto pred = ops::Placeholder(root.WithOpName("pred"), DT_BOOL);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs y,
      ops::Cond(
          root, pred, [&](const Scope& t) -> Result { return Outputs{ops::Mul(t, x, 2.0f)}; },
          [&](const Scope& f) -> Result { return Outputs{ops::Const(f, 5.0f)}; }));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, y, {x}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(1)}, {pred, Scalar<bool>(true)}}, grads, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 2);
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(1)}, {pred, Scalar<bool>(false)}}, grads, &out));
  EXPECT_FLOAT_EQ(out[0].scalar<float>()(), 0);
}

// A library function called from the DSL runs (the session inlines it), and
// so does its gradient (more in ops/function_gradients_test.cc).
TEST(FunctionCallTest, RunsFromTheDslWithItsGradient) {
  Scope root = Scope::NewRootScope();
  FunctionDefLibrary library;
  TW_ASSERT_OK(ParseTextProto(R"pb(
                                function {
                                  signature {
                                    name: 'SquareIt'
                                    input_arg { name: 'x' type: DT_FLOAT }
                                    output_arg { name: 'y' type: DT_FLOAT }
                                  }
                                  node_def {
                                    name: 'square'
                                    op: 'Mul'
                                    input: 'x'
                                    input: 'x'
                                    attr {
                                      key: 'T'
                                      value { type: DT_FLOAT }
                                    }
                                  }
                                  ret { key: 'y' value: 'square:z:0' }
                                })pb",
                              &library));
  TW_ASSERT_OK(root.graph()->AddFunctionLibrary(library));
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  NameAttrList square;
  square.set_name("SquareIt");
  ops::PartitionedCall call(root.WithOpName("call"), {x}, {DT_FLOAT}, square);
  TW_ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(3)}}, {call[0]}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {9}));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {call[0]}, {x}, &grads));
  TW_ASSERT_OK(session.Run({{x, Scalar<float>(3)}}, grads, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {6}));
}

}  // namespace
}  // namespace towerflow
