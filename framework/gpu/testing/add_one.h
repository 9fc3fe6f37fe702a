// A test kernel that checks the nvcc toolchain end to end: x[i] += 1.
#ifndef TOWERFLOW_FRAMEWORK_GPU_TESTING_ADD_ONE_H_
#define TOWERFLOW_FRAMEWORK_GPU_TESTING_ADD_ONE_H_

#include <cuda_runtime.h>

namespace towerflow {
namespace gpu {
namespace testing {

// Enqueues x[i] += 1 for i < n on `stream`.
cudaError_t LaunchAddOne(float* x, int n, cudaStream_t stream);

}  // namespace testing
}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_GPU_TESTING_ADD_ONE_H_
