// Launchers of kernels/gpu/training_kernels.cu.cc: the optimizers' updates, dense and sparse, and
// AssignAdd/AssignSub. The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_TRAINING_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_TRAINING_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/index_kernels.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// The optimizer updates of kernels/cpu/training_ops.cc, elementwise over n.
enum class ApplyFn { kGradientDescent, kMomentum, kAdam, kAdagrad, kRmsProp };

// One update's operands in device memory. `scalars` are the hyperparameters
// in the order of the op's TF signature (kernels/variable_util.h), read by
// the kernel, so no step waits for a copy of the learning rate to the host.
// `flag` is use_nesterov (Momentum, Adam) or update_slots (Adagrad).
template <typename T>
struct ApplyArgs {
  T* var = nullptr;
  T* slots[2] = {nullptr, nullptr};
  const T* grad = nullptr;
  const T* scalars[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  bool flag = false;
};

template <typename T>
cudaError_t LaunchApply(ApplyFn fn, const ApplyArgs<T>& args, int64_t n, cudaStream_t stream);

// SparseApplyMomentum / SparseApplyAdagrad / SparseApplyRMSProp (fn
// kMomentum, kAdagrad or kRmsProp; else cudaErrorInvalidValue): args.grad holds rows of `slice`
// elements, grouped by the variable row they update as LaunchScatterRows' plan says; each group's
// rows apply in index order, one thread per element of the row.
template <typename T>
cudaError_t LaunchSparseApply(ApplyFn fn, const ApplyArgs<T>& args, const int64_t* plan,
                              int64_t groups, int64_t slice, cudaStream_t stream);

// out = a + b, or a - b when !add (AssignAdd / AssignSub); out may be a.
template <typename T>
cudaError_t LaunchAddInto(const T* a, const T* b, T* out, bool add, int64_t n, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_TRAINING_KERNELS_H_
