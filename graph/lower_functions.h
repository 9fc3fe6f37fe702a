// Function calls replaced by the functions' bodies, so the executor runs
// them with TensorFlow 1.x's primitives (TF's function inlining and its
// LowerFunctionalOpsPass: common_runtime/inline_function_utils.cc,
// lower_if_op.cc, lower_while_op.cc). The session lowers every GraphDef it
// is given before it imports it.
//
// A call node N keeps its name: N becomes an IdentityN of the call's results
// (a NoOp when there are none), so fetches of "N:0" and control inputs
// "^N" still work. The body goes under "N/":
//  * PartitionedCall, StatefulPartitionedCall and a library function called
//    by name: "N/_argI" (an Identity per argument, after the call's control
//    inputs), the body's nodes, and N after the function's control outputs.
//    Body nodes without inputs run after the arguments ("N/_input_control"),
//    so a call in a Cond branch or a loop runs in that branch's or
//    iteration's frame.
//  * If / StatelessIf: the inputs go through Switches on the predicate (a
//    non-bool one through ToBool first) into "N/then" and "N/else", and
//    Merges join the results; "N/_branch_executed" merges the two branches'
//    pivots after both calls, so N waits for the taken branch's side effects
//    without inheriting the untaken one's deadness.
//  * While / StatelessWhile: a while loop in frame N, with Enter, Merge,
//    "N/cond" (through ToBool when it returns no bool), LoopCond, Switch,
//    "N/body", NextIteration and Exit per loop variable.
// Calls inside bodies are lowered the same way, to any depth.
#ifndef TOWERFLOW_GRAPH_LOWER_FUNCTIONS_H_
#define TOWERFLOW_GRAPH_LOWER_FUNCTIONS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace towerflow {

// Whether `op` is a call op: PartitionedCall, StatefulPartitionedCall, If,
// Case, While or a stateless form.
bool IsCallOp(absl::string_view op);

// Whether `graph_def` has a node that calls a function: a call op, If,
// While, or a function of its library or `graph`'s called by name.
bool HasFunctionCalls(const GraphDef& graph_def, const Graph& graph);

// Replaces every function call of `graph_def` by the function's body; the
// library stays. `graph` is the graph `graph_def` is about to be imported
// into (empty, or the one it extends): new names avoid its nodes, and calls
// may name its functions. Each function is instantiated once per attr set.
// InvalidArgument or NotFound naming the call node for an unknown function,
// argument or result types that differ from the call's, a recursive call,
// or a body that does not hold together; `graph_def` is then unchanged.
absl::Status LowerFunctionCalls(const Graph& graph, GraphDef* graph_def);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_LOWER_FUNCTIONS_H_
