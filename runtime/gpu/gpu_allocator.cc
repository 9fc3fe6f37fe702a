#include "runtime/gpu/gpu_allocator.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace gpu {
namespace {

constexpr size_t kMinBlock = 512;             // cudaMalloc aligns to 256 already
constexpr size_t kPowerOfTwoAbove = 1 << 20;  // larger sizes round to powers of two

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

}  // namespace

size_t CachingGpuAllocator::RoundedSize(size_t num_bytes) {
  if (num_bytes <= kPowerOfTwoAbove) {
    return std::max(kMinBlock, (num_bytes + kMinBlock - 1) / kMinBlock * kMinBlock);
  }
  size_t size = kPowerOfTwoAbove;
  while (size < num_bytes) size <<= 1;
  return size;
}

CachingGpuAllocator::~CachingGpuAllocator() {
  absl::MutexLock lock(&mu_);
  DeviceGuard guard(ordinal_);
  ReleaseCacheLocked();
  for (const auto& [ptr, size] : live_) cudaFree(ptr);  // leaked tensors: the device goes away
}

std::string CachingGpuAllocator::Name() const { return absl::StrCat("gpu_", ordinal_, "_caching"); }

void* CachingGpuAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  // cudaMalloc returns 256-byte aligned blocks.
  if (alignment > 256 || (alignment & (alignment - 1)) != 0) return nullptr;
  const size_t size = RoundedSize(num_bytes);
  absl::MutexLock lock(&mu_);
  void* ptr = nullptr;
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    stats_.bytes_cached -= size;
  } else {
    DeviceGuard guard(ordinal_);
    if (cudaMalloc(&ptr, size) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error state of this thread
      ReleaseCacheLocked();
      if (cudaMalloc(&ptr, size) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
      }
    }
    ++stats_.driver_allocations;
  }
  live_[ptr] = size;
  stats_.bytes_in_use += size;
  return ptr;
}

void CachingGpuAllocator::DeallocateRaw(void* ptr) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours: a programming error, ignored rather than freed
  free_[it->second].push_back(ptr);
  stats_.bytes_in_use -= it->second;
  stats_.bytes_cached += it->second;
  live_.erase(it);
}

void CachingGpuAllocator::ReleaseCacheLocked() {
  for (auto& [size, blocks] : free_) {
    for (void* block : blocks) cudaFree(block);
    stats_.bytes_cached -= static_cast<int64_t>(size * blocks.size());
    blocks.clear();
  }
}

CachingGpuAllocator::Stats CachingGpuAllocator::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace gpu
}  // namespace towerflow
