#include "core/image_geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace towerflow {

float ResizeCoordinates::Scale(int64_t in, int64_t out) const {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

Taps BilinearTaps(const ResizeCoordinates& a, int64_t in, int64_t out) {
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
std::vector<int64_t> NearestTaps(const ResizeCoordinates& a, int64_t in, int64_t out) {
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

namespace {

constexpr int64_t kCubicTableSize = 1024;

// Keys' weights at fractions k / 1024: [k][0] for the near taps, [k][1] for
// the far ones.
std::vector<float> CubicTable(float a) {
  std::vector<float> table((kCubicTableSize + 1) * 2);
  for (int64_t i = 0; i <= kCubicTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kCubicTableSize);
    table[i * 2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x += 1.0f;
    table[i * 2 + 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  }
  return table;
}

int64_t Clamp(int64_t v, int64_t limit) { return std::min(limit - 1, std::max<int64_t>(0, v)); }

}  // namespace

WeightedTaps BilinearWeightedTaps(const ResizeCoordinates& a, int64_t in, int64_t out) {
  const Taps taps = BilinearTaps(a, in, out);
  WeightedTaps t;
  t.k = 2;
  for (int64_t i = 0; i < out; ++i) {
    t.index.insert(t.index.end(), {taps.lower[i], taps.upper[i]});
    t.weight.insert(t.weight.end(), {1 - taps.lerp[i], taps.lerp[i]});
  }
  return t;
}

WeightedTaps BicubicTaps(const ResizeCoordinates& a, int64_t in, int64_t out) {
  static const std::vector<float>* legacy = new std::vector<float>(CubicTable(-0.75f));
  static const std::vector<float>* keys = new std::vector<float>(CubicTable(-0.5f));
  const std::vector<float>& table = a.half_pixel_centers ? *keys : *legacy;
  const float scale = a.Scale(in, out);
  WeightedTaps t;
  t.k = 4;
  t.index.resize(out * 4);
  t.weight.resize(out * 4);
  for (int64_t i = 0; i < out; ++i) {
    const float x = a.half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                         : static_cast<float>(i) * scale;
    const int64_t base = static_cast<int64_t>(std::floor(x));
    const int64_t offset = lrintf((x - static_cast<float>(base)) * kCubicTableSize);
    const float w[4] = {table[offset * 2 + 1], table[offset * 2],
                        table[(kCubicTableSize - offset) * 2],
                        table[(kCubicTableSize - offset) * 2 + 1]};
    int64_t* idx = &t.index[i * 4];
    float* wt = &t.weight[i * 4];
    for (int k = 0; k < 4; ++k) {
      idx[k] = Clamp(base - 1 + k, in);
      // Keys' convolution weighs taps outside the image 0; the legacy one
      // gives their weight to the edge pixel it repeats.
      wt[k] = a.half_pixel_centers && idx[k] != base - 1 + k ? 0.0f : w[k];
    }
    if (a.half_pixel_centers) {
      const float sum = wt[0] + wt[1] + wt[2] + wt[3];
      if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
        const float inv = 1.0f / sum;
        for (int k = 0; k < 4; ++k) wt[k] *= inv;
      }
    }
  }
  return t;
}

AreaTaps ResizeAreaTaps(float scale, int64_t in, int64_t out) {
  AreaTaps t;
  t.begin.push_back(0);
  for (int64_t i = 0; i < out; ++i) {
    const float lo = static_cast<float>(i) * scale, hi = static_cast<float>(i + 1) * scale;
    const int64_t start = static_cast<int64_t>(std::floor(lo));
    const int64_t end = static_cast<int64_t>(std::ceil(hi));
    for (int64_t j = start; j < end; ++j) {
      float w;
      if (static_cast<float>(j) < lo) {
        w = static_cast<float>(j + 1) > hi ? scale : static_cast<float>(j + 1) - lo;
      } else {
        w = static_cast<float>(j + 1) > hi ? hi - static_cast<float>(j) : 1.0f;
      }
      t.index.push_back(std::min(j, in - 1));
      t.weight.push_back(w);
    }
    t.begin.push_back(static_cast<int64_t>(t.index.size()));
  }
  return t;
}

namespace {

// A box of pixels [min_x, max_x) x [min_y, max_y); empty when inverted.
struct Box {  // PixelBox with area and intersection
  int min_x = 0, min_y = 0, max_x = 0, max_y = 0;
  float Area() const { return static_cast<float>((max_x - min_x) * (max_y - min_y)); }
  Box Intersect(const Box& o) const {
    const Box r{std::max(min_x, o.min_x), std::max(min_y, o.min_y), std::min(max_x, o.max_x),
                std::min(max_y, o.max_y)};
    return r.min_x > r.max_x || r.min_y > r.max_y ? Box() : r;
  }
};

// Whether `crop` (of at least a pixel) covers `minimum` of some box that has
// at least a pixel.
bool CoversABox(const Box& crop, float minimum, const std::vector<Box>& boxes) {
  if (crop.Area() < 1) return false;
  for (const Box& b : boxes) {
    const float area = b.Area();
    if (area < 1) continue;
    if (crop.Intersect(b).Area() / area >= minimum) return true;
  }
  return false;
}

// One attempt: a crop of `aspect` (width / height) whose area is within
// [min_area, max_area] of the image's, its height uniform over the heights
// that allow, its corner uniform; false when none fits.
bool DrawCrop(int width, int height, float min_area_fraction, float max_area_fraction, float aspect,
              PhiloxWords* words, Box* crop) {
  if (max_area_fraction <= 0 || aspect <= 0 || width <= 0 || height <= 0 ||
      min_area_fraction > max_area_fraction) {
    return false;
  }
  const float min_area = min_area_fraction * width * height;
  const float max_area = max_area_fraction * width * height;
  int h = static_cast<int>(lrintf(std::sqrt(min_area / aspect)));
  int max_h = static_cast<int>(lrintf(std::sqrt(max_area / aspect)));
  if (lrintf(max_h * aspect) > width) {
    // The tallest crop whose rounded width still fits (less one when the
    // rounding says otherwise).
    max_h = static_cast<int>((width + 0.5 - 0.0000001f) / aspect);
    if (lrintf(max_h * aspect) > width) --max_h;
  }
  max_h = std::min(max_h, height);
  h = std::min(h, max_h);
  if (h < max_h) h += static_cast<int>(words->Uniform(static_cast<uint32_t>(max_h - h + 1)));
  int w = static_cast<int>(lrintf(h * aspect));
  float area = static_cast<float>(w * h);
  if (area < min_area) {  // rounding left it small: one row more
    ++h;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area > max_area) {  // or large: one row less
    --h;
    w = static_cast<int>(lrintf(h * aspect));
    area = static_cast<float>(w * h);
  }
  if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0) {
    return false;
  }
  const int y =
      h < height ? static_cast<int>(words->Uniform(static_cast<uint32_t>(height - h))) : 0;
  const int x = w < width ? static_cast<int>(words->Uniform(static_cast<uint32_t>(width - w))) : 0;
  *crop = Box{x, y, x + w, y + h};
  return true;
}

}  // namespace

absl::StatusOr<PixelBox> SampleDistortedCrop(int height, int width, const float* boxes,
                                             int64_t num_boxes, const DistortedCropOptions& o,
                                             PhiloxWords* words) {
  if (!(o.min_object_covered >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Min object covered must be non-negative: ", o.min_object_covered));
  }
  std::vector<Box> all;
  for (int64_t i = 0; i < num_boxes; ++i) {
    const float* b = boxes + 4 * i;
    for (int k = 0; k < 4; ++k) {
      if (!(b[k] >= 0.0f && b[k] <= 1.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat("All bounding box coordinates must be in [0.0, 1.0]: ", b[k]));
      }
    }
    all.push_back(Box{static_cast<int>(b[1] * width), static_cast<int>(b[0] * height),
                      static_cast<int>(b[3] * width), static_cast<int>(b[2] * height)});
  }
  const Box image{0, 0, width, height};
  if (all.empty()) {
    if (!o.use_image_if_no_bounding_boxes) {
      return absl::InvalidArgumentError(
          "No bounding boxes provided as input. One must enable "
          "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.");
    }
    all.push_back(image);
  }
  const float lo = o.aspect_ratio_range[0], hi = o.aspect_ratio_range[1];
  for (int i = 0; i < o.max_attempts; ++i) {
    const float aspect = words->UniformFloat() * (hi - lo) + lo;
    Box crop;
    if (DrawCrop(width, height, o.area_range[0], o.area_range[1], aspect, words, &crop) &&
        CoversABox(crop, o.min_object_covered, all)) {
      return PixelBox{crop.min_x, crop.min_y, crop.max_x, crop.max_y};
    }
  }
  return PixelBox{0, 0, width, height};
}

}  // namespace towerflow
