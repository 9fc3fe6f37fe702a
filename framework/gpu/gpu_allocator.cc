#include "framework/gpu/gpu_allocator.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace gpu {
namespace {

constexpr size_t kGuardBytes = 256;  // keeps the user pointer 256-aligned
constexpr char kGuardByte = 0x5a;

std::atomic<int64_t> total_guard_violations{0};

// Makes the allocator's device current on this thread for the scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != ordinal) cudaSetDevice(ordinal);
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

// cudaMalloc of device `ordinal`, allowed while this thread's stream
// records a step: CUDA refuses it in the recording's capture mode, PyTorch's
// allocator does the same exchange (c10/cuda/CUDACachingAllocator.cpp).
void* DriverMalloc(int ordinal, size_t size) {
  DeviceGuard guard(ordinal);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  void* ptr = nullptr;
  const cudaError_t error = cudaMalloc(&ptr, size);
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error state of this thread
    return nullptr;
  }
  return ptr;
}

}  // namespace

CachingGpuAllocator::CachingGpuAllocator(int device_ordinal)
    : ordinal_(device_ordinal),
      cache_({[device_ordinal](size_t n) { return DriverMalloc(device_ordinal, n); },
              [device_ordinal](void* p) {
                DeviceGuard guard(device_ordinal);
                cudaFree(p);
              }}) {
  const char* guards = std::getenv("TOWERFLOW_GPU_GUARD_BYTES");
  guards_ = guards != nullptr && std::string(guards) == "1";
}

CachingGpuAllocator::~CachingGpuAllocator() = default;  // the cache frees every block

std::string CachingGpuAllocator::Name() const { return absl::StrCat("gpu_", ordinal_, "_caching"); }

int64_t CachingGpuAllocator::TotalGuardViolations() { return total_guard_violations.load(); }

void CachingGpuAllocator::EnableGuards() {
  absl::MutexLock lock(&mu_);
  guards_ = true;
}

bool CachingGpuAllocator::guards() const {
  absl::MutexLock lock(&mu_);
  return guards_;
}

void* CachingGpuAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  // cudaMalloc returns 256-byte aligned blocks.
  if (alignment > 256 || (alignment & (alignment - 1)) != 0) return nullptr;
  absl::MutexLock lock(&mu_);
  if (!guards_) return cache_.Allocate(num_bytes);
  char* base = static_cast<char*>(cache_.Allocate(num_bytes + 2 * kGuardBytes));
  if (base == nullptr) return nullptr;
  char* user = base + kGuardBytes;
  DeviceGuard device(ordinal_);
  cudaDeviceSynchronize();
  cudaMemset(base, kGuardByte, kGuardBytes);
  cudaMemset(user + num_bytes, kGuardByte, kGuardBytes);
  cudaDeviceSynchronize();
  guarded_[user] = {base, num_bytes};
  return user;
}

bool CachingGpuAllocator::GuardsIntactLocked(const char* base, size_t num_bytes) {
  DeviceGuard device(ordinal_);
  cudaDeviceSynchronize();
  std::vector<char> guard(kGuardBytes);
  for (const char* region : {base, base + kGuardBytes + num_bytes}) {
    if (cudaMemcpy(guard.data(), region, kGuardBytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    for (char c : guard) {
      if (c != kGuardByte) return false;
    }
  }
  return true;
}

void CachingGpuAllocator::DeallocateRaw(void* ptr) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto guarded = guarded_.find(ptr);
  if (guarded != guarded_.end()) {
    auto [base, num_bytes] = guarded->second;
    guarded_.erase(guarded);
    if (!GuardsIntactLocked(base, num_bytes)) {
      ++guard_violations_;
      ++total_guard_violations;
    }
    ptr = base;
  }
  cache_.Deallocate(ptr);  // not ours: a programming error, ignored rather than freed
}

CachingGpuAllocator::Stats CachingGpuAllocator::stats() const {
  const BlockCache::Stats cache = cache_.stats();
  Stats stats;
  stats.driver_allocations = cache.backend_allocations;
  stats.bytes_in_use = cache.bytes_in_use;
  stats.bytes_cached = cache.bytes_cached;
  absl::MutexLock lock(&mu_);
  stats.guard_violations = guard_violations_;
  return stats;
}

}  // namespace gpu
}  // namespace towerflow
