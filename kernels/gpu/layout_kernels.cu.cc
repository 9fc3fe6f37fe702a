// CUDA kernels that move elements between 4-D layouts (kernels/gpu/launch.h):
// transposes (a filter from TF's HWIO to cuDNN's layouts) and pads or crops
// (explicit padding where cuDNN's must be symmetric).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

struct Dims4 {
  int64_t d[4];
};

// in's strides for out's dims, so out element (o0..o3) reads
// in[sum o_i * stride_i].
template <typename T>
__global__ void Transpose4Kernel(const T* in, T* out, Dims4 out_dims, Dims4 in_strides, int64_t n) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, src = 0;
    for (int k = 3; k >= 0; --k) {
      const int64_t o = rest % out_dims.d[k];
      rest /= out_dims.d[k];
      src += o * in_strides.d[k];
    }
    out[i] = in[src];
  }
}

template <typename T>
__global__ void Shift4Kernel(const T* in, Dims4 in_dims, T* out, Dims4 out_dims, Dims4 offset,
                             T fill, int64_t n) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, src = 0, scale = 1;
    bool inside = true;
    for (int k = 3; k >= 0; --k) {
      const int64_t o = rest % out_dims.d[k];
      rest /= out_dims.d[k];
      const int64_t s = o - offset.d[k];
      inside = inside && s >= 0 && s < in_dims.d[k];
      src += s * scale;
      scale *= in_dims.d[k];
    }
    out[i] = inside ? in[src] : fill;
  }
}

}  // namespace

template <typename T>
cudaError_t LaunchTranspose4(const T* in, const int64_t in_dims[4], const int perm[4], T* out,
                             cudaStream_t stream) {
  int64_t in_strides[4];
  in_strides[3] = 1;
  for (int k = 2; k >= 0; --k) in_strides[k] = in_strides[k + 1] * in_dims[k + 1];
  Dims4 out_dims, strides;
  int64_t n = 1;
  for (int k = 0; k < 4; ++k) {
    out_dims.d[k] = in_dims[perm[k]];
    strides.d[k] = in_strides[perm[k]];
    n *= out_dims.d[k];
  }
  if (n == 0) return cudaSuccess;
  Transpose4Kernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, out_dims, strides, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchShift4(const T* in, const int64_t in_dims[4], T* out, const int64_t out_dims[4],
                         const int64_t offset[4], T fill, cudaStream_t stream) {
  Dims4 in_d, out_d, off;
  int64_t n = 1;
  for (int k = 0; k < 4; ++k) {
    in_d.d[k] = in_dims[k];
    out_d.d[k] = out_dims[k];
    off.d[k] = offset[k];
    n *= out_dims[k];
  }
  if (n == 0) return cudaSuccess;
  Shift4Kernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, in_d, out, out_d, off, fill, n);
  return cudaGetLastError();
}

#define TW_INSTANTIATE(T)                                                                \
  template cudaError_t LaunchTranspose4<T>(const T*, const int64_t[4], const int[4], T*, \
                                           cudaStream_t);                                \
  template cudaError_t LaunchShift4<T>(const T*, const int64_t[4], T*, const int64_t[4], \
                                       const int64_t[4], T, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
#undef TW_INSTANTIATE

}  // namespace gpu
}  // namespace towerflow
