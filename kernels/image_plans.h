// The host-side plans of the image and block-rearranging kernels, shared by
// the CPU kernels (kernels/cpu/image_ops.cc) and their GPU twins so that
// both refuse the same inputs with the same errors and sample the same
// pixels: resizes (ResizeBilinear, ResizeNearestNeighbor and their
// gradients, NHWC), SpaceToBatchND / BatchToSpaceND, and DepthToSpace /
// SpaceToDepth.
//
// The resize coordinates are core/image_geometry.h's (Note [Resize
// coordinates] there), which the input pipeline's resizes share.
#ifndef TOWERFLOW_KERNELS_IMAGE_PLANS_H_
#define TOWERFLOW_KERNELS_IMAGE_PLANS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/image_geometry.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/tensor.h"

namespace towerflow {

struct ResizeAttrs : ResizeCoordinates {
  // Reads both attrs; InvalidArgument when both are set (TF's rule).
  absl::Status Init(const KernelConstruction& c);
};

// InvalidArgument unless `t` is a 4-D NHWC image of non-zero height and
// width that fit int32; `what` names it.
absl::Status CheckImages(const Tensor& t, const char* what);

// A resize's image input (input 0) and size (input 1, two positive
// values), and output 0 allocated as [N, size[0], size[1], C].
struct ResizeIo {
  int64_t n, in_h, in_w, c, out_h, out_w;
  Tensor* out;
};
absl::StatusOr<ResizeIo> ResizeOutput(KernelContext* ctx, const char* what);

// ResizeBilinearGrad's and ResizeBicubicGrad's inputs checked: both
// images, batch and depth equal.
absl::Status CheckResizeGrad(const Tensor& grads, const Tensor& original);

// SpaceToBatchND (to_batch) and BatchToSpaceND on input [B, S1..SM, R...]
// with block_shape [M] and paddings (crops) [M, 2]: the batch of the "deep"
// side is (i1 * b2 * ... * bM + ... + iM) * B + b for block offsets
// (i1..iM) and batch b of the "wide" side, whose spatial index k is
// o_k * b_k + i_k minus the padding (or crop) before it.
struct SpaceBatchPlan {
  std::vector<int64_t> block;  // M block sizes
  std::vector<int64_t> pads;   // 2M: before and after for each block dim
  std::vector<int64_t> deep;   // the deep side's dims (1 + M + rest)
  std::vector<int64_t> limit;  // M: the wide side's spatial dims (unpadded)
  int64_t wide_batch = 0;      // the wide side's batch
  int64_t product = 1;         // prod(block)
  int64_t inner = 1;           // elements of the R dims
  TensorShape shape;           // the output's
};
// InvalidArgument for block_shape or amounts of the wrong shape or type, a
// block that is not positive, negative amounts, a padded dim the block does
// not divide, crops past a dim, a batch the blocks do not divide, or an
// overflow.
absl::StatusOr<SpaceBatchPlan> PlanSpaceBatch(bool to_batch, const TensorShape& in,
                                              const Tensor& block_shape, const Tensor& amounts);

// DepthToSpace (to_space) and SpaceToDepth on NHWC (TF's CPU kernels take
// no other layout): out[b, y * s + i, x * s + j, k] = in[b, y, x, (i * s +
// j) * c + k] for DepthToSpace, and the inverse, where the "deep" side is
// [batch, h, w, c * s * s] and the spatial side [batch, h * s, w * s, c].
struct BlockAttrs {
  int64_t block = 2;  // s
  // InvalidArgument for a data_format other than NHWC or a block_size
  // outside [2, 2^20] (TF has no upper bound; it keeps shapes from
  // overflowing).
  absl::Status Init(const KernelConstruction& c);
};
struct BlockPlan {
  int64_t batch = 0, h = 0, w = 0, c = 0, s = 2;
  TensorShape shape;  // the output's
};
// InvalidArgument unless `in` is 4-D with a depth (DepthToSpace) or a
// height and width (SpaceToDepth) that the block divides.
absl::StatusOr<BlockPlan> PlanBlock(bool to_space, int64_t block, const TensorShape& in);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_IMAGE_PLANS_H_
