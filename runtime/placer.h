// Placer: assigns every node of a graph to a device.
//
// Nodes are first grouped: a `_class: "loc:@x"` attr puts a node with x, and
// an edge carrying a variable (a ref or DT_RESOURCE value into a ref or
// resource input) puts the consumer with the variable, since a variable can
// only be read and updated where it lives, and a while loop's nodes are
// placed together (graph/control_flow.h; the first device request among them
// wins). Each group then gets one device:
//  1. a member placed by an earlier call keeps its device (stateful nodes
//     must not move between runs);
//  2. else the members' requested devices, merged ("/gpu:1", "/device:CPU:*",
//     "/job:localhost/task:0"), select the candidates; of those that have a
//     kernel for every member, the highest-priority type (GPU before CPU)
//     with the lowest index wins;
//  3. when nothing matches — the device does not exist, or has no kernel —
//     allow_soft_placement retries with the same type at any index, then any
//     device; without it the result is InvalidArgument naming the node and
//     the device. Conflicting requests in one group are InvalidArgument
//     unless soft placement is on (then the first request wins).
// A node whose op has no kernel on any device is placed by its request alone;
// it fails when an executor is built for it, which only happens if it runs.
//
// In a cluster (PlacerOptions::default_task) a group whose merged request
// names no job goes to the default task: "/cpu:0" is the session's own task's
// CPU, "/job:ps/task:1" another task's.
//
// With log_device_placement each new placement is printed to stderr as
// "node_name: (Op): /job:localhost/replica:0/task:0/device:CPU:0".
#ifndef TOWERFLOW_RUNTIME_PLACER_H_
#define TOWERFLOW_RUNTIME_PLACER_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "graph/graph.h"
#include "runtime/device_mgr.h"

namespace towerflow {

struct PlacerOptions {
  bool allow_soft_placement = false;
  bool log_device_placement = false;
  // In a cluster, the task a request without a job means ("/job:worker/
  // replica:0/task:1": the session's own, as TF's master places on the
  // client's task); soft placement looks in that task before all devices.
  // Empty: any device.
  DeviceSpec default_task;
};

// node name -> device. Entries already present are kept and constrain their
// groups; the nodes of `graph` that lack one are added. On error `placement`
// is unchanged.
using Placement = absl::flat_hash_map<std::string, Device*>;

absl::Status PlaceGraph(const Graph& graph, const DeviceMgr& devices, const PlacerOptions& options,
                        Placement* placement);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_PLACER_H_
