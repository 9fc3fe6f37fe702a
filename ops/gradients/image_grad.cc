// Gradients of the image ops: resizing, CropAndResize, ExtractImagePatches
// and the space/batch block moves.
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

// patches = extract_image_patches(x): each patch entry is one input pixel
// (or padding), so dx sums g over the entries. As TF's array_grad.py: the
// op is run on a map of pixel numbers (1-based, 0 for padding) to learn
// which entry holds which pixel, and g is summed by that map.
TW_GRAD_FN(ExtractImagePatchesGrad) {
  const Output x = In(op, 0), g = grad_inputs[0];
  const ops::Unpack in(scope, ops::Shape(scope, x, ops::Shape::OutType(DT_INT64)), 4);
  const Output batch = in[0], rows_in = in[1], cols_in = in[2], channels = in[3];
  const ops::Unpack out(
      scope,
      ops::Slice(scope, ops::Shape(scope, op.output(0), ops::Shape::OutType(DT_INT64)),
                 ops::Const(scope, {1}), ops::Const(scope, {2})),
      2);
  const auto ksizes = grad_util::Attr<std::vector<int64_t>>(scope, op, "ksizes");
  const auto strides = grad_util::Attr<std::vector<int64_t>>(scope, op, "strides");
  const auto rates = grad_util::Attr<std::vector<int64_t>>(scope, op, "rates");
  const auto padding = grad_util::Attr<std::string>(scope, op, "padding");
  const Output pixels = ops::Mul(scope, rows_in, cols_in);
  const Output numbers = ops::Reshape(
      scope,
      ops::Range(scope, ops::Const(scope, 1.0f),
                 ops::Cast(scope, ops::Add(scope, pixels, ops::Const(scope, int64_t{1})), DT_FLOAT),
                 ops::Const(scope, 1.0f)),
      ops::Pack(scope,
                {ops::Const(scope, int64_t{1}), rows_in, cols_in, ops::Const(scope, int64_t{1})}));
  const Output map = ops::Cast(
      scope, ops::ExtractImagePatches(scope, numbers, ksizes, strides, rates, padding), DT_INT64);
  const Output g6 =
      ops::Reshape(scope, g,
                   ops::Pack(scope, {batch, out[0], out[1], ops::Const(scope, ksizes[1]),
                                     ops::Const(scope, ksizes[2]), channels}));
  const Output rows = ops::Reshape(
      scope, ops::Transpose(scope, g6, {1, 2, 3, 4, 0, 5}),
      ops::Pack(scope, {ops::Const(scope, int64_t{-1}), ops::Mul(scope, batch, channels)}));
  // Padding entries are -1: UnsortedSegmentSum drops them.
  const Output ids = ops::Sub(scope, ops::Reshape(scope, map, ops::Const(scope, {-1})), int64_t{1});
  const Output summed = ops::UnsortedSegmentSum(scope, rows, ids, pixels);
  grad_outputs->push_back(ops::Transpose(
      scope, ops::Reshape(scope, summed, ops::Pack(scope, {rows_in, cols_in, batch, channels})),
      {2, 0, 1, 3}));
  return scope.status();
}

TW_REGISTER_GRADIENT("CropAndResize", CropAndResizeGrad);
TW_REGISTER_GRADIENT("ExtractImagePatches", ExtractImagePatchesGrad);
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
