// The insides of distribute::Server, shared by server.cc (the tasks' worker
// service: graphs registered and run, steps, start and stop) and
// server_transport.cc (the MPI messages: requests and answers, tensors, the
// poller thread). Not a public header.
#ifndef TOWERFLOW_DISTRIBUTE_SERVER_IMPL_H_
#define TOWERFLOW_DISTRIBUTE_SERVER_IMPL_H_

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
#include "distribute/server.h"
#include "distribute/worker.pb.h"
#include "graph/graph_io.h"
#include "runtime/device_mgr.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"
#include "runtime/remote_tasks.h"

namespace towerflow {
namespace distribute {
namespace server_internal {

// Message tags on the server's communicator; tensor bytes use the tags from
// kFirstDataTag up, one per transfer in flight from a sender.
inline constexpr int kRequestTag = 1;
inline constexpr int kResponseTag = 2;
inline constexpr int kTensorTag = 3;
inline constexpr int kFirstDataTag = 16;
// MPI counts are ints: larger tensors go in pieces of this many bytes.
inline constexpr int64_t kMaxMessageBytes = int64_t{1} << 30;
// Step ids carry the rank of the process that runs the step above this bit.
inline constexpr int kStepRankShift = 40;
// Ended steps remembered, so that values arriving for them (a step that
// failed before its receiver ran) are dropped instead of kept.
inline constexpr size_t kEndedStepsRemembered = 1 << 14;

// One record per process, gathered at start: its task and its devices.
struct TaskRecord {
  int32_t job = -1;  // index in the spec's jobs
  int32_t task = -1;
  int32_t num_cpus = 0;
  int32_t num_gpus = 0;
};

inline absl::Status StatusOf(const WorkerResponse& r) {
  return absl::Status(static_cast<absl::StatusCode>(r.code()), r.message());
}

// Whether `device` (a parsed full name) is a device of `task`.
inline bool OnTask(const DeviceSpec& device, const TaskId& task) {
  return device.job == task.job && device.task == task.task;
}

// The receiving device named by rendezvous key "src;incarnation;dst;tensor;0:0".
inline absl::StatusOr<DeviceSpec> RecvDeviceOfKey(const std::string& key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  if (parts.size() != 5) return absl::InternalError(absl::StrCat("bad rendezvous key '", key, "'"));
  return DeviceSpec::Parse(parts[2]);
}

}  // namespace server_internal

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

    server_internal::TaskRecord mine;
    const std::vector<std::string> jobs = options_.cluster.jobs();
    mine.job = static_cast<int32_t>(std::find(jobs.begin(), jobs.end(), task_.job) - jobs.begin());
    mine.task = task_.task;
    for (Device* d : local_->devices()) {
      if (d->device_type() == kDeviceCpu) ++mine.num_cpus;
      if (d->device_type() == kDeviceGpu) ++mine.num_gpus;
    }
    std::vector<server_internal::TaskRecord> records(size_);
    if (size_ > 1) {
      TW_MPI_RETURN_IF_ERROR(MPI_Allgather(&mine, sizeof(server_internal::TaskRecord), MPI_BYTE,
                                           records.data(), sizeof(server_internal::TaskRecord),
                                           MPI_BYTE, MPI_COMM_WORLD));
    } else {
      records[0] = mine;
    }
    // Every task once.
    rank_of_.assign(options_.cluster.num_tasks(), -1);
    tasks_.resize(size_);
    for (int r = 0; r < size_; ++r) {
      const server_internal::TaskRecord& rec = records[r];
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
    return (int64_t{rank_ + 1} << server_internal::kStepRankShift) | next_step_.fetch_add(1);
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
    TW_ASSIGN_OR_RETURN(const DeviceSpec dst, server_internal::RecvDeviceOfKey(key));
    if (server_internal::OnTask(dst, impl_->task())) return Rendezvous::Send(key, value, origin);
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
    if (first && (step_id_ >> server_internal::kStepRankShift) == impl_->rank() + 1) {
      impl_->AbortRemoteParts(step_id_, status);
    }
  }

 private:
  Impl* const impl_;
  const int64_t step_id_;
  std::atomic<bool> aborted_{false};
};

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_SERVER_IMPL_H_
