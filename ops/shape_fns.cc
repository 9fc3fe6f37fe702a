#include "ops/shape_fns.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace shape_fns {

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

absl::Status UnknownShape(InferenceContext*) { return absl::OkStatus(); }

absl::StatusOr<PartialTensorShape> MergeInputShapes(InferenceContext* c, int first, int count) {
  PartialTensorShape merged;
  for (int i = first; i < first + count; ++i) {
    absl::StatusOr<PartialTensorShape> m = merged.MergeWith(c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shapes of all inputs must match: input ", i, " has shape ", c->input(i).DebugString(),
          " but the ones before have ", merged.DebugString()));
    }
    merged = *std::move(m);
  }
  return merged;
}

absl::Status MergeAllInputsShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape merged, MergeInputShapes(c, 0, c->num_inputs()));
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

absl::StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a,
                                                   const PartialTensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return PartialTensorShape();
  const int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    const int64_t x = ia < 0 ? 1 : a.dim_size(ia);
    const int64_t y = ib < 0 ? 1 : b.dim_size(ib);
    int64_t d;
    if (x < 0 && y < 0) {
      d = -1;
    } else if (x < 0) {
      d = y > 1 ? y : -1;  // y == 1 broadcasts to the unknown x
    } else if (y < 0) {
      d = x > 1 ? x : -1;
    } else if (x == y || y == 1) {
      d = x;
    } else if (x == 1) {
      d = y;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("Incompatible shapes for broadcasting: ", a.DebugString(), " and ",
                       b.DebugString(), " (dimension ", x, " vs ", y, ")"));
    }
    dims[i] = d;
  }
  return PartialTensorShape(dims);
}

absl::Status BroadcastBinaryOpShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

bool StartsWithShape(const PartialTensorShape& shape, const PartialTensorShape& prefix) {
  return shape.dims() >= prefix.dims() &&
         PartialTensorShape(shape.dim_sizes().subspan(0, prefix.dims())).IsCompatibleWith(prefix);
}

absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank) {
  if (rank < 0) return axis >= 0 && axis <= kMaxTensorRank ? static_cast<int>(axis) : -1;
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for rank ",
                                                   rank, " (expected [", -rank, ", ", rank, "))"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::Status ReductionShape(InferenceContext* c) {
  bool keep_dims = false;
  TW_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const PartialTensorShape& input = c->input(0);
  PartialTensorShape axes_shape;
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(1), 1, &axes_shape));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, c->ConstantIntInput(1));
  if (!axes.has_value()) {
    // Unknown axes: keep_dims keeps the rank, else nothing is known.
    if (keep_dims && !input.unknown_rank()) {
      c->set_output(0, PartialTensorShape::UnknownDims(input.dims()));
    }
    return absl::OkStatus();
  }
  if (input.unknown_rank()) return absl::OkStatus();
  std::set<int> reduced;
  for (int64_t axis : *axes) {
    absl::StatusOr<int> a = CanonicalAxis(axis, input.dims());
    if (!a.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid reduction dimension ", axis, " for input with ", input.dims(), " dimensions"));
    }
    reduced.insert(*a);
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < input.dims(); ++i) {
    if (reduced.count(i) > 0) {
      if (keep_dims) dims.push_back(1);
    } else {
      dims.push_back(input.dim_size(i));
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status ShapeFromShapeTensorInput(InferenceContext* c, int input) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape shape, c->MakeShapeFromShapeTensor(input));
  if (c->input_tensor(input) != nullptr && !shape.unknown_rank()) {
    for (int i = 0; i < shape.dims(); ++i) {
      if (shape.dim_size(i) < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Dimension ", i,
                                                       " of the requested shape is ",
                                                       shape.dim_size(i), "; it must be >= 0"));
      }
    }
    if (shape.num_elements() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("The requested shape ", shape.DebugString(),
                                                     " has more elements than fit in int64"));
    }
  }
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

absl::Status WindowedShape(int64_t input, int64_t window, int64_t dilation, int64_t stride,
                           Padding padding, int64_t* out, int64_t* before, int64_t* after) {
  TW_RETURN_IF_ERROR(
      GetWindowedOutputSize(input, window, dilation, stride, padding, out, before, after));
  if (input >= 0 && padding != Padding::kSame) {
    const int64_t padded = padding == Padding::kExplicit ? input + *before + *after : input;
    const int64_t effective = (window - 1) * dilation + 1;  // checked above
    if (padded < effective) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Negative dimension size caused by subtracting ", effective, " from ", padded));
    }
  }
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext* c) {
  PartialTensorShape a, b;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &a));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &b));
  bool ta, tb;
  TW_RETURN_IF_ERROR(c->GetAttr("transpose_a", &ta));
  TW_RETURN_IF_ERROR(c->GetAttr("transpose_b", &tb));
  const int64_t m = a.dim_size(ta ? 1 : 0), ka = a.dim_size(ta ? 0 : 1);
  const int64_t kb = b.dim_size(tb ? 1 : 0), n = b.dim_size(tb ? 0 : 1);
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return absl::InvalidArgumentError(
        absl::StrCat("Matrix size-incompatible: inner dimensions are ", ka, " and ", kb, " (a is ",
                     c->input(0).DebugString(), ", b is ", c->input(1).DebugString(),
                     ", transpose_a=", ta, ", transpose_b=", tb, ")"));
  }
  c->set_output(0, PartialTensorShape({m, n}));
  return absl::OkStatus();
}

}  // namespace shape_fns
}  // namespace towerflow
