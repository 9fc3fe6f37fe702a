// Symbolic differentiation: adds the ops computing d(sum of ys)/d(xs) to
// the graph, as TensorFlow's tf.gradients / AddSymbolicGradients.
//
//   Output loss = ...;
//   std::vector<Output> grads;
//   TW_RETURN_IF_ERROR(AddSymbolicGradients(scope, {loss}, {w.handle(), b.handle()}, &grads));
//
// Semantics (TensorFlow's):
//  * The gradients of several ys are summed; each y is seeded with its
//    grad_y (OnesLike(y) when none is given). A y may depend on another.
//  * Where an output feeds several consumers, their gradients are summed
//    (AddN; IndexedSlices by concatenation, densified when mixed with dense).
//  * Only ops on a path from an x to a y are differentiated, and an op
//    whose inputs are all off such paths is not differentiated at all.
//  * StopGradient and other ops registered without a gradient stop the flow;
//    an x whose every path is stopped gets NoGradient() (an Output with no
//    node). An x not reachable backwards from any y is InvalidArgument
//    "Cannot compute the partial derivative for node 'z' as it's unreachable
//    from the output node(s)." (see GradientOptions). An op on a path with
//    no registered gradient is NotFound "No gradient defined for op: X".
//  * Backward ops are built under "gradients/<forward op name>_grad" (the
//    "gradients" scope uniquified per call) and colocated with their
//    forward op, so each tower's backward pass runs on its own device.
//  * A resource variable is differentiated through its handle: pass
//    Variable::handle() as the x; every ReadVariableOp and ResourceGather of
//    it contributes.
//
// Not thread-safe (graph building is single-threaded).
#ifndef TOWERFLOW_OPS_GRADIENTS_H_
#define TOWERFLOW_OPS_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"
#include "ops/gradient_sums.h"

namespace towerflow {

struct GradientOptions {
  // An x unreachable from the ys gets NoGradient() instead of an error
  // (what an optimizer wants for variables the loss does not use).
  bool allow_unreachable = false;
};

// grads[i] = sum over j of grad_ys[j] * d ys[j] / d xs[i]. grad_ys must be
// as many as ys, each of its y's dtype. Errors (also recorded in `scope`'s
// status): see the file comment; InvalidArgument for invalid or mismatched
// arguments.
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                                  std::vector<Output>* grads);
// As above with grad_ys = OnesLike(ys).
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, std::vector<Output>* grads);

// The general form: gradients stay IndexedSlices where they arrive so (a
// variable read only through ResourceGather). Empty grad_ys means OnesLike.
absl::StatusOr<std::vector<Gradient>> ComputeSymbolicGradients(
    const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
    const std::vector<Output>& grad_ys = {}, const GradientOptions& options = {});

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_GRADIENTS_H_
