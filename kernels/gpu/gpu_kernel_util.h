// What the GPU OpKernels share: the kernel's GpuDevice (made current on the
// calling thread), device temporaries, and a checked launch.
#ifndef TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_
#define TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_

#include <cuda_runtime.h>

#include <string>

#include "absl/status/statusor.h"
#include "core/status_macros.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/gpu/cuda_status.h"
#include "framework/gpu/gpu_device.h"

namespace towerflow {
namespace gpu {

// The GPU this kernel runs on, current on this thread (CUDA's current
// device is per thread, and a launch on another device's stream fails).
inline absl::StatusOr<GpuDevice*> CurrentGpu(KernelContext* ctx) {
  auto* device = static_cast<GpuDevice*>(ctx->device());
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(device->ordinal()));
  return device;
}

// A scratch tensor in the device's memory, freed (stream-ordered) with the
// Tensor.
inline absl::StatusOr<Tensor> DeviceTemp(KernelContext* ctx, DataType dtype,
                                         const TensorShape& shape) {
  return Tensor::Allocate(ctx->device()->allocator(), dtype, shape);
}

// Whether the node's data_format attr says NCHW (else NHWC).
inline absl::StatusOr<bool> IsNchw(const KernelConstruction& c) {
  std::string format;
  TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
  return format == "NCHW";
}

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_
