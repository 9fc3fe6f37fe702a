// Gradients of the image ops: resizing, CropAndResize and the space/batch
// block moves.
// g is dL/d(output).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"
#include "ops/ops.h"

namespace towerflow {
namespace {

using grad_util::In;

// The [height, width] of an NHWC tensor, as int32.
Output HeightWidth(const Scope& scope, const Output& images) {
  return ops::Slice(scope, ops::Shape(scope, images), ops::Const(scope, {1}),
                    ops::Const(scope, {2}));
}

template <typename Attrs>
Attrs ResizeAttrsOf(const Scope& scope, const Operation& op) {
  return Attrs()
      .AlignCorners(grad_util::Attr<bool>(scope, op, "align_corners"))
      .HalfPixelCenters(grad_util::Attr<bool>(scope, op, "half_pixel_centers"));
}

// y = resize_bilinear(x, size): each output pixel's gradient goes back to
// its four taps. Integer images get none (their gradient op is float-ish).
TW_GRAD_FN(ResizeBilinearGradient) {
  const Output x = In(op, 0);
  if (x.type() == DT_FLOAT || x.type() == DT_DOUBLE) {
    grad_outputs->push_back(ops::ResizeBilinearGrad(
        scope, grad_inputs[0], x, ResizeAttrsOf<ops::ResizeBilinearGrad::Attrs>(scope, op)));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = resize_bilinear_grad(dy, x) is linear in dy and the adjoint of the
// resize: d(dy) = resize_bilinear(g, size of dy).
TW_GRAD_FN(ResizeBilinearGradGradient) {
  const Output dy = In(op, 0);
  grad_outputs->push_back(
      ops::ResizeBilinear(scope, grad_inputs[0], HeightWidth(scope, dy),
                          ResizeAttrsOf<ops::ResizeBilinear::Attrs>(scope, op)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = resize_bicubic(x, size): each gradient back along its 4x4 taps (TF:
// float and double images only).
TW_GRAD_FN(ResizeBicubicGradient) {
  const Output x = In(op, 0);
  if (x.type() == DT_FLOAT || x.type() == DT_DOUBLE) {
    grad_outputs->push_back(ops::ResizeBicubicGrad(
        scope, grad_inputs[0], x, ResizeAttrsOf<ops::ResizeBicubicGrad::Attrs>(scope, op)));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = resize_bicubic_grad(dy, x), linear in dy, the resize's adjoint:
// d(dy) = resize_bicubic(g, size of dy).
TW_GRAD_FN(ResizeBicubicGradGradient) {
  const Output dy = In(op, 0);
  grad_outputs->push_back(ops::ResizeBicubic(scope, grad_inputs[0], HeightWidth(scope, dy),
                                             ResizeAttrsOf<ops::ResizeBicubic::Attrs>(scope, op)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = resize_nearest(x, size): each gradient added to the pixel it copies.
TW_GRAD_FN(ResizeNearestNeighborGradient) {
  grad_outputs->push_back(ops::ResizeNearestNeighborGrad(
      scope, grad_inputs[0], HeightWidth(scope, In(op, 0)),
      ResizeAttrsOf<ops::ResizeNearestNeighborGrad::Attrs>(scope, op)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = resize_nearest_grad(dy, size), linear in dy, the resize's adjoint:
// d(dy) = resize_nearest(g, size of dy).
TW_GRAD_FN(ResizeNearestNeighborGradGradient) {
  grad_outputs->push_back(
      ops::ResizeNearestNeighbor(scope, grad_inputs[0], HeightWidth(scope, In(op, 0)),
                                 ResizeAttrsOf<ops::ResizeNearestNeighbor::Attrs>(scope, op)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = space_to_batch(x, block, paddings) permutes x's elements (and adds
// zeros): dx = batch_to_space(g, block, paddings as crops), and back.
TW_GRAD_FN(SpaceToBatchNDGrad) {
  grad_outputs->push_back(ops::BatchToSpaceND(scope, grad_inputs[0], In(op, 1), In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(BatchToSpaceNDGrad) {
  grad_outputs->push_back(ops::SpaceToBatchND(scope, grad_inputs[0], In(op, 1), In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// crops = crop_and_resize(image, boxes, ...): the image gets the crops'
// gradient spread back (floating images only), the boxes the bilinear
// slope's (also for nearest sampling, as TF approximates it).
TW_GRAD_FN(CropAndResizeGrad) {
  const Output image = In(op, 0), boxes = In(op, 1), box_ind = In(op, 2);
  const DataType t = image.type();
  const std::string method = grad_util::Attr<std::string>(scope, op, "method");
  if (t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF) {
    grad_outputs->push_back(
        ops::CropAndResizeGradImage(scope, grad_inputs[0], boxes, box_ind, ops::Shape(scope, image),
                                    t, ops::CropAndResizeGradImage::Method(method)));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  grad_outputs->push_back(
      ops::CropAndResizeGradBoxes(scope, grad_inputs[0], image, boxes, box_ind));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

TW_REGISTER_GRADIENT("CropAndResize", CropAndResizeGrad);
TW_REGISTER_GRADIENT("ResizeBilinear", ResizeBilinearGradient);
TW_REGISTER_GRADIENT("ResizeBilinearGrad", ResizeBilinearGradGradient);
TW_REGISTER_GRADIENT("ResizeBicubic", ResizeBicubicGradient);
TW_REGISTER_GRADIENT("ResizeBicubicGrad", ResizeBicubicGradGradient);
TW_REGISTER_GRADIENT("ResizeNearestNeighbor", ResizeNearestNeighborGradient);
TW_REGISTER_GRADIENT("ResizeNearestNeighborGrad", ResizeNearestNeighborGradGradient);
TW_REGISTER_GRADIENT("SpaceToBatchND", SpaceToBatchNDGrad);
TW_REGISTER_GRADIENT("BatchToSpaceND", BatchToSpaceNDGrad);

}  // namespace
}  // namespace towerflow
