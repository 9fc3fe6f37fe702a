#include "framework/allocator.h"

#include <cstdlib>

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
    return std::aligned_alloc(alignment, rounded);
  }

  void DeallocateRaw(void* ptr) override { std::free(ptr); }
};

}  // namespace

Allocator* CpuAllocator() {
  static Allocator* const allocator = new CpuAllocatorImpl();
  return allocator;
}

}  // namespace towerflow
