// Helpers the gradient functions of ops/gradients/ share. Internal to the
// package.
#ifndef TOWERFLOW_OPS_GRADIENTS_GRAD_UTIL_H_
#define TOWERFLOW_OPS_GRADIENTS_GRAD_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"

// Declares a dense gradient function (the GradFunc signature) with the
// parameters scope, op, grad_inputs and grad_outputs.
#define TW_GRAD_FN(name)                                     \
  absl::Status name(const Scope& scope, const Operation& op, \
                    const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs)

namespace towerflow {
namespace grad_util {

// The Output feeding input `i` of `op`. REQUIRES: the input is connected
// (every node in a graph has all its data inputs).
Output In(const Operation& op, int i);

// The value of `out` when it is a Const of integers; nullopt otherwise.
std::optional<std::vector<int64_t>> ConstInts(const Output& out);

// Reads attr `name` of `op`; a missing or mistyped attr is recorded in the
// scope's status and `fallback` returned.
template <typename T>
T Attr(const Scope& scope, const Operation& op, const std::string& name, T fallback = T()) {
  T value = fallback;
  absl::Status s = op.node()->GetAttr(name, &value);
  if (!s.ok()) scope.UpdateStatus(s);
  return value;
}

// `axes` (int32 or int64, any shape) as int32 with negative entries counted
// from the end of a tensor of rank `rank` (an int32 scalar).
Output CanonicalAxes(const Scope& scope, const Output& axes, const Output& rank);

// `grad` (shaped like the broadcast of x and y) summed down to the shape of
// `x`: over the leading dimensions x lacks and those where x has size 1.
// With both static shapes known the axes are constants, else they come from
// BroadcastGradientArgs at run time.
Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x, const Output& y);

// The shape of `x` with the dimensions in `axes` set to 1 (a reduction's
// output shape with keep_dims), as an int32 vector.
Output KeptDimsShape(const Scope& scope, const Output& x, const Output& axes);

// `grad` of a reduction of `x` over `axes` (keep_dims or not) broadcast back
// to x's shape.
Output BroadcastReduced(const Scope& scope, const Output& grad, const Output& x,
                        const Output& axes);

// conj(x) when x is complex, else x itself (TF's math_ops.conj): the
// gradients of complex products take the conjugate of the other factor.
Output ConjIfComplex(const Scope& scope, const Output& x);

// True when `out` is a ZerosLike the engine filled in for an output nobody
// differentiated.
bool IsZerosFill(const Output& out);

}  // namespace grad_util
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_GRADIENTS_GRAD_UTIL_H_
