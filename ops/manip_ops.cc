// Rearrangements and makers of whole tensors: Roll, ReverseSequence,
// UniqueWithCounts, ParallelConcat, BroadcastArgs, Empty and DeepCopy,
// CompareAndBitpack, the Inplace row updates and UnravelIndex
// (kernels/cpu/manip_ops.cc; UniqueWithCounts beside Unique in
// kernels/cpu/scan_ops.cc); and two elementwise comparisons of floats,
// NextAfter and ApproximateEqual (kernels/cpu/cwise_binary_ops.cc).
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status RollShape(InferenceContext* c) {
  PartialTensorShape input, shift, axis;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &input));
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(1), 1, &shift));
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(2), 1, &axis));
  const int64_t n_shift = shift.dims() == 1 ? shift.dim_size(0) : 1;
  const int64_t n_axis = axis.dims() == 1 ? axis.dim_size(0) : 1;
  if (n_shift >= 0 && n_axis >= 0 && n_shift != n_axis) {
    return absl::InvalidArgumentError("shift and axis must have the same size");
  }
  c->set_output(0, input);
  return absl::OkStatus();
}

absl::Status ReverseSequenceShape(InferenceContext* c) {
  int64_t seq_dim = 0, batch_dim = 0;
  TW_RETURN_IF_ERROR(c->GetAttr("seq_dim", &seq_dim));
  TW_RETURN_IF_ERROR(c->GetAttr("batch_dim", &batch_dim));
  PartialTensorShape lengths;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &lengths));
  const PartialTensorShape& input = c->input(0);
  if (batch_dim == seq_dim) {
    return absl::InvalidArgumentError(absl::StrCat("batch_dim == seq_dim == ", seq_dim));
  }
  if (!input.unknown_rank()) {
    for (const auto& [name, dim] : {std::pair{"seq_dim", seq_dim}, {"batch_dim", batch_dim}}) {
      if (dim < 0 || dim >= input.dims()) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be in [0, ", input.dims(),
                                                       ") for an input of rank ", input.dims(),
                                                       ", got ", dim));
      }
    }
    int64_t batch = 0;
    TW_RETURN_IF_ERROR(c->MergeDim(input.dim_size(batch_dim), lengths.dim_size(0), &batch));
  }
  c->set_output(0, input);
  return absl::OkStatus();
}

absl::Status ParallelConcatShape(InferenceContext* c) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  int64_t n = 0;
  TW_RETURN_IF_ERROR(c->GetAttr("N", &n));
  for (int i = 0; i < c->num_inputs(); ++i) {
    PartialTensorShape value;
    TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 1, &value));
    if (!value.unknown_rank() && value.dim_size(0) >= 0 && value.dim_size(0) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConcat's values each need a first dimension of 1, got ", value.DebugString()));
    }
  }
  if (!shape.unknown_rank() && shape.dims() >= 1 && shape.dim_size(0) >= 0 &&
      shape.dim_size(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat("ParallelConcat's shape ", shape.DebugString(),
                                                   " needs ", shape.dim_size(0), " values, got ",
                                                   n));
  }
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status BroadcastArgsShape(InferenceContext* c) {
  PartialTensorShape s0, s1;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &s0));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &s1));
  const int64_t a = s0.dim_size(0), b = s1.dim_size(0);
  c->set_output(0, PartialTensorShape({a < 0 || b < 0 ? -1 : std::max(a, b)}));
  return absl::OkStatus();
}

absl::Status EmptyShape(InferenceContext* c) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &shape));
  return shape_fns::ShapeFromShapeTensorInput(c, 0);
}

TW_REGISTER_OP("Roll")
    .Input("input: T")
    .Input("shift: Tshift")
    .Input("axis: Taxis")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshift: {int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .Doc("Elements shifted cyclically by shift[i] along axis[i] (shifts of one axis add up).")
    .SetShapeFn(RollShape);

TW_REGISTER_OP("ReverseSequence")
    .Input("input: T")
    .Input("seq_lengths: Tlen")
    .Output("output: T")
    .Attr("seq_dim: int")
    .Attr("batch_dim: int = 0")
    .Attr("T: type")
    .Attr("Tlen: {int32, int64} = DT_INT64")
    .Doc("The first seq_lengths[b] elements along seq_dim of each batch entry b reversed.")
    .SetShapeFn(ReverseSequenceShape);

TW_REGISTER_OP("UniqueWithCounts")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Output("count: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .Doc("Unique's outputs and how often each distinct value occurs.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape x;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &x));
      c->set_output(0, PartialTensorShape({-1}));
      c->set_output(1, x);
      c->set_output(2, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("ParallelConcat")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("shape: shape")
    .Doc("The N values of shape [1, ...] stacked along the first dimension into `shape`.")
    .SetShapeFn(ParallelConcatShape);

TW_REGISTER_OP("BroadcastArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .Doc("The shape two shapes broadcast to.")
    .SetShapeFn(BroadcastArgsShape);

TW_REGISTER_OP("Empty")
    .Input("shape: int32")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("init: bool = false")
    .SetIsStateful()
    .Doc("A tensor of `shape` (zeros: Towerflow initializes it whatever `init` says).")
    .SetShapeFn(EmptyShape);

TW_REGISTER_OP("DeepCopy")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("A copy of x in a buffer of its own.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("CompareAndBitpack")
    .Input("input: T")
    .Input("threshold: T")
    .Output("output: uint8")
    .Attr("T: {bool, half, float, double, int8, int16, int32, int64}")
    .Doc("input > threshold packed 8 to a byte along the last dimension, the first the top bit.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape input, scalar;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &input));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      if (input.unknown_rank()) {
        c->set_output(0, input);
        return absl::OkStatus();
      }
      std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
      int64_t& inner = dims.back();
      if (inner >= 0 && inner % 8 != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Inner dimension of input should be divisible by 8, but saw shape: ",
                         input.DebugString()));
      }
      if (inner >= 0) inner /= 8;
      c->set_output(0, PartialTensorShape(dims));
      return absl::OkStatus();
    });

// InplaceUpdate, InplaceAdd, InplaceSub: x with rows i set to (or added, or
// subtracted) the rows of v.
[[maybe_unused]] const bool kInplaceRegistered = [] {
  for (const auto& [name, doc] :
       {std::pair{"InplaceUpdate", "x with its rows i set to v's rows"},
        std::pair{"InplaceAdd", "x with v's rows added to its rows i"},
        std::pair{"InplaceSub", "x with v's rows taken from its rows i"}}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("x: T")
                   .Input("i: int32")
                   .Input("v: T")
                   .Output("y: T")
                   .Attr("T: type")
                   .Doc(doc)
                   .SetShapeFn(shape_fns::UnchangedShape));
  }
  return true;
}();

TW_REGISTER_OP("UnravelIndex")
    .Input("indices: Tidx")
    .Input("dims: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("The coordinates in an array of shape dims of each flat index (one column per index).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape dims;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &dims));
      const PartialTensorShape& indices = c->input(0);
      if (indices.unknown_rank()) {
        c->set_output(0, PartialTensorShape());
      } else if (indices.dims() == 0) {
        c->set_output(0, PartialTensorShape({dims.dim_size(0)}));
      } else {
        c->set_output(0, PartialTensorShape({dims.dim_size(0), indices.num_elements()}));
      }
      return absl::OkStatus();
    });

TW_REGISTER_OP("NextAfter")
    .Input("x1: T")
    .Input("x2: T")
    .Output("output: T")
    .Attr("T: {float64, float32} = DT_FLOAT")
    .Doc("The next representable value after x1 towards x2 (C's nextafter), broadcasting.")
    .SetShapeFn(shape_fns::BroadcastBinaryOpShape);

TW_REGISTER_OP("ApproximateEqual")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr("T: numbertype")
    .Attr("tolerance: float = 1e-05")
    .SetIsCommutative()
    .Doc("|x - y| < tolerance, elementwise (x and y of one shape).")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace
}  // namespace towerflow
