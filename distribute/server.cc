#include "distribute/server.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/mpi_status.h"
#include "distribute/worker.pb.h"
#include "graph/graph_io.h"
#include "runtime/device_mgr.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"
#include "runtime/remote_tasks.h"

namespace towerflow {
namespace distribute {
namespace {

// Message tags on the server's communicator; tensor bytes use the tags from
// kFirstDataTag up, one per transfer in flight from a sender.
constexpr int kRequestTag = 1;
constexpr int kResponseTag = 2;
constexpr int kTensorTag = 3;
constexpr int kFirstDataTag = 16;
// MPI counts are ints: larger tensors go in pieces of this many bytes.
constexpr int64_t kMaxMessageBytes = int64_t{1} << 30;
// Step ids carry the rank of the process that runs the step above this bit.
constexpr int kStepRankShift = 40;
// Ended steps remembered, so that values arriving for them (a step that
// failed before its receiver ran) are dropped instead of kept.
constexpr size_t kEndedStepsRemembered = 1 << 14;

// One record per process, gathered at start: its task and its devices.
struct TaskRecord {
  int32_t job = -1;  // index in the spec's jobs
  int32_t task = -1;
  int32_t num_cpus = 0;
  int32_t num_gpus = 0;
};

absl::Status StatusOf(const WorkerResponse& r) {
  return absl::Status(static_cast<absl::StatusCode>(r.code()), r.message());
}

// Whether `device` (a parsed full name) is a device of `task`.
bool OnTask(const DeviceSpec& device, const TaskId& task) {
  return device.job == task.job && device.task == task.task;
}

// The receiving device named by rendezvous key "src;incarnation;dst;tensor;0:0".
absl::StatusOr<DeviceSpec> RecvDeviceOfKey(const std::string& key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  if (parts.size() != 5) return absl::InternalError(absl::StrCat("bad rendezvous key '", key, "'"));
  return DeviceSpec::Parse(parts[2]);
}

bool IsMemcpyType(DataType dtype) { return dtype != DT_STRING && dtype != DT_RESOURCE; }

}  // namespace

class Server::Impl final : public RemoteTasks {
 public:
  Impl(const ServerOptions& options, TaskId task, int rank, int size)
      : options_(options), task_(std::move(task)), rank_(rank), size_(size) {}

  ~Impl() override { Shutdown(); }

  absl::Status Init(Cluster* cluster) {
    const SessionOptions& config = options_.config;
    intra_op_ = std::make_unique<ThreadPool>("intra_op", config.intra_op_parallelism_threads > 0
                                                             ? config.intra_op_parallelism_threads
                                                             : DefaultNumThreads());
    // The executors' nodes, and the requests of other tasks, which wait for
    // nothing (RunGraph starts an executor and returns).
    inter_op_ = std::make_unique<ThreadPool>("inter_op", config.inter_op_parallelism_threads > 0
                                                             ? config.inter_op_parallelism_threads
                                                             : DefaultNumThreads());
    handlers_ = std::make_unique<ThreadPool>("server", 2);
    TW_ASSIGN_OR_RETURN(local_,
                        DeviceMgr::Create(config.device_count, task_.name(), intra_op_.get()));
    TW_ASSIGN_OR_RETURN(
        const MemoryLimits limits,
        MemoryLimits::FromOptions(config.max_tensor_bytes, config.host_memory_budget_bytes));
    for (Device* d : local_->devices()) d->set_memory_limits(limits);
    timeout_ = cluster->collective_timeout();

    TaskRecord mine;
    const std::vector<std::string> jobs = options_.cluster.jobs();
    mine.job = static_cast<int32_t>(std::find(jobs.begin(), jobs.end(), task_.job) - jobs.begin());
    mine.task = task_.task;
    for (Device* d : local_->devices()) {
      if (d->device_type() == kDeviceCpu) ++mine.num_cpus;
      if (d->device_type() == kDeviceGpu) ++mine.num_gpus;
    }
    std::vector<TaskRecord> records(size_);
    if (size_ > 1) {
      TW_MPI_RETURN_IF_ERROR(MPI_Allgather(&mine, sizeof(TaskRecord), MPI_BYTE, records.data(),
                                           sizeof(TaskRecord), MPI_BYTE, MPI_COMM_WORLD));
    } else {
      records[0] = mine;
    }
    // Every task once.
    rank_of_.assign(options_.cluster.num_tasks(), -1);
    tasks_.resize(size_);
    for (int r = 0; r < size_; ++r) {
      const TaskRecord& rec = records[r];
      if (rec.job < 0 || rec.job >= static_cast<int>(jobs.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("process ", r, " has a task of no job of the ClusterSpec"));
      }
      const TaskId t{jobs[rec.job], rec.task};
      const int slot = options_.cluster.RankOf(t);
      if (slot < 0) {
        return absl::InvalidArgumentError(absl::StrCat("process ", r, "'s task ", t.name(),
                                                       " is not in the ClusterSpec ",
                                                       options_.cluster.DebugString()));
      }
      if (rank_of_[slot] != -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("processes ", rank_of_[slot], " and ", r, " are both task ", t.name()));
      }
      rank_of_[slot] = r;
      tasks_[r] = t;
      if (r == rank_) continue;
      for (const auto& [type, n] : {std::pair<const char*, int>{kDeviceCpu, rec.num_cpus},
                                    std::pair<const char*, int>{kDeviceGpu, rec.num_gpus}}) {
        for (int i = 0; i < n; ++i) {
          standins_.push_back(std::make_unique<Device>(DeviceName(t.name(), type, i), type,
                                                       CpuAllocator(), intra_op_.get()));
          standin_set_.insert(standins_.back().get());
        }
      }
    }
    std::vector<Device*> all = local_->devices();
    for (const auto& d : standins_) all.push_back(d.get());
    cluster_devices_ = DeviceMgr::Borrowing(std::move(all));
    for (const TaskId& t : tasks_) {
      if (t.job != "ps" && !(t == task_)) ++workers_to_wait_for_;
    }
    if (size_ == 1) return absl::OkStatus();
    TW_MPI_RETURN_IF_ERROR(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    TW_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    int* tag_ub = nullptr;
    int found = 0;
    TW_MPI_RETURN_IF_ERROR(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found));
    max_tag_ = found && tag_ub != nullptr ? *tag_ub : 32767;
    poller_ = std::thread([this] { PollLoop(); });
    return absl::OkStatus();
  }

  const TaskId& task() const { return task_; }
  const ClusterSpec& cluster() const { return options_.cluster; }

  absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
    ClusterSessionEnv env;
    env.devices = cluster_devices_.get();
    env.remote = this;
    TW_ASSIGN_OR_RETURN(env.task, DeviceSpec::Parse(task_.name()));
    return NewClusterSession(options, env);
  }

  absl::Status Join() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](Impl* impl) ABSL_EXCLUSIVE_LOCKS_REQUIRED(impl->mu_) {
          return impl->workers_done_ >= impl->workers_to_wait_for_ || !impl->poll_error_.ok();
        },
        this));
    return poll_error_;
  }

  // Tells every other task that this one is done, its last message to them:
  // nothing is sent after it.
  void Stop() {
    absl::MutexLock lock(&send_mu_);
    if (stopped_) return;
    for (int r = 0; r < size_ && comm_ != MPI_COMM_NULL; ++r) {
      if (r == rank_) continue;
      WorkerRequest request;
      request.mutable_task_done();
      SendRequestLocked(r, request).IgnoreError();  // a task gone already needs no word
    }
    stopped_ = true;
  }

  int64_t bytes_sent() const { return bytes_sent_.load(); }
  int64_t bytes_received() const { return bytes_received_.load(); }

  // RemoteTasks.
  bool IsRemote(const Device* device) const override { return standin_set_.contains(device); }

  absl::StatusOr<std::unique_ptr<RemotePartition>> Register(
      Device* device, const GraphDef& partition, const GraphOptimizerOptions& optimizer) override;

  int64_t NewStepId() override {
    return (int64_t{rank_ + 1} << kStepRankShift) | next_step_.fetch_add(1);
  }

  std::shared_ptr<Rendezvous> BeginStep(int64_t step_id) override {
    return FindStep(step_id, /*create=*/true);
  }

  void EndStep(int64_t step_id) override {
    absl::flat_hash_set<int> ranks;
    {
      absl::MutexLock lock(&mu_);
      auto it = steps_.find(step_id);
      if (it == steps_.end()) return;
      ranks = std::move(it->second.ranks);
      ForgetStepLocked(step_id);
    }
    for (int r : ranks) {
      WorkerRequest request;
      request.mutable_cleanup_step()->set_step_id(step_id);
      SendRequest(r, request).IgnoreError();  // the step is over either way
    }
  }

  // Step `step_id` also runs on process `rank` (its aborts and end go there).
  void AddStepTask(int64_t step_id, int rank) {
    absl::MutexLock lock(&mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) it->second.ranks.insert(rank);
  }

  // Sends `value` for step `step_id` under `key` to process `rank`.
  absl::Status SendTensor(int rank, int64_t step_id, const std::string& key, const Tensor& value,
                          bool is_dead);

  // Tells the processes running step `step_id` to abort it (this process
  // runs the step).
  void AbortRemoteParts(int64_t step_id, const absl::Status& status) {
    absl::flat_hash_set<int> ranks;
    {
      absl::MutexLock lock(&mu_);
      auto it = steps_.find(step_id);
      if (it == steps_.end()) return;
      ranks = it->second.ranks;
    }
    for (int r : ranks) {
      WorkerRequest request;
      AbortStepRequest* abort = request.mutable_abort_step();
      abort->set_step_id(step_id);
      abort->set_code(static_cast<int32_t>(status.code()));
      abort->set_message(std::string(status.message()));
      SendRequest(r, request).IgnoreError();  // a task gone has nothing to abort
    }
  }

  int rank() const { return rank_; }
  const TaskId& TaskOf(int rank) const { return tasks_[rank]; }
  int RankOfDevice(const DeviceSpec& device) const {
    if (!device.job || !device.task) return -1;
    const int slot = options_.cluster.RankOf(TaskId{*device.job, *device.task});
    return slot < 0 ? -1 : rank_of_[slot];
  }

  // Sends `request` with a fresh id; `done` gets the answer, or an error when
  // none comes within the timeout or the server stops.
  void Call(int rank, WorkerRequest request, const char* what,
            std::function<void(const WorkerResponse&)> done);
  absl::Status SendRequest(int rank, const WorkerRequest& request);
  absl::Status SendRequestLocked(int rank, const WorkerRequest& request)
      ABSL_SHARED_LOCKS_REQUIRED(send_mu_);

 private:
  class StepRendezvous;
  struct Step {
    std::shared_ptr<StepRendezvous> rendezvous;
    absl::flat_hash_set<int> ranks;  // other processes running parts of it
  };
  struct PendingCall {
    std::function<void(const WorkerResponse&)> done;
    absl::Time deadline;
    int rank;
    std::string what;
  };
  struct RegisteredGraph {
    std::shared_ptr<Executor> executor;
  };

  std::shared_ptr<Rendezvous> FindStep(int64_t step_id, bool create);
  void ForgetStepLocked(int64_t step_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void PollLoop();
  absl::Status PollOnce(bool* got);
  absl::Status ReceiveTensor(int source, const std::string& header_bytes);
  void ExpireCalls();
  void HandleRequest(int source, WorkerRequest request);
  void Reply(int rank, int64_t request_id, const absl::Status& status, int64_t handle = 0);
  absl::StatusOr<int64_t> RegisterLocal(const RegisterGraphRequest& request);
  void RunLocal(int source, int64_t request_id, const RunGraphRequest& request);
  void CleanupLocal(int64_t step_id);
  void Shutdown();

  const ServerOptions options_;
  const TaskId task_;
  const int rank_;
  const int size_;
  std::vector<TaskId> tasks_;  // by rank
  std::vector<int> rank_of_;   // by the spec's task order
  std::unique_ptr<ThreadPool> intra_op_;
  std::unique_ptr<ThreadPool> inter_op_;
  std::unique_ptr<ThreadPool> handlers_;
  std::unique_ptr<DeviceMgr> local_;
  std::vector<std::unique_ptr<Device>> standins_;
  absl::flat_hash_set<const Device*> standin_set_;
  std::unique_ptr<DeviceMgr> cluster_devices_;
  absl::Duration timeout_ = absl::InfiniteDuration();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int max_tag_ = 32767;
  std::thread poller_;
  std::atomic<bool> stopping_{false};
  // Sends hold it shared; Stop exclusively, so that its TaskDone is the
  // last message to every task.
  absl::Mutex send_mu_;
  bool stopped_ ABSL_GUARDED_BY(send_mu_) = false;
  std::atomic<int64_t> next_step_{1};
  std::atomic<int64_t> next_request_{1};
  std::atomic<int64_t> next_data_tag_{0};
  std::atomic<int64_t> bytes_sent_{0};
  std::atomic<int64_t> bytes_received_{0};

  absl::Mutex mu_;
  absl::flat_hash_map<int64_t, Step> steps_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> ended_steps_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> ended_order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, PendingCall> calls_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, RegisteredGraph> graphs_ ABSL_GUARDED_BY(mu_);
  int64_t next_graph_ ABSL_GUARDED_BY(mu_) = 1;
  int workers_done_ ABSL_GUARDED_BY(mu_) = 0;
  int tasks_done_ ABSL_GUARDED_BY(mu_) = 0;  // of every job
  int workers_to_wait_for_ = 0;
  absl::Status poll_error_ ABSL_GUARDED_BY(mu_);
};

// A step's rendezvous on one process: values for this process's devices
// meet here, values for another task's devices leave for it at once.
class Server::Impl::StepRendezvous final : public Rendezvous {
 public:
  StepRendezvous(Impl* impl, int64_t step_id) : impl_(impl), step_id_(step_id) {}

  using Rendezvous::Send;
  absl::Status Send(const std::string& key, const Tensor& value, const Origin& origin) override {
    TW_ASSIGN_OR_RETURN(const DeviceSpec dst, RecvDeviceOfKey(key));
    if (OnTask(dst, impl_->task())) return Rendezvous::Send(key, value, origin);
    const int rank = impl_->RankOfDevice(dst);
    if (rank < 0) {
      return absl::InternalError(absl::StrCat("rendezvous key '", key, "' names no task"));
    }
    if (origin.is_dead) return impl_->SendTensor(rank, step_id_, key, Tensor(), true);
    TW_ASSIGN_OR_RETURN(const Tensor host,
                        TransferTensor(value, origin.device, origin.on_host, nullptr, true));
    return impl_->SendTensor(rank, step_id_, key, host, false);
  }

  // Delivers a value that came from another process.
  absl::Status Deliver(const std::string& key, const Tensor& value, bool is_dead) {
    Origin origin;
    origin.is_dead = is_dead;
    return Rendezvous::Send(key, value, origin);
  }

  void StartAbort(const absl::Status& status) override {
    const bool first = !aborted_.exchange(true);
    Rendezvous::StartAbort(status);
    // The process running the step tells the others; theirs tell it through
    // their RunGraph answers.
    if (first && (step_id_ >> kStepRankShift) == impl_->rank() + 1) {
      impl_->AbortRemoteParts(step_id_, status);
    }
  }

 private:
  Impl* const impl_;
  const int64_t step_id_;
  std::atomic<bool> aborted_{false};
};

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

absl::Status Server::Impl::SendRequest(int rank, const WorkerRequest& request) {
  absl::ReaderMutexLock lock(&send_mu_);
  return SendRequestLocked(rank, request);
}

absl::Status Server::Impl::SendRequestLocked(int rank, const WorkerRequest& request) {
  if (stopped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the server of task ", task_.name(), " has stopped"));
  }
  const std::string bytes = request.SerializeAsString();
  TW_MPI_RETURN_IF_ERROR(
      MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, rank, kRequestTag, comm_));
  return absl::OkStatus();
}

void Server::Impl::Call(int rank, WorkerRequest request, const char* what,
                        std::function<void(const WorkerResponse&)> done) {
  const int64_t id = next_request_.fetch_add(1);
  request.set_request_id(id);
  {
    absl::MutexLock lock(&mu_);
    if (!poll_error_.ok()) {
      WorkerResponse r;
      r.set_code(static_cast<int32_t>(poll_error_.code()));
      r.set_message(std::string(poll_error_.message()));
      done(r);
      return;
    }
    calls_[id] = PendingCall{std::move(done), absl::Now() + timeout_, rank, what};
  }
  const absl::Status sent = SendRequest(rank, request);
  if (sent.ok()) return;
  PendingCall call;
  {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    call = std::move(it->second);
    calls_.erase(it);
  }
  WorkerResponse r;
  r.set_code(static_cast<int32_t>(absl::StatusCode::kUnavailable));
  r.set_message(absl::StrCat(what, " to task ", tasks_[rank].name(), " (process ", rank,
                             ") could not be sent: ", sent.message()));
  call.done(r);
}

absl::Status Server::Impl::SendTensor(int rank, int64_t step_id, const std::string& key,
                                      const Tensor& value, bool is_dead) {
  absl::ReaderMutexLock lock(&send_mu_);
  if (stopped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the server of task ", task_.name(), " has stopped"));
  }
  TensorHeader header;
  header.set_step_id(step_id);
  header.set_key(key);
  header.set_is_dead(is_dead);
  std::string proto_bytes;
  const char* data = nullptr;
  int64_t size = 0;
  if (!is_dead) {
    header.set_dtype(value.dtype());
    value.shape().AsProto(header.mutable_shape());
    if (IsMemcpyType(value.dtype())) {
      data = static_cast<const char*>(value.raw_data());
      size = static_cast<int64_t>(value.TotalBytes());
    } else {
      header.set_as_proto(true);
      proto_bytes = value.AsProto().SerializeAsString();
      data = proto_bytes.data();
      size = static_cast<int64_t>(proto_bytes.size());
    }
  }
  if (size > 0) {
    header.set_data_tag(kFirstDataTag + static_cast<int>(next_data_tag_.fetch_add(1) %
                                                         (max_tag_ - kFirstDataTag + 1)));
  }
  const std::string header_bytes = header.SerializeAsString();
  TW_MPI_RETURN_IF_ERROR(MPI_Send(header_bytes.data(), static_cast<int>(header_bytes.size()),
                                  MPI_BYTE, rank, kTensorTag, comm_));
  for (int64_t offset = 0; offset < size; offset += kMaxMessageBytes) {
    const int n = static_cast<int>(std::min(kMaxMessageBytes, size - offset));
    TW_MPI_RETURN_IF_ERROR(
        MPI_Send(const_cast<char*>(data) + offset, n, MPI_BYTE, rank, header.data_tag(), comm_));
  }
  bytes_sent_.fetch_add(size);
  return absl::OkStatus();
}

absl::Status Server::Impl::ReceiveTensor(int source, const std::string& header_bytes) {
  TensorHeader header;
  if (!header.ParseFromString(header_bytes)) {
    return absl::DataLossError(absl::StrCat("unparsable tensor header from process ", source));
  }
  Tensor value;
  if (!header.is_dead()) {
    if (TensorElementSize(header.dtype()) == 0) {
      return absl::DataLossError(absl::StrCat("tensor '", header.key(), "' from process ", source,
                                              " has dtype ", header.dtype()));
    }
    TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorShape::FromProto(header.shape()));
    std::string proto_bytes;
    char* data = nullptr;
    int64_t size = 0;
    if (header.as_proto()) {
      MPI_Status status;
      TW_MPI_RETURN_IF_ERROR(MPI_Probe(source, header.data_tag(), comm_, &status));
      int count = 0;
      TW_MPI_RETURN_IF_ERROR(MPI_Get_count(&status, MPI_BYTE, &count));
      proto_bytes.resize(count);
      data = proto_bytes.data();
      size = count;
    } else {
      value = Tensor(header.dtype(), shape);
      data = static_cast<char*>(value.raw_data());
      size = static_cast<int64_t>(value.TotalBytes());
    }
    for (int64_t offset = 0; offset < size; offset += kMaxMessageBytes) {
      const int n = static_cast<int>(std::min(kMaxMessageBytes, size - offset));
      TW_MPI_RETURN_IF_ERROR(MPI_Recv(data + offset, n, MPI_BYTE, source, header.data_tag(), comm_,
                                      MPI_STATUS_IGNORE));
    }
    if (header.as_proto()) {
      TensorProto proto;
      if (!proto.ParseFromString(proto_bytes)) {
        return absl::DataLossError(
            absl::StrCat("unparsable tensor '", header.key(), "' from process ", source));
      }
      TW_ASSIGN_OR_RETURN(value, Tensor::FromProto(proto));
    }
    bytes_received_.fetch_add(size);
  }
  std::shared_ptr<Rendezvous> rendezvous = FindStep(header.step_id(), /*create=*/true);
  if (rendezvous == nullptr) return absl::OkStatus();  // the step has ended here: nobody waits
  // A second value under one key, or one for an aborted step, has no taker.
  static_cast<StepRendezvous*>(rendezvous.get())
      ->Deliver(header.key(), value, header.is_dead())
      .IgnoreError();
  return absl::OkStatus();
}

void Server::Impl::PollLoop() {
  int idle = 0;
  while (!stopping_.load()) {
    bool got = false;
    const absl::Status s = PollOnce(&got);
    if (!s.ok()) {
      // The transport broke: every waiting call and Join learn it.
      std::vector<PendingCall> calls;
      {
        absl::MutexLock lock(&mu_);
        poll_error_ = absl::UnavailableError(absl::StrCat(
            "task ", task_.name(), " lost its connection to the others: ", s.message()));
        for (auto& [id, call] : calls_) calls.push_back(std::move(call));
        calls_.clear();
      }
      WorkerResponse r;
      r.set_code(static_cast<int32_t>(absl::StatusCode::kUnavailable));
      r.set_message(std::string(s.message()));
      for (PendingCall& call : calls) call.done(r);
      return;
    }
    if (got) {
      idle = 0;
      continue;
    }
    // Nothing to receive: spin briefly, then sleep longer and longer (up to
    // a millisecond), so that an idle task takes no core from the busy ones.
    ++idle;
    if (idle % 64 == 0) ExpireCalls();
    if (idle < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, (idle - 63) * 20)));
    }
  }
}

absl::Status Server::Impl::PollOnce(bool* got) {
  int flag = 0;
  MPI_Message message;
  MPI_Status status;
  TW_MPI_RETURN_IF_ERROR(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &message, &status));
  if (!flag) return absl::OkStatus();
  *got = true;
  const int source = status.MPI_SOURCE;
  const int tag = status.MPI_TAG;
  int count = 0;
  TW_MPI_RETURN_IF_ERROR(MPI_Get_count(&status, MPI_BYTE, &count));
  std::string bytes(count, '\0');
  TW_MPI_RETURN_IF_ERROR(MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE));
  switch (tag) {
    case kRequestTag: {
      WorkerRequest request;
      if (!request.ParseFromString(bytes)) {
        return absl::DataLossError(absl::StrCat("unparsable request from process ", source));
      }
      handlers_->Schedule([this, source, request = std::move(request)]() mutable {
        HandleRequest(source, std::move(request));
      });
      return absl::OkStatus();
    }
    case kResponseTag: {
      WorkerResponse response;
      if (!response.ParseFromString(bytes)) {
        return absl::DataLossError(absl::StrCat("unparsable answer from process ", source));
      }
      std::function<void(const WorkerResponse&)> done;
      {
        absl::MutexLock lock(&mu_);
        auto it = calls_.find(response.request_id());
        if (it == calls_.end()) return absl::OkStatus();  // expired already
        done = std::move(it->second.done);
        calls_.erase(it);
      }
      handlers_->Schedule(
          [done = std::move(done), response = std::move(response)] { done(response); });
      return absl::OkStatus();
    }
    case kTensorTag:
      return ReceiveTensor(source, bytes);
    default:
      return absl::InternalError(
          absl::StrCat("message with unexpected tag ", tag, " from process ", source));
  }
}

void Server::Impl::ExpireCalls() {
  std::vector<PendingCall> expired;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    for (auto it = calls_.begin(); it != calls_.end();) {
      if (it->second.deadline <= now) {
        expired.push_back(std::move(it->second));
        calls_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (PendingCall& call : expired) {
    WorkerResponse r;
    r.set_code(static_cast<int32_t>(absl::StatusCode::kDeadlineExceeded));
    r.set_message(
        absl::StrCat("task ", tasks_[call.rank].name(), " (process ", call.rank,
                     ") did not answer ", call.what, " within ", absl::FormatDuration(timeout_),
                     " (hung, or busy; TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS sets the wait)"));
    call.done(r);
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

void Server::Impl::Reply(int rank, int64_t request_id, const absl::Status& status, int64_t handle) {
  WorkerResponse response;
  response.set_request_id(request_id);
  response.set_code(static_cast<int32_t>(status.code()));
  response.set_message(std::string(status.message()));
  response.set_graph_handle(handle);
  const std::string bytes = response.SerializeAsString();
  absl::ReaderMutexLock lock(&send_mu_);
  if (stopped_) return;  // the asker is told by the TaskDone instead
  // A task that cannot be answered is gone; mpirun reports it.
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, rank, kResponseTag, comm_);
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
bool Server::is_chief() const { return impl_->task().job == "worker" && impl_->task().task == 0; }

absl::StatusOr<std::unique_ptr<Session>> Server::NewSession(const SessionOptions& options) {
  return impl_->NewSession(options);
}

absl::Status Server::Join() { return impl_->Join(); }
void Server::Stop() { impl_->Stop(); }
int64_t Server::bytes_sent() const { return impl_->bytes_sent(); }
int64_t Server::bytes_received() const { return impl_->bytes_received(); }

}  // namespace distribute
}  // namespace towerflow
