#include "framework/allocator.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace towerflow {
namespace {

// Note [The CPU allocator's cache]
// A training step asks for the same large buffers every step (activations,
// their gradients). glibc serves each large request with a fresh mmap and
// unmaps it on free, so every step faulted its activations in page by page
// (11% of a ResNet-20 step's time in the kernel's page-fault handler). Here
// requests of kCachedMinBytes or more round up to a size class, eight per
// power of two (at most 1/8 wasted), and a released buffer waits on its
// class's free list for the next request of that class: a steady step reuses
// the previous step's buffers and makes no system allocation. Smaller
// requests go to aligned_alloc, whose arenas reuse memory already.
// The free lists hold at most max_cached_bytes (TOWERFLOW_CPU_ALLOCATOR_CACHE_MB,
// default 1/8 of physical memory; 0 turns the cache off); a buffer released
// past that goes back to the system, and an allocation the system refuses
// empties the cache and tries once more. Under AddressSanitizer the cache is
// off, so a use after free still meets ASan's poisoned memory.
constexpr size_t kCachedMinBytes = size_t{256} << 10;

// The size class of a request of at least kCachedMinBytes: rounded up to a
// multiple of 1/8 of its power of two; 0 on overflow.
size_t SizeClass(size_t bytes) {
  const int log2 = 63 - __builtin_clzll(bytes);
  const size_t step = size_t{1} << (log2 - 3);
  const size_t rounded = (bytes + step - 1) / step * step;
  return rounded < bytes ? 0 : rounded;
}

// The machine's physical memory in bytes; 0 when unknown.
int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * page_size;
}

int64_t DefaultMaxCachedBytes() {
#if defined(__SANITIZE_ADDRESS__)
  return 0;
#else
  if (const char* mb = std::getenv("TOWERFLOW_CPU_ALLOCATOR_CACHE_MB")) {
    int64_t value = 0;
    if (absl::SimpleAtoi(mb, &value) && value >= 0) return value << 20;
  }
  const int64_t memory = PhysicalMemoryBytes();
  return memory > 0 ? memory / 8 : int64_t{1} << 30;  // unknown: 1 GiB
#endif
}

class CpuAllocatorImpl final : public Allocator {
 public:
  CpuAllocatorImpl() : max_cached_bytes_(DefaultMaxCachedBytes()) {}

  std::string Name() const override { return "cpu"; }

  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = nullptr;
    int64_t size = 0;
    if (max_cached_bytes_ > 0 && num_bytes >= kCachedMinBytes && alignment <= kTensorAlignment) {
      const size_t size_class = SizeClass(num_bytes);
      if (size_class == 0) return nullptr;
      p = AllocateCached(size_class);
      size = static_cast<int64_t>(size_class);
    } else {
      // aligned_alloc wants a size that is a multiple of the alignment, and
      // num_bytes == 0 must still give a unique pointer.
      const size_t rounded =
          num_bytes == 0 ? alignment : (num_bytes + alignment - 1) / alignment * alignment;
      if (rounded < num_bytes) return nullptr;  // overflow
      p = std::aligned_alloc(alignment, rounded);
      // malloc_usable_size on both sides keeps the count exact.
      if (p != nullptr) size = static_cast<int64_t>(malloc_usable_size(p));
    }
    if (p == nullptr) return nullptr;
    const int64_t in_use = bytes_in_use_.fetch_add(size, std::memory_order_relaxed) + size;
    num_allocs_.fetch_add(1, std::memory_order_relaxed);
    RaiseTo(peak_, in_use);
    RaiseTo(largest_, static_cast<int64_t>(num_bytes));
    return p;
  }

  void DeallocateRaw(void* ptr) override {
    if (ptr == nullptr) return;
    const size_t usable = malloc_usable_size(ptr);
    // A size class's buffer has at least kCachedMinBytes: the small ones,
    // most of the traffic, need no lock.
    if (max_cached_bytes_ > 0 && usable >= kCachedMinBytes) {
      absl::MutexLock lock(&mu_);
      auto it = class_of_.find(ptr);
      if (it != class_of_.end()) {
        const size_t size_class = it->second;
        bytes_in_use_.fetch_sub(static_cast<int64_t>(size_class), std::memory_order_relaxed);
        if (cached_bytes_ + static_cast<int64_t>(size_class) <= max_cached_bytes_) {
          free_[size_class].push_back(ptr);
          cached_bytes_ += static_cast<int64_t>(size_class);
        } else {
          class_of_.erase(it);
          std::free(ptr);
        }
        return;
      }
    }
    bytes_in_use_.fetch_sub(static_cast<int64_t>(usable), std::memory_order_relaxed);
    std::free(ptr);
  }

  std::optional<Stats> GetStats() const override {
    Stats s;
    s.num_allocs = num_allocs_.load(std::memory_order_relaxed);
    s.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
    s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
    s.largest_alloc_size = largest_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  // A buffer of `size_class` bytes, from its free list or the system;
  // nullptr when the system refuses even after the cache is emptied.
  void* AllocateCached(size_t size_class) {
    absl::MutexLock lock(&mu_);
    std::vector<void*>& list = free_[size_class];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      cached_bytes_ -= static_cast<int64_t>(size_class);
      return p;
    }
    void* p = std::aligned_alloc(kTensorAlignment, size_class);
    if (p == nullptr) {
      EmptyCacheLocked();
      p = std::aligned_alloc(kTensorAlignment, size_class);
      if (p == nullptr) return nullptr;
    }
    class_of_[p] = size_class;
    return p;
  }

  void EmptyCacheLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto& [size_class, list] : free_) {
      for (void* p : list) {
        class_of_.erase(p);
        std::free(p);
      }
      list.clear();
    }
    cached_bytes_ = 0;
  }

  static void RaiseTo(std::atomic<int64_t>& max, int64_t value) {
    int64_t seen = max.load(std::memory_order_relaxed);
    while (seen < value && !max.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
  }

  const int64_t max_cached_bytes_;
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};

  absl::Mutex mu_;
  // Every buffer of a size class, handed out or free, and its class.
  absl::flat_hash_map<void*, size_t> class_of_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  int64_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

Allocator* CpuAllocator() {
  static Allocator* const allocator = new CpuAllocatorImpl();
  return allocator;
}

namespace {

// A number of bytes in `path` (a cgroup's memory.max or memory.current);
// nullopt when it is absent or says "max".
std::optional<int64_t> ReadBytesFile(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text)) return std::nullopt;
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) return std::nullopt;
  return value;
}

// The memory this process can still have now: the kernel's MemAvailable,
// no more than its address-space and data limits, nor than its cgroup (a
// container) leaves; 0 when unknown.
int64_t AvailableMemoryBytes() {
  int64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemAvailable:") {
      available = kb * 1024;
      break;
    }
  }
  // An address-space or data limit (ulimit -v / -d) bounds it too.
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit;
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const int64_t cap = static_cast<int64_t>(limit.rlim_cur);
      available = available > 0 ? std::min(available, cap) : cap;
    }
  }
  const std::optional<int64_t> max = ReadBytesFile("/sys/fs/cgroup/memory.max");
  const std::optional<int64_t> current = ReadBytesFile("/sys/fs/cgroup/memory.current");
  if (max.has_value() && current.has_value()) {
    const int64_t left = std::max<int64_t>(0, *max - *current);
    available = available > 0 ? std::min(available, left) : left;
  }
  return available;
}

}  // namespace

MemoryLimits MemoryLimits::Default() {
  // Half of what is available when the session starts: the other half is
  // room for what no budget counts (fetched copies, the allocator's cache,
  // the program's own data).
  int64_t available = AvailableMemoryBytes();
  if (available <= 0) available = PhysicalMemoryBytes();
  const int64_t half = available > 0 ? available / 2 : int64_t{4} << 30;  // unknown: 4 GiB
  return MemoryLimits{half, half};
}

absl::StatusOr<MemoryLimits> MemoryLimits::FromOptions(int64_t max_tensor_bytes,
                                                       int64_t host_budget_bytes) {
  if (max_tensor_bytes < 0 || host_budget_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SessionOptions: max_tensor_bytes (", max_tensor_bytes, ") and host_memory_budget_bytes (",
        host_budget_bytes, ") must not be negative (0: the default)"));
  }
  // The default reads the memory available (files under /proc and /sys):
  // only when an option asks for it.
  MemoryLimits limits{max_tensor_bytes, host_budget_bytes};
  if (max_tensor_bytes == 0 || host_budget_bytes == 0) {
    const MemoryLimits defaults = Default();
    if (max_tensor_bytes == 0) limits.max_tensor_bytes = defaults.max_tensor_bytes;
    if (host_budget_bytes == 0) limits.host_budget_bytes = defaults.host_budget_bytes;
  }
  return limits;
}

}  // namespace towerflow
