// The in-process Session: see session.h.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "graph/graph_io.h"
#include "graph/lower_functions.h"
#include "runtime/device_mgr.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"
#include "runtime/placer.h"
#include "runtime/remote_tasks.h"
#include "runtime/session.h"
#include "runtime/step_graph.h"
#include "runtime/step_replay.h"
#include "runtime/update_order.h"

namespace towerflow {
namespace {

// What Close makes of runs (IsSessionClosed tells them by these).
constexpr char kSessionClosed[] = "Session has been closed";
absl::Status StepCancelledByClose() {
  return absl::CancelledError(absl::StrCat(kSessionClosed, ": the step was cancelled"));
}
absl::Status RunAfterClose() {
  return absl::FailedPreconditionError(absl::StrCat(kSessionClosed, "."));
}

// SessionOptions' default inter-op threads. On CPUs alone, one: each
// expensive kernel already spreads over every core (the intra-op pool, or
// oneDNN's OpenMP team), and more at once only share the cores, while
// oneDNN's static split of a convolution waits for its slowest thread, so a
// convolution beside a batch norm took twice its time. (The thread that
// calls Run still runs its partition's chain of nodes as well: at most two
// kernels at once, where the default of one per core allowed three on two
// cores.) With a GPU, one thread per core, so CPU work overlaps the kernels
// in flight.
int DefaultInterOpThreads(const std::vector<Device*>& devices) {
  for (const Device* d : devices) {
    if (d->device_type() != kDeviceCpu) return DefaultNumThreads();
  }
  return 1;
}

// The executors of one (feeds, fetches, targets) signature. Immutable once
// built; shared by the steps running it.
struct ExecutorsAndKeys {
  StepGraphs step;
  std::vector<std::unique_ptr<Executor>> executors;
  // The partitions on other tasks' devices (a cluster session's).
  std::vector<std::unique_ptr<RemotePartition>> remote;
  // With SessionOptions::replay: the replayed steps of a signature whose one
  // partition is on a device that can record (declared after the executors,
  // whose kernels it shares, so it goes first); else why not, when a device
  // of the step could record.
  std::unique_ptr<StepReplay> replay;
  std::string why_not_replayed;
};

class FeedFetchFrame final : public CallFrame {
 public:
  FeedFetchFrame(const std::vector<std::pair<std::string, Tensor>>& feeds, int num_retvals)
      : feeds_(feeds), retvals_(num_retvals), set_(num_retvals, false) {}

  absl::StatusOr<Tensor> GetArg(int index) const override {
    if (index < 0 || index >= static_cast<int>(feeds_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("feed index ", index, " out of range"));
    }
    return feeds_[index].second;
  }
  absl::Status SetRetval(int index, const Tensor& value) override {
    absl::MutexLock lock(&mu_);
    if (index < 0 || index >= static_cast<int>(retvals_.size()) || set_[index]) {
      return absl::InvalidArgumentError(
          absl::StrCat("fetch index ", index, " out of range or set twice"));
    }
    retvals_[index] = value;
    set_[index] = true;
    return absl::OkStatus();
  }
  std::vector<Tensor> TakeRetvals() {
    absl::MutexLock lock(&mu_);
    return std::move(retvals_);
  }
  bool IsSet(int index) {
    absl::MutexLock lock(&mu_);
    return set_[index];
  }

 private:
  const std::vector<std::pair<std::string, Tensor>>& feeds_;
  absl::Mutex mu_;
  std::vector<Tensor> retvals_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> set_ ABSL_GUARDED_BY(mu_);
};

std::string SignatureKey(const std::vector<std::pair<std::string, Tensor>>& inputs,
                         const std::vector<std::string>& outputs,
                         const std::vector<std::string>& targets) {
  std::string key;
  for (const auto& [name, t] : inputs) absl::StrAppend(&key, name, ",");
  absl::StrAppend(&key, "->", absl::StrJoin(outputs, ","), "//", absl::StrJoin(targets, ","));
  return key;
}

class DirectSession final : public Session {
 public:
  explicit DirectSession(const SessionOptions& options) : options_(options) {}

  // A session on devices of its own (`cluster` null), or over a cluster's.
  absl::Status Init(const ClusterSessionEnv* cluster) {
    if (options_.max_cached_steps < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SessionOptions.max_cached_steps must be positive, got ", options_.max_cached_steps));
    }
    if (cluster != nullptr) {
      // The devices, their thread pools and memory limits are the task's.
      devices_ = cluster->devices;
      remote_ = cluster->remote;
      task_ = cluster->task;
      DeviceSpec host = task_;
      host.type = kDeviceCpu;
      host.id = 0;
      TW_ASSIGN_OR_RETURN(frame_device_, devices_->Lookup(host.ToString()));
    } else {
      const int intra = options_.intra_op_parallelism_threads > 0
                            ? options_.intra_op_parallelism_threads
                            : DefaultNumThreads();
      intra_op_ = std::make_unique<ThreadPool>("intra_op", intra);
      TW_ASSIGN_OR_RETURN(owned_devices_,
                          DeviceMgr::Create(options_.device_count, intra_op_.get()));
      devices_ = owned_devices_.get();
      TW_ASSIGN_OR_RETURN(
          const MemoryLimits limits,
          MemoryLimits::FromOptions(options_.max_tensor_bytes, options_.host_memory_budget_bytes));
      for (Device* d : devices_->devices()) d->set_memory_limits(limits);
    }
    inter_op_ =
        std::make_unique<ThreadPool>("inter_op", options_.inter_op_parallelism_threads > 0
                                                     ? options_.inter_op_parallelism_threads
                                                     : DefaultInterOpThreads(devices_->devices()));
    return absl::OkStatus();
  }

  ~DirectSession() override {
    absl::MutexLock lock(&mu_);
    ClearCache();  // executors before the devices they borrow
  }

  absl::Status Create(const GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckNotClosed());
    if (graph_ != nullptr) {
      return absl::FailedPreconditionError("Session already has a graph; use Extend to add nodes");
    }
    auto g = std::make_unique<Graph>();
    TW_RETURN_IF_ERROR(ImportLowered(graph, g.get()));
    graph_ = std::move(g);
    return absl::OkStatus();
  }

  absl::Status Extend(const GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckNotClosed());
    if (graph_ == nullptr) graph_ = std::make_unique<Graph>();
    return ImportLowered(graph, graph_.get());  // leaves graph_ unchanged on error
  }

  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names,
                   std::vector<Tensor>* outputs) override {
    return Run(RunOptions(), inputs, output_names, target_names, outputs, nullptr);
  }

  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& given_inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override {
    if (outputs == nullptr && !output_names.empty()) {
      return absl::InvalidArgumentError("Run with fetches needs an outputs vector");
    }
    // The feeds in name order, so that a signature finds its executors
    // whatever order the caller lists them in (ClientSession's come from a
    // hash map): a new executor would also restart its stateful kernels,
    // such as a seeded RandomUniform's stream.
    const auto by_name = [](const std::pair<std::string, Tensor>& a,
                            const std::pair<std::string, Tensor>& b) { return a.first < b.first; };
    std::vector<std::pair<std::string, Tensor>> sorted;
    if (!std::is_sorted(given_inputs.begin(), given_inputs.end(), by_name)) {
      sorted = given_inputs;
      std::sort(sorted.begin(), sorted.end(), by_name);
    }
    const std::vector<std::pair<std::string, Tensor>>& inputs =
        sorted.empty() ? given_inputs : sorted;
    TW_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutorsAndKeys> ek,
                        GetOrCreateExecutors(inputs, output_names, target_names));
    TW_RETURN_IF_ERROR(CheckFeeds(inputs, ek->step));
    FeedFetchFrame frame(inputs, ek->step.num_retvals);
    const bool trace =
        run_options.trace_level == RunOptions::TraceLevel::kFullTrace && run_metadata != nullptr;
    StepStatsCollector stats;
    const int64_t timeout_ms = run_options.timeout_in_ms > 0 ? run_options.timeout_in_ms
                                                             : options_.operation_timeout_in_ms;
    const auto run_eagerly = [&] {
      return RunExecutors(*ek, &frame, trace ? &stats : nullptr, timeout_ms);
    };
    StepReplayReport report;
    report.why_eager = ek->why_not_replayed;
    if (ek->replay != nullptr && !trace) {
      // A traced step runs eagerly: a replay has no per-node times.
      std::vector<Tensor> retvals;
      bool replayed = false;
      const absl::Time deadline =
          timeout_ms > 0 ? absl::Now() + absl::Milliseconds(timeout_ms) : absl::InfiniteFuture();
      TW_RETURN_IF_ERROR(
          ek->replay->Run(inputs, deadline, timeout_ms, run_eagerly, &retvals, &replayed, &report));
      if (replayed) {
        if (outputs != nullptr) {
          outputs->clear();
          for (int r : ek->step.fetch_retval) outputs->push_back(retvals[r]);
        }
        if (run_metadata != nullptr) FillMetadata(*ek, run_options, nullptr, report, run_metadata);
        return absl::OkStatus();
      }
    } else if (options_.replay.enabled) {
      if (ek->replay != nullptr) report.why_eager = "a traced step runs eagerly";
      absl::ReaderMutexLock steps(&replay_mu_);  // a recording holds steps back
      TW_RETURN_IF_ERROR(run_eagerly());
    } else {
      TW_RETURN_IF_ERROR(run_eagerly());
    }
    for (size_t i = 0; i < output_names.size(); ++i) {
      if (frame.IsSet(ek->step.fetch_retval[i])) continue;
      // The step ended without the fetch's value: its node was dead.
      std::string name = output_names[i];
      if (!absl::StrContains(name, ':')) absl::StrAppend(&name, ":0");
      return absl::InvalidArgumentError(absl::StrCat(
          "Fetched tensor '", name,
          "' is dead: it lies on the untaken side of a Switch (a Cond branch that was not "
          "taken this step) and has no value; fetch the Cond's Merge instead"));
    }
    if (outputs != nullptr) {
      std::vector<Tensor> retvals = frame.TakeRetvals();
      outputs->clear();
      for (int r : ek->step.fetch_retval) outputs->push_back(retvals[r]);
    }
    if (run_metadata != nullptr) {
      FillMetadata(*ek, run_options, trace ? &stats : nullptr, report, run_metadata);
    }
    return absl::OkStatus();
  }

  std::vector<DeviceAttributes> ListDevices() const override {
    std::vector<DeviceAttributes> out;
    for (const Device* d : devices_->devices()) out.push_back({d->name(), d->device_type()});
    return out;
  }

  absl::Status Close() override {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    {
      // Steps still running end (a step waiting on a queue or an
      // accumulator, such as SyncReplicasOptimizer's chief loop, would wait
      // forever), as in TF.
      absl::MutexLock steps_lock(&steps_mu_);
      steps_closed_ = true;
      for (Rendezvous* r : running_) {
        r->StartAbort(StepCancelledByClose());
      }
    }
    ClearCache();
    // A cluster's variables belong to its tasks and outlive the session.
    if (owned_devices_ == nullptr) return absl::OkStatus();
    for (Device* d : devices_->devices()) d->resource_manager()->Cleanup("");
    return absl::OkStatus();
  }

 private:
  absl::Status CheckNotClosed() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (closed_) return RunAfterClose();
    return absl::OkStatus();
  }

  // Imports `def` with its function calls replaced by the functions' bodies
  // (graph/lower_functions.h): the executor runs no call ops.
  static absl::Status ImportLowered(const GraphDef& def, Graph* graph) {
    if (!HasFunctionCalls(def, *graph)) return ImportGraphDef(def, graph);
    GraphDef lowered = def;
    TW_RETURN_IF_ERROR(LowerFunctionCalls(*graph, &lowered));
    return ImportGraphDef(lowered, graph);
  }

  absl::StatusOr<std::shared_ptr<const ExecutorsAndKeys>> GetOrCreateExecutors(
      const std::vector<std::pair<std::string, Tensor>>& inputs,
      const std::vector<std::string>& outputs, const std::vector<std::string>& targets) {
    const std::string key = SignatureKey(inputs, outputs, targets);
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckNotClosed());
    if (graph_ == nullptr) {
      return absl::FailedPreconditionError("Session was not created with a graph before Run()");
    }
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.graph_size == graph_->num_node_ids()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);  // now the most recent
      return it->second.executors;
    }
    // Placement covers the whole graph, so a node keeps its device whatever
    // signature first runs it.
    const PlacerOptions placer_options{options_.allow_soft_placement, options_.log_device_placement,
                                       task_};
    TW_RETURN_IF_ERROR(PlaceGraph(*graph_, *devices_, placer_options, &placement_));
    std::vector<std::string> feed_names;
    for (const auto& [name, t] : inputs) feed_names.push_back(name);
    auto ek = std::make_shared<ExecutorsAndKeys>();
    TW_ASSIGN_OR_RETURN(ek->step, BuildStepGraphs(*graph_, placement_, feed_names, outputs, targets,
                                                  frame_device_));
    for (auto& [device_name, def] : ek->step.partitions) {
      TW_ASSIGN_OR_RETURN(Device * device, devices_->Lookup(device_name));
      if (remote_ != nullptr && remote_->IsRemote(device)) {
        TW_ASSIGN_OR_RETURN(std::unique_ptr<RemotePartition> partition,
                            remote_->Register(device, def, options_.optimizer));
        ek->remote.push_back(std::move(partition));
        continue;
      }
      TW_RETURN_IF_ERROR(OptimizePartition(options_.optimizer, device, inter_op_.get(), &def));
      if (options_.replay.enabled && device->step_capture() != nullptr &&
          ek->step.partitions.size() == 1) {
        // A step that may be recorded: its variables must keep their
        // buffers from step to step (runtime/update_order.h).
        TW_RETURN_IF_ERROR(OrderUpdatesAfterReads(&def));
      }
      auto partition = std::make_unique<Graph>();
      partition->set_allow_internal_names(true);
      TW_RETURN_IF_ERROR(ImportGraphDef(def, partition.get()));
      absl::StatusOr<std::unique_ptr<Executor>> ex;
      if (options_.replay.enabled) {
        // Kernels' Init may enqueue work (a Const copied to a GPU), which a
        // recording in progress would take in.
        absl::ReaderMutexLock steps(&replay_mu_);
        ex = Executor::Create(std::move(partition), device, nullptr, &stateful_kernels_);
      } else {
        ex = Executor::Create(std::move(partition), device, nullptr, &stateful_kernels_);
      }
      if (!ex.ok()) return ex.status();
      ek->executors.push_back(*std::move(ex));
    }
    SetUpReplay(key, ek.get());
    Cache(key, ek);
    return ek;
  }

  // Keeps `ek` as the most recently run signature `key`, dropping the least
  // recently run past SessionOptions::max_cached_steps. A step running on
  // a dropped entry keeps it alive (shared_ptr) until it ends.
  void Cache(const std::string& key, std::shared_ptr<const ExecutorsAndKeys> ek)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      lru_.erase(it->second.lru);
      cache_.erase(it);
    }
    lru_.push_front(key);
    cache_[key] = {std::move(ek), graph_->num_node_ids(), lru_.begin()};
    while (static_cast<int64_t>(cache_.size()) > options_.max_cached_steps) {
      cache_.erase(lru_.back());
      lru_.pop_back();
    }
  }

  void ClearCache() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    cache_.clear();
    lru_.clear();
  }

  static void FillMetadata(const ExecutorsAndKeys& ek, const RunOptions& run_options,
                           StepStatsCollector* stats, const StepReplayReport& report,
                           RunMetadata* run_metadata) {
    if (stats != nullptr) run_metadata->step_stats = stats->Finalize();
    if (run_options.output_partition_graphs) {
      run_metadata->partition_graphs.clear();
      for (const auto& [device, def] : ek.step.partitions) {
        run_metadata->partition_graphs.push_back(def);
      }
    }
    run_metadata->replay = report;
  }

  // With SessionOptions::replay, a StepReplay for `ek` when its one
  // partition is on a device that can record, or why not when another
  // device of the step could.
  void SetUpReplay(const std::string& key, ExecutorsAndKeys* ek) {
    if (!options_.replay.enabled) return;
    std::vector<std::string> names;
    bool any_records = false;
    for (const auto& ex : ek->executors) {
      names.push_back(ex->device()->name());
      any_records = any_records || ex->device()->step_capture() != nullptr;
    }
    if (!any_records) return;
    if (ek->executors.size() == 1 && ek->remote.empty()) {
      ek->replay = std::make_unique<StepReplay>(key, ek->step.partitions.begin()->second,
                                                ek->executors[0]->device(), devices_->host_device(),
                                                ek->executors[0].get(), ek->step.num_retvals,
                                                inter_op_.get(), &replay_mu_, options_.replay);
      return;
    }
    ek->why_not_replayed =
        absl::StrCat("the step runs on ", ek->executors.size() + ek->remote.size(), " devices (",
                     absl::StrJoin(names, ", "), "), a recording on one");
    if (options_.replay.log) {
      std::cerr << "Towerflow: step " << key
                << " runs eagerly, not replayed: " << ek->why_not_replayed << "\n";
    }
  }

  static absl::Status CheckFeeds(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                 const StepGraphs& step) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i].second;
      if (t.dtype() != step.feed_dtypes[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("Feed '", inputs[i].first, "' is a ", DataTypeString(t.dtype()),
                         " tensor, but the graph expects ", DataTypeString(step.feed_dtypes[i])));
      }
      if (!step.feed_shapes[i].IsCompatibleWith(PartialTensorShape(t.shape()))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot feed value of shape ", t.shape().DebugString(), " for tensor '",
            inputs[i].first, "', which has shape ", step.feed_shapes[i].DebugString()));
      }
    }
    return absl::OkStatus();
  }

  // Runs every partition of one step and waits. Partition 0 starts on this
  // thread, the others on the inter-op pool, so towers start together. A
  // step past `timeout_ms` (when positive) is cancelled: DeadlineExceeded.
  absl::Status RunExecutors(const ExecutorsAndKeys& ek, CallFrame* frame, StepStatsCollector* stats,
                            int64_t timeout_ms) {
    if (ek.executors.empty() && ek.remote.empty()) return absl::OkStatus();
    const int64_t step_id = remote_ != nullptr
                                ? remote_->NewStepId()
                                : next_step_id_.fetch_add(1, std::memory_order_relaxed);
    const std::shared_ptr<Rendezvous> step_rendezvous =
        remote_ != nullptr ? remote_->BeginStep(step_id) : std::make_shared<Rendezvous>();
    Rendezvous& rendezvous = *step_rendezvous;
    {
      absl::MutexLock lock(&steps_mu_);
      if (steps_closed_) {
        if (remote_ != nullptr) remote_->EndStep(step_id);
        return RunAfterClose();
      }
      running_.insert(&rendezvous);
    }
    absl::Mutex mu;
    absl::Status first_error;
    int pending = static_cast<int>(ek.executors.size() + ek.remote.size());
    absl::Notification all_done;
    std::atomic<bool> cancelled{false};
    Executor::Args args;
    args.cancelled = &cancelled;
    args.step_id = step_id;
    args.rendezvous = &rendezvous;
    args.call_frame = frame;
    args.stats = stats;
    args.inter_op_pool = inter_op_.get();
    if (timeout_ms > 0) {
      args.deadline = absl::Now() + absl::Milliseconds(timeout_ms);
      args.timeout_ms = timeout_ms;
    }
    args.on_error = [&](const absl::Status& s) {
      {
        absl::MutexLock lock(&mu);
        if (first_error.ok()) first_error = s;
      }
      rendezvous.StartAbort(absl::CancelledError(
          absl::StrCat("Step cancelled because of an error elsewhere: ", s.message())));
    };
    const auto done = [&](absl::Status s) {
      bool last;
      {
        absl::MutexLock lock(&mu);
        if (first_error.ok() && !s.ok()) first_error = s;
        last = --pending == 0;
      }
      if (last) all_done.Notify();
    };
    for (const auto& partition : ek.remote) {
      partition->RunAsync(step_id, [&args, done](absl::Status s) {
        if (!s.ok()) args.on_error(s);
        done(s);
      });
    }
    for (size_t i = 1; i < ek.executors.size(); ++i) {
      Executor* ex = ek.executors[i].get();
      inter_op_->Schedule([ex, &args, done] { ex->RunAsync(args, done); });
    }
    if (!ek.executors.empty()) ek.executors[0]->RunAsync(args, done);
    if (timeout_ms > 0 &&
        !all_done.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) {
      const absl::Status deadline = StepTimeoutError(timeout_ms);
      {
        absl::MutexLock lock(&mu);
        if (first_error.ok()) first_error = deadline;
      }
      cancelled.store(true, std::memory_order_release);
      rendezvous.StartAbort(deadline);
    }
    all_done.WaitForNotification();
    bool closed_while_running;
    {
      absl::MutexLock lock(&steps_mu_);
      running_.erase(&rendezvous);
      closed_while_running = steps_closed_;
    }
    if (remote_ != nullptr) remote_->EndStep(step_id);
    // What the step made for itself (a loop gradient's stacks) goes with it.
    const std::string step_container = StepContainerName(args.step_id);
    for (Device* d : devices_->devices()) {
      if (remote_ == nullptr || !remote_->IsRemote(d))
        d->resource_manager()->Cleanup(step_container);
    }
    absl::MutexLock lock(&mu);
    // A step Close cut short is cancelled, whatever its kernels met while
    // the session tore down (a resource Close cleaned up), as in TF.
    if (!first_error.ok() && closed_while_running) {
      return StepCancelledByClose();
    }
    return first_error;
  }

  const SessionOptions options_;
  std::unique_ptr<ThreadPool> inter_op_;
  std::unique_ptr<ThreadPool> intra_op_;
  std::unique_ptr<DeviceMgr> owned_devices_;  // null in a cluster
  DeviceMgr* devices_ = nullptr;
  // A cluster session's: the other tasks, the session's task, and its host
  // device, where feeds enter and fetches leave.
  RemoteTasks* remote_ = nullptr;
  DeviceSpec task_;
  Device* frame_device_ = nullptr;
  std::atomic<int64_t> next_step_id_{1};
  // With replay on, every step, and the making of executors (whose kernels
  // may enqueue work as they are made), holds it shared; a recording,
  // exclusively (runtime/step_replay.h).
  absl::Mutex replay_mu_;
  // The rendezvous of the steps running, which Close aborts.
  absl::Mutex steps_mu_;
  absl::flat_hash_set<Rendezvous*> running_ ABSL_GUARDED_BY(steps_mu_);
  bool steps_closed_ ABSL_GUARDED_BY(steps_mu_) = false;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
  Placement placement_ ABSL_GUARDED_BY(mu_);
  // Signature -> its executors, the graph size they were built for, and
  // its place in lru_ (most recently run first), bounded by
  // SessionOptions::max_cached_steps.
  struct CachedStep {
    std::shared_ptr<const ExecutorsAndKeys> executors;
    int graph_size = 0;
    std::list<std::string>::iterator lru;
  };
  absl::flat_hash_map<std::string, CachedStep> cache_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);
  // The stateful nodes' kernels, which every signature's executors share.
  StatefulKernels stateful_kernels_;
};

}  // namespace

bool IsSessionClosed(const absl::Status& status) {
  return (absl::IsCancelled(status) || absl::IsFailedPrecondition(status)) &&
         absl::StartsWith(status.message(), kSessionClosed);
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  auto session = std::make_unique<DirectSession>(options);
  TW_RETURN_IF_ERROR(session->Init(nullptr));
  return std::unique_ptr<Session>(std::move(session));
}

absl::StatusOr<std::unique_ptr<Session>> NewClusterSession(const SessionOptions& options,
                                                           const ClusterSessionEnv& env) {
  if (env.devices == nullptr || env.remote == nullptr || !env.task.job || !env.task.task) {
    return absl::InvalidArgumentError(
        "NewClusterSession needs the cluster's devices, its tasks and the session's task");
  }
  auto session = std::make_unique<DirectSession>(options);
  TW_RETURN_IF_ERROR(session->Init(&env));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace towerflow
