// GPU devices ("/job:localhost/replica:0/task:0/device:GPU:i"): one per CUDA
// device present, each with a caching allocator, a compute stream and two
// copy streams (host to device, device to host).
//
// The GPU device factory registers itself when the CUDA runtime is linked
// in (bazel build --config=cuda); NumPresent() asks cudaGetDeviceCount, and
// a machine without a GPU or driver has none, so sessions are CPU-only and
// soft placement moves GPU requests to the CPU.
//
// What the CUDA backend still lacks (see the CUDA issue): GPU kernels and
// host <-> device copies in Send/Recv. Until they land, no kernel is
// registered for "GPU", and the placer puts every op on the CPU (soft
// placement) even when a GPU is present.
#ifndef TOWERFLOW_RUNTIME_GPU_GPU_DEVICE_H_
#define TOWERFLOW_RUNTIME_GPU_GPU_DEVICE_H_

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/device.h"
#include "runtime/gpu/gpu_allocator.h"

namespace towerflow {
namespace gpu {

class GpuDevice final : public Device {
 public:
  // Makes the allocator and streams of CUDA device `ordinal`.
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Create(int ordinal, ThreadPool* intra_op_pool);
  ~GpuDevice() override;

  int ordinal() const { return ordinal_; }
  cudaStream_t compute_stream() const { return compute_; }
  cudaStream_t host_to_device_stream() const { return host_to_device_; }
  cudaStream_t device_to_host_stream() const { return device_to_host_; }
  CachingGpuAllocator* gpu_allocator() const { return allocator_.get(); }

 private:
  GpuDevice(int ordinal, std::unique_ptr<CachingGpuAllocator> allocator, ThreadPool* intra_op_pool);

  const int ordinal_;
  std::unique_ptr<CachingGpuAllocator> allocator_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t host_to_device_ = nullptr;
  cudaStream_t device_to_host_ = nullptr;
};

// The number of CUDA devices; 0 when there is no GPU or no driver.
int CudaDeviceCount();

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_GPU_GPU_DEVICE_H_
