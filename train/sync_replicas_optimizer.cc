#include "train/sync_replicas_optimizer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/collections.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/queue_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gradients.h"
#include "ops/variables.h"

namespace towerflow {
namespace train {

SyncReplicasOptimizer::SyncReplicasOptimizer(std::shared_ptr<Optimizer> optimizer,
                                             int replicas_to_aggregate, int total_num_replicas)
    : Optimizer(absl::StrCat("Sync_", optimizer->name())),
      optimizer_(std::move(optimizer)),
      replicas_to_aggregate_(replicas_to_aggregate),
      total_num_replicas_(total_num_replicas < 0 ? replicas_to_aggregate : total_num_replicas) {}

std::vector<GradAndVar> SyncReplicasOptimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  return optimizer_->ComputeGradients(scope, loss, var_list);
}

Variable SyncReplicasOptimizer::GetSlot(const Variable& var, const std::string& slot) const {
  return optimizer_->GetSlot(var, slot);
}

Operation SyncReplicasOptimizer::ApplyDense(const Scope& scope, const Output&, const Variable&) {
  scope.UpdateStatus(absl::InternalError("SyncReplicasOptimizer applies through its optimizer"));
  return Operation();
}

Operation SyncReplicasOptimizer::ApplyGradients(const Scope& scope,
                                                const std::vector<GradAndVar>& grads_and_vars,
                                                const std::optional<Variable>& global_step) {
  absl::Status s;
  if (!global_step.has_value()) {
    s = absl::InvalidArgumentError("Global step is required to check staleness");
  } else if (replicas_to_aggregate_ < 1 || total_num_replicas_ < 1) {
    s = absl::InvalidArgumentError(absl::StrCat(
        "SyncReplicasOptimizer needs replicas_to_aggregate >= 1 and total_num_replicas >= 1, got ",
        replicas_to_aggregate_, " and ", total_num_replicas_));
  } else if (global_step_.has_value()) {
    s = absl::FailedPreconditionError("SyncReplicasOptimizer::ApplyGradients called twice");
  } else {
    absl::StatusOr<Operation> train_op = BuildSync(scope, grads_and_vars, *global_step);
    if (train_op.ok()) return *train_op;
    s = train_op.status();
  }
  scope.UpdateStatus(s);
  return Operation();
}

absl::StatusOr<Operation> SyncReplicasOptimizer::BuildSync(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const Variable& global_step) {
  std::vector<const GradAndVar*> with_grad;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.grad.is_none()) with_grad.push_back(&gv);
  }
  if (with_grad.empty()) return absl::InvalidArgumentError("Must supply at least one variable");
  global_step_ = global_step;
  const DataType step_dtype = global_step.dtype();
  const Scope on_step = scope.ColocateWith(global_step.handle());
  const Output step_value = global_step.value(on_step);

  // The worker's local step lives on the worker (colocated with an op of
  // the caller's device, out of the device setter's reach).
  const Operation anchor = ops::NoOp(scope.WithOpName("sync_rep_local_anchor"));
  VariableOptions local;
  local.trainable = false;
  local.collections = {GraphKeys::kLocalVariables};
  const Variable local_step =
      GetVariable(scope.ColocateWith(anchor), "sync_rep_local_step", TensorShape({}), step_dtype,
                  initializers::Zeros(), local);
  TW_RETURN_IF_ERROR(scope.status());
  const Operation local_step_init = ops::AssignVariableOp(
      scope.ColocateWith(local_step.handle()).WithOpName("sync_rep_local_step_init"),
      local_step.handle(), step_value);

  // Per variable: its accumulator, the worker's apply, the chief's take.
  const Scope sync = scope.NewSubScope("sync_replicas");
  std::vector<Operation> applies, set_steps;
  std::vector<GradAndVar> aggregated;
  for (const GradAndVar* gv : with_grad) {
    const Scope at_var = sync.ColocateWith(gv->var.handle());
    const Output grad = Densify(at_var, gv->grad);
    TW_RETURN_IF_ERROR(at_var.status());
    const Output accumulator = ops::ResourceConditionalAccumulator(
        at_var, grad.type(), gv->var.shape(),
        ops::ResourceConditionalAccumulator::Attrs().SharedName(gv->var.name() + "/grad_accum"));
    applies.push_back(
        ops::ResourceAccumulatorApplyGradient(at_var, accumulator, local_step.value(), grad)
            .operation);
    const Output num_required = ops::Const(at_var, replicas_to_aggregate_);
    aggregated.push_back(
        {ops::ResourceAccumulatorTakeGradient(at_var, accumulator, num_required, grad.type())
             .average,
         gv->var});
    set_steps.push_back(
        ops::ResourceAccumulatorSetGlobalStep(at_var, accumulator, step_value).operation);
  }
  TW_RETURN_IF_ERROR(scope.status());
  const Operation update = optimizer_->ApplyGradients(on_step, aggregated, global_step);
  TW_RETURN_IF_ERROR(scope.status());

  token_queue_ = ops::FIFOQueueV2(
      on_step.WithOpName("sync_token_q"), {step_dtype},
      ops::FIFOQueueV2::Attrs().Shapes({PartialTensorShape({})}).SharedName("sync_token_q"));
  // The worker: once its gradients are in, a token lets it go on.
  const Scope after_applies = on_step.WithControlDependencies(applies);
  const ops::QueueDequeueV2 token(after_applies.WithOpName("sync_token_q_Dequeue"), token_queue_,
                                  {step_dtype});
  const Operation train_op = ops::AssignVariableOp(
      scope.ColocateWith(local_step.handle()).WithOpName("sync_rep_local_step_update"),
      local_step.handle(), token[0]);

  // The chief: after the update, tokens for the next step.
  const Scope after_update = on_step.WithControlDependencies({update});
  const int tokens_per_step = std::max(total_num_replicas_, replicas_to_aggregate_);
  const Output tokens = ops::Fill(after_update, ops::Const(after_update, {tokens_per_step}),
                                  global_step.value(after_update));
  const Operation sync_op =
      ops::QueueEnqueueManyV2(after_update.WithOpName("sync_op"), token_queue_, {tokens}).operation;

  // The chief's end: the workers waiting for a token get OutOfRange.
  const Operation close_tokens =
      ops::QueueCloseV2(on_step.WithOpName("sync_token_q_Close"), token_queue_,
                        ops::QueueCloseV2::Attrs().CancelPendingEnqueues(true))
          .operation;

  std::vector<Operation> chief_init = set_steps;
  chief_init.push_back(local_step_init);
  const Operation chief_init_op =
      ops::NoOp(scope.WithControlDependencies(chief_init).WithOpName("chief_init"));
  TW_RETURN_IF_ERROR(scope.status());
  local_step_init_op_ = local_step_init.node()->name();
  sync_op_ = sync_op.node()->name();
  chief_init_op_ = chief_init_op.node()->name();
  close_tokens_op_ = close_tokens.node()->name();
  return train_op;
}

absl::StatusOr<Operation> SyncReplicasOptimizer::GetInitTokensOp(const Scope& scope,
                                                                 int num_tokens) {
  if (!global_step_.has_value()) {
    return absl::FailedPreconditionError(
        "GetInitTokensOp() should be called after ApplyGradients()");
  }
  const int needed = replicas_to_aggregate_ - total_num_replicas_;
  if (num_tokens == -1) {
    num_tokens = replicas_to_aggregate_;
  } else if (num_tokens < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("Too few tokens to finish the first step: ", num_tokens, " (given) vs ",
                     needed, " (needed)"));
  }
  Operation init;
  if (num_tokens == 0) {
    init = ops::NoOp(scope.WithOpName("no_init_tokens"));
  } else {
    const Scope on_step = scope.ColocateWith(global_step_->handle());
    const Output tokens =
        ops::Fill(on_step, ops::Const(on_step, {num_tokens}), global_step_->value(on_step));
    init = ops::QueueEnqueueManyV2(on_step.WithOpName("init_tokens"), token_queue_, {tokens})
               .operation;
  }
  TW_RETURN_IF_ERROR(scope.status());
  init_tokens_op_ = init.node()->name();
  return init;
}

absl::Status SyncReplicasOptimizer::StartReplica(Session* session, bool is_chief,
                                                 std::unique_ptr<QueueRunner>* runner) const {
  if (!global_step_.has_value()) {
    return absl::FailedPreconditionError(
        "SyncReplicasOptimizer::ApplyGradients should be called before StartReplica");
  }
  if (!is_chief) return session->Run({}, {}, {local_step_init_op_}, nullptr);
  if (init_tokens_op_.empty()) {
    return absl::FailedPreconditionError(
        "the chief's StartReplica needs GetInitTokensOp's op in the graph");
  }
  TW_RETURN_IF_ERROR(session->Run({}, {}, {chief_init_op_}, nullptr));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {init_tokens_op_}, nullptr));
  *runner = std::make_unique<QueueRunner>(session, std::vector<std::string>{sync_op_});
  (*runner)->Start();
  return absl::OkStatus();
}

absl::Status SyncReplicasOptimizer::EndReplica(Session* session, bool is_chief,
                                               std::unique_ptr<QueueRunner>* runner) const {
  if (!is_chief) return absl::OkStatus();
  if (close_tokens_op_.empty()) {
    return absl::FailedPreconditionError(
        "SyncReplicasOptimizer::ApplyGradients should be called before EndReplica");
  }
  absl::Status status = session->Run({}, {}, {close_tokens_op_}, nullptr);
  status.Update(session->Close());
  if (*runner != nullptr) status.Update((*runner)->Join());
  return status;
}

}  // namespace train
}  // namespace towerflow
