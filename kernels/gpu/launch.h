// What every launcher of the CUDA kernels keeps. The launchers themselves
// are declared by family beside their kernels (kernels/gpu/X_kernels.h for
// X_kernels.cu.cc: cwise, reduction, training, layout, index, pooling, norm,
// search, random): plain functions on raw device pointers, so the OpKernels
// (compiled by the host compiler) never see device code. Each enqueues on `stream` and returns the
// launch's cudaError_t (CudaStatus turns it into a Status); n == 0 launches nothing.
//
// Shapes come in collapsed: a binary op's operands as strides over the
// output's (at most kMaxDims) dimensions, a reduction as [outer, reduce,
// inner] with the middle dimension summed.
#ifndef TOWERFLOW_KERNELS_GPU_LAUNCH_H_
#define TOWERFLOW_KERNELS_GPU_LAUNCH_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace towerflow {
namespace gpu {

inline constexpr int kMaxDims = 8;

// Launch shape of the elementwise kernels: 256 threads a block and enough
// blocks for n elements, at most 4096 (the kernels loop over the rest).
inline constexpr int kThreadsPerBlock = 256;
inline int GridSize(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 4096 ? blocks : 4096);
}

// Where output element i reads x and y: its index over `dims` dotted with
// each operand's strides (0 along broadcast dimensions).
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t x_strides[kMaxDims];
  int64_t y_strides[kMaxDims];
};

// half and bfloat16 as the math kernels take them: their bits, which the
// kernels widen to float32, compute on, and round back to nearest even
// (cuda_util.cu.h's DeviceValue). The OpKernels pass Eigen's types as these
// (gpu_kernel_util.h's OnGpu and GpuData).
struct HalfBits {
  uint16_t bits;
};
struct Bfloat16Bits {
  uint16_t bits;
};

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_LAUNCH_H_
