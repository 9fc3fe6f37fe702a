#include "framework/gpu/gpu_device.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/gpu/cuda_status.h"
#include "framework/gpu/pinned_allocator.h"
#include "framework/memory_limits.h"
#include "framework/tensor_float32.h"

namespace towerflow {
namespace gpu {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error for a CPU-only session
    return 0;
  }
  return count;
}

GpuDevice::GpuDevice(int ordinal, const std::string& task,
                     std::unique_ptr<CachingGpuAllocator> allocator, ThreadPool* intra_op_pool)
    : GpuAllocatorOwner(std::move(allocator)),
      Device(DeviceName(task, kDeviceGpu, ordinal), kDeviceGpu, owned_allocator_.get(),
             intra_op_pool),
      ordinal_(ordinal) {}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Create(int ordinal,
                                                             ThreadPool* intra_op_pool) {
  return Create(ordinal, kLocalTask, intra_op_pool);
}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Create(int ordinal, const std::string& task,
                                                             ThreadPool* intra_op_pool) {
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  std::unique_ptr<GpuDevice> device(
      new GpuDevice(ordinal, task, std::make_unique<CachingGpuAllocator>(ordinal), intra_op_pool));
  for (cudaStream_t* stream :
       {&device->compute_, &device->host_to_device_, &device->device_to_host_}) {
    TW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  }
  TW_CUBLAS_RETURN_IF_ERROR(cublasCreate(&device->cublas_));
  TW_CUBLAS_RETURN_IF_ERROR(cublasSetStream(device->cublas_, device->compute_));
  // NVIDIA's recommended size on Hopper (cuBLAS docs, cublasSetWorkspace).
  constexpr size_t kCublasWorkspace = size_t{32} << 20;
  TW_CUDA_RETURN_IF_ERROR(cudaMalloc(&device->cublas_workspace_, kCublasWorkspace));
  TW_CUBLAS_RETURN_IF_ERROR(
      cublasSetWorkspace(device->cublas_, device->cublas_workspace_, kCublasWorkspace));
  TW_CUDNN_RETURN_IF_ERROR(cudnnCreate(&device->cudnn_));
  TW_CUDNN_RETURN_IF_ERROR(cudnnSetStream(device->cudnn_, device->compute_));
  // Peer access to every other GPU that allows it, for CopyToDevice.
  for (int peer = 0, n = CudaDeviceCount(); peer < n; ++peer) {
    int can = 0;
    if (peer == ordinal || cudaDeviceCanAccessPeer(&can, ordinal, peer) != cudaSuccess || !can) {
      continue;
    }
    if (cudaDeviceEnablePeerAccess(peer, 0) != cudaSuccess) cudaGetLastError();  // already on
  }
  return device;
}

cublasHandle_t GpuDevice::cublas() const {
  cublasSetMathMode(
      cublas_, TensorFloat32ExecutionEnabled() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  return cublas_;
}

absl::Status GpuDevice::StreamWait(cudaStream_t stream, cudaStream_t after) const {
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  cudaEvent_t event;
  TW_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t error = cudaEventRecord(event, after);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(stream, event, 0);
  cudaEventDestroy(event);  // released once it has fired
  TW_CUDA_RETURN_IF_ERROR(error);
  return absl::OkStatus();
}

namespace {

// A host tensor in pinned memory, or in pageable memory when the driver has
// no pinned memory to give.
// Host memory for a device tensor's copy: within the session's host budget
// (a fetch's copy counts as the kernels' tensors do), pinned where it can be.
absl::StatusOr<Tensor> PinnedHostTensor(DataType dtype, const TensorShape& shape,
                                        const MemoryLimits& limits) {
  TW_RETURN_IF_ERROR(CheckHostBudget(
      shape.num_elements() * static_cast<int64_t>(TensorElementSize(dtype)), limits,
      absl::StrCat("OOM when copying a device tensor of shape ", shape.DebugString(), " and type ",
                   DataTypeString(dtype), " to the host")));
  absl::StatusOr<Tensor> pinned = Tensor::Allocate(PinnedHostAllocator(), dtype, shape);
  if (pinned.ok()) return pinned;
  return Tensor::Allocate(CpuAllocator(), dtype, shape);
}

}  // namespace

absl::StatusOr<Tensor> GpuDevice::CopyToHost(const Tensor& device_tensor) {
  if (capturing()) return RefuseWhileCapturing("a copy to the host");
  // Straight into pinned memory, which the caller keeps as its host tensor.
  TW_ASSIGN_OR_RETURN(
      Tensor host, PinnedHostTensor(device_tensor.dtype(), device_tensor.shape(), memory_limits()));
  if (host.TotalBytes() == 0) return host;
  TW_RETURN_IF_ERROR(StreamWait(device_to_host_, compute_));
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host.raw_data(), device_tensor.raw_data(),
                                          host.TotalBytes(), cudaMemcpyDeviceToHost,
                                          device_to_host_));
  TW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(device_to_host_));
  return host;
}

absl::StatusOr<Tensor> GpuDevice::CopyFromHost(const Tensor& host_tensor) {
  TW_ASSIGN_OR_RETURN(Tensor out,
                      Tensor::Allocate(allocator(), host_tensor.dtype(), host_tensor.shape()));
  if (out.TotalBytes() == 0) return out;
  if (capturing()) {
    TW_RETURN_IF_ERROR(CopyHostBytes(host_tensor, &out));
    return out;
  }
  // The caller's buffer is copied into pinned staging memory, so it may go
  // when this returns and the device copy runs asynchronously; the staging
  // tensor is released by a host callback once the copy is done.
  TW_ASSIGN_OR_RETURN(Tensor staging,
                      PinnedHostTensor(host_tensor.dtype(), host_tensor.shape(), memory_limits()));
  std::memcpy(staging.raw_data(), host_tensor.raw_data(), out.TotalBytes());
  // The block of `out` may have been freed by a kernel still queued on the
  // compute stream.
  TW_RETURN_IF_ERROR(StreamWait(host_to_device_, compute_));
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.raw_data(), staging.raw_data(), out.TotalBytes(),
                                          cudaMemcpyHostToDevice, host_to_device_));
  auto* hold = new Tensor(std::move(staging));
  const cudaError_t error = cudaLaunchHostFunc(
      host_to_device_, [](void* t) { delete static_cast<Tensor*>(t); }, hold);
  if (error != cudaSuccess) {
    // The callback will not run: wait for the copy, then release here.
    cudaStreamSynchronize(host_to_device_);
    delete hold;
    TW_CUDA_RETURN_IF_ERROR(error);
  }
  // Kernels enqueued from now on run after the copy.
  TW_RETURN_IF_ERROR(StreamWait(compute_, host_to_device_));
  return out;
}

absl::StatusOr<Tensor> GpuDevice::CopyToDevice(const Tensor& device_tensor, Device* dst) {
  auto* peer = dynamic_cast<GpuDevice*>(dst);
  if (peer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyToDevice from ", name(), " to ", dst->name(), ", which is not a GPU"));
  }
  TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(peer->allocator(), device_tensor.dtype(),
                                                   device_tensor.shape()));
  if (out.TotalBytes() == 0) return out;
  if (peer == this) {
    // Within this GPU (a variable copied before its update): the compute
    // stream's own order suffices.
    TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
    TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.raw_data(), device_tensor.raw_data(),
                                            out.TotalBytes(), cudaMemcpyDeviceToDevice, compute_));
    return out;
  }
  if (capturing() || peer->capturing()) return RefuseWhileCapturing("a copy to another GPU");
  // The copy runs on this device's compute stream, after the kernels that
  // made the value and after the peer's work on the (maybe reused) block;
  // the peer's later kernels wait for it.
  TW_RETURN_IF_ERROR(peer->StreamWait(compute_, peer->compute_));
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyPeerAsync(out.raw_data(), peer->ordinal_,
                                              device_tensor.raw_data(), ordinal_, out.TotalBytes(),
                                              compute_));
  TW_RETURN_IF_ERROR(StreamWait(peer->compute_, compute_));
  return out;
}

// ---- Recorded steps (CUDA graphs).

absl::Status GpuDevice::RefuseWhileCapturing(const std::string& what) {
  absl::Status refused = absl::FailedPreconditionError(
      absl::StrCat(what, " waits for ", name(), " while its work is being recorded"));
  absl::MutexLock lock(&capture_mu_);
  if (capture_error_.ok()) capture_error_ = refused;
  return refused;
}

absl::StatusOr<Tensor> GpuDevice::StageForCapture(const Tensor& host) {
  TW_ASSIGN_OR_RETURN(Tensor staging,
                      PinnedHostTensor(host.dtype(), host.shape(), memory_limits()));
  std::memcpy(staging.raw_data(), host.raw_data(), host.TotalBytes());
  absl::MutexLock lock(&capture_mu_);
  capture_staging_.push_back(staging);
  return staging;
}

bool GpuDevice::InCaptureHostSlot(const Tensor& host) {
  const char* begin = static_cast<const char*>(host.raw_data());
  absl::MutexLock lock(&capture_mu_);
  for (const Tensor& slot : capture_host_slots_) {
    const char* slot_begin = static_cast<const char*>(slot.raw_data());
    if (begin >= slot_begin && begin + host.TotalBytes() <= slot_begin + slot.TotalBytes()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<Tensor> GpuDevice::AllocateHostSlot(DataType dtype, const TensorShape& shape) {
  // Pinned: a recorded copy from pageable memory would not be asynchronous.
  return Tensor::Allocate(PinnedHostAllocator(), dtype, shape);
}

absl::Status GpuDevice::CopyHostBytes(const Tensor& host, Tensor* device) {
  if (host.TotalBytes() != device->TotalBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copying ", host.TotalBytes(), " bytes into a tensor of ", device->TotalBytes()));
  }
  if (host.TotalBytes() == 0) return absl::OkStatus();
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  const void* from = host.raw_data();
  if (capturing() && !InCaptureHostSlot(host)) {
    // The graph copies from this address on every replay: memory of its own.
    TW_ASSIGN_OR_RETURN(Tensor staging, StageForCapture(host));
    from = staging.raw_data();
  }
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device->raw_data(), from, host.TotalBytes(),
                                          cudaMemcpyHostToDevice, compute_));
  return absl::OkStatus();
}

// A recorded step: the graph, its instantiation, the private pool its
// blocks come from and the pinned memory its copies from the host read.
class GpuCapturedWork final : public CapturedWork {
 public:
  GpuCapturedWork(GpuDevice* device, cudaGraph_t graph, cudaGraphExec_t exec, cudaEvent_t done,
                  BlockCache::PoolId pool, std::vector<Tensor> staging, int64_t operations)
      : device_(device),
        graph_(graph),
        exec_(exec),
        done_(done),
        pool_(pool),
        staging_(std::move(staging)),
        operations_(operations) {}
  ~GpuCapturedWork() override {
    cudaSetDevice(device_->ordinal());
    // A launch still running reads the staging memory and the pool's
    // blocks. Waiting for its event, not the stream, is allowed while
    // another thread records the stream.
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
    device_->gpu_allocator()->cache().ReleasePool(pool_);
  }
  absl::Status Launch() override {
    TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_->ordinal()));
    TW_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, device_->compute_stream()));
    TW_CUDA_RETURN_IF_ERROR(cudaEventRecord(done_, device_->compute_stream()));
    return absl::OkStatus();
  }
  int64_t num_operations() const override { return operations_; }
  int64_t reserved_bytes() const override {
    return device_->gpu_allocator()->cache().PoolBytes(pool_);
  }

 private:
  GpuDevice* const device_;
  const cudaGraph_t graph_;
  const cudaGraphExec_t exec_;
  const cudaEvent_t done_;  // recorded after each launch
  const BlockCache::PoolId pool_;
  const std::vector<Tensor> staging_;
  const int64_t operations_;
};

absl::Status GpuDevice::BeginCapture(absl::Span<const Tensor> host_slots) {
  if (owned_allocator_->guards()) {
    return absl::FailedPreconditionError(
        "the allocator checks guard bytes (TOWERFLOW_GPU_GUARD_BYTES), synchronising the GPU "
        "on every allocation");
  }
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  absl::MutexLock lock(&capture_mu_);
  if (capturing()) return absl::FailedPreconditionError(absl::StrCat(name(), " is recording"));
  pool_ = owned_allocator_->cache().BeginPool();
  if (pool_ < 0) return absl::FailedPreconditionError("the allocator's pool is in use");
  const cudaError_t error = cudaStreamBeginCapture(compute_, cudaStreamCaptureModeThreadLocal);
  if (error != cudaSuccess) {
    owned_allocator_->cache().EndPool();
    owned_allocator_->cache().ReleasePool(pool_);
    TW_CUDA_RETURN_IF_ERROR(error);
  }
  capture_error_ = absl::OkStatus();
  capture_staging_.clear();
  capture_host_slots_.assign(host_slots.begin(), host_slots.end());
  capturing_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CapturedWork>> GpuDevice::EndCapture() {
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(compute_, &graph);
  capturing_.store(false, std::memory_order_release);
  owned_allocator_->cache().EndPool();
  absl::MutexLock lock(&capture_mu_);
  std::vector<Tensor> staging = std::move(capture_staging_);
  capture_staging_.clear();
  capture_host_slots_.clear();
  absl::Status failed = capture_error_;
  if (failed.ok() && ended != cudaSuccess) {
    failed = CudaStatus(ended, "cudaStreamEndCapture", __FILE__, __LINE__);
  }
  cudaGraphExec_t exec = nullptr;
  if (failed.ok()) {
    const cudaError_t made = cudaGraphInstantiateWithFlags(&exec, graph, 0);
    if (made != cudaSuccess) {
      failed = CudaStatus(made, "cudaGraphInstantiateWithFlags", __FILE__, __LINE__);
    }
  }
  cudaEvent_t done = nullptr;
  if (failed.ok()) {
    const cudaError_t made = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    if (made != cudaSuccess) failed = CudaStatus(made, "cudaEventCreate", __FILE__, __LINE__);
  }
  if (!failed.ok()) {
    cudaGetLastError();
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    owned_allocator_->cache().ReleasePool(pool_);
    return failed;
  }
  size_t operations = 0;
  cudaGraphGetNodes(graph, nullptr, &operations);
  return std::unique_ptr<CapturedWork>(new GpuCapturedWork(
      this, graph, exec, done, pool_, std::move(staging), static_cast<int64_t>(operations)));
}

absl::Status GpuDevice::CopyIntoDevice(const Tensor& host, Tensor* device) {
  if (host.dtype() != device->dtype() || host.TotalBytes() != device->TotalBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CopyIntoDevice of a ", DataTypeString(host.dtype()), host.shape().DebugString(),
        " into a ", DataTypeString(device->dtype()), device->shape().DebugString()));
  }
  if (host.TotalBytes() == 0) return absl::OkStatus();
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  TW_ASSIGN_OR_RETURN(Tensor staging,
                      PinnedHostTensor(host.dtype(), host.shape(), memory_limits()));
  std::memcpy(staging.raw_data(), host.raw_data(), host.TotalBytes());
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device->raw_data(), staging.raw_data(), host.TotalBytes(),
                                          cudaMemcpyHostToDevice, compute_));
  auto* hold = new Tensor(std::move(staging));
  const cudaError_t error = cudaLaunchHostFunc(
      compute_, [](void* t) { delete static_cast<Tensor*>(t); }, hold);
  if (error != cudaSuccess) {
    cudaStreamSynchronize(compute_);
    delete hold;
    TW_CUDA_RETURN_IF_ERROR(error);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> GpuDevice::CopyAllToHost(absl::Span<const Tensor> tensors) {
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) {
    TW_ASSIGN_OR_RETURN(Tensor host, PinnedHostTensor(t.dtype(), t.shape(), memory_limits()));
    if (host.TotalBytes() > 0) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host.raw_data(), t.raw_data(), host.TotalBytes(),
                                              cudaMemcpyDeviceToHost, compute_));
    }
    out.push_back(std::move(host));
  }
  TW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(compute_));
  return out;
}

GpuDevice::~GpuDevice() {
  cudaSetDevice(ordinal_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  for (cudaStream_t stream : {compute_, host_to_device_, device_to_host_}) {
    if (stream != nullptr) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }
  if (cublas_workspace_ != nullptr) cudaFree(cublas_workspace_);
}

namespace {

class GpuDeviceFactory final : public DeviceFactory {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      int max_count, const std::string& task, ThreadPool* intra_op_pool) override {
    int count = CudaDeviceCount();
    if (max_count >= 0 && max_count < count) count = max_count;
    std::vector<std::unique_ptr<Device>> devices;
    for (int i = 0; i < count; ++i) {
      TW_ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> device,
                          GpuDevice::Create(i, task, intra_op_pool));
      devices.push_back(std::move(device));
    }
    return devices;
  }
  int NumPresent() const override { return CudaDeviceCount(); }
};

const bool registered = [] {
  RegisterDeviceFactory(kDeviceGpu, std::make_unique<GpuDeviceFactory>());
  return true;
}();

}  // namespace
}  // namespace gpu
}  // namespace towerflow
