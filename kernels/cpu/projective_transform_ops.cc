// ImageProjectiveTransformV2 and V3 (tf.raw_ops; Keras's RandomRotation,
// RandomZoom, RandomTranslation and TF Addons' transform): each output
// pixel (x, y) of image b reads the input at
//   ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),  k = c0 x + c1 y + 1,
// with transforms[b] (or transforms[0] for all) = [a0 a1 a2 b0 b1 b2 c0 c1],
// by nearest or bilinear interpolation, and outside the image by fill_mode:
// CONSTANT (fill_value; V2: 0), NEAREST (the edge), REFLECT ([dcba|abcd|dcba])
// or WRAP ([abcd|abcd]), as TF's kernel (which follows SciPy's ndimage).
// A point at infinity (k = 0) is fill_value.
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

enum class Fill { kConstant, kNearest, kReflect, kWrap };

// TF's MapCoordinate: an input coordinate outside [0, len - 1] mapped into
// it (CONSTANT leaves it outside, to be filled). TF truncates the periods to
// int64, which is undefined for coordinates past 2^63 (a transform of 1e20);
// truncating as floats gives the same numbers below that, and no UB.
float MapCoordinate(Fill fill, float in, int64_t len) {
  switch (fill) {
    case Fill::kConstant:
      return in;
    case Fill::kNearest:
      return std::clamp(in, 0.0f, static_cast<float>(len - 1));
    case Fill::kReflect:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          const float size2 = 2.0f * len;
          if (in < size2) in = size2 * std::trunc(-in / size2) + in;
          in = in < -len ? in + size2 : -in - 1;
        }
      } else if (in > len - 1) {
        if (len <= 1) {
          in = 0;
        } else {
          const float size2 = 2.0f * len;
          in -= size2 * std::trunc(in / size2);
          if (in >= len) in = size2 - in - 1;
        }
      }
      break;
    case Fill::kWrap:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          in += len * (std::trunc(-in / (len - 1)) + 1);
        }
      } else if (in > len - 1) {
        if (len <= 1) {
          in = 0;
        } else {
          in -= len * std::trunc(in / (len - 1));
        }
      }
      break;
  }
  return std::clamp(in, 0.0f, static_cast<float>(len - 1));
}

template <typename T>
class ProjectiveTransformOp : public OpKernel {
 public:
  explicit ProjectiveTransformOp(bool v3) : v3_(v3) {}
  absl::Status Init(const KernelConstruction& c) override {
    std::string interpolation, fill_mode;
    TW_RETURN_IF_ERROR(c.GetAttr("interpolation", &interpolation));
    TW_RETURN_IF_ERROR(c.GetAttr("fill_mode", &fill_mode));
    if (interpolation == "NEAREST") {
      bilinear_ = false;
    } else if (interpolation == "BILINEAR") {
      bilinear_ = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Invalid interpolation ", interpolation));
    }
    if (fill_mode == "CONSTANT") {
      fill_ = Fill::kConstant;
    } else if (fill_mode == "NEAREST") {
      fill_ = Fill::kNearest;
    } else if (fill_mode == "REFLECT") {
      fill_ = Fill::kReflect;
    } else if (fill_mode == "WRAP") {
      fill_ = Fill::kWrap;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Invalid fill mode ", fill_mode));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& transforms = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    if (images.dims() != 4) return absl::InvalidArgumentError("Input images must have rank 4");
    if (transforms.dims() != 2 || transforms.dim_size(1) != 8 ||
        (transforms.dim_size(0) != images.dim_size(0) && transforms.dim_size(0) != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input transform should be num_images x 8 or 1 x 8, got shape ",
                       transforms.shape().DebugString()));
    }
    if (shape.dims() != 1 || shape.NumElements() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("output shape must be a vector of two elements, got shape ",
                       shape.shape().DebugString()));
    }
    const int64_t oh = shape.data<int32_t>()[0], ow = shape.data<int32_t>()[1];
    if (oh <= 0 || ow <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output dimensions must be positive, got ", oh, " x ", ow));
    }
    T fill_value = T(0);
    if (v3_) {
      TW_ASSIGN_OR_RETURN(const float f, FloatScalar(ctx->input(3)));
      fill_value = static_cast<T>(f);
    }
    const int64_t n = images.dim_size(0), ih = images.dim_size(1), iw = images.dim_size(2),
                  c = images.dim_size(3);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n, oh, ow, c})));
    if (out->NumElements() == 0) return absl::OkStatus();
    const T* in = images.data<T>();
    const float* t = transforms.data<float>();
    T* o = out->data<T>();
    // A pixel of the input, or fill_value outside it.
    const auto read = [&](int64_t b, int64_t y, int64_t x, int64_t k) -> T {
      return y >= 0 && y < ih && x >= 0 && x < iw ? in[((b * ih + y) * iw + x) * c + k]
                                                  : fill_value;
    };
    ctx->intra_op_pool()->ParallelFor(n * oh, ow * c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, oy = row % oh;
        const float* a = transforms.dim_size(0) == 1 ? t : t + 8 * b;
        for (int64_t ox = 0; ox < ow; ++ox) {
          T* pixel = o + (row * ow + ox) * c;
          const float k = a[6] * ox + a[7] * oy + 1.f;
          if (k == 0) {
            std::fill_n(pixel, c, fill_value);
            continue;
          }
          const float x = MapCoordinate(fill_, (a[0] * ox + a[1] * oy + a[2]) / k, iw);
          const float y = MapCoordinate(fill_, (a[3] * ox + a[4] * oy + a[5]) / k, ih);
          // Past a pixel's reach (NaN too): the fill value. Nearer, reads
          // of pixels outside the image give the fill value (CONSTANT's
          // edges blend with it, as TF's do).
          if (!(x > -1 && x < iw && y > -1 && y < ih)) {
            std::fill_n(pixel, c, fill_value);
            continue;
          }
          if (!bilinear_) {
            const int64_t ry = static_cast<int64_t>(std::round(y));
            const int64_t rx = static_cast<int64_t>(std::round(x));
            for (int64_t ch = 0; ch < c; ++ch) pixel[ch] = read(b, ry, rx, ch);
            continue;
          }
          const float y0 = std::floor(y), x0 = std::floor(x);
          const float y1 = y0 + 1, x1 = x0 + 1;
          const int64_t iy0 = static_cast<int64_t>(y0), ix0 = static_cast<int64_t>(x0);
          for (int64_t ch = 0; ch < c; ++ch) {
            const float top = (x1 - x) * static_cast<float>(read(b, iy0, ix0, ch)) +
                              (x - x0) * static_cast<float>(read(b, iy0, ix0 + 1, ch));
            const float bottom = (x1 - x) * static_cast<float>(read(b, iy0 + 1, ix0, ch)) +
                                 (x - x0) * static_cast<float>(read(b, iy0 + 1, ix0 + 1, ch));
            pixel[ch] = static_cast<T>((y1 - y) * top + (y - y0) * bottom);
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  static absl::StatusOr<float> FloatScalar(const Tensor& t) {
    if (t.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("fill_value must be a scalar, got shape ", t.shape().DebugString()));
    }
    return t.data<float>()[0];
  }

  const bool v3_;
  bool bilinear_ = false;
  Fill fill_ = Fill::kConstant;
};

template <typename T>
void RegisterProjectiveTransform() {
  for (const bool v3 : {false, true}) {
    RegisterKernel(
        KernelDefBuilder(v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2")
            .Device(kDeviceCpu)
            .TypeConstraint<T>("dtype"),
        [v3] { return std::make_unique<ProjectiveTransformOp<T>>(v3); });
  }
}

}  // namespace

TW_REGISTER_KERNELS(projective_transform_ops) {
  RegisterProjectiveTransform<float>();
  RegisterProjectiveTransform<double>();
  RegisterProjectiveTransform<uint8_t>();
  RegisterProjectiveTransform<int32_t>();
  RegisterProjectiveTransform<int64_t>();
}

}  // namespace towerflow
