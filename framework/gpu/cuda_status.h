// CUDA runtime, cuBLAS and cuDNN errors as absl::Status: Internal naming
// the call, file and line, or ResourceExhausted for out of memory.
//
//   TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, n, kind, stream));
//   TW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//   TW_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(handle, ...));
#ifndef TOWERFLOW_FRAMEWORK_GPU_CUDA_STATUS_H_
#define TOWERFLOW_FRAMEWORK_GPU_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "absl/status/status.h"

namespace towerflow {
namespace gpu {

// OK for cudaSuccess; else "<expr> failed at <file>:<line>: <name>: <description>".
absl::Status CudaStatus(cudaError_t error, const char* expr, const char* file, int line);
absl::Status CublasStatus(cublasStatus_t status, const char* expr, const char* file, int line);
absl::Status CudnnStatus(cudnnStatus_t status, const char* expr, const char* file, int line);

}  // namespace gpu
}  // namespace towerflow

#define TW_CUDA_RETURN_IF_ERROR(expr)                                    \
  do {                                                                   \
    const absl::Status tw_cuda_status_ =                                 \
        ::towerflow::gpu::CudaStatus((expr), #expr, __FILE__, __LINE__); \
    if (!tw_cuda_status_.ok()) return tw_cuda_status_;                   \
  } while (false)

#define TW_CUBLAS_RETURN_IF_ERROR(expr)                                    \
  do {                                                                     \
    const absl::Status tw_cuda_status_ =                                   \
        ::towerflow::gpu::CublasStatus((expr), #expr, __FILE__, __LINE__); \
    if (!tw_cuda_status_.ok()) return tw_cuda_status_;                     \
  } while (false)

#define TW_CUDNN_RETURN_IF_ERROR(expr)                                    \
  do {                                                                    \
    const absl::Status tw_cuda_status_ =                                  \
        ::towerflow::gpu::CudnnStatus((expr), #expr, __FILE__, __LINE__); \
    if (!tw_cuda_status_.ok()) return tw_cuda_status_;                    \
  } while (false)

#endif  // TOWERFLOW_FRAMEWORK_GPU_CUDA_STATUS_H_
