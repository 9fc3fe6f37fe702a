#include "runtime/executor.h"

#include <atomic>
#include <new>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "graph/control_flow.h"
#include "runtime/executor_internal.h"

namespace towerflow {
namespace {

// A kernel's status, where std::bad_alloc from inside it (a container or a
// library's scratch sized by the input) is ResourceExhausted: running out of
// memory fails the node, never the process.
absl::Status ComputeOrResourceExhausted(OpKernel* kernel, KernelContext* ctx) {
  try {
    return kernel->Compute(ctx);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("OOM inside the kernel (std::bad_alloc)");
  }
}

}  // namespace

absl::Status StepTimeoutError(int64_t timeout_ms) {
  return absl::DeadlineExceededError(
      absl::StrCat("Timed out: the step ran longer than its timeout of ", timeout_ms,
                   " ms (RunOptions::timeout_in_ms) and was cancelled"));
}

// Note [Executor scheduling]
// Each iteration of a frame (below) keeps one pending count per node (its data
// plus control in-edges) and one input slot per data input. A finished node
// moves its outputs into its consumers' slots and decrements their counts; a
// node whose count reaches zero is ready. Ready nodes whose kernels are cheap
// (IsExpensive() false: Const, Identity, NoOp, variable reads...) join the
// current thread's local queue and run inline; expensive ones go to the
// inter-op pool, except that the last of them stays on this thread when the local
// queue is empty, so a chain of expensive ops never pays a thread hop per node.
// A GPU's kernels are all cheap here (Device::kernels_only_enqueue): they
// queue work on the GPU's stream and return, so one thread enqueues a
// partition's nodes in order, as in TF, instead of many pool threads contending
// for the stream and the cuDNN handle. The partitions of a step share the
// inter-op pool, and nothing ever blocks a thread: a _Recv whose value is not
// there yet registers a callback and returns, and its continuation is scheduled
// on the pool (never run inside the sender's stack). `outstanding` counts nodes
// that are ready or running; successors are added before the finished node is
// subtracted, so it reaches zero exactly once, when the step is over.

// Note [Control flow]
// TensorFlow 1.x's executor semantics (core/common_runtime/executor.cc and
// the "Implementation of Control Flow in TensorFlow" paper):
//  * Dead tensors. A Switch fills one output; the other is dead. A node with
//    a dead input (or a control input from a dead node) does not run: it is
//    dead, and so are all its outputs. A Merge instead runs on its first live
//    input, forwarding it and its index; it is dead only when every data
//    input is dead (or its input from an Enter is: a loop in an untaken
//    branch). ControlTrigger is never dead. _Send and _Recv run even when
//    dead and carry the deadness to the other device.
//  * Frames. Every node runs in a frame (graph/control_flow.h): the root, or
//    a while loop's, one frame instance per iteration of the enclosing frame
//    ("parent;iteration;frame_name"). An Enter's output goes to iteration 0
//    of its child frame (to every iteration when is_constant: a loop
//    invariant); a NextIteration's to the next iteration of its frame; an
//    Exit's to the parent frame's iteration. Each iteration has its own
//    pending counts and input slots, so iterations overlap: at most
//    parallel_iterations are alive at once, and a NextIteration that would
//    start one more is deferred until the oldest finishes.
//  * An iteration is done when none of its nodes is ready or running, none
//    of its child frames is alive, and the one before it is done (iteration
//    0: when every Enter has arrived). A frame is done when all its Enters
//    have arrived and all its iterations are done; then the Exits that were
//    dead in its last iteration send their deadness to the parent (a loop in
//    an untaken branch), and the parent iteration may finish in turn.
//  * A frame's state is guarded by its mutex. Locks nest only from a parent
//    frame to a child, and from the step's frame table to a frame.
// Without control flow everything is in iteration 0 of the root frame.

namespace {

// A value in an input slot: a tensor, or a variable for ref edges. Without
// either it is dead (or, in a Merge's slot, not arrived).
struct Entry {
  Tensor tensor;
  Var* ref = nullptr;
  bool has_value = false;
};

using Entries = absl::InlinedVector<Entry, 2>;

}  // namespace

absl::Status AttachNodeContext(const absl::Status& status, const Node& node,
                               const std::string& device) {
  std::string op = node.type_string();
  if (auto it = node.def().attr().find("_fused_nodes"); it != node.def().attr().end()) {
    absl::StrAppend(&op, ", fused from ", absl::StrJoin(it->second.list().s(), ", "));
  }
  return absl::Status(status.code(), absl::StrCat(status.message(), "\n\t [[node ", node.name(),
                                                  " (", op, ") on ", device, "]]"));
}

class Executor::StepState {
 public:
  StepState(const Executor* executor, const Args& args, DoneCallback done)
      : ex_(executor), args_(args), done_(std::move(done)) {
    root_.info = &ex_->frames_[0];
    root_.iterations.push_back(std::make_unique<Iteration>(ex_->frames_[0]));
  }

  void Start() {
    const std::vector<int>& roots = ex_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
    ReadyQueue ready;
    Iteration* iter = root_.iterations[0].get();
    for (int id : roots) ready.push_back({id, &root_, 0, false});
    if (ex_->locked_) iter->outstanding_ops = static_cast<int>(roots.size());
    Process(std::move(ready));
  }

 private:
  // Counts are atomics so that a graph without Merges or loops propagates
  // without the frame's lock (see Executor::locked_).
  struct Iteration {
    explicit Iteration(const FrameInfo& info)
        : inputs(info.num_slots),
          pending(new std::atomic<int>[info.pending.size()]),
          dead(new std::atomic<int>[info.pending.size()]) {
      for (size_t i = 0; i < info.pending.size(); ++i) {
        pending[i].store(info.pending[i], std::memory_order_relaxed);
        dead[i].store(0, std::memory_order_relaxed);
      }
    }
    std::vector<Entry> inputs;  // by slot
    // By local id; a Merge's: see ActivateNodes.
    std::unique_ptr<std::atomic<int>[]> pending;
    std::unique_ptr<std::atomic<int>[]> dead;  // dead inputs so far
    int outstanding_ops = 0;                   // ready or running nodes (when locked_)
    int outstanding_frames = 0;                // live child frames
  };

  struct Frame {
    const FrameInfo* info = nullptr;
    std::string key;  // "parent key;iteration;frame_name"
    Frame* parent = nullptr;
    int64_t parent_iter = 0;
    absl::Mutex mu;
    int max_parallel ABSL_GUARDED_BY(mu) = 1;
    int num_pending_inputs ABSL_GUARDED_BY(mu) = 0;   // Enters yet to arrive
    int64_t iteration_count ABSL_GUARDED_BY(mu) = 0;  // the newest iteration
    int num_outstanding_iterations ABSL_GUARDED_BY(mu) = 1;
    // A ring of max_parallel + 1 slots, by iteration number.
    std::vector<std::unique_ptr<Iteration>> iterations;
    // NextIteration values deferred by the parallel_iterations limit.
    std::vector<std::pair<int, Entry>> next_iter_roots ABSL_GUARDED_BY(mu);
    struct Invariant {
      int item;
      Entry value;
    };
    std::vector<Invariant> invariants ABSL_GUARDED_BY(mu);
    std::vector<int> dead_exits ABSL_GUARDED_BY(mu);  // in the newest iteration

    // The iteration's state; null once it is done. Read without `mu` by the
    // nodes of a live iteration: its ring slot does not change meanwhile.
    Iteration* GetIteration(int64_t i) const {
      return iterations[static_cast<size_t>(i % static_cast<int64_t>(iterations.size()))].get();
    }
    std::unique_ptr<Iteration>& Slot(int64_t i) {
      return iterations[static_cast<size_t>(i % static_cast<int64_t>(iterations.size()))];
    }
  };

  struct TaggedNode {
    int item;
    Frame* frame;
    int64_t iter;
    bool dead;
  };
  using ReadyQueue = absl::InlinedVector<TaggedNode, 8>;

  // Runs `ready` and whatever becomes ready from it, per Note [Executor
  // scheduling]. May delete `this` (when the step ends here).
  void Process(ReadyQueue ready) {
    while (!ready.empty()) {
      const TaggedNode t = ready.back();
      ready.pop_back();
      const NodeItem& item = ex_->items_[t.item];
      Entry* slots = t.frame->GetIteration(t.iter)->inputs.data() + item.input_start;
      if (aborted_.load(std::memory_order_acquire) || Cancelled()) {
        ClearInputs(item, slots);
        if (NodeDone()) return;
        continue;
      }
      ReadyQueue newly_ready;
      absl::Status s;
      if (t.dead && !item.is_transfer) {
        ClearInputs(item, slots);
        s = PropagateOutputs(t, Entries(item.node->num_outputs()), &newly_ready);
      } else {
        absl::InlinedVector<KernelInput, 4> inputs(item.num_inputs);
        s = PrepareInputs(item, slots, t.dead, &inputs);
        const int64_t start = args_.stats ? absl::GetCurrentTimeNanos() / 1000 : 0;
        if (s.ok() && item.async) {
          // `this` may be gone when this returns; only locals are used after.
          RunAsyncNode(t, std::move(inputs), start);
          continue;
        }
        Entries outputs;
        if (s.ok()) {
          KernelContext::Params params = MakeParams(item, inputs, t.dead);
          KernelContext ctx(params);
          s = ComputeOrResourceExhausted(item.kernel.get(), &ctx);
          RecordStats(item, start);
          if (s.ok()) s = TakeOutputs(item, &ctx, &outputs);
        }
        // Before propagating: that may end the iteration and free `slots`.
        ClearInputs(item, slots);
        if (s.ok()) s = PropagateOutputs(t, std::move(outputs), &newly_ready);
      }
      if (!s.ok()) Fail(item, s);
      Schedule(newly_ready, &ready);
      if (NodeDone()) return;
    }
  }

  // Async kernels keep their context and inputs alive on the heap until
  // `done`; the continuation runs on the inter-op pool.
  void RunAsyncNode(const TaggedNode& t, absl::InlinedVector<KernelInput, 4> inputs,
                    int64_t start) {
    const NodeItem& item = ex_->items_[t.item];
    struct AsyncState {
      absl::InlinedVector<KernelInput, 4> inputs;
      KernelContext::Params params;
      std::unique_ptr<KernelContext> ctx;
    };
    auto state = std::make_shared<AsyncState>();
    state->inputs = std::move(inputs);
    state->params = MakeParams(item, state->inputs, t.dead);
    state->ctx = std::make_unique<KernelContext>(state->params);
    item.kernel->ComputeAsync(state->ctx.get(), [this, t, state, start](absl::Status s) {
      const NodeItem& item = ex_->items_[t.item];
      RecordStats(item, start);
      ReadyQueue newly_ready;
      Entries outputs;
      if (s.ok()) s = TakeOutputs(item, state->ctx.get(), &outputs);
      ClearInputs(item, t.frame->GetIteration(t.iter)->inputs.data() + item.input_start);
      if (s.ok()) s = PropagateOutputs(t, std::move(outputs), &newly_ready);
      if (!s.ok()) Fail(item, s);
      outstanding_.fetch_add(static_cast<int>(newly_ready.size()), std::memory_order_relaxed);
      for (const TaggedNode& r : newly_ready) ScheduleOnPool(r);
      NodeDone();
    });
  }

  KernelContext::Params MakeParams(const NodeItem& item, absl::Span<const KernelInput> inputs,
                                   bool is_input_dead) {
    KernelContext::Params params;
    params.def = &item.node->def();
    params.device = ex_->device_;
    params.output_types = &item.node->output_types();
    if (ex_->device_->has_device_memory()) {
      params.input_memory_types = &item.input_memory;
      params.output_memory_types = &item.output_memory;
    }
    params.inputs = inputs;
    params.rendezvous = args_.rendezvous;
    params.call_frame = args_.call_frame;
    params.step_id = args_.step_id;
    params.run_id = run_id_;
    params.output_sinks = item.output_sinks;
    params.is_input_dead = is_input_dead;
    return params;
  }

  // Inputs from the node's slots. A Merge's slots hold only its live input,
  // and a dead transfer node's none; every other node has all its inputs.
  absl::Status PrepareInputs(const NodeItem& item, Entry* slots, bool dead,
                             absl::InlinedVector<KernelInput, 4>* inputs) {
    for (int i = 0; i < item.num_inputs; ++i) {
      Entry& e = slots[i];
      KernelInput& in = (*inputs)[i];
      if (!e.has_value) {
        if (item.is_merge || dead) continue;
        return absl::InternalError(absl::StrCat("input ", i, " has no value"));
      }
      if (item.ref_input[i]) {
        if (e.ref == nullptr) {
          return absl::InternalError(absl::StrCat("input ", i, " should be a ref"));
        }
        in.ref = e.ref;
        continue;
      }
      if (e.ref != nullptr) {
        // A ref edge into a value slot reads the variable (TF1 `w/read`).
        Var* var = e.ref;
        absl::ReaderMutexLock lock(&var->mu);
        if (!var->initialized) {
          return absl::FailedPreconditionError(
              absl::StrCat("Attempting to use uninitialized value ", var->name()));
        }
        e.tensor = var->tensor;
        e.ref = nullptr;
      }
      in.tensor = &e.tensor;
    }
    return absl::OkStatus();
  }

  // The kernel's outputs as entries; an unset one is dead, which only
  // Switch and _Recv may leave.
  static absl::Status TakeOutputs(const NodeItem& item, KernelContext* ctx, Entries* out) {
    auto& outputs = ctx->outputs();
    out->resize(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      KernelOutput& o = outputs[i];
      if (!o.set) {
        if (item.may_leave_unset) continue;
        return absl::InternalError(absl::StrCat("kernel did not set output ", i));
      }
      (*out)[i].tensor = std::move(o.tensor);
      (*out)[i].ref = o.ref;
      (*out)[i].has_value = true;
    }
    return absl::OkStatus();
  }

  // Moves a finished node's outputs to its consumers in the right frame and
  // iteration (Note [Control flow]), and retires it from its iteration.
  absl::Status PropagateOutputs(const TaggedNode& t, Entries outputs, ReadyQueue* ready) {
    const NodeItem& item = ex_->items_[t.item];
    Frame* frame = t.frame;
    bool frame_done = false;
    if (item.is_enter) {
      TW_ASSIGN_OR_RETURN(Frame * child, FindOrCreateChildFrame(frame, t.iter, item));
      bool child_done = false;
      {
        absl::MutexLock lock(&child->mu);
        if (item.is_constant_enter) {
          AddLoopInvariant(child, t.item, std::move(outputs[0]), ready);
        } else {
          ActivateNodes(item, t.dead, child, 0, outputs, ready);
        }
        if (--child->num_pending_inputs == 0) child_done = CleanupIterations(child, 0, ready);
      }
      if (child_done) FrameDone(child, ready);
      absl::MutexLock lock(&frame->mu);
      frame_done = DecrementOutstandingOps(frame, t.iter, ready);
    } else if (item.is_exit) {
      if (!t.dead) {
        absl::MutexLock lock(&frame->parent->mu);
        ActivateNodes(item, false, frame->parent, frame->parent_iter, outputs, ready);
      }
      absl::MutexLock lock(&frame->mu);
      if (t.dead && t.iter == frame->iteration_count) frame->dead_exits.push_back(t.item);
      frame_done = DecrementOutstandingOps(frame, t.iter, ready);
    } else if (item.is_next_iteration) {
      absl::MutexLock lock(&frame->mu);
      if (!t.dead) {  // a dead NextIteration ends the loop: nothing to pass on
        if (t.iter == frame->iteration_count &&
            frame->num_outstanding_iterations == frame->max_parallel) {
          frame->next_iter_roots.emplace_back(t.item, std::move(outputs[0]));
        } else {
          if (t.iter == frame->iteration_count) IncrementIteration(frame, ready);
          ActivateNodes(item, false, frame, t.iter + 1, outputs, ready);
        }
      }
      frame_done = DecrementOutstandingOps(frame, t.iter, ready);
    } else if (!ex_->locked_) {
      // No Merge or loop: only the root frame, whose counts are atomic.
      ActivateNodes(item, t.dead, frame, t.iter, outputs, ready);
    } else {
      absl::MutexLock lock(&frame->mu);
      ActivateNodes(item, t.dead, frame, t.iter, outputs, ready);
      frame_done = DecrementOutstandingOps(frame, t.iter, ready);
    }
    if (frame_done) FrameDone(frame, ready);
    return absl::OkStatus();
  }

  // Hands `outputs` of `item` (all dead when `dead`) to its consumers in
  // iteration `iter` of `frame`, adding those that become ready. REQUIRES:
  // frame->mu held, unless the graph has no Merge and no loop (!locked_):
  // then only atomic counts are touched, and a slot is written before the
  // decrement that may make its node ready.
  void ActivateNodes(const NodeItem& item, bool dead, Frame* frame, int64_t iter,
                     const Entries& outputs, ReadyQueue* ready) {
    Iteration* state = frame->GetIteration(iter);
    const auto activate = [&](int dst_id, bool is_control, const Entry* value, int dst_slot) {
      const NodeItem& dst = ex_->items_[dst_id];
      const int id = dst.local_id;
      const bool live = !dead && value != nullptr && value->has_value;
      bool dst_ready = false;
      bool dst_dead = false;
      std::atomic<int>& pending = state->pending[id];
      std::atomic<int>& dead_inputs = state->dead[id];
      if (dst.is_merge) {
        // Under the lock. pending = 2 × (control inputs left) + 1 until a
        // live input came.
        if (is_control) {
          const int p = pending.fetch_sub(2, std::memory_order_relaxed) - 2;
          dst_dead = dead_inputs.load(std::memory_order_relaxed) == dst.num_inputs;
          dst_ready = p == 0 || (p == 1 && dst_dead);
        } else if (live) {
          const int p = pending.load(std::memory_order_relaxed);
          const bool first_live = (p & 1) == 1;
          if (first_live) {
            pending.store(p - 1, std::memory_order_relaxed);
            state->inputs[dst_slot] = *value;
          }
          dst_ready = first_live && p == 1;
        } else {
          const int d = dead_inputs.fetch_add(1, std::memory_order_relaxed) + 1;
          dst_dead = d == dst.num_inputs || item.is_enter;
          dst_ready = pending.load(std::memory_order_relaxed) == 1 && dst_dead;
        }
      } else {
        if (!is_control && live) {
          state->inputs[dst_slot] = *value;
        } else if (!is_control || dead) {
          dead_inputs.fetch_add(1, std::memory_order_relaxed);
        }
        // The last decrement sees every earlier one's slot and dead count.
        dst_ready = pending.fetch_sub(1, std::memory_order_acq_rel) == 1;
        dst_dead = dst_ready && dead_inputs.load(std::memory_order_relaxed) > 0;
      }
      if (dst_ready) {
        ready->push_back({dst_id, frame, iter, dst_dead && !dst.is_control_trigger});
        if (ex_->locked_) ++state->outstanding_ops;
      }
    };
    for (const NodeItem::OutEdge& e : item.out_edges) {
      activate(e.dst_item, false, dead ? nullptr : &outputs[e.src_output], e.dst_slot);
    }
    for (int dst : item.out_controls) activate(dst, true, nullptr, -1);
  }

  absl::StatusOr<Frame*> FindOrCreateChildFrame(Frame* parent, int64_t iter,
                                                const NodeItem& enter) {
    const FrameInfo& info = ex_->frames_[enter.child_frame];
    std::string key = absl::StrCat(parent->key, ";", iter, ";", info.name);
    absl::MutexLock lock(&frames_mu_);
    std::unique_ptr<Frame>& slot = frames_[key];
    if (slot == nullptr) {
      auto frame = std::make_unique<Frame>();
      frame->info = &info;
      frame->key = std::move(key);
      frame->parent = parent;
      frame->parent_iter = iter;
      frame->iterations.resize(enter.parallel_iterations + 1);
      frame->iterations[0] = std::make_unique<Iteration>(info);
      {
        absl::MutexLock frame_lock(&frame->mu);
        frame->max_parallel = enter.parallel_iterations;
        frame->num_pending_inputs = info.num_enters;
      }
      absl::MutexLock parent_lock(&parent->mu);
      ++parent->GetIteration(iter)->outstanding_frames;
      slot = std::move(frame);
    }
    return slot.get();
  }

  void AddLoopInvariant(Frame* frame, int item, Entry value, ReadyQueue* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu) {
    frame->invariants.push_back({item, std::move(value)});
    const Entries outputs{frame->invariants.back().value};
    const bool dead = !outputs[0].has_value;
    for (int64_t i = frame->iteration_count - frame->num_outstanding_iterations + 1;
         i <= frame->iteration_count; ++i) {
      if (frame->GetIteration(i) != nullptr) {
        ActivateNodes(ex_->items_[item], dead, frame, i, outputs, ready);
      }
    }
  }

  // Starts iteration iteration_count + 1 with the deferred NextIteration
  // values and the loop invariants.
  void IncrementIteration(Frame* frame, ReadyQueue* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu) {
    const int64_t next = ++frame->iteration_count;
    frame->Slot(next) = std::make_unique<Iteration>(*frame->info);
    ++frame->num_outstanding_iterations;
    frame->dead_exits.clear();
    std::vector<std::pair<int, Entry>> roots = std::move(frame->next_iter_roots);
    frame->next_iter_roots.clear();
    for (auto& [item, value] : roots) {
      ActivateNodes(ex_->items_[item], false, frame, next, Entries{std::move(value)}, ready);
    }
    for (const Frame::Invariant& inv : frame->invariants) {
      ActivateNodes(ex_->items_[inv.item], !inv.value.has_value, frame, next, Entries{inv.value},
                    ready);
    }
  }

  bool IsIterationDone(Frame* frame, int64_t iter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu) {
    const Iteration* state = frame->GetIteration(iter);
    if (state == nullptr || state->outstanding_ops != 0 || state->outstanding_frames != 0) {
      return false;
    }
    return iter == 0 ? frame->num_pending_inputs == 0 : frame->GetIteration(iter - 1) == nullptr;
  }

  // Retires the done iterations from `iter` on, starting deferred ones;
  // returns whether the frame is done. The root frame lasts the step.
  bool CleanupIterations(Frame* frame, int64_t iter, ReadyQueue* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu) {
    if (frame->parent == nullptr) return false;
    for (int64_t i = iter; i <= frame->iteration_count && IsIterationDone(frame, i); ++i) {
      frame->Slot(i).reset();
      --frame->num_outstanding_iterations;
      if (!frame->next_iter_roots.empty()) IncrementIteration(frame, ready);
    }
    return frame->num_pending_inputs == 0 && frame->num_outstanding_iterations == 0;
  }

  bool DecrementOutstandingOps(Frame* frame, int64_t iter, ReadyQueue* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu) {
    if (--frame->GetIteration(iter)->outstanding_ops != 0) return false;
    return CleanupIterations(frame, iter, ready);
  }

  // A finished frame: its dead exits go to the parent, it is deleted, and
  // the parent's iteration may be done in turn.
  void FrameDone(Frame* frame, ReadyQueue* ready) {
    Frame* parent = frame->parent;
    const int64_t parent_iter = frame->parent_iter;
    {
      absl::MutexLock parent_lock(&parent->mu);
      absl::MutexLock lock(&frame->mu);
      for (int exit : frame->dead_exits) {
        const NodeItem& item = ex_->items_[exit];
        ActivateNodes(item, true, parent, parent_iter, Entries(item.node->num_outputs()), ready);
      }
    }
    {
      const std::string key = frame->key;
      absl::MutexLock lock(&frames_mu_);
      frames_.erase(key);  // deletes `frame`
    }
    bool parent_done;
    {
      absl::MutexLock lock(&parent->mu);
      --parent->GetIteration(parent_iter)->outstanding_frames;
      parent_done = CleanupIterations(parent, parent_iter, ready);
    }
    if (parent_done) FrameDone(parent, ready);
  }

  static void ClearInputs(const NodeItem& item, Entry* slots) {
    for (int i = 0; i < item.num_inputs; ++i) slots[i] = Entry();
  }

  // Cheap nodes go to `local`; expensive ones to the pool, keeping the last
  // one local when nothing else is queued here.
  void Schedule(const ReadyQueue& newly_ready, ReadyQueue* local) {
    if (newly_ready.empty()) return;
    outstanding_.fetch_add(static_cast<int>(newly_ready.size()), std::memory_order_relaxed);
    const TaggedNode* keep_expensive = nullptr;
    for (const TaggedNode& t : newly_ready) {
      if (!ex_->items_[t.item].expensive) {
        local->push_back(t);
      } else {
        if (keep_expensive != nullptr) ScheduleOnPool(*keep_expensive);
        keep_expensive = &t;
      }
    }
    if (keep_expensive != nullptr) {
      if (local->empty()) {
        local->push_back(*keep_expensive);
      } else {
        ScheduleOnPool(*keep_expensive);
      }
    }
  }

  // REQUIRES: `t` already counted in outstanding_.
  void ScheduleOnPool(const TaggedNode& t) {
    args_.inter_op_pool->Schedule([this, t] { Process(ReadyQueue{t}); });
  }

  void RecordStats(const NodeItem& item, int64_t start) {
    if (args_.stats == nullptr) return;
    NodeExecStats stats;
    stats.node_name = item.node->name();
    stats.op = item.node->type_string();
    stats.start_micros = start;
    stats.end_micros = absl::GetCurrentTimeNanos() / 1000;
    stats.thread_id = CurrentThreadNumber();
    args_.stats->Record(ex_->device_->name(), std::move(stats));
  }

  void Fail(const NodeItem& item, const absl::Status& s) {
    const absl::Status with_node = AttachNodeContext(s, *item.node, ex_->device_->name());
    if (Abort(with_node) && args_.on_error) args_.on_error(with_node);
  }

  // Records `s` as the step's status unless one was, and stops starting
  // nodes; whether `s` was the first.
  bool Abort(const absl::Status& s) {
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) {
        status_ = s;
        first = true;
      }
    }
    aborted_.store(true, std::memory_order_release);
    return first;
  }

  // Whether the caller cancelled the step or its deadline passed; the first
  // to see it records why.
  bool Cancelled() {
    if (args_.deadline != absl::InfiniteFuture() && absl::Now() >= args_.deadline) {
      const absl::Status s = StepTimeoutError(args_.timeout_ms);
      if (Abort(s) && args_.on_error) args_.on_error(s);
      return true;
    }
    if (args_.cancelled == nullptr || !args_.cancelled->load(std::memory_order_acquire)) {
      return false;
    }
    Abort(absl::CancelledError("The step was cancelled"));
    return true;
  }

  // Returns true when the step is over (and `this` deleted).
  bool NodeDone() {
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
    Finish();
    return true;
  }

  void Finish() {
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      status = status_;
    }
    DoneCallback done = std::move(done_);
    delete this;
    done(status);
  }

  // Process-wide, so kernels can tell runs apart (OpKernel::InputBuffer).
  static std::atomic<int64_t> next_run_id_;

  const Executor* const ex_;
  const Args args_;
  const int64_t run_id_ = next_run_id_.fetch_add(1, std::memory_order_relaxed);
  DoneCallback done_;
  Frame root_;
  absl::Mutex frames_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Frame>> frames_ ABSL_GUARDED_BY(frames_mu_);
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

std::atomic<int64_t> Executor::StepState::next_run_id_{1};

void Executor::RunAsync(const Args& args, DoneCallback done) {
  (new StepState(this, args, std::move(done)))->Start();
}

}  // namespace towerflow
