// A caching device allocator: cudaMalloc only when its cache has no free
// block of the size, so steady-state training steps allocate nothing from
// the driver. The bookkeeping is framework/block_cache.h's: sizes round up
// to 512 bytes (to a power of two above 1 MiB) and freed blocks go back to a
// free list per rounded size. Each device has one compute stream and
// kernels run in its order, so a block freed by one kernel is safe for the
// next one on that stream (stream-ordered reuse). When cudaMalloc fails the
// cache is released to the driver and the allocation tried once more; then
// AllocateRaw returns nullptr (the caller reports ResourceExhausted).
//
// A recorded step (GpuDevice's StepCapture) allocates into a private pool
// (Note [Private pools] in framework/block_cache.cc); cudaMalloc then runs
// in CUDA's relaxed capture mode, which allows it while a stream records.
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_GPU_GPU_ALLOCATOR_H_
#define TOWERFLOW_FRAMEWORK_GPU_GPU_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/allocator.h"
#include "framework/block_cache.h"

namespace towerflow {
namespace gpu {

class CachingGpuAllocator final : public Allocator {
 public:
  explicit CachingGpuAllocator(int device_ordinal);
  // Returns every block to the driver.
  ~CachingGpuAllocator() override;

  std::string Name() const override;
  void* AllocateRaw(size_t alignment, size_t num_bytes) override;
  void DeallocateRaw(void* ptr) override;

  struct Stats {
    int64_t driver_allocations = 0;  // cudaMalloc calls that succeeded
    int64_t bytes_in_use = 0;        // rounded sizes of live blocks
    int64_t bytes_cached = 0;        // rounded sizes of free blocks
    int64_t guard_violations = 0;    // guarded blocks freed with a guard overwritten
  };
  Stats stats() const;

  // For tests: from now on every block has 256 guard bytes before and after
  // it, filled with a pattern and checked when the block is freed (a
  // kernel writing out of bounds counts a guard violation). Synchronises the
  // device on every allocation and free. Allocators made while the
  // environment has TOWERFLOW_GPU_GUARD_BYTES=1 start with guards on.
  void EnableGuards();
  // Guard violations of all allocators of the process so far.
  static int64_t TotalGuardViolations();

  // The size a request is served with.
  static size_t RoundedSize(size_t num_bytes) { return BlockCache::RoundedSize(num_bytes); }

  // Whether guard bytes are on (EnableGuards): they synchronise the device,
  // so a step cannot be recorded.
  bool guards() const;
  // The private pools of recorded steps (BlockCache's).
  BlockCache& cache() { return cache_; }

 private:
  bool GuardsIntactLocked(const char* base, size_t num_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int ordinal_;
  BlockCache cache_;  // over cudaMalloc / cudaFree
  mutable absl::Mutex mu_;
  int64_t guard_violations_ ABSL_GUARDED_BY(mu_) = 0;
  bool guards_ ABSL_GUARDED_BY(mu_) = false;
  // user pointer -> (block, requested bytes) for guarded blocks
  absl::flat_hash_map<void*, std::pair<char*, size_t>> guarded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_GPU_GPU_ALLOCATOR_H_
