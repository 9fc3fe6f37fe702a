// The colour kernels (ops/color_ops.cc), with TF's arithmetic: RGBToHSV
// and HSVToRGB as TF's Eigen functors (colorspace_op.h), AdjustHue and
// AdjustSaturation pixel by pixel with TF's own hue sectors, and
// AdjustContrastv2 with TF's folded per-channel sums, so each float is
// TF's. Built without FMA contraction (kernels/BUILD), as TF's are.
//
// Where TF's loops would hang (AdjustHue with an infinite delta) or cast a
// NaN to an int, these give an error or the value TF gets on x86.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

template <typename T>
using Pixels = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 3, Eigen::RowMajor>>;
template <typename T>
using MutablePixels = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 3, Eigen::RowMajor>>;

// RGBToHSV and HSVToRGB take [..., 3].
absl::StatusOr<int64_t> PixelCount(const Tensor& images) {
  if (images.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be at least 1D", images.shape().DebugString()));
  }
  const int64_t channels = images.shape().dim_size(images.dims() - 1);
  if (channels != 3) {
    return absl::FailedPreconditionError(
        absl::StrCat("input must have 3 channels but input only has ", channels, " channels."));
  }
  return images.NumElements() / 3;
}

template <typename T, bool kToHsv>
class ColorSpaceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const int64_t n, PixelCount(in));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    ctx->intra_op_pool()->ParallelFor(n, 40, [&](int64_t begin, int64_t end) {
      const Pixels<T> x(in.data<T>() + 3 * begin, end - begin, 3);
      MutablePixels<T> y(out->data<T>() + 3 * begin, end - begin, 3);
      if constexpr (kToHsv) {
        const auto r = x.col(0), g = x.col(1), b = x.col(2);
        const auto v = x.rowwise().maxCoeff().eval();
        const auto range = (v - x.rowwise().minCoeff()).eval();
        y.col(1) = (v > T(0)).select(range / v, T(0));
        const auto norm = (range.inverse() * (T(1) / T(6))).eval();
        auto h = ((r == v).select(norm * (g - b), (g == v).select(norm * (b - r) + T(2) / T(6),
                                                                  norm * (r - g) + T(4) / T(6))))
                     .eval();
        h = (range > T(0)).select(h, T(0));
        y.col(0) = (h < T(0)).select(h + T(1), h);
        y.col(2) = v;
      } else {
        const auto h = x.col(0), s = x.col(1), v = x.col(2);
        const auto dh = (h * T(6)).eval();
        const auto one_s = (-s + T(1)).eval();
        const auto dr = (((dh - T(3)).abs() - T(1)).max(T(0)).min(T(1))).eval();
        const auto dg = ((-(dh - T(2)).abs() + T(2)).max(T(0)).min(T(1))).eval();
        const auto db = ((-(dh - T(4)).abs() + T(2)).max(T(0)).min(T(1))).eval();
        y.col(0) = (one_s + s * dr) * v;
        y.col(1) = (one_s + s * dg) * v;
        y.col(2) = (one_s + s * db) * v;
      }
    });
    return absl::OkStatus();
  }
};

// The adjustments take [..., H, W, 3] and a scalar.
absl::StatusOr<float> AdjustArgs(const Tensor& images, const Tensor& scalar, const char* name,
                                 bool three_channels) {
  if (images.dims() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be at least 3-D, got shape", images.shape().DebugString()));
  }
  if (scalar.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be scalar: ", scalar.shape().DebugString()));
  }
  const int64_t channels = images.shape().dim_size(images.dims() - 1);
  if (three_channels && channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must have 3 channels but instead has ", channels, " channels."));
  }
  return *scalar.data<float>();
}

// Hue in [0, 6) and the value range of one pixel, by its sector (TF's
// adjust_hue_op.cc: ties may fall either side).
struct HueRange {
  float h, lo, hi;
};
HueRange ToHueRange(float r, float g, float b) {
  float mid;
  int sector;
  HueRange out;
  if (r < g) {
    if (b < r) {
      out.hi = g, mid = r, out.lo = b, sector = 1;
    } else if (b > g) {
      out.hi = b, mid = g, out.lo = r, sector = 3;
    } else {
      out.hi = g, mid = b, out.lo = r, sector = 2;
    }
  } else if (b < g) {
    out.hi = r, mid = g, out.lo = b, sector = 0;
  } else if (b > r) {
    out.hi = b, mid = r, out.lo = g, sector = 4;
  } else {
    out.hi = r, mid = b, out.lo = g, sector = 5;
  }
  if (out.hi == out.lo) {
    out.h = 0;
    return out;
  }
  const float ratio = (mid - out.lo) / (out.hi - out.lo);
  out.h = sector + ((sector & 1) == 0 ? ratio : 1 - ratio);
  return out;
}

void FromHueRange(float h, float lo, float hi, float* rgb) {
  // A NaN hue: x86 converts it to INT_MIN, TF's default sector.
  const int sector = std::isnan(h) ? 5 : static_cast<int>(h);
  float ratio = std::isnan(h) ? h : h - sector;
  if ((sector & 1) != 0 && !std::isnan(h)) ratio = 1 - ratio;
  const float mid = lo + ratio * (hi - lo);
  const float sectors[6][3] = {{hi, mid, lo}, {mid, hi, lo}, {lo, hi, mid},
                               {lo, mid, hi}, {mid, lo, hi}, {hi, lo, mid}};
  const float* p = sectors[sector >= 0 && sector < 6 ? sector : 5];
  rgb[0] = p[0], rgb[1] = p[1], rgb[2] = p[2];
}

class AdjustHueOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float delta, AdjustArgs(in, ctx->input(1), "delta", true));
    if (!std::isfinite(delta)) {
      // TF's loop that brings the hue back to [0, 6) never ends.
      return absl::InvalidArgumentError(absl::StrCat("delta must be finite, got ", delta));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, in.shape()));
    const float* p = in.data<float>();
    float* q = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(in.NumElements() / 3, 10, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        HueRange px = ToHueRange(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
        float h = px.h + delta * 6;
        // TF steps by whole turns; far from [0, 6) one floor does it.
        if (std::abs(h) > 60) h -= 6 * std::floor(h / 6);
        while (h < 0) h += 6;
        while (h >= 6) h -= 6;
        FromHueRange(h, px.lo, px.hi, q + 3 * i);
      }
    });
    return absl::OkStatus();
  }
};

// TF's adjust_saturation_op.cc conversions (not colorspace_op.h's).
void ToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0;
  const float norm = 1.0f / (6.0f * range);
  float hh;
  if (r == vv) {
    hh = norm * (g - b);
  } else if (g == vv) {
    hh = static_cast<float>(norm * (b - r) + 2.0 / 6.0);  // in double, as TF's
  } else {
    hh = static_cast<float>(norm * (r - g) + 4.0 / 6.0);
  }
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh = hh + 1;
  *v = vv;
  *h = hh;
}

void ToRgb(float h, float s, float v, float* rgb) {
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6;
  // A NaN (or out-of-range) hue falls to TF's default sector: grey.
  const int sector = std::isfinite(dh) && dh > -1 && dh < 7 ? static_cast<int>(dh) : -1;
  float fmodu = dh;
  if (std::isfinite(fmodu)) {
    while (fmodu <= 0) fmodu += 2.0f;
    while (fmodu >= 2.0f) fmodu -= 2.0f;
  }
  const float x = c * (1 - std::abs(fmodu - 1));
  float rr = 0, gg = 0, bb = 0;
  switch (sector) {
    case 0:
      rr = c, gg = x;
      break;
    case 1:
      rr = x, gg = c;
      break;
    case 2:
      gg = c, bb = x;
      break;
    case 3:
      gg = x, bb = c;
      break;
    case 4:
      rr = x, bb = c;
      break;
    case 5:
      rr = c, bb = x;
      break;
    default:
      break;
  }
  rgb[0] = rr + m, rgb[1] = gg + m, rgb[2] = bb + m;
}

class AdjustSaturationOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float scale, AdjustArgs(in, ctx->input(1), "scale", true));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const float* p = in.data<float>();
    float* q = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(in.NumElements() / 3, 10, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float h, s, v;
        ToHsv(p[3 * i], p[3 * i + 1], p[3 * i + 2], &h, &s, &v);
        s = std::min(1.0f, std::max(0.0f, s * scale));
        ToRgb(h, s, v, q + 3 * i);
      }
    });
    return absl::OkStatus();
  }
};

// AdjustContrastv2: out = mean + factor * (x - mean), the mean per image and
// channel. Each image plane [H * W, C] is summed as TF does, folding its
// second half onto its first until one row of channels is left, so the
// sums (and the outputs) are TF's to the bit.
class AdjustContrastOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float factor,
                        AdjustArgs(in, ctx->input(1), "contrast_factor", false));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    if (in.NumElements() == 0) return absl::OkStatus();
    const int d = in.dims();
    const int64_t size = in.shape().dim_size(d - 3) * in.shape().dim_size(d - 2);
    const int64_t channels = in.shape().dim_size(d - 1);
    const int64_t plane = size * channels;
    const int64_t images = in.NumElements() / plane;
    const float* x = in.data<float>();
    float* y = out->data<float>();
    using Flat = Eigen::Map<Eigen::ArrayXf>;
    using ConstFlat = Eigen::Map<const Eigen::ArrayXf>;
    ctx->intra_op_pool()->ParallelFor(images, 4 * plane, [&](int64_t begin, int64_t end) {
      std::vector<float> mean(channels);
      for (int64_t i = begin; i < end; ++i) {
        const float* src = x + i * plane;
        float* sum = y + i * plane;  // the output plane holds the partial sums
        int64_t remaining = size;
        bool first = true;
        do {
          const int64_t right = remaining / 2, left = remaining - right;
          if (first) {
            Flat(sum, right * channels) = ConstFlat(src + left * channels, right * channels) +
                                          ConstFlat(src, right * channels);
            if (left > right) {
              std::memcpy(sum + right * channels, src + right * channels, channels * sizeof(float));
            }
          } else {
            Flat(sum, right * channels) += ConstFlat(sum + left * channels, right * channels);
          }
          first = false;
          remaining = left;
        } while (remaining > 1);
        const float scaling = 1.0f / size;
        for (int64_t c = 0; c < channels; ++c) mean[c] = sum[c] * scaling;
        for (int64_t p = 0; p < size; ++p) {
          for (int64_t c = 0; c < channels; ++c) {
            const int64_t k = p * channels + c;
            y[i * plane + k] = mean[c] + factor * (src[k] - mean[c]);
          }
        }
      }
    });
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(color_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(KernelDefBuilder(cpu("RGBToHSV")).TypeConstraint<float>("T"),
                 MakeFactory<ColorSpaceOp<float, true>>());
  RegisterKernel(KernelDefBuilder(cpu("RGBToHSV")).TypeConstraint<double>("T"),
                 MakeFactory<ColorSpaceOp<double, true>>());
  RegisterKernel(KernelDefBuilder(cpu("HSVToRGB")).TypeConstraint<float>("T"),
                 MakeFactory<ColorSpaceOp<float, false>>());
  RegisterKernel(KernelDefBuilder(cpu("HSVToRGB")).TypeConstraint<double>("T"),
                 MakeFactory<ColorSpaceOp<double, false>>());
  RegisterKernel(KernelDefBuilder(cpu("AdjustHue")).TypeConstraint<float>("T"),
                 MakeFactory<AdjustHueOp>());
  RegisterKernel(KernelDefBuilder(cpu("AdjustSaturation")).TypeConstraint<float>("T"),
                 MakeFactory<AdjustSaturationOp>());
  RegisterKernel(KernelDefBuilder(cpu("AdjustContrastv2")).TypeConstraint<float>("T"),
                 MakeFactory<AdjustContrastOp>());
}

}  // namespace
}  // namespace towerflow
