// Launchers of kernels/gpu/norm_kernels.cu.cc: batch normalisation and LRN.
// The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_NORM_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_NORM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// LRN in float; batch norm's data (x, y, dy, dx) of T float, HalfBits or
// Bfloat16Bits, read into float, with float parameters and statistics.

// LRN over the last dimension (`depth`) of `pixels` x depth values:
// y = x * (bias + alpha * sum_{|c'-c|<=radius} x[c']^2)^-beta.
struct LrnShape {
  int64_t pixels, depth, radius;
  float bias, alpha, beta;
};
cudaError_t LaunchLrn(const LrnShape& s, const float* x, float* y, cudaStream_t stream);
// LRNGrad: dx[j] = dy[j] n[j]^-beta - 2 alpha beta x[j] sum_{|c-j|<=r}
// dy[c] x[c] n[c]^(-beta-1); `scratch` holds 2 * pixels * depth floats.
cudaError_t LaunchLrnGrad(const LrnShape& s, const float* dy, const float* x, float* scratch,
                          float* dx, cudaStream_t stream);

// Per-channel statistics of batch norm in training from the batch mean
// and unbiased variance (cuDNN's or LaunchBatchNormTrainingNhwc's) over `n` values per channel
// (factor 1): the reserve spaces get the mean and the biased variance (the CPU kernels' layout),
// batch_mean/batch_variance the unbiased statistics, or with factor f != 1 the running averages (1
// - f) * old + f * new.
cudaError_t LaunchBatchNormFinalize(const float* mean, const float* unbiased_var, int64_t n,
                                    float factor, const float* old_mean, const float* old_var,
                                    float* batch_mean, float* batch_var, float* saved_mean,
                                    float* saved_var, int64_t channels, cudaStream_t stream);
// out = 1 / sqrt(var + epsilon), cuDNN's saved inverse deviation.
cudaError_t LaunchInverseStd(const float* var, float epsilon, float* out, int64_t channels,
                             cudaStream_t stream);
// Batch norm's gradient with given (population) statistics: per channel
// offset_bp = sum dy, scale_bp = sum dy * (x - mean) * rsqrt(var + eps);
// dx = dy * scale * rsqrt(var + eps). x is [batch, channels, spatial]
// (NCHW) or [batch * spatial, channels] (NHWC).
struct BatchNormShape {
  int64_t batch, channels, spatial;
  bool nchw;
};
template <typename T>
cudaError_t LaunchBatchNormInferenceGrad(const BatchNormShape& s, const T* dy, const T* x,
                                         const float* scale, const float* mean, const float* var,
                                         float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                         cudaStream_t stream);

// Batch norm in training on NHWC data, x as [rows, channels] (rows = batch *
// height * width), by our own kernels: cuDNN's NHWC kernels took about
// 150 us a ResNet-20 layer at batch 128 on an H100, a few times the memory
// traffic's floor. Each pass reads the data once, with every thread summing
// one channel over a strip of rows; the blocks' partial sums are added in
// double. Both take `scratch` of BatchNormNhwcScratchFloats floats.
int64_t BatchNormNhwcScratchFloats(int64_t rows, int64_t channels);
// y = scale * (x - mean) / sqrt(var + epsilon) + offset with the batch's
// mean and biased variance (two passes: the mean, then the squared
// deviations); `mean` and `unbiased_var` get the batch's mean and unbiased
// variance (0 where rows < 2), as cuDNN's, for LaunchBatchNormFinalize.
template <typename T>
cudaError_t LaunchBatchNormTrainingNhwc(int64_t rows, int64_t channels, const T* x,
                                        const float* scale, const float* offset, float epsilon,
                                        T* y, float* mean, float* unbiased_var, float* scratch,
                                        cudaStream_t stream);
// The gradient of the above given the saved mean and biased variance:
// offset_bp = sum dy, scale_bp = sum dy * xhat, and
// dx = scale * rstd * (dy - offset_bp / rows - xhat * scale_bp / rows),
// xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + epsilon).
template <typename T>
cudaError_t LaunchBatchNormTrainingGradNhwc(int64_t rows, int64_t channels, const T* dy, const T* x,
                                            const float* scale, const float* mean, const float* var,
                                            float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                            float* scratch, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_NORM_KERNELS_H_
