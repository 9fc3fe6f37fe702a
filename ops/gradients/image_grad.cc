// Gradients of the image ops: resizing, CropAndResize, ExtractImagePatches
// and ExtractVolumePatches, RGBToHSV and the space/batch block moves.
// g is dL/d(output).
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/matrix_ops.h"
#include "ops/gen/resample_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

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
// y = scale_and_translate(x, size, scale, translation): each gradient back
// along its span's weights (float images; TF's grad op takes float only).
TW_GRAD_FN(ScaleAndTranslateGradient) {
  const Output x = In(op, 0);
  const auto kernel = grad_util::Attr<std::string>(scope, op, "kernel_type", "lanczos3");
  const bool antialias = grad_util::Attr<bool>(scope, op, "antialias", true);
  if (x.type() == DT_FLOAT) {
    grad_outputs->push_back(ops::ScaleAndTranslateGrad(
        scope, grad_inputs[0], x, In(op, 2), In(op, 3),
        ops::ScaleAndTranslateGrad::KernelType(kernel).Antialias(antialias)));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  for (int i = 1; i < 4; ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = scale_and_translate_grad(dy, x), linear in dy, the adjoint of the
// forward resampling: d(dy) = scale_and_translate(g, size of dy).
TW_GRAD_FN(ScaleAndTranslateGradGradient) {
  const auto kernel = grad_util::Attr<std::string>(scope, op, "kernel_type", "lanczos3");
  const bool antialias = grad_util::Attr<bool>(scope, op, "antialias", true);
  grad_outputs->push_back(ops::ScaleAndTranslate(
      scope, grad_inputs[0], HeightWidth(scope, In(op, 0)), In(op, 2), In(op, 3),
      ops::ScaleAndTranslate::KernelType(kernel).Antialias(antialias)));
  for (int i = 1; i < 4; ++i) grad_outputs->push_back(NoGradient());
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
// The first versions, each the other's gradient with the same block_size
// (TF's _SpaceToBatchGrad, _BatchToSpaceGrad).
TW_GRAD_FN(SpaceToBatchGrad) {
  const int64_t size = grad_util::Attr<int64_t>(scope, op, "block_size");
  *grad_outputs = {ops::BatchToSpace(scope, grad_inputs[0], In(op, 1), size), NoGradient()};
  return scope.status();
}
TW_GRAD_FN(BatchToSpaceGrad) {
  const int64_t size = grad_util::Attr<int64_t>(scope, op, "block_size");
  *grad_outputs = {ops::SpaceToBatch(scope, grad_inputs[0], In(op, 1), size), NoGradient()};
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

// patches = extract_image_patches(x) or extract_volume_patches(x): each
// patch entry is one input pixel (or padding), so dx sums g over the
// entries. As TF's array_grad.py: the op is run on a map of pixel numbers
// (1-based, 0 for padding) to learn which entry holds which pixel, and g is
// summed by that map.
absl::Status PatchesGrad(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs,
                         int spatial) {
  const int rank = spatial + 2;
  const Output x = In(op, 0), g = grad_inputs[0];
  const ops::Unpack in(scope, ops::Shape(scope, x, ops::Shape::OutType(DT_INT64)), rank);
  const Output batch = in[0], channels = in[rank - 1];
  const ops::Unpack out(
      scope,
      ops::Slice(scope, ops::Shape(scope, op.output(0), ops::Shape::OutType(DT_INT64)),
                 ops::Const(scope, {1}), ops::Const(scope, {spatial})),
      spatial);
  const auto ksizes = grad_util::Attr<std::vector<int64_t>>(scope, op, "ksizes");
  const auto strides = grad_util::Attr<std::vector<int64_t>>(scope, op, "strides");
  const auto padding = grad_util::Attr<std::string>(scope, op, "padding");
  const Output one = ops::Const(scope, int64_t{1});
  Output pixels = one;
  std::vector<Output> numbers_shape = {one}, g_shape = {batch}, sizes;
  for (int i = 1; i <= spatial; ++i) {
    pixels = ops::Mul(scope, pixels, in[i]);
    numbers_shape.push_back(in[i]);
    sizes.push_back(in[i]);
    g_shape.push_back(out[i - 1]);
  }
  numbers_shape.push_back(one);
  for (int i = 1; i <= spatial; ++i) g_shape.push_back(ops::Const(scope, ksizes[i]));
  g_shape.push_back(channels);
  const Output numbers =
      ops::Reshape(scope, ops::Range(scope, one, ops::Add(scope, pixels, one), one),
                   ops::Pack(scope, numbers_shape));
  Output map;
  if (spatial == 2) {
    map = ops::ExtractImagePatches(scope, numbers, ksizes, strides,
                                   grad_util::Attr<std::vector<int64_t>>(scope, op, "rates"),
                                   padding);
  } else {
    map = ops::ExtractVolumePatches(scope, numbers, ksizes, strides, padding);
  }
  // g as [out..., taps..., batch, channels] rows of batch * channels.
  std::vector<Output> perm;
  for (int i = 1; i <= 2 * spatial; ++i) perm.push_back(ops::Const(scope, i));
  perm.push_back(ops::Const(scope, 0));
  perm.push_back(ops::Const(scope, 2 * spatial + 1));
  const Output rows = ops::Reshape(
      scope,
      ops::Transpose(scope, ops::Reshape(scope, g, ops::Pack(scope, g_shape)),
                     ops::Pack(scope, perm)),
      ops::Pack(scope, {ops::Const(scope, int64_t{-1}), ops::Mul(scope, batch, channels)}));
  // Padding entries are -1: UnsortedSegmentSum drops them.
  const Output ids = ops::Sub(scope, ops::Reshape(scope, map, ops::Const(scope, {-1})), one);
  const Output summed = ops::UnsortedSegmentSum(scope, rows, ids, pixels);
  sizes.push_back(batch);
  sizes.push_back(channels);
  std::vector<Output> back = {ops::Const(scope, spatial)};
  for (int i = 0; i < spatial; ++i) back.push_back(ops::Const(scope, i));
  back.push_back(ops::Const(scope, spatial + 1));
  grad_outputs->push_back(ops::Transpose(
      scope, ops::Reshape(scope, summed, ops::Pack(scope, sizes)), ops::Pack(scope, back)));
  return scope.status();
}

TW_GRAD_FN(ExtractImagePatchesGrad) { return PatchesGrad(scope, op, grad_inputs, grad_outputs, 2); }
TW_GRAD_FN(ExtractVolumePatchesGrad) {
  return PatchesGrad(scope, op, grad_inputs, grad_outputs, 3);
}

// hsv = rgb_to_hsv(rgb): TF's _RGBToHSVGrad, the piecewise derivative of
// each of h, s, v in r, g, b, selected by which channel is the largest and
// which the smallest (ties broken r > g > b), with 1 / 0 taken as 0.
TW_GRAD_FN(RGBToHSVGrad) {
  const DataType t = In(op, 0).type();
  const ops::Unpack rgb(scope, In(op, 0), 3, ops::Unpack::Axis(-1));
  const ops::Unpack hsv(scope, op.output(0), 3, ops::Unpack::Axis(-1));
  const ops::Unpack g(scope, grad_inputs[0], 3, ops::Unpack::Axis(-1));
  const Output r = rgb[0], gr = rgb[1], b = rgb[2], sat = hsv[1], val = hsv[2];
  const auto as_t = [&](const Output& x) { return ops::Cast(scope, x, t); };
  const auto num = [&](double v) { return ops::Cast(scope, ops::Const(scope, v), t); };
  const auto rec = [&](const Output& x) { return ops::DivNoNan(scope, num(1), x); };
  const auto pos = [&](const Output& x) { return as_t(ops::Greater(scope, x, num(0))); };
  const auto both = [&](const Output& p, const Output& q) {
    return as_t(ops::LogicalAnd(scope, p, q));
  };
  const auto prod = [&](std::initializer_list<Output> xs) {
    Output out = *xs.begin();
    for (auto it = xs.begin() + 1; it != xs.end(); ++it) out = ops::Mul(scope, out, *it);
    return out;
  };
  const auto sq = [&](const Output& x) { return ops::Square(scope, x); };
  const auto sub = [&](const Output& x, const Output& y) { return ops::Sub(scope, x, y); };
  // Which channel is the maximum and which the minimum.
  const Output r_max = both(ops::GreaterEqual(scope, r, b), ops::GreaterEqual(scope, r, gr));
  const Output g_max = both(ops::Greater(scope, gr, r), ops::GreaterEqual(scope, gr, b));
  const Output b_max = both(ops::Greater(scope, b, r), ops::Greater(scope, b, gr));
  const Output r_min = both(ops::Less(scope, r, b), ops::Less(scope, r, gr));
  const Output g_min = both(ops::LessEqual(scope, gr, r), ops::Less(scope, gr, b));
  const Output b_min = both(ops::LessEqual(scope, b, r), ops::LessEqual(scope, b, gr));
  // Saturation: d(range / max) for the channel that is the max (min / x^2)
  // or the min (-1 / max).
  const auto ds = [&](const Output& x, const Output& x_max, const Output& x_min, const Output& y,
                      const Output& y_max, const Output& y_min, const Output& z,
                      const Output& z_max, const Output& z_min) {
    return ops::Mul(
        scope, pos(x),
        ops::AddV2(
            scope,
            prod({x_max, ops::AddV2(scope, ops::Mul(scope, y_min, y), ops::Mul(scope, z_min, z)),
                  rec(sq(x))}),
            prod({x_min, num(-1),
                  rec(ops::AddV2(scope, ops::Mul(scope, y_max, y), ops::Mul(scope, z_max, z)))})));
  };
  const Output ds_dr = ds(r, r_max, r_min, gr, g_max, g_min, b, b_max, b_min);
  const Output ds_dg = ds(gr, g_max, g_min, r, r_max, r_min, b, b_max, b_min);
  const Output ds_db = ds(b, b_max, b_min, gr, g_max, g_min, r, r_max, r_min);
  // Hue, in degrees / 360 as TF: five cases per channel.
  const Output sv = ops::Mul(scope, rec(sq(sat)), rec(sq(val)));
  const auto hue = [&](std::initializer_list<Output> terms) {
    Output sum = num(0);
    for (const Output& term : terms) sum = ops::AddV2(scope, sum, ops::Mul(scope, num(60), term));
    return ops::Div(scope, sum, num(360));
  };
  const Output dh_dr = hue({prod({pos(r), r_max, num(-1), sub(gr, b), sv}),
                            prod({pos(gr), g_max, r_min, sub(b, gr), rec(sq(sub(r, gr)))}),
                            prod({pos(gr), g_max, b_min, num(-1), rec(sub(gr, b))}),
                            prod({pos(b), b_max, r_min, sub(b, gr), rec(sq(sub(b, r)))}),
                            prod({pos(b), b_max, g_min, rec(sub(b, gr))})});
  const Output dh_dg = hue({prod({pos(gr), g_max, num(-1), sub(b, r), sv}),
                            prod({pos(r), r_max, g_min, sub(r, b), rec(sq(sub(r, gr)))}),
                            prod({pos(r), r_max, b_min, rec(sub(r, b))}),
                            prod({pos(b), b_max, g_min, sub(r, b), rec(sq(sub(b, gr)))}),
                            prod({pos(b), b_max, r_min, num(-1), rec(sub(b, r))})});
  const Output dh_db = hue({prod({pos(b), b_max, num(-1), sub(r, gr), sv}),
                            prod({pos(r), r_max, b_min, sub(gr, r), rec(sq(sub(r, b)))}),
                            prod({pos(r), r_max, g_min, num(-1), rec(sub(r, gr))}),
                            prod({pos(gr), g_max, b_min, sub(gr, r), rec(sq(sub(gr, b)))}),
                            prod({pos(gr), g_max, r_min, rec(sub(gr, r))})});
  const auto per_channel = [&](const Output& gx, const Output& dr, const Output& dg,
                               const Output& db) {
    return ops::Pack(scope,
                     {ops::Mul(scope, gx, dr), ops::Mul(scope, gx, dg), ops::Mul(scope, gx, db)},
                     ops::Pack::Axis(-1));
  };
  grad_outputs->push_back(ops::AddV2(scope,
                                     ops::AddV2(scope, per_channel(g[2], r_max, g_max, b_max),
                                                per_channel(g[1], ds_dr, ds_dg, ds_db)),
                                     per_channel(g[0], dh_dr, dh_dg, dh_db)));
  return scope.status();
}

// TF's gradient of a projective transform: the incoming gradient warped
// back by the inverse transforms (zeros outside) onto the images' size.
// It is the exact adjoint for moves by whole pixels (translations, flips)
// and, as in TF, an approximation for the others.
Output InverseTransforms(const Scope& scope, const Output& transforms) {
  const Output n = ops::Slice(scope, ops::Shape(scope, transforms), {0}, {1});
  const Output ones = ops::Fill(scope, ops::ConcatV2(scope, {n, ops::Const(scope, {1})}, 0), 1.0f);
  const Output matrices = ops::Reshape(scope, ops::ConcatV2(scope, {transforms, ones}, 1),
                                       ops::ConcatV2(scope, {n, ops::Const(scope, {3, 3})}, 0));
  const Output flat = ops::Reshape(scope, ops::MatrixInverse(scope, matrices),
                                   ops::ConcatV2(scope, {n, ops::Const(scope, {9})}, 0));
  const Output scaled = ops::Div(scope, flat, ops::Slice(scope, flat, {0, 8}, {-1, 1}));
  return ops::Slice(scope, scaled, {0, 0}, {-1, 8});
}

TW_GRAD_FN(ImageProjectiveTransformGrad) {
  const Output images = In(op, 0);
  const std::string interpolation = grad_util::Attr<std::string>(scope, op, "interpolation");
  const std::string fill_mode = grad_util::Attr<std::string>(scope, op, "fill_mode");
  const Output inverse = InverseTransforms(scope, In(op, 1));
  const Output size = ops::Slice(scope, ops::Shape(scope, images), {1}, {2});
  Output grad;
  if (op.num_inputs() == 4) {
    grad =
        ops::ImageProjectiveTransformV3(scope, grad_inputs[0], inverse, size, 0.0f, interpolation,
                                        ops::ImageProjectiveTransformV3::FillMode(fill_mode));
  } else {
    grad = ops::ImageProjectiveTransformV2(scope, grad_inputs[0], inverse, size, interpolation,
                                           ops::ImageProjectiveTransformV2::FillMode(fill_mode));
  }
  grad_outputs->assign(op.num_inputs(), NoGradient());
  (*grad_outputs)[0] = grad;
  return scope.status();
}

TW_REGISTER_GRADIENT("CropAndResize", CropAndResizeGrad);
TW_REGISTER_GRADIENT("ImageProjectiveTransformV2", ImageProjectiveTransformGrad);
TW_REGISTER_GRADIENT("ImageProjectiveTransformV3", ImageProjectiveTransformGrad);
TW_REGISTER_GRADIENT("RGBToHSV", RGBToHSVGrad);
TW_REGISTER_GRADIENT("ExtractImagePatches", ExtractImagePatchesGrad);
TW_REGISTER_GRADIENT("ExtractVolumePatches", ExtractVolumePatchesGrad);
TW_REGISTER_GRADIENT("ResizeBilinear", ResizeBilinearGradient);
TW_REGISTER_GRADIENT("ResizeBilinearGrad", ResizeBilinearGradGradient);
TW_REGISTER_GRADIENT("ResizeBicubic", ResizeBicubicGradient);
TW_REGISTER_GRADIENT("ResizeBicubicGrad", ResizeBicubicGradGradient);
TW_REGISTER_GRADIENT("ScaleAndTranslate", ScaleAndTranslateGradient);
TW_REGISTER_GRADIENT("ScaleAndTranslateGrad", ScaleAndTranslateGradGradient);
TW_REGISTER_GRADIENT("ResizeNearestNeighbor", ResizeNearestNeighborGradient);
TW_REGISTER_GRADIENT("ResizeNearestNeighborGrad", ResizeNearestNeighborGradGradient);
TW_REGISTER_GRADIENT("SpaceToBatchND", SpaceToBatchNDGrad);
TW_REGISTER_GRADIENT("SpaceToBatch", SpaceToBatchGrad);
TW_REGISTER_GRADIENT("BatchToSpace", BatchToSpaceGrad);
TW_REGISTER_GRADIENT("BatchToSpaceND", BatchToSpaceNDGrad);

}  // namespace
}  // namespace towerflow
