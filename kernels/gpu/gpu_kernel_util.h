// What the GPU OpKernels share: the kernel's GpuDevice (made current on the
// calling thread), device temporaries, host plans uploaded, and a checked
// launch.
#ifndef TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_
#define TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "framework/gpu/cuda_status.h"
#include "framework/gpu/gpu_device.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/tensor.h"
#include "kernels/bcast.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// TF's switches TF_CUDNN_DETERMINISTIC=1 and TF_DETERMINISTIC_OPS=1 (or
// "true"): kernels give the same bits on every run (cuDNN's deterministic
// algorithms only, MaxPoolGrad without atomics), as TF's do.
inline bool DeterministicOpsRequested() {
  static const bool deterministic = [] {
    for (const char* name : {"TF_CUDNN_DETERMINISTIC", "TF_DETERMINISTIC_OPS"}) {
      const char* v = std::getenv(name);
      if (v != nullptr && (std::string(v) == "1" || absl::AsciiStrToLower(v) == "true")) {
        return true;
      }
    }
    return false;
  }();
  return deterministic;
}

// An element of T as the math kernels of launch.h take it: the 16-bit
// floats as HalfBits / Bfloat16Bits, every other type as itself; and the
// type the kernels compute in (GpuMath: float for the 16-bit floats), whose
// functors (kernels/cwise_functors.h) they apply.
template <typename T>
using OnGpu = std::conditional_t<std::is_same_v<T, half>, HalfBits,
                                 std::conditional_t<std::is_same_v<T, bfloat16>, Bfloat16Bits, T>>;
template <typename T>
using GpuMath = std::conditional_t<kIsFloat16<T>, float, T>;

// A tensor's elements of T, typed for the launchers.
template <typename T>
const OnGpu<T>* GpuData(const Tensor& t) {
  static_assert(sizeof(OnGpu<T>) == sizeof(T));
  return reinterpret_cast<const OnGpu<T>*>(t.data<T>());
}
template <typename T>
OnGpu<T>* GpuData(Tensor& t) {
  return reinterpret_cast<OnGpu<T>*>(t.data<T>());
}

// The element type the kernels that only move data take: the bits of a
// 16-bit type, every other type as itself; and a value of T as those bits.
template <typename T>
using Moved = std::conditional_t<kIsFloat16<T>, uint16_t, T>;
template <typename T>
const Moved<T>* Bits(const Tensor& t) {
  return static_cast<const Moved<T>*>(t.raw_data());
}
template <typename T>
Moved<T>* Bits(Tensor& t) {
  return static_cast<Moved<T>*>(t.raw_data());
}
template <typename T>
Moved<T> BitsOf(T value) {
  Moved<T> bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Note [Capturable GPU kernels]
// Every GPU kernel is declared capturable (KernelDef::capturable), so that a
// recorded step (runtime/step_replay.h) may hold it, except NCCL's
// all-reduce (several GPUs of one process under capture may deadlock) and
// Where and TopKV2, which read a count back. Audited 2026-11-28: they
// enqueue on the compute stream only; they copy host plans and host inputs
// to the device through GpuDevice::CopyFromHost (Upload) or CopyHostBytes,
// which stage them in pinned memory the recording keeps; they allocate
// through their context, so from the recording's private pool; a
// convolution measures its algorithms once per kernel and shape, during the
// warm-up steps; a random op's counter is in device memory. A new kernel
// declares itself capturable only after the same audit.

// The GPU this kernel runs on, current on this thread (CUDA's current
// device is per thread, and a launch on another device's stream fails).
inline absl::StatusOr<GpuDevice*> CurrentGpu(KernelContext* ctx) {
  auto* device = static_cast<GpuDevice*>(ctx->device());
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(device->ordinal()));
  return device;
}

// A scratch tensor in the device's memory, freed (stream-ordered) with the
// Tensor. Like every kernel allocation it is checked against the session's
// max_tensor_bytes first (ResourceExhausted naming the node past it).
inline absl::StatusOr<Tensor> DeviceTemp(KernelContext* ctx, DataType dtype,
                                         const TensorShape& shape) {
  return ctx->allocate_temp(dtype, shape);
}

// `values` copied into the GPU's memory (a plan the host made: offsets,
// rows, taps), as a 1-D tensor.
template <typename V>
absl::StatusOr<Tensor> Upload(GpuDevice* gpu, const std::vector<V>& values) {
  Tensor host(DataTypeToEnum<V>::value, TensorShape({static_cast<int64_t>(values.size())}));
  if (!values.empty()) std::memcpy(host.raw_data(), values.data(), values.size() * sizeof(V));
  return gpu->CopyFromHost(host);
}

// cub counts items in int: Unimplemented naming `op` for more.
inline absl::Status CheckCubItems(const char* op, int64_t items) {
  if (items >= std::numeric_limits<int>::max()) {
    return absl::UnimplementedError(
        absl::StrCat(op, " on a GPU takes fewer than 2^31 elements, got ", items));
  }
  return absl::OkStatus();
}

// Strides over the collapsed output for operands reshaped to `reshape`
// (a dimension of 1 broadcasts: stride 0).
inline void FillStrides(const BCast::Vec& reshape, int64_t* strides) {
  int64_t stride = 1;
  for (int d = static_cast<int>(reshape.size()) - 1; d >= 0; --d) {
    strides[d] = reshape[d] == 1 ? 0 : stride;
    stride *= reshape[d];
  }
}

// The kernels' description of a (non-trivial) broadcast of x and y.
inline absl::StatusOr<Broadcast> MakeBroadcast(const BCast& b, const TensorShape& x,
                                               const TensorShape& y) {
  const int rank = static_cast<int>(b.result_shape().size());
  if (rank > kMaxDims) {
    return absl::UnimplementedError(absl::StrCat("broadcasting ", x.DebugString(), " and ",
                                                 y.DebugString(), " needs ", rank,
                                                 " dimensions; the GPU kernels take ", kMaxDims));
  }
  Broadcast bcast;
  bcast.rank = rank;
  for (int d = 0; d < rank; ++d) bcast.dims[d] = b.result_shape()[d];
  FillStrides(b.x_reshape(), bcast.x_strides);
  FillStrides(b.y_reshape(), bcast.y_strides);
  return bcast;
}

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_GPU_KERNEL_UTIL_H_
