#include "framework/allocator.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace {

class CpuAllocatorImpl final : public Allocator {
 public:
  std::string Name() const override { return "cpu"; }

  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    // aligned_alloc wants a size that is a multiple of the alignment, and
    // num_bytes == 0 must still give a unique pointer.
    const size_t rounded =
        num_bytes == 0 ? alignment : (num_bytes + alignment - 1) / alignment * alignment;
    if (rounded < num_bytes) return nullptr;  // overflow
    void* p = std::aligned_alloc(alignment, rounded);
    if (p == nullptr) return nullptr;
    // malloc_usable_size on both sides keeps the count exact without a
    // table of sizes.
    const int64_t size = static_cast<int64_t>(malloc_usable_size(p));
    const int64_t in_use = bytes_in_use_.fetch_add(size, std::memory_order_relaxed) + size;
    num_allocs_.fetch_add(1, std::memory_order_relaxed);
    RaiseTo(peak_, in_use);
    RaiseTo(largest_, static_cast<int64_t>(num_bytes));
    return p;
  }

  void DeallocateRaw(void* ptr) override {
    if (ptr == nullptr) return;
    bytes_in_use_.fetch_sub(static_cast<int64_t>(malloc_usable_size(ptr)),
                            std::memory_order_relaxed);
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
  static void RaiseTo(std::atomic<int64_t>& max, int64_t value) {
    int64_t seen = max.load(std::memory_order_relaxed);
    while (seen < value && !max.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
  }

  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};
};

}  // namespace

Allocator* CpuAllocator() {
  static Allocator* const allocator = new CpuAllocatorImpl();
  return allocator;
}

MemoryLimits MemoryLimits::Default() {
  static const int64_t kThreeQuartersOfMemory = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    // Unknown: 8 GiB.
    if (pages <= 0 || page_size <= 0) return int64_t{8} << 30;
    return static_cast<int64_t>(pages) / 4 * 3 * page_size;
  }();
  return MemoryLimits{kThreeQuartersOfMemory, kThreeQuartersOfMemory};
}

absl::StatusOr<MemoryLimits> MemoryLimits::FromOptions(int64_t max_tensor_bytes,
                                                       int64_t host_budget_bytes) {
  if (max_tensor_bytes < 0 || host_budget_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SessionOptions: max_tensor_bytes (", max_tensor_bytes, ") and host_memory_budget_bytes (",
        host_budget_bytes, ") must not be negative (0: the default)"));
  }
  MemoryLimits limits = Default();
  if (max_tensor_bytes > 0) limits.max_tensor_bytes = max_tensor_bytes;
  if (host_budget_bytes > 0) limits.host_budget_bytes = host_budget_bytes;
  return limits;
}

}  // namespace towerflow
