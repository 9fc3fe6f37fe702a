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
//
// The device records a step as a CUDA graph (StepCapture,
// framework/step_capture.h): stream capture of the compute stream in
// thread-local mode, allocations served from a private pool of the
// allocator. While recording, a copy from the host is made on the compute
// stream from pinned staging memory the graph keeps (each replay copies the
// same bytes again), and a copy to the host is refused: it would wait.
#ifndef TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_
#define TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "framework/device.h"
#include "framework/gpu/gpu_allocator.h"
#include "framework/step_capture.h"

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

class GpuCapturedWork;

class GpuDevice final : private internal::GpuAllocatorOwner, public Device, public StepCapture {
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

  // StepCapture: CUDA graphs of the compute stream.
  StepCapture* step_capture() override { return this; }
  absl::StatusOr<Tensor> AllocateHostSlot(DataType dtype, const TensorShape& shape) override;
  absl::Status BeginCapture(absl::Span<const Tensor> host_slots) override;
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override;
  bool capturing() const override { return capturing_.load(std::memory_order_acquire); }
  absl::Status CopyIntoDevice(const Tensor& host, Tensor* device) override;
  absl::StatusOr<std::vector<Tensor>> CopyAllToHost(
      absl::Span<const Tensor> device_tensors) override;

  // Copies the bytes of `host` (host memory, which may change once this
  // returns) into `device` on the compute stream: for a kernel whose host
  // input goes to the GPU. Pageable host memory is staged by the driver;
  // while recording, through pinned memory the recording keeps, unless
  // `host` lies in one of the recording's host slots (a replayed step's
  // int32 feed), which each replay copies anew.
  absl::Status CopyHostBytes(const Tensor& host, Tensor* device);

  int ordinal() const { return ordinal_; }
  cudaStream_t compute_stream() const { return compute_; }
  cudaStream_t host_to_device_stream() const { return host_to_device_; }
  cudaStream_t device_to_host_stream() const { return device_to_host_; }
  CachingGpuAllocator* gpu_allocator() const { return owned_allocator_.get(); }

  // The library handles, on the compute stream. Neither library promises
  // that one handle may be used from two threads at once, so callers hold
  // the lock while they enqueue. cuBLAS's math mode follows
  // TensorFloat32ExecutionEnabled() (framework/tensor_float32.h): float32
  // products on TF32 tensor cores when it is on.
  cublasHandle_t cublas() const;
  cudnnHandle_t cudnn() const { return cudnn_; }
  absl::Mutex& handle_mutex() const { return handle_mu_; }

  // Makes `stream` (of any device) wait for the work enqueued so far on
  // `after`, one of this device's streams. Leaves this device current.
  absl::Status StreamWait(cudaStream_t stream, cudaStream_t after) const;

 private:
  GpuDevice(int ordinal, const std::string& task, std::unique_ptr<CachingGpuAllocator> allocator,
            ThreadPool* intra_op_pool);

  // While recording: the operation that broke it (a copy to the host), and
  // the pinned host memory that copies from the host were staged in.
  absl::Status RefuseWhileCapturing(const std::string& what);
  absl::StatusOr<Tensor> StageForCapture(const Tensor& host);
  // Whether `host` lies within one of the recording's host slots.
  bool InCaptureHostSlot(const Tensor& host);

  const int ordinal_;
  std::atomic<bool> capturing_{false};
  absl::Mutex capture_mu_;
  BlockCache::PoolId pool_ ABSL_GUARDED_BY(capture_mu_) = 0;
  absl::Status capture_error_ ABSL_GUARDED_BY(capture_mu_);
  std::vector<Tensor> capture_staging_ ABSL_GUARDED_BY(capture_mu_);
  std::vector<Tensor> capture_host_slots_ ABSL_GUARDED_BY(capture_mu_);
  cudaStream_t compute_ = nullptr;
  cudaStream_t host_to_device_ = nullptr;
  cudaStream_t device_to_host_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  // cuBLAS's workspace, given so that it never allocates one itself, not
  // even while a step is recorded (PyTorch does the same).
  void* cublas_workspace_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  mutable absl::Mutex handle_mu_;
};

// The number of CUDA devices; 0 when there is no GPU or no driver.
int CudaDeviceCount();

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_GPU_GPU_DEVICE_H_
