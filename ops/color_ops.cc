// Colour: RGBToHSV and HSVToRGB, and the adjustments of tf.image
// (AdjustHue, AdjustSaturation, AdjustContrastv2). Pixels are the last
// dimension, 3 channels (kernels/cpu/color_ops.cc).
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// [..., 3]: the rank at least `min_rank`, the last dimension 3 if known.
absl::Status PixelsShape(InferenceContext* c, int min_rank) {
  PartialTensorShape images;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), min_rank, &images));
  if (!images.unknown_rank()) {
    int64_t channels = 0;
    TW_RETURN_IF_ERROR(c->MergeDim(images.dim_size(images.dims() - 1), 3, &channels));
  }
  for (int i = 1; i < c->num_inputs(); ++i) {
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  c->set_output(0, images);
  return absl::OkStatus();
}

TW_REGISTER_OP("RGBToHSV")
    .Input("images: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .Doc("RGB pixels (the last dimension, in [0, 1]) as hue, saturation and value.")
    .SetShapeFn([](InferenceContext* c) { return PixelsShape(c, 1); });

TW_REGISTER_OP("HSVToRGB")
    .Input("images: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .Doc("Hue, saturation and value pixels as RGB.")
    .SetShapeFn([](InferenceContext* c) { return PixelsShape(c, 1); });

TW_REGISTER_OP("AdjustHue")
    .Input("images: T")
    .Input("delta: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .Doc("Images [..., H, W, 3] with delta (a turn is 1) added to each pixel's hue.")
    .SetShapeFn([](InferenceContext* c) { return PixelsShape(c, 3); });

TW_REGISTER_OP("AdjustSaturation")
    .Input("images: T")
    .Input("scale: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .Doc("Images [..., H, W, 3] with each pixel's saturation scaled (and clamped to [0, 1]).")
    .SetShapeFn([](InferenceContext* c) { return PixelsShape(c, 3); });

TW_REGISTER_OP("AdjustContrastv2")
    .Input("images: T")
    .Input("contrast_factor: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .Doc("Images [..., H, W, C] moved away from each channel's mean by contrast_factor.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape images, scalar;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 3, &images));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      c->set_output(0, images);
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
