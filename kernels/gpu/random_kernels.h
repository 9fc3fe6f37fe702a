// Launchers of kernels/gpu/random_kernels.cu.cc: random numbers on Philox streams.
// The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

enum class RandomFn { kUniform, kNormal, kTruncatedNormal };

// out[i] = the CPU kernels' number for counter base + i under `key`
// (kernels/philox.h), so a seeded op draws the same numbers on both; base
// is read from `counter` (device memory) and the counter advanced by n, on
// the device, so a recorded step draws new numbers on every replay.
template <typename T>
cudaError_t LaunchRandom(RandomFn fn, uint32_t key0, uint32_t key1, uint64_t* counter, T* out,
                         int64_t n, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_
