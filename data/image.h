// Image preprocessing for input pipelines: TensorFlow's tf.image functions
// that the CIFAR-10 tutorial's distorted_inputs uses, on one image at a
// time inside Dataset::Map / RandomMap.
//
//   d = d.RandomMap([](Element e, std::mt19937_64* rng) -> absl::StatusOr<Element> {
//         TW_ASSIGN_OR_RETURN(Tensor x, image::ToFloat(e[0]));
//         TW_ASSIGN_OR_RETURN(x, image::RandomCrop(x, 24, 24, rng));
//         TW_ASSIGN_OR_RETURN(x, image::RandomFlipLeftRight(x, rng));
//         TW_ASSIGN_OR_RETURN(x, image::RandomBrightness(x, 63, rng));
//         TW_ASSIGN_OR_RETURN(x, image::RandomContrast(x, 0.2f, 1.8f, rng));
//         TW_ASSIGN_OR_RETURN(x, image::PerImageStandardization(x));
//         return Element{x, e[1]};
//       }, /*seed=*/1, /*num_parallel_calls=*/2);
//
// Images are [height, width, channels]; every function but ToFloat takes
// and returns float images, and returns a new tensor (the input, which a
// dataset may share, is never written). InvalidArgument names the function
// and the shape it could not take.
#ifndef TOWERFLOW_DATA_IMAGE_H_
#define TOWERFLOW_DATA_IMAGE_H_

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace towerflow {
namespace data {
namespace image {

// uint8 (or any real dtype) to float, values unchanged (tf.cast, not
// convert_image_dtype's rescaling: the tutorial casts).
absl::StatusOr<Tensor> ToFloat(const Tensor& image);

// A window of [height, width] at offset (top, left).
absl::StatusOr<Tensor> Crop(const Tensor& image, int64_t top, int64_t left, int64_t height,
                            int64_t width);
// tf.image.resize_image_with_crop_or_pad: crops the centre or pads with
// zeros around, per dimension, to [height, width].
absl::StatusOr<Tensor> CropOrPad(const Tensor& image, int64_t height, int64_t width);
// tf.random_crop: a [height, width] window at a uniform offset.
absl::StatusOr<Tensor> RandomCrop(const Tensor& image, int64_t height, int64_t width,
                                  std::mt19937_64* rng);

// Mirrors the columns.
absl::StatusOr<Tensor> FlipLeftRight(const Tensor& image);
// Mirrors with probability 1/2.
absl::StatusOr<Tensor> RandomFlipLeftRight(const Tensor& image, std::mt19937_64* rng);

// tf.image.adjust_brightness: x + delta.
absl::StatusOr<Tensor> AdjustBrightness(const Tensor& image, float delta);
// delta uniform in [-max_delta, max_delta).
absl::StatusOr<Tensor> RandomBrightness(const Tensor& image, float max_delta, std::mt19937_64* rng);

// tf.image.adjust_contrast: (x - mean) * factor + mean, the mean taken per
// channel over the image.
absl::StatusOr<Tensor> AdjustContrast(const Tensor& image, float factor);
// factor uniform in [lower, upper).
absl::StatusOr<Tensor> RandomContrast(const Tensor& image, float lower, float upper,
                                      std::mt19937_64* rng);

// tf.compat.v1.image.resize (bilinear) of a uint8 or float image to float
// [height, width]: TF's ResizeBilinear with its align_corners and
// half_pixel_centers (Note [Resize coordinates] in core/image_geometry.h),
// so the pixels are TF's; optionally of the image flipped left-right and
// less per-channel means, in the same pass (what the ImageNet training
// preprocessing does after the crop).
struct ResizeOptions {
  bool align_corners = false;
  bool half_pixel_centers = false;
  bool flip_left_right = false;
  std::vector<float> subtract_means;  // empty, or one per channel
};
absl::StatusOr<Tensor> ResizeBilinear(const Tensor& image, int64_t height, int64_t width,
                                      const ResizeOptions& options = {});

// x - means[c] for each channel c (the official ImageNet models' mean
// subtraction); `means` has one value per channel.
absl::StatusOr<Tensor> SubtractChannelMeans(const Tensor& image, const std::vector<float>& means);

// tf.image.per_image_standardization: (x - mean) / max(stddev,
// 1 / sqrt(number of elements)), over the whole image.
absl::StatusOr<Tensor> PerImageStandardization(const Tensor& image);

}  // namespace image
}  // namespace data
}  // namespace towerflow

#endif  // TOWERFLOW_DATA_IMAGE_H_
