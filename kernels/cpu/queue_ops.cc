// TF's queues (resource forms), on the CPU: FIFOQueueV2, PaddingFIFOQueueV2,
// RandomShuffleQueueV2 and PriorityQueueV2, and the ops that enqueue into
// them, dequeue from them (one element, a batch of n, up to n once closed),
// and ask their size and whether they are closed. TF 1's input pipelines
// (tf.train.batch, shuffle_batch, the producers) and SyncReplicasOptimizer's
// token queue stand on them. Shared and waited on as
// kernels/cpu/resource_waits.h says.
//
// An element is a tuple of tensors, one per component. Enqueues and dequeues
// are served in their order of arrival: an enqueue waits while the queue is
// at capacity, a dequeue while the queue has too few elements (a random
// shuffle queue keeps min_after_dequeue of them until it is closed). A batch
// dequeue takes elements as they come, as TF's, so a batch larger than the
// capacity completes; if the queue closes short of the batch, or the step
// is aborted, the elements it took go back where they were (TF loses them on
// an abort). A priority queue takes a batch whole, lowest priority first.
#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_handle.h"
#include "framework/resource_mgr.h"
#include "framework/variant.h"
#include "kernels/cpu/resource_waits.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

enum class QueueKind { kFifo, kPaddingFifo, kRandomShuffle, kPriority };

const char* KindName(QueueKind kind) {
  switch (kind) {
    case QueueKind::kFifo:
      return "FIFOQueue";
    case QueueKind::kPaddingFifo:
      return "PaddingFIFOQueue";
    case QueueKind::kRandomShuffle:
      return "RandomShuffleQueue";
    case QueueKind::kPriority:
      return "PriorityQueue";
  }
  return "Queue";
}

// What a queue op's attrs ask for.
struct QueueSpec {
  QueueKind kind = QueueKind::kFifo;
  DataTypeVector types;                    // a priority queue's int64 priority first
  std::vector<PartialTensorShape> shapes;  // empty: any
  int64_t capacity = -1;                   // negative: no limit
  int64_t min_after_dequeue = 0;           // random shuffle only
  int64_t seed = 0, seed2 = 0;             // random shuffle only
};

std::string ShapesString(const std::vector<PartialTensorShape>& shapes) {
  return absl::StrCat("[",
                      absl::StrJoin(shapes, ", ",
                                    [](std::string* out, const PartialTensorShape& s) {
                                      out->append(s.DebugString());
                                    }),
                      "]");
}

std::string TypesString(const DataTypeVector& types) {
  return absl::StrJoin(types, ", ",
                       [](std::string* out, DataType t) { out->append(DataTypeString(t)); });
}

// Copies `n` elements of `src` from `src_at` into `dst` from `dst_at`.
void CopyRun(const Tensor& src, int64_t src_at, Tensor* dst, int64_t dst_at, int64_t n) {
  switch (src.dtype()) {
    case DT_STRING:
      std::copy_n(src.data<std::string>() + src_at, n, dst->data<std::string>() + dst_at);
      return;
    case DT_RESOURCE:
      std::copy_n(src.data<ResourceHandle>() + src_at, n, dst->data<ResourceHandle>() + dst_at);
      return;
    case DT_VARIANT:
      std::copy_n(src.data<Variant>() + src_at, n, dst->data<Variant>() + dst_at);
      return;
    default: {
      const size_t size = TensorElementSize(src.dtype());
      std::memcpy(static_cast<char*>(dst->raw_data()) + dst_at * size,
                  static_cast<const char*>(src.raw_data()) + src_at * size, n * size);
    }
  }
}

// Copies `element` into row `row` of `batch`, whose rows are at least as
// large in every dimension (the rest of the row is left as it is).
void CopyIntoRow(const Tensor& element, int64_t row, Tensor* batch) {
  const int64_t row_size = batch->dim_size(0) == 0 ? 0 : batch->NumElements() / batch->dim_size(0);
  const int rank = element.dims();
  if (element.NumElements() == 0) return;
  if (element.NumElements() == row_size) {
    CopyRun(element, 0, batch, row * row_size, row_size);
    return;
  }
  // Padded: one run per index of all dimensions but the last.
  std::vector<int64_t> stride(rank, 1);  // the batch row's
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * batch->dim_size(d + 2);
  const int64_t run = element.dim_size(rank - 1);
  std::vector<int64_t> index(rank, 0);
  for (int64_t from = 0; from < element.NumElements(); from += run) {
    int64_t to = row * row_size;
    for (int d = 0; d < rank - 1; ++d) to += index[d] * stride[d];
    CopyRun(element, from, batch, to, run);
    for (int d = rank - 2; d >= 0 && ++index[d] == element.dim_size(d); --d) index[d] = 0;
  }
}

class Queue : public ResourceBase {
 public:
  using Tuple = std::vector<Tensor>;

  Queue(QueueSpec spec, std::string name)
      : spec_(std::move(spec)),
        name_(std::move(name)),
        stream_(spec_.kind == QueueKind::kRandomShuffle ? SeededStream(spec_.seed, spec_.seed2)
                                                        : PhiloxStream(0, 0)),
        words_(&stream_) {}

  std::string DebugString() const override {
    return absl::StrCat(KindName(spec_.kind), " '", name_, "'");
  }

  // InvalidArgument unless a queue op asking for `spec` may share this queue
  // (TF's MatchesNodeDef).
  absl::Status CheckShared(const QueueSpec& spec) const {
    const std::string shared = absl::StrCat("Shared queue '", name_, "' ");
    if (spec.kind != spec_.kind) {
      return absl::InvalidArgumentError(
          absl::StrCat(shared, "is a ", KindName(spec_.kind), ", not a ", KindName(spec.kind)));
    }
    if (spec.capacity != spec_.capacity) {
      return absl::InvalidArgumentError(absl::StrCat(
          shared, "has capacity ", spec_.capacity, " but requested capacity was ", spec.capacity));
    }
    if (spec.types != spec_.types) {
      return absl::InvalidArgumentError(
          absl::StrCat(shared, "has component types ", TypesString(spec_.types),
                       " but requested component types were ", TypesString(spec.types)));
    }
    bool shapes_match = spec.shapes.size() == spec_.shapes.size();
    for (size_t i = 0; shapes_match && i < spec.shapes.size(); ++i) {
      shapes_match = spec_.kind == QueueKind::kPaddingFifo
                         ? spec.shapes[i].IsCompatibleWith(spec_.shapes[i])
                         : spec.shapes[i].IsIdenticalTo(spec_.shapes[i]);
    }
    if (!shapes_match) {
      return absl::InvalidArgumentError(
          absl::StrCat(shared, "has component shapes ", ShapesString(spec_.shapes),
                       " but requested component shapes were ", ShapesString(spec.shapes)));
    }
    if (spec.min_after_dequeue != spec_.min_after_dequeue) {
      return absl::InvalidArgumentError(
          absl::StrCat(shared, "has min_after_dequeue ", spec_.min_after_dequeue,
                       " but requested min_after_dequeue was ", spec.min_after_dequeue));
    }
    if ((spec.seed != 0 || spec.seed2 != 0) &&
        (spec.seed != spec_.seed || spec.seed2 != spec_.seed2)) {
      return absl::InvalidArgumentError(absl::StrCat(shared, "has random seeds (", spec_.seed, ", ",
                                                     spec_.seed2, ") but requested seeds are (",
                                                     spec.seed, ", ", spec.seed2, ")"));
    }
    return absl::OkStatus();
  }

  // InvalidArgument unless `t` is one element of this queue (`many`: a batch
  // of them along dimension 0, whose size goes to `count`).
  absl::Status CheckTuple(const Tuple& t, bool many, int64_t* count) const {
    if (t.size() != spec_.types.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(DebugString(), " has ", spec_.types.size(), " components, not ", t.size()));
    }
    *count = 1;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].dtype() != spec_.types[i]) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), " component ", i, " is ",
                                                       DataTypeString(spec_.types[i]), ", not ",
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
      if (!spec_.shapes.empty() && !spec_.shapes[i].IsCompatibleWith(PartialTensorShape(shape))) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), " component ", i,
                                                       " has shape ", spec_.shapes[i].DebugString(),
                                                       ", not ", shape.DebugString()));
      }
      if (i == 0 && spec_.kind == QueueKind::kPriority && shape.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(DebugString(), ": the priority (component 0) must be a scalar, not ",
                         shape.DebugString()));
      }
    }
    return absl::OkStatus();
  }

  // InvalidArgument unless the components of `types` are this queue's.
  absl::Status CheckDequeueTypes(const DataTypeVector& types) const {
    if (types == spec_.types) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        DebugString(), " holds (", TypesString(spec_.types), "), not (", TypesString(types), ")"));
  }

  // InvalidArgument unless batches of this queue's elements have a shape
  // before they come: a padding queue's pad to the largest element.
  absl::Status CheckBatchable() const {
    bool specified = !spec_.shapes.empty();
    for (const PartialTensorShape& s : spec_.shapes) {
      specified =
          specified && (spec_.kind == QueueKind::kPaddingFifo ? s.dims() >= 0 : s.IsFullyDefined());
    }
    if (specified) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        KindName(spec_.kind), " '", name_,
        "': DequeueMany and DequeueUpTo require the components to have specified shapes",
        spec_.shapes.empty() ? "" : absl::StrCat(", not ", ShapesString(spec_.shapes))));
  }

  // The batch of `elements` (CheckBatchable): each component stacked along
  // a new dimension 0, padded with zeros to the largest element where the
  // queue's shape leaves a dimension open.
  absl::StatusOr<Tuple> Batch(const std::vector<Tuple>& elements) const {
    Tuple out;
    for (size_t c = 0; c < spec_.types.size(); ++c) {
      const PartialTensorShape& declared = spec_.shapes[c];
      std::vector<int64_t> dims = {static_cast<int64_t>(elements.size())};
      for (int d = 0; d < declared.dims(); ++d) {
        int64_t size = declared.dim_size(d);
        if (size < 0) {
          size = 0;
          for (const Tuple& e : elements) size = std::max(size, e[c].dim_size(d));
        }
        dims.push_back(size);
      }
      TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
      TW_ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(CpuAllocator(), spec_.types[c], shape));
      const DataType dtype = spec_.types[c];
      if (!declared.IsFullyDefined() && dtype != DT_STRING && dtype != DT_RESOURCE &&
          dtype != DT_VARIANT) {
        std::memset(batch.raw_data(), 0, batch.TotalBytes());  // the padding
      }
      for (size_t r = 0; r < elements.size(); ++r) CopyIntoRow(elements[r][c], r, &batch);
      out.push_back(std::move(batch));
    }
    return out;
  }

  void Enqueue(int64_t id, std::deque<Tuple> elements, WaitDone<bool> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (enqueues_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("enqueue cancelled"), false); });
      } else if (closed_) {
        to_run.push_back([this, done] { done(ClosedError(), false); });
      } else if (elements.empty()) {
        to_run.push_back([done] { done(absl::OkStatus(), true); });
      } else {
        enqueues_.Add(id, {std::move(elements), std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  // One element (`batch` false, `n` 1), or a batch of `n` (CheckBatchable);
  // `up_to`: fewer once the queue is closed.
  void Dequeue(int64_t id, int64_t n, bool batch, bool up_to, WaitDone<Tuple> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (dequeues_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("dequeue cancelled"), {}); });
      } else {
        dequeues_.Add(id, {n, batch, up_to, {}, std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  // End wait `id` with `status`.
  void CancelEnqueue(int64_t id, const absl::Status& status) {
    PendingEnqueue enqueue;
    bool got;
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      got = enqueues_.Take(id, &enqueue);
      if (got) FlushLocked(&to_run);  // a closed queue may now have all it will get
    }
    if (got) enqueue.done(status, false);
    for (auto& fn : to_run) fn();
  }
  void CancelDequeue(int64_t id, const absl::Status& status) {
    PendingDequeue dequeue;
    bool got;
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      got = dequeues_.Take(id, &dequeue);
      if (got && !dequeue.taken.empty()) {
        RestoreLocked(&dequeue.taken);
        FlushLocked(&to_run);
      }
    }
    if (got) dequeue.done(status, {});
    for (auto& fn : to_run) fn();
  }

  int64_t Size() {
    absl::MutexLock lock(&mu_);
    return StoredLocked();
  }
  bool IsClosed() {
    absl::MutexLock lock(&mu_);
    return closed_;
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
  struct PendingDequeue {
    int64_t n = 1;
    bool batch = false;
    bool up_to = false;
    std::vector<Tuple> taken;  // so far, in order
    WaitDone<Tuple> done;
  };

  absl::Status ClosedError() const {
    return absl::CancelledError(absl::StrCat(DebugString(), " is closed."));
  }

  int64_t StoredLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int64_t>(spec_.kind == QueueKind::kPriority ? by_priority_.size()
                                                                   : elements_.size());
  }
  void PushLocked(Tuple t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (spec_.kind == QueueKind::kPriority) {
      const int64_t priority = t[0].data<int64_t>()[0];
      by_priority_.emplace(priority, std::move(t));  // after equal priorities
    } else {
      elements_.push_back(std::move(t));
    }
  }
  // The next element in the queue's order: TF's random pick for a random
  // shuffle queue (a 32-bit Philox word modulo the size; the last element
  // takes the picked one's place).
  Tuple PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Tuple t;
    switch (spec_.kind) {
      case QueueKind::kPriority:
        t = std::move(by_priority_.begin()->second);
        by_priority_.erase(by_priority_.begin());
        return t;
      case QueueKind::kRandomShuffle: {
        const size_t i = words_.Next() % elements_.size();
        t = std::move(elements_[i]);
        elements_[i] = std::move(elements_.back());
        elements_.pop_back();
        return t;
      }
      default:
        t = std::move(elements_.front());
        elements_.pop_front();
        return t;
    }
  }
  // Puts a partial batch back as TF does: at the front of a FIFO queue in
  // its order, at the back of a random shuffle queue from the last taken.
  void RestoreLocked(std::vector<Tuple>* taken) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = taken->rbegin(); it != taken->rend(); ++it) {
      if (spec_.kind == QueueKind::kFifo || spec_.kind == QueueKind::kPaddingFifo) {
        elements_.push_front(std::move(*it));
      } else {
        PushLocked(std::move(*it));
      }
    }
    taken->clear();
  }

  // Takes what the first dequeue may take; true when it is over, with its
  // result in `result`.
  bool ServeLocked(PendingDequeue& d, bool* progress, absl::StatusOr<Tuple>* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t size = StoredLocked();
    int64_t need = d.n - static_cast<int64_t>(d.taken.size());
    if (closed_ && enqueues_.empty() && size < need) {
      // No more elements will come.
      RestoreLocked(&d.taken);
      if (d.up_to && StoredLocked() > 0) {
        d.n = need = StoredLocked();
      } else {
        *result = absl::OutOfRangeError(
            absl::StrCat(DebugString(), " is closed and has insufficient elements (requested ",
                         need, ", current size ", size, ")"));
        return true;
      }
    }
    if (spec_.kind == QueueKind::kPriority && size < need) return false;
    const int64_t keep = closed_ ? 0 : spec_.min_after_dequeue;
    for (; need > 0 && StoredLocked() > keep; --need) {
      d.taken.push_back(PopLocked());
      *progress = true;
    }
    if (need > 0) return false;
    if (d.batch) {
      *result = Batch(d.taken);
    } else {
      *result = std::move(d.taken[0]);
    }
    return true;
  }

  // Moves elements in and out while waits can go on; what to call after the
  // lock goes into `to_run`.
  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool progress = true;
    while (progress) {
      progress = false;
      while (!enqueues_.empty() && (spec_.capacity < 0 || StoredLocked() < spec_.capacity)) {
        PendingEnqueue& e = enqueues_.front().second;
        PushLocked(std::move(e.elements.front()));
        e.elements.pop_front();
        progress = true;
        if (e.elements.empty()) {
          to_run->push_back([done = std::move(e.done)] { done(absl::OkStatus(), true); });
          enqueues_.pop_front();
        }
      }
      while (!dequeues_.empty()) {
        absl::StatusOr<Tuple> result;
        if (!ServeLocked(dequeues_.front().second, &progress, &result)) break;
        to_run->push_back([done = std::move(dequeues_.front().second.done),
                           result = std::move(result)]() mutable {
          if (result.ok()) {
            done(absl::OkStatus(), *std::move(result));
          } else {
            done(result.status(), {});
          }
        });
        dequeues_.pop_front();
        progress = true;
      }
    }
  }

  const QueueSpec spec_;
  const std::string name_;
  absl::Mutex mu_;
  PhiloxStream stream_ ABSL_GUARDED_BY(mu_);
  PhiloxWords words_ ABSL_GUARDED_BY(mu_);
  std::deque<Tuple> elements_ ABSL_GUARDED_BY(mu_);  // all kinds but priority
  std::multimap<int64_t, Tuple> by_priority_ ABSL_GUARDED_BY(mu_);
  Waits<PendingEnqueue> enqueues_ ABSL_GUARDED_BY(mu_);
  Waits<PendingDequeue> dequeues_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2, PriorityQueueV2:
// the queue's handle; the queue is made on the first run, and a queue of
// the same name made by another op must match this one's attrs.
class QueueOp : public OpKernel {
 public:
  explicit QueueOp(QueueKind kind) { spec_.kind = kind; }
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("component_types", &spec_.types));
    TW_RETURN_IF_ERROR(c.GetAttr("shapes", &spec_.shapes));
    TW_RETURN_IF_ERROR(c.GetAttr("capacity", &spec_.capacity));
    if (spec_.kind == QueueKind::kPriority) {  // the attrs leave out the priority
      spec_.types.insert(spec_.types.begin(), DT_INT64);
      if (!spec_.shapes.empty()) spec_.shapes.insert(spec_.shapes.begin(), PartialTensorShape({}));
    }
    if (!spec_.shapes.empty() && spec_.shapes.size() != spec_.types.size()) {
      return absl::InvalidArgumentError(absl::StrCat(c.name(), ": ", spec_.shapes.size(),
                                                     " shapes for ", spec_.types.size(),
                                                     " component types"));
    }
    if (spec_.kind == QueueKind::kPaddingFifo) {
      if (spec_.shapes.size() != spec_.types.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(c.name(), ": a PaddingFIFOQueue needs the shapes of its components"));
      }
      for (const PartialTensorShape& s : spec_.shapes) {
        if (s.dims() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(c.name(), ": shape ", s.DebugString(), " must have known rank."));
        }
      }
    }
    if (spec_.kind == QueueKind::kRandomShuffle) {
      TW_RETURN_IF_ERROR(c.GetAttr("min_after_dequeue", &spec_.min_after_dequeue));
      TW_RETURN_IF_ERROR(c.GetAttr("seed", &spec_.seed));
      TW_RETURN_IF_ERROR(c.GetAttr("seed2", &spec_.seed2));
      if (spec_.min_after_dequeue < 0 ||
          (spec_.capacity >= 0 && spec_.min_after_dequeue >= spec_.capacity)) {
        return absl::InvalidArgumentError(
            absl::StrCat(c.name(), ": min_after_dequeue ", spec_.min_after_dequeue,
                         " must be >= 0 and < capacity ", spec_.capacity));
      }
    }
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, KindName(spec_.kind)));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const ResourceHandle& h = *handle_.data<ResourceHandle>();
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue,
                        ctx->resource_manager()->LookupOrCreate<Queue>(
                            h.container, h.name, [&]() -> absl::StatusOr<std::shared_ptr<Queue>> {
                              return std::make_shared<Queue>(spec_, h.name);
                            }));
    TW_RETURN_IF_ERROR(queue->CheckShared(spec_));
    return ctx->set_output(0, handle_);
  }

 private:
  QueueSpec spec_;
  Tensor handle_;
};

class EnqueueOp : public AsyncOpKernel {
 public:
  explicit EnqueueOp(bool many) : many_(many) {}
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Queue>> queue = LookupInput<Queue>(ctx, "queue");
    if (!queue.ok()) return done(queue.status());
    Queue::Tuple tuple;
    for (int i = 1; i < ctx->num_inputs(); ++i) tuple.push_back(ctx->input(i));
    int64_t count = 0;
    if (absl::Status s = (*queue)->CheckTuple(tuple, many_, &count); !s.ok()) return done(s);
    std::deque<Queue::Tuple> elements;
    if (!many_) {
      elements.push_back(std::move(tuple));
    } else {
      for (int64_t r = 0; r < count; ++r) {
        Queue::Tuple element;
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
    std::shared_ptr<Queue> q = *queue;
    StartCancellableWait(
        ctx, [q](int64_t id, const absl::Status& s) { q->CancelEnqueue(id, s); }, std::move(done),
        [q, elements = std::move(elements)](int64_t id, DoneCallback done) mutable {
          q->Enqueue(id, std::move(elements), [done](absl::Status s, bool) { done(s); });
        });
  }

 private:
  const bool many_;
};

// QueueDequeueV2 (one element), QueueDequeueManyV2 (a batch of n) and
// QueueDequeueUpToV2 (a batch of n, or what is left once closed).
class DequeueOp : public AsyncOpKernel {
 public:
  enum Form { kOne, kMany, kUpTo };
  explicit DequeueOp(Form form) : form_(form) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("component_types", &types_);
  }
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Queue>> queue = LookupInput<Queue>(ctx, "queue");
    if (!queue.ok()) return done(queue.status());
    std::shared_ptr<Queue> q = *queue;
    if (absl::Status s = q->CheckDequeueTypes(types_); !s.ok()) return done(s);
    int64_t n = 1;
    if (form_ != kOne) {
      absl::StatusOr<int64_t> requested = ScalarInput(ctx, 1, DT_INT32, "n");
      if (!requested.ok()) return done(requested.status());
      n = *requested;
      if (n < 0) {
        return done(absl::InvalidArgumentError(
            absl::StrCat(ctx->name(), ": requested ", n, " < 0 elements")));
      }
      if (absl::Status s = q->CheckBatchable(); !s.ok()) return done(s);
      if (n == 0) return done(SetOutputs(ctx, q->Batch({})));
    }
    StartCancellableWait(
        ctx, [q](int64_t id, const absl::Status& s) { q->CancelDequeue(id, s); }, std::move(done),
        [q, ctx, n, batch = form_ != kOne, up_to = form_ == kUpTo](int64_t id, DoneCallback done) {
          q->Dequeue(id, n, batch, up_to, [ctx, done](absl::Status s, Queue::Tuple t) {
            done(s.ok() ? SetOutputs(ctx, std::move(t)) : s);
          });
        });
  }

 private:
  static absl::Status SetOutputs(KernelContext* ctx, absl::StatusOr<Queue::Tuple> t) {
    TW_RETURN_IF_ERROR(t.status());
    for (size_t i = 0; i < t->size(); ++i) {
      TW_RETURN_IF_ERROR(ctx->set_output(static_cast<int>(i), std::move((*t)[i])));
    }
    return absl::OkStatus();
  }

  const Form form_;
  DataTypeVector types_;
};

class QueueSizeOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue, LookupInput<Queue>(ctx, "queue"));
    Tensor size(DT_INT32, TensorShape());
    size.flat<int32_t>()(0) = static_cast<int32_t>(queue->Size());
    return ctx->set_output(0, size);
  }
};

class QueueIsClosedOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue, LookupInput<Queue>(ctx, "queue"));
    Tensor closed(DT_BOOL, TensorShape());
    closed.flat<bool>()(0) = queue->IsClosed();
    return ctx->set_output(0, closed);
  }
};

class QueueCloseOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue, LookupInput<Queue>(ctx, "queue"));
    queue->Close(cancel_pending_enqueues_);
    return absl::OkStatus();
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

TW_REGISTER_KERNELS(queue_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  const auto queue = [](QueueKind kind) {
    return [kind] { return std::make_unique<QueueOp>(kind); };
  };
  RegisterKernel(cpu("FIFOQueueV2"), queue(QueueKind::kFifo));
  RegisterKernel(cpu("PaddingFIFOQueueV2"), queue(QueueKind::kPaddingFifo));
  RegisterKernel(cpu("RandomShuffleQueueV2"), queue(QueueKind::kRandomShuffle));
  RegisterKernel(cpu("PriorityQueueV2"), queue(QueueKind::kPriority));
  RegisterKernel(cpu("QueueEnqueueV2"), [] { return std::make_unique<EnqueueOp>(false); });
  RegisterKernel(cpu("QueueEnqueueManyV2"), [] { return std::make_unique<EnqueueOp>(true); });
  const auto dequeue = [](DequeueOp::Form form) {
    return [form] { return std::make_unique<DequeueOp>(form); };
  };
  RegisterKernel(cpu("QueueDequeueV2"), dequeue(DequeueOp::kOne));
  RegisterKernel(cpu("QueueDequeueManyV2"), dequeue(DequeueOp::kMany));
  RegisterKernel(cpu("QueueDequeueUpToV2"), dequeue(DequeueOp::kUpTo));
  RegisterKernel(cpu("QueueSizeV2"), MakeFactory<QueueSizeOp>());
  RegisterKernel(cpu("QueueIsClosedV2"), MakeFactory<QueueIsClosedOp>());
  RegisterKernel(cpu("QueueCloseV2"), MakeFactory<QueueCloseOp>());
}

}  // namespace
}  // namespace towerflow
