// CUDA kernels of the seeded random ops (kernels/gpu/launch.h): each thread
// computes one of TF's output groups (core/philox.h), the CPU kernel's
// numbers.
#include "kernels/gpu/random_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "core/philox.h"
#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
__global__ void RandomKernel(PhiloxDist dist, PhiloxStream stream, const uint64_t* offset, T* out,
                             int64_t n) {
  constexpr int kGroup = PhiloxGroupSize<T>();
  stream.Skip(*offset);
  const int64_t groups = (n + kGroup - 1) / kGroup;
  TW_GRID_LOOP(g, groups) {
    T values[kGroup];
    PhiloxGroup<T>(dist, stream, static_cast<uint64_t>(g), values);
    const int64_t first = static_cast<int64_t>(g) * kGroup;
    for (int k = 0; k < kGroup && first + k < n; ++k) out[first + k] = values[k];
  }
}

// After every thread of the kernel above has read the offset.
__global__ void AdvanceOffset(uint64_t* offset, uint64_t blocks) { *offset += blocks; }

}  // namespace

template <typename T>
cudaError_t LaunchRandom(PhiloxDist dist, PhiloxStream stream, uint64_t* offset, T* out, int64_t n,
                         cudaStream_t cuda_stream) {
  if (n == 0) return cudaSuccess;
  const int64_t groups = (n + PhiloxGroupSize<T>() - 1) / PhiloxGroupSize<T>();
  RandomKernel<T>
      <<<GridSize(groups), kThreadsPerBlock, 0, cuda_stream>>>(dist, stream, offset, out, n);
  AdvanceOffset<<<1, 1, 0, cuda_stream>>>(offset,
                                          static_cast<uint64_t>(n) * kPhiloxBlocksPerOutput);
  return cudaGetLastError();
}

template cudaError_t LaunchRandom<float>(PhiloxDist, PhiloxStream, uint64_t*, float*, int64_t,
                                         cudaStream_t);
template cudaError_t LaunchRandom<double>(PhiloxDist, PhiloxStream, uint64_t*, double*, int64_t,
                                          cudaStream_t);

}  // namespace gpu
}  // namespace towerflow
