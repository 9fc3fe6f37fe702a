// SampleDistortedBoundingBox and V2: the random crop of the Inception
// preprocessing (tf.image.sample_distorted_bounding_box), drawn exactly as
// TF draws it (core/image_geometry.h, Note [Distorted crops]), so the same
// seeds give TF's crops: TF's Philox stream, max_attempts blocks reserved
// per call whatever the call does; StatelessSampleDistortedBoundingBox
// (tf.image.stateless_sample_distorted_bounding_box) from its seed input's
// stateless stream. DrawBoundingBoxes and V2: box outlines
// drawn on images, as TF's draw_bounding_box_op.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/image_geometry.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/philox_fill.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace {

class SampleDistortedBoundingBoxOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    stateless_ = c.def().op() == "StatelessSampleDistortedBoundingBox";
    v2_ = stateless_ || c.def().op() == "SampleDistortedBoundingBoxV2";
    if (!v2_) {
      TW_RETURN_IF_ERROR(c.GetAttr("min_object_covered", &options_.min_object_covered));
      if (!(options_.min_object_covered >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Min object covered must be non-negative: ", options_.min_object_covered));
      }
    }
    TW_RETURN_IF_ERROR(
        c.GetAttr("use_image_if_no_bounding_boxes", &options_.use_image_if_no_bounding_boxes));
    std::vector<float> aspect, area;
    TW_RETURN_IF_ERROR(c.GetAttr("aspect_ratio_range", &aspect));
    if (aspect.size() != 2) {
      return absl::InvalidArgumentError("Aspect ratio range field must specify 2 dimensions");
    }
    if (!(aspect[0] > 0 && aspect[1] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("Aspect ratio range must be non-negative: [",
                                                     aspect[0], ", ", aspect[1], "]"));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("area_range", &area));
    if (area.size() != 2) {
      return absl::InvalidArgumentError("Area range field must specify 2 dimensions");
    }
    if (!(area[0] > 0 && area[1] > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Area range must be non-negative: [", area[0], ", ", area[1], "]"));
    }
    if (area[0] > 1 || area[1] > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Area range must be less then or equal to 1.0: [", area[0], ", ", area[1], "]"));
    }
    for (int i = 0; i < 2; ++i) {
      options_.aspect_ratio_range[i] = aspect[i];
      options_.area_range[i] = area[i];
    }
    int64_t attempts;
    TW_RETURN_IF_ERROR(c.GetAttr("max_attempts", &attempts));
    if (attempts <= 0 || attempts > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Max attempts must be non-negative: ", attempts));
    }
    options_.max_attempts = static_cast<int>(attempts);
    return stateless_ ? absl::OkStatus() : generator_.Init(c);
  }

  absl::Status Compute(KernelContext* ctx) override {
    // The call's blocks are reserved first, so a call that fails still
    // moves the stream on, as TF's; the stateless form's stream starts at
    // the key and counter of its seed, as TF's stateless ops.
    PhiloxStream stream(0, 0);
    if (stateless_) {
      TW_ASSIGN_OR_RETURN(stream, StatelessStream(ctx, /*v2=*/false, 3));
    } else {
      stream = generator_.Reserve(static_cast<uint64_t>(options_.max_attempts));
    }
    const Tensor& image_size = ctx->input(0);
    if (image_size.dims() != 1 || image_size.dim_size(0) != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_size must be a vector of 3 elements, got ", image_size.shape().DebugString()));
    }
    int64_t dims[2] = {0, 0};
    bool typed = false;
    VisitNumberType(image_size.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        for (int i = 0; i < 2; ++i) dims[i] = static_cast<int64_t>(image_size.data<T>()[i]);
        typed = true;
      }
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
    const Tensor& boxes = ctx->input(1);
    if (boxes.dims() != 3 || boxes.dim_size(2) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input boxes must be 3-dimensional [batch, num_boxes, coords] with 4 "
                       "coords, got ",
                       boxes.shape().DebugString()));
    }
    DistortedCropOptions options = options_;
    if (v2_) {
      const Tensor& c = ctx->input(2);
      if (c.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("min_object_covered must be 0-D, got shape ", c.shape().DebugString()));
      }
      options.min_object_covered = *c.data<float>();
    }
    PhiloxWords words(&stream);
    TW_ASSIGN_OR_RETURN(const PixelBox crop,
                        SampleDistortedCrop(height, width, boxes.data<float>(),
                                            boxes.NumElements() / 4, options, &words));
    TW_ASSIGN_OR_RETURN(Tensor * begin, ctx->allocate_output(0, TensorShape({3})));
    TW_ASSIGN_OR_RETURN(Tensor * size, ctx->allocate_output(1, TensorShape({3})));
    TW_ASSIGN_OR_RETURN(Tensor * bbox, ctx->allocate_output(2, TensorShape({1, 1, 4})));
    const int64_t begins[3] = {crop.min_y, crop.min_x, 0};
    const int64_t sizes[3] = {crop.max_y - crop.min_y, crop.max_x - crop.min_x, -1};
    VisitNumberType(image_size.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        for (int i = 0; i < 3; ++i) {
          begin->data<T>()[i] = static_cast<T>(begins[i]);
          size->data<T>()[i] = static_cast<T>(sizes[i]);
        }
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
  bool v2_ = true;
  bool stateless_ = false;
  DistortedCropOptions options_;
  GuardedPhilox generator_;  // each call's max_attempts blocks (4 words an attempt)
};

// TF's colours for boxes, cycled (RGBA; grey images take 1).
std::vector<std::vector<float>> DefaultColors(int64_t depth) {
  std::vector<std::vector<float>> table = {
      {1, 1, 0, 1},     {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1}, {0.5, 0, 0.5, 1},
      {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};
  if (depth == 1) {
    for (auto& color : table) color[0] = 1;
  }
  return table;
}

// DrawBoundingBoxes(images [b, h, w, d], boxes [b, n, 4]) and V2 (colors
// [k, >= d]): each box's one-pixel outline, its corners scaled by the
// image size and truncated toward zero, the parts inside the image drawn;
// inverted boxes and boxes wholly outside are skipped. Box i takes colour
// i mod k.
class DrawBoundingBoxesOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    if (images.dims() != 4) return absl::InvalidArgumentError("The rank of the images should be 4");
    if (boxes.dims() != 3) {
      return absl::InvalidArgumentError("The rank of the boxes tensor should be 3");
    }
    if (images.shape().dim_size(0) != boxes.shape().dim_size(0)) {
      return absl::InvalidArgumentError("The batch sizes should be the same");
    }
    const int64_t batch = images.shape().dim_size(0), height = images.shape().dim_size(1),
                  width = images.shape().dim_size(2), depth = images.shape().dim_size(3);
    if (depth != 1 && depth != 3 && depth != 4) {
      return absl::InvalidArgumentError(
          "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)");
    }
    if (boxes.shape().dim_size(2) != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("The size of the third dimension of the box must be 4. Received: ",
                       boxes.shape().dim_size(2)));
    }
    std::vector<std::vector<float>> colors;
    if (ctx->num_inputs() == 3) {
      const Tensor& given = ctx->input(2);
      if (given.dims() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("colors must be a 2-D matrix", given.shape().DebugString()));
      }
      if (given.shape().dim_size(1) < depth) {
        return absl::InvalidArgumentError(
            absl::StrCat("colors must have equal or more channels than the image provided: ",
                         given.shape().DebugString()));
      }
      const float* c = given.data<float>();
      const int64_t k = given.shape().dim_size(1);
      for (int64_t i = 0; i < given.shape().dim_size(0) && given.NumElements() > 0; ++i) {
        colors.emplace_back(c + i * k, c + i * k + depth);
      }
    }
    if (colors.empty()) colors = DefaultColors(depth);
    const float* b = boxes.data<float>();
    for (int64_t i = 0; i < boxes.NumElements(); ++i) {
      // TF converts them to integers unchecked.
      if (!std::isfinite(b[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("boxes must be finite, got ", b[i], " at ", i));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, images.shape()));
    float* canvas = out->data<float>();
    std::copy_n(images.data<float>(), images.NumElements(), canvas);
    const int64_t n = boxes.shape().dim_size(1);
    // A corner's pixel: the float product truncated, held in [-2^62, 2^62].
    const auto pixel = [](float v, int64_t size) {
      const float p = v * static_cast<float>(size - 1);
      return static_cast<int64_t>(std::clamp(p, -4.6e18f, 4.6e18f));
    };
    for (int64_t img = 0; img < batch; ++img) {
      for (int64_t i = 0; i < n; ++i) {
        const float* box = b + (img * n + i) * 4;
        const std::vector<float>& color = colors[i % colors.size()];
        const int64_t top = pixel(box[0], height), left = pixel(box[1], width);
        const int64_t bottom = pixel(box[2], height), right = pixel(box[3], width);
        if (top > bottom || left > right) continue;
        if (top >= height || bottom < 0 || left >= width || right < 0) continue;
        const int64_t top_c = std::max<int64_t>(top, 0), bottom_c = std::min(bottom, height - 1);
        const int64_t left_c = std::max<int64_t>(left, 0), right_c = std::min(right, width - 1);
        const auto paint = [&](int64_t y, int64_t x) {
          std::copy_n(color.begin(), depth, canvas + ((img * height + y) * width + x) * depth);
        };
        for (int64_t x = left_c; x <= right_c; ++x) {
          if (top >= 0) paint(top, x);
          if (bottom < height) paint(bottom, x);
        }
        for (int64_t y = top_c; y <= bottom_c; ++y) {
          if (left >= 0) paint(y, left);
          if (right < width) paint(y, right);
        }
      }
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(bounding_box_ops) {
  for (const char* op : {"SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
                         "StatelessSampleDistortedBoundingBox"}) {
    RegisterKernel(KernelDefBuilder(op).Device(kDeviceCpu),
                   MakeFactory<SampleDistortedBoundingBoxOp>());
  }
  for (const char* op : {"DrawBoundingBoxes", "DrawBoundingBoxesV2"}) {
    RegisterKernel(KernelDefBuilder(op).Device(kDeviceCpu).TypeConstraint<float>("T"),
                   MakeFactory<DrawBoundingBoxesOp>());
  }
}

}  // namespace
}  // namespace towerflow
