// Launchers of kernels/gpu/index_kernels.cu.cc: row scatters, SpaceToBatchND and BatchToSpaceND,
// and image resizes. The conventions every launcher keeps are in kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_INDEX_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_INDEX_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"
#include "kernels/gpu/layout_kernels.h"

namespace towerflow {
namespace gpu {

// ScatterNd, TensorScatterUpdate and the scatters into variables, on index
// rows grouped on the host by the slice they write: group g writes slice
// offsets[g] (`slice` elements each) from update rows rows[starts[g]] ..
// rows[starts[g + 1] - 1], in index order: out's value plus (kAdd) or minus
// (kSub) each of them in turn (the CPU kernels' order, so the sums agree bit
// for bit, and no atomics), or the last of them (kAssign). `plan` in device
// memory is offsets [groups], starts [groups + 1], rows [n]. A scalar
// `updates` (scalar true) stands for rows all of its value. kAdd and kSub: T
// float, double or int64_t; kAssign: T as in LaunchIndexGather.
enum class RowScatter { kAdd, kSub, kAssign };
template <typename T>
cudaError_t LaunchScatterRows(RowScatter mode, bool scalar, const T* updates, const int64_t* plan,
                              int64_t groups, int64_t n, int64_t slice, T* out,
                              cudaStream_t stream);

// SpaceToBatchND / BatchToSpaceND (kernels/image_plans.h's SpaceBatchPlan)
// over the deep side's `positions` x inner elements; up to kMaxBlockDims
// block dims. Padding is zero. T as in LaunchIndexGather.
constexpr int kMaxBlockDims = 6;
struct SpaceBatchMap {
  bool to_batch = true;
  int m = 0;
  int64_t block[kMaxBlockDims];
  int64_t pad_before[kMaxBlockDims];
  int64_t deep[kMaxBlockDims];   // the deep side's spatial dims
  int64_t limit[kMaxBlockDims];  // the wide side's (unpadded) spatial dims
  int64_t wide_batch = 0, product = 1, inner = 1;
};
template <typename T>
cudaError_t LaunchSpaceBatch(const T* in, T* out, const SpaceBatchMap& map, int64_t positions,
                             cudaStream_t stream);

// Resizes of NHWC images (kernels/image_plans.h, Note [Resize coordinates])
// with taps computed on the host: `taps` holds int64 input rows and columns
// -- bilinear: lower [out_h], upper [out_h], lower [out_w], upper [out_w];
// nearest: rows [out_h], columns [out_w] -- and `lerps` float row then
// column fractions [out_h + out_w]. For a gradient, "in" is the image the
// forward resize read and "out" the gradient's size; dx is zeroed first.
struct ResizeShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
};
template <typename T>
cudaError_t LaunchResizeBilinear(const ResizeShape& s, const T* in, const int64_t* taps,
                                 const float* lerps, float* out, cudaStream_t stream);
// dx (in's shape, T float or double) += each gradient along its 4 taps.
template <typename T>
cudaError_t LaunchResizeBilinearGrad(const ResizeShape& s, const float* grads, const int64_t* taps,
                                     const float* lerps, T* dx, cudaStream_t stream);
// T as in LaunchIndexGather.
template <typename T>
cudaError_t LaunchResizeNearest(const ResizeShape& s, const T* in, const int64_t* taps, T* out,
                                cudaStream_t stream);
// dx (in's shape, T float or double) += each gradient at its tap.
template <typename T>
cudaError_t LaunchResizeNearestGrad(const ResizeShape& s, const T* grads, const int64_t* taps,
                                    T* dx, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_INDEX_KERNELS_H_
