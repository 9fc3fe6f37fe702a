// Image resizing (ResizeBilinear, ResizeNearestNeighbor and their
// gradients) on NHWC, and SpaceToBatchND / BatchToSpaceND.
//
// Note [Resize coordinates]
// Output pixel i of a dimension resized from `in` to `out` samples input
// coordinate scaler(i), with scale = (in - 1) / (out - 1) under
// align_corners (out > 1) and in / out otherwise (TF's
// CalculateResizeScale):
//   bilinear: i * scale, or (i + 0.5) * scale - 0.5 with half_pixel_centers;
//             it blends rows floor and ceil (clamped into [0, in)) by the
//             fraction;
//   nearest:  i * scale, or (i + 0.5) * scale with half_pixel_centers,
//             rounded under align_corners and floored otherwise, at most
//             in - 1.
// The gradients send each output pixel's gradient back along the same
// weights. Coordinates are computed in float, as TF does, so results match
// TF's bit for bit on the same inputs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

struct ResizeAttrs {
  bool align_corners = false;
  bool half_pixel_centers = false;

  absl::Status Init(const KernelConstruction& c) {
    TW_RETURN_IF_ERROR(c.GetAttr("align_corners", &align_corners));
    TW_RETURN_IF_ERROR(c.GetAttr("half_pixel_centers", &half_pixel_centers));
    if (align_corners && half_pixel_centers) {
      return absl::InvalidArgumentError(
          "If half_pixel_centers is True, align_corners must be False.");
    }
    return absl::OkStatus();
  }
  float Scale(int64_t in, int64_t out) const {
    return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
  }
};

// A 4-D NHWC tensor's dims, checked: a non-empty image.
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

// A resize's image input (input 0) and size (input 1), and output 0
// allocated as [N, size[0], size[1], C].
struct ResizeIo {
  int64_t n, in_h, in_w, c, out_h, out_w;
  Tensor* out;
};

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

// One dimension's bilinear taps for each output index.
struct Taps {
  std::vector<int64_t> lower, upper;
  std::vector<float> lerp;
};

Taps BilinearTaps(const ResizeAttrs& a, int64_t in, int64_t out) {
  const float scale = a.Scale(in, out);
  Taps t;
  t.lower.resize(out);
  t.upper.resize(out);
  t.lerp.resize(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = a.half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                         : static_cast<float>(i) * scale;
    const float f = std::floor(x);
    t.lower[i] = std::max<int64_t>(static_cast<int64_t>(f), 0);
    t.upper[i] = std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1);
    t.lerp[i] = x - f;
  }
  return t;
}

// The input index that output index i of a nearest-neighbour resize reads.
std::vector<int64_t> NearestTaps(const ResizeAttrs& a, int64_t in, int64_t out) {
  const float scale = a.Scale(in, out);
  std::vector<int64_t> src(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = a.half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale
                                         : static_cast<float>(i) * scale;
    const int64_t j = static_cast<int64_t>(a.align_corners ? std::round(x) : std::floor(x));
    src[i] = std::max<int64_t>(0, std::min(j, in - 1));
  }
  return src;
}

template <typename T>
class ResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    const int64_t n = io.n, ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    if (out->NumElements() == 0) return absl::OkStatus();
    const Taps ys = BilinearTaps(a_, ih, oh), xs = BilinearTaps(a_, iw, ow);
    const T* x = in.data<T>();
    float* y = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(n * oh, ow * c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        const T* top = x + (b * ih + ys.lower[i]) * iw * c;
        const T* bottom = x + (b * ih + ys.upper[i]) * iw * c;
        const float dy = ys.lerp[i];
        float* dst = y + row * ow * c;
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t l = xs.lower[j] * c, r = xs.upper[j] * c;
          const float dx = xs.lerp[j];
          for (int64_t k = 0; k < c; ++k) {
            const float tl = static_cast<float>(top[l + k]), tr = static_cast<float>(top[r + k]);
            const float bl = static_cast<float>(bottom[l + k]);
            const float br = static_cast<float>(bottom[r + k]);
            const float t = tl + (tr - tl) * dx, u = bl + (br - bl) * dx;
            dst[j * c + k] = t + (u - t) * dy;
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeBilinearGrad(grads, original_image): each gradient split over its
// four taps. Images run in parallel (taps of one image overlap).
template <typename T>
class ResizeBilinearGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckImages(grads, "grads"));
    TW_RETURN_IF_ERROR(CheckImages(original, "original_image"));
    if (grads.dim_size(0) != original.dim_size(0) || grads.dim_size(3) != original.dim_size(3)) {
      return absl::InvalidArgumentError(
          absl::StrCat("grads ", grads.shape().DebugString(), " and original_image ",
                       original.shape().DebugString(), " differ in batch or depth"));
    }
    const int64_t n = grads.dim_size(0), gh = grads.dim_size(1), gw = grads.dim_size(2),
                  c = grads.dim_size(3), oh = original.dim_size(1), ow = original.dim_size(2);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, original.shape()));
    out->flat<T>().setZero();
    if (out->NumElements() == 0) return absl::OkStatus();
    const Taps ys = BilinearTaps(a_, oh, gh), xs = BilinearTaps(a_, ow, gw);
    const float* g = grads.data<float>();
    T* dx = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(n, gh * gw * c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < gh; ++i) {
          T* top = dx + (b * oh + ys.lower[i]) * ow * c;
          T* bottom = dx + (b * oh + ys.upper[i]) * ow * c;
          const float wy = ys.lerp[i];
          const float* src = g + (b * gh + i) * gw * c;
          for (int64_t j = 0; j < gw; ++j) {
            const int64_t l = xs.lower[j] * c, r = xs.upper[j] * c;
            const float wx = xs.lerp[j];
            for (int64_t k = 0; k < c; ++k) {
              const float v = src[j * c + k];
              top[l + k] += static_cast<T>(v * (1 - wy) * (1 - wx));
              top[r + k] += static_cast<T>(v * (1 - wy) * wx);
              bottom[l + k] += static_cast<T>(v * wy * (1 - wx));
              bottom[r + k] += static_cast<T>(v * wy * wx);
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeNearestNeighbor copies depth runs, so it runs on any element size.
class ResizeNearestOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("ResizeNearestNeighbor", in.dtype()));
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    const int64_t n = io.n, ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> ys = NearestTaps(a_, ih, oh), xs = NearestTaps(a_, iw, ow);
    const char* x = static_cast<const char*>(in.raw_data());
    char* y = static_cast<char*>(out->raw_data());
    const size_t run = c * elem;
    ctx->intra_op_pool()->ParallelFor(n * oh, ow * c, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        const char* src = x + (b * ih + ys[i]) * iw * run;
        char* dst = y + row * ow * run;
        for (int64_t j = 0; j < ow; ++j) std::memcpy(dst + j * run, src + xs[j] * run, run);
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeNearestNeighborGrad(grads, size): each gradient added to the pixel
// of the size-shaped image that the forward resize (size -> grads) read.
template <typename T>
class ResizeNearestGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "grads"));
    const int64_t n = io.n, gh = io.in_h, gw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    out->flat<T>().setZero();
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> ys = NearestTaps(a_, oh, gh), xs = NearestTaps(a_, ow, gw);
    const T* g = grads.data<T>();
    T* dx = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(n, gh * gw * c, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < gh; ++i) {
          T* dst = dx + (b * oh + ys[i]) * ow * c;
          const T* src = g + (b * gh + i) * gw * c;
          for (int64_t j = 0; j < gw; ++j) {
            for (int64_t k = 0; k < c; ++k) dst[xs[j] * c + k] += src[j * c + k];
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// SpaceToBatchND (to_batch) and BatchToSpaceND on input [B, S1..SM, R...]
// with block_shape [M]: the batch of the "deep" side is
// (i1 * b2 * ... * bM + ... + iM) * B + b for block offsets (i1..iM) and
// batch b of the "wide" side, whose spatial index k is o_k * b_k + i_k,
// minus the padding (or crop) before it. Runs of the R dims are copied as
// bytes; padding is zero.
class SpaceBatchOp : public OpKernel {
 public:
  explicit SpaceBatchOp(bool to_batch) : to_batch_(to_batch) {}
  absl::Status Compute(KernelContext* ctx) override {
    const char* op = to_batch_ ? "SpaceToBatchND" : "BatchToSpaceND";
    const char* amounts_name = to_batch_ ? "paddings" : "crops";
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> block, IntVector(ctx->input(1), "block_shape"));
    const Tensor& amounts = ctx->input(2);
    const int64_t m = static_cast<int64_t>(block.size());
    if (ctx->input(1).dims() != 1 || amounts.dims() != 2 || amounts.dim_size(0) != m ||
        amounts.dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": block_shape must be [M] and ", amounts_name, " [M, 2], got ",
          ctx->input(1).shape().DebugString(), " and ", amounts.shape().DebugString()));
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
    std::vector<int64_t> pads(2 * m);
    for (int64_t i = 0; i < 2 * m; ++i) pads[i] = IntAt(amounts, i);
    // The wide side's dims (padded, before cropping) and the deep side's.
    std::vector<int64_t> wide(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    std::vector<int64_t> deep = wide;
    int64_t product = 1;
    for (int64_t k = 0; k < m; ++k) {
      const int64_t b = block[k], before = pads[2 * k], after = pads[2 * k + 1];
      if (b < 1 || before < 0 || after < 0 || b > (int64_t{1} << 30) ||
          before > (int64_t{1} << 40) || after > (int64_t{1} << 40)) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": block_shape[", k, "] = ", b, " must be positive and ", amounts_name,
                         "[", k, "] = [", before, ", ", after, "] non-negative (and in range)"));
      }
      if (product > INT64_MAX / b) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": block_shape overflows"));
      }
      product *= b;
      const int64_t d = in.dim_size(k + 1);
      if (to_batch_) {
        wide[k + 1] = d + before + after;
        if (wide[k + 1] % b != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(op, ": padded dimension ", k + 1, " (", wide[k + 1],
                           ") must be divisible by block_shape[", k, "] = ", b));
        }
        deep[k + 1] = wide[k + 1] / b;
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
    if (to_batch_) {
      if (in.dim_size(0) > INT64_MAX / product) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": output batch overflows"));
      }
      deep[0] = in.dim_size(0) * product;
      out_dims = deep;
    } else {
      if (in.dim_size(0) % product != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": input batch ", in.dim_size(0),
                         " must be divisible by the product of block_shape, ", product));
      }
      wide[0] = in.dim_size(0) / product;
      out_dims = wide;
      for (int64_t k = 0; k < m; ++k) out_dims[k + 1] -= pads[2 * k] + pads[2 * k + 1];
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(out_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize(op, in.dtype()));
    int64_t inner = 1;
    for (int d = static_cast<int>(m) + 1; d < in.dims(); ++d) inner *= in.dim_size(d);
    const size_t run = inner * elem;
    // Walk the deep side's outer positions [batch, o1..oM]; each is one
    // wide position or padding (cropping covers every wide position once).
    const int64_t wide_batch = to_batch_ ? in.dim_size(0) : wide[0];
    const Tensor& deep_t = to_batch_ ? *out : in;
    const int64_t positions = deep_t.NumElements() / std::max<int64_t>(inner, 1);
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    ctx->intra_op_pool()->ParallelFor(positions, inner, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> o(m);
      for (int64_t p = begin; p < end; ++p) {
        int64_t rest = p;
        for (int64_t k = m - 1; k >= 0; --k) {
          o[k] = rest % deep[k + 1];
          rest /= deep[k + 1];
        }
        const int64_t b = rest % wide_batch;
        // Block offsets, row-major over block_shape, give the strides of
        // the wide index.
        int64_t offset = rest / wide_batch, block_stride = product, wide_pos = b;
        bool outside = false;
        for (int64_t k = 0; k < m; ++k) {
          block_stride /= block[k];
          const int64_t i = offset / block_stride;
          offset %= block_stride;
          const int64_t s = o[k] * block[k] + i - pads[2 * k];
          const int64_t limit = to_batch_ ? in.dim_size(k + 1) : out_dims[k + 1];
          outside = outside || s < 0 || s >= limit;
          wide_pos = wide_pos * limit + (outside ? 0 : s);
        }
        if (to_batch_) {
          if (outside) {
            std::memset(dst + p * run, 0, run);
          } else {
            std::memcpy(dst + p * run, src + wide_pos * run, run);
          }
        } else if (!outside) {
          std::memcpy(dst + wide_pos * run, src + p * run, run);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const bool to_batch_;
};

TW_REGISTER_KERNELS(image_ops) {
  const auto cpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceCpu).HostMemory("size");
  };
  RegisterTypedKernels<ResizeBilinearOp, float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                       uint16_t>(cpu("ResizeBilinear"), "T");
  RegisterTypedKernels<ResizeBilinearGradOp, float, double>(
      KernelDefBuilder("ResizeBilinearGrad").Device(kDeviceCpu), "T");
  RegisterKernel(cpu("ResizeNearestNeighbor"), [] { return std::make_unique<ResizeNearestOp>(); });
  RegisterTypedKernels<ResizeNearestGradOp, float, double, int32_t, uint8_t, int8_t>(
      cpu("ResizeNearestNeighborGrad"), "T");
  const auto block = [](const char* op, const char* amounts) {
    return KernelDefBuilder(op).Device(kDeviceCpu).HostMemory("block_shape").HostMemory(amounts);
  };
  RegisterKernel(block("SpaceToBatchND", "paddings"),
                 [] { return std::make_unique<SpaceBatchOp>(true); });
  RegisterKernel(block("BatchToSpaceND", "crops"),
                 [] { return std::make_unique<SpaceBatchOp>(false); });
}

}  // namespace
}  // namespace towerflow
