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
// A fused buffer is copied into once and reduced in place; the outputs are
// views of it (each tensor's slot starts on a 64-byte boundary), so nothing
// is copied out. The kernel keeps each bucket's buffer and reuses it in the
// next step once the step before has let go of its outputs, as Horovod keeps
// its fusion buffer: a steady step allocates nothing and faults no pages.
#include <cstring>
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
    std::vector<int64_t> bucket_bytes, bucket_slot_bytes;
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
        bucket_slot_bytes.push_back(0);
      }
      buckets[b].push_back(i);
      bucket_bytes[b] += bytes;
      bucket_slot_bytes[b] += SlotBytes(t);
    }
    // Each bucket's tensor: the input itself when alone (in place when no
    // one else holds it, as a step's gradient), else its fused buffer. All
    // of them are summed in one group, which meets the other processes once.
    std::vector<Tensor> fused(buckets.size());
    std::vector<Tensor*> group(buckets.size());
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
      TW_ASSIGN_OR_RETURN(fused[b],
                          FusionBuffer(ctx, b, bucket_dtype[b], bucket_slot_bytes[b] / element));
      char* p = static_cast<char*>(fused[b].raw_data());
      for (int i : buckets[b]) {
        std::memcpy(p, ctx->input(i).raw_data(), ctx->input(i).TotalBytes());
        p += SlotBytes(ctx->input(i));
      }
      group[b] = &fused[b];
    }
    TW_RETURN_IF_ERROR(cluster->AllReduceSum(group));
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].size() == 1) continue;
      const int64_t element = static_cast<int64_t>(TensorElementSize(bucket_dtype[b]));
      int64_t offset = 0;  // in elements
      for (int i : buckets[b]) {
        const Tensor& in = ctx->input(i);
        TW_ASSIGN_OR_RETURN(Tensor slot, fused[b].Slice(offset, offset + in.NumElements()));
        TW_ASSIGN_OR_RETURN(Tensor out, slot.Reshaped(in.shape()));
        TW_RETURN_IF_ERROR(ctx->set_output(i, std::move(out)));
        offset += SlotBytes(in) / element;
      }
    }
    return absl::OkStatus();
  }

 private:
  // A tensor's bytes rounded up to its slot in a fused buffer.
  static int64_t SlotBytes(const Tensor& t) {
    constexpr int64_t kSlot = 64;
    return (static_cast<int64_t>(t.TotalBytes()) + kSlot - 1) / kSlot * kSlot;
  }

  // Bucket b's fused buffer of `elements`: the one kept from the step before
  // when nothing else holds it any more (its outputs are gone), else a new
  // one, zeroed (the padding between slots is summed too, and never read).
  absl::StatusOr<Tensor> FusionBuffer(KernelContext* ctx, size_t b, DataType dtype,
                                      int64_t elements) {
    absl::MutexLock lock(&mu_);
    if (kept_.size() <= b) kept_.resize(b + 1);
    Tensor& kept = kept_[b];
    if (!kept.IsInitialized() || !kept.RefCountIsOne() || kept.dtype() != dtype ||
        kept.NumElements() != elements) {
      TW_ASSIGN_OR_RETURN(kept, ctx->allocate_temp(dtype, TensorShape({elements})));
      std::memset(kept.raw_data(), 0, kept.TotalBytes());
    }
    return kept;
  }

  int64_t threshold_ = 0;
  absl::Mutex mu_;
  std::vector<Tensor> kept_ ABSL_GUARDED_BY(mu_);
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
