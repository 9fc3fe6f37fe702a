// GPU devices ("/job:localhost/replica:0/task:0/device:GPU:i"): one per CUDA
// device present, each with a caching allocator, a compute stream, two copy
// streams (host to device, device to host), and cuBLAS and cuDNN handles
// bound to the compute stream.
//
// The GPU device factory registers itself when the CUDA runtime is linked
// in (bazel build --config=cuda); NumPresent() asks cudaGetDeviceCount, and
// a machine without a GPU or driver has none, so sessions are CPU-only and
// soft placement moves GPU requests to the CPU.
//
// Kernels enqueue on the compute stream and return; a tensor is ready for
// whatever comes later on that stream. Copies order themselves against it
// with events: a copy into device memory waits for the compute stream's
// earlier work (the block may have just been freed by a queued kernel) and
// the compute stream waits for the copy; a copy to the host waits for the
// kernels before it and returns when the bytes are there.
//
// Host ends are pinned (framework/gpu/pinned_allocator.h): a fetched tensor
// is copied straight into pinned memory, and a fed one is staged through
// pinned memory so that CopyFromHost returns without waiting for the copy.
#ifndef TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_
#define TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "framework/device.h"
#include "framework/gpu/gpu_allocator.h"

namespace towerflow {
namespace gpu {

namespace internal {

// Owns a GPU device's allocator. GpuDevice lists it as a base before Device,
// so it is made before Device (which borrows the allocator) and destroyed
// after it: the tensors that Device's resources hold (variables, stacks) go
// back to the allocator while it still exists.
class GpuAllocatorOwner {
 protected:
  explicit GpuAllocatorOwner(std::unique_ptr<CachingGpuAllocator> allocator)
      : owned_allocator_(std::move(allocator)) {}
  const std::unique_ptr<CachingGpuAllocator> owned_allocator_;
};

}  // namespace internal

class GpuDevice final : private internal::GpuAllocatorOwner, public Device {
 public:
  // Makes the allocator and streams of CUDA device `ordinal`.
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Create(int ordinal, ThreadPool* intra_op_pool);
  // The same, named as a device of `task` (DeviceName).
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Create(int ordinal, const std::string& task,
                                                           ThreadPool* intra_op_pool);
  ~GpuDevice() override;

  bool has_device_memory() const override { return true; }
  bool kernels_only_enqueue() const override { return true; }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& device_tensor) override;
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& host_tensor) override;
  // Peer to peer when the two GPUs can, else through the driver's staging.
  // With dst == this, a copy within this GPU's memory.
  absl::StatusOr<Tensor> CopyToDevice(const Tensor& device_tensor, Device* dst) override;

  int ordinal() const { return ordinal_; }
  cudaStream_t compute_stream() const { return compute_; }
  cudaStream_t host_to_device_stream() const { return host_to_device_; }
  cudaStream_t device_to_host_stream() const { return device_to_host_; }
  CachingGpuAllocator* gpu_allocator() const { return owned_allocator_.get(); }

  // The library handles, on the compute stream. Neither library promises
  // that one handle may be used from two threads at once, so callers hold
  // the lock while they enqueue.
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  absl::Mutex& handle_mutex() const { return handle_mu_; }

  // Makes `stream` (of any device) wait for the work enqueued so far on
  // `after`, one of this device's streams. Leaves this device current.
  absl::Status StreamWait(cudaStream_t stream, cudaStream_t after) const;

 private:
  GpuDevice(int ordinal, const std::string& task, std::unique_ptr<CachingGpuAllocator> allocator,
            ThreadPool* intra_op_pool);

  const int ordinal_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t host_to_device_ = nullptr;
  cudaStream_t device_to_host_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  mutable absl::Mutex handle_mu_;
};

// The number of CUDA devices; 0 when there is no GPU or no driver.
int CudaDeviceCount();

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_
