// Index ops: slicing (Slice, StridedSlice and its gradient), padding,
// tiling, gathering and scattering (also by N-d index), and one-hot
// encoding. Schemas are TensorFlow's; shape functions check every index and
// size they can see at build time.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/strided_slice.h"
#include "core/tensor_proto_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::CanonicalAxis;

// ----------------------------------------------------------------- slicing

absl::Status SliceShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, c->ConstantIntInput(1));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->ConstantIntInput(2));
  if (begin.has_value() && size.has_value() && begin->size() != size->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("begin has ", begin->size(), " entries but size has ", size->size()));
  }
  int rank = input.dims();
  if (rank < 0 && begin.has_value()) rank = static_cast<int>(begin->size());
  if (rank < 0 && size.has_value()) rank = static_cast<int>(size->size());
  if (rank < 0) return absl::OkStatus();
  for (const auto* v : {&begin, &size}) {
    if (v->has_value() && static_cast<int>((*v)->size()) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("begin and size must have one entry per input dimension (", rank, "), got ",
                       (*v)->size()));
    }
  }
  std::vector<int64_t> dims(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = input.unknown_rank() ? -1 : input.dim_size(i);
    const int64_t b = begin.has_value() ? (*begin)[i] : -1;
    const int64_t s = size.has_value() ? (*size)[i] : -2;
    if (begin.has_value() && (b < 0 || (dim >= 0 && b > dim))) {
      return absl::InvalidArgumentError(absl::StrCat("Expected begin[", i, "] in [0, ",
                                                     dim < 0 ? std::string("?") : absl::StrCat(dim),
                                                     "], but got ", b));
    }
    if (size.has_value() && s < -1) {
      return absl::InvalidArgumentError(absl::StrCat("size[", i, "] = ", s, " must be >= -1"));
    }
    if (s == -1) {
      dims[i] = (dim >= 0 && b >= 0) ? dim - b : -1;
    } else if (s >= 0) {
      if (dim >= 0 && b >= 0 && s > dim - b) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected size[", i, "] in [0, ", dim - b, "], but got ", s));
      }
      dims[i] = s;
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status StridedSliceShape(InferenceContext* c) {
  StridedSliceSpec spec;
  TW_RETURN_IF_ERROR(c->GetAttr("begin_mask", &spec.begin_mask));
  TW_RETURN_IF_ERROR(c->GetAttr("end_mask", &spec.end_mask));
  TW_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &spec.ellipsis_mask));
  TW_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &spec.new_axis_mask));
  TW_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &spec.shrink_axis_mask));
  for (int i = 1; i <= 3; ++i) {
    PartialTensorShape v;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &v));
  }
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> begin, c->ConstantIntInput(1));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> end, c->ConstantIntInput(2));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> strides, c->ConstantIntInput(3));
  if (!begin || !end || !strides || c->input(0).unknown_rank()) return absl::OkStatus();
  spec.begin = *begin;
  spec.end = *end;
  spec.strides = *strides;
  TW_ASSIGN_OR_RETURN(StridedSliceResult r, ComputeStridedSlice(c->input(0), spec));
  c->set_output(0, r.final);
  return absl::OkStatus();
}

absl::Status StridedSliceGradShape(InferenceContext* c) {
  return shape_fns::ShapeFromShapeTensorInput(c, 0);
}

// ------------------------------------------------------- padding, tiling

absl::Status PadShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  PartialTensorShape paddings_shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &paddings_shape));
  if (paddings_shape.dim_size(1) >= 0 && paddings_shape.dim_size(1) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("paddings must have shape [rank, 2], got ", paddings_shape.DebugString()));
  }
  if (c->num_inputs() > 2) {  // PadV2's constant_values
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  }
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pads, c->ConstantIntInput(1));
  int rank = input.dims();
  if (rank < 0 && paddings_shape.dim_size(0) >= 0 && paddings_shape.dim_size(0) <= kMaxTensorRank) {
    rank = static_cast<int>(paddings_shape.dim_size(0));
  }
  if (rank < 0) return absl::OkStatus();
  if (!pads.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(rank));
    return absl::OkStatus();
  }
  if (static_cast<int>(pads->size()) != 2 * rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("paddings has ", pads->size() / 2, " rows but the input has rank ", rank));
  }
  std::vector<int64_t> dims(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings must be non-negative: ", before, " ", after));
    }
    const int64_t dim = input.unknown_rank() ? -1 : input.dim_size(i);
    if (dim < 0) continue;
    const int64_t limit = INT64_MAX / 3;
    if (before > limit || after > limit || dim > limit) {
      return absl::InvalidArgumentError("Padded dimension size overflows int64");
    }
    dims[i] = dim + before + after;
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status TileShape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  PartialTensorShape m_shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &m_shape));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> multiples, c->ConstantIntInput(1));
  int rank = input.dims();
  if (rank < 0 && multiples.has_value()) rank = static_cast<int>(multiples->size());
  if (rank < 0) return absl::OkStatus();
  if (!multiples.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(rank));
    return absl::OkStatus();
  }
  if (static_cast<int>(multiples->size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("multiples has ", multiples->size(),
                                                   " entries but the input has rank ", rank));
  }
  std::vector<int64_t> dims(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t m = (*multiples)[i];
    if (m < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected multiples[", i, "] >= 0, but got ", m));
    }
    const int64_t dim = input.unknown_rank() ? -1 : input.dim_size(i);
    if (dim < 0) continue;
    dims[i] = MultiplyWithoutOverflow(dim, m);
    if (dims[i] < 0) {
      return absl::InvalidArgumentError("Tiled dimension size overflows int64");
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// --------------------------------------------------------------- gathering

// params[:axis] + indices[batch_dims:] + params[axis+1:]
absl::Status GatherOutput(InferenceContext* c, const PartialTensorShape& params,
                          const PartialTensorShape& indices, int64_t axis_value,
                          int64_t batch_dims) {
  if (params.unknown_rank() || indices.unknown_rank()) return absl::OkStatus();
  if (params.dims() == 0) return absl::InvalidArgumentError("params must be at least 1-D");
  if (batch_dims < 0) batch_dims += indices.dims();
  if (batch_dims < 0 || batch_dims > indices.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("batch_dims must be in [-", indices.dims(), ", ",
                                                   indices.dims(), "], got ", batch_dims));
  }
  TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(axis_value, params.dims()));
  if (batch_dims > axis) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_dims (", batch_dims, ") must be <= axis (", axis, ")"));
  }
  std::vector<int64_t> dims(params.dim_sizes().begin(), params.dim_sizes().begin() + axis);
  dims.insert(dims.end(), indices.dim_sizes().begin() + batch_dims, indices.dim_sizes().end());
  dims.insert(dims.end(), params.dim_sizes().begin() + axis + 1, params.dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status GatherV2Shape(InferenceContext* c) {
  int64_t batch_dims;
  TW_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  PartialTensorShape axis_shape;
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(2), 1, &axis_shape));
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> axis, c->ConstantScalarInput(2));
  if (!axis.has_value()) return absl::OkStatus();
  return GatherOutput(c, c->input(0), c->input(1), *axis, batch_dims);
}

absl::Status GatherShape(InferenceContext* c) {
  return GatherOutput(c, c->input(0), c->input(1), 0, 0);
}

// GatherNd: indices [..., D] pick slices params[i0, ..., iD-1, :, ...]:
// output is indices.shape[:-1] + params.shape[D:].
absl::Status GatherNdShape(InferenceContext* c) {
  PartialTensorShape params, indices;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &params));
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 1, &indices));
  if (indices.unknown_rank()) return absl::OkStatus();
  const int64_t depth = indices.dim_size(indices.dims() - 1);
  if (depth < 0 || params.unknown_rank()) return absl::OkStatus();
  if (depth > params.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices.shape[-1] must be <= params.rank, but saw indices shape ",
                     indices.DebugString(), " and params shape ", params.DebugString()));
  }
  std::vector<int64_t> dims(indices.dim_sizes().begin(), indices.dim_sizes().end() - 1);
  dims.insert(dims.end(), params.dim_sizes().begin() + depth, params.dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// Scatters into a tensor of shape `out`: updates must be
// indices.shape[:-1] + out[indices.shape[-1]:].
absl::Status CheckScatterNdUpdates(InferenceContext* c, const PartialTensorShape& out,
                                   int indices_input, int updates_input) {
  PartialTensorShape indices, updates;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(indices_input), 1, &indices));
  updates = c->input(updates_input);
  if (indices.unknown_rank() || updates.unknown_rank() || out.unknown_rank()) {
    return absl::OkStatus();
  }
  const int64_t depth = indices.dim_size(indices.dims() - 1);
  if (depth < 0) return absl::OkStatus();
  if (depth > out.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("indices.shape[-1] (", depth,
                                                   ") exceeds the rank of the output shape ",
                                                   out.DebugString()));
  }
  std::vector<int64_t> expected(indices.dim_sizes().begin(), indices.dim_sizes().end() - 1);
  expected.insert(expected.end(), out.dim_sizes().begin() + depth, out.dim_sizes().end());
  PartialTensorShape merged;
  if (!c->Merge(updates, PartialTensorShape(expected), &merged).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "updates has shape ", updates.DebugString(), " but indices ", indices.DebugString(),
        " into ", out.DebugString(), " need ", PartialTensorShape(expected).DebugString()));
  }
  return absl::OkStatus();
}

absl::Status ScatterNdShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape out, c->MakeShapeFromShapeTensor(2));
  TW_RETURN_IF_ERROR(CheckScatterNdUpdates(c, out, 0, 1));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status TensorScatterShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScatterNdUpdates(c, c->input(0), 1, 2));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status OneHotShape(InferenceContext* c) {
  int64_t axis;
  TW_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1) {
    return absl::InvalidArgumentError(absl::StrCat("axis must be >= -1, got ", axis));
  }
  for (int i = 1; i <= 3; ++i) {
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> depth, c->ConstantScalarInput(1));
  if (depth.has_value() && *depth < 0) {
    return absl::InvalidArgumentError(absl::StrCat("depth must be non-negative, got ", *depth));
  }
  const PartialTensorShape& indices = c->input(0);
  if (indices.unknown_rank()) return absl::OkStatus();
  const int pos =
      axis == -1 ? indices.dims() : static_cast<int>(std::min<int64_t>(axis, INT32_MAX));
  if (pos > indices.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for indices of rank ", indices.dims()));
  }
  std::vector<int64_t> dims(indices.dim_sizes().begin(), indices.dim_sizes().end());
  dims.insert(dims.begin() + pos, depth.has_value() ? *depth : -1);
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- schemas

TW_REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Doc("input[begin:begin+size]; a size of -1 takes the rest.")
    .SetShapeFn(SliceShape);

// The five masks StridedSlice and its gradient share.
OpDefBuilder WithSliceMasks(OpDefBuilder b) {
  b.Attr("T: type")
      .Attr("Index: {int32, int64}")
      .Attr("begin_mask: int = 0")
      .Attr("end_mask: int = 0")
      .Attr("ellipsis_mask: int = 0")
      .Attr("new_axis_mask: int = 0")
      .Attr("shrink_axis_mask: int = 0");
  return b;
}

[[maybe_unused]] const bool kRegisteredSlices = [] {
  RegisterOp(WithSliceMasks(OpDefBuilder("StridedSlice", __FILE__)
                                .Input("input: T")
                                .Input("begin: Index")
                                .Input("end: Index")
                                .Input("strides: Index")
                                .Output("output: T"))
                 .Doc("NumPy-style slicing (x[1:, ..., tf.newaxis, 0]).")
                 .SetShapeFn(StridedSliceShape));
  RegisterOp(WithSliceMasks(OpDefBuilder("StridedSliceGrad", __FILE__)
                                .Input("shape: Index")
                                .Input("begin: Index")
                                .Input("end: Index")
                                .Input("strides: Index")
                                .Input("dy: T")
                                .Output("output: T"))
                 .Doc("The gradient of StridedSlice: dy scattered into zeros of `shape`.")
                 .SetShapeFn(StridedSliceGradShape));
  // Slice assignment (x[1:3, ::2] = value; the value broadcast to the
  // slice): into a copy, a ref variable or a resource variable.
  RegisterOp(WithSliceMasks(OpDefBuilder("TensorStridedSliceUpdate", __FILE__)
                                .Input("input: T")
                                .Input("begin: Index")
                                .Input("end: Index")
                                .Input("strides: Index")
                                .Input("value: T")
                                .Output("output: T"))
                 .Doc("A copy of input with value written into its strided slice.")
                 .SetShapeFn([](InferenceContext* c) {
                   c->set_output(0, c->input(0));
                   return absl::OkStatus();
                 }));
  RegisterOp(WithSliceMasks(OpDefBuilder("StridedSliceAssign", __FILE__)
                                .Input("ref: Ref(T)")
                                .Input("begin: Index")
                                .Input("end: Index")
                                .Input("strides: Index")
                                .Input("value: T")
                                .Output("output_ref: Ref(T)"))
                 .Doc("ref[begin:end:strides] = value.")
                 .SetShapeFn([](InferenceContext* c) {
                   c->set_output(0, c->input(0));
                   return absl::OkStatus();
                 }));
  RegisterOp(WithSliceMasks(OpDefBuilder("ResourceStridedSliceAssign", __FILE__)
                                .Input("ref: resource")
                                .Input("begin: Index")
                                .Input("end: Index")
                                .Input("strides: Index")
                                .Input("value: T"))
                 .SetIsStateful()
                 .Doc("var[begin:end:strides] = value (tf.Variable's slice assign).")
                 .SetShapeFn([](InferenceContext*) { return absl::OkStatus(); }));
  return true;
}();

TW_REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Doc("Pads with zeros; paddings is [rank, 2] (before, after).")
    .SetShapeFn(PadShape);

TW_REGISTER_OP("PadV2")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Input("constant_values: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Doc("Pads with constant_values.")
    .SetShapeFn(PadShape);

TW_REGISTER_OP("MirrorPad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .Doc("Pads by mirroring the input.")
    .SetShapeFn(PadShape);

// The gradient of MirrorPad: each element of the padded gradient summed into
// the input element it mirrors; the output is input minus the paddings.
absl::Status MirrorPadGradShape(InferenceContext* c) {
  PartialTensorShape paddings;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &paddings));
  const PartialTensorShape& input = c->input(0);
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pads, c->ConstantIntInput(1));
  if (input.unknown_rank()) return absl::OkStatus();
  if (!pads.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(input.dims()));
    return absl::OkStatus();
  }
  if (static_cast<int>(pads->size()) != 2 * input.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("paddings has ", pads->size() / 2,
                                                   " rows but the input has rank ", input.dims()));
  }
  std::vector<int64_t> dims(input.dims(), -1);
  for (int i = 0; i < input.dims(); ++i) {
    const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    if (before < 0 || after < 0 || before > INT64_MAX / 2 || after > INT64_MAX / 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Paddings must be non-negative and in range: ", before, " ", after));
    }
    if (input.dim_size(i) < 0) continue;
    dims[i] = input.dim_size(i) - before - after;
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Paddings ", before, " ", after,
                                                     " exceed dimension ", i, " of size ",
                                                     input.dim_size(i)));
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TW_REGISTER_OP("MirrorPadGrad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .Doc("The gradient of MirrorPad: the padded gradient folded back onto the input.")
    .SetShapeFn(MirrorPadGradShape);

TW_REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = DT_INT32")
    .Doc("Repeats the input multiples[i] times along dimension i.")
    .SetShapeFn(TileShape);

TW_REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Output("output: Tparams")
    .AttrAddedAfterTF1("batch_dims: int = 0")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .Doc("Gathers slices of params along axis at the given indices.")
    .SetShapeFn(GatherV2Shape);

TW_REGISTER_OP("Gather")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("validate_indices: bool = true")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .Doc("Gathers rows of params (TF 1.0's form).")
    .SetShapeFn(GatherShape);

TW_REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .AttrAddedAfterTF1("bad_indices_policy: string = ''")
    .Doc("Gathers the slices of params that the last dimension of indices addresses.")
    .SetShapeFn(GatherNdShape);

TW_REGISTER_OP("ResourceGatherNd")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .Doc("GatherNd of a resource variable's value.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape handle;
      return c->WithRank(c->input(0), 0, &handle);
    });

TW_REGISTER_OP("ScatterNd")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Input("shape: Tindices")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64}")
    .AttrAddedAfterTF1("bad_indices_policy: string = ''")
    .Doc("Zeros of shape with updates added at indices (duplicates summed).")
    .SetShapeFn(ScatterNdShape);

TW_REGISTER_OP("TensorScatterUpdate")
    .Input("tensor: T")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64, uint16}")
    .AttrAddedAfterTF1("bad_indices_policy: string = ''")
    .Doc("A copy of tensor with the slices at indices replaced by updates.")
    .SetShapeFn(TensorScatterShape);

// TensorScatterAdd, Sub, Max and Min: a copy of tensor with each update
// combined into its slice, in index order.
[[maybe_unused]] const bool kTensorScatterArithmetic = [] {
  for (const char* name :
       {"TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin"}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("tensor: T")
                   .Input("indices: Tindices")
                   .Input("updates: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Tindices: {int32, int64}")
                   .Attr("bad_indices_policy: string = ''")
                   .Doc("A copy of tensor with updates combined into the slices at indices.")
                   .SetShapeFn(TensorScatterShape));
  }
  return true;
}();

// TF 1's out-of-place scatter-add (tf.scatter_nd_add on tensors): as
// TensorScatterAdd.
TW_REGISTER_OP("ScatterNdNonAliasingAdd")
    .Input("input: T")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Output("output: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64, bool}")
    .Attr("Tindices: {int32, int64}")
    .AttrAddedAfterTF1("bad_indices_policy: string = ''")
    .Doc("A copy of input with updates added into the slices at indices.")
    .SetShapeFn(TensorScatterShape);

TW_REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Output("output: T")
    .Attr("axis: int = -1")
    .Attr("T: type")
    .Attr("TI: {uint8, int32, int64} = DT_INT64")
    .Doc("One-hot encoding of indices, with `depth` classes at `axis`.")
    .SetShapeFn(OneHotShape);

}  // namespace
}  // namespace towerflow
