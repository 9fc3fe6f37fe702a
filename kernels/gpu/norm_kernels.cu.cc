// CUDA kernels of LRN and of batch norm where cuDNN's are slow or missing
// (kernels/gpu/launch.h). LRN is our own rather than cuDNN's, whose
// cross-channel LRN wants NCHW and a window of at most 16 channels, where
// TF's is NHWC with any radius.
#include "kernels/gpu/norm_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/gpu/cuda_util.cu.h"
#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {
namespace {

// sum_{|c'-c|<=r} v[c']^2 (square) or v[c'] over one pixel's channels.
__device__ float WindowSum(const float* v, int64_t depth, int64_t c, int64_t r, bool square) {
  const int64_t lo = c - r > 0 ? c - r : 0, hi = c + r < depth - 1 ? c + r : depth - 1;
  float sum = 0;
  for (int64_t k = lo; k <= hi; ++k) sum += square ? v[k] * v[k] : v[k];
  return sum;
}

__global__ void LrnKernel(LrnShape s, const float* x, float* y, int64_t n) {
  TW_GRID_LOOP(i, n) {
    const int64_t c = i % s.depth;
    const float* px = x + (i - c);
    const float norm = s.bias + s.alpha * WindowSum(px, s.depth, c, s.radius, true);
    y[i] = x[i] * powf(norm, -s.beta);
  }
}

// pw = n^-beta, t = dy x n^(-beta-1) per element.
__global__ void LrnGradPrepKernel(LrnShape s, const float* dy, const float* x, float* pw, float* t,
                                  int64_t n) {
  TW_GRID_LOOP(i, n) {
    const int64_t c = i % s.depth;
    const float norm = s.bias + s.alpha * WindowSum(x + (i - c), s.depth, c, s.radius, true);
    const float p = powf(norm, -s.beta);
    pw[i] = p;
    t[i] = dy[i] * x[i] * p / norm;
  }
}

__global__ void LrnGradKernel(LrnShape s, const float* dy, const float* x, const float* pw,
                              const float* t, float* dx, int64_t n) {
  TW_GRID_LOOP(i, n) {
    const int64_t c = i % s.depth;
    const float sum = WindowSum(t + (i - c), s.depth, c, s.radius, false);
    dx[i] = dy[i] * pw[i] - 2.0f * s.alpha * s.beta * x[i] * sum;
  }
}

__global__ void BatchNormFinalizeKernel(const float* mean, const float* unbiased_var, int64_t n,
                                        float f, const float* old_mean, const float* old_var,
                                        float* batch_mean, float* batch_var, float* saved_mean,
                                        float* saved_var, int64_t channels) {
  TW_GRID_LOOP(c, channels) {
    const float m = n > 0 ? mean[c] : 0.0f;
    const float u = n > 1 ? unbiased_var[c] : 0.0f;
    saved_mean[c] = m;
    saved_var[c] = n > 1 ? u * (static_cast<float>(n - 1) / static_cast<float>(n)) : 0.0f;
    if (f == 1.0f) {
      batch_mean[c] = m;
      batch_var[c] = u;
    } else {
      batch_mean[c] = old_mean[c] * (1 - f) + m * f;
      batch_var[c] = old_var[c] * (1 - f) + u * f;
    }
  }
}

__global__ void InverseStdKernel(const float* var, float epsilon, float* out, int64_t channels) {
  TW_GRID_LOOP(c, channels) { out[c] = rsqrtf(var[c] + epsilon); }
}

__device__ int64_t BnIndex(const BatchNormShape& s, int64_t c, int64_t j) {
  // j runs over the channel's batch * spatial values.
  if (s.nchw) return ((j / s.spatial) * s.channels + c) * s.spatial + j % s.spatial;
  return j * s.channels + c;
}

// One block per channel: both sums by a shared-memory tree, then dx. The
// data (T: float, or a 16-bit type) is read into float and dx rounded once.
template <typename T>
__global__ void BatchNormInferenceGradKernel(BatchNormShape s, const T* dy, const T* x,
                                             const float* scale, const float* mean,
                                             const float* var, float epsilon, T* dx,
                                             float* scale_bp, float* offset_bp) {
  using V = DeviceValue<T>;
  __shared__ float sum_dy[kThreadsPerBlock], sum_dy_xhat[kThreadsPerBlock];
  const int64_t c = blockIdx.x, count = s.batch * s.spatial;
  const float rstd = rsqrtf(var[c] + epsilon), k = scale[c] * rstd, m = mean[c];
  float a = 0, b = 0;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const int64_t i = BnIndex(s, c, j);
    const float g = V::Widen(dy[i]);
    a += g;
    b += g * (V::Widen(x[i]) - m) * rstd;
    dx[i] = V::Narrow(g * k);
  }
  sum_dy[threadIdx.x] = a;
  sum_dy_xhat[threadIdx.x] = b;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sum_dy[threadIdx.x] += sum_dy[threadIdx.x + half];
      sum_dy_xhat[threadIdx.x] += sum_dy_xhat[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    offset_bp[c] = sum_dy[0];
    scale_bp[c] = sum_dy_xhat[0];
  }
}

// ---- Batch norm in training on NHWC data ----
//
// The [rows, channels] data is covered by blocks of `tile` channels (one per
// consecutive thread, so reads are coalesced) by `per_pass` rows; blockIdx.y
// picks the channel tile and the blocks along x stride over the rows. Each
// thread keeps one channel, so it sums without any index arithmetic beyond
// its row.
struct ChannelGrid {
  int tile, per_pass, tiles, blocks;
};

constexpr int kChannelThreads = 1024;
// Blocks along the rows of a summing pass (two 1024-thread blocks fill a
// Hopper SM; more only add partial sums), and of an elementwise pass.
constexpr int kSumBlocks = 512;
constexpr int kAffineBlocks = 2048;
constexpr int kMaxGridY = 65535;
constexpr int kFinishThreads = 256;

ChannelGrid PlanChannelGrid(int64_t rows, int64_t channels, int max_blocks) {
  ChannelGrid g;
  g.tiles = static_cast<int>((channels + kChannelThreads - 1) / kChannelThreads);
  g.tile = static_cast<int>((channels + g.tiles - 1) / g.tiles);
  g.per_pass = kChannelThreads / g.tile;
  const int64_t strips = (rows + g.per_pass - 1) / g.per_pass;
  g.blocks = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(strips, std::max(1, max_blocks / g.tiles))));
  return g;
}

dim3 Blocks(const ChannelGrid& g) { return dim3(g.blocks, std::min(g.tiles, kMaxGridY)); }

// partial[(k * channels + c) * gridDim.x + blockIdx.x] = the block's sum of
// term's k-th value over its rows of channel c.
template <int kSums, typename Term>
__global__ void ChannelPartialSumsKernel(int64_t rows, int channels, ChannelGrid g, Term term,
                                         float* partial) {
  extern __shared__ float shared[];
  const int threads = blockDim.x;  // g.tile * g.per_pass
  const int cx = threadIdx.x % g.tile, ry = threadIdx.x / g.tile;
  for (int t = blockIdx.y; t < g.tiles; t += gridDim.y) {
    const int c = t * g.tile + cx;
    float acc[kSums] = {};
    if (c < channels) {
      for (int64_t r = static_cast<int64_t>(blockIdx.x) * g.per_pass + ry; r < rows;
           r += static_cast<int64_t>(gridDim.x) * g.per_pass) {
        term(r * channels + c, c, acc);
      }
    }
    for (int k = 0; k < kSums; ++k) shared[k * threads + threadIdx.x] = acc[k];
    __syncthreads();
    // A tree over the block's rows; per_pass need not be a power of 2.
    int half = 1;
    while (half * 2 < g.per_pass) half *= 2;
    for (; half > 0; half /= 2) {
      if (ry < half && ry + half < g.per_pass) {
        for (int k = 0; k < kSums; ++k) {
          shared[k * threads + threadIdx.x] += shared[k * threads + threadIdx.x + half * g.tile];
        }
      }
      __syncthreads();
    }
    if (ry == 0 && c < channels) {
      for (int k = 0; k < kSums; ++k) {
        partial[(static_cast<int64_t>(k) * channels + c) * gridDim.x + blockIdx.x] =
            shared[k * threads + cx];
      }
    }
    __syncthreads();  // the next tile reuses `shared`
  }
}

// One block per channel adds the partial sums of ChannelPartialSumsKernel's
// `blocks` blocks in double and hands them to finish(c, sums).
template <int kSums, typename Finish>
__global__ void ChannelFinishKernel(int channels, int blocks, const float* partial, Finish finish) {
  __shared__ double shared[kSums][kFinishThreads];
  for (int c = blockIdx.x; c < channels; c += gridDim.x) {
    double acc[kSums] = {};
    for (int b = threadIdx.x; b < blocks; b += kFinishThreads) {
      for (int k = 0; k < kSums; ++k) {
        acc[k] += partial[(static_cast<int64_t>(k) * channels + c) * blocks + b];
      }
    }
    for (int k = 0; k < kSums; ++k) shared[k][threadIdx.x] = acc[k];
    __syncthreads();
    for (int half = kFinishThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        for (int k = 0; k < kSums; ++k) shared[k][threadIdx.x] += shared[k][threadIdx.x + half];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      double sums[kSums];
      for (int k = 0; k < kSums; ++k) sums[k] = shared[k][0];
      finish(c, sums);
    }
    __syncthreads();  // the next channel reuses `shared`
  }
}

// out = p[c] * (u - shift[c]) + q[c] * v + r[c] (without the v term when v
// is null), over the same blocks as the sums; u, v and out of the data's
// type T, computed in float.
template <typename T>
struct ChannelAffine {
  const T* u;
  const float *shift, *p;
  const T* v;
  const float *q, *r;
  T* out;
};

template <typename T>
__global__ void ChannelAffineKernel(int64_t rows, int channels, ChannelGrid g, ChannelAffine<T> a) {
  using V = DeviceValue<T>;
  const int cx = threadIdx.x % g.tile, ry = threadIdx.x / g.tile;
  for (int t = blockIdx.y; t < g.tiles; t += gridDim.y) {
    const int c = t * g.tile + cx;
    if (c >= channels) continue;
    const float shift = a.shift[c], p = a.p[c], q = a.v ? a.q[c] : 0.0f, r = a.r[c];
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * g.per_pass + ry; row < rows;
         row += static_cast<int64_t>(gridDim.x) * g.per_pass) {
      const int64_t i = row * channels + c;
      float out = p * (V::Widen(a.u[i]) - shift) + r;
      if (a.v) out += q * V::Widen(a.v[i]);
      a.out[i] = V::Narrow(out);
    }
  }
}

template <typename T>
struct SumOf {
  const T* x;
  __device__ void operator()(int64_t i, int, float* acc) const {
    acc[0] += DeviceValue<T>::Widen(x[i]);
  }
};

template <typename T>
struct SquaredDeviation {
  const T* x;
  const float* mean;
  __device__ void operator()(int64_t i, int c, float* acc) const {
    const float d = DeviceValue<T>::Widen(x[i]) - mean[c];
    acc[0] += d * d;
  }
};

// sum dy and sum dy * (x - mean).
template <typename T>
struct GradSums {
  const T *dy, *x;
  const float* mean;
  __device__ void operator()(int64_t i, int c, float* acc) const {
    const float g = DeviceValue<T>::Widen(dy[i]);
    acc[0] += g;
    acc[1] += g * (DeviceValue<T>::Widen(x[i]) - mean[c]);
  }
};

struct MeanFinish {
  int64_t rows;
  float* mean;
  __device__ void operator()(int c, const double* sums) const {
    mean[c] = static_cast<float>(sums[0] / rows);
  }
};

// From the sum of squared deviations: the unbiased variance, and the
// normalisation's factor scale / sqrt(biased variance + epsilon).
struct VarianceFinish {
  int64_t rows;
  float epsilon;
  const float* scale;
  float *unbiased_var, *factor;
  __device__ void operator()(int c, const double* sums) const {
    unbiased_var[c] = rows > 1 ? static_cast<float>(sums[0] / (rows - 1)) : 0.0f;
    factor[c] = static_cast<float>(scale[c] / sqrt(sums[0] / rows + epsilon));
  }
};

// dx = p * (x - mean) + q * dy + r with q = scale * rstd,
// p = -scale * rstd^3 * sum(dy (x - mean)) / rows, r = -scale * rstd * sum(dy) / rows.
struct GradFinish {
  int64_t rows;
  float epsilon;
  const float *scale, *var;
  float *scale_bp, *offset_bp, *p, *q, *r;
  __device__ void operator()(int c, const double* sums) const {
    const double rstd = 1.0 / sqrt(static_cast<double>(var[c]) + epsilon);
    const double k = scale[c] * rstd;
    offset_bp[c] = static_cast<float>(sums[0]);
    scale_bp[c] = static_cast<float>(sums[1] * rstd);
    q[c] = static_cast<float>(k);
    p[c] = static_cast<float>(-k * rstd * rstd * sums[1] / rows);
    r[c] = static_cast<float>(-k * sums[0] / rows);
  }
};

template <int kSums, typename Term, typename Finish>
cudaError_t SumPerChannel(int64_t rows, int channels, const ChannelGrid& g, Term term,
                          float* partial, Finish finish, cudaStream_t stream) {
  const int threads = g.tile * g.per_pass;
  ChannelPartialSumsKernel<kSums><<<Blocks(g), threads, kSums * threads * sizeof(float), stream>>>(
      rows, channels, g, term, partial);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  ChannelFinishKernel<kSums><<<std::min(channels, kMaxGridY), kFinishThreads, 0, stream>>>(
      channels, g.blocks, partial, finish);
  return cudaGetLastError();
}

template <typename T>
cudaError_t AffinePerChannel(int64_t rows, int channels, const ChannelAffine<T>& a,
                             cudaStream_t stream) {
  const ChannelGrid g = PlanChannelGrid(rows, channels, kAffineBlocks);
  ChannelAffineKernel<T><<<Blocks(g), g.tile * g.per_pass, 0, stream>>>(rows, channels, g, a);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchLrn(const LrnShape& s, const float* x, float* y, cudaStream_t stream) {
  const int64_t n = s.pixels * s.depth;
  if (n == 0) return cudaSuccess;
  LrnKernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(s, x, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchLrnGrad(const LrnShape& s, const float* dy, const float* x, float* scratch,
                          float* dx, cudaStream_t stream) {
  const int64_t n = s.pixels * s.depth;
  if (n == 0) return cudaSuccess;
  float* pw = scratch;
  float* t = scratch + n;
  LrnGradPrepKernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(s, dy, x, pw, t, n);
  LrnGradKernel<<<GridSize(n), kThreadsPerBlock, 0, stream>>>(s, dy, x, pw, t, dx, n);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormFinalize(const float* mean, const float* unbiased_var, int64_t n,
                                    float factor, const float* old_mean, const float* old_var,
                                    float* batch_mean, float* batch_var, float* saved_mean,
                                    float* saved_var, int64_t channels, cudaStream_t stream) {
  if (channels == 0) return cudaSuccess;
  BatchNormFinalizeKernel<<<GridSize(channels), kThreadsPerBlock, 0, stream>>>(
      mean, unbiased_var, n, factor, old_mean, old_var, batch_mean, batch_var, saved_mean,
      saved_var, channels);
  return cudaGetLastError();
}

cudaError_t LaunchInverseStd(const float* var, float epsilon, float* out, int64_t channels,
                             cudaStream_t stream) {
  if (channels == 0) return cudaSuccess;
  InverseStdKernel<<<GridSize(channels), kThreadsPerBlock, 0, stream>>>(var, epsilon, out,
                                                                        channels);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBatchNormInferenceGrad(const BatchNormShape& s, const T* dy, const T* x,
                                         const float* scale, const float* mean, const float* var,
                                         float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                         cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  BatchNormInferenceGradKernel<T>
      <<<static_cast<unsigned>(s.channels), kThreadsPerBlock, 0, stream>>>(
          s, dy, x, scale, mean, var, epsilon, dx, scale_bp, offset_bp);
  return cudaGetLastError();
}

int64_t BatchNormNhwcScratchFloats(int64_t rows, int64_t channels) {
  // Two sums' partials, then three per-channel coefficients.
  return (2 * PlanChannelGrid(rows, channels, kSumBlocks).blocks + 3) * channels;
}

template <typename T>
cudaError_t LaunchBatchNormTrainingNhwc(int64_t rows, int64_t channels, const T* x,
                                        const float* scale, const float* offset, float epsilon,
                                        T* y, float* mean, float* unbiased_var, float* scratch,
                                        cudaStream_t stream) {
  if (rows == 0 || channels == 0) return cudaSuccess;
  const int c = static_cast<int>(channels);
  const ChannelGrid g = PlanChannelGrid(rows, channels, kSumBlocks);
  float* partial = scratch;
  float* factor = scratch + 2 * static_cast<int64_t>(g.blocks) * channels;
  cudaError_t err =
      SumPerChannel<1>(rows, c, g, SumOf<T>{x}, partial, MeanFinish{rows, mean}, stream);
  if (err != cudaSuccess) return err;
  err = SumPerChannel<1>(rows, c, g, SquaredDeviation<T>{x, mean}, partial,
                         VarianceFinish{rows, epsilon, scale, unbiased_var, factor}, stream);
  if (err != cudaSuccess) return err;
  return AffinePerChannel(rows, c, ChannelAffine<T>{x, mean, factor, nullptr, nullptr, offset, y},
                          stream);
}

template <typename T>
cudaError_t LaunchBatchNormTrainingGradNhwc(int64_t rows, int64_t channels, const T* dy, const T* x,
                                            const float* scale, const float* mean, const float* var,
                                            float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                            float* scratch, cudaStream_t stream) {
  if (rows == 0 || channels == 0) return cudaSuccess;
  const int c = static_cast<int>(channels);
  const ChannelGrid g = PlanChannelGrid(rows, channels, kSumBlocks);
  float* partial = scratch;
  float* p = scratch + 2 * static_cast<int64_t>(g.blocks) * channels;
  float* q = p + channels;
  float* r = q + channels;
  cudaError_t err =
      SumPerChannel<2>(rows, c, g, GradSums<T>{dy, x, mean}, partial,
                       GradFinish{rows, epsilon, scale, var, scale_bp, offset_bp, p, q, r}, stream);
  if (err != cudaSuccess) return err;
  return AffinePerChannel(rows, c, ChannelAffine<T>{x, mean, p, dy, q, r, dx}, stream);
}

#define TW_INSTANTIATE(T)                                                                         \
  template cudaError_t LaunchBatchNormInferenceGrad<T>(const BatchNormShape&, const T*, const T*, \
                                                       const float*, const float*, const float*,  \
                                                       float, T*, float*, float*, cudaStream_t);  \
  template cudaError_t LaunchBatchNormTrainingNhwc<T>(int64_t, int64_t, const T*, const float*,   \
                                                      const float*, float, T*, float*, float*,    \
                                                      float*, cudaStream_t);                      \
  template cudaError_t LaunchBatchNormTrainingGradNhwc<T>(                                        \
      int64_t, int64_t, const T*, const T*, const float*, const float*, const float*, float, T*,  \
      float*, float*, float*, cudaStream_t);
TW_INSTANTIATE(float)
TW_INSTANTIATE(HalfBits)
TW_INSTANTIATE(Bfloat16Bits)
#undef TW_INSTANTIATE

}  // namespace gpu
}  // namespace towerflow
