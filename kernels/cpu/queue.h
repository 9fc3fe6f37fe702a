// TF's queues (resource forms): FIFO, padding FIFO, random shuffle and
// priority queues of tuples of tensors, shared by name in a device's
// ResourceMgr. The queue kernels (queue_ops.cc) and the readers, which take
// their work from a queue (reader_ops.cc), stand on this.
//
// An element is a tuple of tensors, one per component. Enqueues and dequeues
// are served in their order of arrival: an enqueue waits while the queue is
// at capacity, a dequeue while the queue has too few elements (a random
// shuffle queue keeps min_after_dequeue of them until it is closed). A batch
// dequeue takes elements as they come, as TF's, so a batch larger than the
// capacity completes; if the queue closes short of the batch, or the step
// is aborted, the elements it took go back where they were (TF loses them on
// an abort). A priority queue takes a batch whole, lowest priority first.
// Waits hold no thread: see resource_waits.h.
#ifndef TOWERFLOW_KERNELS_CPU_QUEUE_H_
#define TOWERFLOW_KERNELS_CPU_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/philox.h"
#include "core/tensor_shape.h"
#include "framework/resource_mgr.h"
#include "framework/tensor.h"
#include "kernels/cpu/resource_waits.h"
#include "kernels/random_op_base.h"

namespace towerflow {

enum class QueueKind { kFifo, kPaddingFifo, kRandomShuffle, kPriority };

// "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue".
const char* KindName(QueueKind kind);

// What a queue op's attrs ask for.
struct QueueSpec {
  QueueKind kind = QueueKind::kFifo;
  DataTypeVector types;                    // a priority queue's int64 priority first
  std::vector<PartialTensorShape> shapes;  // empty: any
  int64_t capacity = -1;                   // negative: no limit
  int64_t min_after_dequeue = 0;           // random shuffle only
  int64_t seed = 0, seed2 = 0;             // random shuffle only
};

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
  absl::Status CheckShared(const QueueSpec& spec) const;

  // InvalidArgument unless `t` is one element of this queue (`many`: a batch
  // of them along dimension 0, whose size goes to `count`).
  absl::Status CheckTuple(const Tuple& t, bool many, int64_t* count) const;

  // InvalidArgument unless the components of `types` are this queue's.
  absl::Status CheckDequeueTypes(const DataTypeVector& types) const;

  // InvalidArgument unless batches of this queue's elements have a shape
  // before they come: a padding queue's pad to the largest element.
  absl::Status CheckBatchable() const;

  // The batch of `elements` (CheckBatchable): each component stacked along
  // a new dimension 0, padded with zeros to the largest element where the
  // queue's shape leaves a dimension open.
  absl::StatusOr<Tuple> Batch(const std::vector<Tuple>& elements) const;

  void Enqueue(int64_t id, std::deque<Tuple> elements, WaitDone<bool> done);

  // One element (`batch` false, `n` 1), or a batch of `n` (CheckBatchable);
  // `up_to`: fewer once the queue is closed.
  void Dequeue(int64_t id, int64_t n, bool batch, bool up_to, WaitDone<Tuple> done);

  // End wait `id` with `status`.
  void CancelEnqueue(int64_t id, const absl::Status& status);
  void CancelDequeue(int64_t id, const absl::Status& status);

  int64_t Size();
  bool IsClosed();

  void Close(bool cancel_pending_enqueues);

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

  absl::Status ClosedError() const;

  int64_t StoredLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushLocked(Tuple t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The next element in the queue's order: TF's random pick for a random
  // shuffle queue (a 32-bit Philox word modulo the size; the last element
  // takes the picked one's place).
  Tuple PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a partial batch back as TF does: at the front of a FIFO queue in
  // its order, at the back of a random shuffle queue from the last taken.
  void RestoreLocked(std::vector<Tuple>* taken) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Takes what the first dequeue may take; true when it is over, with its
  // result in `result`.
  bool ServeLocked(PendingDequeue& d, bool* progress, absl::StatusOr<Tuple>* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Moves elements in and out while waits can go on; what to call after the
  // lock goes into `to_run`.
  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

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

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_QUEUE_H_
