// Step graphs: what one Session::Run signature executes, cut per device.
//
// From the session's placed graph and a (feeds, fetches, targets) signature:
//  * prune to the nodes the fetches and targets need; a fed tensor cuts its
//    producer off (any output can be fed — "z:1", non-Placeholders too), and
//    Placeholders nothing needs need no feed;
//  * replace each fed tensor with an `_Arg` node and add one `_Retval` per
//    distinct fetched tensor, each on the device of the tensor's node;
//  * cut every edge between devices into a `_Send` on the source device and
//    a `_Recv` on the destination, one pair per (tensor, destination device)
//    so a tensor crosses to a device once however many nodes there use it;
//    a control edge between devices becomes a dummy Const sent across.
// Every inserted node starts with '_', which user node names cannot.
//
// In a cluster the feeds and fetches live in the session's process: with a
// `frame_device` (the session's host device), the _Arg or _Retval of a
// tensor on another task's device goes on `frame_device` instead, and the
// value crosses with a _Send/_Recv pair.
#ifndef TOWERFLOW_RUNTIME_STEP_GRAPH_H_
#define TOWERFLOW_RUNTIME_STEP_GRAPH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"
#include "runtime/placer.h"

namespace towerflow {

struct StepGraphs {
  // Device name -> the partition to run there.
  std::map<std::string, GraphDef> partitions;
  // Feed i's expected dtype and (possibly partial) shape.
  std::vector<DataType> feed_dtypes;
  std::vector<PartialTensorShape> feed_shapes;
  // Fetch i is _Retval fetch_retval[i] (repeated fetches share one).
  std::vector<int> fetch_retval;
  int num_retvals = 0;
};

// NotFound for a feed, fetch or target naming a node not in the graph;
// InvalidArgument for a bad tensor name, an output index out of range, a
// tensor fed twice, or a fetch of a node without outputs.
// REQUIRES: every node of `graph` is in `placement`.
absl::StatusOr<StepGraphs> BuildStepGraphs(const Graph& graph, const Placement& placement,
                                           const std::vector<std::string>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets,
                                           Device* frame_device = nullptr);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_STEP_GRAPH_H_
