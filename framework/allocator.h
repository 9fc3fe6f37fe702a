// Allocators hand out the memory behind Tensor buffers.
//
// Every Tensor buffer comes from an Allocator owned by a device (the CPU
// allocator is a process-wide singleton). Buffers are aligned to
// kTensorAlignment bytes so Eigen and BLAS can use aligned vector loads.
//
//   Allocator* a = CpuAllocator();
//   void* p = a->AllocateRaw(kTensorAlignment, 1024);   // nullptr when out of memory
//   a->DeallocateRaw(p);
//
// Implementations must be thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_ALLOCATOR_H_
#define TOWERFLOW_FRAMEWORK_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace towerflow {

inline constexpr size_t kTensorAlignment = 64;

class Allocator {
 public:
  virtual ~Allocator() = default;

  // A name for messages ("cpu", "gpu_0_caching").
  virtual std::string Name() const = 0;

  // `num_bytes` of memory aligned to `alignment` (a power of two), or nullptr
  // when the memory cannot be had. A request of 0 bytes returns a valid,
  // unique pointer that must still be deallocated.
  virtual void* AllocateRaw(size_t alignment, size_t num_bytes) = 0;

  // REQUIRES: `ptr` came from AllocateRaw on this allocator (or is nullptr).
  virtual void DeallocateRaw(void* ptr) = 0;

  // What the allocator has handed out, where it keeps count (TF's GetStats).
  struct Stats {
    int64_t num_allocs = 0;          // since the process started
    int64_t bytes_in_use = 0;        // now
    int64_t peak_bytes_in_use = 0;   // since the process started
    int64_t largest_alloc_size = 0;  // since the process started
  };
  virtual std::optional<Stats> GetStats() const { return std::nullopt; }
};

// The process-wide host allocator (aligned malloc). Never null; lives for the
// whole process. Keeps Stats: every host tensor of the process is counted,
// whichever session or thread made it.
Allocator* CpuAllocator();

// Limits on the tensors a session's kernels allocate (SessionOptions'
// max_tensor_bytes and host_memory_budget_bytes), checked before memory is
// asked for, so that a graph whose sizes come from its input ends with
// ResourceExhausted naming its node instead of exhausting the machine.
struct MemoryLimits {
  // No single tensor larger.
  int64_t max_tensor_bytes = 0;
  // The process's host tensors (CpuAllocator()'s bytes_in_use) never grow
  // past this through the session's kernels.
  int64_t host_budget_bytes = 0;

  // Half of the memory available when called (the kernel's MemAvailable,
  // within RLIMIT_AS, RLIMIT_DATA and the cgroup's memory.max): the other half is room for what no
  // budget counts (fetched copies, the allocator's cache, the program's
  // own data). Physical memory when that is unknown; 4 GiB when both are.
  static MemoryLimits Default();
  // `max_tensor_bytes` and `host_budget_bytes` of SessionOptions: 0 takes
  // the default; negative values are InvalidArgument.
  static absl::StatusOr<MemoryLimits> FromOptions(int64_t max_tensor_bytes,
                                                  int64_t host_budget_bytes);
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_ALLOCATOR_H_
