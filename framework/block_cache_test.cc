#include "framework/block_cache.h"

#include <cstdlib>
#include <set>

#include "gtest/gtest.h"

namespace towerflow {
namespace {

// A backend over malloc that remembers what it handed out.
struct CountingBackend {
  std::set<void*> live;
  int allocations = 0;
  bool exhausted = false;

  BlockCache::Backend Make() {
    return {[this](size_t n) -> void* {
              if (exhausted) return nullptr;
              ++allocations;
              void* p = std::malloc(n);
              live.insert(p);
              return p;
            },
            [this](void* p) {
              live.erase(p);
              std::free(p);
            }};
  }
};

TEST(BlockCacheTest, RoundsSizes) {
  EXPECT_EQ(BlockCache::RoundedSize(0), 512u);
  EXPECT_EQ(BlockCache::RoundedSize(513), 1024u);
  EXPECT_EQ(BlockCache::RoundedSize(1 << 20), 1u << 20);
  EXPECT_EQ(BlockCache::RoundedSize((1 << 20) + 1), 2u << 20);
}

TEST(BlockCacheTest, FreedBlockServesTheNextRequestOfItsSize) {
  CountingBackend backend;
  BlockCache cache(backend.Make());
  void* a = cache.Allocate(1000);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(cache.Deallocate(a));
  EXPECT_EQ(cache.Allocate(700), a);
  EXPECT_EQ(backend.allocations, 1);
  EXPECT_EQ(cache.stats().bytes_in_use, 1024);
  EXPECT_FALSE(cache.Deallocate(&backend));  // not a block of the cache
}

TEST(BlockCacheTest, ReturnsEverythingToTheBackendWhenDestroyed) {
  CountingBackend backend;
  {
    BlockCache cache(backend.Make());
    cache.Deallocate(cache.Allocate(10));
    cache.Allocate(5000);  // still live
    EXPECT_EQ(backend.live.size(), 2u);
  }
  EXPECT_TRUE(backend.live.empty());
}

TEST(BlockCacheTest, ReleasesTheCacheBeforeFailing) {
  CountingBackend backend;
  BlockCache cache(backend.Make());
  cache.Deallocate(cache.Allocate(10));
  backend.exhausted = true;
  EXPECT_EQ(cache.Allocate(5000), nullptr);
  EXPECT_TRUE(backend.live.empty());  // the cached 512 bytes went back
}

TEST(BlockCacheTest, PoolReusesItsOwnBlocksWhileFilling) {
  CountingBackend backend;
  BlockCache cache(backend.Make());
  const BlockCache::PoolId pool = cache.BeginPool();
  ASSERT_GT(pool, 0);
  EXPECT_EQ(cache.BeginPool(), -1);  // one at a time
  void* a = cache.Allocate(100);
  cache.Deallocate(a);
  EXPECT_EQ(cache.Allocate(100), a);  // in stream order, as the replays repeat
  cache.EndPool();
  EXPECT_EQ(cache.PoolBytes(pool), 512);
  EXPECT_EQ(cache.stats().bytes_reserved_in_pools, 512);
}

TEST(BlockCacheTest, PoolBlocksStayReservedUntilReleased) {
  CountingBackend backend;
  BlockCache cache(backend.Make());
  const BlockCache::PoolId pool = cache.BeginPool();
  void* temp = cache.Allocate(100);
  void* kept = cache.Allocate(100);
  cache.Deallocate(temp);
  cache.EndPool();
  // The recording's free temporary is not handed out again.
  void* eager = cache.Allocate(100);
  EXPECT_NE(eager, temp);
  EXPECT_NE(eager, kept);
  cache.ReleasePool(pool);
  EXPECT_EQ(cache.stats().bytes_reserved_in_pools, 0);
  EXPECT_EQ(cache.Allocate(100), temp);
  // A live block of a released pool is cached in the shared lists when freed.
  cache.Deallocate(kept);
  EXPECT_EQ(cache.Allocate(100), kept);
}

TEST(BlockCacheTest, PoolTakesOnlySharedBlocksFreeBeforeItBegan) {
  CountingBackend backend;
  BlockCache cache(backend.Make());
  void* old_free = cache.Allocate(100);
  void* held = cache.Allocate(100);
  cache.Deallocate(old_free);
  const BlockCache::PoolId pool = cache.BeginPool();
  cache.Deallocate(held);  // maybe read by recorded work: not for the pool
  void* first = cache.Allocate(100);
  void* second = cache.Allocate(100);
  EXPECT_EQ(first, old_free);
  EXPECT_NE(second, held);
  cache.EndPool();
  EXPECT_EQ(cache.PoolBytes(pool), 1024);
  EXPECT_EQ(cache.Allocate(100), held);  // cached again once recording ended
}

}  // namespace
}  // namespace towerflow
