// The training loop: the one that Estimator::Train and keras::Model::Fit
// both run (as Estimator and Keras's fit share MonitoredSession in TF 1.x).
//
//   training::Loop loop({.loss = loss, .train_ops = {train_op}, .global_step = step_after},
//                       hooks, role.cluster);
//   TW_RETURN_IF_ERROR(loop.Begin(root));          // hooks may add ops
//   ClientSession session(root, options);
//   ... training::StartSession(session, role, start, log) ...
//   TW_RETURN_IF_ERROR(loop.AfterCreateSession(session, global_step));
//   TW_RETURN_IF_ERROR(loop.Run(session, next_batch));  // until the data ends or a hook stops it
//   TW_RETURN_IF_ERROR(loop.End(session));
//
// Each step feeds a batch, runs the train ops fetching the loss, the global
// step after the step, the front end's logs and what each hook asks for
// (SessionRunHook::BeforeRun), traced when a hook asks; then gives every
// hook the step's StepResult and its values, in order. An error from a
// hook or a step ends the loop at once with that error.
//
// Note [A step's OutOfRange]
// A step that fails with OutOfRange ends training as the end of the data
// does (TF's MonitoredSession): an input read inside the graph has ended,
// or a synchronous worker's token queue was closed by the chief
// (training/sync_replicas_hook.h). The step is not counted and End runs.
// Not in a cluster: there the other processes may be waiting for this one
// in a collective, so the error stops them all.
//
// In a cluster (training/cluster_roles.h) the processes take each step
// together: the first process whose data ends, or whose hook asks to stop,
// ends the loop on every process. Run may be called again (Keras's epochs):
// steps and the counted global step carry on.
#ifndef TOWERFLOW_TRAINING_LOOP_H_
#define TOWERFLOW_TRAINING_LOOP_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distribute/cluster.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "runtime/client_session.h"
#include "training/hooks.h"

namespace towerflow {
namespace training {

// What a step runs and fetches.
struct StepSpec {
  Output loss;  // a number scalar
  std::vector<Operation> train_ops;
  // The global step after the step's updates (int64 scalar). Unset: the
  // loop counts steps on from AfterCreateSession's global step.
  std::optional<Output> global_step;
  // More number scalars for the front end (Keras's metrics), in
  // StepResult::logs, in order. With mean_logs_over_processes, in a cluster
  // they are the means over the processes' examples.
  std::vector<Output> logs;
  bool mean_logs_over_processes = false;
};

// One step's input: the feeds and the examples in them.
struct Batch {
  ClientSession::FeedType feeds;
  int64_t examples = 0;
};
// The next batch; nullopt when the data ends.
using NextBatchFn = std::function<absl::StatusOr<std::optional<Batch>>()>;

class Loop {
 public:
  // `cluster`: the processes that step together (ProcessRole::cluster), or
  // null.
  Loop(StepSpec spec, HookList hooks, distribute::Cluster* cluster)
      : spec_(std::move(spec)), hooks_(std::move(hooks)), cluster_(cluster) {}

  // The graph is complete but for what the hooks add: SessionRunHook::Begin.
  absl::Status Begin(const Scope& root);
  // Variables have their values; training starts at `global_step`.
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step);
  // Steps until the data of any process ends or a hook asks to stop (then,
  // and after RequestStop, a later Run takes no step).
  absl::Status Run(const ClientSession& session, const NextBatchFn& next);
  // Training ended without error: SessionRunHook::End.
  absl::Status End(const ClientSession& session);

  // Ends training before the next step, as a hook's request does.
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }
  // After the last step (AfterCreateSession's before any).
  int64_t global_step() const { return global_step_; }
  int64_t steps_run() const { return steps_run_; }
  // Of the last step; NaN before any.
  double loss() const { return loss_; }

 private:
  // One step on `batch` with the cluster's `examples`.
  absl::Status Step(const ClientSession& session, const Batch& batch, int64_t examples);

  const StepSpec spec_;
  const HookList hooks_;
  distribute::Cluster* const cluster_;
  bool stop_requested_ = false;
  int64_t global_step_ = 0;
  int64_t steps_run_ = 0;
  double loss_ = std::numeric_limits<double>::quiet_NaN();
};

// A one-element number tensor as a double; InvalidArgument naming `what`.
absl::StatusOr<double> ScalarValue(const Tensor& t, const std::string& what);

}  // namespace training
}  // namespace towerflow

#endif  // TOWERFLOW_TRAINING_LOOP_H_
