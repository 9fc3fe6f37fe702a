// Counting and bucketing: Bincount, DenseBincount, SparseBincount and
// RaggedBincount, HistogramFixedWidth,
// Bucketize, and the searches of sorted rows LowerBound and UpperBound
// (kernels/cpu/histogram_ops.cc).
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

TW_REGISTER_OP("Bincount")
    .Input("arr: int32")
    .Input("size: int32")
    .Input("weights: T")
    .Output("bins: T")
    .Attr("T: {int32, int64, float, double}")
    .Doc("bins[i] = the weights (or the number) of the entries of arr equal to i, for i < size.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> size, c->ConstantScalarInput(1));
      if (size.has_value() && *size < 0) {
        return absl::InvalidArgumentError(absl::StrCat("size (", *size, ") must be non-negative"));
      }
      c->set_output(0, PartialTensorShape({size.value_or(-1)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("HistogramFixedWidth")
    .Input("values: T")
    .Input("value_range: T")
    .Input("nbins: int32")
    .Output("out: dtype")
    .Attr("T: {int32, int64, float, double}")
    .Attr("dtype: {int32, int64} = DT_INT32")
    .Doc("Counts of values in nbins equal bins over value_range (outliers in the end bins).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape range, scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &range));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
      int64_t two = 0;
      TW_RETURN_IF_ERROR(c->MergeDim(range.dim_size(0), 2, &two));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> nbins, c->ConstantScalarInput(2));
      if (nbins.has_value() && *nbins <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("nbins should be a positive number, but got '", *nbins, "'"));
      }
      c->set_output(0, PartialTensorShape({nbins.value_or(-1)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DenseBincount")
    .Input("input: Tidx")
    .Input("size: Tidx")
    .Input("weights: T")
    .Output("output: T")
    .Attr("Tidx: {int32, int64}")
    .Attr("T: {int32, int64, float, double}")
    .Attr("binary_output: bool = false")
    .Doc("Bincount of a vector, or of each row of a matrix; binary_output counts presence.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> size, c->ConstantScalarInput(1));
      if (size.has_value() && *size < 0) {
        return absl::InvalidArgumentError(absl::StrCat("size (", *size, ") must be non-negative"));
      }
      const PartialTensorShape& in = c->input(0);
      if (in.unknown_rank()) return absl::OkStatus();
      if (in.dims() > 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("Shape must be at most rank 2 but is rank ", in.dims()));
      }
      c->set_output(0, in.dims() == 2 ? PartialTensorShape({in.dim_size(0), size.value_or(-1)})
                                      : PartialTensorShape({size.value_or(-1)}));
      return absl::OkStatus();
    });

// tf.sparse.bincount: one row of bins per row of a SparseTensor matrix, or
// one for a vector; Keras's CategoryEncoding of sparse inputs.
TW_REGISTER_OP("SparseBincount")
    .Input("indices: int64")
    .Input("values: Tidx")
    .Input("dense_shape: int64")
    .Input("size: Tidx")
    .Input("weights: T")
    .Output("output: T")
    .Attr("Tidx: {int32, int64}")
    .Attr("T: {int32, int64, float, double}")
    .Attr("binary_output: bool = false")
    .Doc("Bincount of a SparseTensor's values, by row of a matrix; binary_output counts presence.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar, shape;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &shape));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> size, c->ConstantScalarInput(3));
      const int64_t rank = shape.dim_size(0);
      c->set_output(0, rank < 0    ? PartialTensorShape::Unknown()
                       : rank == 1 ? PartialTensorShape({size.value_or(-1)})
                                   : PartialTensorShape({-1, size.value_or(-1)}));
      return absl::OkStatus();
    });

// tf.ragged's bincount: one row of bins per row of a ragged tensor.
TW_REGISTER_OP("RaggedBincount")
    .Input("splits: int64")
    .Input("values: Tidx")
    .Input("size: Tidx")
    .Input("weights: T")
    .Output("output: T")
    .Attr("Tidx: {int32, int64}")
    .Attr("T: {int32, int64, float, double}")
    .Attr("binary_output: bool = false")
    .Doc("Bincount of each row of a ragged tensor; binary_output counts presence.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar, splits;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &splits));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> size, c->ConstantScalarInput(2));
      const int64_t n = splits.dim_size(0);
      c->set_output(0, PartialTensorShape({n > 0 ? n - 1 : -1, size.value_or(-1)}));
      return absl::OkStatus();
    });

// tf.sparse.bincount's sparse results: each row's distinct values and their
// counts as a SparseTensor (kernels/cpu/histogram_ops.cc).
absl::Status CountSparseOutputShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape({-1, -1}));
  c->set_output(1, PartialTensorShape({-1}));
  c->set_output(2, PartialTensorShape({-1}));
  return absl::OkStatus();
}

OpDefBuilder CountSparseOutputAttrs(OpDefBuilder b) {
  b.Output("output_indices: int64")
      .Output("output_values: output_type")
      .Output("output_dense_shape: int64")
      .Attr("T: {int32, int64}")
      .Attr("minlength: int >= -1 = -1")
      .Attr("maxlength: int >= -1 = -1")
      .Attr("binary_output: bool")
      .Attr("output_type: {int32, int64, float, double}")
      .SetShapeFn(CountSparseOutputShape);
  return b;
}

[[maybe_unused]] const bool kCountSparseOutputs = [] {
  OpDefBuilder dense("DenseCountSparseOutput", __FILE__);
  dense.Input("values: T").Input("weights: output_type");
  RegisterOp(CountSparseOutputAttrs(std::move(dense))
                 .Doc("Each row's distinct values and their counts (or weights), sparse."));
  OpDefBuilder sparse("SparseCountSparseOutput", __FILE__);
  sparse.Input("indices: int64")
      .Input("values: T")
      .Input("dense_shape: int64")
      .Input("weights: output_type");
  RegisterOp(CountSparseOutputAttrs(std::move(sparse))
                 .Doc("Each row's distinct values of a SparseTensor and their counts, sparse."));
  OpDefBuilder ragged("RaggedCountSparseOutput", __FILE__);
  ragged.Input("splits: int64").Input("values: T").Input("weights: output_type");
  RegisterOp(CountSparseOutputAttrs(std::move(ragged))
                 .Doc("Each row's distinct values of a ragged tensor and their counts, sparse."));
  return true;
}();

TW_REGISTER_OP("Bucketize")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: {int32, int64, float, double}")
    .Attr("boundaries: list(float)")
    .Doc("The index of the bucket each value falls in: how many boundaries are <= it.")
    .SetShapeFn(shape_fns::UnchangedShape);

// Where each value of a row of `values` would go in the sorted row of
// sorted_inputs: LowerBound before equal values, UpperBound after them.
absl::Status BoundShape(InferenceContext* c) {
  PartialTensorShape sorted, values;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &sorted));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &values));
  int64_t rows = -1;
  TW_RETURN_IF_ERROR(c->MergeDim(sorted.dim_size(0), values.dim_size(0), &rows));
  c->set_output(0, values);
  return absl::OkStatus();
}

TW_REGISTER_OP("LowerBound")
    .Input("sorted_inputs: T")
    .Input("values: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .Doc("Per row, the first index whose sorted input is not less than each value.")
    .SetShapeFn(BoundShape);

TW_REGISTER_OP("UpperBound")
    .Input("sorted_inputs: T")
    .Input("values: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .Doc("Per row, the first index whose sorted input is greater than each value.")
    .SetShapeFn(BoundShape);

}  // namespace
}  // namespace towerflow
