// Gradients through TensorFlow 1.x while loops, for the gradient builder
// (ops/gradients.cc): internal to //ops:gradients.
//
// Note [While-loop gradients]
// The builder differentiates a loop as a whole once the gradients of all its
// Exits are known (TF's control_flow_grad.py and control_flow_state.py, in
// spirit). For a forward loop with variables v_i (Enter -> Merge -> Switch,
// the body's value Switch:1, the next value through NextIteration, the final
// value through an Exit) and loop invariants c_j (Enters with is_constant):
//
//  * The forward loop gets a counter of its iterations (a loop variable of
//    its own beside the others: 0 on entry, +1 per iteration, its Exit the
//    number N of iterations).
//  * The backward loop runs N iterations. Its variables are the counter
//    (N down to 0), the gradient of each differentiable v_i (starting from
//    the gradient of v_i's Exit) and, per invariant with a gradient, a sum.
//    Each iteration builds the body's gradient (a nested gradient builder
//    from the body's next values back to its Switch:1 values and its
//    invariants) and feeds dL/d(Switch:1) to the next iteration.
//  * A forward value the body's gradient needs (a MatMul's input, say) is
//    pushed onto a stack in every forward iteration and popped in every
//    backward iteration, so iteration k of the backward loop sees forward
//    iteration N-1-k's value. A loop-invariant value enters the backward
//    loop as an invariant instead; a value from outside both loops enters it
//    directly.
//  * Ordering. In the forward loop each push waits for the iteration's
//    counter and the counter's increment waits for every push (through a
//    ControlTrigger), so iteration k's pushes precede iteration k+1's and all
//    precede the counter's Exit, from which the backward loop starts. In the
//    backward loop each pop waits for the iteration's counter and the
//    decrement for every pop, the same way.
//
// Loops nest: the body's gradient may meet an inner loop, whose backward loop
// is then built inside the outer backward loop; the values the inner loop's
// gradient needs from the outer forward iteration (its iteration count, its
// stacks' handles) are themselves pushed and popped by the outer loop.
//
// A Cond inside the body is differentiated too: a value of one of its
// branches is pushed only in the iterations that take the branch, and popped
// only in theirs (Note [Values in Cond branches] in while_gradients.cc).
//
// Not supported (Unimplemented, naming the loop): loops whose Enter, Merge,
// Switch, NextIteration and Exit are not wired as tf.while_loop wires them,
// and gradients that need a loop variable's initial value from inside the
// loop.
#ifndef TOWERFLOW_OPS_WHILE_GRADIENTS_H_
#define TOWERFLOW_OPS_WHILE_GRADIENTS_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/control_flow.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"

namespace towerflow {

class WhileGradients {
 public:
  // The gradients of `ys` with respect to `xs` given `grad_ys`, all in while
  // frame `frame`: a gradient builder that stops at the xs.
  using BodyGradientFn = std::function<absl::StatusOr<std::vector<Gradient>>(
      const Scope& scope, int frame, const std::vector<Output>& ys, const std::vector<Output>& xs,
      const std::vector<Output>& grad_ys)>;

  // The gradient of one Enter's input.
  using EnterGradients = std::vector<std::pair<const Edge*, Gradient>>;

  // `graph` as it is before any gradient is added.
  static absl::StatusOr<WhileGradients> Create(const Graph& graph);

  // The frame a node runs in: from the ControlFlowInfo for the graph's nodes
  // at Create, the recorded frame for forward-loop nodes added since, and
  // kGradientNode for the other nodes added since (gradients).
  static constexpr int kGradientNode = -2;
  int FrameOf(const Node* n) const;
  // The frame `out` is produced into: an Enter's child frame, an Exit's
  // parent frame, else the node's own.
  int OutputFrame(const Output& out) const;
  int Parent(int frame) const { return info_.frames[frame].parent; }
  const std::string& FrameName(int frame) const { return info_.frames[frame].name; }
  // For an Enter at `frame`, the child frame it enters; -1 otherwise.
  int EnteredFrame(const Node* n) const;

  // Builds the backward loop of the forward loop of frame `frame`, given
  // the gradient of each of its Exits (absent: none), and returns the
  // gradients of its Enters' inputs. `scope` names the new nodes.
  absl::StatusOr<EnterGradients> Differentiate(
      const Scope& scope, int frame, const absl::flat_hash_map<const Node*, Gradient>& exit_grads,
      const BodyGradientFn& body_gradient);

 private:
  struct ForwardLoop;
  class BackwardLoop;

  explicit WhileGradients(ControlFlowInfo info) : info_(std::move(info)) {}

  absl::StatusOr<ForwardLoop> Analyze(const Graph& graph, int frame) const;
  absl::Status AddCounter(const Scope& scope, ForwardLoop* loop);
  // Records the nodes from id `first` on as forward nodes of `frame`.
  void MarkAdded(const Graph& graph, int first, int frame);

  ControlFlowInfo info_;
  absl::flat_hash_map<const Node*, int> added_frame_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_WHILE_GRADIENTS_H_
