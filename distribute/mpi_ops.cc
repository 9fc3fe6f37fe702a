// The CPU kernels of MpiAllReduce, MpiAllGather, MpiRank and MpiBroadcast
// (ops/nccl_ops.cc).
//
// MpiAllReduce: the inputs summed over the cluster's processes with tensor
// fusion (Horovod's). Inputs are taken in order and packed, per dtype, into
// buffers of up to the threshold; a tensor larger than the threshold
// travels alone. Each buffer is one MPI_Allreduce, so a model with many
// small variables pays a few collectives per step, not one per variable.
// The buffers go as one group (Cluster::AllReduceSum of a span): the
// processes check their arguments and watch for failures once per run, so
// even with fusion off a small tensor costs about what MPI alone does.
// Fusion changes only how the numbers travel, not the sums. In a cluster of
// one process the outputs are the inputs (so are MpiBroadcast's).
//
// A fused buffer is reduced in place and the outputs are views of it (each
// tensor's slot starts on a 64-byte boundary), so nothing is copied out; the
// kernel keeps it from run to run, and the inputs' producers may write
// straight into it, so nothing is copied in either (Note [Fusion buffer]).
#include <cstring>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace distribute {
namespace {

// The fusion_threshold_bytes attr, checked.
absl::StatusOr<int64_t> FusionThreshold(const KernelConstruction& c) {
  int64_t threshold = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("fusion_threshold_bytes", &threshold));
  if (threshold < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion_threshold_bytes must be >= 0, got ", threshold));
  }
  return threshold;
}

class MpiAllReduceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(threshold_, FusionThreshold(c));
    return absl::OkStatus();
  }

  bool TakesInputBuffers() const override { return true; }

  // Input `input`'s slot in its bucket's kept buffer, when the last run laid
  // it out with this dtype and element count and the buffer is this run's: the
  // first of the run's producers to ask takes it, once nothing else holds
  // it (the outputs of the run before are gone). See Note [Fusion buffer].
  std::optional<Tensor> InputBuffer(int64_t run, int input, DataType dtype,
                                    const TensorShape& shape) override {
    absl::MutexLock lock(&mu_);
    if (input < 0 || input >= static_cast<int>(slots_.size())) return std::nullopt;
    const Slot& slot = slots_[input];
    // A producer before a Reshape asks with its own shape. An empty tensor
    // has nothing to write (and its view at the buffer's end would count as
    // one more holder).
    if (slot.bucket < 0 || slot.dtype != dtype ||
        slot.shape.num_elements() != shape.num_elements() || shape.num_elements() == 0) {
      return std::nullopt;
    }
    Fusion& fusion = fusions_[slot.bucket];
    if (fusion.run != run) {
      if (!fusion.buffer.RefCountIsOne()) return std::nullopt;
      fusion.run = run;
    }
    absl::StatusOr<Tensor> view = View(fusion.buffer, slot, shape);
    if (!view.ok()) return std::nullopt;
    return *std::move(view);
  }

  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
    const int n = ctx->num_inputs();
    for (int i = 0; i < n; ++i) {
      const DataType dtype = ctx->input(i).dtype();
      if (dtype != DT_FLOAT && dtype != DT_DOUBLE && dtype != DT_INT32 && dtype != DT_INT64) {
        return absl::InvalidArgumentError(
            absl::StrCat("MpiAllReduce input ", i, " is ", DataTypeString(dtype),
                         "; it sums float, double, int32 and int64 tensors"));
      }
    }
    if (cluster->size() == 1) {
      for (int i = 0; i < n; ++i) TW_RETURN_IF_ERROR(ctx->set_output(i, ctx->input(i)));
      return absl::OkStatus();
    }
    // Buckets of inputs, per dtype in order of first appearance; the
    // threshold bounds the tensors' bytes, the buffer holds their slots.
    std::vector<std::vector<int>> buckets;
    std::vector<DataType> bucket_dtype;
    std::vector<int64_t> bucket_bytes, bucket_elements;
    std::vector<Slot> slots(n);
    std::vector<int> open(DataType_ARRAYSIZE, -1);  // each dtype's open bucket
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(i);
      const int64_t bytes = static_cast<int64_t>(t.TotalBytes());
      int& b = open[t.dtype()];
      if (b < 0 || bucket_bytes[b] + bytes > threshold_) {
        b = static_cast<int>(buckets.size());
        buckets.emplace_back();
        bucket_dtype.push_back(t.dtype());
        bucket_bytes.push_back(0);
        bucket_elements.push_back(0);
      }
      buckets[b].push_back(i);
      slots[i] = {b, bucket_elements[b], t.dtype(), t.shape()};
      bucket_bytes[b] += bytes;
      bucket_elements[b] += SlotElements(t);
    }
    for (int i = 0; i < n; ++i) {
      if (buckets[slots[i].bucket].size() == 1) slots[i].bucket = -1;  // alone
    }
    // Each bucket's tensor: the input itself when alone (in place when no
    // one else holds it, as a step's gradient), else its fused buffer. All
    // of them are summed in one group, which meets the other processes once.
    std::vector<Tensor> fused(buckets.size());
    std::vector<Tensor*> group(buckets.size());
    TW_RETURN_IF_ERROR(
        TakeFusionBuffers(ctx, buckets, bucket_dtype, bucket_elements, slots, &fused));
    int64_t copied = 0;
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].size() == 1) {
        const int i = buckets[b][0];
        TW_ASSIGN_OR_RETURN(group[b],
                            ctx->forward_input_or_allocate_output(i, i, ctx->input(i).shape()));
        if (group[b]->raw_data() != ctx->input(i).raw_data()) {
          std::memcpy(group[b]->raw_data(), ctx->input(i).raw_data(), ctx->input(i).TotalBytes());
        }
        continue;
      }
      const int64_t element = static_cast<int64_t>(TensorElementSize(bucket_dtype[b]));
      for (int i : buckets[b]) {
        char* slot = static_cast<char*>(fused[b].raw_data()) + slots[i].offset * element;
        if (slot == ctx->input(i).raw_data()) continue;  // its producer wrote it there
        std::memcpy(slot, ctx->input(i).raw_data(), ctx->input(i).TotalBytes());
        copied += static_cast<int64_t>(ctx->input(i).TotalBytes());
      }
      group[b] = &fused[b];
    }
    cluster->RecordFusionCopy(copied);
    TW_RETURN_IF_ERROR(cluster->AllReduceSum(group));
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].size() == 1) continue;
      for (int i : buckets[b]) {
        TW_ASSIGN_OR_RETURN(Tensor out, View(fused[b], slots[i], slots[i].shape));
        TW_RETURN_IF_ERROR(ctx->set_output(i, std::move(out)));
      }
    }
    return absl::OkStatus();
  }

 private:
  // Where an input lies in its bucket's fused buffer.
  struct Slot {
    int bucket = -1;     // -1: the input travels alone
    int64_t offset = 0;  // in elements
    DataType dtype = DT_INVALID;
    TensorShape shape;
  };
  // A bucket's kept buffer and the run that holds it.
  struct Fusion {
    Tensor buffer;
    int64_t run = 0;
  };

  // A tensor's elements rounded up to its slot in a fused buffer: slots
  // start on 64-byte boundaries.
  static int64_t SlotElements(const Tensor& t) {
    constexpr int64_t kSlot = 64;
    const int64_t element = static_cast<int64_t>(TensorElementSize(t.dtype()));
    return (static_cast<int64_t>(t.TotalBytes()) + kSlot - 1) / kSlot * kSlot / element;
  }

  // Input `slot`'s elements in `buffer`, as `shape`.
  static absl::StatusOr<Tensor> View(const Tensor& buffer, const Slot& slot,
                                     const TensorShape& shape) {
    TW_ASSIGN_OR_RETURN(Tensor elements,
                        buffer.Slice(slot.offset, slot.offset + slot.shape.num_elements()));
    return elements.Reshaped(shape);
  }

  // Note [Fusion buffer]
  // Each bucket of two or more inputs is reduced in a buffer the kernel
  // keeps from run to run (as Horovod keeps its fusion buffer), whose slots
  // become the outputs: a steady step allocates nothing and copies nothing
  // out. Its inputs' producers may write straight into their slots (TF's
  // ScopedAllocator): the executor asks InputBuffer when a producer
  // allocates an output this node alone consumes, and the slot is given
  // when the last run laid that input out with the same dtype and element
  // count (the executor passes the question on through a Reshape or an
  // Identity to the op before it).
  // Then nothing is copied in either. A bucket's buffer is this run's when
  //  * nothing but the kernel and this run's inputs holds it: the outputs of
  //    the runs before are gone, and no producer kept or shared what it
  //    wrote (the count of the buffer's holders says so), and
  //  * every input that lies in it lies at its slot of this run's layout.
  // Otherwise the bucket gets a new buffer, zeroed (the padding between
  // slots is summed too, and never read), and every input is copied in: the
  // old buffer stays with whoever holds it, untouched. Only the first
  // producer of a run to ask takes a free buffer for its run, so producers
  // of two runs at once never share one; a run's producers hold it from
  // then until its outputs are gone.
  absl::Status TakeFusionBuffers(KernelContext* ctx, const std::vector<std::vector<int>>& buckets,
                                 const std::vector<DataType>& dtypes,
                                 const std::vector<int64_t>& elements,
                                 const std::vector<Slot>& slots, std::vector<Tensor>* fused) {
    absl::MutexLock lock(&mu_);
    if (fusions_.size() < buckets.size()) fusions_.resize(buckets.size());
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].size() == 1) continue;
      Fusion& fusion = fusions_[b];
      bool keep = fusion.buffer.IsInitialized() && fusion.buffer.dtype() == dtypes[b] &&
                  fusion.buffer.NumElements() == elements[b];
      if (keep) {
        const char* begin = static_cast<const char*>(fusion.buffer.raw_data());
        const char* end = begin + fusion.buffer.TotalBytes();
        const int64_t element = static_cast<int64_t>(TensorElementSize(dtypes[b]));
        int64_t inside = 0;  // inputs that lie in the buffer
        for (int i = 0; i < ctx->num_inputs() && keep; ++i) {
          const char* data = static_cast<const char*>(ctx->input(i).raw_data());
          if (data < begin || data >= end) continue;
          ++inside;
          keep =
              slots[i].bucket == static_cast<int>(b) && data == begin + slots[i].offset * element;
        }
        keep = keep && fusion.buffer.BufferRefCount() == 1 + inside;
      }
      if (!keep) {
        TW_ASSIGN_OR_RETURN(fusion.buffer,
                            ctx->allocate_temp(dtypes[b], TensorShape({elements[b]})));
        std::memset(fusion.buffer.raw_data(), 0, fusion.buffer.TotalBytes());
      }
      fusion.run = ctx->run_id();
      (*fused)[b] = fusion.buffer;
    }
    slots_ = slots;
    return absl::OkStatus();
  }

  int64_t threshold_ = 0;
  absl::Mutex mu_;
  std::vector<Fusion> fusions_ ABSL_GUARDED_BY(mu_);  // by bucket
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);      // by input, as the last run laid them out
};

// MpiBroadcast: root_rank's inputs on every process. Tensors travel as
// bytes, so one buffer holds any mix of dtypes.
class MpiBroadcastOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("root_rank", &root_));
    TW_ASSIGN_OR_RETURN(threshold_, FusionThreshold(c));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
    if (root_ < 0 || root_ >= cluster->size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MpiBroadcast from rank ", root_, " in a cluster of ", cluster->size(), " processes"));
    }
    const int n = ctx->num_inputs();
    for (int i = 0; i < n; ++i) {
      const DataType dtype = ctx->input(i).dtype();
      if (dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT) {
        return absl::InvalidArgumentError(absl::StrCat("MpiBroadcast input ", i, " is ",
                                                       DataTypeString(dtype),
                                                       "; it sends tensors of plain elements"));
      }
    }
    if (cluster->size() == 1) {
      for (int i = 0; i < n; ++i) TW_RETURN_IF_ERROR(ctx->set_output(i, ctx->input(i)));
      return absl::OkStatus();
    }
    std::vector<Tensor*> outs(n);
    for (int i = 0; i < n; ++i) {
      TW_ASSIGN_OR_RETURN(outs[i], ctx->allocate_output(i, ctx->input(i).shape()));
      std::memcpy(outs[i]->raw_data(), ctx->input(i).raw_data(), ctx->input(i).TotalBytes());
    }
    // Buckets of consecutive outputs up to the threshold.
    int begin = 0;
    while (begin < n) {
      int end = begin + 1;
      int64_t bytes = static_cast<int64_t>(outs[begin]->TotalBytes());
      while (end < n && bytes + static_cast<int64_t>(outs[end]->TotalBytes()) <= threshold_) {
        bytes += static_cast<int64_t>(outs[end++]->TotalBytes());
      }
      if (end == begin + 1) {
        TW_RETURN_IF_ERROR(cluster->Broadcast(outs[begin], static_cast<int>(root_)));
      } else {
        TW_ASSIGN_OR_RETURN(Tensor fused, ctx->allocate_temp(DT_UINT8, TensorShape({bytes})));
        char* p = static_cast<char*>(fused.raw_data());
        for (int i = begin; i < end; ++i) {
          std::memcpy(p, outs[i]->raw_data(), outs[i]->TotalBytes());
          p += outs[i]->TotalBytes();
        }
        TW_RETURN_IF_ERROR(cluster->Broadcast(&fused, static_cast<int>(root_)));
        p = static_cast<char*>(fused.raw_data());
        for (int i = begin; i < end; ++i) {
          std::memcpy(outs[i]->raw_data(), p, outs[i]->TotalBytes());
          p += outs[i]->TotalBytes();
        }
      }
      begin = end;
    }
    return absl::OkStatus();
  }

 private:
  int64_t root_ = 0;
  int64_t threshold_ = 0;
};

// MpiAllGather: each input's rows from every process in rank order, all
// inputs in one group (one agreement, one exchange of row counts).
class MpiAllGatherOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
    std::vector<Tensor> inputs;
    for (int i = 0; i < ctx->num_inputs(); ++i) inputs.push_back(ctx->input(i));
    absl::StatusOr<std::vector<Tensor>> gathered = cluster->AllGather(inputs);
    if (!gathered.ok()) {
      return absl::Status(gathered.status().code(),
                          absl::StrCat("MpiAllGather: ", gathered.status().message()));
    }
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      TW_RETURN_IF_ERROR(ctx->set_output(i, std::move((*gathered)[i])));
    }
    return absl::OkStatus();
  }
};

class MpiRankOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
    TW_ASSIGN_OR_RETURN(Tensor * rank, ctx->allocate_output(0, TensorShape({})));
    rank->data<int32_t>()[0] = cluster->rank();
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(mpi_ops) {
  RegisterKernel(KernelDefBuilder("MpiAllReduce").Device(kDeviceCpu),
                 [] { return std::make_unique<MpiAllReduceOp>(); });
  RegisterKernel(KernelDefBuilder("MpiAllGather").Device(kDeviceCpu),
                 [] { return std::make_unique<MpiAllGatherOp>(); });
  RegisterKernel(KernelDefBuilder("MpiRank").Device(kDeviceCpu),
                 [] { return std::make_unique<MpiRankOp>(); });
  RegisterKernel(KernelDefBuilder("MpiBroadcast").Device(kDeviceCpu),
                 [] { return std::make_unique<MpiBroadcastOp>(); });
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
