// ExtractGlimpse and ExtractGlimpseV2 (tf.image.extract_glimpse): a
// [height, width] window of each image at its (y, x) offset, as TF places
// it, the part outside the image filled with noise: "uniform" between the
// image's minimum and maximum, "gaussian" with each channel's mean and
// deviation (clipped to its range), or "zero".
//
// Where the window goes (TF's arithmetic, x as y): normalized offsets are
// scaled by the image's size; V2 then, for centered ones, halves them,
// moves them by half the image and back by half the window, while
// unnormalized centered ones only move by half the image. V1 does the
// centering for unnormalized offsets too and takes half the window back in
// every case. The corner is the result truncated toward zero. TF's noise
// is not seeded, so the noise is not TF's numbers; the window is.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

enum class Noise { kUniform, kGaussian, kZero };

class ExtractGlimpseOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    v2_ = c.def().op() == "ExtractGlimpseV2";
    bool uniform_noise = true;
    std::string noise;
    TW_RETURN_IF_ERROR(c.GetAttr("centered", &centered_));
    TW_RETURN_IF_ERROR(c.GetAttr("normalized", &normalized_));
    TW_RETURN_IF_ERROR(c.GetAttr("uniform_noise", &uniform_noise));
    TW_RETURN_IF_ERROR(c.GetAttr("noise", &noise));
    if (uniform_noise && !noise.empty() && noise != "uniform") {
      return absl::InvalidArgumentError(
          "The uniform_noise and noise could not be specified at the same time");
    }
    if (noise.empty()) {
      noise_ = uniform_noise ? Noise::kUniform : Noise::kGaussian;
    } else if (noise == "uniform") {
      noise_ = Noise::kUniform;
    } else if (noise == "gaussian") {
      noise_ = Noise::kGaussian;
    } else if (noise == "zero") {
      noise_ = Noise::kZero;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("The noise could only be uniform, gaussian, or zero, got", noise));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& size = ctx->input(1);
    const Tensor& offsets = ctx->input(2);
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional (batch_size, height, width, depth)",
                       input.shape().DebugString()));
    }
    if (size.dims() != 1 || size.NumElements() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be a vector of size 2 (height, width)", size.shape().DebugString()));
    }
    const int64_t batch = input.dim_size(0), height = input.dim_size(1), width = input.dim_size(2),
                  depth = input.dim_size(3);
    if (offsets.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be a matrix", offsets.shape().DebugString()));
    }
    if (offsets.dim_size(0) != batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("first dimension should be batch", offsets.shape().DebugString()));
    }
    if (offsets.dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat("second dimension should be of size 2 (y,x)",
                                                     offsets.shape().DebugString()));
    }
    const int64_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
    if (h < 0 || w < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("glimpse size must not be negative, got [", h, ", ", w, "]"));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({batch, h, w, depth})));
    std::mt19937 gen{std::random_device{}()};
    for (int64_t b = 0; b < batch; ++b) {
      const float* image = input.data<float>() + b * height * width * depth;
      float* glimpse = out->data<float>() + b * h * w * depth;
      const int64_t top = Corner(offsets.data<float>()[2 * b], height, h);
      const int64_t left = Corner(offsets.data<float>()[2 * b + 1], width, w);
      const bool inside = top >= 0 && left >= 0 && top + h <= height && left + w <= width;
      if (!inside) FillNoise(image, height * width, depth, h * w, glimpse, gen);
      for (int64_t r = 0; r < h; ++r) {
        const int64_t y = top + r;
        if (y < 0 || y >= height) continue;
        for (int64_t c = 0; c < w; ++c) {
          const int64_t x = left + c;
          if (x < 0 || x >= width) continue;
          std::copy_n(image + (y * width + x) * depth, depth, glimpse + (r * w + c) * depth);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // The window's first row (or column) for `offset` along a dimension of
  // `extent` pixels, the window `window` long; far outside for offsets that
  // are not finite or beyond any image.
  int64_t Corner(float offset, int64_t extent, int64_t window) const {
    float v = offset;
    const float e = static_cast<float>(extent), half_window = static_cast<float>(window) / 2.0f;
    if (normalized_) v *= e;
    if (centered_ && (normalized_ || !v2_)) {
      v = v / 2.0f + e / 2.0f - half_window;
    } else if (centered_) {
      v += e / 2.0f;
    } else if (!v2_) {
      v -= half_window;
    }
    constexpr float kFar = 1e15f;
    if (!std::isfinite(v) || std::abs(v) > kFar) return std::numeric_limits<int32_t>::min();
    return static_cast<int64_t>(v);  // toward zero, as TF's cast
  }

  // The whole glimpse of `pixels` pixels as noise from `image` (`count`
  // pixels of `depth` channels).
  void FillNoise(const float* image, int64_t count, int64_t depth, int64_t pixels, float* glimpse,
                 std::mt19937& gen) const {
    const int64_t n = pixels * depth;
    if (noise_ == Noise::kZero || count * depth == 0) {
      std::fill_n(glimpse, n, 0.0f);
      return;
    }
    if (noise_ == Noise::kUniform) {
      const auto [lo, hi] = std::minmax_element(image, image + count * depth);
      std::uniform_real_distribution<float> u(0.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i) glimpse[i] = *lo + u(gen) * (*hi - *lo);
      return;
    }
    for (int64_t ch = 0; ch < depth; ++ch) {
      double sum = 0, squares = 0;
      float lo = image[ch], hi = image[ch];
      for (int64_t p = 0; p < count; ++p) {
        const float v = image[p * depth + ch];
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const double mean = sum / static_cast<double>(count);
      for (int64_t p = 0; p < count; ++p) {
        const double d = image[p * depth + ch] - mean;
        squares += d * d;
      }
      std::normal_distribution<float> g(static_cast<float>(mean),
                                        static_cast<float>(std::sqrt(squares / count)));
      for (int64_t p = 0; p < pixels; ++p) glimpse[p * depth + ch] = std::clamp(g(gen), lo, hi);
    }
  }

  bool v2_ = false, centered_ = true, normalized_ = true;
  Noise noise_ = Noise::kUniform;
};

TW_REGISTER_KERNELS(glimpse_ops) {
  RegisterKernel(KernelDefBuilder("ExtractGlimpse").Device(kDeviceCpu),
                 MakeFactory<ExtractGlimpseOp>());
  RegisterKernel(KernelDefBuilder("ExtractGlimpseV2").Device(kDeviceCpu),
                 MakeFactory<ExtractGlimpseOp>());
}

}  // namespace
}  // namespace towerflow
