#include "training/sync_replicas_hook.h"

#include "core/status_macros.h"

namespace towerflow {
namespace training {

absl::Status SyncReplicasHook::CheckRole() const {
  if (optimizer_ == nullptr) {
    return absl::InvalidArgumentError("SyncReplicasHook: the optimizer is null");
  }
  if (!is_chief_.has_value()) {
    return absl::FailedPreconditionError(
        "SyncReplicasHook: whether this worker is the chief is not set (give it to the "
        "constructor, or run the hook through the Estimator, which sets it)");
  }
  return absl::OkStatus();
}

absl::Status SyncReplicasHook::Begin(const Scope& root) {
  TW_RETURN_IF_ERROR(CheckRole());
  return optimizer_->GetInitTokensOp(root, num_tokens_).status();
}

absl::Status SyncReplicasHook::AfterCreateSession(const ClientSession& session, int64_t) {
  TW_RETURN_IF_ERROR(CheckRole());
  started_ = true;
  return optimizer_->StartReplica(session.session(), *is_chief_, &runner_);
}

absl::Status SyncReplicasHook::End(const ClientSession& session, int64_t) {
  TW_RETURN_IF_ERROR(CheckRole());
  return Stop(session);
}

absl::Status SyncReplicasHook::Stop(const ClientSession& session) {
  if (!started_ || stopped_) return absl::OkStatus();
  stopped_ = true;
  return optimizer_->EndReplica(session.session(), *is_chief_, &runner_);
}

}  // namespace training
}  // namespace towerflow
