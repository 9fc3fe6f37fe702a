// CUDA kernels of LRN and the parts of batch norm cuDNN does not do
// (kernels/gpu/launch.h). LRN is our own rather than cuDNN's, whose
// cross-channel LRN wants NCHW and a window of at most 16 channels, where
// TF's is NHWC with any radius.
#include <cuda_runtime.h>

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

// One block per channel: both sums by a shared-memory tree, then dx.
__global__ void BatchNormInferenceGradKernel(BatchNormShape s, const float* dy, const float* x,
                                             const float* scale, const float* mean,
                                             const float* var, float epsilon, float* dx,
                                             float* scale_bp, float* offset_bp) {
  __shared__ float sum_dy[kThreadsPerBlock], sum_dy_xhat[kThreadsPerBlock];
  const int64_t c = blockIdx.x, count = s.batch * s.spatial;
  const float rstd = rsqrtf(var[c] + epsilon), k = scale[c] * rstd, m = mean[c];
  float a = 0, b = 0;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const int64_t i = BnIndex(s, c, j);
    a += dy[i];
    b += dy[i] * (x[i] - m) * rstd;
    dx[i] = dy[i] * k;
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

cudaError_t LaunchBatchNormInferenceGrad(const BatchNormShape& s, const float* dy, const float* x,
                                         const float* scale, const float* mean, const float* var,
                                         float epsilon, float* dx, float* scale_bp,
                                         float* offset_bp, cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  BatchNormInferenceGradKernel<<<static_cast<unsigned>(s.channels), kThreadsPerBlock, 0, stream>>>(
      s, dy, x, scale, mean, var, epsilon, dx, scale_bp, offset_bp);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace towerflow
