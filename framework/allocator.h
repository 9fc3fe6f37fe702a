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
#include <string>

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
};

// The process-wide host allocator (aligned malloc). Never null; lives for the
// whole process.
Allocator* CpuAllocator();

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_ALLOCATOR_H_
