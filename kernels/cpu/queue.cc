#include "kernels/cpu/queue.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "kernels/cpu/list_util.h"

namespace towerflow {
namespace {

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

// Copies `element` into row `row` of `batch`, whose rows are at least as
// large in every dimension (the rest of the row is left as it is).
void CopyIntoRow(const Tensor& element, int64_t row, Tensor* batch) {
  const int64_t row_size = batch->dim_size(0) == 0 ? 0 : batch->NumElements() / batch->dim_size(0);
  const int rank = element.dims();
  if (element.NumElements() == 0) return;
  if (element.NumElements() == row_size) {
    CopyElements(element, 0, row_size, batch, row * row_size);
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
    CopyElements(element, from, run, batch, to);
    for (int d = rank - 2; d >= 0 && ++index[d] == element.dim_size(d); --d) index[d] = 0;
  }
}

}  // namespace

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

absl::Status Queue::CheckShared(const QueueSpec& spec) const {
  const std::string shared = absl::StrCat("Shared queue '", name_, "' ");
  if (spec.kind != spec_.kind) {
    return absl::InvalidArgumentError(
        absl::StrCat(shared, "is a ", KindName(spec_.kind), ", not a ", KindName(spec.kind)));
  }
  if (spec.capacity != spec_.capacity) {
    return absl::InvalidArgumentError(absl::StrCat(shared, "has capacity ", spec_.capacity,
                                                   " but requested capacity was ", spec.capacity));
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

absl::Status Queue::CheckTuple(const Tuple& t, bool many, int64_t* count) const {
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
            absl::StrCat(DebugString(), ": enqueue_many components differ in dimension 0 (", *count,
                         " and ", shape.dim_size(0), ")"));
      }
      shape.RemoveDim(0);
    }
    if (!spec_.shapes.empty() && !spec_.shapes[i].IsCompatibleWith(PartialTensorShape(shape))) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " component ", i, " has shape ",
                                                     spec_.shapes[i].DebugString(), ", not ",
                                                     shape.DebugString()));
    }
    if (i == 0 && spec_.kind == QueueKind::kPriority && shape.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(DebugString(), ": the priority (component 0) must be a scalar, not ",
                       shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::Status Queue::CheckDequeueTypes(const DataTypeVector& types) const {
  if (types == spec_.types) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      DebugString(), " holds (", TypesString(spec_.types), "), not (", TypesString(types), ")"));
}

absl::Status Queue::CheckBatchable() const {
  bool specified = !spec_.shapes.empty();
  for (const PartialTensorShape& s : spec_.shapes) {
    specified =
        specified && (spec_.kind == QueueKind::kPaddingFifo ? s.dims() >= 0 : s.IsFullyDefined());
  }
  if (specified) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(KindName(spec_.kind), " '", name_,
                   "': DequeueMany and DequeueUpTo require the components to have specified shapes",
                   spec_.shapes.empty() ? "" : absl::StrCat(", not ", ShapesString(spec_.shapes))));
}

absl::StatusOr<Queue::Tuple> Queue::Batch(const std::vector<Tuple>& elements) const {
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

void Queue::Enqueue(int64_t id, std::deque<Tuple> elements, WaitDone<bool> done) {
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

void Queue::Dequeue(int64_t id, int64_t n, bool batch, bool up_to, WaitDone<Tuple> done) {
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

void Queue::CancelEnqueue(int64_t id, const absl::Status& status) {
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

void Queue::CancelDequeue(int64_t id, const absl::Status& status) {
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

int64_t Queue::Size() {
  absl::MutexLock lock(&mu_);
  return StoredLocked();
}

bool Queue::IsClosed() {
  absl::MutexLock lock(&mu_);
  return closed_;
}

void Queue::Close(bool cancel_pending_enqueues) {
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

absl::Status Queue::ClosedError() const {
  return absl::CancelledError(absl::StrCat(DebugString(), " is closed."));
}

int64_t Queue::StoredLocked() const {
  return static_cast<int64_t>(spec_.kind == QueueKind::kPriority ? by_priority_.size()
                                                                 : elements_.size());
}

void Queue::PushLocked(Tuple t) {
  if (spec_.kind == QueueKind::kPriority) {
    const int64_t priority = t[0].data<int64_t>()[0];
    by_priority_.emplace(priority, std::move(t));  // after equal priorities
  } else {
    elements_.push_back(std::move(t));
  }
}

Queue::Tuple Queue::PopLocked() {
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

void Queue::RestoreLocked(std::vector<Tuple>* taken) {
  for (auto it = taken->rbegin(); it != taken->rend(); ++it) {
    if (spec_.kind == QueueKind::kFifo || spec_.kind == QueueKind::kPaddingFifo) {
      elements_.push_front(std::move(*it));
    } else {
      PushLocked(std::move(*it));
    }
  }
  taken->clear();
}

bool Queue::ServeLocked(PendingDequeue& d, bool* progress, absl::StatusOr<Tuple>* result) {
  const int64_t size = StoredLocked();
  int64_t need = d.n - static_cast<int64_t>(d.taken.size());
  if (closed_ && enqueues_.empty() && size < need) {
    // No more elements will come.
    RestoreLocked(&d.taken);
    if (d.up_to && StoredLocked() > 0) {
      d.n = need = StoredLocked();
    } else {
      *result = absl::OutOfRangeError(
          absl::StrCat(DebugString(), " is closed and has insufficient elements (requested ", need,
                       ", current size ", size, ")"));
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

void Queue::FlushLocked(std::vector<std::function<void()>>* to_run) {
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
      to_run->push_back(
          [done = std::move(dequeues_.front().second.done), result = std::move(result)]() mutable {
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

}  // namespace towerflow
