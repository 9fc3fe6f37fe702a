// cuDNN descriptors owned by RAII holders, made with a checked Status.
#ifndef TOWERFLOW_KERNELS_GPU_CUDNN_UTIL_H_
#define TOWERFLOW_KERNELS_GPU_CUDNN_UTIL_H_

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "absl/status/statusor.h"
#include "core/float16.h"
#include "framework/gpu/cuda_status.h"

namespace towerflow {
namespace gpu {

template <typename T>
constexpr cudnnDataType_t CudnnDataType() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || kIsFloat16<T>);
  if constexpr (std::is_same_v<T, half>) return CUDNN_DATA_HALF;
  if constexpr (std::is_same_v<T, bfloat16>) return CUDNN_DATA_BFLOAT16;
  return std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
}

// What cuDNN accumulates a convolution of T in: float32 for the 16-bit
// types (tensor cores, as TF's), else T; and the type of its alpha and beta.
template <typename T>
constexpr cudnnDataType_t CudnnComputeType() {
  return kIsFloat16<T> ? CUDNN_DATA_FLOAT : CudnnDataType<T>();
}
template <typename T>
using CudnnScalar = std::conditional_t<std::is_same_v<T, double>, double, float>;

// A cuDNN descriptor type with its create and destroy functions.
template <typename D, cudnnStatus_t (*kCreate)(D*), cudnnStatus_t (*kDestroy)(D)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() = default;  // none yet
  static absl::StatusOr<CudnnDescriptor> Create() {
    D d = nullptr;
    TW_CUDNN_RETURN_IF_ERROR(kCreate(&d));
    return CudnnDescriptor(d);
  }
  D get() const { return d_.get(); }

 private:
  struct Deleter {
    void operator()(std::remove_pointer_t<D>* d) const { kDestroy(d); }
  };
  explicit CudnnDescriptor(D d) : d_(d) {}
  std::unique_ptr<std::remove_pointer_t<D>, Deleter> d_;
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                         cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                         cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;

// A 4-D tensor descriptor of [n, c, h, w] laid out as `format` (NHWC or
// NCHW).
template <typename T>
absl::StatusOr<TensorDescriptor> Tensor4d(cudnnTensorFormat_t format, int64_t n, int64_t c,
                                          int64_t h, int64_t w) {
  TW_ASSIGN_OR_RETURN(TensorDescriptor d, TensorDescriptor::Create());
  TW_CUDNN_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(d.get(), format, CudnnDataType<T>(),
                                                      static_cast<int>(n), static_cast<int>(c),
                                                      static_cast<int>(h), static_cast<int>(w)));
  return d;
}

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_CUDNN_UTIL_H_
