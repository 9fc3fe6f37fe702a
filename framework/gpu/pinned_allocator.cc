#include "framework/gpu/pinned_allocator.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/gpu/gpu_allocator.h"

namespace towerflow {
namespace gpu {
namespace {

class CachingPinnedAllocator final : public Allocator {
 public:
  std::string Name() const override { return "cuda_pinned_host"; }

  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    // cudaHostAlloc returns page-aligned memory, which covers any alignment
    // a tensor asks for.
    const size_t size = CachingGpuAllocator::RoundedSize(num_bytes);
    absl::MutexLock lock(&mu_);
    std::vector<void*>& bin = free_[size];
    void* ptr = nullptr;
    if (!bin.empty()) {
      ptr = bin.back();
      bin.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
    } else {
      // Allowed while this thread's stream records a step (a kernel's host
      // plan staged for the recording): relaxed capture mode, as for
      // cudaMalloc in the device allocator.
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      cudaThreadExchangeStreamCaptureMode(&mode);
      const cudaError_t error = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
      cudaThreadExchangeStreamCaptureMode(&mode);
      if (error != cudaSuccess) {
        cudaGetLastError();  // no driver or no pinned memory left: not sticky
        return nullptr;
      }
      ++stats_.driver_allocations;
    }
    live_[ptr] = size;
    stats_.bytes_in_use += static_cast<int64_t>(size);
    return ptr;
  }

  void DeallocateRaw(void* ptr) override {
    if (ptr == nullptr) return;
    absl::MutexLock lock(&mu_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return;  // not ours: a caller bug, but never a crash
    const size_t size = it->second;
    live_.erase(it);
    free_[size].push_back(ptr);
    stats_.bytes_in_use -= static_cast<int64_t>(size);
    stats_.bytes_cached += static_cast<int64_t>(size);
  }

  PinnedStats stats() const {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<void*, size_t> live_ ABSL_GUARDED_BY(mu_);
  PinnedStats stats_ ABSL_GUARDED_BY(mu_);
};

CachingPinnedAllocator* Instance() {
  static auto* allocator = new CachingPinnedAllocator();  // lives for the process
  return allocator;
}

}  // namespace

Allocator* PinnedHostAllocator() { return Instance(); }
PinnedStats PinnedHostStats() { return Instance()->stats(); }

}  // namespace gpu
}  // namespace towerflow
