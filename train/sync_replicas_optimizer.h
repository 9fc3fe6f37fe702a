// SyncReplicasOptimizer: TF 1.x's synchronous training over parameter-server
// tasks (tf.train.SyncReplicasOptimizer).
//
// Each worker computes its gradients as usual and adds them to a
// conditional accumulator per variable, on the variable's ps task, tagged
// with the worker's local step; then it takes a token from the token queue
// on the global step's task, which lets it start its next step. The chief
// worker runs the sync op in a loop of its own (QueueRunner): it waits until
// every accumulator holds `replicas_to_aggregate` gradients of the current
// step, applies their mean with the wrapped optimizer, advances the global
// step once, and puts max(total_num_replicas, replicas_to_aggregate) tokens
// carrying the new global step into the queue. A gradient computed at a step
// older than the accumulator's (a slow worker's) is dropped.
//
//   auto sync = std::make_shared<SyncReplicasOptimizer>(
//       std::make_shared<GradientDescentOptimizer>(0.1), /*replicas_to_aggregate=*/2,
//       /*total_num_replicas=*/2);
//   Operation train_op = sync->Minimize(root, loss, global_step);   // or under TowerOptimizer
//   TW_RETURN_IF_ERROR(sync->GetInitTokensOp(root, /*num_tokens=*/0).status());
//   ... session over the cluster, variables initialized by the chief ...
//   std::unique_ptr<QueueRunner> runner;
//   TW_RETURN_IF_ERROR(sync->StartReplica(session, is_chief, &runner));
//   ... session->Run(train_op) ...
//   TW_RETURN_IF_ERROR(sync->EndReplica(session, is_chief, &runner));  // the chief:
//       // closes the token queue (the workers return), the session, joins the loop
//
// Through the Estimator, training::SyncReplicasHook does StartReplica and
// EndReplica (TF's make_session_run_hook).
//
// Tokens at the start: TF's default (GetInitTokensOp with num_tokens = -1)
// puts replicas_to_aggregate tokens in, so each worker's first step does not
// wait; a fast worker may then add two gradients to the first update.
// num_tokens = 0 starts in lock-step: every update then averages exactly one
// gradient of each of replicas_to_aggregate workers.
//
// Sparse gradients are densified before they are accumulated (TF keeps them
// sparse in a SparseConditionalAccumulator).
#ifndef TOWERFLOW_TRAIN_SYNC_REPLICAS_OPTIMIZER_H_
#define TOWERFLOW_TRAIN_SYNC_REPLICAS_OPTIMIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "runtime/session.h"
#include "train/optimizer.h"
#include "train/queue_runner.h"

namespace towerflow {
namespace train {

class SyncReplicasOptimizer : public Optimizer {
 public:
  // total_num_replicas < 0: replicas_to_aggregate.
  SyncReplicasOptimizer(std::shared_ptr<Optimizer> optimizer, int replicas_to_aggregate,
                        int total_num_replicas = -1);

  std::vector<GradAndVar> ComputeGradients(
      const Scope& scope, const Output& loss,
      const std::vector<Variable>& var_list = {}) const override;

  // Builds the accumulators, the token queue, the chief's sync op and the
  // worker's train op (returned: apply to the accumulators, take a token,
  // remember its step). InvalidArgument without a global step ("Global step
  // is required to check staleness") or without gradients.
  Operation ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                           const std::optional<Variable>& global_step = {}) override;

  Variable GetSlot(const Variable& var, const std::string& slot) const override;

  // The names of the ops ApplyGradients made (names, so that they outlive
  // the Scope: the session runs the graph exported from it). The chief's
  // first op: its local step and every accumulator's step become the global
  // step.
  const std::string& chief_init_op() const { return chief_init_op_; }
  // Another worker's first op: its local step becomes the global step.
  const std::string& local_step_init_op() const { return local_step_init_op_; }
  // What the chief's QueueRunner runs: one aggregated update.
  const std::string& sync_op() const { return sync_op_; }

  // The op that puts `num_tokens` tokens in the queue (-1: TF's default,
  // replicas_to_aggregate); a NoOp for none. The chief's StartReplica runs
  // the last one made. InvalidArgument when too few for the first update
  // (fewer than replicas_to_aggregate - total_num_replicas);
  // FailedPrecondition before ApplyGradients.
  absl::StatusOr<Operation> GetInitTokensOp(const Scope& scope, int num_tokens = -1);

  // TF's hook after the session is made (variables initialized): the chief
  // runs chief_init_op and the init tokens op and starts the sync loop in
  // `*runner`; another worker runs local_step_init_op. The ops must be in the
  // session's graph. FailedPrecondition for the chief when GetInitTokensOp
  // was not called.
  absl::Status StartReplica(Session* session, bool is_chief,
                            std::unique_ptr<QueueRunner>* runner) const;

  // The chief's end of training, after its last checkpoint: closes the
  // token queue (every worker waiting for a token, or asking for one later,
  // gets OutOfRange, which ends its training loop: TF's workers waited
  // forever), closes `session` (the sync loop waits for gradients no worker
  // will send) and joins `*runner`, returning its error. Another worker has
  // nothing to end (OK). The session must be the one StartReplica got.
  absl::Status EndReplica(Session* session, bool is_chief,
                          std::unique_ptr<QueueRunner>* runner) const;

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  absl::StatusOr<Operation> BuildSync(const Scope& scope,
                                      const std::vector<GradAndVar>& grads_and_vars,
                                      const Variable& global_step);

  const std::shared_ptr<Optimizer> optimizer_;
  const int replicas_to_aggregate_;
  const int total_num_replicas_;
  std::optional<Variable> global_step_;
  Output token_queue_;  // valid while the Scope's graph lives
  std::string chief_init_op_, local_step_init_op_, sync_op_, init_tokens_op_, close_tokens_op_;
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_SYNC_REPLICAS_OPTIMIZER_H_
