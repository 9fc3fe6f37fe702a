// Server: the tasks' worker service (graphs registered and run for other
// tasks, the steps' rendezvous, start and stop); the MPI messages are in
// server_transport.cc, the class they share in server_impl.h.
#include "distribute/server.h"

#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/mpi_status.h"
#include "distribute/server_impl.h"
#include "distribute/worker.pb.h"
#include "graph/graph_io.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"

namespace towerflow {
namespace distribute {

using server_internal::kEndedStepsRemembered;
using server_internal::StatusOf;

namespace {

// A partition registered on another task.
class MpiRemotePartition final : public RemotePartition {
 public:
  MpiRemotePartition(Server::Impl* impl, int rank, int64_t handle)
      : impl_(impl), rank_(rank), handle_(handle) {}

  ~MpiRemotePartition() override {
    WorkerRequest request;
    request.mutable_deregister_graph()->set_graph_handle(handle_);
    impl_->SendRequest(rank_, request).IgnoreError();  // a task gone has dropped it
  }

  void RunAsync(int64_t step_id, std::function<void(absl::Status)> done) override {
    impl_->AddStepTask(step_id, rank_);
    WorkerRequest request;
    request.mutable_run_graph()->set_graph_handle(handle_);
    request.mutable_run_graph()->set_step_id(step_id);
    impl_->Call(rank_, std::move(request), "RunGraph",
                [done = std::move(done)](const WorkerResponse& r) { done(StatusOf(r)); });
  }

 private:
  Server::Impl* const impl_;
  const int rank_;
  const int64_t handle_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RemotePartition>> Server::Impl::Register(
    Device* device, const GraphDef& partition, const GraphOptimizerOptions& optimizer) {
  const int rank = RankOfDevice(device->parsed_name());
  if (rank < 0 || rank == rank_) {
    return absl::InternalError(absl::StrCat("device ", device->name(), " is not another task's"));
  }
  WorkerRequest request;
  RegisterGraphRequest* reg = request.mutable_register_graph();
  reg->set_device(device->name());
  *reg->mutable_graph_def() = partition;
  reg->set_constant_folding(optimizer.constant_folding);
  reg->set_remapping(optimizer.remapping);
  reg->set_pad_fusion(optimizer.pad_fusion);
  absl::Notification answered;
  WorkerResponse response;
  Call(rank, std::move(request), "RegisterGraph", [&](const WorkerResponse& r) {
    response = r;
    answered.Notify();
  });
  answered.WaitForNotification();
  TW_RETURN_IF_ERROR(StatusOf(response));
  return std::unique_ptr<RemotePartition>(
      new MpiRemotePartition(this, rank, response.graph_handle()));
}

std::shared_ptr<Rendezvous> Server::Impl::FindStep(int64_t step_id, bool create) {
  absl::MutexLock lock(&mu_);
  auto it = steps_.find(step_id);
  if (it != steps_.end()) return it->second.rendezvous;
  if (!create || ended_steps_.contains(step_id)) return nullptr;
  Step& step = steps_[step_id];
  step.rendezvous = std::make_shared<StepRendezvous>(this, step_id);
  return step.rendezvous;
}

void Server::Impl::ForgetStepLocked(int64_t step_id) {
  steps_.erase(step_id);
  if (ended_steps_.insert(step_id).second) ended_order_.push_back(step_id);
  while (ended_order_.size() > kEndedStepsRemembered) {
    ended_steps_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
}

void Server::Impl::HandleRequest(int source, WorkerRequest request) {
  const int64_t id = request.request_id();
  switch (request.request_case()) {
    case WorkerRequest::kRegisterGraph: {
      absl::StatusOr<int64_t> handle = RegisterLocal(request.register_graph());
      Reply(source, id, handle.status(), handle.ok() ? *handle : 0);
      return;
    }
    case WorkerRequest::kRunGraph:
      RunLocal(source, id, request.run_graph());
      return;
    case WorkerRequest::kDeregisterGraph: {
      absl::MutexLock lock(&mu_);
      graphs_.erase(request.deregister_graph().graph_handle());
      return;
    }
    case WorkerRequest::kAbortStep: {
      const AbortStepRequest& abort = request.abort_step();
      std::shared_ptr<Rendezvous> rendezvous = FindStep(abort.step_id(), /*create=*/true);
      if (rendezvous != nullptr) {
        rendezvous->StartAbort(
            absl::Status(static_cast<absl::StatusCode>(abort.code()), abort.message()));
      }
      return;
    }
    case WorkerRequest::kCleanupStep:
      CleanupLocal(request.cleanup_step().step_id());
      return;
    case WorkerRequest::kTaskDone: {
      absl::MutexLock lock(&mu_);
      if (tasks_[source].job != "ps") ++workers_done_;
      ++tasks_done_;
      return;
    }
    case WorkerRequest::REQUEST_NOT_SET:
      break;
  }
  if (id != 0) Reply(source, id, absl::InvalidArgumentError("empty request"));
}

absl::StatusOr<int64_t> Server::Impl::RegisterLocal(const RegisterGraphRequest& request) {
  TW_ASSIGN_OR_RETURN(Device * device, local_->Lookup(request.device()));
  GraphDef def = request.graph_def();
  GraphOptimizerOptions optimizer;
  optimizer.constant_folding = request.constant_folding();
  optimizer.remapping = request.remapping();
  optimizer.pad_fusion = request.pad_fusion();
  TW_RETURN_IF_ERROR(OptimizePartition(optimizer, device, inter_op_.get(), &def));
  auto graph = std::make_unique<Graph>();
  graph->set_allow_internal_names(true);
  TW_RETURN_IF_ERROR(ImportGraphDef(def, graph.get()));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                      Executor::Create(std::move(graph), device));
  absl::MutexLock lock(&mu_);
  const int64_t handle = next_graph_++;
  graphs_[handle].executor = std::move(executor);
  return handle;
}

void Server::Impl::RunLocal(int source, int64_t request_id, const RunGraphRequest& request) {
  struct Run {
    std::shared_ptr<Executor> executor;
    std::shared_ptr<Rendezvous> rendezvous;
    Executor::Args args;
  };
  auto run = std::make_shared<Run>();
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(request.graph_handle());
    if (it != graphs_.end()) run->executor = it->second.executor;
  }
  if (run->executor == nullptr) {
    Reply(source, request_id,
          absl::NotFoundError(
              absl::StrCat("task ", task_.name(), " has no graph ", request.graph_handle())));
    return;
  }
  run->rendezvous = FindStep(request.step_id(), /*create=*/true);
  if (run->rendezvous == nullptr) {
    Reply(source, request_id,
          absl::AbortedError(
              absl::StrCat("step ", request.step_id(), " has ended on task ", task_.name())));
    return;
  }
  run->args.step_id = request.step_id();
  run->args.rendezvous = run->rendezvous.get();
  run->args.inter_op_pool = inter_op_.get();
  Rendezvous* rendezvous = run->rendezvous.get();
  run->args.on_error = [rendezvous](const absl::Status& s) {
    rendezvous->StartAbort(absl::CancelledError(
        absl::StrCat("Step cancelled because of an error elsewhere: ", s.message())));
  };
  Executor* executor = run->executor.get();
  executor->RunAsync(
      run->args, [this, run, source, request_id](absl::Status s) { Reply(source, request_id, s); });
}

void Server::Impl::CleanupLocal(int64_t step_id) {
  {
    absl::MutexLock lock(&mu_);
    ForgetStepLocked(step_id);
  }
  const std::string container = StepContainerName(step_id);
  for (Device* d : local_->devices()) d->resource_manager()->Cleanup(container);
}

void Server::Impl::Shutdown() {
  Stop();
  // Every task's TaskDone, its last message, must arrive before the
  // communicator goes: a message left unreceived on it could be matched on
  // the next server's (MPI reuses communicator ids).
  bool drained = true;
  if (poller_.joinable()) {
    absl::MutexLock lock(&mu_);
    const auto all_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return tasks_done_ >= size_ - 1 || !poll_error_.ok();
    };
    drained = mu_.AwaitWithTimeout(absl::Condition(&all_done), timeout_) && poll_error_.ok();
  }
  stopping_.store(true);
  if (poller_.joinable()) poller_.join();
  handlers_.reset();  // waits for the handlers running
  std::vector<PendingCall> calls;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, call] : calls_) calls.push_back(std::move(call));
    calls_.clear();
    graphs_.clear();
    steps_.clear();
  }
  WorkerResponse r;
  r.set_code(static_cast<int32_t>(absl::StatusCode::kCancelled));
  r.set_message(absl::StrCat("the server of task ", task_.name(), " has stopped"));
  for (PendingCall& call : calls) call.done(r);
  // A task that never said it was done may still send: its messages then
  // stay on this communicator, which is left alone.
  if (comm_ != MPI_COMM_NULL && drained) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  const ClusterSpec& spec = options.cluster;
  if (spec.num_tasks() == 0) return absl::InvalidArgumentError("Server needs a ClusterSpec");
  TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
  if (cluster->size() != spec.num_tasks()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClusterSpec ", spec.DebugString(), " has ", spec.num_tasks(), " tasks, but ",
        cluster->size(), " processes were started (mpirun -np ", spec.num_tasks(), ")"));
  }
  TaskId task;
  if (options.job_name.empty()) {
    TW_ASSIGN_OR_RETURN(task, spec.TaskOfRank(cluster->rank()));
  } else {
    task = TaskId{options.job_name, options.task_index};
    if (spec.RankOf(task) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", task.name(), " is not in ClusterSpec ", spec.DebugString()));
    }
  }
  auto impl = std::make_unique<Impl>(options, task, cluster->rank(), cluster->size());
  TW_RETURN_IF_ERROR(impl->Init(cluster));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

const TaskId& Server::task() const { return impl_->task(); }
const ClusterSpec& Server::cluster() const { return impl_->cluster(); }
bool Server::is_chief() const {
  // TF's rule (RunConfig): task 0 of the "chief" job where the cluster has
  // one, else worker 0.
  const std::string chief_job = impl_->cluster().num_tasks("chief") > 0 ? "chief" : "worker";
  return impl_->task().job == chief_job && impl_->task().task == 0;
}

absl::StatusOr<std::unique_ptr<Session>> Server::NewSession(const SessionOptions& options) {
  return impl_->NewSession(options);
}

absl::Status Server::Join() { return impl_->Join(); }
void Server::Stop() { impl_->Stop(); }
int64_t Server::bytes_sent() const { return impl_->bytes_sent(); }
int64_t Server::bytes_received() const { return impl_->bytes_received(); }

}  // namespace distribute
}  // namespace towerflow
