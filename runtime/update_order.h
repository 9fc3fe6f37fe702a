// Within the one partition of a step that may be recorded
// (runtime/step_replay.h): each variable's updates ordered after every node
// that holds its buffer from a read. Internal to the runtime.
//
// A read shares the variable's buffer, and an update writes in place only
// when nothing else holds it (Note [Variable copy-on-write],
// kernels/variable_ops.cc); otherwise it swaps in a new buffer. In a
// training step a weight's update may run while the gradient of an earlier
// layer still reads the weight (a Conv2DBackpropInput, a MatMul), and
// nothing orders the two: whether the variable moves then depends on the
// order the executor happens to run them in, and a recording would keep a
// buffer the variable has left. Control edges from each holder of a read to
// the variable's updates (as TF 2's automatic control dependencies order
// the uses of a resource) let every update find the buffer unshared. The
// values stay the same: a reader sees the value from before the update
// either way.
//
// A holder is a consumer of a read's value (ReadVariableOp's for resource
// variables; for reference variables any consumer that does not write),
// or a consumer of what passes that buffer on (Identity and its kin),
// transitively. An update takes the variable (its handle or reference) as
// a stateful node that is not a read, or through a reference argument (TF
// 1's Assign, Apply* and Scatter*, which are not stateful). No edge is
// added where the update comes first already (it reaches the holder: the
// edge would close a cycle). A partition with control flow is left as it
// is (its frames forbid edges across them, and no recording holds control
// flow).
#ifndef TOWERFLOW_RUNTIME_UPDATE_ORDER_H_
#define TOWERFLOW_RUNTIME_UPDATE_ORDER_H_

#include "absl/status/status.h"
#include "proto/graph.pb.h"

namespace towerflow {

// Adds the control edges to `partition`; InvalidArgument for a malformed
// input name.
absl::Status OrderUpdatesAfterReads(GraphDef* partition);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_UPDATE_ORDER_H_
