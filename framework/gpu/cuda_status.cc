#include "framework/gpu/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace gpu {

absl::Status CudaStatus(cudaError_t error, const char* expr, const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(expr, " failed at ", file, ":", line, ": ", cudaGetErrorName(error), ": ",
                   cudaGetErrorString(error));
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status CublasStatus(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(expr, " failed at ", file, ":", line, ": ", cublasGetStatusName(status), ": ",
                   cublasGetStatusString(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status CudnnStatus(cudnnStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(expr, " failed at ", file, ":", line, ": ", cudnnGetErrorString(status));
  if (status == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace gpu
}  // namespace towerflow
