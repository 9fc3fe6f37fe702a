// CUDA kernels of the optimizer updates, their sparse forms for Momentum,
// Adagrad and RMSProp, and AssignAdd/AssignSub (kernels/gpu/launch.h). The maths is TF's, as on the
// CPU (kernels/cpu/training_ops.cc); hyperparameters are read from device memory by every thread
// (one cached load each).
#include "kernels/gpu/training_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/index_kernels.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
__global__ void GradientDescentKernel(ApplyArgs<T> a, int64_t n) {
  const T alpha = *a.scalars[0];
  TW_GRID_LOOP(i, n) { a.var[i] -= alpha * a.grad[i]; }
}

// accum = accum * momentum + grad; var -= lr * accum, or with Nesterov
// lr * (grad + momentum * accum), at element i with gradient g.
template <typename T>
__device__ void MomentumAt(const ApplyArgs<T>& a, T lr, T momentum, int64_t i, T g) {
  const T accum = a.slots[0][i] * momentum + g;
  a.slots[0][i] = accum;
  a.var[i] -= a.flag ? g * lr + accum * momentum * lr : accum * lr;
}

// Scalars: lr, momentum.
template <typename T>
__global__ void MomentumKernel(ApplyArgs<T> a, int64_t n) {
  const T lr = *a.scalars[0], momentum = *a.scalars[1];
  TW_GRID_LOOP(i, n) { MomentumAt(a, lr, momentum, i, a.grad[i]); }
}

// Scalars: beta1_power, beta2_power, lr, beta1, beta2, epsilon.
template <typename T>
__global__ void AdamKernel(ApplyArgs<T> a, int64_t n) {
  const T beta1_power = *a.scalars[0], beta2_power = *a.scalars[1], lr = *a.scalars[2];
  const T beta1 = *a.scalars[3], beta2 = *a.scalars[4], epsilon = *a.scalars[5];
  const T lr_t = lr * sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  TW_GRID_LOOP(i, n) {
    const T g = a.grad[i];
    const T m = a.slots[0][i] + (g - a.slots[0][i]) * (T(1) - beta1);
    const T v = a.slots[1][i] + (g * g - a.slots[1][i]) * (T(1) - beta2);
    a.slots[0][i] = m;
    a.slots[1][i] = v;
    const T step = a.flag ? m * beta1 + g * (T(1) - beta1) : m;
    a.var[i] -= step * lr_t / (sqrt(v) + epsilon);
  }
}

// accum += g^2 (when `flag`, update_slots); var -= lr * g / sqrt(accum),
// at element i with gradient g.
template <typename T>
__device__ void AdagradAt(const ApplyArgs<T>& a, T lr, int64_t i, T g) {
  T accum = a.slots[0][i];
  if (a.flag) {
    accum += g * g;
    a.slots[0][i] = accum;
  }
  a.var[i] -= g * lr / sqrt(accum);
}

// Scalars: lr.
template <typename T>
__global__ void AdagradKernel(ApplyArgs<T> a, int64_t n) {
  const T lr = *a.scalars[0];
  TW_GRID_LOOP(i, n) { AdagradAt(a, lr, i, a.grad[i]); }
}

// ms += (g^2 - ms) * (1 - rho); mom = momentum * mom + lr * g / sqrt(ms +
// epsilon); var -= mom, at element i with gradient g.
template <typename T>
__device__ void RmsPropAt(const ApplyArgs<T>& a, T lr, T rho, T momentum, T epsilon, int64_t i,
                          T g) {
  const T ms = a.slots[0][i] + (g * g - a.slots[0][i]) * (T(1) - rho);
  const T mom = a.slots[1][i] * momentum + lr * g / sqrt(ms + epsilon);
  a.slots[0][i] = ms;
  a.slots[1][i] = mom;
  a.var[i] -= mom;
}

// Scalars: lr, rho, momentum, epsilon.
template <typename T>
__global__ void RmsPropKernel(ApplyArgs<T> a, int64_t n) {
  const T lr = *a.scalars[0], rho = *a.scalars[1], momentum = *a.scalars[2];
  const T epsilon = *a.scalars[3];
  TW_GRID_LOOP(i, n) { RmsPropAt(a, lr, rho, momentum, epsilon, i, a.grad[i]); }
}

// The sparse forms: one thread per element of a group's row, applying the
// group's gradient rows in index order (LaunchScatterRows' plan). Scalars
// as the dense kernel's: Momentum lr, momentum; Adagrad lr; RMSProp lr,
// rho, momentum, epsilon.
template <typename T>
__global__ void SparseApplyKernel(ApplyFn fn, ApplyArgs<T> a, const int64_t* offsets,
                                  const int64_t* starts, const int64_t* rows, int64_t slice,
                                  int64_t total) {
  T s[4] = {*a.scalars[0], T(0), T(0), T(0)};
  const int count = fn == ApplyFn::kRmsProp ? 4 : fn == ApplyFn::kMomentum ? 2 : 1;
  for (int j = 1; j < count; ++j) s[j] = *a.scalars[j];
  TW_GRID_LOOP(i, total) {
    const int64_t g = i / slice, k = i % slice;
    const int64_t at = offsets[g] * slice + k;
    for (int64_t j = starts[g]; j < starts[g + 1]; ++j) {
      const T grad = a.grad[rows[j] * slice + k];
      if (fn == ApplyFn::kMomentum) {
        MomentumAt(a, s[0], s[1], at, grad);
      } else if (fn == ApplyFn::kAdagrad) {
        AdagradAt(a, s[0], at, grad);
      } else {
        RmsPropAt(a, s[0], s[1], s[2], s[3], at, grad);
      }
    }
  }
}

template <typename T>
__global__ void AddIntoKernel(const T* a, const T* b, T* out, bool add, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = add ? a[i] + b[i] : a[i] - b[i]; }
}

}  // namespace

template <typename T>
cudaError_t LaunchApply(ApplyFn fn, const ApplyArgs<T>& args, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int grid = GridSize(n);
  switch (fn) {
    case ApplyFn::kGradientDescent:
      GradientDescentKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(args, n);
      break;
    case ApplyFn::kMomentum:
      MomentumKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(args, n);
      break;
    case ApplyFn::kAdam:
      AdamKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(args, n);
      break;
    case ApplyFn::kAdagrad:
      AdagradKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(args, n);
      break;
    case ApplyFn::kRmsProp:
      RmsPropKernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(args, n);
      break;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSparseApply(ApplyFn fn, const ApplyArgs<T>& args, const int64_t* plan,
                              int64_t groups, int64_t slice, cudaStream_t stream) {
  const int64_t total = groups * slice;
  if (total == 0) return cudaSuccess;
  if (fn != ApplyFn::kMomentum && fn != ApplyFn::kAdagrad && fn != ApplyFn::kRmsProp) {
    return cudaErrorInvalidValue;
  }
  SparseApplyKernel<T><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(
      fn, args, plan, plan + groups, plan + 2 * groups + 1, slice, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAddInto(const T* a, const T* b, T* out, bool add, int64_t n,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  AddIntoKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(a, b, out, add, n);
  return cudaGetLastError();
}

template cudaError_t LaunchApply<float>(ApplyFn, const ApplyArgs<float>&, int64_t, cudaStream_t);
template cudaError_t LaunchApply<double>(ApplyFn, const ApplyArgs<double>&, int64_t, cudaStream_t);
template cudaError_t LaunchSparseApply<float>(ApplyFn, const ApplyArgs<float>&, const int64_t*,
                                              int64_t, int64_t, cudaStream_t);
template cudaError_t LaunchSparseApply<double>(ApplyFn, const ApplyArgs<double>&, const int64_t*,
                                               int64_t, int64_t, cudaStream_t);
template cudaError_t LaunchAddInto<float>(const float*, const float*, float*, bool, int64_t,
                                          cudaStream_t);
template cudaError_t LaunchAddInto<double>(const double*, const double*, double*, bool, int64_t,
                                           cudaStream_t);
template cudaError_t LaunchAddInto<int64_t>(const int64_t*, const int64_t*, int64_t*, bool, int64_t,
                                            cudaStream_t);

}  // namespace gpu
}  // namespace towerflow
