// What a session needs from a cluster to run the parts of its steps that are
// placed on other processes' devices (distribute/server.h provides it).
//
// A session made by NewClusterSession places nodes over every task's
// devices: those of its own task, and stand-ins for the others' (Device
// objects that run nothing). It cuts each step by device as usual
// (runtime/step_graph.h); a partition on another task's device is sent there
// once (Register) and run there each step (RemotePartition::RunAsync), while
// the _Send/_Recv pairs between tasks meet through the step's Rendezvous
// (BeginStep), which carries the values between the processes.
#ifndef TOWERFLOW_RUNTIME_REMOTE_TASKS_H_
#define TOWERFLOW_RUNTIME_REMOTE_TASKS_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/device.h"
#include "framework/rendezvous.h"
#include "proto/graph.pb.h"
#include "runtime/device_mgr.h"
#include "runtime/graph_optimizer.h"
#include "runtime/session.h"

namespace towerflow {

// One partition registered on another task. Destroying it deregisters it
// there.
class RemotePartition {
 public:
  virtual ~RemotePartition() = default;
  // Runs the partition as part of step `step_id`; `done` gets its status (the
  // task's error, naming the task and the node, or why the task could not
  // be reached).
  virtual void RunAsync(int64_t step_id, std::function<void(absl::Status)> done) = 0;
};

class RemoteTasks {
 public:
  virtual ~RemoteTasks() = default;

  // Whether `device` stands for a device of another task.
  virtual bool IsRemote(const Device* device) const = 0;
  // Sends `partition`, whose nodes are on remote `device`, to its task, which
  // rewrites it with `optimizer` and builds its executor; the task's error
  // (naming the node) when it cannot.
  virtual absl::StatusOr<std::unique_ptr<RemotePartition>> Register(
      Device* device, const GraphDef& partition, const GraphOptimizerOptions& optimizer) = 0;

  // A step id that no other process of the cluster uses.
  virtual int64_t NewStepId() = 0;
  // The rendezvous of step `step_id`: values other tasks send for the step
  // arrive in it, values sent to other tasks' devices leave through it, and
  // aborting it aborts the step on the tasks it runs on. Valid until EndStep.
  virtual std::shared_ptr<Rendezvous> BeginStep(int64_t step_id) = 0;
  virtual void EndStep(int64_t step_id) = 0;
};

struct ClusterSessionEnv {
  // This task's devices and the stand-ins of the others'; borrowed, and must
  // outlive the session.
  DeviceMgr* devices = nullptr;
  RemoteTasks* remote = nullptr;  // borrowed
  // The task of the session ("/job:worker/replica:0/task:1"): where nodes
  // whose requested device names no job go, and where feeds enter and
  // fetches leave (its host device).
  DeviceSpec task;
};

// A session over a cluster's devices. Close releases the session's executors
// but not the variables on the devices: they belong to their tasks, and
// live on for the next session, as in TF.
absl::StatusOr<std::unique_ptr<Session>> NewClusterSession(const SessionOptions& options,
                                                           const ClusterSessionEnv& env);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_REMOTE_TASKS_H_
