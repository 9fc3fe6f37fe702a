// Launchers of kernels/gpu/reduction_kernels.cu.cc: reductions, softmax and its cross-entropies,
// ArgMax and ArgMin. The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_REDUCTION_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_REDUCTION_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

enum class ReduceFn { kSum, kMax, kMin, kProd };

// out[o, i] = reduce over r of in[o, r, i], times `scale` (1/r for a mean).
// In and Out: float, double, or a 16-bit type (accumulated in float) in or
// out with float on the other side.
template <typename In, typename Out = In>
cudaError_t LaunchReduce(ReduceFn fn, const In* in, Out* out, int64_t outer, int64_t reduce,
                         int64_t inner, double scale, cudaStream_t stream);

// Row-wise over [rows, cols]: softmax (or log-softmax).
template <typename T>
cudaError_t LaunchSoftmax(const T* logits, T* out, int64_t rows, int64_t cols, bool log,
                          cudaStream_t stream);

// Softmax cross-entropy per row with dense labels: loss [rows], backprop
// [rows, cols] = softmax - labels.
template <typename T>
cudaError_t LaunchSoftmaxXent(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows,
                              int64_t cols, cudaStream_t stream);

// The same with class indices (already checked to be in [0, cols)).
template <typename T, typename Index>
cudaError_t LaunchSparseSoftmaxXent(const T* logits, const Index* labels, T* loss, T* backprop,
                                    int64_t rows, int64_t cols, cudaStream_t stream);

// ArgMax / ArgMin over the middle of [outer, reduce, inner].
template <typename T, typename Index>
cudaError_t LaunchArgReduce(const T* in, Index* out, int64_t outer, int64_t reduce, int64_t inner,
                            bool is_max, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_REDUCTION_KERNELS_H_
