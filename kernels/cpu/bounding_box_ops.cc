// SampleDistortedBoundingBox and V2: the random crop of the Inception
// preprocessing (tf.image.sample_distorted_bounding_box), drawn exactly as
// TF draws it, so the same seeds give TF's crops: TF's Philox stream
// (kernels/philox.h's PhiloxStream), max_attempts blocks reserved per call
// whatever the call does, and per attempt an aspect ratio, a height and an
// offset, accepted when the crop covers min_object_covered of one box.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/philox.h"

namespace towerflow {
namespace {

// f(T{}) for image_size's integer type T.
template <typename F>
bool VisitSizeType(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_UINT8:
      f(uint8_t{});
      return true;
    case DT_INT8:
      f(int8_t{});
      return true;
    case DT_INT16:
      f(int16_t{});
      return true;
    case DT_INT32:
      f(int32_t{});
      return true;
    case DT_INT64:
      f(int64_t{});
      return true;
    default:
      return false;
  }
}

// A box of pixels [min_x, max_x) x [min_y, max_y); empty when inverted.
struct Box {
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

class SampleDistortedBoundingBoxOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    v2_ = c.def().op() == "SampleDistortedBoundingBoxV2";
    if (!v2_) {
      TW_RETURN_IF_ERROR(c.GetAttr("min_object_covered", &min_object_covered_));
      if (!(min_object_covered_ >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Min object covered must be non-negative: ", min_object_covered_));
      }
    }
    TW_RETURN_IF_ERROR(c.GetAttr("use_image_if_no_bounding_boxes", &use_image_));
    TW_RETURN_IF_ERROR(c.GetAttr("aspect_ratio_range", &aspect_range_));
    if (aspect_range_.size() != 2) {
      return absl::InvalidArgumentError("Aspect ratio range field must specify 2 dimensions");
    }
    if (!(aspect_range_[0] > 0 && aspect_range_[1] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("Aspect ratio range must be non-negative: [",
                                                     aspect_range_[0], ", ", aspect_range_[1],
                                                     "]"));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("area_range", &area_range_));
    if (area_range_.size() != 2) {
      return absl::InvalidArgumentError("Area range field must specify 2 dimensions");
    }
    if (!(area_range_[0] > 0 && area_range_[1] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("Area range must be non-negative: [",
                                                     area_range_[0], ", ", area_range_[1], "]"));
    }
    if (area_range_[0] > 1 || area_range_[1] > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Area range must be less then or equal to 1.0: [", area_range_[0], ", ",
                       area_range_[1], "]"));
    }
    int64_t attempts;
    TW_RETURN_IF_ERROR(c.GetAttr("max_attempts", &attempts));
    if (attempts <= 0 || attempts > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Max attempts must be non-negative: ", attempts));
    }
    max_attempts_ = static_cast<int>(attempts);
    int64_t seed, seed2;
    TW_RETURN_IF_ERROR(c.GetAttr("seed", &seed));
    TW_RETURN_IF_ERROR(c.GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {  // unseeded: fresh bits, as TF
      std::random_device device;
      seed = (static_cast<int64_t>(device()) << 32) | device();
      seed2 = (static_cast<int64_t>(device()) << 32) | device();
    }
    absl::MutexLock lock(&mu_);
    stream_.emplace(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    // The call's blocks are reserved first, so a call that fails still
    // moves the stream on, as TF's.
    PhiloxStream stream = Reserve();
    const Tensor& image_size = ctx->input(0);
    if (image_size.dims() != 1 || image_size.dim_size(0) != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_size must be a vector of 3 elements, got ", image_size.shape().DebugString()));
    }
    int64_t dims[2] = {0, 0};
    const bool typed = VisitSizeType(image_size.dtype(), [&](auto zero) {
      using T = decltype(zero);
      for (int i = 0; i < 2; ++i) dims[i] = static_cast<int64_t>(image_size.data<T>()[i]);
    });
    if (!typed) {
      return absl::InvalidArgumentError(
          absl::StrCat("image_size of ", DataTypeString(image_size.dtype())));
    }
    if (dims[0] < 0 || dims[0] >= std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError("image height cannot be >= int32 max");
    }
    if (dims[1] < 0 || dims[1] >= std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError("image width cannot be >= int32 max");
    }
    const int height = static_cast<int>(dims[0]), width = static_cast<int>(dims[1]);
    const Tensor& input_boxes = ctx->input(1);
    if (input_boxes.dims() != 3 || input_boxes.dim_size(2) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input boxes must be 3-dimensional [batch, num_boxes, coords] with 4 "
                       "coords, got ",
                       input_boxes.shape().DebugString()));
    }
    float covered = min_object_covered_;
    if (v2_) {
      const Tensor& c = ctx->input(2);
      if (c.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("min_object_covered must be 0-D, got shape ", c.shape().DebugString()));
      }
      covered = *c.data<float>();
      if (!(covered >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Min object covered must be non-negative: ", covered));
      }
    }
    std::vector<Box> boxes;
    const float* b = input_boxes.data<float>();
    for (int64_t i = 0; i < input_boxes.NumElements() / 4; ++i, b += 4) {
      for (int k = 0; k < 4; ++k) {
        if (!(b[k] >= 0.0f && b[k] <= 1.0f)) {
          return absl::InvalidArgumentError(
              absl::StrCat("All bounding box coordinates must be in [0.0, 1.0]: ", b[k]));
        }
      }
      boxes.push_back(Box{static_cast<int>(b[1] * width), static_cast<int>(b[0] * height),
                          static_cast<int>(b[3] * width), static_cast<int>(b[2] * height)});
    }
    const Box image{0, 0, width, height};
    if (boxes.empty()) {
      if (!use_image_) {
        return absl::InvalidArgumentError(
            "No bounding boxes provided as input. One must enable "
            "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.");
      }
      boxes.push_back(image);
    }
    PhiloxWords words(&stream);
    Box crop = image;
    for (int i = 0; i < max_attempts_; ++i) {
      const float aspect =
          words.UniformFloat() * (aspect_range_[1] - aspect_range_[0]) + aspect_range_[0];
      Box candidate;
      if (DrawCrop(width, height, area_range_[0], area_range_[1], aspect, &words, &candidate) &&
          CoversABox(candidate, covered, boxes)) {
        crop = candidate;
        break;
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * begin, ctx->allocate_output(0, TensorShape({3})));
    TW_ASSIGN_OR_RETURN(Tensor * size, ctx->allocate_output(1, TensorShape({3})));
    TW_ASSIGN_OR_RETURN(Tensor * bbox, ctx->allocate_output(2, TensorShape({1, 1, 4})));
    const int64_t begins[3] = {crop.min_y, crop.min_x, 0};
    const int64_t sizes[3] = {crop.max_y - crop.min_y, crop.max_x - crop.min_x, -1};
    VisitSizeType(image_size.dtype(), [&](auto zero) {
      using T = decltype(zero);
      for (int i = 0; i < 3; ++i) {
        begin->data<T>()[i] = static_cast<T>(begins[i]);
        size->data<T>()[i] = static_cast<T>(sizes[i]);
      }
    });
    float* out = bbox->data<float>();
    out[0] = static_cast<float>(crop.min_y) / static_cast<float>(height);
    out[1] = static_cast<float>(crop.min_x) / static_cast<float>(width);
    out[2] = static_cast<float>(crop.max_y) / static_cast<float>(height);
    out[3] = static_cast<float>(crop.max_x) / static_cast<float>(width);
    return absl::OkStatus();
  }

 private:
  // The stream for one call; the kernel's moves on by max_attempts blocks
  // (TF reserves 4 words per attempt).
  PhiloxStream Reserve() {
    absl::MutexLock lock(&mu_);
    const PhiloxStream call = *stream_;
    stream_->Skip(static_cast<uint64_t>(max_attempts_));
    return call;
  }

  bool v2_ = true;
  float min_object_covered_ = 0.1f;
  bool use_image_ = false;
  std::vector<float> aspect_range_, area_range_;
  int max_attempts_ = 100;
  absl::Mutex mu_;
  std::optional<PhiloxStream> stream_ ABSL_GUARDED_BY(mu_);
};

TW_REGISTER_KERNELS(bounding_box_ops) {
  for (const char* op : {"SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2"}) {
    RegisterKernel(KernelDefBuilder(op).Device(kDeviceCpu),
                   MakeFactory<SampleDistortedBoundingBoxOp>());
  }
}

}  // namespace
}  // namespace towerflow
