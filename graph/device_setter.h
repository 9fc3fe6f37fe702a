// ReplicaDeviceSetter: TensorFlow's tf.train.replica_device_setter.
//
// A device function (for Scope::WithDeviceFunction) that puts variable ops
// (ps_ops) on parameter-server tasks and everything else on the worker
// device. Inner device specs are merged in, not overridden: a variable built
// under WithDevice("/cpu:0") lands on "/job:ps/task:0/device:CPU:0".
//
//   ReplicaDeviceSetterOptions options;
//   options.ps_tasks = 2;
//   TW_ASSIGN_OR_RETURN(DeviceFunction setter, ReplicaDeviceSetter(options));
//   Scope s = root.WithDeviceFunction(setter);
//   Variable v = GetVariable(s, "v", {2, 2});   // /job:ps/task:0
//   Variable w = GetVariable(s, "w", {2, 1});   // /job:ps/task:1
//
// Strategies choose the ps task of each variable op: round-robin (the
// default) or greedy by load, e.g. by the variable's size in bytes. The
// returned function keeps the strategy's state; copies share it. Not
// thread-safe (graph building is single-threaded).
#ifndef TOWERFLOW_GRAPH_DEVICE_SETTER_H_
#define TOWERFLOW_GRAPH_DEVICE_SETTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace towerflow {

// Chooses the ps task (in [0, num_tasks)) of a variable op.
using PsStrategy = std::function<absl::StatusOr<int>(const Node& op)>;
// The load an op puts on a ps task; units are the caller's.
using LoadFn = std::function<absl::StatusOr<int64_t>(const Node& op)>;

// TensorFlow's STANDARD_PS_OPS: Variable, VariableV2, VarHandleOp,
// AutoReloadVariable and the mutable hash tables.
const std::vector<std::string>& StandardPsOps();

// Task 0, 1, ..., num_tasks - 1, 0, ...
PsStrategy RoundRobinStrategy(int num_tasks);

// The task with the least load so far (the lowest index on ties); its load
// then grows by load_fn(op).
PsStrategy GreedyLoadBalancingStrategy(int num_tasks, LoadFn load_fn);

// Bytes of a variable op's value: its `shape` attr times the size of its
// `dtype` attr, or for other single-output ops the output's shape and type.
// InvalidArgument when the shape is not fully known or the op has several
// outputs.
absl::StatusOr<int64_t> ByteSizeLoadFn(const Node& op);

struct ReplicaDeviceSetterOptions {
  // Number of ps tasks; 0 makes the setter a no-op. Ignored with `cluster`.
  int ps_tasks = 0;
  std::string ps_device = "/job:ps";
  std::string worker_device = "/job:worker";
  // False: a node that already has a device keeps it unchanged (deprecated
  // in TensorFlow too).
  bool merge_devices = true;
  // job name -> task addresses; ps_tasks becomes the size of ps_device's job.
  std::optional<std::map<std::string, std::vector<std::string>>> cluster;
  // Ops placed on ps tasks; empty means StandardPsOps().
  std::vector<std::string> ps_ops;
  // Empty means RoundRobinStrategy(ps_tasks).
  PsStrategy ps_strategy;
};

// InvalidArgument for unparsable device strings or a negative ps_tasks.
absl::StatusOr<DeviceFunction> ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options);

// TF's local device setter (replicate_model_fn's and the multi-GPU
// tutorials'): within one task, variable ops (Variable, VariableV2,
// VarHandleOp) go to ps_devices[ps_strategy(op)], every other op to
// `worker_device`, and the node's own device spec is merged over either.
// The strategy defaults to round robin; one strategy shared by several
// setters continues from one to the next (ReplicateModelFn's towers). A bad
// device string fails every node the setter places (InvalidArgument).
DeviceFunction LocalDeviceSetter(const std::string& worker_device,
                                 const std::vector<std::string>& ps_devices,
                                 PsStrategy ps_strategy = nullptr);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_DEVICE_SETTER_H_
