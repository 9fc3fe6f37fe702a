// Image geometry shared by the image kernels and the input pipeline
// (data/image.h), with TensorFlow's arithmetic: the sampling coordinates of
// resizes, and the random crop of tf.image.sample_distorted_bounding_box.
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
#ifndef TOWERFLOW_CORE_IMAGE_GEOMETRY_H_
#define TOWERFLOW_CORE_IMAGE_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/philox.h"

namespace towerflow {

struct ResizeCoordinates {
  bool align_corners = false;
  bool half_pixel_centers = false;
  float Scale(int64_t in, int64_t out) const;
};

// One dimension's bilinear taps for each output index.
struct Taps {
  std::vector<int64_t> lower, upper;
  std::vector<float> lerp;
};
Taps BilinearTaps(const ResizeCoordinates& a, int64_t in, int64_t out);

// Row i of the bilinear resize of one image `in` ([in_h, in_w, c] of T)
// into `out_row` (out_w * c floats) at the taps, in TF's arithmetic (each
// tap row interpolated across, then the two rows); of the image flipped
// left-right first when `flip`, and less `means` (c values) when not null.
template <typename T>
void BilinearResizeRow(const T* in, int64_t in_w, int64_t c, const Taps& ys, const Taps& xs,
                       int64_t i, bool flip, const float* means, float* out_row) {
  const T* top = in + ys.lower[i] * in_w * c;
  const T* bottom = in + ys.upper[i] * in_w * c;
  const float dy = ys.lerp[i];
  const int64_t out_w = static_cast<int64_t>(xs.lerp.size());
  for (int64_t j = 0; j < out_w; ++j) {
    // The flipped image's column x is the image's column in_w - 1 - x.
    const int64_t l = (flip ? in_w - 1 - xs.lower[j] : xs.lower[j]) * c;
    const int64_t r = (flip ? in_w - 1 - xs.upper[j] : xs.upper[j]) * c;
    const float dx = xs.lerp[j];
    for (int64_t k = 0; k < c; ++k) {
      const float tl = static_cast<float>(top[l + k]), tr = static_cast<float>(top[r + k]);
      const float bl = static_cast<float>(bottom[l + k]), br = static_cast<float>(bottom[r + k]);
      const float t = tl + (tr - tl) * dx, u = bl + (br - bl) * dx;
      const float v = t + (u - t) * dy;
      *out_row++ = means == nullptr ? v : v - means[k];
    }
  }
}

// The input index that output index i of a nearest-neighbour resize reads.
std::vector<int64_t> NearestTaps(const ResizeCoordinates& a, int64_t in, int64_t out);

// A separable resize's taps along one dimension: output index i reads the
// k input indices index[i * k ...] with their weights.
struct WeightedTaps {
  int k = 0;
  std::vector<int64_t> index;  // [out, k]
  std::vector<float> weight;   // [out, k]
};
// BilinearTaps as two weighted taps each: (lower, 1 - lerp), (upper, lerp).
WeightedTaps BilinearWeightedTaps(const ResizeCoordinates& a, int64_t in, int64_t out);
// Bicubic taps (TF's ResizeBicubic), four: Keys' cubic convolution,
// tabulated at 1/1024 steps as TF does: a = -0.75 with the edge pixels
// repeated, or under half_pixel_centers a = -0.5 with the taps outside the
// image weighted 0 and the others renormalised.
WeightedTaps BicubicTaps(const ResizeCoordinates& a, int64_t in, int64_t out);

// Area taps (TF's ResizeArea): output index i averages the input over
// [i * scale, (i + 1) * scale), each input index weighted by how much of
// it lies inside (indices past the image read its last pixel).
struct AreaTaps {
  std::vector<int64_t> begin;  // [out + 1]: output i's taps are [begin[i], begin[i + 1])
  std::vector<int64_t> index;
  std::vector<float> weight;
};
AreaTaps ResizeAreaTaps(float scale, int64_t in, int64_t out);

// Note [Distorted crops]
// tf.image.sample_distorted_bounding_box's crop, drawn as TF draws it (its
// kernel's attempt loop on TF's Philox stream, core/philox.h): per attempt
// an aspect ratio uniform in the range, a height uniform over those whose
// area lies in the range (rounding corrected by one row either way), then a
// uniform corner; the first crop covering `min_object_covered` of some box
// wins, else the whole image.
struct PixelBox {
  int min_x = 0, min_y = 0, max_x = 0, max_y = 0;
};
struct DistortedCropOptions {
  float min_object_covered = 0.1f;
  float aspect_ratio_range[2] = {0.75f, 1.33f};
  float area_range[2] = {0.05f, 1.0f};
  int max_attempts = 100;
  bool use_image_if_no_bounding_boxes = false;
};
// The crop of a `height` x `width` image given `boxes` as normalised
// [ymin, xmin, ymax, xmax] (4 floats each, in [0, 1]), drawing from
// `words`. InvalidArgument with TF's messages for bad boxes or options.
absl::StatusOr<PixelBox> SampleDistortedCrop(int height, int width, const float* boxes,
                                             int64_t num_boxes, const DistortedCropOptions& options,
                                             PhiloxWords* words);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_IMAGE_GEOMETRY_H_
