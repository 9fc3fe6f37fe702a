// Launchers of kernels/gpu/pooling_kernels.cu.cc: max and average pooling and their gradients.
// The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_POOLING_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_POOLING_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// A 2-D pooling window over a 4-D tensor, TF's semantics: windows start at
// -pad_top/-pad_left and step by the strides; padding never counts (max
// over, and average over, the window's elements inside the input).
struct PoolShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
  int64_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
  bool nchw;
};

template <typename T>
cudaError_t LaunchMaxPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream);
template <typename T>
cudaError_t LaunchAvgPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream);
// dx (in's shape, zeroed here) gets each dy added at its window's first
// maximum of `in`. `deterministic`: the same bits on every run (each input
// element sums its windows' gradients in order, as 16-bit types always do)
// rather than float and double's atomic additions, in any order.
template <typename T>
cudaError_t LaunchMaxPoolGrad(const PoolShape& p, const T* in, const T* dy, T* dx,
                              bool deterministic, cudaStream_t stream);
// dx[i] = sum over the windows holding i of dy / (the window's count).
template <typename T>
cudaError_t LaunchAvgPoolGrad(const PoolShape& p, const T* dy, T* dx, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_POOLING_KERNELS_H_
