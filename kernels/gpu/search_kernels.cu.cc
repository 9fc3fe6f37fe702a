// CUDA kernels behind kernels/gpu/launch.h for the ops whose output depends
// on the data: Where (a flag per element, cub's exclusive scan for each
// element's output row, then the coordinates) and TopKV2 (cub's stable
// segmented radix sort, descending, of keys that order as the CPU kernel's
// comparison does, then the first k of each row).
#include "kernels/gpu/search_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <type_traits>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

// Rounds a scratch offset up to 256 bytes, the alignment cub wants.
size_t Aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

template <typename T>
__global__ void NonZeroKernel(const T* in, int64_t* flags, int64_t n) {
  TW_GRID_LOOP(i, n) { flags[i] = in[i] != T(0) ? 1 : 0; }
}

__global__ void CountKernel(const int64_t* flags, const int64_t* positions, int64_t n,
                            int64_t* count) {
  *count = positions[n - 1] + flags[n - 1];
}

template <typename T>
__global__ void CoordsKernel(const T* in, const int64_t* positions, WhereShape s, int64_t* out) {
  TW_GRID_LOOP(i, s.n) {
    if (in[i] == T(0)) continue;
    int64_t* row = out + positions[i] * s.rank;
    int64_t rest = i;
    for (int d = s.rank - 1; d >= 0; --d) {
      row[d] = rest % s.dims[d];
      rest /= s.dims[d];
    }
  }
}

// The sort key of x: an unsigned integer whose order is the CPU kernel's
// (kernels/cpu/topk_ops.cc): NaN above every number, -0 equal to +0.
template <typename T>
struct Key;
template <>
struct Key<float> {
  using type = uint32_t;
  __device__ static uint32_t Of(float x) {
    if (isnan(x)) return 0xffffffffu;
    if (x == 0.0f) x = 0.0f;
    const uint32_t bits = __float_as_uint(x);
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  }
};
template <>
struct Key<double> {
  using type = uint64_t;
  __device__ static uint64_t Of(double x) {
    if (isnan(x)) return ~uint64_t{0};
    if (x == 0.0) x = 0.0;
    const uint64_t bits = static_cast<uint64_t>(__double_as_longlong(x));
    const uint64_t sign = uint64_t{1} << 63;
    return (bits & sign) ? ~bits : bits | sign;
  }
};
template <>
struct Key<int64_t> {
  using type = uint64_t;
  __device__ static uint64_t Of(int64_t x) {
    return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
  }
};

template <typename T>
__global__ void TopKPrepareKernel(const T* in, int64_t n, int64_t total,
                                  typename Key<T>::type* keys, int32_t* columns, int* offsets,
                                  int64_t rows) {
  TW_GRID_LOOP(i, total) {
    keys[i] = Key<T>::Of(in[i]);
    columns[i] = static_cast<int32_t>(i % n);
    if (i % n == 0) offsets[i / n] = static_cast<int>(i);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) offsets[rows] = static_cast<int>(total);
}

template <typename T>
__global__ void TopKTakeKernel(const T* in, const int32_t* sorted, int64_t n, int64_t k,
                               int64_t total, T* values, int32_t* indices) {
  TW_GRID_LOOP(i, total) {  // total = rows * k
    const int64_t r = i / k, j = i % k;
    const int32_t column = sorted[r * n + j];
    indices[i] = column;
    values[i] = in[r * n + column];
  }
}

// The scratch of a top-k: keys and columns before and after the sort, the
// row offsets, then cub's own.
template <typename T>
struct TopKLayout {
  using K = typename Key<T>::type;
  size_t keys_in, keys_out, columns_in, columns_out, offsets, cub, cub_bytes, total;
  TopKLayout(int64_t rows, int64_t n) {
    const size_t items = static_cast<size_t>(rows * n);
    keys_in = 0;
    keys_out = keys_in + Aligned(items * sizeof(K));
    columns_in = keys_out + Aligned(items * sizeof(K));
    columns_out = columns_in + Aligned(items * sizeof(int32_t));
    offsets = columns_out + Aligned(items * sizeof(int32_t));
    cub = offsets + Aligned(static_cast<size_t>(rows + 1) * sizeof(int));
    cub_bytes = 0;
    cub::DeviceSegmentedRadixSort::SortPairsDescending(
        nullptr, cub_bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
        static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
        static_cast<int>(items), static_cast<int>(rows), static_cast<const int*>(nullptr),
        static_cast<const int*>(nullptr));
    total = cub + Aligned(cub_bytes);
  }
};

}  // namespace

size_t WhereScratchBytes(int64_t n) {
  size_t cub_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), static_cast<int>(n));
  return Aligned(static_cast<size_t>(n) * sizeof(int64_t)) + Aligned(cub_bytes);
}

template <typename T>
cudaError_t LaunchWhereCount(const T* in, int64_t n, int64_t* positions, int64_t* count,
                             void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (n == 0) return cudaMemsetAsync(count, 0, sizeof(int64_t), stream);
  auto* flags = static_cast<int64_t*>(scratch);
  const size_t flag_bytes = Aligned(static_cast<size_t>(n) * sizeof(int64_t));
  NonZeroKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, flags, n);
  size_t cub_bytes = scratch_bytes - flag_bytes;
  cudaError_t error =
      cub::DeviceScan::ExclusiveSum(static_cast<char*>(scratch) + flag_bytes, cub_bytes, flags,
                                    positions, static_cast<int>(n), stream);
  if (error != cudaSuccess) return error;
  CountKernel<<<1, 1, 0, stream>>>(flags, positions, n, count);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchWhereCoords(const T* in, const int64_t* positions, const WhereShape& s,
                              int64_t* out, cudaStream_t stream) {
  if (s.n == 0) return cudaSuccess;
  CoordsKernel<T><<<GridSize(s.n), kThreadsPerBlock, 0, stream>>>(in, positions, s, out);
  return cudaGetLastError();
}

template <typename T>
size_t TopKScratchBytes(int64_t rows, int64_t n) {
  return TopKLayout<T>(rows, n).total;
}

template <typename T>
cudaError_t LaunchTopK(const T* in, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices,
                       void* scratch, cudaStream_t stream) {
  const int64_t total = rows * n;
  if (total == 0 || k == 0) return cudaSuccess;
  using K = typename Key<T>::type;
  const TopKLayout<T> layout(rows, n);
  char* base = static_cast<char*>(scratch);
  K* keys_in = reinterpret_cast<K*>(base + layout.keys_in);
  K* keys_out = reinterpret_cast<K*>(base + layout.keys_out);
  int32_t* columns_in = reinterpret_cast<int32_t*>(base + layout.columns_in);
  int32_t* columns_out = reinterpret_cast<int32_t*>(base + layout.columns_out);
  int* offsets = reinterpret_cast<int*>(base + layout.offsets);
  TopKPrepareKernel<T><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(in, n, total, keys_in,
                                                                         columns_in, offsets, rows);
  size_t cub_bytes = layout.cub_bytes;
  cudaError_t error = cub::DeviceSegmentedRadixSort::SortPairsDescending(
      base + layout.cub, cub_bytes, keys_in, keys_out, columns_in, columns_out,
      static_cast<int>(total), static_cast<int>(rows), offsets, offsets + 1, 0,
      static_cast<int>(sizeof(K) * 8), stream);
  if (error != cudaSuccess) return error;
  TopKTakeKernel<T><<<GridSize(rows * k), kThreadsPerBlock, 0, stream>>>(in, columns_out, n, k,
                                                                         rows * k, values, indices);
  return cudaGetLastError();
}

#define TW_INSTANTIATE_WHERE(T)                                                                    \
  template cudaError_t LaunchWhereCount<T>(const T*, int64_t, int64_t*, int64_t*, void*, size_t,   \
                                           cudaStream_t);                                          \
  template cudaError_t LaunchWhereCoords<T>(const T*, const int64_t*, const WhereShape&, int64_t*, \
                                            cudaStream_t);
TW_INSTANTIATE_WHERE(bool)
TW_INSTANTIATE_WHERE(float)
TW_INSTANTIATE_WHERE(double)
TW_INSTANTIATE_WHERE(int64_t)
#undef TW_INSTANTIATE_WHERE

#define TW_INSTANTIATE_TOPK(T)                                                                 \
  template size_t TopKScratchBytes<T>(int64_t, int64_t);                                       \
  template cudaError_t LaunchTopK<T>(const T*, int64_t, int64_t, int64_t, T*, int32_t*, void*, \
                                     cudaStream_t);
TW_INSTANTIATE_TOPK(float)
TW_INSTANTIATE_TOPK(double)
TW_INSTANTIATE_TOPK(int64_t)
#undef TW_INSTANTIATE_TOPK

}  // namespace gpu
}  // namespace towerflow
