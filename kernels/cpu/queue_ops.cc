// TF's queue ops (resource forms) on the CPU: FIFOQueueV2,
// PaddingFIFOQueueV2, RandomShuffleQueueV2 and PriorityQueueV2 (the queues
// of kernels/cpu/queue.h), and the ops that enqueue into them, dequeue from
// them (one element, a batch of n, up to n once closed), and ask their size
// and whether they are closed. TF 1's input pipelines (tf.train.batch,
// shuffle_batch, the producers) and SyncReplicasOptimizer's token queue
// stand on them.
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/cpu/queue.h"
#include "kernels/cpu/resource_waits.h"

namespace towerflow {
namespace {

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
