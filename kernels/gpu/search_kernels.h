// Launchers of kernels/gpu/search_kernels.cu.cc: outputs sized by the data: Where, TopK.
// The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_SEARCH_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_SEARCH_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"
#include "kernels/gpu/layout_kernels.h"

namespace towerflow {
namespace gpu {

// Where over `n` elements of `rank` dims: first LaunchWhereCount writes
// each element's output row (the non-zero elements before it) to
// `positions` [n] and their number to `count` (device memory; the caller
// reads it back to size the output), with `scratch` of WhereScratchBytes(n)
// bytes; then LaunchWhereCoords writes the coordinates of each non-zero
// element to its row of `out` [count, rank]. T bool, float, double or
// int64_t. REQUIRES: n < 2^31 (cub's item count).
struct WhereShape {
  int64_t n = 0;
  int rank = 0;
  int64_t dims[kMaxIndexRank];
};
size_t WhereScratchBytes(int64_t n);
template <typename T>
cudaError_t LaunchWhereCount(const T* in, int64_t n, int64_t* positions, int64_t* count,
                             void* scratch, size_t scratch_bytes, cudaStream_t stream);
template <typename T>
cudaError_t LaunchWhereCoords(const T* in, const int64_t* positions, const WhereShape& s,
                              int64_t* out, cudaStream_t stream);

// TopKV2 over `rows` rows of `n`: the k largest of each row, largest first,
// and their int32 columns, with the CPU kernel's order (NaN above every
// number, -0 equal to +0, equal values in column order), by a stable
// segmented radix sort of each row; `scratch` of TopKScratchBytes bytes.
// T float, double or int64_t. REQUIRES: rows * n < 2^31, k <= n.
template <typename T>
size_t TopKScratchBytes(int64_t rows, int64_t n);
template <typename T>
cudaError_t LaunchTopK(const T* in, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices,
                       void* scratch, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_SEARCH_KERNELS_H_
