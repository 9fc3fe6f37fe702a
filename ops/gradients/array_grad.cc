// Gradients of the shape, data-movement and variable ops. g is dL/d(output).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/fake_quant_ops.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;
using GradOutputs = std::vector<Output>;

// The constant axis of a concat, made non-negative against `rank` when the
// rank is known (-1 when not).
absl::StatusOr<int64_t> ConstAxis(const Operation& op, const Output& axis, int rank) {
  std::optional<std::vector<int64_t>> v = grad_util::ConstInts(axis);
  if (!v.has_value() || v->size() != 1) {
    return absl::UnimplementedError(absl::StrCat("Gradient of ", op.node()->type_string(),
                                                 " node '", op.name(),
                                                 "' needs a constant scalar axis"));
  }
  int64_t a = (*v)[0];
  if (a < 0 && rank >= 0) a += rank;
  return a;
}

// y = identity(x) for each input of IdentityN.
TW_GRAD_FN(IdentityNGrad) {
  *grad_outputs = grad_inputs;
  return scope.status();
}
// y = check_numerics(x) (or V2): the gradient is checked too, by the same
// op.
TW_GRAD_FN(CheckNumericsGrad) {
  const std::string message =
      absl::StrCat("Not a number (NaN) or infinity (Inf) values detected in gradient. ",
                   grad_util::Attr<std::string>(scope, op, "message"));
  grad_outputs->push_back(op.node()->type_string() == "CheckNumericsV2"
                              ? Output(ops::CheckNumericsV2(scope, grad_inputs[0], message))
                              : Output(ops::CheckNumerics(scope, grad_inputs[0], message)));
  return scope.status();
}
TW_GRAD_FN(PreventGradientGrad) {
  return absl::InvalidArgumentError(
      absl::StrCat("Gradient explicitly disabled. Reason: ",
                   grad_util::Attr<std::string>(scope, op, "message")));
}
// Reshape, ExpandDims, Squeeze: dx = reshape(g, shape(x)).
TW_GRAD_FN(ReshapeGrad) {
  const Output x = In(op, 0);
  Output shape = x.shape().IsFullyDefined()
                     ? ops::Const(scope, MakeTensorProto<int64_t>(x.shape().dim_sizes(),
                                                                  TensorShape({x.shape().dims()})))
                     : Output(ops::Shape(scope, x));
  grad_outputs->push_back(ops::Reshape(scope, grad_inputs[0], shape));
  for (int i = 1; i < op.num_inputs(); ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = transpose(x, p): dx = transpose(g, p^-1).
TW_GRAD_FN(TransposeGrad) {
  grad_outputs->push_back(
      ops::Transpose(scope, grad_inputs[0], ops::InvertPermutation(scope, In(op, 1))));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// y = concat(x_0 .. x_n-1, axis): dx_i = g's slice of x_i's extent along
// axis (SplitV by the inputs' sizes). The sizes are constants when the
// shapes are known, else read from Shape at run time.
absl::Status ConcatGradCommon(const Scope& scope, const Operation& op, int first_value, int n,
                              const Output& axis_in, const Output& g, GradOutputs* values) {
  const PartialTensorShape& first = In(op, first_value).shape();
  TW_ASSIGN_OR_RETURN(int64_t axis, ConstAxis(op, axis_in, first.dims()));
  if (axis < 0) {
    // Negative axis of an input of unknown rank: resolve it at run time.
    Output a = ops::Add(scope, ops::Rank(scope, In(op, first_value)), static_cast<int32_t>(axis));
    Output begin = ops::Reshape(scope, a, {1});
    std::vector<Output> sizes;
    for (int i = 0; i < n; ++i) {
      sizes.push_back(ops::Slice(scope, ops::Shape(scope, In(op, first_value + i)), begin, {1}));
    }
    *values = ops::SplitV(scope, g, ops::ConcatV2(scope, sizes, 0), a, n).output;
    return scope.status();
  }
  const int32_t a = static_cast<int32_t>(axis);
  std::vector<Output> sizes;
  for (int i = 0; i < n; ++i) {
    const Output v = In(op, first_value + i);
    if (!v.shape().unknown_rank() && axis < v.shape().dims() && v.shape().dim_size(axis) >= 0) {
      sizes.push_back(ops::Const(scope, static_cast<int32_t>(v.shape().dim_size(axis))));
    } else {
      sizes.push_back(ops::StridedSlice(scope, ops::Shape(scope, v), {a}, {a + 1}, {1},
                                        ops::StridedSlice::ShrinkAxisMask(1)));
    }
  }
  *values = ops::SplitV(scope, g, ops::Pack(scope, sizes), a, n).output;
  return scope.status();
}
TW_GRAD_FN(ConcatV2Grad) {
  const int n = op.num_inputs() - 1;
  TW_RETURN_IF_ERROR(ConcatGradCommon(scope, op, 0, n, In(op, n), grad_inputs[0], grad_outputs));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(ConcatGrad) {
  GradOutputs values;
  TW_RETURN_IF_ERROR(
      ConcatGradCommon(scope, op, 1, op.num_inputs() - 1, In(op, 0), grad_inputs[0], &values));
  grad_outputs->push_back(NoGradient());
  grad_outputs->insert(grad_outputs->end(), values.begin(), values.end());
  return scope.status();
}
// y_0 .. y_n-1 = split(axis, x): dx = concat(g_0 .. g_n-1, axis).
TW_GRAD_FN(SplitGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::ConcatV2(scope, grad_inputs, In(op, 0)));
  return scope.status();
}
TW_GRAD_FN(SplitVGrad) {
  grad_outputs->push_back(ops::ConcatV2(scope, grad_inputs, In(op, 2)));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = stack(x_i, axis): dx_i = unstack(g, axis)[i].
TW_GRAD_FN(PackGrad) {
  const int64_t axis = grad_util::Attr<int64_t>(scope, op, "axis");
  ops::Unpack unpack(scope, grad_inputs[0], op.num_inputs(), ops::Unpack::Axis(axis));
  *grad_outputs = unpack.output;
  return scope.status();
}
TW_GRAD_FN(UnpackGrad) {
  const int64_t axis = grad_util::Attr<int64_t>(scope, op, "axis");
  grad_outputs->push_back(ops::Pack(scope, grad_inputs, ops::Pack::Axis(axis)));
  return scope.status();
}
// y = slice(x, begin, size): dx = pad(g, [[begin, shape(x) - begin - shape(g)]]).
TW_GRAD_FN(SliceGrad) {
  const Output x = In(op, 0), begin = In(op, 1);
  const DataType index = begin.type();
  Output shape_x = ops::Shape(scope, x, ops::Shape::OutType(index));
  Output shape_g = ops::Shape(scope, grad_inputs[0], ops::Shape::OutType(index));
  Output after = ops::Sub(scope, ops::Sub(scope, shape_x, begin), shape_g);
  Output paddings = ops::Pack(scope, {begin, after}, ops::Pack::Axis(1));
  grad_outputs->push_back(ops::Pad(scope, grad_inputs[0], paddings));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = x[begin:end:strides]: dx scatters g back (StridedSliceGrad).
TW_GRAD_FN(StridedSliceGrad) {
  const Output x = In(op, 0), begin = In(op, 1);
  auto mask = [&](const char* name) { return grad_util::Attr<int64_t>(scope, op, name); };
  grad_outputs->push_back(
      ops::StridedSliceGrad(scope, ops::Shape(scope, x, ops::Shape::OutType(begin.type())), begin,
                            In(op, 2), In(op, 3), grad_inputs[0],
                            ops::StridedSliceGrad::BeginMask(mask("begin_mask"))
                                .EndMask(mask("end_mask"))
                                .EllipsisMask(mask("ellipsis_mask"))
                                .NewAxisMask(mask("new_axis_mask"))
                                .ShrinkAxisMask(mask("shrink_axis_mask"))));
  for (int i = 1; i < 4; ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = x with z[slice] = v (v broadcast to the slice): dx = g with zeros in
// the slice, dv = g[slice] summed to v's shape (TF's
// _TensorStridedSliceUpdateGrad).
TW_GRAD_FN(TensorStridedSliceUpdateGrad) {
  auto mask = [&](const char* name) { return grad_util::Attr<int64_t>(scope, op, name); };
  const Output begin = In(op, 1), end = In(op, 2), strides = In(op, 3), value = In(op, 4);
  const Output g = grad_inputs[0];
  const Output dy = ops::StridedSlice(scope, g, begin, end, strides,
                                      ops::StridedSlice::BeginMask(mask("begin_mask"))
                                          .EndMask(mask("end_mask"))
                                          .EllipsisMask(mask("ellipsis_mask"))
                                          .NewAxisMask(mask("new_axis_mask"))
                                          .ShrinkAxisMask(mask("shrink_axis_mask")));
  grad_outputs->push_back(
      ops::TensorStridedSliceUpdate(scope, g, begin, end, strides, ops::ZerosLike(scope, dy),
                                    ops::TensorStridedSliceUpdate::BeginMask(mask("begin_mask"))
                                        .EndMask(mask("end_mask"))
                                        .EllipsisMask(mask("ellipsis_mask"))
                                        .NewAxisMask(mask("new_axis_mask"))
                                        .ShrinkAxisMask(mask("shrink_axis_mask"))));
  for (int i = 1; i < 4; ++i) grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, dy, value, dy));
  return scope.status();
}
// z = StridedSliceGrad(shape, begin, end, strides, dy) scatters dy into a
// zero tensor of `shape`; it is linear in dy with the slice as adjoint:
// d(dy) = g[begin:end:strides] with the same masks.
TW_GRAD_FN(StridedSliceGradGrad) {
  auto mask = [&](const char* name) { return grad_util::Attr<int64_t>(scope, op, name); };
  for (int i = 0; i < 4; ++i) grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::StridedSlice(scope, grad_inputs[0], In(op, 1), In(op, 2), In(op, 3),
                                            ops::StridedSlice::BeginMask(mask("begin_mask"))
                                                .EndMask(mask("end_mask"))
                                                .EllipsisMask(mask("ellipsis_mask"))
                                                .NewAxisMask(mask("new_axis_mask"))
                                                .ShrinkAxisMask(mask("shrink_axis_mask"))));
  return scope.status();
}
// outputs = dynamic_partition(data, p): each data row went to one output;
// its gradient comes back from that output's gradient. As TF: partition the
// row numbers alike and stitch the gradients back in row order.
absl::Status DynamicPartitionGrad(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  const Output data = In(op, 0), partitions = In(op, 1);
  const int64_t num = grad_util::Attr<int64_t>(scope, op, "num_partitions");
  Output rows = ops::Reshape(scope, ops::Range(scope, 0, ops::Size(scope, partitions), 1),
                             ops::Shape(scope, partitions));
  ops::DynamicPartition rows_by_partition(scope, rows, partitions, num);
  Output stitched = ops::DynamicStitch(scope, rows_by_partition.outputs, grad_inputs).merged;
  grad_outputs->push_back(ops::Reshape(scope, stitched, ops::Shape(scope, data)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// merged = dynamic_stitch(indices, data): data[m][i] went to
// merged[indices[m][i]], so d(data[m]) = gather(g, indices[m]) (TF's rule,
// which also passes a gradient to rows a later index overwrote).
// Fake quantisation's straight-through estimators (TF's array_ops.py): the
// *Gradient ops pass g where x lies in the nudged range; the Vars forms
// also give min (max) the sum of g below (above) it.
TW_GRAD_FN(FakeQuantArgsGrad) {
  ops::FakeQuantWithMinMaxArgsGradient::Attrs attrs;
  attrs = attrs.Min(grad_util::Attr<float>(scope, op, "min"))
              .Max(grad_util::Attr<float>(scope, op, "max"))
              .NumBits(grad_util::Attr<int64_t>(scope, op, "num_bits"))
              .NarrowRange(grad_util::Attr<bool>(scope, op, "narrow_range"));
  grad_outputs->push_back(
      ops::FakeQuantWithMinMaxArgsGradient(scope, grad_inputs[0], In(op, 0), attrs));
  return scope.status();
}
template <typename GradientOp>
absl::Status FakeQuantVarsGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& grad_inputs,
                               std::vector<Output>* grad_outputs) {
  const typename GradientOp::Attrs attrs =
      typename GradientOp::Attrs()
          .NumBits(grad_util::Attr<int64_t>(scope, op, "num_bits"))
          .NarrowRange(grad_util::Attr<bool>(scope, op, "narrow_range"));
  const GradientOp g(scope, grad_inputs[0], In(op, 0), In(op, 1), In(op, 2), attrs);
  grad_outputs->push_back(g.backprops_wrt_input);
  grad_outputs->push_back(g.backprop_wrt_min);
  grad_outputs->push_back(g.backprop_wrt_max);
  return scope.status();
}

// QuantizeAndDequantizeV2/V3: straight through to the input (TF's
// array_grad.py); V4: g where x lies in the given range
// (QuantizeAndDequantizeV4Grad, TF's array_ops.py).
TW_GRAD_FN(QuantizeAndDequantizeStraightGrad) {
  grad_outputs->push_back(grad_inputs[0]);
  for (int i = 1; i < op.num_inputs(); ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(QuantizeAndDequantizeV4Grad) {
  const auto g = ops::QuantizeAndDequantizeV4Grad(
      scope, grad_inputs[0], In(op, 0), In(op, 1), In(op, 2),
      ops::QuantizeAndDequantizeV4Grad::Axis(grad_util::Attr<int64_t>(scope, op, "axis")));
  grad_outputs->push_back(g.input_backprop);
  grad_outputs->push_back(g.input_min_backprop);
  grad_outputs->push_back(g.input_max_backprop);
  return scope.status();
}

absl::Status DynamicStitchGrad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& grad_inputs,
                               std::vector<Output>* grad_outputs) {
  const int n = op.num_inputs() / 2;
  for (int m = 0; m < n; ++m) grad_outputs->push_back(NoGradient());
  for (int m = 0; m < n; ++m) {
    grad_outputs->push_back(ops::GatherV2(scope, grad_inputs[0], In(op, m), 0));
  }
  return scope.status();
}

// y = mirror_pad(x): dx folds g's mirrored borders back (MirrorPadGrad);
// and MirrorPadGrad, linear too, has MirrorPad as its gradient.
TW_GRAD_FN(MirrorPadGradient) {
  const std::string mode = grad_util::Attr<std::string>(scope, op, "mode");
  grad_outputs->push_back(ops::MirrorPadGrad(scope, grad_inputs[0], In(op, 1), mode));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(MirrorPadGradGradient) {
  const std::string mode = grad_util::Attr<std::string>(scope, op, "mode");
  grad_outputs->push_back(ops::MirrorPad(scope, grad_inputs[0], In(op, 1), mode));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// y = reverse(x, axis): dx = reverse(g, axis).
TW_GRAD_FN(ReverseV2Grad) {
  grad_outputs->push_back(ops::ReverseV2(scope, grad_inputs[0], In(op, 1)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// DepthToSpace and SpaceToDepth only move elements, each the other's
// inverse: the gradient moves g back.
TW_GRAD_FN(DepthToSpaceGrad) {
  const int64_t block = grad_util::Attr<int64_t>(scope, op, "block_size");
  const std::string format = grad_util::Attr<std::string>(scope, op, "data_format");
  grad_outputs->push_back(
      ops::SpaceToDepth(scope, grad_inputs[0], block, ops::SpaceToDepth::DataFormat(format)));
  return scope.status();
}
TW_GRAD_FN(SpaceToDepthGrad) {
  const int64_t block = grad_util::Attr<int64_t>(scope, op, "block_size");
  const std::string format = grad_util::Attr<std::string>(scope, op, "data_format");
  grad_outputs->push_back(
      ops::DepthToSpace(scope, grad_inputs[0], block, ops::DepthToSpace::DataFormat(format)));
  return scope.status();
}

// y = pad(x, paddings): dx = slice(g, paddings[:, 0], shape(x)).
TW_GRAD_FN(PadGrad) {
  const Output x = In(op, 0), paddings = In(op, 1);
  Output before = ops::Reshape(
      scope, ops::Slice(scope, paddings, ops::Const(scope, {0, 0}), ops::Const(scope, {-1, 1})),
      {-1});
  Output shape_x = ops::Shape(scope, x, ops::Shape::OutType(paddings.type()));
  grad_outputs->push_back(ops::Slice(scope, grad_inputs[0], before, shape_x));
  for (int i = 1; i < op.num_inputs(); ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = tile(x, m): view g as [m0, d0, m1, d1, ...] and sum the m axes.
TW_GRAD_FN(TileGrad) {
  const Output x = In(op, 0), multiples = In(op, 1);
  Output shape_x = ops::Shape(scope, x, ops::Shape::OutType(multiples.type()));
  Output split_shape = ops::Reshape(
      scope, ops::Transpose(scope, ops::Pack(scope, {multiples, shape_x}), {1, 0}), {-1});
  Output axes = ops::Range(scope, 0, ops::Size(scope, split_shape), 2);
  grad_outputs->push_back(ops::Sum(scope, ops::Reshape(scope, grad_inputs[0], split_shape), axes));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = fill(dims, v): dv = sum(g).
TW_GRAD_FN(FillGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      ops::Sum(scope, grad_inputs[0], ops::Range(scope, 0, ops::Rank(scope, grad_inputs[0]), 1)));
  return scope.status();
}
// y = broadcast_to(x, shape): dx = g summed down to x's shape.
TW_GRAD_FN(BroadcastToGrad) {
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, grad_inputs[0], In(op, 0), op.output(0)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// y = gather(params, indices) along axis 0: dparams has g's rows at
// `indices`, as IndexedSlices of params' shape.
absl::StatusOr<IndexedSlices> GatherSlices(const Scope& scope, const Output& dense_shape,
                                           const PartialTensorShape& params_shape,
                                           const Output& indices, const Output& g) {
  Output size = ops::Size(scope, indices);
  Output inner;
  if (params_shape.IsFullyDefined() && params_shape.dims() >= 1) {
    std::vector<int32_t> dims(params_shape.dim_sizes().begin() + 1, params_shape.dim_sizes().end());
    inner = ops::Const(scope, MakeTensorProto<int32_t>(absl::MakeConstSpan(dims),
                                                       TensorShape({params_shape.dims() - 1})));
  } else {
    inner = ops::StridedSlice(scope, ops::Cast(scope, dense_shape, DT_INT32), {1}, {0}, {1},
                              ops::StridedSlice::EndMask(1));
  }
  Output values_shape = ops::ConcatV2(scope, {ops::ExpandDims(scope, size, 0), inner}, 0);
  IndexedSlices slices{ops::Reshape(scope, g, values_shape), ops::Reshape(scope, indices, {-1}),
                       dense_shape};
  TW_RETURN_IF_ERROR(scope.status());
  return slices;
}

// GatherV2 with batch_dims b: y[j, o, i, r] = params[j, o, indices[j, i], r]
// (j the b batch dims, o the dims between them and the axis). Each g row
// is summed into params row ((j * O + o) * L + indices[j, i]) of params
// viewed as [B * O * L, r], by one UnsortedSegmentSum.
absl::Status BatchGatherGrad(const Scope& scope, const Operation& op, const Output& shape,
                             const std::optional<std::vector<int64_t>>& const_axis,
                             int64_t batch_dims, const Output& g,
                             std::vector<Gradient>* grad_outputs) {
  const Output params = In(op, 0), indices = In(op, 1);
  const int params_rank = params.shape().dims(), indices_rank = indices.shape().dims();
  if (!const_axis.has_value() || const_axis->size() != 1 || params.shape().unknown_rank() ||
      indices.shape().unknown_rank()) {
    return absl::UnimplementedError(absl::StrCat(
        "Gradient of GatherV2 node '", op.name(),
        "' with batch_dims needs a constant axis and params and indices of known rank"));
  }
  int64_t axis = (*const_axis)[0];
  if (axis < 0) axis += params_rank;
  if (batch_dims < 0) batch_dims += indices_rank;
  const int b = static_cast<int>(batch_dims), a = static_cast<int>(axis);
  const Output batch = ops::Prod(scope, ops::Slice(scope, shape, {0}, {b}), 0);
  const Output between = ops::Prod(scope, ops::Slice(scope, shape, {b}, {a - b}), 0);
  const Output limit = ops::Gather(scope, shape, a);
  const Output inner_shape = ops::Slice(scope, shape, {a + 1}, {-1});
  const Output rows = ops::Mul(scope, batch, between);
  const Output base = ops::Reshape(scope, ops::Mul(scope, ops::Range(scope, 0, rows, 1), limit),
                                   ops::Pack(scope, {batch, between, ops::Const(scope, 1)}));
  const Output index =
      ops::Reshape(scope, ops::Cast(scope, indices, DT_INT32),
                   ops::Pack(scope, {batch, ops::Const(scope, 1), ops::Const(scope, -1)}));
  const Output ids = ops::Reshape(scope, ops::Add(scope, base, index), {-1});
  const Output values =
      ops::Reshape(scope, g, ops::ConcatV2(scope, {ops::Const(scope, {-1}), inner_shape}, 0));
  const Output dense = ops::UnsortedSegmentSum(scope, values, ids, ops::Mul(scope, rows, limit));
  *grad_outputs = {Gradient(ops::Reshape(scope, dense, shape)), Gradient(), Gradient()};
  return scope.status();
}

// y = gather(params, indices, axis): y[o, i, r] = params[o, indices[i], r]
// (o the axes before `axis`, r those after). Axis 0 gives IndexedSlices.
// Otherwise (TF's way) g is viewed as [o, n, r] with n = size(indices),
// the gathered axis moved to the front, rows summed into their params row
// by UnsortedSegmentSum and the axis moved back. Run-time axes work.
absl::Status GatherV2Grad(const Scope& scope, const Operation& op,
                          const std::vector<Output>& grad_inputs,
                          std::vector<Gradient>* grad_outputs) {
  const Output params = In(op, 0), indices = In(op, 1);
  const Output shape = ops::Shape(scope, params);
  std::optional<std::vector<int64_t>> const_axis = grad_util::ConstInts(In(op, 2));
  const int64_t batch_dims = grad_util::Attr<int64_t>(scope, op, "batch_dims");
  if (batch_dims != 0) {
    return BatchGatherGrad(scope, op, shape, const_axis, batch_dims, grad_inputs[0], grad_outputs);
  }
  if (const_axis.has_value() && const_axis->size() == 1 && (*const_axis)[0] == 0) {
    TW_ASSIGN_OR_RETURN(IndexedSlices s,
                        GatherSlices(scope, shape, params.shape(), indices, grad_inputs[0]));
    *grad_outputs = {s, Gradient(), Gradient()};
    return absl::OkStatus();
  }
  const Output rank = ops::Rank(scope, params);
  const Output axis = grad_util::CanonicalAxes(scope, In(op, 2), rank);
  const Output axis_vec = ops::Reshape(scope, axis, {1});
  const Output after = ops::Add(scope, axis, 1);
  Output outer_shape = ops::Slice(scope, shape, {0}, axis_vec);
  Output inner_shape = ops::Slice(scope, shape, ops::Reshape(scope, after, {1}), {-1});
  Output values =
      ops::Reshape(scope, grad_inputs[0],
                   ops::ConcatV2(scope, {outer_shape, ops::Const(scope, {-1}), inner_shape}, 0));
  const Output outer_axes = ops::Range(scope, 0, axis, 1);
  const Output inner_axes = ops::Range(scope, after, rank, 1);
  Output to_front = ops::ConcatV2(scope, {axis_vec, outer_axes, inner_axes}, 0);
  Output rows = ops::UnsortedSegmentSum(scope, ops::Transpose(scope, values, to_front),
                                        ops::Reshape(scope, indices, {-1}),
                                        ops::GatherV2(scope, shape, axis, 0));
  Output back =
      ops::ConcatV2(scope, {ops::Add(scope, outer_axes, 1), ops::Const(scope, {0}), inner_axes}, 0);
  *grad_outputs = {Gradient(ops::Transpose(scope, rows, back)), Gradient(), Gradient()};
  return scope.status();
}
absl::Status GatherGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs,
                        std::vector<Gradient>* grad_outputs) {
  const Output params = In(op, 0);
  TW_ASSIGN_OR_RETURN(IndexedSlices s, GatherSlices(scope, ops::Shape(scope, params),
                                                    params.shape(), In(op, 1), grad_inputs[0]));
  *grad_outputs = {s, Gradient()};
  return absl::OkStatus();
}
// y = resource_gather(handle, indices): IndexedSlices of the variable's
// shape, read from the VarHandleOp when it is static. With batch_dims (a
// gather on axis batch_dims) it is refused, where TF gives a wrong one.
absl::Status ResourceGatherGrad(const Scope& scope, const Operation& op,
                                const std::vector<Output>& grad_inputs,
                                std::vector<Gradient>* grad_outputs) {
  if (const int64_t b = grad_util::Attr<int64_t>(scope, op, "batch_dims"); b != 0) {
    return absl::UnimplementedError(absl::StrCat("Gradient of ResourceGather node '", op.name(),
                                                 "' with batch_dims = ", b, " is not implemented"));
  }
  const Output handle = In(op, 0);
  PartialTensorShape shape;
  if (handle.node()->IsOp("VarHandleOp")) {
    absl::Status s = handle.node()->GetAttr("shape", &shape);
    if (!s.ok()) shape = PartialTensorShape();
  }
  Output dense_shape;
  if (shape.IsFullyDefined()) {
    std::vector<int32_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
    dense_shape = ops::Const(
        scope, MakeTensorProto<int32_t>(absl::MakeConstSpan(dims), TensorShape({shape.dims()})));
  } else {
    const DataType dtype = grad_util::Attr<DataType>(scope, op, "dtype");
    dense_shape = ops::Shape(scope, ops::ReadVariableOp(scope, handle, dtype));
  }
  TW_ASSIGN_OR_RETURN(IndexedSlices s,
                      GatherSlices(scope, dense_shape, shape, In(op, 1), grad_inputs[0]));
  *grad_outputs = {s, Gradient()};
  return absl::OkStatus();
}

TW_REGISTER_PASS_THROUGH_GRADIENT("Identity");
TW_REGISTER_PASS_THROUGH_GRADIENT("Snapshot");
// tfdbg's watched identities (TF's gradients pass dy through).
TW_REGISTER_PASS_THROUGH_GRADIENT("DebugGradientIdentity");
TW_REGISTER_PASS_THROUGH_GRADIENT("DebugGradientRefIdentity");
TW_REGISTER_PASS_THROUGH_GRADIENT("DebugIdentityV2");
TW_REGISTER_PASS_THROUGH_GRADIENT("RefIdentity");
TW_REGISTER_PASS_THROUGH_GRADIENT("EnsureShape");
TW_REGISTER_PASS_THROUGH_GRADIENT("ReadVariableOp");
TW_REGISTER_PASS_THROUGH_GRADIENT("PlaceholderWithDefault");
TW_REGISTER_PASS_THROUGH_GRADIENT("Print");
// y = gather_nd(params, indices): dparams = scatter_nd(indices, g,
// shape(params)), repeated indices summed.
TW_GRAD_FN(GatherNdGrad) {
  const Output indices = In(op, 1);
  grad_outputs->push_back(
      ops::ScatterNd(scope, indices, grad_inputs[0],
                     ops::Shape(scope, In(op, 0), ops::Shape::OutType(indices.type()))));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = gather_nd(var, indices) of a resource variable: the dense
// scatter_nd(indices, g, shape(var)), as TF's _ResourceGatherNdGrad.
TW_GRAD_FN(ResourceGatherNdGrad) {
  const Output indices = In(op, 1);
  grad_outputs->push_back(ops::ScatterNd(
      scope, indices, grad_inputs[0],
      ops::VariableShape(scope, In(op, 0), ops::VariableShape::OutType(indices.type()))));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = scatter_nd(indices, updates, shape): dupdates = gather_nd(g, indices).
TW_GRAD_FN(ScatterNdGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::GatherNd(scope, grad_inputs[0], In(op, 0)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = tensor_scatter_update(t, indices, updates): t's gradient is g with the
// replaced slices zeroed, updates' is g at those slices.
TW_GRAD_FN(TensorScatterUpdateGrad) {
  const Output indices = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(
      ops::TensorScatterUpdate(scope, g, indices, ops::ZerosLike(scope, In(op, 2))));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::GatherNd(scope, g, indices));
  return scope.status();
}

// y = tensor_scatter_add(t, indices, updates) (sub): t's gradient is g,
// updates' is g at the slices (negated for sub), TF's
// _TensorScatterAddGrad / _TensorScatterSubGrad.
template <bool kSub>
TW_GRAD_FN(TensorScatterAddSubGrad) {
  const std::string policy = grad_util::Attr<std::string>(scope, op, "bad_indices_policy");
  const Output g = grad_inputs[0];
  const Output picked = ops::GatherNd(scope, g, In(op, 1), ops::GatherNd::BadIndicesPolicy(policy));
  *grad_outputs = {g, NoGradient(), kSub ? Output(ops::Neg(scope, picked)) : picked};
  return scope.status();
}
// y = tensor_scatter_max(t, indices, updates) (min), TF's
// _TensorScatterMinOrMaxGrad: g goes to every input equal to the output
// there, shared evenly among ties.
TW_GRAD_FN(TensorScatterMaxMinGrad) {
  const std::string policy = grad_util::Attr<std::string>(scope, op, "bad_indices_policy");
  const Output x = In(op, 0), indices = In(op, 1), y = In(op, 2), out = op.output(0);
  const Output g = grad_inputs[0];
  const Output x_hits = ops::Cast(scope, ops::Equal(scope, x, out), g.type());
  const Output y_out = ops::GatherNd(scope, out, indices, ops::GatherNd::BadIndicesPolicy(policy));
  const Output y_hits = ops::Cast(scope, ops::Equal(scope, y, y_out), g.type());
  const Output hits =
      ops::AddV2(scope, x_hits,
                 ops::ScatterNd(scope, indices, y_hits,
                                ops::Shape(scope, x, ops::Shape::OutType(indices.type())),
                                ops::ScatterNd::BadIndicesPolicy(policy)));
  const Output shared = ops::RealDiv(scope, g, hits);
  *grad_outputs = {
      ops::Mul(scope, shared, x_hits), NoGradient(),
      ops::Mul(scope,
               ops::GatherNd(scope, shared, indices, ops::GatherNd::BadIndicesPolicy(policy)),
               y_hits)};
  return scope.status();
}

// y = reverse(x, dims) (v1): the gradient reversed the same way (TF's
// _ReverseGrad).
TW_GRAD_FN(ReverseGrad) {
  *grad_outputs = {ops::Reverse(scope, grad_inputs[0], In(op, 1)), NoGradient()};
  return scope.status();
}

TW_REGISTER_GRADIENT("IdentityN", IdentityNGrad);
TW_REGISTER_GRADIENT("CheckNumerics", CheckNumericsGrad);
TW_REGISTER_GRADIENT("Reverse", ReverseGrad);
TW_REGISTER_GRADIENT("TensorScatterAdd", TensorScatterAddSubGrad<false>);
TW_REGISTER_GRADIENT("TensorScatterSub", TensorScatterAddSubGrad<true>);
// TF's _ScatterNdNonAliasingAddGrad: the same.
TW_REGISTER_GRADIENT("ScatterNdNonAliasingAdd", TensorScatterAddSubGrad<false>);
TW_REGISTER_GRADIENT("TensorScatterMax", TensorScatterMaxMinGrad);
TW_REGISTER_GRADIENT("TensorScatterMin", TensorScatterMaxMinGrad);
TW_REGISTER_GRADIENT("CheckNumericsV2", CheckNumericsGrad);
TW_REGISTER_GRADIENT("PreventGradient", PreventGradientGrad);
TW_REGISTER_GRADIENT("Reshape", ReshapeGrad);
TW_REGISTER_GRADIENT("ExpandDims", ReshapeGrad);
TW_REGISTER_GRADIENT("Squeeze", ReshapeGrad);
TW_REGISTER_GRADIENT("Transpose", TransposeGrad);
TW_REGISTER_GRADIENT("ConcatV2", ConcatV2Grad);
TW_REGISTER_GRADIENT("Concat", ConcatGrad);
TW_REGISTER_GRADIENT("Split", SplitGrad);
TW_REGISTER_GRADIENT("SplitV", SplitVGrad);
TW_REGISTER_GRADIENT("Pack", PackGrad);
TW_REGISTER_GRADIENT("Unpack", UnpackGrad);
TW_REGISTER_GRADIENT("Slice", SliceGrad);
TW_REGISTER_GRADIENT("StridedSlice", StridedSliceGrad);
TW_REGISTER_GRADIENT("StridedSliceGrad", StridedSliceGradGrad);
TW_REGISTER_GRADIENT("DynamicPartition", DynamicPartitionGrad);
TW_REGISTER_GRADIENT("DynamicStitch", DynamicStitchGrad);
TW_REGISTER_GRADIENT("FakeQuantWithMinMaxArgs", FakeQuantArgsGrad);
TW_REGISTER_GRADIENT("QuantizeAndDequantizeV2", QuantizeAndDequantizeStraightGrad);
TW_REGISTER_GRADIENT("QuantizeAndDequantizeV3", QuantizeAndDequantizeStraightGrad);
TW_REGISTER_GRADIENT("QuantizeAndDequantizeV4", QuantizeAndDequantizeV4Grad);
TW_REGISTER_GRADIENT("FakeQuantWithMinMaxVars",
                     FakeQuantVarsGrad<ops::FakeQuantWithMinMaxVarsGradient>);
TW_REGISTER_GRADIENT("FakeQuantWithMinMaxVarsPerChannel",
                     FakeQuantVarsGrad<ops::FakeQuantWithMinMaxVarsPerChannelGradient>);
TW_REGISTER_GRADIENT("ParallelDynamicStitch", DynamicStitchGrad);
TW_REGISTER_GRADIENT("MirrorPad", MirrorPadGradient);
TW_REGISTER_GRADIENT("ReverseV2", ReverseV2Grad);
TW_REGISTER_GRADIENT("DepthToSpace", DepthToSpaceGrad);
TW_REGISTER_GRADIENT("SpaceToDepth", SpaceToDepthGrad);
TW_REGISTER_NO_GRADIENT("Where");
TW_REGISTER_GRADIENT("MirrorPadGrad", MirrorPadGradGradient);
TW_REGISTER_GRADIENT("Pad", PadGrad);
TW_REGISTER_GRADIENT("PadV2", PadGrad);
TW_REGISTER_GRADIENT("Tile", TileGrad);
TW_REGISTER_GRADIENT("Fill", FillGrad);
TW_REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);
TW_REGISTER_GRADIENT("GatherV2", GatherV2Grad);
TW_REGISTER_GRADIENT("Gather", GatherGrad);
TW_REGISTER_GRADIENT("ResourceGather", ResourceGatherGrad);
TW_REGISTER_GRADIENT("GatherNd", GatherNdGrad);
TW_REGISTER_GRADIENT("ResourceGatherNd", ResourceGatherNdGrad);
TW_REGISTER_GRADIENT("ScatterNd", ScatterNdGrad);
TW_REGISTER_GRADIENT("TensorScatterUpdate", TensorScatterUpdateGrad);
TW_REGISTER_GRADIENT("TensorStridedSliceUpdate", TensorStridedSliceUpdateGrad);

// Sources, shapes, indices, randomness, state and summaries.
TW_REGISTER_NO_GRADIENT("Const");
TW_REGISTER_NO_GRADIENT("DecodeRaw");
TW_REGISTER_NO_GRADIENT("DecodePaddedRaw");
TW_REGISTER_NO_GRADIENT("HostConst");
TW_REGISTER_NO_GRADIENT("Placeholder");
TW_REGISTER_NO_GRADIENT("PlaceholderV2");
TW_REGISTER_NO_GRADIENT("ConcatOffset");
TW_REGISTER_NO_GRADIENT("StopGradient");
TW_REGISTER_NO_GRADIENT("Shape");
TW_REGISTER_NO_GRADIENT("ShapeN");
TW_REGISTER_NO_GRADIENT("Size");
TW_REGISTER_NO_GRADIENT("Rank");
TW_REGISTER_NO_GRADIENT("ZerosLike");
TW_REGISTER_NO_GRADIENT("OnesLike");
TW_REGISTER_NO_GRADIENT("InvertPermutation");
TW_REGISTER_NO_GRADIENT("Unique");  // as in TF
TW_REGISTER_NO_GRADIENT("BroadcastGradientArgs");
TW_REGISTER_NO_GRADIENT("OneHot");
TW_REGISTER_NO_GRADIENT("RandomUniform");
TW_REGISTER_NO_GRADIENT("RandomStandardNormal");
TW_REGISTER_NO_GRADIENT("TruncatedNormal");
TW_REGISTER_NO_GRADIENT("RandomUniformInt");
TW_REGISTER_NO_GRADIENT("RandomShuffle");
TW_REGISTER_NO_GRADIENT("VarHandleOp");
TW_REGISTER_NO_GRADIENT("VarIsInitializedOp");
TW_REGISTER_NO_GRADIENT("IsVariableInitialized");
TW_REGISTER_NO_GRADIENT("NoOp");
TW_REGISTER_NO_GRADIENT("Assert");
TW_REGISTER_NO_GRADIENT("ScalarSummary");
TW_REGISTER_NO_GRADIENT("TensorSummary");
TW_REGISTER_NO_GRADIENT("TensorSummaryV2");
TW_REGISTER_NO_GRADIENT("HistogramSummary");
TW_REGISTER_NO_GRADIENT("ImageSummary");
TW_REGISTER_NO_GRADIENT("AudioSummary");
TW_REGISTER_NO_GRADIENT("AudioSummaryV2");
TW_REGISTER_NO_GRADIENT("MergeSummary");
TW_REGISTER_NO_GRADIENT("Timestamp");
TW_REGISTER_NO_GRADIENT("SummaryWriter");
TW_REGISTER_NO_GRADIENT("CreateSummaryFileWriter");
TW_REGISTER_NO_GRADIENT("WriteSummary");
TW_REGISTER_NO_GRADIENT("WriteScalarSummary");
TW_REGISTER_NO_GRADIENT("WriteHistogramSummary");
TW_REGISTER_NO_GRADIENT("WriteImageSummary");
TW_REGISTER_NO_GRADIENT("WriteAudioSummary");
TW_REGISTER_NO_GRADIENT("WriteRawProtoSummary");
TW_REGISTER_NO_GRADIENT("WriteGraphSummary");
TW_REGISTER_NO_GRADIENT("ImportEvent");
TW_REGISTER_NO_GRADIENT("FlushSummaryWriter");
TW_REGISTER_NO_GRADIENT("CloseSummaryWriter");
// Queues, readers and gradient accumulators (SyncReplicasOptimizer's)
// carry no gradient, as in TF.
TW_REGISTER_NO_GRADIENT("FIFOQueueV2");
TW_REGISTER_NO_GRADIENT("PaddingFIFOQueueV2");
TW_REGISTER_NO_GRADIENT("RandomShuffleQueueV2");
TW_REGISTER_NO_GRADIENT("PriorityQueueV2");
TW_REGISTER_NO_GRADIENT("QueueEnqueueV2");
TW_REGISTER_NO_GRADIENT("QueueEnqueueManyV2");
TW_REGISTER_NO_GRADIENT("QueueDequeueV2");
TW_REGISTER_NO_GRADIENT("QueueDequeueManyV2");
TW_REGISTER_NO_GRADIENT("QueueDequeueUpToV2");
TW_REGISTER_NO_GRADIENT("QueueIsClosedV2");
TW_REGISTER_NO_GRADIENT("QueueSizeV2");
TW_REGISTER_NO_GRADIENT("QueueCloseV2");
TW_REGISTER_NO_GRADIENT("TFRecordReaderV2");
TW_REGISTER_NO_GRADIENT("TextLineReaderV2");
TW_REGISTER_NO_GRADIENT("FixedLengthRecordReaderV2");
TW_REGISTER_NO_GRADIENT("WholeFileReaderV2");
TW_REGISTER_NO_GRADIENT("IdentityReaderV2");
TW_REGISTER_NO_GRADIENT("ReaderReadV2");
TW_REGISTER_NO_GRADIENT("ReaderReadUpToV2");
TW_REGISTER_NO_GRADIENT("ReaderNumRecordsProducedV2");
TW_REGISTER_NO_GRADIENT("ReaderNumWorkUnitsCompletedV2");
TW_REGISTER_NO_GRADIENT("ReaderSerializeStateV2");
TW_REGISTER_NO_GRADIENT("ReaderRestoreStateV2");
TW_REGISTER_NO_GRADIENT("ReaderResetV2");
TW_REGISTER_NO_GRADIENT("ResourceConditionalAccumulator");
TW_REGISTER_NO_GRADIENT("ResourceAccumulatorApplyGradient");
TW_REGISTER_NO_GRADIENT("ResourceAccumulatorTakeGradient");
TW_REGISTER_NO_GRADIENT("ResourceAccumulatorNumAccumulated");
TW_REGISTER_NO_GRADIENT("ResourceAccumulatorSetGlobalStep");
// Staging areas carry no gradient, as in TF.
TW_REGISTER_NO_GRADIENT("Stage");
TW_REGISTER_NO_GRADIENT("Unstage");
TW_REGISTER_NO_GRADIENT("StagePeek");
TW_REGISTER_NO_GRADIENT("StageSize");
TW_REGISTER_NO_GRADIENT("StageClear");
TW_REGISTER_NO_GRADIENT("MapStage");
TW_REGISTER_NO_GRADIENT("MapUnstage");
TW_REGISTER_NO_GRADIENT("MapPeek");
TW_REGISTER_NO_GRADIENT("MapUnstageNoKey");
TW_REGISTER_NO_GRADIENT("MapSize");
TW_REGISTER_NO_GRADIENT("MapIncompleteSize");
TW_REGISTER_NO_GRADIENT("MapClear");
TW_REGISTER_NO_GRADIENT("OrderedMapStage");
TW_REGISTER_NO_GRADIENT("OrderedMapUnstage");
TW_REGISTER_NO_GRADIENT("OrderedMapPeek");
TW_REGISTER_NO_GRADIENT("OrderedMapUnstageNoKey");
TW_REGISTER_NO_GRADIENT("OrderedMapSize");
TW_REGISTER_NO_GRADIENT("OrderedMapIncompleteSize");
TW_REGISTER_NO_GRADIENT("OrderedMapClear");

}  // namespace
}  // namespace towerflow
