// MpiAllReduce's GPU kernel: the inputs, in the memory of the GPU the op
// runs on, summed over the cluster's processes by NCCL (ops/nccl_ops.cc has
// the op; distribute/mpi_ops.cc its CPU kernel).
//
// Each GPU ordinal gets a communicator spanning that GPU of every process,
// as Horovod and PyTorch bootstrap them: rank 0 makes an ncclUniqueId, the
// cluster broadcasts it over MPI, and every process joins with
// ncclCommInitRank (once, after a barrier, so a process that never comes is
// the cluster's timeout and not a hang inside NCCL). Before each reduction
// the processes check over MPI that they pass the same dtypes and sizes,
// which NCCL cannot. The reductions run as one NCCL group on the GPU's
// compute stream, after the kernels that made the inputs and before those
// that read the sums; NCCL fuses the group's small tensors itself, so the
// fusion threshold does not apply here.
//
// Compiled under --config=cuda; not yet run on GPUs (no machine with several
// has been available).
#include <nccl.h>

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "framework/gpu/cuda_status.h"
#include "framework/gpu/gpu_device.h"
#include "framework/gpu/nccl_status.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace distribute {
namespace {

// The communicator of GPU `ordinal` across the cluster, made on first use.
absl::StatusOr<ncclComm_t> ClusterComm(Cluster* cluster, int ordinal) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* comms ABSL_GUARDED_BY(mu) = new std::map<int, ncclComm_t>;
  absl::MutexLock lock(&mu);
  auto it = comms->find(ordinal);
  if (it != comms->end()) return it->second;
  ncclUniqueId id;
  Tensor bytes(DT_UINT8, TensorShape({static_cast<int64_t>(sizeof(id))}));
  if (cluster->is_chief()) {
    TW_NCCL_RETURN_IF_ERROR(ncclGetUniqueId(&id));
    std::memcpy(bytes.raw_data(), &id, sizeof(id));
  }
  TW_RETURN_IF_ERROR(cluster->Broadcast(&bytes, 0));
  std::memcpy(&id, bytes.raw_data(), sizeof(id));
  TW_RETURN_IF_ERROR(cluster->Barrier());
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  ncclComm_t comm;
  TW_NCCL_RETURN_IF_ERROR(ncclCommInitRank(&comm, cluster->size(), id, cluster->rank()));
  return comms->emplace(ordinal, comm).first->second;
}

class NcclMpiAllReduceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Cluster * cluster, Cluster::Get());
    const int n = ctx->num_inputs();
    std::vector<ncclDataType_t> types;
    std::vector<int64_t> signature;  // per input: dtype, elements
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      const std::optional<ncclDataType_t> type = gpu::NcclDataType(in.dtype());
      if (!type.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("MpiAllReduce input ", i, " is ", DataTypeString(in.dtype()),
                         "; on a GPU it sums half, float, double, int32 and int64 tensors"));
      }
      types.push_back(*type);
      signature.push_back(in.dtype());
      signature.push_back(in.NumElements());
    }
    if (cluster->size() == 1) {
      for (int i = 0; i < n; ++i) TW_RETURN_IF_ERROR(ctx->set_output(i, ctx->input(i)));
      return absl::OkStatus();
    }
    TW_RETURN_IF_ERROR(cluster->CheckSameValues(
        absl::StrCat("MpiAllReduce '", ctx->name(), "' on a GPU"), signature));
    auto* gpu = static_cast<gpu::GpuDevice*>(ctx->device());
    TW_ASSIGN_OR_RETURN(ncclComm_t comm, ClusterComm(cluster, gpu->ordinal()));
    TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu->ordinal()));
    std::vector<Tensor*> outs(n);
    for (int i = 0; i < n; ++i) {
      TW_ASSIGN_OR_RETURN(outs[i],
                          ctx->forward_input_or_allocate_output(i, i, ctx->input(i).shape()));
    }
    TW_NCCL_RETURN_IF_ERROR(ncclGroupStart());
    absl::Status status;
    for (int i = 0; i < n && status.ok(); ++i) {
      const Tensor& in = ctx->input(i);
      if (in.NumElements() == 0) continue;
      status = gpu::NcclStatus(
          ncclAllReduce(in.raw_data(), outs[i]->raw_data(), static_cast<size_t>(in.NumElements()),
                        types[i], ncclSum, comm, gpu->compute_stream()),
          "ncclAllReduce", __FILE__, __LINE__);
    }
    const absl::Status ended = gpu::NcclStatus(ncclGroupEnd(), "ncclGroupEnd", __FILE__, __LINE__);
    return status.ok() ? ended : status;
  }
};

TW_REGISTER_KERNELS(nccl_mpi_ops) {
  RegisterKernel(KernelDefBuilder("MpiAllReduce").Device(kDeviceGpu),
                 [] { return std::make_unique<NcclMpiAllReduceOp>(); });
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
