#include "runtime/executor.h"

#include <atomic>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"

namespace towerflow {

// Note [Executor scheduling]
// Each step keeps one pending count per node (its data plus control in-edges)
// and one input slot per data input. A finished node moves its outputs into
// its consumers' slots and decrements their counts; a node whose count
// reaches zero is ready. Ready nodes whose kernels are cheap (IsExpensive()
// false: Const, Identity, NoOp, variable reads...) join the current thread's
// local queue and run inline; expensive ones go to the inter-op pool, except
// that the last of them stays on this thread when the local queue is empty,
// so a chain of expensive ops never pays a thread hop per node. The
// partitions of a step share the inter-op pool, and nothing ever blocks a
// thread: a _Recv whose value is not there yet registers a callback and
// returns, and its continuation is scheduled on the pool (never run inside
// the sender's stack). `outstanding` counts nodes that are ready or running;
// successors are added before the finished node is subtracted, so it reaches
// zero exactly once, when the step is over.

struct Executor::NodeItem {
  const Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  bool expensive = true;
  bool async = false;
  int num_inputs = 0;
  int input_start = 0;            // first of this node's slots in the step's inputs
  std::vector<bool> ref_input;    // input slot i expects a Ref(T) (a variable)
  MemoryTypeVector input_memory;  // on devices with memory of their own
  MemoryTypeVector output_memory;
  struct OutEdge {
    int src_output;
    int dst_item;
    int dst_slot;  // absolute slot index
  };
  std::vector<OutEdge> out_edges;
  std::vector<int> out_controls;  // dst items
  int initial_pending = 0;
};

namespace {

// A value in an input slot: a tensor, or a variable for ref edges.
struct Entry {
  Tensor tensor;
  Var* ref = nullptr;
};

}  // namespace

absl::Status AttachNodeContext(const absl::Status& status, const std::string& node_name,
                               const std::string& op, const std::string& device) {
  return absl::Status(status.code(), absl::StrCat(status.message(), "\n\t [[node ", node_name, " (",
                                                  op, ") on ", device, "]]"));
}

class Executor::StepState {
 public:
  StepState(const Executor* executor, const Args& args, DoneCallback done)
      : ex_(executor),
        args_(args),
        done_(std::move(done)),
        inputs_(executor->total_input_slots_),
        pending_(new std::atomic<int>[executor->items_.size()]) {
    for (size_t i = 0; i < ex_->items_.size(); ++i) {
      pending_[i].store(ex_->items_[i].initial_pending, std::memory_order_relaxed);
    }
  }

  void Start() {
    const std::vector<int>& roots = ex_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
    ReadyQueue ready(roots.begin(), roots.end());
    Process(std::move(ready));
  }

 private:
  using ReadyQueue = absl::InlinedVector<int, 8>;

  // Runs `ready` and whatever becomes ready from it, per Note [Executor
  // scheduling]. May delete `this` (when the step ends here).
  void Process(ReadyQueue ready) {
    while (!ready.empty()) {
      const int id = ready.back();
      ready.pop_back();
      const NodeItem& item = ex_->items_[id];
      if (aborted_.load(std::memory_order_acquire)) {
        ClearInputs(item);
        if (NodeDone()) return;
        continue;
      }
      absl::InlinedVector<KernelInput, 4> inputs(item.num_inputs);
      absl::Status s = PrepareInputs(item, &inputs);
      const int64_t start = args_.stats ? absl::GetCurrentTimeNanos() / 1000 : 0;
      if (s.ok() && item.async) {
        // `this` may be gone when this returns; only locals are used after.
        RunAsyncNode(id, std::move(inputs), start);
        continue;
      }
      ReadyQueue newly_ready;
      if (s.ok()) {
        KernelContext::Params params = MakeParams(item, inputs);
        KernelContext ctx(params);
        s = item.kernel->Compute(&ctx);
        RecordStats(item, start);
        if (s.ok()) s = PropagateOutputs(item, &ctx, &newly_ready);
      }
      ClearInputs(item);
      if (!s.ok()) Fail(item, s);
      Schedule(newly_ready, &ready);
      if (NodeDone()) return;
    }
  }

  // Async kernels keep their context and inputs alive on the heap until
  // `done`; the continuation runs on the inter-op pool.
  void RunAsyncNode(int id, absl::InlinedVector<KernelInput, 4> inputs, int64_t start) {
    const NodeItem& item = ex_->items_[id];
    struct AsyncState {
      absl::InlinedVector<KernelInput, 4> inputs;
      KernelContext::Params params;
      std::unique_ptr<KernelContext> ctx;
    };
    auto state = std::make_shared<AsyncState>();
    state->inputs = std::move(inputs);
    state->params = MakeParams(item, state->inputs);
    state->ctx = std::make_unique<KernelContext>(state->params);
    item.kernel->ComputeAsync(state->ctx.get(), [this, id, state, start](absl::Status s) {
      const NodeItem& item = ex_->items_[id];
      RecordStats(item, start);
      ReadyQueue newly_ready;
      if (s.ok()) s = PropagateOutputs(item, state->ctx.get(), &newly_ready);
      ClearInputs(item);
      if (!s.ok()) Fail(item, s);
      outstanding_.fetch_add(static_cast<int>(newly_ready.size()), std::memory_order_relaxed);
      for (int r : newly_ready) ScheduleOnPool(r);
      NodeDone();
    });
  }

  KernelContext::Params MakeParams(const NodeItem& item, absl::Span<const KernelInput> inputs) {
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
    return params;
  }

  absl::Status PrepareInputs(const NodeItem& item, absl::InlinedVector<KernelInput, 4>* inputs) {
    for (int i = 0; i < item.num_inputs; ++i) {
      Entry& e = inputs_[item.input_start + i];
      KernelInput& in = (*inputs)[i];
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

  absl::Status PropagateOutputs(const NodeItem& item, KernelContext* ctx, ReadyQueue* ready) {
    auto& outputs = ctx->outputs();
    for (const NodeItem::OutEdge& e : item.out_edges) {
      KernelOutput& out = outputs[e.src_output];
      if (!out.set) {
        return absl::InternalError(absl::StrCat("kernel did not set output ", e.src_output));
      }
      Entry& slot = inputs_[e.dst_slot];
      slot.tensor = out.tensor;
      slot.ref = out.ref;
      if (pending_[e.dst_item].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready->push_back(e.dst_item);
      }
    }
    for (int dst : item.out_controls) {
      if (pending_[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push_back(dst);
    }
    return absl::OkStatus();
  }

  void ClearInputs(const NodeItem& item) {
    for (int i = 0; i < item.num_inputs; ++i) inputs_[item.input_start + i] = Entry();
  }

  // Cheap nodes go to `local`; expensive ones to the pool, keeping the last
  // one local when nothing else is queued here.
  void Schedule(const ReadyQueue& newly_ready, ReadyQueue* local) {
    if (newly_ready.empty()) return;
    outstanding_.fetch_add(static_cast<int>(newly_ready.size()), std::memory_order_relaxed);
    int keep_expensive = -1;
    for (int id : newly_ready) {
      if (!ex_->items_[id].expensive) {
        local->push_back(id);
      } else {
        if (keep_expensive >= 0) ScheduleOnPool(keep_expensive);
        keep_expensive = id;
      }
    }
    if (keep_expensive >= 0) {
      if (local->empty()) {
        local->push_back(keep_expensive);
      } else {
        ScheduleOnPool(keep_expensive);
      }
    }
  }

  // REQUIRES: `id` already counted in outstanding_.
  void ScheduleOnPool(int id) {
    args_.inter_op_pool->Schedule([this, id] { Process(ReadyQueue{id}); });
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
    const absl::Status with_node =
        AttachNodeContext(s, item.node->name(), item.node->type_string(), ex_->device_->name());
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) {
        status_ = with_node;
        first = true;
      }
    }
    aborted_.store(true, std::memory_order_release);
    if (first && args_.on_error) args_.on_error(with_node);
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

  const Executor* const ex_;
  const Args args_;
  DoneCallback done_;
  std::vector<Entry> inputs_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

Executor::Executor(std::unique_ptr<Graph> graph, Device* device)
    : graph_(std::move(graph)), device_(device) {}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), device));
  TW_RETURN_IF_ERROR(ex->Initialize());
  return ex;
}

absl::Status Executor::Initialize() {
  const std::vector<Node*> nodes = graph_->nodes();
  std::vector<int> index_of(graph_->num_node_ids(), -1);
  items_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i]->id()] = static_cast<int>(i);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    NodeItem& item = items_[i];
    item.node = node;
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        CreateKernel(device_, device_->device_type(), node->def(), node->op_def());
    if (!kernel.ok()) {
      return AttachNodeContext(kernel.status(), node->name(), node->type_string(), device_->name());
    }
    item.kernel = *std::move(kernel);
    if (device_->has_device_memory()) {
      absl::Status s = MemoryTypesForNode(*device_, node->def(), node->op_def(), &item.input_memory,
                                          &item.output_memory);
      if (!s.ok()) return AttachNodeContext(s, node->name(), node->type_string(), device_->name());
    }
    item.expensive = item.kernel->IsExpensive();
    item.async = item.kernel->IsAsync();
    item.num_inputs = node->num_inputs();
    item.input_start = total_input_slots_;
    total_input_slots_ += item.num_inputs;
    for (int k = 0; k < item.num_inputs; ++k)
      item.ref_input.push_back(IsRefType(node->input_type(k)));
    item.initial_pending = static_cast<int>(node->in_edges().size());
    if (item.initial_pending == 0) roots_.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Edge* e : nodes[i]->out_edges()) {
      const int dst = index_of[e->dst()->id()];
      if (e->IsControlEdge()) {
        items_[i].out_controls.push_back(dst);
      } else {
        items_[i].out_edges.push_back(
            {e->src_output(), dst, items_[dst].input_start + e->dst_input()});
      }
    }
  }
  // Run roots in graph order: the queue is a stack.
  std::reverse(roots_.begin(), roots_.end());
  return absl::OkStatus();
}

void Executor::RunAsync(const Args& args, DoneCallback done) {
  (new StepState(this, args, std::move(done)))->Start();
}

}  // namespace towerflow
