// Launchers of kernels/gpu/cwise_kernels.cu.cc: elementwise maths, selects, fills, casts and
// broadcasts. The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_CWISE_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_CWISE_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// y[i] = F()(x[i]) for a functor of kernels/cwise_functors.h; instantiated
// in cwise_kernels.cu.cc for the functors the GPU kernels use. T float and
// double with F's on T, HalfBits and Bfloat16Bits with F's on float (the
// maths in float32, each result rounded once); so for the binary maths and
// comparisons below.
template <typename T, typename F>
cudaError_t LaunchUnary(const T* x, T* y, int64_t n, cudaStream_t stream);

// z[i] = F()(x[..], y[..]); `bcast` null: x, y and z all have n elements.
template <typename T, typename F>
cudaError_t LaunchBinary(const T* x, const T* y, T* z, int64_t n, const Broadcast* bcast,
                         cudaStream_t stream);

// z[i] = F()(x[..], y[..]) for a comparison functor (bool results), as
// LaunchBinary.
template <typename T, typename F>
cudaError_t LaunchCompare(const T* x, const T* y, bool* z, int64_t n, const Broadcast* bcast,
                          cudaStream_t stream);

// y[i] = whether x[i] is finite (neither infinite nor NaN). T float,
// double, HalfBits or Bfloat16Bits.
template <typename T>
cudaError_t LaunchIsFinite(const T* x, bool* y, int64_t n, cudaStream_t stream);

// Where output element i of a select reads its condition and its two
// branches: its index over `dims` dotted with each one's strides (0 along
// broadcast dimensions).
struct SelectBroadcast {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t c_strides[kMaxDims];
  int64_t t_strides[kMaxDims];
  int64_t e_strides[kMaxDims];
};
// out[i] = condition[..] ? t[..] : e[..]; `bcast` null: all have n
// elements. T is uint8_t, uint16_t, uint32_t or uint64_t: elements move as
// bytes, whatever their dtype.
template <typename T>
cudaError_t LaunchSelect(const bool* condition, const T* t, const T* e, T* out, int64_t n,
                         const SelectBroadcast* bcast, cudaStream_t stream);

// LeakyRelu: y = x where x > 0, else alpha * x; LeakyReluGrad(g, features):
// out = g where features > 0, else alpha * g. T as LaunchUnary's.
template <typename T>
cudaError_t LaunchLeakyRelu(const T* x, T* y, int64_t n, float alpha, cudaStream_t stream);
template <typename T>
cudaError_t LaunchLeakyReluGrad(const T* g, const T* features, T* out, int64_t n, float alpha,
                                cudaStream_t stream);

// out[i] = value (read from device memory).
template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, cudaStream_t stream);
template <typename T>
cudaError_t LaunchFillConstant(T value, T* out, int64_t n, cudaStream_t stream);

template <typename From, typename To>
cudaError_t LaunchCast(const From* in, To* out, int64_t n, cudaStream_t stream);

// half and bfloat16 cross the launch as their bits (Eigen's types on the
// host, CUDA's __half and __nv_bfloat16 in the kernels).
enum class Float16Kind { kHalf, kBfloat16 };
// To the 16-bit type, rounding to nearest even; and back, exactly.
cudaError_t LaunchCastToFloat16(const float* in, uint16_t* out, int64_t n, Float16Kind kind,
                                cudaStream_t stream);
cudaError_t LaunchCastFromFloat16(const uint16_t* in, float* out, int64_t n, Float16Kind kind,
                                  cudaStream_t stream);

// out[i] = x at output element i's broadcast position (BroadcastTo); the
// y strides of `bcast` are unused.
template <typename T>
cudaError_t LaunchBroadcastCopy(const T* x, T* out, int64_t n, const Broadcast& bcast,
                                cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_CWISE_KERNELS_H_
