// Page-locked (pinned) host memory for the copies between host and GPU: the
// DMA engines read and write it directly, so a copy from it runs
// asynchronously and at full speed, where a copy from pageable memory is
// staged through the driver and blocks the calling thread.
//
// PinnedHostAllocator() is process-wide and lives for the whole process, as
// CpuAllocator() does, because host tensors fetched from a GPU outlive the
// session that made them. It caches freed blocks per rounded size
// (cudaHostAlloc and cudaFreeHost are slow and synchronise the device), and
// never calls CUDA on free, so a block may be freed from a CUDA host
// callback. Memory from it is ordinary host memory to every reader.
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_GPU_PINNED_ALLOCATOR_H_
#define TOWERFLOW_FRAMEWORK_GPU_PINNED_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "framework/allocator.h"

namespace towerflow {
namespace gpu {

// Never null. Falls back to nullptr from AllocateRaw only when the driver
// refuses pinned memory (callers then use pageable memory).
Allocator* PinnedHostAllocator();

struct PinnedStats {
  int64_t driver_allocations = 0;  // cudaHostAlloc calls that succeeded
  int64_t bytes_in_use = 0;
  int64_t bytes_cached = 0;
};
PinnedStats PinnedHostStats();

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_GPU_PINNED_ALLOCATOR_H_
