// Device-code helpers shared by the *.cu.cc files (nvcc only).
#ifndef TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_
#define TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/gpu/launch.h"

// A grid-stride loop over [0, n) with 64-bit indices: each thread takes
// i = its global index, then steps by the whole grid.
#define TW_GRID_LOOP(i, n)                                                               \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

namespace towerflow {
namespace gpu {

// How a kernel reads and writes an element of T: Math is the type it
// computes in (float for the 16-bit types, T otherwise); Widen reads, and
// Narrow writes, rounding to nearest even.
template <typename T>
struct DeviceValue {
  using Math = T;
  static __device__ __forceinline__ T Widen(T v) { return v; }
  static __device__ __forceinline__ T Narrow(T v) { return v; }
};
template <>
struct DeviceValue<HalfBits> {
  using Math = float;
  static __device__ __forceinline__ float Widen(HalfBits v) {
    return __half2float(__ushort_as_half(v.bits));
  }
  static __device__ __forceinline__ HalfBits Narrow(float v) {
    return HalfBits{__half_as_ushort(__float2half_rn(v))};
  }
};
template <>
struct DeviceValue<Bfloat16Bits> {
  using Math = float;
  static __device__ __forceinline__ float Widen(Bfloat16Bits v) {
    return __bfloat162float(__ushort_as_bfloat16(v.bits));
  }
  static __device__ __forceinline__ Bfloat16Bits Narrow(float v) {
    return Bfloat16Bits{__bfloat16_as_ushort(__float2bfloat16_rn(v))};
  }
};
template <typename T>
using MathOf = typename DeviceValue<T>::Math;

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_
