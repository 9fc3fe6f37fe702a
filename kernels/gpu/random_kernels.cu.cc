// CUDA kernels of the seeded random ops (kernels/gpu/launch.h): each element
// is an independent Philox draw, the same as the CPU kernel's.
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
__global__ void RandomKernel(RandomFn fn, PhiloxKey key, const uint64_t* counter, T* out,
                             int64_t n) {
  const uint64_t base = *counter;
  TW_GRID_LOOP(i, n) {
    const uint64_t index = base + static_cast<uint64_t>(i);
    double x;
    if (fn == RandomFn::kUniform) {
      x = PhiloxUniform01(PhiloxDraw(key, index, 0).v[0]);
    } else {
      x = PhiloxNormalAt(key, index, fn == RandomFn::kTruncatedNormal);
    }
    out[i] = static_cast<T>(x);
  }
}

// After every draw of the kernel above has read the counter.
__global__ void AdvanceCounter(uint64_t* counter, int64_t n) { *counter += n; }

}  // namespace

template <typename T>
cudaError_t LaunchRandom(RandomFn fn, uint32_t key0, uint32_t key1, uint64_t* counter, T* out,
                         int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  RandomKernel<T>
      <<<GridSize(n), kThreadsPerBlock, 0, stream>>>(fn, PhiloxKey{{key0, key1}}, counter, out, n);
  AdvanceCounter<<<1, 1, 0, stream>>>(counter, n);
  return cudaGetLastError();
}

template cudaError_t LaunchRandom<float>(RandomFn, uint32_t, uint32_t, uint64_t*, float*, int64_t,
                                         cudaStream_t);
template cudaError_t LaunchRandom<double>(RandomFn, uint32_t, uint32_t, uint64_t*, double*, int64_t,
                                          cudaStream_t);

}  // namespace gpu
}  // namespace towerflow
