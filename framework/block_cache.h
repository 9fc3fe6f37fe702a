// BlockCache: the bookkeeping of a caching device allocator, apart from the
// device. Blocks come from a backend (cudaMalloc / cudaFree on a GPU) only
// when the cache has no free block of the rounded size, so steady-state
// steps ask the backend for nothing. Sizes round up to 512 bytes, and to a
// power of two above 1 MiB; a freed block goes back to the free list of its
// size. The device runs its work in one stream order, so a block freed by
// work enqueued earlier is safe for work enqueued later (stream-ordered
// reuse), which is the only reuse the cache makes.
//
// Private pools (Note [Private pools]) serve a recorded step
// (framework/step_capture.h): between BeginPool and EndPool every
// allocation is served into the pool, whose blocks then stay reserved for
// the recording, free or not, until ReleasePool.
//
//   BlockCache cache({[](size_t n) { return MallocOnDevice(n); }, FreeOnDevice});
//   void* p = cache.Allocate(1000);   // a 1024-byte block from the backend
//   cache.Deallocate(p);              // cached
//   void* q = cache.Allocate(700);    // the same block, no backend call
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_BLOCK_CACHE_H_
#define TOWERFLOW_FRAMEWORK_BLOCK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace towerflow {

class BlockCache {
 public:
  struct Backend {
    // `num_bytes` of device memory, or nullptr when there is none to give.
    std::function<void*(size_t num_bytes)> allocate;
    std::function<void(void* block)> free;
  };
  explicit BlockCache(Backend backend);
  // Returns every block, live or free, to the backend.
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A block of at least `num_bytes` (RoundedSize), or nullptr when the
  // backend has none even after the free blocks outside pools went back to
  // it.
  void* Allocate(size_t num_bytes);
  // Returns whether `ptr` was a live block of this cache (it is cached
  // again); false for any other pointer, which is left alone.
  bool Deallocate(void* ptr);
  // Whether `ptr` is a live block of this cache.
  bool Owns(const void* ptr) const;

  using PoolId = int64_t;
  // Until EndPool, every allocation is served into a new pool: from its own
  // free blocks, else from the shared free blocks that were free before
  // BeginPool, else from the backend. Blocks of the shared cache freed
  // meanwhile are cached again only at EndPool. -1 when a pool is filling
  // already.
  PoolId BeginPool();
  void EndPool();
  // The pool's free blocks go back to the shared cache now, its live ones
  // when they are freed. REQUIRES: the work that used them was enqueued
  // before this call (stream order keeps it safe).
  void ReleasePool(PoolId pool);

  struct Stats {
    int64_t backend_allocations = 0;  // backend blocks taken, ever
    int64_t bytes_in_use = 0;         // rounded sizes of live blocks
    int64_t bytes_cached = 0;         // free blocks of the shared cache
    int64_t bytes_reserved_in_pools = 0;  // blocks of unreleased pools, live or free
  };
  Stats stats() const;
  // Bytes of `pool`'s blocks, live or free.
  int64_t PoolBytes(PoolId pool) const;

  // The size a request is served with.
  static size_t RoundedSize(size_t num_bytes);

 private:
  static constexpr PoolId kShared = 0;
  struct Block {
    size_t size = 0;
    PoolId pool = kShared;
  };
  using FreeLists = absl::flat_hash_map<size_t, std::vector<void*>>;

  void* TakeFree(FreeLists* lists, size_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseSharedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Backend backend_;
  mutable absl::Mutex mu_;
  FreeLists shared_free_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<void*, Block> live_ ABSL_GUARDED_BY(mu_);
  // Unreleased pools: their free blocks, and their bytes live or free.
  absl::flat_hash_map<PoolId, FreeLists> pool_free_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PoolId, int64_t> pool_bytes_ ABSL_GUARDED_BY(mu_);
  PoolId filling_ ABSL_GUARDED_BY(mu_) = kShared;  // the pool being filled, or kShared
  PoolId next_pool_ ABSL_GUARDED_BY(mu_) = 1;
  // Shared blocks freed while a pool fills: cached at EndPool.
  std::vector<std::pair<void*, size_t>> deferred_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_BLOCK_CACHE_H_
