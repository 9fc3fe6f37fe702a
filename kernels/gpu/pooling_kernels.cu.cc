// CUDA pooling kernels (kernels/gpu/launch.h) with TF's exact window rules
// for any padding, NHWC or NCHW. They are our own rather than cuDNN's:
// cuDNN pads symmetrically, while TF's SAME padding puts the odd row at the
// bottom (a 3x3 stride-2 pool of 24x24 pads 0 above and 1 below), and an
// average over padded zeros is not TF's average over the window's inside.
// TF itself runs NHWC max pooling on a kernel of its own for the same reason.
#include "kernels/gpu/pooling_kernels.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

struct Pixel {
  int64_t n, h, w, c;
};

// Element i of a [batch, h, w, channels] tensor (or [batch, channels, h,
// w]) as (n, h, w, c).
__device__ Pixel Unflatten(const PoolShape& p, int64_t i, int64_t h, int64_t w) {
  Pixel x;
  if (p.nchw) {
    x.w = i % w;
    i /= w;
    x.h = i % h;
    i /= h;
    x.c = i % p.channels;
    x.n = i / p.channels;
  } else {
    x.c = i % p.channels;
    i /= p.channels;
    x.w = i % w;
    i /= w;
    x.h = i % h;
    x.n = i / h;
  }
  return x;
}
__device__ Pixel OutputPixel(const PoolShape& p, int64_t i) {
  return Unflatten(p, i, p.out_h, p.out_w);
}
__device__ Pixel InputPixel(const PoolShape& p, int64_t i) {
  return Unflatten(p, i, p.in_h, p.in_w);
}

__device__ int64_t InputIndex(const PoolShape& p, int64_t n, int64_t h, int64_t w, int64_t c) {
  return p.nchw ? ((n * p.channels + c) * p.in_h + h) * p.in_w + w
                : ((n * p.in_h + h) * p.in_w + w) * p.channels + c;
}

__device__ int64_t OutputIndex(const PoolShape& p, int64_t n, int64_t h, int64_t w, int64_t c) {
  return p.nchw ? ((n * p.channels + c) * p.out_h + h) * p.out_w + w
                : ((n * p.out_h + h) * p.out_w + w) * p.channels + c;
}

// The window of output pixel (oh, ow), clipped to the input: rows [h0, h1),
// columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};
__device__ Window WindowOf(const PoolShape& p, int64_t oh, int64_t ow) {
  const int64_t hs = oh * p.stride_h - p.pad_top, ws = ow * p.stride_w - p.pad_left;
  Window win;
  win.h0 = hs > 0 ? hs : 0;
  win.w0 = ws > 0 ? ws : 0;
  win.h1 = hs + p.k_h < p.in_h ? hs + p.k_h : p.in_h;
  win.w1 = ws + p.k_w < p.in_w ? ws + p.k_w : p.in_w;
  return win;
}

// The window's maximum (-inf when it has none above -inf) and the position
// of its first holder in row-major scan order (the window's first element
// when none beats -inf), as the CPU kernels; -1 for an empty window.
// The elements are read as DeviceValue<T> says (the 16-bit floats widened
// to float: maxima compared, sums added, in float32) and each result
// rounded once.
template <typename T>
__device__ int64_t ArgMaxOfWindow(const PoolShape& p, const T* in, const Pixel& o,
                                  MathOf<T>* best) {
  const Window win = WindowOf(p, o.h, o.w);
  *best = MathOf<T>(-INFINITY);
  if (win.h0 >= win.h1 || win.w0 >= win.w1) return -1;
  int64_t arg = InputIndex(p, o.n, win.h0, win.w0, o.c);
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) {
      const int64_t j = InputIndex(p, o.n, h, w, o.c);
      const MathOf<T> v = DeviceValue<T>::Widen(in[j]);
      if (v > *best) {
        *best = v;
        arg = j;
      }
    }
  }
  return arg;
}

template <typename T>
__global__ void MaxPoolKernel(PoolShape p, const T* in, T* out, int64_t n) {
  TW_GRID_LOOP(i, n) {
    MathOf<T> best;
    ArgMaxOfWindow(p, in, OutputPixel(p, i), &best);
    out[i] = DeviceValue<T>::Narrow(best);
  }
}

template <typename T>
__global__ void AvgPoolKernel(PoolShape p, const T* in, T* out, int64_t n) {
  using M = MathOf<T>;
  TW_GRID_LOOP(i, n) {
    const Pixel o = OutputPixel(p, i);
    const Window win = WindowOf(p, o.h, o.w);
    M sum = M(0);
    for (int64_t h = win.h0; h < win.h1; ++h) {
      for (int64_t w = win.w0; w < win.w1; ++w) {
        sum += DeviceValue<T>::Widen(in[InputIndex(p, o.n, h, w, o.c)]);
      }
    }
    out[i] = DeviceValue<T>::Narrow(sum / M((win.h1 - win.h0) * (win.w1 - win.w0)));
  }
}

template <typename T>
__global__ void ZeroKernel(T* out, int64_t n) {
  TW_GRID_LOOP(i, n) { out[i] = T(0); }
}

template <typename T>
__global__ void MaxPoolGradKernel(PoolShape p, const T* in, const T* dy, T* dx, int64_t n) {
  TW_GRID_LOOP(i, n) {
    T best;
    const int64_t arg = ArgMaxOfWindow(p, in, OutputPixel(p, i), &best);
    if (arg >= 0) atomicAdd(dx + arg, dy[i]);
  }
}

// The outputs whose windows hold input pixel (h, w): oh in
// [ceil((h + pad_top - k_h + 1) / s), floor((h + pad_top) / s)], and so ow.
struct Windows {
  int64_t oh0, oh1, ow0, ow1;
};
__device__ Windows WindowsHolding(const PoolShape& p, const Pixel& x) {
  const int64_t ph = x.h + p.pad_top, pw = x.w + p.pad_left;
  Windows r;
  r.oh0 = ph - p.k_h + 1 > 0 ? (ph - p.k_h + 1 + p.stride_h - 1) / p.stride_h : 0;
  r.ow0 = pw - p.k_w + 1 > 0 ? (pw - p.k_w + 1 + p.stride_w - 1) / p.stride_w : 0;
  r.oh1 = ph / p.stride_h + 1;
  r.ow1 = pw / p.stride_w + 1;
  if (r.oh1 > p.out_h) r.oh1 = p.out_h;
  if (r.ow1 > p.out_w) r.ow1 = p.out_w;
  return r;
}

// MaxPoolGrad one thread per input element: the sum (in float32 for a
// 16-bit type) of the gradients of the windows whose maximum it is, in
// window order, rounded once. 16-bit types always (16-bit atomics would
// round at every addition), the others when asked to be deterministic.
template <typename T>
__global__ void MaxPoolGradGatherKernel(PoolShape p, const T* in, const T* dy, T* dx, int64_t n) {
  using M = MathOf<T>;
  TW_GRID_LOOP(i, n) {
    const Pixel x = InputPixel(p, i);
    const Windows r = WindowsHolding(p, x);
    M sum = M(0);
    for (int64_t oh = r.oh0; oh < r.oh1; ++oh) {
      for (int64_t ow = r.ow0; ow < r.ow1; ++ow) {
        M best;
        if (ArgMaxOfWindow(p, in, Pixel{x.n, oh, ow, x.c}, &best) == i) {
          sum += DeviceValue<T>::Widen(dy[OutputIndex(p, x.n, oh, ow, x.c)]);
        }
      }
    }
    dx[i] = DeviceValue<T>::Narrow(sum);
  }
}

// One thread per input element.
template <typename T>
__global__ void AvgPoolGradKernel(PoolShape p, const T* dy, T* dx, int64_t n) {
  using M = MathOf<T>;
  TW_GRID_LOOP(i, n) {
    const Pixel x = InputPixel(p, i);
    const Windows r = WindowsHolding(p, x);
    M sum = M(0);
    for (int64_t oh = r.oh0; oh < r.oh1; ++oh) {
      for (int64_t ow = r.ow0; ow < r.ow1; ++ow) {
        const Window win = WindowOf(p, oh, ow);
        sum += DeviceValue<T>::Widen(dy[OutputIndex(p, x.n, oh, ow, x.c)]) /
               M((win.h1 - win.h0) * (win.w1 - win.w0));
      }
    }
    dx[i] = DeviceValue<T>::Narrow(sum);
  }
}

int64_t OutputCount(const PoolShape& p) { return p.batch * p.out_h * p.out_w * p.channels; }
int64_t InputCount(const PoolShape& p) { return p.batch * p.in_h * p.in_w * p.channels; }

}  // namespace

template <typename T>
cudaError_t LaunchMaxPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream) {
  const int64_t n = OutputCount(p);
  if (n == 0) return cudaSuccess;
  MaxPoolKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(p, in, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAvgPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream) {
  const int64_t n = OutputCount(p);
  if (n == 0) return cudaSuccess;
  AvgPoolKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(p, in, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchMaxPoolGrad(const PoolShape& p, const T* in, const T* dy, T* dx,
                              bool deterministic, cudaStream_t stream) {
  const int64_t n_in = InputCount(p), n_out = OutputCount(p);
  if (n_in == 0) return cudaSuccess;
  if constexpr (std::is_same_v<MathOf<T>, T>) {
    if (!deterministic) {
      ZeroKernel<T><<<GridSize(n_in), kThreadsPerBlock, 0, stream>>>(dx, n_in);
      if (n_out > 0) {
        MaxPoolGradKernel<T>
            <<<GridSize(n_out), kThreadsPerBlock, 0, stream>>>(p, in, dy, dx, n_out);
      }
      return cudaGetLastError();
    }
  }
  MaxPoolGradGatherKernel<T><<<GridSize(n_in), kThreadsPerBlock, 0, stream>>>(p, in, dy, dx, n_in);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAvgPoolGrad(const PoolShape& p, const T* dy, T* dx, cudaStream_t stream) {
  const int64_t n = InputCount(p);
  if (n == 0) return cudaSuccess;
  AvgPoolGradKernel<T><<<GridSize(n), kThreadsPerBlock, 0, stream>>>(p, dy, dx, n);
  return cudaGetLastError();
}

#define TW_INSTANTIATE(T)                                                                   \
  template cudaError_t LaunchMaxPool<T>(const PoolShape&, const T*, T*, cudaStream_t);      \
  template cudaError_t LaunchAvgPool<T>(const PoolShape&, const T*, T*, cudaStream_t);      \
  template cudaError_t LaunchMaxPoolGrad<T>(const PoolShape&, const T*, const T*, T*, bool, \
                                            cudaStream_t);                                  \
  template cudaError_t LaunchAvgPoolGrad<T>(const PoolShape&, const T*, T*, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
TW_INSTANTIATE(HalfBits)
TW_INSTANTIATE(Bfloat16Bits)
#undef TW_INSTANTIATE

}  // namespace gpu
}  // namespace towerflow
