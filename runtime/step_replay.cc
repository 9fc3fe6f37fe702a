#include "runtime/step_replay.h"

#include <atomic>
#include <cstring>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_limits.h"
#include "framework/rendezvous.h"
#include "framework/resource_mgr.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "runtime/capture_specializer.h"

namespace towerflow {

// Note [Replayed steps]
// A training step repeats the same kernels on the same shapes; on a GPU the
// host takes longer to enqueue them one by one than the GPU takes to run
// them. A step recorded once (a CUDA graph) is replayed with one launch.
// Per (signature, feed shapes), an Entry goes through:
//  * warm-up: eager steps. Each is checked to leave every variable of the
//    device in the buffer it had (copy-on-write, Note [Variable
//    copy-on-write], gives a variable a new buffer while a read of it is
//    held; a recording that read the old buffer and wrote the new one would
//    be wrong on its next replay). After options.warmup_steps such steps in
//    a row, the next step records.
//  * recording: only while no other step of the session runs (steps_mu
//    taken exclusively, or else the step stays eager): other steps'
//    kernels would land in the recording. The partition is specialised to
//    the feeds' shapes (runtime/capture_specializer.h), which refuses what a
//    recording cannot hold; its executor shares the eager executor's kernel
//    objects, so random streams continue and measured algorithms are
//    reused; the feeds are fixed device buffers (slots; a feed in host
//    memory that kernels only copy to the device, such as int32 class
//    labels on a GPU, a fixed host slot each replay's copy reads) and the
//    fetches stay on the device. The recording run enqueues nothing that runs: the
//    step's feeds are copied into the slots and the recording launched
//    once, which is this step.
//  * replays: the variables' buffers are checked (a restore or an assign of
//    another shape swaps them, a removed resource may leave a kernel with a
//    stale one), the feeds copied into the slots, one launch, the fetches
//    copied out with one wait. A changed buffer drops the recording and the
//    step warms up again.
// What is refused is logged once per entry and runs eagerly from then on.
// Host work a recording does once and the replays skip is what makes this
// subtle: the specialiser only lets through host values that are constants
// for the shapes, and the kernels declared capturable do no other host
// work that the next step depends on.

namespace {

constexpr int kMaxRecordings = 3;  // per entry, before it is refused
// Recordings kept per signature (each holds device memory of its own): a
// new one drops the least recently replayed.
constexpr int kMaxLiveRecordings = 4;
// Eager steps past the warm-up that may still give a variable a new buffer
// before the entry is refused.
constexpr int kMaxUnsteadySteps = 16;

std::atomic<int64_t> next_recording_step{1};

class SlotFrame final : public CallFrame {
 public:
  SlotFrame(const std::vector<Tensor>& args, int num_retvals)
      : args_(args), retvals_(num_retvals) {}
  absl::StatusOr<Tensor> GetArg(int index) const override {
    if (index < 0 || index >= static_cast<int>(args_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("feed index ", index, " out of range"));
    }
    return args_[index];
  }
  absl::Status SetRetval(int index, const Tensor& value) override {
    absl::MutexLock lock(&mu_);
    if (index < 0 || index >= static_cast<int>(retvals_.size()) ||
        retvals_[index].IsInitialized()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fetch index ", index, " out of range or set twice"));
    }
    retvals_[index] = value;
    return absl::OkStatus();
  }
  std::vector<Tensor> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(retvals_);
  }

 private:
  const std::vector<Tensor>& args_;
  absl::Mutex mu_;
  std::vector<Tensor> retvals_ ABSL_GUARDED_BY(mu_);
};

std::string ShapesKey(const std::vector<std::pair<std::string, Tensor>>& feeds) {
  return absl::StrJoin(feeds, ", ", [](std::string* out, const auto& feed) {
    absl::StrAppend(out, feed.first, " ", DataTypeString(feed.second.dtype()),
                    feed.second.shape().DebugString());
  });
}

}  // namespace

// The device's variables and the buffers they hold.
struct StepReplay::VarState {
  struct Held {
    std::shared_ptr<Var> var;
    const void* buffer = nullptr;
    TensorShape shape;
    bool initialized = false;
  };
  std::vector<Held> vars;
  int64_t removals = 0;

  static VarState Take(Device* device) {
    VarState state;
    ResourceMgr* rm = device->resource_manager();
    state.removals = rm->removals();
    for (std::shared_ptr<Var>& var : rm->All<Var>()) {
      Held held;
      {
        absl::ReaderMutexLock lock(&var->mu);
        held.initialized = var->initialized;
        if (var->tensor.IsInitialized()) {
          held.buffer = var->tensor.raw_data();
          held.shape = var->tensor.shape();
        }
      }
      held.var = std::move(var);
      state.vars.push_back(std::move(held));
    }
    return state;
  }

  // The first variable whose buffer differs in `now`, or what else
  // changed; empty when nothing did.
  std::string ChangedIn(const VarState& now) const {
    if (now.removals != removals) return "a resource of the device was removed";
    absl::flat_hash_map<const Var*, const Held*> before;
    for (const Held& h : vars) before[h.var.get()] = &h;
    for (const Held& h : now.vars) {
      auto it = before.find(h.var.get());
      if (it == before.end()) return absl::StrCat("variable ", h.var->name(), " was created");
      const Held& b = *it->second;
      if (b.buffer != h.buffer || b.shape != h.shape || b.initialized != h.initialized) {
        return absl::StrCat("variable ", h.var->name(), " got a new buffer");
      }
    }
    return now.vars.size() == vars.size() ? "" : "a variable was removed";
  }

  // Whether every variable still holds its buffer and no resource went.
  bool StillHolds(Device* device) const {
    if (device->resource_manager()->removals() != removals) return false;
    for (const Held& h : vars) {
      absl::ReaderMutexLock lock(&h.var->mu);
      const Tensor& t = h.var->tensor;
      if (h.var->initialized != h.initialized ||
          (t.IsInitialized() ? t.raw_data() : nullptr) != h.buffer ||
          (t.IsInitialized() && t.shape() != h.shape)) {
        return false;
      }
    }
    return true;
  }
};

struct StepReplay::Recording {
  CapturePlan plan;
  std::unique_ptr<Executor> executor;  // its kernels (and their buffers) live with the work
  // By _Arg index: in device memory, or a host slot (plan.feed_on_host).
  std::vector<Tensor> feed_slots;
  std::vector<Tensor> fetches;  // by _Retval index: device slots, or host constants
  std::unique_ptr<CapturedWork> work;
  VarState vars;  // as the recording left them
};

struct StepReplay::Entry {
  std::string key;  // the feeds' names, dtypes and shapes
  std::vector<TensorShape> shapes;
  absl::Mutex mu;  // guards the counters; held while recording or replaying
  std::atomic<bool> refused{false};
  std::string why ABSL_GUARDED_BY(mu);   // refused: why
  int stable ABSL_GUARDED_BY(mu) = 0;    // eager steps in a row that kept every buffer
  int unsteady ABSL_GUARDED_BY(mu) = 0;  // eager steps past the warm-up that did not
  int recordings ABSL_GUARDED_BY(mu) = 0;
  std::unique_ptr<Recording> recording ABSL_GUARDED_BY(mu);
  // recording != nullptr, and when it last ran (StepReplay::clock_), read
  // without `mu` to choose a recording to drop.
  std::atomic<bool> has_recording{false};
  std::atomic<int64_t> last_used{0};

  void SetRecording(std::unique_ptr<Recording> r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    recording = std::move(r);
    has_recording.store(recording != nullptr, std::memory_order_release);
  }
};

StepReplay::StepReplay(std::string signature, GraphDef partition, Device* device, Device* host,
                       const Executor* eager, int num_fetches, ThreadPool* inter_op_pool,
                       absl::Mutex* steps_mu, const StepReplayOptions& options)
    : signature_(std::move(signature)),
      partition_(std::move(partition)),
      device_(device),
      host_(host),
      eager_(eager),
      num_fetches_(num_fetches),
      inter_op_pool_(inter_op_pool),
      steps_mu_(steps_mu),
      options_(options) {
  // What no folding for the shapes can take away: a stateful node with no
  // capturable kernel (a queue, a host read), control flow. Found now, the
  // signature never warms up (nor holds its steps back to record). Copies
  // between the device's memory and the host's are left to
  // SpecializeForCapture, which folds those of constants (a GPU's int64
  // shape read on the host) and names the tensor of any other.
  for (const NodeDef& n : partition_.node()) {
    if (n.op() == "_Arg" || n.op() == "_Retval" || IsTransferOp(n.op())) continue;
    const OpRegistrationData* reg = OpRegistry::Global()->Find(n.op());
    absl::StatusOr<const KernelDef*> kernel = FindKernelDef(device_->device_type(), n);
    if (reg == nullptr || !kernel.ok()) continue;  // the executor reported it already
    if (IsControlFlowOp(n.op())) {
      refused_ = absl::StrCat("node '", n.name(), "' (", n.op(),
                              ") is control flow, which a recording cannot hold");
    } else if (reg->op_def.is_stateful() && !(*kernel)->capturable) {
      refused_ =
          absl::StrCat("node '", n.name(), "' (", n.op(), ") has no kernel on ",
                       device_->device_type(), " declared capturable (KernelDef::capturable)");
    }
    if (!refused_.empty()) break;
  }
  if (!refused_.empty() && options_.log) {
    std::cerr << "Towerflow: step " << signature_ << " runs eagerly, not replayed: " << refused_
              << "\n";
  }
}

StepReplay::~StepReplay() = default;

StepReplay::Entry* StepReplay::FindOrAddEntry(
    const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::string key = ShapesKey(feeds);
  absl::MutexLock lock(&mu_);
  std::unique_ptr<Entry>& entry = entries_[key];
  if (entry == nullptr) {
    entry = std::make_unique<Entry>();
    entry->key = std::move(key);
    for (const auto& [name, value] : feeds) entry->shapes.push_back(value.shape());
  }
  return entry.get();
}

void StepReplay::Refuse(Entry* entry, const std::string& why) {
  entry->why = why;
  entry->refused.store(true, std::memory_order_release);
  entry->SetRecording(nullptr);
  if (options_.log) {
    std::cerr << "Towerflow: step " << signature_ << " (feeds: " << entry->key
              << ") runs eagerly, not replayed: " << why << "\n";
  }
}

absl::Status StepReplay::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                             absl::Time deadline, int64_t timeout_ms,
                             const std::function<absl::Status()>& run_eagerly,
                             std::vector<Tensor>* retvals, bool* replayed,
                             StepReplayReport* report) {
  *replayed = false;
  if (!refused_.empty()) {
    report->why_eager = refused_;
    absl::ReaderMutexLock steps(steps_mu_);
    return run_eagerly();
  }
  Entry* entry = FindOrAddEntry(feeds);
  if (!entry->refused.load(std::memory_order_acquire)) {
    absl::MutexLock lock(&entry->mu);
    if (entry->recording != nullptr) {
      // Held shared before a recording is dropped as well: destroying one
      // waits for the device, which must not happen while another step
      // records.
      absl::ReaderMutexLock steps(steps_mu_);
      if (entry->recording->vars.StillHolds(device_)) {
        if (absl::Now() >= deadline) return StepTimeoutError(timeout_ms);
        TW_RETURN_IF_ERROR(Replay(entry, feeds, retvals, report));
        *replayed = true;
        return absl::OkStatus();
      }
      // A variable moved or a resource went: the recording may name memory
      // that is no longer theirs. Warm up and record again.
      entry->SetRecording(nullptr);
      entry->stable = 0;
    }
    if (entry->stable >= options_.warmup_steps && steps_mu_->TryLock()) {
      absl::StatusOr<bool> recorded = Record(entry, feeds, retvals, report);
      steps_mu_->Unlock();
      if (!recorded.ok() || *recorded) {
        *replayed = recorded.ok();
        return recorded.status();
      }
    }
  }
  return RunEagerly(entry, run_eagerly, report);
}

absl::Status StepReplay::RunEagerly(Entry* entry, const std::function<absl::Status()>& run_eagerly,
                                    StepReplayReport* report) {
  const bool warming = !entry->refused.load(std::memory_order_acquire);
  VarState before;
  {
    absl::ReaderMutexLock steps(steps_mu_);
    if (warming) before = VarState::Take(device_);
    TW_RETURN_IF_ERROR(run_eagerly());
  }
  absl::MutexLock lock(&entry->mu);
  if (!warming || entry->refused.load(std::memory_order_acquire)) {
    report->why_eager = entry->why;
    return absl::OkStatus();
  }
  report->why_eager = "warming up";
  const std::string changed = before.ChangedIn(VarState::Take(device_));
  if (changed.empty()) {
    ++entry->stable;
    return absl::OkStatus();
  }
  entry->stable = 0;
  if (++entry->unsteady > kMaxUnsteadySteps) {
    Refuse(entry, absl::StrCat(changed, " in ", kMaxUnsteadySteps,
                               " steps (an Assign of a new tensor, or a read of it held while "
                               "it is updated), and a recording would keep the old buffer"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> StepReplay::Record(Entry* entry,
                                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                                        std::vector<Tensor>* retvals, StepReplayReport* report) {
  const absl::Time started = absl::Now();
  const auto refuse = [&](const absl::Status& why) {
    Refuse(entry, std::string(why.message()));
    return false;
  };
  std::vector<std::string> feed_names;
  for (const auto& [name, value] : feeds) feed_names.push_back(name);
  absl::StatusOr<CapturePlan> plan = SpecializeForCapture(
      partition_, entry->shapes, feed_names, num_fetches_, device_, host_, inter_op_pool_);
  if (!plan.ok()) return refuse(plan.status());
  auto recording = std::make_unique<Recording>();
  recording->plan = *std::move(plan);
  {
    auto graph = std::make_unique<Graph>();
    graph->set_allow_internal_names(true);
    absl::Status imported = ImportGraphDef(recording->plan.graph, graph.get());
    if (!imported.ok()) return refuse(imported);
    absl::StatusOr<std::unique_ptr<Executor>> executor =
        Executor::Create(std::move(graph), device_, eager_);
    if (!executor.ok()) return refuse(executor.status());
    recording->executor = *std::move(executor);
  }
  StepCapture* capture = device_->step_capture();
  std::vector<Tensor> host_slots;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& value = feeds[i].second;
    if (recording->plan.feed_on_host[i]) {
      TW_ASSIGN_OR_RETURN(Tensor slot, capture->AllocateHostSlot(value.dtype(), value.shape()));
      // Filled now: the kernels that copy it check it on the host while
      // recording (a label's range), and must see this step's value.
      if (value.TotalBytes() > 0)
        std::memcpy(slot.raw_data(), value.raw_data(), value.TotalBytes());
      host_slots.push_back(slot);
      recording->feed_slots.push_back(std::move(slot));
    } else {
      TW_ASSIGN_OR_RETURN(Tensor slot,
                          Tensor::Allocate(device_->allocator(), value.dtype(), value.shape()));
      recording->feed_slots.push_back(std::move(slot));
    }
  }
  const VarState before = VarState::Take(device_);
  absl::Status began = capture->BeginCapture(host_slots);
  if (!began.ok()) return refuse(began);
  SlotFrame frame(recording->feed_slots, num_fetches_);
  absl::Status ran;
  {
    Rendezvous rendezvous;
    Executor::Args args;
    args.step_id = -next_recording_step.fetch_add(1, std::memory_order_relaxed);
    args.rendezvous = &rendezvous;
    args.call_frame = &frame;
    args.inter_op_pool = inter_op_pool_;
    absl::Notification done;
    recording->executor->RunAsync(args, [&](absl::Status s) {
      ran = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> work = capture->EndCapture();
  recording->fetches = frame.Take();
  const std::string changed = before.ChangedIn(VarState::Take(device_));
  if (!ran.ok() || !work.ok()) {
    const absl::Status why = !ran.ok() ? ran : work.status();
    if (!changed.empty()) {
      // The recording ran no kernel, but its host side moved a variable to
      // a buffer nothing was written into.
      return absl::InternalError(
          absl::StrCat("Recording step ", signature_, " failed (", why.message(), ") after ",
                       changed, ": its value is lost; restore the variables from a checkpoint"));
    }
    if (!work.ok()) {
      // The step did what a recording cannot hold: so will every step.
      return refuse(absl::FailedPreconditionError(
          absl::StrCat("recording the step failed: ", why.message())));
    }
    // A kernel refused this step's values (a label out of range): the
    // eager run reports it, and a later step records again.
    entry->stable = 0;
    if (++entry->recordings >= kMaxRecordings) {
      return refuse(absl::FailedPreconditionError(absl::StrCat(
          "recording the step failed ", kMaxRecordings, " times, the last: ", why.message())));
    }
    return false;
  }
  recording->work = *std::move(work);
  recording->vars = VarState::Take(device_);
  ++entry->recordings;
  // The recording is this step: it runs once now.
  TW_RETURN_IF_ERROR(Launch(recording.get(), feeds, retvals));
  report->mode = StepReplayReport::Mode::kRecorded;
  report->why_eager.clear();
  report->operations = recording->work->num_operations();
  report->reserved_bytes = recording->work->reserved_bytes();
  if (!changed.empty()) {
    // Right for this step, which read the old buffer and wrote the new one,
    // but not for the next.
    entry->stable = 0;
    if (entry->recordings >= kMaxRecordings) {
      Refuse(entry,
             absl::StrCat(changed, " while the step was recorded, ", kMaxRecordings, " times"));
    }
    return true;
  }
  if (options_.log) {
    std::cerr << "Towerflow: step " << signature_ << " (feeds: " << entry->key
              << ") recorded: " << report->operations << " operations, "
              << (report->reserved_bytes >> 10) << " KiB of device memory reserved, "
              << absl::ToDoubleMilliseconds(absl::Now() - started) << " ms\n";
  }
  DropLeastRecentlyUsed(entry);
  entry->SetRecording(std::move(recording));
  entry->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  return true;
}

void StepReplay::DropLeastRecentlyUsed(Entry* keep) {
  Entry* oldest = nullptr;
  int live = 0;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, entry] : entries_) {
      if (entry.get() == keep || !entry->has_recording.load(std::memory_order_acquire)) continue;
      ++live;
      if (oldest == nullptr || entry->last_used.load(std::memory_order_relaxed) <
                                   oldest->last_used.load(std::memory_order_relaxed)) {
        oldest = entry.get();
      }
    }
  }
  if (live < kMaxLiveRecordings || oldest == nullptr) return;
  // Another step may hold it (waiting for the steps lock this recording
  // holds): then it stays, this once.
  if (!oldest->mu.TryLock()) return;
  oldest->SetRecording(nullptr);
  oldest->stable = 0;
  oldest->mu.Unlock();
}

absl::Status StepReplay::Replay(Entry* entry,
                                const std::vector<std::pair<std::string, Tensor>>& feeds,
                                std::vector<Tensor>* retvals, StepReplayReport* report) {
  Recording* recording = entry->recording.get();
  entry->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  TW_RETURN_IF_ERROR(Launch(recording, feeds, retvals));
  report->mode = StepReplayReport::Mode::kReplayed;
  report->why_eager.clear();
  report->operations = recording->work->num_operations();
  report->reserved_bytes = recording->work->reserved_bytes();
  return absl::OkStatus();
}

absl::Status StepReplay::Launch(Recording* recording,
                                const std::vector<std::pair<std::string, Tensor>>& feeds,
                                std::vector<Tensor>* retvals) {
  StepCapture* capture = device_->step_capture();
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& feed = feeds[i].second;
    Tensor& slot = recording->feed_slots[i];
    if (!recording->plan.feed_on_host[i]) {
      TW_RETURN_IF_ERROR(capture->CopyIntoDevice(feed, &slot));
    } else if (feed.TotalBytes() > 0) {
      // The last launch is done (Launch ends waiting for the device), so no
      // recorded copy reads the slot now.
      std::memcpy(slot.raw_data(), feed.raw_data(), feed.TotalBytes());
    }
  }
  TW_RETURN_IF_ERROR(recording->work->Launch());
  std::vector<Tensor> on_device;
  for (int i = 0; i < num_fetches_; ++i) {
    if (!recording->plan.fetch_on_host[i]) on_device.push_back(recording->fetches[i]);
  }
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> copied, capture->CopyAllToHost(on_device));
  retvals->assign(num_fetches_, Tensor());
  size_t next = 0;
  for (int i = 0; i < num_fetches_; ++i) {
    if (recording->plan.fetch_on_host[i]) {
      // A constant of the recording: the caller gets a copy of its own,
      // within the host budget as the kernels' tensors are.
      const Tensor& constant = recording->fetches[i];
      TW_RETURN_IF_ERROR(CheckHostBudget(static_cast<int64_t>(constant.TotalBytes()),
                                         host_->memory_limits(),
                                         absl::StrCat("OOM when copying fetch ", i, " (shape ",
                                                      constant.shape().DebugString(), ")")));
      TW_ASSIGN_OR_RETURN((*retvals)[i], constant.DeepCopy());
    } else {
      (*retvals)[i] = std::move(copied[next++]);
    }
  }
  return absl::OkStatus();
}

}  // namespace towerflow
