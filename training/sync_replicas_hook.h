// SyncReplicasHook: synchronous training of a parameter-server job's
// workers through the training loop (TF's
// SyncReplicasOptimizer.make_session_run_hook).
//
//   auto sync = std::make_shared<train::SyncReplicasOptimizer>(
//       std::make_shared<train::GradientDescentOptimizer>(0.1), /*replicas_to_aggregate=*/2);
//   spec.train_op = TowerOptimizer(sync).Minimize(s, spec.loss, global_step);
//   spec.training_hooks.push_back(std::make_shared<training::SyncReplicasHook>(sync));
//
// Begin adds the initial tokens' op; AfterCreateSession, once the variables
// have their values, starts the replica (the chief's sync loop and tokens,
// another worker's local step: SyncReplicasOptimizer::StartReplica); End,
// after every other hook's (the chief's last checkpoint), ends it: the
// chief closes the token queue, so that every worker waiting for a token
// returns (its loop ends as its data would: training/loop.h), then the
// session, which its sync loop waits in, and joins the loop
// (SyncReplicasOptimizer::EndReplica). The session cannot be used after
// the chief's End: the Estimator runs this hook's End last.
#ifndef TOWERFLOW_TRAINING_SYNC_REPLICAS_HOOK_H_
#define TOWERFLOW_TRAINING_SYNC_REPLICAS_HOOK_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "train/sync_replicas_optimizer.h"
#include "training/hooks.h"

namespace towerflow {
namespace training {

class SyncReplicasHook : public SessionRunHook {
 public:
  // `is_chief` unset: the front end sets it (set_chief) from this process's
  // role, as the Estimator does. `num_tokens`: GetInitTokensOp's (-1: TF's
  // default, replicas_to_aggregate; 0: lock-step from the first update).
  explicit SyncReplicasHook(std::shared_ptr<train::SyncReplicasOptimizer> optimizer,
                            std::optional<bool> is_chief = std::nullopt, int num_tokens = -1)
      : optimizer_(std::move(optimizer)), is_chief_(is_chief), num_tokens_(num_tokens) {}

  // Sets the role when the constructor left it unset.
  void set_chief(bool is_chief) {
    if (!is_chief_.has_value()) is_chief_ = is_chief;
  }

  absl::Status Begin(const Scope& root) override;
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status End(const ClientSession& session, int64_t global_step) override;

  // End's work, once: End calls it, and a front end calls it before the
  // session goes when training failed, so that the workers and the chief's
  // sync loop do not wait for this process forever.
  absl::Status Stop(const ClientSession& session);

  // The chief's aggregated updates so far (each advanced the global step
  // once); 0 on another worker.
  int64_t updates() const { return runner_ != nullptr ? runner_->runs() : 0; }

 private:
  absl::Status CheckRole() const;

  const std::shared_ptr<train::SyncReplicasOptimizer> optimizer_;
  std::optional<bool> is_chief_;
  const int num_tokens_;
  std::unique_ptr<train::QueueRunner> runner_;
  bool started_ = false, stopped_ = false;
};

}  // namespace training
}  // namespace towerflow

#endif  // TOWERFLOW_TRAINING_SYNC_REPLICAS_HOOK_H_
