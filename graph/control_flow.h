// Control-flow structure of a graph: which while-loop frame each node runs in.
//
// TensorFlow 1.x loops are made of Enter, Merge, Switch, NextIteration and
// Exit nodes (see the "Implementation of Control Flow in TensorFlow" paper).
// An Enter node runs in its input's frame and puts its output in the child
// frame named by its `frame_name`; an Exit runs in the loop's frame and puts
// its output in the parent frame; every other node's outputs stay in its own
// frame. The executor (runtime/executor.cc) runs each frame's iterations; the
// placer keeps a loop's nodes on one device.
//
//   TW_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(graph));
//   const ControlFlowInfo::Frame& f = info.frames[info.frame_of[node->id()]];
#ifndef TOWERFLOW_GRAPH_CONTROL_FLOW_H_
#define TOWERFLOW_GRAPH_CONTROL_FLOW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace towerflow {

// By op type, each with its Ref form.
bool IsSwitch(const Node& n);
bool IsMerge(const Node& n);
bool IsEnter(const Node& n);
bool IsExit(const Node& n);
bool IsNextIteration(const Node& n);
bool IsLoopCond(const Node& n);
bool IsControlTrigger(const Node& n);
// Whether the graph holds any Switch, Merge, Enter, Exit or NextIteration.
bool HasControlFlow(const Graph& graph);

struct ControlFlowInfo {
  struct Frame {
    std::string name;         // the Enters' frame_name; "" for the root
    int parent = -1;          // index in `frames`; -1 for the root
    const Node* first_enter;  // an Enter into this frame (null for the root)
    int num_enters = 0;       // Enter nodes into this frame
  };
  std::vector<Frame> frames;  // frames[0] is the root frame
  std::vector<int> frame_of;  // by node id; -1 for ids of removed nodes
};

// InvalidArgument naming the node when a node has inputs from two frames (a
// tensor used in a loop without an Enter, or after it without an Exit), an
// Exit is outside every loop, or a node can never run because it sits on a
// cycle no Enter leads into.
absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_CONTROL_FLOW_H_
