#include "data/image.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/image_geometry.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/tensor_views.h"

namespace towerflow {
namespace data {
namespace image {
namespace {

// InvalidArgument unless `image` is a [height, width, channels] image
// (float unless `any_dtype`).
absl::Status CheckImage(const Tensor& image, const char* fn, bool any_dtype = false) {
  if (image.dims() != 3 || (!any_dtype && image.dtype() != DT_FLOAT)) {
    return absl::InvalidArgumentError(absl::StrCat(
        fn, ": expected ", any_dtype ? "an" : "a float", " image [height, width, channels], got ",
        DataTypeString(image.dtype()), image.shape().DebugString()));
  }
  return absl::OkStatus();
}

// The image as an Eigen [height, width, channels] map.
TensorMap<float, 3> Pixels(const Tensor& image) { return image.tensor<float, 3>(); }

Tensor NewImage(int64_t height, int64_t width, int64_t channels) {
  return Tensor(DT_FLOAT, TensorShape({height, width, channels}));
}

}  // namespace

absl::StatusOr<Tensor> ToFloat(const Tensor& image) {
  TW_RETURN_IF_ERROR(CheckImage(image, "ToFloat", /*any_dtype=*/true));
  Tensor out = NewImage(image.dim_size(0), image.dim_size(1), image.dim_size(2));
  bool real = false;
  VisitNumberType(image.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, complex64> && !std::is_same_v<T, complex128>) {
      out.flat<float>() = image.flat<T>().template cast<float>();
      real = true;
    }
  });
  if (!real) {
    return absl::InvalidArgumentError(
        absl::StrCat("ToFloat: cannot convert ", DataTypeString(image.dtype()), " to float"));
  }
  return out;
}

absl::StatusOr<Tensor> Crop(const Tensor& image, int64_t top, int64_t left, int64_t height,
                            int64_t width) {
  TW_RETURN_IF_ERROR(CheckImage(image, "Crop"));
  if (top < 0 || left < 0 || height < 0 || width < 0 || top + height > image.dim_size(0) ||
      left + width > image.dim_size(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Crop: window [", top, ":", top + height, ", ", left, ":", left + width,
                     "] is outside the image ", image.shape().DebugString()));
  }
  Tensor out = NewImage(height, width, image.dim_size(2));
  const Eigen::array<Eigen::Index, 3> offsets = {top, left, 0};
  const Eigen::array<Eigen::Index, 3> extents = {height, width, image.dim_size(2)};
  Pixels(out) = Pixels(image).slice(offsets, extents);
  return out;
}

absl::StatusOr<Tensor> CropOrPad(const Tensor& image, int64_t height, int64_t width) {
  TW_RETURN_IF_ERROR(CheckImage(image, "CropOrPad"));
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CropOrPad: target size ", height, "x", width, " must be positive"));
  }
  const int64_t h = image.dim_size(0), w = image.dim_size(1), c = image.dim_size(2);
  // Per dimension: crop from the centre (offset (in - out) / 2) or pad
  // around (offset (out - in) / 2), as TensorFlow rounds.
  const int64_t crop_top = std::max<int64_t>(0, (h - height) / 2);
  const int64_t crop_left = std::max<int64_t>(0, (w - width) / 2);
  const int64_t pad_top = std::max<int64_t>(0, (height - h) / 2);
  const int64_t pad_left = std::max<int64_t>(0, (width - w) / 2);
  const int64_t rows = std::min(h, height), cols = std::min(w, width);
  TW_ASSIGN_OR_RETURN(Tensor window, Crop(image, crop_top, crop_left, rows, cols));
  if (rows == height && cols == width) return window;
  Tensor out = NewImage(height, width, c);
  Pixels(out).setZero();
  const Eigen::array<Eigen::Index, 3> offsets = {pad_top, pad_left, 0};
  const Eigen::array<Eigen::Index, 3> extents = {rows, cols, c};
  Pixels(out).slice(offsets, extents) = Pixels(window);
  return out;
}

absl::StatusOr<Tensor> RandomCrop(const Tensor& image, int64_t height, int64_t width,
                                  std::mt19937_64* rng) {
  TW_RETURN_IF_ERROR(CheckImage(image, "RandomCrop"));
  if (height <= 0 || width <= 0 || height > image.dim_size(0) || width > image.dim_size(1)) {
    return absl::InvalidArgumentError(absl::StrCat("RandomCrop: cannot take ", height, "x", width,
                                                   " from ", image.shape().DebugString()));
  }
  std::uniform_int_distribution<int64_t> top(0, image.dim_size(0) - height);
  std::uniform_int_distribution<int64_t> left(0, image.dim_size(1) - width);
  const int64_t t = top(*rng);
  return Crop(image, t, left(*rng), height, width);
}

absl::StatusOr<Tensor> FlipLeftRight(const Tensor& image) {
  TW_RETURN_IF_ERROR(CheckImage(image, "FlipLeftRight"));
  Tensor out = NewImage(image.dim_size(0), image.dim_size(1), image.dim_size(2));
  const Eigen::array<bool, 3> reverse = {false, true, false};
  Pixels(out) = Pixels(image).reverse(reverse);
  return out;
}

absl::StatusOr<Tensor> RandomFlipLeftRight(const Tensor& image, std::mt19937_64* rng) {
  TW_RETURN_IF_ERROR(CheckImage(image, "RandomFlipLeftRight"));
  if (std::bernoulli_distribution(0.5)(*rng)) return FlipLeftRight(image);
  return image;
}

absl::StatusOr<Tensor> AdjustBrightness(const Tensor& image, float delta) {
  TW_RETURN_IF_ERROR(CheckImage(image, "AdjustBrightness"));
  Tensor out = NewImage(image.dim_size(0), image.dim_size(1), image.dim_size(2));
  out.flat<float>() = image.flat<float>() + delta;
  return out;
}

absl::StatusOr<Tensor> RandomBrightness(const Tensor& image, float max_delta,
                                        std::mt19937_64* rng) {
  if (!(max_delta >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RandomBrightness: max_delta must be non-negative, got ", max_delta));
  }
  return AdjustBrightness(image,
                          std::uniform_real_distribution<float>(-max_delta, max_delta)(*rng));
}

absl::StatusOr<Tensor> AdjustContrast(const Tensor& image, float factor) {
  TW_RETURN_IF_ERROR(CheckImage(image, "AdjustContrast"));
  const int64_t h = image.dim_size(0), w = image.dim_size(1), c = image.dim_size(2);
  Tensor out = NewImage(h, w, c);
  if (h * w == 0) return out;
  // [pixels, channels]: the mean of each column.
  const TensorMap<float, 2> in = image.flat_inner_dims<float>();
  const Eigen::array<Eigen::Index, 1> rows = {0};
  const Eigen::Tensor<float, 1, Eigen::RowMajor> mean = in.mean(rows);
  const Eigen::array<Eigen::Index, 2> as_row = {1, c};
  const Eigen::array<Eigen::Index, 2> down = {h * w, 1};
  const auto broadcast_mean = mean.reshape(as_row).broadcast(down);
  out.flat_inner_dims<float>() = (in - broadcast_mean) * factor + broadcast_mean;
  return out;
}

absl::StatusOr<Tensor> RandomContrast(const Tensor& image, float lower, float upper,
                                      std::mt19937_64* rng) {
  if (!(lower >= 0 && lower < upper)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RandomContrast: need 0 <= lower < upper, got lower ", lower, ", upper ", upper));
  }
  return AdjustContrast(image, std::uniform_real_distribution<float>(lower, upper)(*rng));
}

namespace {}  // namespace

absl::StatusOr<Tensor> ResizeBilinear(const Tensor& image, int64_t height, int64_t width,
                                      const ResizeOptions& options) {
  if (image.dims() != 3 || (image.dtype() != DT_FLOAT && image.dtype() != DT_UINT8)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResizeBilinear: expected a uint8 or float image [height, width, channels], "
                     "got ",
                     DataTypeString(image.dtype()), image.shape().DebugString()));
  }
  if (height <= 0 || width <= 0 || image.dim_size(0) == 0 || image.dim_size(1) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ResizeBilinear: cannot resize ", image.shape().DebugString(), " to ", height, "x", width));
  }
  if (options.align_corners && options.half_pixel_centers) {
    return absl::InvalidArgumentError(
        "If half_pixel_centers is True, align_corners must be False.");
  }
  const int64_t ih = image.dim_size(0), iw = image.dim_size(1), c = image.dim_size(2);
  if (!options.subtract_means.empty() && static_cast<int64_t>(options.subtract_means.size()) != c) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResizeBilinear: ", options.subtract_means.size(), " means for an image of ",
                     c, " channels"));
  }
  const ResizeCoordinates coords{options.align_corners, options.half_pixel_centers};
  const Taps ys = BilinearTaps(coords, ih, height), xs = BilinearTaps(coords, iw, width);
  Tensor out = NewImage(height, width, c);
  const float* means = options.subtract_means.empty() ? nullptr : options.subtract_means.data();
  for (int64_t i = 0; i < height; ++i) {
    float* row = out.data<float>() + i * width * c;
    if (image.dtype() == DT_UINT8) {
      BilinearResizeRow(image.data<uint8_t>(), iw, c, ys, xs, i, options.flip_left_right, means,
                        row);
    } else {
      BilinearResizeRow(image.data<float>(), iw, c, ys, xs, i, options.flip_left_right, means, row);
    }
  }
  return out;
}

absl::StatusOr<Tensor> SubtractChannelMeans(const Tensor& image, const std::vector<float>& means) {
  TW_RETURN_IF_ERROR(CheckImage(image, "SubtractChannelMeans"));
  const int64_t c = image.dim_size(2);
  if (static_cast<int64_t>(means.size()) != c) {
    return absl::InvalidArgumentError(absl::StrCat("SubtractChannelMeans: ", means.size(),
                                                   " means for an image of ", c, " channels"));
  }
  Tensor out = NewImage(image.dim_size(0), image.dim_size(1), c);
  const float* in = image.data<float>();
  float* o = out.data<float>();
  const int64_t pixels = c == 0 ? 0 : image.NumElements() / c;
  for (int64_t p = 0; p < pixels; ++p, in += c, o += c) {
    for (int64_t k = 0; k < c; ++k) o[k] = in[k] - means[k];
  }
  return out;
}

absl::StatusOr<Tensor> PerImageStandardization(const Tensor& image) {
  TW_RETURN_IF_ERROR(CheckImage(image, "PerImageStandardization"));
  Tensor out = NewImage(image.dim_size(0), image.dim_size(1), image.dim_size(2));
  const int64_t n = image.NumElements();
  if (n == 0) return out;
  const auto x = image.flat<float>();
  const Eigen::Tensor<float, 0, Eigen::RowMajor> mean = x.mean();
  const Eigen::Tensor<float, 0, Eigen::RowMajor> variance = (x - mean()).square().mean();
  const float adjusted_stddev =
      std::max(std::sqrt(variance()), 1.0f / std::sqrt(static_cast<float>(n)));
  out.flat<float>() = (x - mean()) / adjusted_stddev;
  return out;
}

}  // namespace image
}  // namespace data
}  // namespace towerflow
