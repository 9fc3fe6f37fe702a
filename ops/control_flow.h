// Conditionals and while loops in the graph DSL: TensorFlow 1.x's tf.cond
// and tf.while_loop (C++: cc/ops/while_loop.h's BuildWhileLoop), built from
// Switch, Merge, Enter, Exit, NextIteration and LoopCond.
//
//   // y = x > 0 ? x * 2 : -x
//   TW_ASSIGN_OR_RETURN(std::vector<Output> y, ops::Cond(s, ops::Greater(s, x, 0.0f),
//       [&](const Scope& t) -> absl::StatusOr<std::vector<Output>> {
//         return std::vector<Output>{ops::Mul(t, x, 2.0f)};
//       },
//       [&](const Scope& f) -> absl::StatusOr<std::vector<Output>> {
//         return std::vector<Output>{ops::Neg(f, x)};
//       }));
//
//   // sum of 1..10
//   TW_ASSIGN_OR_RETURN(std::vector<Output> r, ops::WhileLoop(s, {i0, sum0},
//       [](const Scope& c, const std::vector<Output>& v) -> absl::StatusOr<Output> {
//         return ops::LessEqual(c, v[0], 10);
//       },
//       [](const Scope& b, const std::vector<Output>& v)
//           -> absl::StatusOr<std::vector<Output>> {
//         return std::vector<Output>{ops::Add(b, v[0], 1), ops::Add(b, v[1], v[0])};
//       }));
//
// The functions build their ops with the scope they are given and may use
// any tensor built before (captured, as in Python): the builder routes such
// a tensor into the branch through a Switch on the predicate, or into the
// loop through a loop-invariant Enter, and gives ops without inputs (a Const)
// a control input from the branch's or iteration's pivot, so they run only
// when the branch is taken or the iteration runs. A control dependency on an
// op outside a loop becomes one on the loop's Enter. Variables created inside
// (GetVariable) stay outside, with their initializers: only their reads are
// in the branch or loop. Both nest, and work inside towers (a loop's frame is
// named after its name scope, so each tower's loop is its own).
//
// Placement keeps a loop's nodes on one device; a loop that reads a variable
// runs where the variable lives.
#ifndef TOWERFLOW_OPS_CONTROL_FLOW_H_
#define TOWERFLOW_OPS_CONTROL_FLOW_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace ops {

using BranchFn = std::function<absl::StatusOr<std::vector<Output>>(const Scope&)>;

// The outputs of then_fn where `pred` (a scalar bool) is true, else of
// else_fn: Merges of the two branches' outputs, which must agree in number
// and dtypes. Only the taken branch runs. Under name scope "cond".
// InvalidArgument for a mismatch, or the first error of a branch.
absl::StatusOr<std::vector<Output>> Cond(const Scope& scope, const Output& pred,
                                         const BranchFn& then_fn, const BranchFn& else_fn);

struct WhileLoopOptions {
  std::string name = "while";  // the name scope; the frame is "<scope>/while_context"
  int parallel_iterations = 10;
  // Per loop variable, the shape it keeps across iterations (TF's
  // shape_invariants); empty: each variable's shape on entry.
  std::vector<PartialTensorShape> shape_invariants;
};

using LoopCondFn = std::function<absl::StatusOr<Output>(const Scope&, const std::vector<Output>&)>;
using LoopBodyFn =
    std::function<absl::StatusOr<std::vector<Output>>(const Scope&, const std::vector<Output>&)>;

// Runs body on loop_vars while cond of them is true; returns their final
// values. cond returns a scalar bool; body one new value per variable, of its
// dtype and compatible with its shape invariant. InvalidArgument otherwise
// (TF's "Input tensor 'x' enters the loop with shape [1], but has shape [2]
// after one iteration").
absl::StatusOr<std::vector<Output>> WhileLoop(const Scope& scope,
                                              const std::vector<Output>& loop_vars,
                                              const LoopCondFn& cond, const LoopBodyFn& body,
                                              const WhileLoopOptions& options = {});

}  // namespace ops
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_CONTROL_FLOW_H_
