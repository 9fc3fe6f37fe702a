// TF's FIFO queues and conditional gradient accumulators (resource forms), on
// the CPU: where the workers of a cluster meet on a ps task
// (train/sync_replicas_optimizer.h).
//
// Both are resources in the device's ResourceMgr under (container,
// shared_name), so every session of every worker that names them shares
// them. A dequeue from an empty queue, an enqueue into a full one, and a take
// from an accumulator that has fewer gradients than required wait without
// holding a thread: the kernel is asynchronous, and its `done` runs when
// another step's enqueue or apply lets it go on, or when its own step is
// aborted (an error elsewhere in the step, its deadline, Session::Close),
// which ends the wait with the abort's status.
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/rendezvous.h"
#include "framework/resource_handle.h"
#include "framework/resource_mgr.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// The end of a wait, called once: with OK and the result, or an error.
template <typename Result>
using WaitDone = std::function<void(absl::Status, Result)>;

// Waits a resource keeps: cancelled by id when their step is aborted. An id
// cancelled before its wait was added is remembered, so the wait fails as
// soon as it is added.
template <typename Wait>
class Waits {
 public:
  void Add(int64_t id, Wait wait) { waits_.emplace_back(id, std::move(wait)); }
  // The wait of `id`, removed; false when there is none (it ended already, or
  // has not been added: then `id` is remembered as cancelled).
  bool Take(int64_t id, Wait* out) {
    for (auto it = waits_.begin(); it != waits_.end(); ++it) {
      if (it->first == id) {
        *out = std::move(it->second);
        waits_.erase(it);
        return true;
      }
    }
    cancelled_.insert(id);
    return false;
  }
  bool WasCancelled(int64_t id) { return cancelled_.erase(id) > 0; }
  bool empty() const { return waits_.empty(); }
  std::pair<int64_t, Wait>& front() { return waits_.front(); }
  void pop_front() { waits_.pop_front(); }
  std::deque<std::pair<int64_t, Wait>>& all() { return waits_; }

 private:
  std::deque<std::pair<int64_t, Wait>> waits_;
  absl::flat_hash_set<int64_t> cancelled_;
};

class FifoQueue : public ResourceBase {
 public:
  using Tuple = std::vector<Tensor>;

  FifoQueue(DataTypeVector types, std::vector<PartialTensorShape> shapes, int64_t capacity,
            std::string name)
      : types_(std::move(types)),
        shapes_(std::move(shapes)),
        capacity_(capacity),
        name_(std::move(name)) {}

  std::string DebugString() const override { return absl::StrCat("FIFOQueue '", name_, "'"); }
  const std::string& name() const { return name_; }

  // InvalidArgument unless `t` is one element of this queue (`many`: a batch
  // of them along dimension 0, whose size goes to `count`).
  absl::Status CheckTuple(const Tuple& t, bool many, int64_t* count) const {
    if (t.size() != types_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(DebugString(), " has ", types_.size(), " components, not ", t.size()));
    }
    *count = 1;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].dtype() != types_[i]) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), " component ", i, " is ",
                                                       DataTypeString(types_[i]), ", not ",
                                                       DataTypeString(t[i].dtype())));
      }
      TensorShape shape = t[i].shape();
      if (many) {
        if (shape.dims() == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              DebugString(), ": enqueue_many needs components of rank 1 or more, got a scalar"));
        }
        if (i == 0) *count = shape.dim_size(0);
        if (shape.dim_size(0) != *count) {
          return absl::InvalidArgumentError(
              absl::StrCat(DebugString(), ": enqueue_many components differ in dimension 0 (",
                           *count, " and ", shape.dim_size(0), ")"));
        }
        shape.RemoveDim(0);
      }
      if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(PartialTensorShape(shape))) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), " component ", i,
                                                       " has shape ", shapes_[i].DebugString(),
                                                       ", not ", shape.DebugString()));
      }
    }
    return absl::OkStatus();
  }

  void Enqueue(int64_t id, std::deque<Tuple> elements, WaitDone<bool> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (enqueues_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("enqueue cancelled"), false); });
      } else if (closed_) {
        to_run.push_back([this, done] { done(ClosedError(), false); });
      } else {
        enqueues_.Add(id, {std::move(elements), std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  void Dequeue(int64_t id, WaitDone<Tuple> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (dequeues_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("dequeue cancelled"), {}); });
      } else {
        dequeues_.Add(id, std::move(done));
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  // End wait `id` with `status`.
  void CancelEnqueue(int64_t id, const absl::Status& status) {
    PendingEnqueue enqueue;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = enqueues_.Take(id, &enqueue);
    }
    if (got) enqueue.done(status, false);
  }
  void CancelDequeue(int64_t id, const absl::Status& status) {
    WaitDone<Tuple> dequeue;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = dequeues_.Take(id, &dequeue);
    }
    if (got) dequeue(status, {});
  }

  int64_t Size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(queue_.size());
  }

  void Close(bool cancel_pending_enqueues) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      if (cancel_pending_enqueues) {
        for (auto& [id, e] : enqueues_.all()) {
          to_run.push_back([this, done = std::move(e.done)] { done(ClosedError(), false); });
        }
        enqueues_.all().clear();
      }
      FlushLocked(&to_run);
    }
    for (auto& fn : to_run) fn();
  }

 private:
  struct PendingEnqueue {
    std::deque<Tuple> elements;
    WaitDone<bool> done;
  };

  absl::Status ClosedError() const {
    return absl::CancelledError(absl::StrCat(DebugString(), " is closed."));
  }

  // Moves elements in and out while waits can go on; what to call after the
  // lock goes into `to_run`.
  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool progress = true;
    while (progress) {
      progress = false;
      while (!enqueues_.empty() &&
             (capacity_ < 0 || static_cast<int64_t>(queue_.size()) < capacity_)) {
        PendingEnqueue& e = enqueues_.front().second;
        if (!e.elements.empty()) {
          queue_.push_back(std::move(e.elements.front()));
          e.elements.pop_front();
          progress = true;
        }
        if (e.elements.empty()) {
          to_run->push_back([done = std::move(e.done)] { done(absl::OkStatus(), true); });
          enqueues_.pop_front();
        }
      }
      while (!dequeues_.empty() && !queue_.empty()) {
        to_run->push_back(
            [done = std::move(dequeues_.front().second), t = std::move(queue_.front())]() mutable {
              done(absl::OkStatus(), std::move(t));
            });
        dequeues_.pop_front();
        queue_.pop_front();
        progress = true;
      }
    }
    if (closed_ && queue_.empty() && enqueues_.empty()) {
      while (!dequeues_.empty()) {
        to_run->push_back([this, done = std::move(dequeues_.front().second)] {
          done(absl::OutOfRangeError(
                   absl::StrCat(DebugString(),
                                " is closed and has insufficient elements (requested 1, "
                                "current size 0)")),
               {});
        });
        dequeues_.pop_front();
      }
    }
  }

  const DataTypeVector types_;
  const std::vector<PartialTensorShape> shapes_;  // empty: any
  const int64_t capacity_;                        // negative: no limit
  const std::string name_;
  absl::Mutex mu_;
  std::deque<Tuple> queue_ ABSL_GUARDED_BY(mu_);
  Waits<PendingEnqueue> enqueues_ ABSL_GUARDED_BY(mu_);
  Waits<WaitDone<Tuple>> dequeues_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// TF's ConditionalAccumulator: sums the gradients of its current time step
// (older ones are dropped), hands out their mean (or sum) once enough have
// come, and then moves to the next time step.
class Accumulator : public ResourceBase {
 public:
  Accumulator(DataType dtype, PartialTensorShape shape, bool mean, std::string name)
      : dtype_(dtype), shape_(std::move(shape)), mean_(mean), name_(std::move(name)) {}

  std::string DebugString() const override {
    return absl::StrCat("ConditionalAccumulator '", name_, "'");
  }

  absl::Status Apply(int64_t local_step, const Tensor& grad) {
    if (grad.dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " holds ",
                                                     DataTypeString(dtype_), ", the gradient is ",
                                                     DataTypeString(grad.dtype())));
    }
    if (!shape_.IsCompatibleWith(PartialTensorShape(grad.shape()))) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " has shape ",
                                                     shape_.DebugString(), ", the gradient ",
                                                     grad.shape().DebugString()));
    }
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) return absl::OkStatus();  // stale: dropped, as in TF
      if (counter_ == 0) {
        TW_ASSIGN_OR_RETURN(sum_, grad.DeepCopy());
      } else {
        if (sum_.shape() != grad.shape()) {
          return absl::InvalidArgumentError(
              absl::StrCat(DebugString(), " holds gradients of shape ", sum_.shape().DebugString(),
                           ", the gradient is ", grad.shape().DebugString()));
        }
        TW_RETURN_IF_ERROR(AddInto(grad));
      }
      ++counter_;
      FlushLocked(&to_run);
    }
    for (auto& fn : to_run) fn();
    return absl::OkStatus();
  }

  void Take(int64_t id, int num_required, WaitDone<Tensor> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (takes_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("take_grad cancelled"), Tensor()); });
      } else {
        takes_.Add(id, {num_required, std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  void Cancel(int64_t id, const absl::Status& status) {
    PendingTake take;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = takes_.Take(id, &take);
    }
    if (got) take.done(status, Tensor());
  }

  void SetGlobalStep(int64_t step) {
    absl::MutexLock lock(&mu_);
    global_step_ = step;
  }

  int64_t NumAccumulated() {
    absl::MutexLock lock(&mu_);
    return counter_;
  }

 private:
  struct PendingTake {
    int num_required = 0;
    WaitDone<Tensor> done;
  };

  absl::Status AddInto(const Tensor& grad) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    switch (dtype_) {
      case DT_FLOAT:
        sum_.flat<float>() += grad.flat<float>();
        return absl::OkStatus();
      case DT_DOUBLE:
        sum_.flat<double>() += grad.flat<double>();
        return absl::OkStatus();
      default:
        return absl::UnimplementedError(absl::StrCat(DebugString(), ": gradients of ",
                                                     DataTypeString(dtype_),
                                                     " are not supported (float, double)"));
    }
  }

  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!takes_.empty() && counter_ >= takes_.front().second.num_required) {
      Tensor out = std::move(sum_);
      if (mean_) {
        if (dtype_ == DT_FLOAT)
          out.flat<float>() = out.flat<float>() / static_cast<float>(counter_);
        if (dtype_ == DT_DOUBLE) {
          out.flat<double>() = out.flat<double>() / static_cast<double>(counter_);
        }
      }
      ++global_step_;  // TF: a take moves to the next time step
      counter_ = 0;
      sum_ = Tensor();
      to_run->push_back([done = std::move(takes_.front().second.done), out = std::move(out)] {
        done(absl::OkStatus(), out);
      });
      takes_.pop_front();
    }
  }

  const DataType dtype_;
  const PartialTensorShape shape_;
  const bool mean_;
  const std::string name_;
  absl::Mutex mu_;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  Tensor sum_ ABSL_GUARDED_BY(mu_);
  Waits<PendingTake> takes_ ABSL_GUARDED_BY(mu_);
};

// The handle a resource op outputs (ResourceName's container and name).
absl::StatusOr<Tensor> MakeHandle(const KernelConstruction& c, const char* type_name) {
  ResourceHandle h;
  TW_RETURN_IF_ERROR(ResourceName(c, &h.container, &h.name));
  h.device = c.device()->name();
  h.type_name = type_name;
  Tensor handle(DT_RESOURCE, TensorShape());
  *handle.data<ResourceHandle>() = std::move(h);
  return handle;
}

std::atomic<int64_t> next_wait_id{1};

template <typename T>
absl::StatusOr<std::shared_ptr<T>> LookupInput(KernelContext* ctx, const char* what) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
  absl::StatusOr<std::shared_ptr<T>> r = ctx->resource_manager()->Lookup<T>(h->container, h->name);
  if (absl::IsNotFound(r.status())) {
    return absl::NotFoundError(absl::StrCat(what, " '", h->name, "' (container ", h->container,
                                            ") does not exist on ", ctx->device()->name()));
  }
  return r;
}

// Runs `start(id, done)`, a wait on a resource, so that aborting the step
// cancels it: `cancel(id, status)` ends the wait. `start` passes `done` on as
// the wait's end, which takes the abort callback back before it reports.
void StartCancellableWait(KernelContext* ctx,
                          std::function<void(int64_t, const absl::Status&)> cancel,
                          AsyncOpKernel::DoneCallback done,
                          std::function<void(int64_t, AsyncOpKernel::DoneCallback)> start) {
  const int64_t id = next_wait_id.fetch_add(1);
  Rendezvous* rendezvous = ctx->rendezvous();
  if (rendezvous == nullptr) {
    start(id, std::move(done));
    return;
  }
  const int64_t token =
      rendezvous->AddAbortCallback([cancel, id](const absl::Status& s) { cancel(id, s); });
  start(id, [rendezvous, token, done = std::move(done)](absl::Status s) {
    rendezvous->RemoveAbortCallback(token);
    done(s);
  });
}

class FifoQueueOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("component_types", &types_));
    TW_RETURN_IF_ERROR(c.GetAttr("shapes", &shapes_));
    TW_RETURN_IF_ERROR(c.GetAttr("capacity", &capacity_));
    if (!shapes_.empty() && shapes_.size() != types_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(c.name(), ": ", shapes_.size(), " shapes for ",
                                                     types_.size(), " component types"));
    }
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, "FIFOQueue"));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const ResourceHandle& h = *handle_.data<ResourceHandle>();
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<FifoQueue> queue,
        ctx->resource_manager()->LookupOrCreate<FifoQueue>(
            h.container, h.name, [&]() -> absl::StatusOr<std::shared_ptr<FifoQueue>> {
              return std::make_shared<FifoQueue>(types_, shapes_, capacity_, h.name);
            }));
    (void)queue;
    return ctx->set_output(0, handle_);
  }

 private:
  DataTypeVector types_;
  std::vector<PartialTensorShape> shapes_;
  int64_t capacity_ = -1;
  Tensor handle_;
};

class EnqueueOp : public AsyncOpKernel {
 public:
  explicit EnqueueOp(bool many) : many_(many) {}
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> queue = LookupInput<FifoQueue>(ctx, "queue");
    if (!queue.ok()) return done(queue.status());
    FifoQueue::Tuple tuple;
    for (int i = 1; i < ctx->num_inputs(); ++i) tuple.push_back(ctx->input(i));
    int64_t count = 0;
    if (absl::Status s = (*queue)->CheckTuple(tuple, many_, &count); !s.ok()) return done(s);
    std::deque<FifoQueue::Tuple> elements;
    if (!many_) {
      elements.push_back(std::move(tuple));
    } else {
      for (int64_t r = 0; r < count; ++r) {
        FifoQueue::Tuple element;
        for (const Tensor& t : tuple) {
          TensorShape shape = t.shape();
          shape.RemoveDim(0);
          absl::StatusOr<Tensor> row = t.Slice(r, r + 1);
          if (row.ok()) row = row->Reshaped(shape);
          if (!row.ok()) return done(row.status());
          element.push_back(*std::move(row));
        }
        elements.push_back(std::move(element));
      }
    }
    std::shared_ptr<FifoQueue> q = *queue;
    StartCancellableWait(
        ctx, [q](int64_t id, const absl::Status& s) { q->CancelEnqueue(id, s); }, std::move(done),
        [q, elements = std::move(elements)](int64_t id, DoneCallback done) mutable {
          q->Enqueue(id, std::move(elements), [done](absl::Status s, bool) { done(s); });
        });
  }

 private:
  const bool many_;
};

class DequeueOp : public AsyncOpKernel {
 public:
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> queue = LookupInput<FifoQueue>(ctx, "queue");
    if (!queue.ok()) return done(queue.status());
    std::shared_ptr<FifoQueue> q = *queue;
    StartCancellableWait(
        ctx, [q](int64_t id, const absl::Status& s) { q->CancelDequeue(id, s); }, std::move(done),
        [q, ctx](int64_t id, DoneCallback done) {
          q->Dequeue(id, [ctx, done](absl::Status s, FifoQueue::Tuple t) {
            for (size_t i = 0; s.ok() && i < t.size(); ++i) {
              s = ctx->set_output(static_cast<int>(i), std::move(t[i]));
            }
            done(s);
          });
        });
  }
};

class QueueSizeOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<FifoQueue> queue, LookupInput<FifoQueue>(ctx, "queue"));
    Tensor size(DT_INT32, TensorShape());
    size.flat<int32_t>()(0) = static_cast<int32_t>(queue->Size());
    return ctx->set_output(0, size);
  }
};

class QueueCloseOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<FifoQueue> queue, LookupInput<FifoQueue>(ctx, "queue"));
    queue->Close(cancel_pending_enqueues_);
    return absl::OkStatus();
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

class AccumulatorOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    TW_RETURN_IF_ERROR(c.GetAttr("shape", &shape_));
    std::string reduction;
    TW_RETURN_IF_ERROR(c.GetAttr("reduction_type", &reduction));
    mean_ = reduction == "MEAN";
    if (dtype_ != DT_FLOAT && dtype_ != DT_DOUBLE) {
      return absl::UnimplementedError(absl::StrCat(c.name(), ": accumulators of ",
                                                   DataTypeString(dtype_),
                                                   " are not supported (float, double)"));
    }
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, "ConditionalAccumulator"));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const ResourceHandle& h = *handle_.data<ResourceHandle>();
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<Accumulator> accumulator,
        ctx->resource_manager()->LookupOrCreate<Accumulator>(
            h.container, h.name, [&]() -> absl::StatusOr<std::shared_ptr<Accumulator>> {
              return std::make_shared<Accumulator>(dtype_, shape_, mean_, h.name);
            }));
    (void)accumulator;
    return ctx->set_output(0, handle_);
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
  bool mean_ = true;
  Tensor handle_;
};

absl::StatusOr<int64_t> ScalarInput(KernelContext* ctx, int i, DataType dtype, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != dtype || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(ctx->name(), ": ", what, " must be one ",
                                                   DataTypeString(dtype), ", not ",
                                                   t.shape().DebugString()));
  }
  return dtype == DT_INT64 ? t.flat<int64_t>()(0) : t.flat<int32_t>()(0);
}

class AccumulatorApplyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    TW_ASSIGN_OR_RETURN(const int64_t local_step, ScalarInput(ctx, 1, DT_INT64, "local_step"));
    return accumulator->Apply(local_step, ctx->input(2));
  }
};

class AccumulatorTakeOp : public AsyncOpKernel {
 public:
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> accumulator =
        LookupInput<Accumulator>(ctx, "accumulator");
    if (!accumulator.ok()) return done(accumulator.status());
    absl::StatusOr<int64_t> num_required = ScalarInput(ctx, 1, DT_INT32, "num_required");
    if (!num_required.ok()) return done(num_required.status());
    if (*num_required <= 0) {
      return done(absl::InvalidArgumentError(
          absl::StrCat("Argument num_required must be positive, but was ", *num_required)));
    }
    std::shared_ptr<Accumulator> a = *accumulator;
    const int required = static_cast<int>(*num_required);
    StartCancellableWait(
        ctx, [a](int64_t id, const absl::Status& s) { a->Cancel(id, s); }, std::move(done),
        [a, ctx, required](int64_t id, DoneCallback done) {
          a->Take(id, required, [ctx, done](absl::Status s, Tensor average) {
            done(s.ok() ? ctx->set_output(0, std::move(average)) : s);
          });
        });
  }
};

class AccumulatorNumOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    Tensor n(DT_INT32, TensorShape());
    n.flat<int32_t>()(0) = static_cast<int32_t>(accumulator->NumAccumulated());
    return ctx->set_output(0, n);
  }
};

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    TW_ASSIGN_OR_RETURN(const int64_t step, ScalarInput(ctx, 1, DT_INT64, "new_global_step"));
    accumulator->SetGlobalStep(step);
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(queue_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("FIFOQueueV2"), MakeFactory<FifoQueueOp>());
  RegisterKernel(cpu("QueueEnqueueV2"), [] { return std::make_unique<EnqueueOp>(false); });
  RegisterKernel(cpu("QueueEnqueueManyV2"), [] { return std::make_unique<EnqueueOp>(true); });
  RegisterKernel(cpu("QueueDequeueV2"), MakeFactory<DequeueOp>());
  RegisterKernel(cpu("QueueSizeV2"), MakeFactory<QueueSizeOp>());
  RegisterKernel(cpu("QueueCloseV2"), MakeFactory<QueueCloseOp>());
  RegisterKernel(cpu("ResourceConditionalAccumulator"), MakeFactory<AccumulatorOp>());
  RegisterKernel(cpu("ResourceAccumulatorApplyGradient"), MakeFactory<AccumulatorApplyOp>());
  RegisterKernel(cpu("ResourceAccumulatorTakeGradient"), MakeFactory<AccumulatorTakeOp>());
  RegisterKernel(cpu("ResourceAccumulatorNumAccumulated"), MakeFactory<AccumulatorNumOp>());
  RegisterKernel(cpu("ResourceAccumulatorSetGlobalStep"),
                 MakeFactory<AccumulatorSetGlobalStepOp>());
}

}  // namespace
}  // namespace towerflow
