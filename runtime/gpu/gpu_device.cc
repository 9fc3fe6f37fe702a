#include "runtime/gpu/gpu_device.h"

#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "runtime/gpu/cuda_status.h"

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

GpuDevice::GpuDevice(int ordinal, std::unique_ptr<CachingGpuAllocator> allocator,
                     ThreadPool* intra_op_pool)
    : Device(LocalDeviceName(kDeviceGpu, ordinal), kDeviceGpu, allocator.get(), intra_op_pool),
      ordinal_(ordinal),
      allocator_(std::move(allocator)) {}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Create(int ordinal,
                                                             ThreadPool* intra_op_pool) {
  TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  std::unique_ptr<GpuDevice> device(
      new GpuDevice(ordinal, std::make_unique<CachingGpuAllocator>(ordinal), intra_op_pool));
  for (cudaStream_t* stream :
       {&device->compute_, &device->host_to_device_, &device->device_to_host_}) {
    TW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  }
  return device;
}

GpuDevice::~GpuDevice() {
  cudaSetDevice(ordinal_);
  for (cudaStream_t stream : {compute_, host_to_device_, device_to_host_}) {
    if (stream != nullptr) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }
}

namespace {

class GpuDeviceFactory final : public DeviceFactory {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      int max_count, ThreadPool* intra_op_pool) override {
    int count = CudaDeviceCount();
    if (max_count >= 0 && max_count < count) count = max_count;
    std::vector<std::unique_ptr<Device>> devices;
    for (int i = 0; i < count; ++i) {
      TW_ASSIGN_OR_RETURN(std::unique_ptr<GpuDevice> device, GpuDevice::Create(i, intra_op_pool));
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
