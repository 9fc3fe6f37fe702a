// CUDA kernels behind kernels/gpu/launch.h for indexing and images: the
// grouped scatter of ScatterNd and TensorScatterUpdate, SpaceToBatchND /
// BatchToSpaceND, and the resizes with their gradients. Shapes, checks and
// taps are planned on the host (kernels/nd_index.h, kernels/image_plans.h);
// these kernels only move and blend elements. Grid-stride loops over 64-bit
// indices.
#include "kernels/gpu/index_kernels.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
__global__ void ScatterRowsKernel(RowScatter mode, bool scalar, const T* updates,
                                  const int64_t* offsets, const int64_t* starts,
                                  const int64_t* rows, int64_t slice, T* out, int64_t total) {
  TW_GRID_LOOP(i, total) {
    const int64_t g = i / slice, k = i % slice;
    T* dst = out + offsets[g] * slice + k;
    const int64_t begin = starts[g], end = starts[g + 1];
    // Update row j's element k (a scalar's one element).
    const auto update = [&](int64_t j) { return updates[scalar ? 0 : rows[j] * slice + k]; };
    if (mode == RowScatter::kAssign) {
      *dst = update(end - 1);
    } else {
      T acc = *dst;
      for (int64_t j = begin; j < end; ++j) {
        if (mode == RowScatter::kAdd) {
          acc += update(j);
        } else {
          acc -= update(j);
        }
      }
      *dst = acc;
    }
  }
}

// Element i of the deep side (position i / inner, element i % inner): the
// wide side's element it pairs with, or -1 in the padding (crop).
__device__ int64_t WideIndex(const SpaceBatchMap& map, int64_t i) {
  const int64_t e = i % map.inner;
  int64_t rest = i / map.inner;
  int64_t o[kMaxBlockDims];
  for (int k = map.m - 1; k >= 0; --k) {
    o[k] = rest % map.deep[k];
    rest /= map.deep[k];
  }
  int64_t offset = rest / map.wide_batch, block_stride = map.product, wide = rest % map.wide_batch;
  for (int k = 0; k < map.m; ++k) {
    block_stride /= map.block[k];
    const int64_t b = offset / block_stride;
    offset %= block_stride;
    const int64_t s = o[k] * map.block[k] + b - map.pad_before[k];
    if (s < 0 || s >= map.limit[k]) return -1;
    wide = wide * map.limit[k] + s;
  }
  return wide * map.inner + e;
}

template <typename T>
__global__ void SpaceBatchKernel(const T* in, T* out, SpaceBatchMap map, int64_t total) {
  TW_GRID_LOOP(i, total) {
    const int64_t w = WideIndex(map, i);
    if (map.to_batch) {
      out[i] = w < 0 ? T(0) : in[w];
    } else if (w >= 0) {
      out[w] = in[i];
    }
  }
}

// Output element i of a resize: its batch, row, column and channel.
struct Pixel {
  int64_t b, y, x, c;
};
__device__ Pixel PixelOf(const ResizeShape& s, int64_t i) {
  Pixel p;
  p.c = i % s.channels;
  int64_t rest = i / s.channels;
  p.x = rest % s.out_w;
  rest /= s.out_w;
  p.y = rest % s.out_h;
  p.b = rest / s.out_h;
  return p;
}
__device__ int64_t InputAt(const ResizeShape& s, const Pixel& p, int64_t y, int64_t x) {
  return ((p.b * s.in_h + y) * s.in_w + x) * s.channels + p.c;
}

template <typename T>
__global__ void ResizeBilinearKernel(ResizeShape s, const T* in, const int64_t* taps,
                                     const float* lerps, float* out, int64_t total) {
  const int64_t* lower_y = taps;
  const int64_t* upper_y = taps + s.out_h;
  const int64_t* lower_x = taps + 2 * s.out_h;
  const int64_t* upper_x = lower_x + s.out_w;
  TW_GRID_LOOP(i, total) {
    const Pixel p = PixelOf(s, i);
    const float dy = lerps[p.y], dx = lerps[s.out_h + p.x];
    const float tl = static_cast<float>(in[InputAt(s, p, lower_y[p.y], lower_x[p.x])]);
    const float tr = static_cast<float>(in[InputAt(s, p, lower_y[p.y], upper_x[p.x])]);
    const float bl = static_cast<float>(in[InputAt(s, p, upper_y[p.y], lower_x[p.x])]);
    const float br = static_cast<float>(in[InputAt(s, p, upper_y[p.y], upper_x[p.x])]);
    const float t = tl + (tr - tl) * dx, u = bl + (br - bl) * dx;
    out[i] = t + (u - t) * dy;
  }
}

template <typename T>
__global__ void ResizeBilinearGradKernel(ResizeShape s, const float* grads, const int64_t* taps,
                                         const float* lerps, T* dx, int64_t total) {
  const int64_t* lower_y = taps;
  const int64_t* upper_y = taps + s.out_h;
  const int64_t* lower_x = taps + 2 * s.out_h;
  const int64_t* upper_x = lower_x + s.out_w;
  TW_GRID_LOOP(i, total) {
    const Pixel p = PixelOf(s, i);
    const float wy = lerps[p.y], wx = lerps[s.out_h + p.x], v = grads[i];
    atomicAdd(dx + InputAt(s, p, lower_y[p.y], lower_x[p.x]),
              static_cast<T>(v * (1 - wy) * (1 - wx)));
    atomicAdd(dx + InputAt(s, p, lower_y[p.y], upper_x[p.x]), static_cast<T>(v * (1 - wy) * wx));
    atomicAdd(dx + InputAt(s, p, upper_y[p.y], lower_x[p.x]), static_cast<T>(v * wy * (1 - wx)));
    atomicAdd(dx + InputAt(s, p, upper_y[p.y], upper_x[p.x]), static_cast<T>(v * wy * wx));
  }
}

template <typename T>
__global__ void ResizeNearestKernel(ResizeShape s, const T* in, const int64_t* taps, T* out,
                                    int64_t total) {
  TW_GRID_LOOP(i, total) {
    const Pixel p = PixelOf(s, i);
    out[i] = in[InputAt(s, p, taps[p.y], taps[s.out_h + p.x])];
  }
}

template <typename T>
__global__ void ResizeNearestGradKernel(ResizeShape s, const T* grads, const int64_t* taps, T* dx,
                                        int64_t total) {
  TW_GRID_LOOP(i, total) {
    const Pixel p = PixelOf(s, i);
    atomicAdd(dx + InputAt(s, p, taps[p.y], taps[s.out_h + p.x]), grads[i]);
  }
}

int64_t OutputElements(const ResizeShape& s) { return s.batch * s.out_h * s.out_w * s.channels; }

}  // namespace

template <typename T>
cudaError_t LaunchScatterRows(RowScatter mode, bool scalar, const T* updates, const int64_t* plan,
                              int64_t groups, int64_t n, int64_t slice, T* out,
                              cudaStream_t stream) {
  const int64_t total = groups * slice;
  if (total == 0) return cudaSuccess;
  ScatterRowsKernel<T><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(
      mode, scalar, updates, plan, plan + groups, plan + 2 * groups + 1, slice, out, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSpaceBatch(const T* in, T* out, const SpaceBatchMap& map, int64_t positions,
                             cudaStream_t stream) {
  const int64_t total = positions * map.inner;
  if (total == 0) return cudaSuccess;
  SpaceBatchKernel<T><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(in, out, map, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchResizeBilinear(const ResizeShape& s, const T* in, const int64_t* taps,
                                 const float* lerps, float* out, cudaStream_t stream) {
  const int64_t total = OutputElements(s);
  if (total == 0) return cudaSuccess;
  ResizeBilinearKernel<T>
      <<<GridSize(total), kThreadsPerBlock, 0, stream>>>(s, in, taps, lerps, out, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchResizeBilinearGrad(const ResizeShape& s, const float* grads, const int64_t* taps,
                                     const float* lerps, T* dx, cudaStream_t stream) {
  const int64_t total = OutputElements(s);
  if (total == 0) return cudaSuccess;
  ResizeBilinearGradKernel<T>
      <<<GridSize(total), kThreadsPerBlock, 0, stream>>>(s, grads, taps, lerps, dx, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchResizeNearest(const ResizeShape& s, const T* in, const int64_t* taps, T* out,
                                cudaStream_t stream) {
  const int64_t total = OutputElements(s);
  if (total == 0) return cudaSuccess;
  ResizeNearestKernel<T><<<GridSize(total), kThreadsPerBlock, 0, stream>>>(s, in, taps, out, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchResizeNearestGrad(const ResizeShape& s, const T* grads, const int64_t* taps,
                                    T* dx, cudaStream_t stream) {
  const int64_t total = OutputElements(s);
  if (total == 0) return cudaSuccess;
  ResizeNearestGradKernel<T>
      <<<GridSize(total), kThreadsPerBlock, 0, stream>>>(s, grads, taps, dx, total);
  return cudaGetLastError();
}

#define TW_INSTANTIATE_BYTES(T)                                                                  \
  template cudaError_t LaunchScatterRows<T>(RowScatter, bool, const T*, const int64_t*, int64_t, \
                                            int64_t, int64_t, T*, cudaStream_t);                 \
  template cudaError_t LaunchSpaceBatch<T>(const T*, T*, const SpaceBatchMap&, int64_t,          \
                                           cudaStream_t);                                        \
  template cudaError_t LaunchResizeNearest<T>(const ResizeShape&, const T*, const int64_t*, T*,  \
                                              cudaStream_t);
TW_INSTANTIATE_BYTES(uint8_t)
TW_INSTANTIATE_BYTES(uint16_t)
TW_INSTANTIATE_BYTES(uint32_t)
TW_INSTANTIATE_BYTES(uint64_t)
#undef TW_INSTANTIATE_BYTES

#define TW_INSTANTIATE_FLOATING(T)                                                               \
  template cudaError_t LaunchScatterRows<T>(RowScatter, bool, const T*, const int64_t*, int64_t, \
                                            int64_t, int64_t, T*, cudaStream_t);                 \
  template cudaError_t LaunchResizeBilinear<T>(const ResizeShape&, const T*, const int64_t*,     \
                                               const float*, float*, cudaStream_t);              \
  template cudaError_t LaunchResizeBilinearGrad<T>(                                              \
      const ResizeShape&, const float*, const int64_t*, const float*, T*, cudaStream_t);         \
  template cudaError_t LaunchResizeNearestGrad<T>(const ResizeShape&, const T*, const int64_t*,  \
                                                  T*, cudaStream_t);
TW_INSTANTIATE_FLOATING(float)
TW_INSTANTIATE_FLOATING(double)
#undef TW_INSTANTIATE_FLOATING
template cudaError_t LaunchScatterRows<int64_t>(RowScatter, bool, const int64_t*, const int64_t*,
                                                int64_t, int64_t, int64_t, int64_t*, cudaStream_t);

}  // namespace gpu
}  // namespace towerflow
