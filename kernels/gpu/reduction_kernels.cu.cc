// CUDA kernels behind kernels/gpu/launch.h: reductions over the middle of
// [outer, reduce, inner], arg-reductions, softmax and the cross-entropy
// losses. A row reduction (inner == 1) takes one 256-thread block per row
// and a shared-memory tree; otherwise one thread per output walks the
// reduced dimension, so neighbouring threads read neighbouring elements.
#include "kernels/gpu/reduction_kernels.h"

#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

constexpr int kThreads = kThreadsPerBlock;  // BlockReduce's shared array

int RowBlocks(int64_t rows) { return static_cast<int>(rows < 65535 ? rows : 65535); }

template <typename T>
__device__ T Identity(ReduceFn fn) {
  switch (fn) {
    case ReduceFn::kSum:
      return T(0);
    case ReduceFn::kProd:
      return T(1);
    case ReduceFn::kMax:
      return T(-CUDART_INF);
    case ReduceFn::kMin:
      return T(CUDART_INF);
  }
  return T(0);
}

template <typename T>
__device__ T Combine(ReduceFn fn, T a, T b) {
  switch (fn) {
    case ReduceFn::kSum:
      return a + b;
    case ReduceFn::kProd:
      return a * b;
    case ReduceFn::kMax:
      return a > b ? a : b;
    case ReduceFn::kMin:
      return a < b ? a : b;
  }
  return a;
}

// Reduces `v` across the block (blockDim.x == kThreads); every thread gets
// the result.
template <typename T>
__device__ T BlockReduce(ReduceFn fn, T v) {
  __shared__ T shared[kThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] = Combine(fn, shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

// The reductions accumulate in MathOf<In> (float for the 16-bit floats, as
// TF's) and round once into Out.
template <typename In, typename Out>
__global__ void RowReduceKernel(ReduceFn fn, const In* in, Out* out, int64_t rows, int64_t cols,
                                MathOf<In> scale) {
  using M = MathOf<In>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    M acc = Identity<M>(fn);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      acc = Combine(fn, acc, DeviceValue<In>::Widen(in[row * cols + c]));
    acc = BlockReduce(fn, acc);
    if (threadIdx.x == 0) out[row] = DeviceValue<Out>::Narrow(acc * scale);
  }
}

template <typename In, typename Out>
__global__ void ColumnReduceKernel(ReduceFn fn, const In* in, Out* out, int64_t outer,
                                   int64_t reduce, int64_t inner, MathOf<In> scale) {
  using M = MathOf<In>;
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t o = k / inner, i = k % inner;
    const In* p = in + o * reduce * inner + i;
    M acc = Identity<M>(fn);
    for (int64_t r = 0; r < reduce; ++r)
      acc = Combine(fn, acc, DeviceValue<In>::Widen(p[r * inner]));
    out[k] = DeviceValue<Out>::Narrow(acc * scale);
  }
}

template <typename T, typename Index>
__global__ void ArgReduceKernel(const T* in, Index* out, int64_t outer, int64_t reduce,
                                int64_t inner, bool is_max) {
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t o = k / inner, i = k % inner;
    const T* p = in + o * reduce * inner + i;
    int64_t best = 0;
    for (int64_t r = 1; r < reduce; ++r) {
      const T v = p[r * inner];
      if (is_max ? v > p[best * inner] : v < p[best * inner]) best = r;
    }
    out[k] = static_cast<Index>(best);
  }
}

// Row max and sum of exp(x - max), shared by softmax and the losses.
template <typename T>
__device__ void RowStats(const T* row, int64_t cols, T* max_out, T* sum_out) {
  T m = T(-CUDART_INF);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = row[c] > m ? row[c] : m;
  m = BlockReduce(ReduceFn::kMax, m);
  T s = T(0);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += exp(row[c] - m);
  *sum_out = BlockReduce(ReduceFn::kSum, s);
  *max_out = m;
}

template <typename T>
__global__ void SoftmaxKernel(const T* logits, T* out, int64_t rows, int64_t cols, bool log_) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = logits + r * cols;
    T m, s;
    RowStats(row, cols, &m, &s);
    const T log_s = log(s);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      out[r * cols + c] = log_ ? row[c] - m - log_s : exp(row[c] - m) / s;
    }
  }
}

template <typename T>
__global__ void SoftmaxXentKernel(const T* logits, const T* labels, T* loss, T* backprop,
                                  int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = logits + r * cols;
    const T* lab = labels + r * cols;
    T m, s;
    RowStats(row, cols, &m, &s);
    const T log_s = log(s);
    T l = T(0);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T shifted = row[c] - m;
      l += lab[c] * (log_s - shifted);
      backprop[r * cols + c] = exp(shifted) / s - lab[c];
    }
    l = BlockReduce(ReduceFn::kSum, l);
    if (threadIdx.x == 0) loss[r] = l;
  }
}

template <typename T, typename Index>
__global__ void SparseSoftmaxXentKernel(const T* logits, const Index* labels, T* loss, T* backprop,
                                        int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = logits + r * cols;
    const int64_t label = static_cast<int64_t>(labels[r]);
    if (label < 0 || label >= cols) {  // TF's GPU kernel: NaN, not an error
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        backprop[r * cols + c] = T(CUDART_NAN);
      if (threadIdx.x == 0) loss[r] = T(CUDART_NAN);
      continue;
    }
    T m, s;
    RowStats(row, cols, &m, &s);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      backprop[r * cols + c] = exp(row[c] - m) / s - (c == label ? T(1) : T(0));
    }
    if (threadIdx.x == 0) loss[r] = log(s) - (row[label] - m);
  }
}

}  // namespace

template <typename In, typename Out>
cudaError_t LaunchReduce(ReduceFn fn, const In* in, Out* out, int64_t outer, int64_t reduce,
                         int64_t inner, double scale, cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  const MathOf<In> s = static_cast<MathOf<In>>(scale);
  if (inner == 1 && reduce >= 64) {
    RowReduceKernel<In, Out>
        <<<RowBlocks(outer), kThreads, 0, stream>>>(fn, in, out, outer, reduce, s);
  } else {
    ColumnReduceKernel<In, Out>
        <<<GridSize(outer * inner), kThreads, 0, stream>>>(fn, in, out, outer, reduce, inner, s);
  }
  return cudaGetLastError();
}

template <typename T, typename Index>
cudaError_t LaunchArgReduce(const T* in, Index* out, int64_t outer, int64_t reduce, int64_t inner,
                            bool is_max, cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  ArgReduceKernel<T, Index>
      <<<GridSize(outer * inner), kThreads, 0, stream>>>(in, out, outer, reduce, inner, is_max);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSoftmax(const T* logits, T* out, int64_t rows, int64_t cols, bool log,
                          cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  SoftmaxKernel<T><<<RowBlocks(rows), kThreads, 0, stream>>>(logits, out, rows, cols, log);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSoftmaxXent(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows,
                              int64_t cols, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxXentKernel<T>
      <<<RowBlocks(rows), kThreads, 0, stream>>>(logits, labels, loss, backprop, rows, cols);
  return cudaGetLastError();
}

template <typename T, typename Index>
cudaError_t LaunchSparseSoftmaxXent(const T* logits, const Index* labels, T* loss, T* backprop,
                                    int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SparseSoftmaxXentKernel<T, Index>
      <<<RowBlocks(rows), kThreads, 0, stream>>>(logits, labels, loss, backprop, rows, cols);
  return cudaGetLastError();
}

#define TW_INSTANTIATE_REDUCE(In, Out)                                                             \
  template cudaError_t LaunchReduce<In, Out>(ReduceFn, const In*, Out*, int64_t, int64_t, int64_t, \
                                             double, cudaStream_t);
TW_INSTANTIATE_REDUCE(float, float)
TW_INSTANTIATE_REDUCE(double, double)
TW_INSTANTIATE_REDUCE(HalfBits, HalfBits)
TW_INSTANTIATE_REDUCE(Bfloat16Bits, Bfloat16Bits)
TW_INSTANTIATE_REDUCE(HalfBits, float)
TW_INSTANTIATE_REDUCE(Bfloat16Bits, float)
TW_INSTANTIATE_REDUCE(float, HalfBits)
TW_INSTANTIATE_REDUCE(float, Bfloat16Bits)
#undef TW_INSTANTIATE_REDUCE

#define TW_INSTANTIATE(T)                                                                         \
  template cudaError_t LaunchSoftmax<T>(const T*, T*, int64_t, int64_t, bool, cudaStream_t);      \
  template cudaError_t LaunchSoftmaxXent<T>(const T*, const T*, T*, T*, int64_t, int64_t,         \
                                            cudaStream_t);                                        \
  template cudaError_t LaunchSparseSoftmaxXent<T, int32_t>(const T*, const int32_t*, T*, T*,      \
                                                           int64_t, int64_t, cudaStream_t);       \
  template cudaError_t LaunchSparseSoftmaxXent<T, int64_t>(const T*, const int64_t*, T*, T*,      \
                                                           int64_t, int64_t, cudaStream_t);       \
  template cudaError_t LaunchArgReduce<T, int32_t>(const T*, int32_t*, int64_t, int64_t, int64_t, \
                                                   bool, cudaStream_t);                           \
  template cudaError_t LaunchArgReduce<T, int64_t>(const T*, int64_t*, int64_t, int64_t, int64_t, \
                                                   bool, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(double)
#undef TW_INSTANTIATE

}  // namespace gpu
}  // namespace towerflow
