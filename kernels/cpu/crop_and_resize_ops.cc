// CropAndResize and its gradients (ops/image_ops.cc), with TF's arithmetic
// (crop_and_resize_op.cc): a box [y1, x1, y2, x2] in normalised
// coordinates samples crop_size points spread evenly from its first corner
// to its second (one point: the centre), bilinearly or at the nearest
// pixel; points outside the image take extrapolation_value. Built without
// FMA contraction (kernels/BUILD), so the sample points are TF's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

// boxes [n, 4] and box_ind [n] (both empty is n = 0).
absl::StatusOr<int64_t> CheckBoxes(const Tensor& boxes, const Tensor& box_ind) {
  if (boxes.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("boxes must be 2-D, got: ", boxes.shape().DebugString()));
  }
  if (box_ind.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("box_indices must be rank 1 but is shape ", box_ind.shape().DebugString()));
  }
  if (boxes.NumElements() == 0 && box_ind.NumElements() == 0) return 0;
  if (boxes.shape().dim_size(1) != 4) {
    return absl::InvalidArgumentError("boxes must have 4 columns");
  }
  const int64_t n = boxes.shape().dim_size(0);
  if (box_ind.shape().dim_size(0) != n) {
    return absl::InvalidArgumentError("box_index has incompatible shape");
  }
  const float* b = boxes.data<float>();
  for (int64_t i = 0; i < 4 * n; ++i) {
    // TF checks the forward op only; its gradients would cast NaN to int.
    if (!std::isfinite(b[i])) {
      return absl::InvalidArgumentError("Boxes contains at least one element that is not finite");
    }
  }
  return n;
}

absl::Status CheckBoxIndex(const Tensor& box_ind, int64_t batch) {
  const int32_t* ind = box_ind.data<int32_t>();
  for (int64_t i = 0; i < box_ind.NumElements(); ++i) {
    if (ind[i] < 0 || ind[i] >= batch) {
      return absl::OutOfRangeError("box_index has values outside [0, batch_size)");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckImageSize(int64_t height, int64_t width) {
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError("image dimensions must be positive");
  }
  return absl::OkStatus();
}

// The sample coordinates along one axis of a box, as TF computes them:
// first + i * (last - first) * (size - 1) / (crop - 1), or the centre.
struct Axis {
  float first, scale;
  bool single;
  int64_t size;
  float At(int64_t i, float lo, float hi) const {
    if (single) return static_cast<float>(0.5 * (lo + hi) * (size - 1));
    return first + i * scale;
  }
};
Axis ForwardAxis(float lo, float hi, int64_t size, int64_t crop) {
  return {lo * (size - 1), crop > 1 ? (hi - lo) * (size - 1) / (crop - 1) : 0, crop <= 1, size};
}

struct Sample {
  int64_t lo, hi;
  float lerp;
  bool inside;
};
Sample At(float in, int64_t size) {
  if (in < 0 || in > size - 1) return {0, 0, 0, false};
  const int64_t lo = static_cast<int64_t>(std::floor(in));
  return {lo, static_cast<int64_t>(std::ceil(in)), in - lo, true};
}

// The image [batch, height, width, depth] read as float, and the four
// pixels around a bilinear sample.
template <typename T>
struct ImageView {
  const T* data;
  int64_t height, width, depth;
  float operator()(int64_t b, int64_t y, int64_t x, int64_t d) const {
    return static_cast<float>(data[((b * height + y) * width + x) * depth + d]);
  }
};
struct Corners {
  float tl, tr, bl, br;
};
template <typename T>
Corners CornersAt(const ImageView<T>& image, int64_t b, const Sample& sy, const Sample& sx,
                  int64_t d) {
  return {image(b, sy.lo, sx.lo, d), image(b, sy.lo, sx.hi, d), image(b, sy.hi, sx.lo, d),
          image(b, sy.hi, sx.hi, d)};
}

template <typename T>
class CropAndResizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("method", &method_));
    return c.GetAttr("extrapolation_value", &extrapolation_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    const Tensor& box_ind = ctx->input(2);
    const Tensor& crop_size = ctx->input(3);
    if (image.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input image must be 4-D", image.shape().DebugString()));
    }
    const int64_t batch = image.shape().dim_size(0), height = image.shape().dim_size(1),
                  width = image.shape().dim_size(2), depth = image.shape().dim_size(3);
    TW_RETURN_IF_ERROR(CheckImageSize(height, width));
    TW_ASSIGN_OR_RETURN(const int64_t n, CheckBoxes(boxes, box_ind));
    if (crop_size.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("crop_size must be 1-D", crop_size.shape().DebugString()));
    }
    if (crop_size.NumElements() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("crop_size must have two elements", crop_size.shape().DebugString()));
    }
    const int64_t ch = crop_size.data<int32_t>()[0], cw = crop_size.data<int32_t>()[1];
    if (ch <= 0 || cw <= 0) return absl::InvalidArgumentError("crop dimensions must be positive");
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n, ch, cw, depth})));
    TW_RETURN_IF_ERROR(CheckBoxIndex(box_ind, batch));
    const T* img = image.data<T>();
    const float* bx = boxes.data<float>();
    const int32_t* ind = box_ind.data<int32_t>();
    float* crops = out->data<float>();
    const bool nearest = method_ == "nearest";
    const ImageView<T> pixel{img, height, width, depth};
    ctx->intra_op_pool()->ParallelFor(n, ch * cw * depth * 8, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const float y1 = bx[4 * b], x1 = bx[4 * b + 1], y2 = bx[4 * b + 2], x2 = bx[4 * b + 3];
        const Axis ay = ForwardAxis(y1, y2, height, ch), ax = ForwardAxis(x1, x2, width, cw);
        float* o = crops + b * ch * cw * depth;
        for (int64_t y = 0; y < ch; ++y) {
          const float in_y = ay.At(y, y1, y2);
          const Sample sy = At(in_y, height);
          for (int64_t x = 0; x < cw; ++x, o += depth) {
            const float in_x = ax.At(x, x1, x2);
            const Sample sx = At(in_x, width);
            if (!sy.inside || !sx.inside) {
              std::fill_n(o, depth, extrapolation_);
            } else if (nearest) {
              const int64_t yy = std::lround(in_y), xx = std::lround(in_x);
              for (int64_t d = 0; d < depth; ++d) o[d] = pixel(ind[b], yy, xx, d);
            } else {
              for (int64_t d = 0; d < depth; ++d) {
                const Corners p = CornersAt(pixel, ind[b], sy, sx, d);
                const float top = p.tl + (p.tr - p.tl) * sx.lerp;
                const float bottom = p.bl + (p.br - p.bl) * sx.lerp;
                o[d] = top + (bottom - top) * sy.lerp;
              }
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  std::string method_;
  float extrapolation_ = 0;
};

// grads [n, h, w, depth] and the boxes they came from.
absl::Status CheckGrads(const Tensor& grads, int64_t n) {
  if (grads.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("grads image must be 4-D", grads.shape().DebugString()));
  }
  if (grads.shape().dim_size(1) <= 0 || grads.shape().dim_size(2) <= 0) {
    return absl::InvalidArgumentError("grads dimensions must be positive");
  }
  if (grads.shape().dim_size(0) != n) {
    return absl::InvalidArgumentError("boxes and grads have incompatible shape");
  }
  return absl::OkStatus();
}

// The image gradient: each crop's gradient spread back onto the pixels it
// sampled. Boxes of one image add up in box order (TF's order with one
// thread); images run in parallel.
template <typename T>
class CropAndResizeGradImageOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("method", &method_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    const Tensor& box_ind = ctx->input(2);
    const Tensor& size = ctx->input(3);
    if (grads.dims() != 4) return CheckGrads(grads, 0);
    TW_ASSIGN_OR_RETURN(const int64_t n, CheckBoxes(boxes, box_ind));
    TW_RETURN_IF_ERROR(CheckGrads(grads, n));
    if (size.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("image_size must be 1-D", size.shape().DebugString()));
    }
    if (size.NumElements() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("image_size must have 4 elements", size.shape().DebugString()));
    }
    const int32_t* s = size.data<int32_t>();
    const int64_t batch = s[0], height = s[1], width = s[2], depth = s[3];
    TW_RETURN_IF_ERROR(CheckImageSize(height, width));
    if (grads.shape().dim_size(3) != depth) {
      return absl::InvalidArgumentError("image_size and grads are incompatible");
    }
    TensorShape shape;
    for (int64_t d : {batch, height, width, depth}) TW_RETURN_IF_ERROR(shape.AddDim(d));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    TW_RETURN_IF_ERROR(CheckBoxIndex(box_ind, batch));
    T* img = out->data<T>();
    std::fill_n(img, out->NumElements(), T(0));
    const int64_t ch = grads.shape().dim_size(1), cw = grads.shape().dim_size(2);
    const float* g = grads.data<float>();
    const float* bx = boxes.data<float>();
    const int32_t* ind = box_ind.data<int32_t>();
    const bool nearest = method_ == "nearest";
    const auto add = [&](int64_t b, int64_t y, int64_t x, int64_t d, float v) {
      img[((b * height + y) * width + x) * depth + d] += static_cast<T>(v);
    };
    ctx->intra_op_pool()->ParallelFor(
        batch, n * ch * cw * depth / std::max<int64_t>(batch, 1) * 8,
        [&](int64_t first_image, int64_t last_image) {
          for (int64_t b = 0; b < n; ++b) {
            if (ind[b] < first_image || ind[b] >= last_image) continue;
            const float y1 = bx[4 * b], x1 = bx[4 * b + 1], y2 = bx[4 * b + 2], x2 = bx[4 * b + 3];
            const Axis ay = ForwardAxis(y1, y2, height, ch), ax = ForwardAxis(x1, x2, width, cw);
            for (int64_t y = 0; y < ch; ++y) {
              const float in_y = ay.At(y, y1, y2);
              const Sample sy = At(in_y, height);
              if (!sy.inside) continue;
              for (int64_t x = 0; x < cw; ++x) {
                const float in_x = ax.At(x, x1, x2);
                const Sample sx = At(in_x, width);
                if (!sx.inside) continue;
                const float* gp = g + ((b * ch + y) * cw + x) * depth;
                if (nearest) {
                  const int64_t yy = std::lround(in_y), xx = std::lround(in_x);
                  for (int64_t d = 0; d < depth; ++d) add(ind[b], yy, xx, d, gp[d]);
                  continue;
                }
                for (int64_t d = 0; d < depth; ++d) {
                  const float dtop = (1 - sy.lerp) * gp[d];
                  add(ind[b], sy.lo, sx.lo, d, (1 - sx.lerp) * dtop);
                  add(ind[b], sy.lo, sx.hi, d, sx.lerp * dtop);
                  const float dbottom = sy.lerp * gp[d];
                  add(ind[b], sy.hi, sx.lo, d, (1 - sx.lerp) * dbottom);
                  add(ind[b], sy.hi, sx.hi, d, sx.lerp * dbottom);
                }
              }
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  std::string method_;
};

// The boxes' gradient: the image's slope at each bilinear sample times the
// sample's share of each corner coordinate (TF's, whose ratios here are
// (size - 1) / (crop - 1) taken first, unlike the forward pass).
template <typename T>
class CropAndResizeGradBoxesOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& image = ctx->input(1);
    const Tensor& boxes = ctx->input(2);
    const Tensor& box_ind = ctx->input(3);
    if (grads.dims() != 4) return CheckGrads(grads, 0);
    if (grads.shape().dim_size(1) <= 0 || grads.shape().dim_size(2) <= 0) {
      return absl::InvalidArgumentError("grads dimensions must be positive");
    }
    if (image.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input image must be 4-D", image.shape().DebugString()));
    }
    const int64_t batch = image.shape().dim_size(0), height = image.shape().dim_size(1),
                  width = image.shape().dim_size(2), depth = image.shape().dim_size(3);
    TW_RETURN_IF_ERROR(CheckImageSize(height, width));
    if (grads.shape().dim_size(3) != depth) {
      return absl::InvalidArgumentError("image, grads depth differ");
    }
    TW_ASSIGN_OR_RETURN(const int64_t n, CheckBoxes(boxes, box_ind));
    TW_RETURN_IF_ERROR(CheckGrads(grads, n));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n, 4})));
    TW_RETURN_IF_ERROR(CheckBoxIndex(box_ind, batch));
    const int64_t ch = grads.shape().dim_size(1), cw = grads.shape().dim_size(2);
    const T* img = image.data<T>();
    const float* g = grads.data<float>();
    const float* bx = boxes.data<float>();
    const int32_t* ind = box_ind.data<int32_t>();
    float* gb = out->data<float>();
    const float h_ratio = ch > 1 ? static_cast<float>(height - 1) / (ch - 1) : 0;
    const float w_ratio = cw > 1 ? static_cast<float>(width - 1) / (cw - 1) : 0;
    const ImageView<T> pixel{img, height, width, depth};
    ctx->intra_op_pool()->ParallelFor(n, ch * cw * depth * 16, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        float* o = gb + 4 * b;
        std::fill_n(o, 4, 0.0f);
        const float y1 = bx[4 * b], x1 = bx[4 * b + 1], y2 = bx[4 * b + 2], x2 = bx[4 * b + 3];
        const Axis ay{y1 * (height - 1), ch > 1 ? (y2 - y1) * h_ratio : 0, ch <= 1, height};
        const Axis ax{x1 * (width - 1), cw > 1 ? (x2 - x1) * w_ratio : 0, cw <= 1, width};
        for (int64_t y = 0; y < ch; ++y) {
          const Sample sy = At(ay.At(y, y1, y2), height);
          if (!sy.inside) continue;
          for (int64_t x = 0; x < cw; ++x) {
            const Sample sx = At(ax.At(x, x1, x2), width);
            if (!sx.inside) continue;
            for (int64_t d = 0; d < depth; ++d) {
              const Corners p = CornersAt(pixel, ind[b], sy, sx, d);
              const float top_grad = g[((b * ch + y) * cw + x) * depth + d];
              const float grad_y =
                  ((1 - sx.lerp) * (p.bl - p.tl) + sx.lerp * (p.br - p.tr)) * top_grad;
              const float grad_x =
                  ((1 - sy.lerp) * (p.tr - p.tl) + sy.lerp * (p.br - p.bl)) * top_grad;
              if (ch > 1) {
                o[0] += grad_y * (height - 1 - y * h_ratio);
                o[2] += grad_y * (y * h_ratio);
              } else {
                o[0] += grad_y * 0.5 * (height - 1);
                o[2] += grad_y * 0.5 * (height - 1);
              }
              if (cw > 1) {
                o[1] += grad_x * (width - 1 - x * w_ratio);
                o[3] += grad_x * (x * w_ratio);
              } else {
                o[1] += grad_x * 0.5 * (width - 1);
                o[3] += grad_x * 0.5 * (width - 1);
              }
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(crop_and_resize_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<CropAndResizeOp, float, double, int32_t, int64_t, uint8_t>(
      cpu("CropAndResize"), "T");
  RegisterTypedKernels<CropAndResizeGradBoxesOp, float, double, int32_t, int64_t, uint8_t>(
      cpu("CropAndResizeGradBoxes"), "T");
  RegisterTypedKernels<CropAndResizeGradImageOp, float, double>(cpu("CropAndResizeGradImage"), "T");
}

}  // namespace
}  // namespace towerflow
