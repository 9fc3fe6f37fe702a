// NCCL results as absl::Status (Internal naming the call, file and line, as
// cuda_status.h does for CUDA), and the NCCL type of a dtype: what the
// in-process NcclAllReduce kernel and the cluster's MpiAllReduce GPU kernel
// share.
//
//   TW_NCCL_RETURN_IF_ERROR(ncclGroupStart());
#ifndef TOWERFLOW_FRAMEWORK_GPU_NCCL_STATUS_H_
#define TOWERFLOW_FRAMEWORK_GPU_NCCL_STATUS_H_

#include <nccl.h>

#include <optional>

#include "absl/status/status.h"
#include "core/types.h"

namespace towerflow {
namespace gpu {

// OK for ncclSuccess; else "<expr> failed at <file>:<line>: <NCCL's message>".
absl::Status NcclStatus(ncclResult_t result, const char* expr, const char* file, int line);

// The NCCL element type of half, float, double, int32 and int64 tensors;
// nullopt for other dtypes.
std::optional<ncclDataType_t> NcclDataType(DataType dtype);

}  // namespace gpu
}  // namespace towerflow

#define TW_NCCL_RETURN_IF_ERROR(expr)                                    \
  do {                                                                   \
    const absl::Status tw_nccl_status_ =                                 \
        ::towerflow::gpu::NcclStatus((expr), #expr, __FILE__, __LINE__); \
    if (!tw_nccl_status_.ok()) return tw_nccl_status_;                   \
  } while (false)

#endif  // TOWERFLOW_FRAMEWORK_GPU_NCCL_STATUS_H_
