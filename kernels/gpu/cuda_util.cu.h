// Device-code helpers shared by the *.cu.cc files (nvcc only).
#ifndef TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_
#define TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_

#include <cstdint>

// A grid-stride loop over [0, n) with 64-bit indices: each thread takes
// i = its global index, then steps by the whole grid.
#define TW_GRID_LOOP(i, n)                                                               \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

#endif  // TOWERFLOW_KERNELS_GPU_CUDA_UTIL_CU_H_
