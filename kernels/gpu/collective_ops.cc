// NcclAllReduce on GPUs, with NCCL (see kernels/collective_ops.h for how
// the members meet).
//
// Each set of GPUs gets one NCCL clique (ncclCommInitAll), made on first
// use and kept for the process, and each GPU an NCCL stream of its own. A
// member's collective waits on its compute stream for the input, runs on the
// NCCL stream, and the compute stream waits for it in turn, so later kernels
// and copies see the result and the stream-ordered allocator may reuse the
// input's block. The NCCL streams hold nothing but collectives: a collective
// never queues behind a compute stream's wait on another GPU, which could
// wait on this collective.
//
// All collectives are enqueued under one lock, as one NCCL group each, so
// every GPU sees them in the same order; two enqueued in different orders on
// two GPUs would wait for each other for ever.
#include "kernels/collective_ops.h"

#include <nccl.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/gpu/nccl_status.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"

namespace towerflow {
namespace gpu {
namespace {

absl::StatusOr<ncclDataType_t> NcclType(DataType dtype) {
  // int32 tensors of GPU nodes live in host memory: no GPU kernel for them.
  const std::optional<ncclDataType_t> type = dtype == DT_INT32 ? std::nullopt : NcclDataType(dtype);
  if (!type.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("NcclAllReduce has no GPU kernel for ", DataTypeString(dtype)));
  }
  return *type;
}

ncclRedOp_t NcclOp(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return ncclSum;
    case ReduceKind::kProd:
      return ncclProd;
    case ReduceKind::kMin:
      return ncclMin;
    case ReduceKind::kMax:
      return ncclMax;
  }
  return ncclSum;
}

// The process's cliques and NCCL streams, and the lock that orders every
// collective.
class NcclState {
 public:
  static NcclState& Get() {
    static auto* state = new NcclState;  // never destroyed: NCCL may outlive static teardown
    return *state;
  }

  absl::Mutex mu;

  // The communicators of `ordinals` (in that order, rank i on ordinals[i]).
  absl::StatusOr<const std::vector<ncclComm_t>*> Clique(const std::vector<int>& ordinals)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = cliques_.find(ordinals);
    if (it != cliques_.end()) return &it->second;
    std::vector<ncclComm_t> comms(ordinals.size());
    TW_NCCL_RETURN_IF_ERROR(
        ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), ordinals.data()));
    return &cliques_.emplace(ordinals, std::move(comms)).first->second;
  }

  absl::StatusOr<cudaStream_t> Stream(int ordinal) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = streams_.find(ordinal);
    if (it != streams_.end()) return it->second;
    TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    cudaStream_t stream;
    TW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return streams_.emplace(ordinal, stream).first->second;
  }

 private:
  std::map<std::vector<int>, std::vector<ncclComm_t>> cliques_ ABSL_GUARDED_BY(mu);
  std::map<int, cudaStream_t> streams_ ABSL_GUARDED_BY(mu);
};

// Enqueues the members' collectives as one group; ends the group even when
// a call in it fails.
absl::Status EnqueueGroup(absl::Span<const AllReduceMember> members,
                          const std::vector<Tensor*>& outputs, const std::vector<ncclComm_t>& comms,
                          const std::vector<cudaStream_t>& streams, ncclDataType_t type) {
  TW_NCCL_RETURN_IF_ERROR(ncclGroupStart());
  absl::Status status;
  for (size_t i = 0; i < members.size() && status.ok(); ++i) {
    const Tensor& in = *members[i].input;
    status = NcclStatus(
        ncclAllReduce(in.raw_data(), outputs[i]->raw_data(), static_cast<size_t>(in.NumElements()),
                      type, NcclOp(members[i].kind), comms[i], streams[i]),
        "ncclAllReduce", __FILE__, __LINE__);
  }
  const absl::Status ended = NcclStatus(ncclGroupEnd(), "ncclGroupEnd", __FILE__, __LINE__);
  return status.ok() ? ended : status;
}

absl::Status NcclAllReduce(absl::Span<const AllReduceMember> members) {
  const Tensor& first = *members[0].input;
  TW_ASSIGN_OR_RETURN(const ncclDataType_t type, NcclType(first.dtype()));
  std::vector<GpuDevice*> gpus;
  std::vector<int> ordinals;
  std::vector<Tensor*> outputs;
  std::map<int, const std::string*> node_on;
  for (const AllReduceMember& m : members) {
    auto* gpu = static_cast<GpuDevice*>(m.ctx->device());
    auto [it, added] = node_on.emplace(gpu->ordinal(), &m.ctx->name());
    if (!added) {
      return absl::InvalidArgumentError(
          absl::StrCat("NcclAllReduce members '", *it->second, "' and '", m.ctx->name(),
                       "' both run on ", gpu->name(), "; NCCL takes one member per GPU"));
    }
    gpus.push_back(gpu);
    ordinals.push_back(gpu->ordinal());
    TW_ASSIGN_OR_RETURN(Tensor * out, m.ctx->allocate_output(0, first.shape()));
    outputs.push_back(out);
  }
  if (first.NumElements() == 0) return absl::OkStatus();

  NcclState& state = NcclState::Get();
  absl::MutexLock lock(&state.mu);
  TW_ASSIGN_OR_RETURN(const std::vector<ncclComm_t>* comms, state.Clique(ordinals));
  std::vector<cudaStream_t> streams;
  for (size_t i = 0; i < members.size(); ++i) {
    TW_ASSIGN_OR_RETURN(cudaStream_t stream, state.Stream(ordinals[i]));
    TW_RETURN_IF_ERROR(gpus[i]->StreamWait(stream, gpus[i]->compute_stream()));
    streams.push_back(stream);
  }
  TW_RETURN_IF_ERROR(EnqueueGroup(members, outputs, *comms, streams, type));
  for (size_t i = 0; i < members.size(); ++i) {
    TW_RETURN_IF_ERROR(gpus[i]->StreamWait(gpus[i]->compute_stream(), streams[i]));
  }
  return absl::OkStatus();
}

}  // namespace

TW_REGISTER_KERNELS(gpu_nccl_ops) {
  RegisterAllReduceKernels(kDeviceGpu, {DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT64}, NcclAllReduce);
}

}  // namespace gpu
}  // namespace towerflow
