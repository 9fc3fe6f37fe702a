// Gradients of function calls, for the gradient builder (ops/gradients.cc):
// internal to //ops:gradients.
//
// Note [Gradients of function calls]
// A call -- PartitionedCall, StatefulPartitionedCall, If, Case, While, their
// stateless forms, or a library function called by name -- is differentiated
// by running it again: the gradient adds the call's lowered form
// (graph/lower_functions.h: the body inlined, If and Case as Switch and
// Merge, While as a TensorFlow 1.x loop) on the call's own inputs, and
// differentiates that with the builder, loops and nested calls included
// (Note [While-loop gradients] in ops/while_gradients.h). TF 1's
// SymbolicGradient does the same. TF 2 instead rewrites the forward function
// to return the values its gradient needs, which changes a node after the
// fact; a graph already sent to a session cannot take that.
//
// So a training step runs the body twice, and the second run must give the
// values the first gave: a body with a stateful op other than reads of
// variables (a random op, an assignment, a queue) is refused, naming the op
// and its node. A function with a gradient function in the library (TF
// 1's GradientDef, `Defun(grad_func=...)`) is differentiated by calling that
// instead: grad_f(inputs..., dL/d outputs...) -> dL/d inputs.
//
// In the body of a TF 1 while loop (ops::WhileLoop), the second run is part
// of the backward loop: its inputs are the forward iteration's values, kept
// on stacks like any other the body's gradient needs. Not supported there
// (Unimplemented, naming the call): a While, whose lowered loop would nest
// in the backward loop.
#ifndef TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_
#define TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"

namespace towerflow {

// Whether `node` of `graph` calls a function: a call op, or a function of
// the graph's library called by name.
bool IsFunctionCall(const Graph& graph, const Node& node);

// The gradients of `ys` (seeded with `grad_ys`) with respect to `xs`,
// stopping at the xs.
using SubgraphGradientFn = std::function<absl::StatusOr<std::vector<Gradient>>(
    const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
    const std::vector<Output>& grad_ys)>;

// The gradient of every function call: one gradient per input of `op`, none
// for inputs that are not differentiable (predicates, indices, int32 loop
// counters). `body` differentiates the call's second run: the builder of
// the TF 1 loop body the call is in (`in_loop_body`), or, for a call outside
// every loop, a builder of its own (the caller knows which).
absl::Status FunctionCallGradient(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Gradient>* grad_outputs,
                                  const SubgraphGradientFn& body, bool in_loop_body);

// A call in a TF 1 loop body is differentiated by that body's builder; the
// gradient registry's entry for the call ops, which has none, refuses it
// (Unimplemented).
absl::Status CheckCallOutsideLoops(const Graph& graph, const Node& call);

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_
