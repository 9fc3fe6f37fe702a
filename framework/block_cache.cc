#include "framework/block_cache.h"

#include <algorithm>
#include <utility>

namespace towerflow {
namespace {

constexpr size_t kMinBlock = 512;             // cudaMalloc aligns to 256 already
constexpr size_t kPowerOfTwoAbove = 1 << 20;  // larger sizes round to powers of two

}  // namespace

// Note [Private pools]
// A recorded step (a CUDA graph) names device addresses: every replay writes
// the temporaries and outputs of the step into the very blocks the recording
// run was given. So from the moment recording starts until the recording is
// dropped, no one else may be handed those blocks, free on the host or not
// (PyTorch's graph-private memory pools; Note [Interaction with CUDA graph
// capture] in c10/cuda/CUDACachingAllocator.cpp).
//  * While a pool fills (recording), every allocation goes into it. A block
//    freed by the recording run returns to the pool's own free list and
//    serves a later allocation of the same run: in stream order that is
//    exactly the reuse the replays repeat.
//  * A pool may take a shared free block, but only one that was free before
//    recording began: what the recorded work reads must not be handed over.
//    Shared blocks freed while the pool fills wait in `deferred_` until the
//    end of the recording.
//  * Once recording ends the pool holds its blocks, free or live, until it
//    is released; its live blocks (fetched outputs, a variable's buffer)
//    then go back to the shared cache when they are freed.
// The device has one stream, so nothing else orders reuse: a block released
// after a replay was enqueued is only reused by work enqueued after it.

BlockCache::BlockCache(Backend backend) : backend_(std::move(backend)) {}

BlockCache::~BlockCache() {
  absl::MutexLock lock(&mu_);
  ReleaseSharedLocked();
  for (const auto& [block, size] : deferred_) backend_.free(block);
  for (auto& [pool, lists] : pool_free_) {
    for (auto& [size, blocks] : lists) {
      for (void* block : blocks) backend_.free(block);
    }
  }
  for (const auto& [ptr, block] : live_) backend_.free(ptr);  // leaked tensors: the device goes away
}

size_t BlockCache::RoundedSize(size_t num_bytes) {
  if (num_bytes <= kPowerOfTwoAbove) {
    return std::max(kMinBlock, (num_bytes + kMinBlock - 1) / kMinBlock * kMinBlock);
  }
  size_t size = kPowerOfTwoAbove;
  while (size < num_bytes) size <<= 1;
  return size;
}

void* BlockCache::TakeFree(FreeLists* lists, size_t size) {
  auto it = lists->find(size);
  if (it == lists->end() || it->second.empty()) return nullptr;
  void* ptr = it->second.back();
  it->second.pop_back();
  return ptr;
}

void* BlockCache::Allocate(size_t num_bytes) {
  const size_t size = RoundedSize(num_bytes);
  absl::MutexLock lock(&mu_);
  const PoolId pool = filling_;
  void* ptr = pool != kShared ? TakeFree(&pool_free_[pool], size) : nullptr;
  const bool pool_block = ptr != nullptr;
  if (ptr == nullptr) {
    ptr = TakeFree(&shared_free_, size);
    if (ptr != nullptr) stats_.bytes_cached -= size;
  }
  if (ptr == nullptr) {
    ptr = backend_.allocate(size);
    if (ptr == nullptr) {
      ReleaseSharedLocked();
      ptr = backend_.allocate(size);
      if (ptr == nullptr) return nullptr;
    }
    ++stats_.backend_allocations;
  }
  if (pool != kShared && !pool_block) {  // the pool takes the block over
    pool_bytes_[pool] += size;
    stats_.bytes_reserved_in_pools += size;
  }
  live_[ptr] = Block{size, pool};
  stats_.bytes_in_use += size;
  return ptr;
}

bool BlockCache::Deallocate(void* ptr) {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  const Block block = it->second;
  live_.erase(it);
  stats_.bytes_in_use -= block.size;
  if (block.pool != kShared && pool_free_.contains(block.pool)) {
    pool_free_[block.pool][block.size].push_back(ptr);
  } else if (filling_ != kShared) {
    deferred_.push_back({ptr, block.size});
    stats_.bytes_cached += block.size;
  } else {
    shared_free_[block.size].push_back(ptr);
    stats_.bytes_cached += block.size;
  }
  return true;
}

bool BlockCache::Owns(const void* ptr) const {
  absl::MutexLock lock(&mu_);
  return live_.contains(const_cast<void*>(ptr));
}

BlockCache::PoolId BlockCache::BeginPool() {
  absl::MutexLock lock(&mu_);
  if (filling_ != kShared) return -1;
  filling_ = next_pool_++;
  pool_free_[filling_];
  pool_bytes_[filling_] = 0;
  return filling_;
}

void BlockCache::EndPool() {
  absl::MutexLock lock(&mu_);
  filling_ = kShared;
  for (const auto& [ptr, size] : deferred_) shared_free_[size].push_back(ptr);
  deferred_.clear();
}

void BlockCache::ReleasePool(PoolId pool) {
  absl::MutexLock lock(&mu_);
  auto it = pool_free_.find(pool);
  if (it == pool_free_.end()) return;
  for (auto& [size, blocks] : it->second) {
    for (void* block : blocks) shared_free_[size].push_back(block);
    stats_.bytes_cached += static_cast<int64_t>(size * blocks.size());
  }
  pool_free_.erase(it);
  stats_.bytes_reserved_in_pools -= pool_bytes_[pool];
  pool_bytes_.erase(pool);
  for (auto& [ptr, block] : live_) {
    if (block.pool == pool) block.pool = kShared;
  }
}

void BlockCache::ReleaseSharedLocked() {
  for (auto& [size, blocks] : shared_free_) {
    for (void* block : blocks) backend_.free(block);
    stats_.bytes_cached -= static_cast<int64_t>(size * blocks.size());
    blocks.clear();
  }
}

BlockCache::Stats BlockCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

int64_t BlockCache::PoolBytes(PoolId pool) const {
  absl::MutexLock lock(&mu_);
  auto it = pool_bytes_.find(pool);
  return it == pool_bytes_.end() ? 0 : it->second;
}

}  // namespace towerflow
