// Gradients through function calls (Note [Gradients of function calls] in
// ops/function_gradients.h): each call kind against closed forms and finite
// differences, and the bodies the gradient refuses.
#include <cmath>

#include "core/proto_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/functional_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

using Outputs = std::vector<Output>;

// XWW(x, w) = x w w; TanhXWW(x, w) = tanh(XWW(x, w)), calling XWW by name;
// SquareIt(x) = x x and Triple(x) = 3 x (the branches); FiveTimes(i, x, w) =
// i < 5 and LoopBody(i, x, w) = (i + 1, x w, w) (so the loop gives x w^5);
// StraightThrough(x) = round(x) with a gradient function that passes dy
// (Defun's grad_func); Noisy(x) = x u with u uniform random.
constexpr char kLibrary[] = R"pb(
  function {
    signature {
      name: 'XWW'
      input_arg { name: 'x' type: DT_FLOAT }
      input_arg { name: 'w' type: DT_FLOAT }
      output_arg { name: 'y' type: DT_FLOAT }
    }
    node_def {
      name: 'xw'
      op: 'Mul'
      input: 'x'
      input: 'w'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: 'xww'
      op: 'Mul'
      input: 'xw:z:0'
      input: 'w'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'y' value: 'xww:z:0' }
  }
  function {
    signature {
      name: 'TanhXWW'
      input_arg { name: 'x' type: DT_FLOAT }
      input_arg { name: 'w' type: DT_FLOAT }
      output_arg { name: 'y' type: DT_FLOAT }
    }
    node_def { name: 'inner' op: 'XWW' input: 'x' input: 'w' }
    node_def {
      name: 'tanh'
      op: 'Tanh'
      input: 'inner:y:0'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'y' value: 'tanh:y:0' }
  }
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
  }
  function {
    signature {
      name: 'Triple'
      input_arg { name: 'x' type: DT_FLOAT }
      output_arg { name: 'y' type: DT_FLOAT }
    }
    node_def {
      name: 'three'
      op: 'Const'
      attr {
        key: 'dtype'
        value { type: DT_FLOAT }
      }
      attr {
        key: 'value'
        value {
          tensor {
            dtype: DT_FLOAT
            tensor_shape {}
            float_val: 3
          }
        }
      }
    }
    node_def {
      name: 'triple'
      op: 'Mul'
      input: 'x'
      input: 'three:output:0'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'y' value: 'triple:z:0' }
  }
  function {
    signature {
      name: 'FiveTimes'
      input_arg { name: 'i' type: DT_INT32 }
      input_arg { name: 'x' type: DT_FLOAT }
      input_arg { name: 'w' type: DT_FLOAT }
      output_arg { name: 'more' type: DT_BOOL }
    }
    node_def {
      name: 'five'
      op: 'Const'
      attr {
        key: 'dtype'
        value { type: DT_INT32 }
      }
      attr {
        key: 'value'
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 5
          }
        }
      }
    }
    node_def {
      name: 'less'
      op: 'Less'
      input: 'i'
      input: 'five:output:0'
      attr {
        key: 'T'
        value { type: DT_INT32 }
      }
    }
    ret { key: 'more' value: 'less:z:0' }
  }
  function {
    signature {
      name: 'LoopBody'
      input_arg { name: 'i' type: DT_INT32 }
      input_arg { name: 'x' type: DT_FLOAT }
      input_arg { name: 'w' type: DT_FLOAT }
      output_arg { name: 'i_next' type: DT_INT32 }
      output_arg { name: 'x_next' type: DT_FLOAT }
      output_arg { name: 'w_next' type: DT_FLOAT }
    }
    node_def {
      name: 'one'
      op: 'Const'
      attr {
        key: 'dtype'
        value { type: DT_INT32 }
      }
      attr {
        key: 'value'
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape {}
            int_val: 1
          }
        }
      }
    }
    node_def {
      name: 'next_i'
      op: 'AddV2'
      input: 'i'
      input: 'one:output:0'
      attr {
        key: 'T'
        value { type: DT_INT32 }
      }
    }
    node_def {
      name: 'next_x'
      op: 'Mul'
      input: 'x'
      input: 'w'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'i_next' value: 'next_i:z:0' }
    ret { key: 'x_next' value: 'next_x:z:0' }
    ret { key: 'w_next' value: 'w' }
  }
  function {
    signature {
      name: 'StraightThrough'
      input_arg { name: 'x' type: DT_FLOAT }
      output_arg { name: 'y' type: DT_FLOAT }
    }
    node_def {
      name: 'round'
      op: 'Round'
      input: 'x'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'y' value: 'round:y:0' }
  }
  function {
    signature {
      name: 'PassGradient'
      input_arg { name: 'x' type: DT_FLOAT }
      input_arg { name: 'dy' type: DT_FLOAT }
      output_arg { name: 'dx' type: DT_FLOAT }
    }
    ret { key: 'dx' value: 'dy' }
  }
  function {
    signature {
      name: 'Noisy'
      input_arg { name: 'x' type: DT_FLOAT }
      output_arg { name: 'y' type: DT_FLOAT }
    }
    node_def {
      name: 'shape'
      op: 'Const'
      attr {
        key: 'dtype'
        value { type: DT_INT32 }
      }
      attr {
        key: 'value'
        value {
          tensor {
            dtype: DT_INT32
            tensor_shape { dim { size: 0 } }
          }
        }
      }
    }
    node_def {
      name: 'uniform'
      op: 'RandomUniform'
      input: 'shape:output:0'
      attr {
        key: 'T'
        value { type: DT_INT32 }
      }
      attr {
        key: 'dtype'
        value { type: DT_FLOAT }
      }
    }
    node_def {
      name: 'noisy'
      op: 'Mul'
      input: 'x'
      input: 'uniform:output:0'
      attr {
        key: 'T'
        value { type: DT_FLOAT }
      }
    }
    ret { key: 'y' value: 'noisy:z:0' }
  }
  gradient { function_name: 'StraightThrough' gradient_func: 'PassGradient' }
)pb";

NameAttrList Fn(const std::string& name) {
  NameAttrList f;
  f.set_name(name);
  return f;
}

Scope RootWithLibrary() {
  Scope root = Scope::NewRootScope();
  FunctionDefLibrary library;
  const absl::Status parsed = ParseTextProto(kLibrary, &library);
  root.UpdateStatus(parsed.ok() ? root.graph()->AddFunctionLibrary(library) : parsed);
  return root;
}

// The gradients of `ys` with respect to `xs`, run with `feeds`.
std::vector<Tensor> RunGradients(const Scope& root, const Outputs& ys, const Outputs& xs,
                                 const ClientSession::FeedType& feeds) {
  std::vector<Output> grads;
  const absl::Status built = AddSymbolicGradients(root, ys, xs, &grads);
  EXPECT_TRUE(built.ok()) << built;
  if (!built.ok()) return {};
  ClientSession session(root);
  std::vector<Tensor> out;
  const absl::Status ran = session.Run(feeds, grads, &out);
  EXPECT_TRUE(ran.ok()) << ran;
  return out;
}

TEST(FunctionCallGradientTest, PartitionedCallWithANestedCallByName) {
  for (const bool stateful : {false, true}) {
    SCOPED_TRACE(stateful ? "StatefulPartitionedCall" : "PartitionedCall");
    Scope root = RootWithLibrary();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
    const OutputList calls =
        stateful ? ops::StatefulPartitionedCall(root, {x, w}, {DT_FLOAT}, Fn("TanhXWW")).output
                 : ops::PartitionedCall(root, {x, w}, {DT_FLOAT}, Fn("TanhXWW")).output;
    TW_ASSERT_OK(root.status());
    const Output y = calls[0];
    // y = tanh(x w^2) at x = 0.5, w = 2: dy/dx = (1 - tanh(2)^2) 4, dy/dw =
    // (1 - tanh(2)^2) 2.
    const float sech2 = 1 - std::tanh(2.0f) * std::tanh(2.0f);
    const std::vector<Tensor> grads =
        RunGradients(root, {y}, {x, w}, {{x, Scalar<float>(0.5f)}, {w, Scalar<float>(2)}});
    ASSERT_EQ(grads.size(), 2u);
    EXPECT_THAT(grads[0], TensorNear<float>({}, {4 * sech2}, 1e-6));
    EXPECT_THAT(grads[1], TensorNear<float>({}, {2 * sech2}, 1e-6));
    TW_ASSERT_OK_AND_ASSIGN(
        const double error,
        ComputeGradientError<float>(
            root, {x, w}, {Literal<float>({}, {0.3f}), Literal<float>({}, {-1.1f})}, {y}));
    EXPECT_LT(error, 1e-3);
  }
}

TEST(FunctionCallGradientTest, LibraryFunctionCalledAsAnOp) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
  NodeDef call;
  call.set_name("xww");
  call.set_op("XWW");
  call.add_input(Output(x).name());
  call.add_input(Output(w).name());
  TW_ASSERT_OK_AND_ASSIGN(Node * node, root.AddNode(call));
  // d(x w^2) = (w^2, 2 x w) at x = 3, w = 2.
  const std::vector<Tensor> grads =
      RunGradients(root, {Output(node, 0)}, {x, w}, {{x, Scalar<float>(3)}, {w, Scalar<float>(2)}});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_THAT(grads[0], TensorIs<float>({}, {4}));
  EXPECT_THAT(grads[1], TensorIs<float>({}, {12}));
}

TEST(FunctionCallGradientTest, IfDifferentiatesTheBranchTaken) {
  for (const bool stateless : {false, true}) {
    SCOPED_TRACE(stateless ? "StatelessIf" : "If");
    Scope root = RootWithLibrary();
    auto pred = ops::Placeholder(root.WithOpName("pred"), DT_BOOL);
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    const Output y =
        stateless ? ops::StatelessIf(root, pred, {x}, {DT_FLOAT}, Fn("SquareIt"), Fn("Triple"))[0]
                  : ops::If(root, pred, {x}, {DT_FLOAT}, Fn("SquareIt"), Fn("Triple"))[0];
    std::vector<Output> grads;
    TW_ASSERT_OK(AddSymbolicGradients(root, {y}, {x}, &grads));
    ClientSession session(root);
    std::vector<Tensor> out;
    // x^2 when pred, 3 x otherwise, at x = 3.
    TW_ASSERT_OK(session.Run({{pred, Scalar<bool>(true)}, {x, Scalar<float>(3)}}, grads, &out));
    EXPECT_THAT(out[0], TensorIs<float>({}, {6}));
    TW_ASSERT_OK(session.Run({{pred, Scalar<bool>(false)}, {x, Scalar<float>(3)}}, grads, &out));
    EXPECT_THAT(out[0], TensorIs<float>({}, {3}));
  }
}

TEST(FunctionCallGradientTest, CaseDifferentiatesTheBranchIndexed) {
  Scope root = RootWithLibrary();
  auto index = ops::Placeholder(root.WithOpName("index"), DT_INT32);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  const Output y = ops::Case(root, index, {x}, {DT_FLOAT}, {Fn("SquareIt"), Fn("Triple")})[0];
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, {y}, {x}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  // Branch 0 is x^2, branch 1 (and any index out of range, as in TF) 3 x.
  for (const auto& [i, expected] : std::vector<std::pair<int, float>>{{0, 4}, {1, 3}, {7, 3}}) {
    TW_ASSERT_OK(session.Run({{index, Scalar<int32_t>(i)}, {x, Scalar<float>(2)}}, grads, &out));
    EXPECT_THAT(out[0], TensorIs<float>({}, {expected})) << "branch_index " << i;
  }
}

TEST(FunctionCallGradientTest, WhileLoopOfFiveIterations) {
  for (const bool stateless : {false, true}) {
    SCOPED_TRACE(stateless ? "StatelessWhile" : "While");
    Scope root = RootWithLibrary();
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
    const std::vector<Input> vars = {ops::Const(root, 0), x, w};
    const OutputList out =
        stateless ? ops::StatelessWhile(root, vars, Fn("FiveTimes"), Fn("LoopBody")).output
                  : ops::While(root, vars, Fn("FiveTimes"), Fn("LoopBody")).output;
    TW_ASSERT_OK(root.status());
    // x w^5 at x = 2, w = 1.5: d/dx = w^5, d/dw = 5 x w^4.
    const std::vector<Tensor> grads =
        RunGradients(root, {out[1]}, {x, w}, {{x, Scalar<float>(2)}, {w, Scalar<float>(1.5f)}});
    ASSERT_EQ(grads.size(), 2u);
    EXPECT_THAT(grads[0], TensorNear<float>({}, {7.59375f}, 1e-5));
    EXPECT_THAT(grads[1], TensorNear<float>({}, {50.625f}, 1e-4));
    TW_ASSERT_OK_AND_ASSIGN(
        const double error,
        ComputeGradientError<float>(
            root, {x, w}, {Literal<float>({}, {0.7f}), Literal<float>({}, {1.2f})}, {out[1]}));
    EXPECT_LT(error, 1e-2);
  }
}

// A call in a Cond branch: its gradient is dead with the branch when the
// branch is not taken.
TEST(FunctionCallGradientTest, CallInsideACondBranch) {
  Scope root = RootWithLibrary();
  auto pred = ops::Placeholder(root.WithOpName("pred"), DT_BOOL);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs y, ops::Cond(
                     root, pred,
                     [&](const Scope& t) -> absl::StatusOr<Outputs> {
                       return Outputs{ops::PartitionedCall(t, {x}, {DT_FLOAT}, Fn("SquareIt"))[0]};
                     },
                     [&](const Scope& f) -> absl::StatusOr<Outputs> {
                       return Outputs{ops::Mul(f, x, 5.0f)};
                     }));
  std::vector<Output> grads;
  TW_ASSERT_OK(AddSymbolicGradients(root, y, {x}, &grads));
  ClientSession session(root);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{pred, Scalar<bool>(true)}, {x, Scalar<float>(3)}}, grads, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {6}));
  TW_ASSERT_OK(session.Run({{pred, Scalar<bool>(false)}, {x, Scalar<float>(3)}}, grads, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {5}));
}

// TF 1's GradientDef: the library's gradient function replaces the body's
// (round has no gradient; the straight-through estimator passes dy).
TEST(FunctionCallGradientTest, TheLibrarysGradientFunctionIsUsed) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  const Output y =
      ops::Mul(root, ops::PartitionedCall(root, {x}, {DT_FLOAT}, Fn("StraightThrough"))[0], 3.0f);
  const std::vector<Tensor> grads =
      RunGradients(root, {y}, {x}, {{x, Literal<float>({2}, {0.3f, 1.7f})}});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_THAT(grads[0], TensorIs<float>({2}, {3, 3}));
}

TEST(FunctionCallGradientTest, BodiesThatWouldNotRepeatAreRefused) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::PartitionedCall call(root.WithOpName("noisy"), {x}, {DT_FLOAT}, Fn("Noisy"));
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(root, {call[0]}, {x}, &grads),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "Cannot differentiate the function call PartitionedCall 'noisy': its body "
                       "runs RandomUniform"));
}

// Calls in a DSL loop's body: the second run is part of the backward loop.
// x -> square(x) in iterations 0 and 1 (an If on i < 2), triple(x) in
// iteration 2, and x -> square(x) by a plain call in every iteration.
TEST(FunctionCallGradientTest, CallsInsideAWhileLoopsBody) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs out, ops::WhileLoop(
                       root, {ops::Const(root, 0), x, x},
                       [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                         return ops::Less(c, v[0], 3);
                       },
                       [](const Scope& b, const Outputs& v) -> absl::StatusOr<Outputs> {
                         const Output early = ops::Less(b, v[0], 2);
                         return Outputs{
                             ops::AddV2(b, v[0], 1),
                             ops::If(b, early, {v[1]}, {DT_FLOAT}, Fn("SquareIt"), Fn("Triple"))[0],
                             ops::PartitionedCall(b, {v[2]}, {DT_FLOAT}, Fn("SquareIt"))[0]};
                       }));
  // 3 x^4 and x^8 at x = 1.1: 12 x^3 = 15.972 and 8 x^7 = 15.5897368.
  const std::vector<Tensor> grads =
      RunGradients(root, {out[1], out[2]}, {x}, {{x, Scalar<float>(1.1f)}});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_THAT(grads[0], TensorNear<float>({}, {15.972f + 15.5897368f}, 1e-4));
  TW_ASSERT_OK_AND_ASSIGN(
      const double error,
      ComputeGradientError<float>(root, {x}, {Literal<float>({}, {0.9f})}, {out[1], out[2]}));
  EXPECT_LT(error, 1e-2);
}

// A call beside a DSL loop, both on x: the loop's backward loop and the
// call's second run (a While, lowered to a loop of its own) in one gradient.
TEST(FunctionCallGradientTest, CallBesideADslLoop) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
  TW_ASSERT_OK_AND_ASSIGN(Outputs loop,
                          ops::WhileLoop(
                              root, {ops::Const(root, 0), x},
                              [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                                return ops::Less(c, v[0], 2);
                              },
                              [w](const Scope& b, const Outputs& v) -> absl::StatusOr<Outputs> {
                                return Outputs{ops::AddV2(b, v[0], 1), ops::Mul(b, v[1], w)};
                              }));
  const ops::While call(root, {ops::Const(root, 0), x, w}, Fn("FiveTimes"), Fn("LoopBody"));
  // x w^2 + x w^5 at x = 2, w = 1.5: d/dx = w^2 + w^5, d/dw = 2 x w + 5 x w^4.
  const std::vector<Tensor> grads =
      RunGradients(root, {ops::AddV2(root, loop[1], call.output[1])}, {x, w},
                   {{x, Scalar<float>(2)}, {w, Scalar<float>(1.5f)}});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_THAT(grads[0], TensorNear<float>({}, {2.25f + 7.59375f}, 1e-5));
  EXPECT_THAT(grads[1], TensorNear<float>({}, {6 + 50.625f}, 1e-4));
}

// A While call in a loop body would nest its lowered loop in the backward
// loop: refused.
TEST(FunctionCallGradientTest, AWhileCallInsideAWhileLoopsBodyIsRefused) {
  Scope root = RootWithLibrary();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs out, ops::WhileLoop(
                       root, {ops::Const(root, 0), x},
                       [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
                         return ops::Less(c, v[0], 2);
                       },
                       [w](const Scope& b, const Outputs& v) -> absl::StatusOr<Outputs> {
                         const ops::While inner(b.WithOpName("inner"), {ops::Const(b, 0), v[1], w},
                                                Fn("FiveTimes"), Fn("LoopBody"));
                         return Outputs{ops::AddV2(b, v[0], 1), inner.output[1]};
                       }));
  std::vector<Output> grads;
  EXPECT_THAT(AddSymbolicGradients(root, {out[1]}, {x}, &grads),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "Cannot differentiate the function call While 'while/inner' inside a "
                       "while loop's body: it runs a while loop itself"));
}

}  // namespace
}  // namespace towerflow
