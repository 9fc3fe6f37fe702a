// CUDA kernels that move elements by index arithmetic (kernels/gpu/launch.h):
// the general gather behind Transpose, Slice, StridedSlice and Tile, the
// general pad behind Pad and PadV2, GatherV2's row gather; with them, 4-D transposes (a filter from
// TF's HWIO to cuDNN's layouts) and pads or crops (explicit padding where
// cuDNN's must be symmetric).
#include "kernels/gpu/layout_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
__global__ void IndexGatherKernel(const T* in, T* out, IndexMap map, int64_t n) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, src = map.base;
    for (int k = map.rank - 1; k >= 0; --k) {
      int64_t c = rest % map.dims[k];
      rest /= map.dims[k];
      if (map.mod[k] > 0) c %= map.mod[k];
      src += c * map.mult[k];
    }
    out[i] = in[src];
  }
}

template <typename T>
__global__ void IndexScatterKernel(const T* in, T* out, IndexMap map, int64_t n) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, dst = map.base;
    for (int k = map.rank - 1; k >= 0; --k) {
      dst += (rest % map.dims[k]) * map.mult[k];
      rest /= map.dims[k];
    }
    out[dst] = in[i];
  }
}

template <typename T>
__global__ void IndexPadKernel(const T* in, T* out, PadMap map, T fill, int64_t n) {
  TW_GRID_LOOP(i, n) {
    int64_t rest = i, src = 0, scale = 1;
    bool inside = true;
    for (int k = map.rank - 1; k >= 0; --k) {
      const int64_t o = rest % map.out_dims[k];
      rest /= map.out_dims[k];
      const int64_t c = o - map.offset[k];
      inside = inside && c >= 0 && c < map.in_dims[k];
      src += c * scale;
      scale *= map.in_dims[k];
    }
    out[i] = inside ? in[src] : fill;
  }
}

template <typename T, typename Index>
__global__ void GatherRowsKernel(const T* params, const Index* indices, T* out, int64_t per_batch,
                                 int64_t limit, int64_t n, int64_t inner, int64_t total) {
  TW_GRID_LOOP(k, total) {
    const int64_t j = k % inner, row = k / inner;  // row = o * n + i
    const int64_t i = row % n, o = row / n;
    const int64_t index = static_cast<int64_t>(indices[(o / per_batch) * n + i]);
    out[k] = params[(o * limit + index) * inner + j];
  }
}

// The unpadded index that padded index j mirrors along one dim.
__device__ int64_t Mirrored(int64_t j, int64_t before, int64_t small, bool reflect) {
  int64_t i = j - before;
  if (i < 0) i = reflect ? -i : -i - 1;
  if (i >= small) i = reflect ? 2 * small - 2 - i : 2 * small - 1 - i;
  return i;
}

template <typename T>
__global__ void MirrorPadKernel(const T* in, T* out, MirrorMap map, int64_t n) {
  TW_GRID_LOOP(o, n) {
    int64_t rest = o, src = 0, stride = 1;
    for (int k = map.rank - 1; k >= 0; --k) {
      const int64_t j = rest % map.big[k];
      rest /= map.big[k];
      src += Mirrored(j, map.before[k], map.small[k], map.reflect) * stride;
      stride *= map.small[k];
    }
    out[o] = in[src];
  }
}

// One thread per unpadded element: along each dim the padded indices that
// mirror its index (itself shifted, and at most one mirror on each side),
// summed over their product, in order.
template <typename T>
__global__ void MirrorPadGradKernel(const T* in, T* out, MirrorMap map, int64_t n) {
  TW_GRID_LOOP(o, n) {
    int64_t hits[kMaxIndexRank][3];
    int count[kMaxIndexRank];
    int64_t rest = o;
    for (int k = map.rank - 1; k >= 0; --k) {
      const int64_t i = rest % map.small[k];
      rest /= map.small[k];
      const int64_t before = map.before[k], small = map.small[k], big = map.big[k];
      // Left mirror: REFLECT j = before - i (i >= 1), SYMMETRIC j = before - 1 - i.
      const int64_t left = map.reflect ? before - i : before - 1 - i;
      // Right mirror: REFLECT j = before + 2 small - 2 - i (i <= small - 2),
      // SYMMETRIC j = before + 2 small - 1 - i.
      const int64_t right = map.reflect ? before + 2 * small - 2 - i : before + 2 * small - 1 - i;
      int c = 0;
      if (left >= 0 && left < before) hits[k][c++] = left;
      hits[k][c++] = before + i;
      if (right >= before + small && right < big) hits[k][c++] = right;
      count[k] = c;
    }
    int pick[kMaxIndexRank] = {};
    T sum = 0;
    while (true) {
      int64_t src = 0;
      for (int k = 0; k < map.rank; ++k) src = src * map.big[k] + hits[k][pick[k]];
      sum += in[src];
      int k = map.rank - 1;
      while (k >= 0 && ++pick[k] == count[k]) pick[k--] = 0;
      if (k < 0) break;
    }
    out[o] = sum;
  }
}

}  // namespace

template <typename T, typename Index>
cudaError_t LaunchGatherRows(const T* params, const Index* indices, T* out, int64_t outer,
                             int64_t per_batch, int64_t limit, int64_t n, int64_t inner,
                             cudaStream_t stream) {
  const int64_t total = outer * n * inner;
  if (total == 0) return cudaSuccess;
  GatherRowsKernel<T, Index><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(
      params, indices, out, per_batch, limit, n, inner, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchIndexGather(const T* in, T* out, const IndexMap& map, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < map.rank; ++k) n *= map.dims[k];
  if (n == 0) return cudaSuccess;
  IndexGatherKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, map, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchIndexScatter(const T* in, T* out, const IndexMap& map, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < map.rank; ++k) n *= map.dims[k];
  if (n == 0) return cudaSuccess;
  IndexScatterKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, map, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchTranspose4(const T* in, const int64_t in_dims[4], const int perm[4], T* out,
                             cudaStream_t stream) {
  int64_t in_strides[4];
  in_strides[3] = 1;
  for (int k = 2; k >= 0; --k) in_strides[k] = in_strides[k + 1] * in_dims[k + 1];
  IndexMap map;
  map.rank = 4;
  for (int k = 0; k < 4; ++k) {
    map.dims[k] = in_dims[perm[k]];
    map.mult[k] = in_strides[perm[k]];
    map.mod[k] = 0;
  }
  return LaunchIndexGather(in, out, map, stream);
}

template <typename T>
cudaError_t LaunchIndexPad(const T* in, T* out, const PadMap& map, T fill, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < map.rank; ++k) n *= map.out_dims[k];
  if (n == 0) return cudaSuccess;
  IndexPadKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, map, fill, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchShift4(const T* in, const int64_t in_dims[4], T* out, const int64_t out_dims[4],
                         const int64_t offset[4], T fill, cudaStream_t stream) {
  PadMap map;
  map.rank = 4;
  for (int k = 0; k < 4; ++k) {
    map.in_dims[k] = in_dims[k];
    map.out_dims[k] = out_dims[k];
    map.offset[k] = offset[k];
  }
  return LaunchIndexPad(in, out, map, fill, stream);
}

template <typename T>
cudaError_t LaunchMirrorPad(const T* in, T* out, const MirrorMap& map, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < map.rank; ++k) n *= map.big[k];
  if (n == 0) return cudaSuccess;
  MirrorPadKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, map, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchMirrorPadGrad(const T* in, T* out, const MirrorMap& map, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < map.rank; ++k) n *= map.small[k];
  if (n == 0) return cudaSuccess;
  MirrorPadGradKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(in, out, map, n);
  return cudaGetLastError();
}

#define TW_INSTANTIATE(T)                                                                \
  template cudaError_t LaunchTranspose4<T>(const T*, const int64_t[4], const int[4], T*, \
                                           cudaStream_t);                                \
  template cudaError_t LaunchShift4<T>(const T*, const int64_t[4], T*, const int64_t[4], \
                                       const int64_t[4], T, cudaStream_t);               \
  template cudaError_t LaunchMirrorPadGrad<T>(const T*, T*, const MirrorMap&, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
#undef TW_INSTANTIATE
// half and bfloat16 convolutions move their data as bits.
template cudaError_t LaunchTranspose4<uint16_t>(const uint16_t*, const int64_t[4], const int[4],
                                                uint16_t*, cudaStream_t);
template cudaError_t LaunchShift4<uint16_t>(const uint16_t*, const int64_t[4], uint16_t*,
                                            const int64_t[4], const int64_t[4], uint16_t,
                                            cudaStream_t);

#define TW_INSTANTIATE_BITS(U)                                                                  \
  template cudaError_t LaunchIndexGather<U>(const U*, U*, const IndexMap&, cudaStream_t);       \
  template cudaError_t LaunchIndexScatter<U>(const U*, U*, const IndexMap&, cudaStream_t);      \
  template cudaError_t LaunchIndexPad<U>(const U*, U*, const PadMap&, U, cudaStream_t);         \
  template cudaError_t LaunchMirrorPad<U>(const U*, U*, const MirrorMap&, cudaStream_t);        \
  template cudaError_t LaunchGatherRows<U, int32_t>(                                            \
      const U*, const int32_t*, U*, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t); \
  template cudaError_t LaunchGatherRows<U, int64_t>(                                            \
      const U*, const int64_t*, U*, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
TW_INSTANTIATE_BITS(uint8_t)
TW_INSTANTIATE_BITS(uint16_t)
TW_INSTANTIATE_BITS(uint32_t)
TW_INSTANTIATE_BITS(uint64_t)
#undef TW_INSTANTIATE_BITS

}  // namespace gpu
}  // namespace towerflow
