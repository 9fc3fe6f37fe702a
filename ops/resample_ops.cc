// Resampling by a separable kernel: ScaleAndTranslate (tf.image.resize with
// lanczos3/5, gaussian, mitchellcubic, keyscubic or any method with
// antialias=True) and its gradient op (kernels/cpu/scale_and_translate_ops.cc).
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status PairInput(InferenceContext* c, int i) {
  PartialTensorShape pair;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &pair));
  if (pair.dims() == 1 && pair.dim_size(0) >= 0 && pair.dim_size(0) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", i, " must have two elements, got ", pair.DebugString()));
  }
  return absl::OkStatus();
}

TW_REGISTER_OP("ScaleAndTranslate")
    .Input("images: T")
    .Input("size: int32")
    .Input("scale: float")
    .Input("translation: float")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}")
    .Attr("kernel_type: string = 'lanczos3'")
    .Attr("antialias: bool = true")
    .Doc(
        "images [batch, height, width, channels] resampled to size [2] (height, width): output "
        "pixel centres map back by (x + 0.5 - translation) / scale, weighted by kernel_type "
        "(lanczos1/3/5, gaussian, box, triangle, keyscubic, mitchellcubic), widened by 1 / scale "
        "when shrinking with antialias.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape images;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &images));
      TW_RETURN_IF_ERROR(PairInput(c, 1));
      TW_RETURN_IF_ERROR(PairInput(c, 2));
      TW_RETURN_IF_ERROR(PairInput(c, 3));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->ConstantIntInput(1));
      const bool known = size.has_value() && size->size() == 2;
      const auto dim = [&](int i) { return images.dims() == 4 ? images.dim_size(i) : -1; };
      c->set_output(0, PartialTensorShape(
                           {dim(0), known ? (*size)[0] : -1, known ? (*size)[1] : -1, dim(3)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("ScaleAndTranslateGrad")
    .Input("grads: T")
    .Input("original_image: T")
    .Input("scale: float")
    .Input("translation: float")
    .Output("output: T")
    .Attr("T: {float}")
    .Attr("kernel_type: string = 'lanczos3'")
    .Attr("antialias: bool = true")
    .Doc("The gradient of ScaleAndTranslate for original_image: grads sent back by its weights.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape image;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &image));
      c->set_output(0, image);
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
