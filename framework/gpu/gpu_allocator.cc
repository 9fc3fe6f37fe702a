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

constexpr size_t kMinBlock = 512;             // cudaMalloc aligns to 256 already
constexpr size_t kPowerOfTwoAbove = 1 << 20;  // larger sizes round to powers of two
constexpr size_t kGuardBytes = 256;           // keeps the user pointer 256-aligned
constexpr char kGuardByte = 0x5a;

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

namespace {
std::atomic<int64_t> total_guard_violations{0};
}  // namespace

CachingGpuAllocator::CachingGpuAllocator(int device_ordinal) : ordinal_(device_ordinal) {
  const char* guards = std::getenv("TOWERFLOW_GPU_GUARD_BYTES");
  guards_ = guards != nullptr && std::string(guards) == "1";
}

int64_t CachingGpuAllocator::TotalGuardViolations() { return total_guard_violations.load(); }

void CachingGpuAllocator::EnableGuards() {
  absl::MutexLock lock(&mu_);
  guards_ = true;
}

void* CachingGpuAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  // cudaMalloc returns 256-byte aligned blocks.
  if (alignment > 256 || (alignment & (alignment - 1)) != 0) return nullptr;
  absl::MutexLock lock(&mu_);
  if (!guards_) return AllocateLocked(num_bytes);
  char* base = static_cast<char*>(AllocateLocked(num_bytes + 2 * kGuardBytes));
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

void* CachingGpuAllocator::AllocateLocked(size_t num_bytes) {
  const size_t size = RoundedSize(num_bytes);
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
  auto guarded = guarded_.find(ptr);
  if (guarded != guarded_.end()) {
    auto [base, num_bytes] = guarded->second;
    guarded_.erase(guarded);
    if (!GuardsIntactLocked(base, num_bytes)) {
      ++stats_.guard_violations;
      ++total_guard_violations;
    }
    ptr = base;
  }
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
