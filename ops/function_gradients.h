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
// and the function. A function with a gradient function in the library (TF
// 1's GradientDef, `Defun(grad_func=...)`) is differentiated by calling that
// instead: grad_f(inputs..., dL/d outputs...) -> dL/d inputs.
//
// Not supported (Unimplemented, naming the call): a call inside the body of
// a TF 1 while loop (ops::WhileLoop), whose backward loop would have to keep
// the recomputed values per iteration.
#ifndef TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_
#define TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"

namespace towerflow {

// Whether `node` of `graph` calls a function: a call op, or a function of
// the graph's library called by name.
bool IsFunctionCall(const Graph& graph, const Node& node);

// The gradient function of every function call (a SparseGradFunc): one
// gradient per input of `op`, none for inputs that are not differentiable
// (predicates, indices, int32 loop counters).
absl::Status FunctionCallGradient(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Gradient>* grad_outputs);

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_FUNCTION_GRADIENTS_H_
