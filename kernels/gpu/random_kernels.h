// Launchers of kernels/gpu/random_kernels.cu.cc: TF's random numbers on
// Philox streams. The conventions every launcher keeps are in
// kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/philox.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// out[0, n) = the CPU kernels' numbers of `dist` (core/philox.h's groups,
// TF's) from `stream` moved on by *offset blocks, one thread a group; then
// *offset grows by 256 blocks per output (TF's reservation), on the device,
// so a recorded step draws new numbers on every replay. `offset` is device
// memory.
template <typename T>
cudaError_t LaunchRandom(PhiloxDist dist, PhiloxStream stream, uint64_t* offset, T* out, int64_t n,
                         cudaStream_t cuda_stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_RANDOM_KERNELS_H_
