// Concatenation and splitting: ConcatV2, Concat, Split, SplitV, Pack and
// Unpack. (The other array ops are in array_ops.cc.)
// Schemas are TensorFlow's (see the reference OP_FACTS); each shape function
// rejects only what can never be valid and leaves the rest unknown.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::CanonicalAxis;

// Values are inputs [first, first + n); the axis is input `axis_input`.
absl::Status ConcatShapeImpl(InferenceContext* c, int first, int n, int axis_input) {
  int rank = -1;
  for (int i = first; i < first + n; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.unknown_rank()) continue;
    if (s.dims() == 0) {
      return absl::InvalidArgumentError("Can't concatenate scalars (use Pack instead)");
    }
    if (rank >= 0 && s.dims() != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Inputs to concatenate must have the same rank, but input ", i - first,
                       " has shape ", s.DebugString(), " and another has rank ", rank));
    }
    rank = s.dims();
  }
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> axis_value, c->ConstantScalarInput(axis_input));
  if (rank < 0) return absl::OkStatus();
  if (!axis_value.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(rank));
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(*axis_value, rank));
  std::vector<int64_t> dims(rank, -1);
  int64_t axis_sum = 0;
  for (int i = first; i < first + n; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.unknown_rank()) {
      axis_sum = -1;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      int64_t merged;
      const absl::Status st = c->MergeDim(dims[d], s.dim_size(d), &merged);
      if (!st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Dimension ", d, " of input ", i - first, " (shape ", s.DebugString(),
                         ") does not match the other inputs (", dims[d], "); only the concat axis ",
                         axis, " may differ"));
      }
      dims[d] = merged;
    }
    const int64_t a = s.dim_size(axis);
    if (axis_sum < 0) continue;
    if (a < 0) {
      axis_sum = -1;
    } else if (a > INT64_MAX - axis_sum) {
      return absl::InvalidArgumentError("Concatenated dimension overflows int64");
    } else {
      axis_sum += a;
    }
  }
  dims[axis] = axis_sum;
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status ConcatV2Shape(InferenceContext* c) {
  return ConcatShapeImpl(c, 0, c->num_inputs() - 1, c->num_inputs() - 1);
}

absl::Status ConcatOffsetShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) c->set_output(i - 1, c->input(i));
  return absl::OkStatus();
}

absl::Status ConcatShape(InferenceContext* c) {
  return ConcatShapeImpl(c, 1, c->num_inputs() - 1, 0);
}

// Sets every output to `value` with dim `axis` replaced by `size`.
void SetSplitOutputs(InferenceContext* c, const PartialTensorShape& value, int axis,
                     const std::vector<int64_t>& sizes) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    std::vector<int64_t> dims(value.dim_sizes().begin(), value.dim_sizes().end());
    dims[axis] = sizes[i];
    c->set_output(i, PartialTensorShape(dims));
  }
}

absl::Status SplitShape(InferenceContext* c) {
  const PartialTensorShape& value = c->input(1);
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> axis_value, c->ConstantScalarInput(0));
  if (value.unknown_rank()) return absl::OkStatus();
  if (!axis_value.has_value()) {
    for (int i = 0; i < c->num_outputs(); ++i) {
      c->set_output(i, PartialTensorShape::UnknownDims(value.dims()));
    }
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(*axis_value, value.dims()));
  const int64_t dim = value.dim_size(axis);
  const int num_split = c->num_outputs();
  if (dim >= 0 && dim % num_split != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Number of ways to split should evenly divide the split dimension, but got "
                     "split_dim ",
                     axis, " (size = ", dim, ") and num_split ", num_split));
  }
  SetSplitOutputs(c, value, axis, std::vector<int64_t>(num_split, dim < 0 ? -1 : dim / num_split));
  return absl::OkStatus();
}

absl::Status SplitVShape(InferenceContext* c) {
  const PartialTensorShape& value = c->input(0);
  const int num_split = c->num_outputs();
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sizes, c->ConstantIntInput(1));
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> axis_value, c->ConstantScalarInput(2));
  if (sizes.has_value() && static_cast<int>(sizes->size()) != num_split) {
    return absl::InvalidArgumentError(
        absl::StrCat("size_splits has ", sizes->size(), " entries but num_split is ", num_split));
  }
  if (value.unknown_rank()) return absl::OkStatus();
  if (!axis_value.has_value()) {
    for (int i = 0; i < num_split; ++i) {
      c->set_output(i, PartialTensorShape::UnknownDims(value.dims()));
    }
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(*axis_value, value.dims()));
  if (!sizes.has_value()) {
    // Sizes known at run time only: every other dimension is the value's.
    std::vector<int64_t> dims(value.dim_sizes().begin(), value.dim_sizes().end());
    dims[axis] = -1;
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, PartialTensorShape::FromDims(dims));
    for (int i = 0; i < num_split; ++i) c->set_output(i, shape);
    return absl::OkStatus();
  }
  const int64_t dim = value.dim_size(axis);
  std::vector<int64_t> out = *sizes;
  int inferred = -1;
  int64_t total = 0;
  for (int i = 0; i < num_split; ++i) {
    if (out[i] == -1) {
      if (inferred >= 0) {
        return absl::InvalidArgumentError("size_splits may contain at most one -1");
      }
      inferred = i;
    } else if (out[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("size_splits[", i, "] = ", out[i], " must be >= 0 (or -1 once)"));
    } else {
      total += out[i];
      if (total < 0 || total > (int64_t{1} << 62)) {
        return absl::InvalidArgumentError("size_splits sum overflows");
      }
    }
  }
  if (dim >= 0) {
    if (inferred >= 0) {
      if (total > dim) {
        return absl::InvalidArgumentError(absl::StrCat(
            "size_splits sum to ", total, ", more than the split dimension's size ", dim));
      }
      out[inferred] = dim - total;
    } else if (total != dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("size_splits sum to ", total, " but the split dimension has size ", dim));
    }
  }
  SetSplitOutputs(c, value, axis, out);
  return absl::OkStatus();
}

absl::Status PackShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape merged,
                      shape_fns::MergeInputShapes(c, 0, c->num_inputs()));
  int64_t axis;
  TW_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (merged.unknown_rank()) return absl::OkStatus();
  TW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, merged.dims() + 1));
  std::vector<int64_t> dims(merged.dim_sizes().begin(), merged.dim_sizes().end());
  dims.insert(dims.begin() + a, c->num_inputs());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext* c) {
  const PartialTensorShape& value = c->input(0);
  int64_t axis, num;
  TW_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  TW_RETURN_IF_ERROR(c->GetAttr("num", &num));
  if (value.unknown_rank()) return absl::OkStatus();
  if (value.dims() == 0) return absl::InvalidArgumentError("Cannot unpack a scalar");
  TW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, value.dims()));
  if (value.dim_size(a) >= 0 && value.dim_size(a) != num) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dimension ", a, " has size ", value.dim_size(a), " but num is ", num));
  }
  std::vector<int64_t> dims(value.dim_sizes().begin(), value.dim_sizes().end());
  dims.erase(dims.begin() + a);
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape(dims));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- schemas

TW_REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("Concatenates tensors along `axis`.")
    .SetShapeFn(ConcatV2Shape);

TW_REGISTER_OP("Concat")
    .Input("concat_dim: int32")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Doc("Concatenates tensors along `concat_dim` (TF 1.0's form).")
    .SetShapeFn(ConcatShape);

// The gradient of a concatenation in TF's graphs: where each input starts
// in the output.
TW_REGISTER_OP("ConcatOffset")
    .Input("concat_dim: int32")
    .Input("shape: N * shape_type")
    .Output("offset: N * shape_type")
    .Attr("N: int >= 2")
    .Attr("shape_type: {int32, int64} = DT_INT32")
    .Doc("Each input's offset in the concatenation of shapes `shape` along `concat_dim`.")
    .SetShapeFn(ConcatOffsetShape);

TW_REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Doc("Splits `value` into num_split equal pieces along split_dim.")
    .SetShapeFn(SplitShape);

TW_REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int8, int32, int64} = DT_INT64")
    .Doc("Splits `value` into pieces of the given sizes along split_dim.")
    .SetShapeFn(SplitVShape);

TW_REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Doc("Stacks N tensors of one shape into one of rank + 1.")
    .SetShapeFn(PackShape);

TW_REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Doc("Unstacks a tensor along `axis` into `num` tensors.")
    .SetShapeFn(UnpackShape);

}  // namespace
}  // namespace towerflow
