// Server: one task of a TF 1.x between-graph replicated training job
// (tf.train.Server), its processes started and connected by mpirun.
//
// Every process of the job makes one Server (a collective call: all make it
// together). Parameter-server tasks serve until the workers are done; each
// worker builds the model with ReplicaDeviceSetter, which puts the variables
// on "/job:ps/task:k" and the rest on its own task, and runs it in a session
// over the whole cluster:
//
//   TW_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::Parse("ps=1,worker=2"));
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create({spec}));
//   if (server->task().job == "ps") return server->Join();
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession({}));
//   ... session->Run(...) ...;
//   session.reset();
//   server->Stop();
//
// How a step runs: the worker's session places the graph over every task's
// devices (a node whose device names no job stays on the worker's task), cuts
// it by device, sends each partition on another task's device to that task
// once (RegisterGraph), and every step asks those tasks to run them
// (RunGraph) while it runs its own. Tensors between tasks go as MPI
// point-to-point messages, pushed by the _Send as soon as it runs: a small
// header (step, rendezvous key, dtype, shape), then the tensor's bytes
// straight from its buffer into the receiver's, without copies on either
// side. Variables live in the resources of the devices of their task and
// outlive the sessions, so every worker reads and updates the same ones, as
// in TF.
//
// Failures: an error on any task ends the step on every task it runs on and
// comes back to the worker naming the task and the node. A request that no
// answer follows within TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS (default 600;
// 0 waits forever) fails with DeadlineExceeded naming the task (hung or
// busy). A process that dies is named by mpirun, which stops the others.
//
// Thread-safe.
#ifndef TOWERFLOW_DISTRIBUTE_SERVER_H_
#define TOWERFLOW_DISTRIBUTE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distribute/cluster_spec.h"
#include "runtime/session.h"

namespace towerflow {
namespace distribute {

struct ServerOptions {
  ClusterSpec cluster;
  // This process's task (TF's --job_name and --task_index). Empty: the task
  // of its MPI rank, in the spec's order (ClusterSpec::TaskOfRank).
  std::string job_name;
  int task_index = 0;
  // This task's devices (device_count) and thread pools.
  SessionOptions config;
};

class Server {
 public:
  // Joins the other processes (MPI), checks that they are the spec's tasks,
  // one each, and learns their devices. InvalidArgument when the number of
  // processes differs from the spec's tasks, or two processes claim one task.
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& options);
  // Stop(), then stops serving.
  ~Server();

  const TaskId& task() const;
  const ClusterSpec& cluster() const;
  // TF's chief: task 0 of the "chief" job where the cluster has one (as
  // TF_CONFIG names it), else worker task 0. It initializes or restores the
  // variables and writes checkpoints and summaries.
  bool is_chief() const;

  // A session of this task over the devices of every task (TF's
  // tf.Session(server.target)).
  absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

  // Serves the other tasks until every worker task has called Stop (a ps
  // task's loop). Returns at once when this task is the only one.
  absl::Status Join();
  // This task has finished: tells the others. Idempotent.
  void Stop();

  // Bytes of tensors this process has sent to and received from other tasks.
  int64_t bytes_sent() const;
  int64_t bytes_received() const;

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  class Impl;  // server.cc

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_SERVER_H_
