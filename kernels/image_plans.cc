#include "kernels/image_plans.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/kernel_util.h"

namespace towerflow {

absl::Status ResizeAttrs::Init(const KernelConstruction& c) {
  TW_RETURN_IF_ERROR(c.GetAttr("align_corners", &align_corners));
  TW_RETURN_IF_ERROR(c.GetAttr("half_pixel_centers", &half_pixel_centers));
  if (align_corners && half_pixel_centers) {
    return absl::InvalidArgumentError(
        "If half_pixel_centers is True, align_corners must be False.");
  }
  return absl::OkStatus();
}

absl::Status CheckImages(const Tensor& t, const char* what) {
  if (t.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 4-dimensional, got ", t.shape().DebugString()));
  }
  if (t.dim_size(1) <= 0 || t.dim_size(2) <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be of non-zero size, got ", t.shape().DebugString()));
  }
  if (t.dim_size(1) > INT32_MAX || t.dim_size(2) > INT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " height and width must fit in int32, got ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

namespace {

// The size input: two positive int32 values.
absl::StatusOr<std::pair<int64_t, int64_t>> ReadSize(const Tensor& size) {
  if (size.dims() != 1 || size.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must be 1-dimensional and have 2 elements, got ", size.shape().DebugString()));
  }
  const int64_t h = IntAt(size, 0), w = IntAt(size, 1);
  if (h <= 0 || w <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("output dimensions must be positive, got ", h, " x ", w));
  }
  return std::make_pair(h, w);
}

}  // namespace

absl::StatusOr<ResizeIo> ResizeOutput(KernelContext* ctx, const char* what) {
  const Tensor& in = ctx->input(0);
  TW_RETURN_IF_ERROR(CheckImages(in, what));
  TW_ASSIGN_OR_RETURN(auto size, ReadSize(ctx->input(1)));
  ResizeIo io{in.dim_size(0), in.dim_size(1), in.dim_size(2), in.dim_size(3),
              size.first,     size.second,    nullptr};
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims({io.n, io.out_h, io.out_w, io.c}));
  TW_ASSIGN_OR_RETURN(io.out, ctx->allocate_output(0, shape));
  return io;
}

absl::Status CheckResizeGrad(const Tensor& grads, const Tensor& original) {
  TW_RETURN_IF_ERROR(CheckImages(grads, "grads"));
  TW_RETURN_IF_ERROR(CheckImages(original, "original_image"));
  if (grads.dim_size(0) != original.dim_size(0) || grads.dim_size(3) != original.dim_size(3)) {
    return absl::InvalidArgumentError(
        absl::StrCat("grads ", grads.shape().DebugString(), " and original_image ",
                     original.shape().DebugString(), " differ in batch or depth"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SpaceBatchPlan> PlanSpaceBatch(bool to_batch, const TensorShape& in,
                                              const Tensor& block_shape, const Tensor& amounts) {
  const char* op = to_batch ? "SpaceToBatchND" : "BatchToSpaceND";
  const char* amounts_name = to_batch ? "paddings" : "crops";
  SpaceBatchPlan p;
  TW_ASSIGN_OR_RETURN(p.block, IntVector(block_shape, "block_shape"));
  const int64_t m = static_cast<int64_t>(p.block.size());
  if (block_shape.dims() != 1 || amounts.dims() != 2 || amounts.dim_size(0) != m ||
      amounts.dim_size(1) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": block_shape must be [M] and ", amounts_name, " [M, 2], got ",
                     block_shape.shape().DebugString(), " and ", amounts.shape().DebugString()));
  }
  if (m < 1 || in.dims() < m + 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input rank ", in.dims(),
                                                   " must be at least 1 + block_shape size ", m,
                                                   ", which must be at least 1"));
  }
  if (amounts.dtype() != DT_INT32 && amounts.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", amounts_name, " must be int32 or int64"));
  }
  p.pads.resize(2 * m);
  for (int64_t i = 0; i < 2 * m; ++i) p.pads[i] = IntAt(amounts, i);
  // The wide side's dims (padded, before cropping) and the deep side's.
  std::vector<int64_t> wide(in.dim_sizes().begin(), in.dim_sizes().end());
  p.deep = wide;
  for (int64_t k = 0; k < m; ++k) {
    const int64_t b = p.block[k], before = p.pads[2 * k], after = p.pads[2 * k + 1];
    if (b < 1 || before < 0 || after < 0 || b > (int64_t{1} << 30) || before > (int64_t{1} << 40) ||
        after > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": block_shape[", k, "] = ", b, " must be positive and ", amounts_name,
                       "[", k, "] = [", before, ", ", after, "] non-negative (and in range)"));
    }
    if (p.product > INT64_MAX / b) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": block_shape overflows"));
    }
    p.product *= b;
    const int64_t d = in.dim_size(k + 1);
    if (to_batch) {
      wide[k + 1] = d + before + after;
      if (wide[k + 1] % b != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": padded dimension ", k + 1, " (", wide[k + 1],
                         ") must be divisible by block_shape[", k, "] = ", b));
      }
      p.deep[k + 1] = wide[k + 1] / b;
    } else {
      if (d > INT64_MAX / b || d * b < before + after) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": crops [", before, ", ", after,
                                                       "] exceed dimension ", k + 1, " (", d,
                                                       ") times block_shape[", k, "] = ", b));
      }
      wide[k + 1] = d * b;
    }
  }
  std::vector<int64_t> out_dims;
  if (to_batch) {
    if (in.dim_size(0) > INT64_MAX / p.product) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": output batch overflows"));
    }
    p.deep[0] = in.dim_size(0) * p.product;
    p.wide_batch = in.dim_size(0);
    out_dims = p.deep;
  } else {
    if (in.dim_size(0) % p.product != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input batch ", in.dim_size(0),
                       " must be divisible by the product of block_shape, ", p.product));
    }
    wide[0] = in.dim_size(0) / p.product;
    p.wide_batch = wide[0];
    out_dims = wide;
    for (int64_t k = 0; k < m; ++k) out_dims[k + 1] -= p.pads[2 * k] + p.pads[2 * k + 1];
  }
  for (int64_t k = 0; k < m; ++k) {
    p.limit.push_back(to_batch ? in.dim_size(k + 1) : out_dims[k + 1]);
  }
  for (int d = static_cast<int>(m) + 1; d < in.dims(); ++d) p.inner *= in.dim_size(d);
  TW_ASSIGN_OR_RETURN(p.shape, TensorShape::FromDims(out_dims));
  return p;
}

absl::Status BlockAttrs::Init(const KernelConstruction& c) {
  TW_RETURN_IF_ERROR(c.GetAttr("block_size", &block));
  std::string format;
  TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
  if (format != "NHWC") {
    return absl::InvalidArgumentError(absl::StrCat(
        c.def().op(), " supports only NHWC data_format, as TF's CPU kernels. Got ", format));
  }
  if (block < 2 || block > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("block_size must be in [2, 2^20], got ", block));
  }
  return absl::OkStatus();
}

absl::StatusOr<BlockPlan> PlanBlock(bool to_space, int64_t block, const TensorShape& in) {
  if (in.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input rank should be: 4 instead of: ", in.dims()));
  }
  BlockPlan p;
  p.s = block;
  p.batch = in.dim_size(0);
  const int64_t s = block;
  if (to_space) {
    if (in.dim_size(3) % (s * s) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Input depth dimension ", in.dim_size(3),
                                                     " should be divisible by: ", s * s));
    }
    p.h = in.dim_size(1);
    p.w = in.dim_size(2);
    p.c = in.dim_size(3) / (s * s);
    TW_ASSIGN_OR_RETURN(p.shape, TensorShape::FromDims({p.batch, p.h * s, p.w * s, p.c}));
  } else {
    if (in.dim_size(1) % s != 0 || in.dim_size(2) % s != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Image width ", in.dim_size(2), " and height ",
                                                     in.dim_size(1),
                                                     " should be divisible by block_size: ", s));
    }
    p.h = in.dim_size(1) / s;
    p.w = in.dim_size(2) / s;
    p.c = in.dim_size(3);
    TW_ASSIGN_OR_RETURN(p.shape, TensorShape::FromDims({p.batch, p.h, p.w, p.c * s * s}));
  }
  return p;
}

}  // namespace towerflow
