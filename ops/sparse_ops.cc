// Sparse and ragged tensors as TensorFlow passes them between ops: a
// SparseTensor as (indices [nnz, rank], values [nnz], dense_shape [rank]),
// a ragged one as (row splits, flat values). SparseTensorDenseAdd,
// SparseToDense, SparseFillEmptyRows (and its gradient), SparseReshape and
// RaggedRange (kernels/cpu/sparse_ops.cc), SparseReduceSum and
// SparseReduceMax (kernels/cpu/sparse_reduce_ops.cc), RaggedTensorToTensor
// (kernels/cpu/ragged_ops.cc); the SparseTensor-to-SparseTensor ops
// SparseReorder, SparseSlice, SparseConcat, SparseSplit and SparseSoftmax
// (kernels/cpu/sparse_tensor_ops.cc), SparseAdd, SparseSparseMaximum/Minimum
// and SparseDenseCwiseAdd/Mul/Div (kernels/cpu/sparse_binary_ops.cc), and
// SparseReduceSumSparse/MaxSparse; the tf.sets ops SetSize and
// Dense/Sparse-To-Dense/Sparse SetOperation (kernels/cpu/set_ops.cc); the
// feature crosses SparseCross, SparseCrossV2 and SparseCrossHashed.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// A SparseTensor's three inputs from `first` on: indices [nnz, rank],
// values [nnz], dense shape [rank] (-1 where unknown).
absl::Status SparseOperand(InferenceContext* c, int first, int64_t* nnz, int64_t* rank) {
  PartialTensorShape indices, values, shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(first), 2, &indices));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(first + 1), 1, &values));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(first + 2), 1, &shape));
  *nnz = -1;
  *rank = -1;
  TW_RETURN_IF_ERROR(c->MergeDim(indices.dim_size(0), values.dim_size(0), nnz));
  return c->MergeDim(indices.dim_size(1), shape.dim_size(0), rank);
}

// A SparseTensor result of unknown size: indices [?, rank], values [?] and,
// when the op has a third output, the dense shape [rank].
void SetSparseOutput(InferenceContext* c, int first, int64_t rank, bool with_shape) {
  c->set_output(first, PartialTensorShape({-1, rank}));
  c->set_output(first + 1, PartialTensorShape({-1}));
  if (with_shape) c->set_output(first + 2, PartialTensorShape({rank}));
}

// Values of a SparseTensor operand's entries: [nnz].
absl::Status SparseValuesShape(InferenceContext* c) {
  int64_t nnz = 0, rank = 0;
  TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
  c->set_output(0, PartialTensorShape({nnz}));
  return absl::OkStatus();
}

// A SparseTensor result of the SparseTensor at input 0, of its rank (or of
// an unknown one).
absl::Status SparseResultShape(InferenceContext* c, bool known_rank) {
  int64_t nnz = 0, rank = 0;
  TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
  SetSparseOutput(c, 0, known_rank ? rank : -1, true);
  return absl::OkStatus();
}

absl::Status SparseTensorDenseAddShape(InferenceContext* c) {
  int64_t nnz = 0, rank = 0;
  TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
  const PartialTensorShape& b = c->input(3);
  if (!b.unknown_rank() && rank >= 0 && b.dims() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Two operands have different ranks; received: ", rank, " and ", b.dims()));
  }
  c->set_output(0, b);
  return absl::OkStatus();
}

absl::Status RaggedRangeShape(InferenceContext* c) {
  int64_t rows = -1;
  bool any_vector = false;
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape s;
    TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(i), 1, &s));
    if (s.dims() == 1) {
      any_vector = true;
      TW_RETURN_IF_ERROR(c->MergeDim(rows, s.dim_size(0), &rows));
    }
  }
  if (!any_vector) rows = 1;
  c->set_output(0, PartialTensorShape({rows < 0 ? -1 : rows + 1}));
  c->set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

TW_REGISTER_OP("SparseTensorDenseAdd")
    .Input("a_indices: Tindices")
    .Input("a_values: T")
    .Input("a_shape: Tindices")
    .Input("b: T")
    .Output("output: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}")
    .Attr("Tindices: {int32, int64}")
    .Doc("The dense b plus the SparseTensor a of b's shape.")
    .SetShapeFn(SparseTensorDenseAddShape);

TW_REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}")
    .Doc("A dense tensor of output_shape, default_value but at sparse_indices.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape shape;
      TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(1), 1, &shape));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->ConstantIntInput(1));
      if (dims.has_value()) {
        c->set_output(0, PartialTensorShape(*dims));
      } else if (shape.dims() == 1 && shape.dim_size(0) >= 0) {
        c->set_output(0, PartialTensorShape(std::vector<int64_t>(shape.dim_size(0), -1)));
      }
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseFillEmptyRows")
    .Input("indices: int64")
    .Input("values: T")
    .Input("dense_shape: int64")
    .Input("default_value: T")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("empty_row_indicator: bool")
    .Output("reverse_index_map: int64")
    .Attr("T: type")
    .Doc("The SparseTensor with an entry (default_value at [row, 0, ...]) in each empty row.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t nnz = -1, rank = -1;
      TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
      c->set_output(0, PartialTensorShape({-1, rank}));
      c->set_output(1, PartialTensorShape({-1}));
      c->set_output(2, PartialTensorShape({-1}));
      c->set_output(3, PartialTensorShape({nnz}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("RaggedFillEmptyRows")
    .Input("value_rowids: int64")
    .Input("values: T")
    .Input("nrows: int64")
    .Input("default_value: T")
    .Output("output_value_rowids: int64")
    .Output("output_values: T")
    .Output("empty_row_indicator: bool")
    .Output("reverse_index_map: int64")
    .Attr("T: type")
    .Doc("A ragged tensor (value_rowids, nrows) with default_value in each empty row.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape rowids, values, scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &rowids));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &values));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
      int64_t n = rowids.dim_size(0);
      TW_RETURN_IF_ERROR(c->MergeDim(n, values.dim_size(0), &n));
      c->set_output(0, PartialTensorShape({-1}));
      c->set_output(1, PartialTensorShape({-1}));
      c->set_output(2, PartialTensorShape({-1}));
      c->set_output(3, PartialTensorShape({n}));
      return absl::OkStatus();
    });

// SparseFillEmptyRows' and RaggedFillEmptyRows' gradient ops.
[[maybe_unused]] const bool kFillEmptyRowsGrads = [] {
  for (const char* name : {"SparseFillEmptyRowsGrad", "RaggedFillEmptyRowsGrad"}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("reverse_index_map: int64")
        .Input("grad_values: T")
        .Output("d_values: T")
        .Output("d_default_value: T")
        .Attr("T: type")
        .Doc("The fill's gradient: grad_values at the kept entries, the rest summed.")
        .SetShapeFn([](InferenceContext* c) {
          PartialTensorShape map, grad;
          TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &map));
          TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &grad));
          c->set_output(0, map);
          c->set_output(1, PartialTensorShape({}));
          return absl::OkStatus();
        });
    RegisterOp(b);
  }
  return true;
}();

TW_REGISTER_OP("SparseReshape")
    .Input("input_indices: int64")
    .Input("input_shape: int64")
    .Input("new_shape: int64")
    .Output("output_indices: int64")
    .Output("output_shape: int64")
    .Doc("The SparseTensor's indices in a dense shape of as many elements (one -1 inferred).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape indices, shape, new_shape;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &shape));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &new_shape));
      c->set_output(0, PartialTensorShape({indices.dim_size(0), new_shape.dim_size(0)}));
      c->set_output(1, new_shape);
      return absl::OkStatus();
    });

TW_REGISTER_OP("RaggedRange")
    .Input("starts: T")
    .Input("limits: T")
    .Input("deltas: T")
    .Output("rt_nested_splits: Tsplits")
    .Output("rt_dense_values: T")
    .Attr("T: {bfloat16, float, double, int32, int64} = DT_INT32")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc("A ragged tensor whose row i is Range(starts[i], limits[i], deltas[i]).")
    .SetShapeFn(RaggedRangeShape);

// The dense result of reducing a SparseTensor over reduction_axes: its
// shape when the dense shape and the axes are constants.
absl::Status SparseReduceShape(InferenceContext* c) {
  PartialTensorShape indices, values, shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &values));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &shape));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->ConstantIntInput(2));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, c->ConstantIntInput(3));
  bool keep_dims = false;
  TW_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  if (!dims.has_value() || !axes.has_value()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t rank = static_cast<int64_t>(dims->size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : *axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                     ", for input with ", rank, " dimensions."));
    }
    reduced[axis] = true;
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back((*dims)[d]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  TW_ASSIGN_OR_RETURN(PartialTensorShape result, PartialTensorShape::FromDims(out));
  c->set_output(0, result);
  return absl::OkStatus();
}

TW_REGISTER_OP("SparseReduceSum")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Input("reduction_axes: int32")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: numbertype")
    .Doc("The sum of a SparseTensor over reduction_axes, dense (absent entries are 0).")
    .SetShapeFn(SparseReduceShape);

TW_REGISTER_OP("SparseReduceMax")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Input("reduction_axes: int32")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: realnumbertype")
    .Doc("The maximum of a SparseTensor's entries over reduction_axes, dense (0 where none).")
    .SetShapeFn(SparseReduceShape);

TW_REGISTER_OP("SparseReorder")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Attr("T: type")
    .Doc("The SparseTensor's entries in row-major (canonical) order of their indices.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t nnz = 0, rank = 0;
      TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
      c->set_output(0, PartialTensorShape({nnz, rank}));
      c->set_output(1, PartialTensorShape({nnz}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseSlice")
    .Input("indices: int64")
    .Input("values: T")
    .Input("shape: int64")
    .Input("start: int64")
    .Input("size: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("T: type")
    .Doc("The entries inside [start, start + size), moved to start at 0, in their order.")
    .SetShapeFn([](InferenceContext* c) { return SparseResultShape(c, /*known_rank=*/true); });

TW_REGISTER_OP("SparseSliceGrad")
    .Input("backprop_val_grad: T")
    .Input("input_indices: int64")
    .Input("input_start: int64")
    .Input("output_indices: int64")
    .Output("val_grad: T")
    .Attr("T: numbertype")
    .Doc("SparseSlice's gradient: each sliced entry's gradient at its input position, 0 elsewhere.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape indices;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &indices));
      c->set_output(0, PartialTensorShape({indices.dim_size(0)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseConcat")
    .Input("indices: N * int64")
    .Input("values: N * T")
    .Input("shapes: N * int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("concat_dim: int")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Doc("The N SparseTensors joined along concat_dim, the entries in canonical order.")
    .SetShapeFn([](InferenceContext* c) {
      int n = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("N", &n));
      int64_t total = 0, rank = -1;
      for (int i = 0; i < n; ++i) {
        PartialTensorShape indices, values, shape;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 2, &indices));
        TW_RETURN_IF_ERROR(c->WithRank(c->input(n + i), 1, &values));
        TW_RETURN_IF_ERROR(c->WithRank(c->input(2 * n + i), 1, &shape));
        int64_t nnz = -1;
        TW_RETURN_IF_ERROR(c->MergeDim(indices.dim_size(0), values.dim_size(0), &nnz));
        TW_RETURN_IF_ERROR(c->MergeDim(rank, indices.dim_size(1), &rank));
        TW_RETURN_IF_ERROR(c->MergeDim(rank, shape.dim_size(0), &rank));
        total = total < 0 || nnz < 0 ? -1 : total + nnz;
      }
      c->set_output(0, PartialTensorShape({total, rank}));
      c->set_output(1, PartialTensorShape({total}));
      c->set_output(2, PartialTensorShape({rank}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseSplit")
    .Input("split_dim: int64")
    .Input("indices: int64")
    .Input("values: T")
    .Input("shape: int64")
    .Output("output_indices: num_split * int64")
    .Output("output_values: num_split * T")
    .Output("output_shape: num_split * int64")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Doc("The SparseTensor cut into num_split pieces along split_dim (the first ones one longer).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape split_dim;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &split_dim));
      int64_t nnz = 0, rank = 0;
      TW_RETURN_IF_ERROR(SparseOperand(c, 1, &nnz, &rank));
      int num = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("num_split", &num));
      for (int i = 0; i < num; ++i) {
        c->set_output(i, PartialTensorShape({-1, rank}));
        c->set_output(num + i, PartialTensorShape({-1}));
        c->set_output(2 * num + i, PartialTensorShape({rank}));
      }
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseSoftmax")
    .Input("sp_indices: int64")
    .Input("sp_values: T")
    .Input("sp_shape: int64")
    .Output("output: T")
    .Attr("T: {half, float, double}")
    .Doc(
        "Softmax over the last dimension's present entries of each row, the values in canonical "
        "order (TF sorts them).")
    .SetShapeFn(SparseValuesShape);

TW_REGISTER_OP("SparseAdd")
    .Input("a_indices: int64")
    .Input("a_values: T")
    .Input("a_shape: int64")
    .Input("b_indices: int64")
    .Input("b_values: T")
    .Input("b_shape: int64")
    .Input("thresh: Treal")
    .Output("sum_indices: int64")
    .Output("sum_values: T")
    .Output("sum_shape: int64")
    .Attr("T: numbertype")
    .Attr("Treal: realnumbertype")
    .Doc(
        "The sum of two SparseTensors of one shape (merged in index order); a sum of two entries "
        "is kept only where its magnitude is at least thresh.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t a_nnz = 0, b_nnz = 0, rank = 0, b_rank = 0;
      TW_RETURN_IF_ERROR(SparseOperand(c, 0, &a_nnz, &rank));
      TW_RETURN_IF_ERROR(SparseOperand(c, 3, &b_nnz, &b_rank));
      PartialTensorShape thresh;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(6), 0, &thresh));
      SetSparseOutput(c, 0, rank, true);
      c->set_output(2, c->input(2));
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseAddGrad")
    .Input("backprop_val_grad: T")
    .Input("a_indices: int64")
    .Input("b_indices: int64")
    .Input("sum_indices: int64")
    .Output("a_val_grad: T")
    .Output("b_val_grad: T")
    .Attr("T: numbertype")
    .Doc("SparseAdd's gradient: each operand entry's gradient at its index in the sum, else 0.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape a, b;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &a));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 2, &b));
      c->set_output(0, PartialTensorShape({a.dim_size(0)}));
      c->set_output(1, PartialTensorShape({b.dim_size(0)}));
      return absl::OkStatus();
    });

absl::Status SparseSparseShape(InferenceContext* c) {
  int64_t a_nnz = 0, b_nnz = 0, rank = 0;
  TW_RETURN_IF_ERROR(SparseOperand(c, 0, &a_nnz, &rank));
  TW_RETURN_IF_ERROR(SparseOperand(c, 3, &b_nnz, &rank));
  SetSparseOutput(c, 0, rank, false);
  return absl::OkStatus();
}

TW_REGISTER_OP("SparseSparseMaximum")
    .Input("a_indices: int64")
    .Input("a_values: T")
    .Input("a_shape: int64")
    .Input("b_indices: int64")
    .Input("b_values: T")
    .Input("b_shape: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Attr("T: realnumbertype")
    .Doc("The element-wise maximum of two SparseTensors, an absent entry counting as 0.")
    .SetShapeFn(SparseSparseShape);

TW_REGISTER_OP("SparseSparseMinimum")
    .Input("a_indices: int64")
    .Input("a_values: T")
    .Input("a_shape: int64")
    .Input("b_indices: int64")
    .Input("b_values: T")
    .Input("b_shape: int64")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Attr("T: numbertype")
    .Doc("The element-wise minimum of two SparseTensors, an absent entry counting as 0.")
    .SetShapeFn(SparseSparseShape);

#define TW_SPARSE_DENSE_CWISE_OP(name, doc) \
  TW_REGISTER_OP(name)                      \
      .Input("sp_indices: int64")           \
      .Input("sp_values: T")                \
      .Input("sp_shape: int64")             \
      .Input("dense: T")                    \
      .Output("output: T")                  \
      .Attr("T: numbertype")                \
      .Doc(doc)                             \
      .SetShapeFn(SparseValuesShape)

TW_SPARSE_DENSE_CWISE_OP("SparseDenseCwiseAdd",
                         "Each present entry plus dense at its index (dense broadcast to the "
                         "sparse shape); absent entries stay absent.");
TW_SPARSE_DENSE_CWISE_OP("SparseDenseCwiseMul",
                         "Each present entry times dense at its index (dense broadcast to the "
                         "sparse shape).");
TW_SPARSE_DENSE_CWISE_OP("SparseDenseCwiseDiv",
                         "Each present entry divided by dense at its index (dense broadcast to "
                         "the sparse shape; integers truncate; a zero divisor is an error).");
#undef TW_SPARSE_DENSE_CWISE_OP

absl::Status SparseReduceSparseShape(InferenceContext* c) {
  return SparseResultShape(c, /*known_rank=*/false);
}

TW_REGISTER_OP("SparseReduceSumSparse")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Input("reduction_axes: int32")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("keep_dims: bool = false")
    .Attr("T: numbertype")
    .Doc("The sum of a SparseTensor over reduction_axes, as a SparseTensor of the reached entries.")
    .SetShapeFn(SparseReduceSparseShape);

TW_REGISTER_OP("SparseReduceMaxSparse")
    .Input("input_indices: int64")
    .Input("input_values: T")
    .Input("input_shape: int64")
    .Input("reduction_axes: int32")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("output_shape: int64")
    .Attr("keep_dims: bool = false")
    .Attr("T: realnumbertype")
    .Doc("The maximum of the present entries over reduction_axes, as a SparseTensor.")
    .SetShapeFn(SparseReduceSparseShape);

TW_REGISTER_OP("EditDistance")
    .Input("hypothesis_indices: int64")
    .Input("hypothesis_values: T")
    .Input("hypothesis_shape: int64")
    .Input("truth_indices: int64")
    .Input("truth_values: T")
    .Input("truth_shape: int64")
    .Output("output: float")
    .Attr("normalize: bool = true")
    .Attr("T: type")
    .Doc(
        "The Levenshtein distance between the sequences (the last dimension) of two "
        "SparseTensors, per position of the others; normalize divides by the truth's length.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t nnz = 0, rank = 0, truth_rank = 0;
      TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &rank));
      TW_RETURN_IF_ERROR(SparseOperand(c, 3, &nnz, &truth_rank));
      TW_RETURN_IF_ERROR(c->MergeDim(rank, truth_rank, &rank));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> hyp, c->ConstantIntInput(2));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> truth, c->ConstantIntInput(5));
      if (hyp.has_value() && truth.has_value() && hyp->size() == truth->size() && !hyp->empty()) {
        std::vector<int64_t> dims;
        for (size_t d = 0; d + 1 < hyp->size(); ++d)
          dims.push_back(std::max((*hyp)[d], (*truth)[d]));
        TW_ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
        c->set_output(0, out);
      } else if (rank >= 1) {
        c->set_output(0, PartialTensorShape::UnknownDims(static_cast<int>(rank - 1)));
      }
      return absl::OkStatus();
    });

TW_REGISTER_OP("SparseTensorDenseMatMul")
    .Input("a_indices: Tindices")
    .Input("a_values: T")
    .Input("a_shape: int64")
    .Input("b: T")
    .Output("product: T")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64} = DT_INT64")
    .Attr("adjoint_a: bool = false")
    .Attr("adjoint_b: bool = false")
    .Doc("The sparse matrix (a_indices, a_values, a_shape), or its adjoint, times b or b's.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape b;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 2, &b));
      bool adjoint_a = false, adjoint_b = false;
      TW_RETURN_IF_ERROR(c->GetAttr("adjoint_a", &adjoint_a));
      TW_RETURN_IF_ERROR(c->GetAttr("adjoint_b", &adjoint_b));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, c->ConstantIntInput(2));
      int64_t rows = -1;
      if (shape.has_value() && shape->size() == 2) rows = (*shape)[adjoint_a ? 1 : 0];
      c->set_output(
          0, PartialTensorShape({rows, b.unknown_rank() ? -1 : b.dim_size(adjoint_b ? 0 : 1)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("RaggedGather")
    .Input("params_nested_splits: PARAMS_RAGGED_RANK * Tsplits")
    .Input("params_dense_values: Tvalues")
    .Input("indices: Tindices")
    .Output("output_nested_splits: OUTPUT_RAGGED_RANK * Tsplits")
    .Output("output_dense_values: Tvalues")
    .Attr("Tvalues: type")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Attr("PARAMS_RAGGED_RANK: int >= 1")
    .Attr("OUTPUT_RAGGED_RANK: int >= 0")
    .Doc("Rows `indices` of a ragged tensor (nested splits over dense values), ragged.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t params_ragged = 0, output_ragged = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("PARAMS_RAGGED_RANK", &params_ragged));
      TW_RETURN_IF_ERROR(c->GetAttr("OUTPUT_RAGGED_RANK", &output_ragged));
      const int p = static_cast<int>(params_ragged);
      for (int i = 0; i < p; ++i) {
        PartialTensorShape splits;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &splits));
      }
      const PartialTensorShape& indices = c->input(p + 1);
      if (!indices.unknown_rank() && indices.dims() - 1 + params_ragged != output_ragged) {
        return absl::InvalidArgumentError(
            absl::StrCat("expected OUTPUT_RAGGED_RANK = ", indices.dims() - 1 + params_ragged,
                         " (indices' rank - 1 + PARAMS_RAGGED_RANK), got ", output_ragged));
      }
      for (int i = 0; i < static_cast<int>(output_ragged); ++i) {
        c->set_output(i, PartialTensorShape({-1}));
      }
      PartialTensorShape values;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(p), 1, &values));
      std::vector<int64_t> dims(values.dim_sizes().begin(), values.dim_sizes().end());
      if (!dims.empty()) dims[0] = -1;
      c->set_output(static_cast<int>(output_ragged),
                    values.unknown_rank() ? PartialTensorShape() : PartialTensorShape(dims));
      return absl::OkStatus();
    });

TW_REGISTER_OP("RaggedTensorToSparse")
    .Input("rt_nested_splits: RAGGED_RANK * Tsplits")
    .Input("rt_dense_values: T")
    .Output("sparse_indices: int64")
    .Output("sparse_values: T")
    .Output("sparse_dense_shape: int64")
    .Attr("RAGGED_RANK: int >= 1")
    .Attr("T: type")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc("A ragged tensor (row splits per ragged dimension) as a SparseTensor.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t ragged_rank = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("RAGGED_RANK", &ragged_rank));
      const PartialTensorShape& values = c->input(static_cast<int>(ragged_rank));
      const int64_t rank =
          values.dims() < 0 ? -1 : ragged_rank + std::max<int64_t>(values.dims(), 1);
      c->set_output(0, PartialTensorShape({-1, rank}));
      c->set_output(1, PartialTensorShape({-1}));
      c->set_output(2, PartialTensorShape({rank}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("RaggedTensorToTensor")
    .Input("shape: Tshape")
    .Input("values: T")
    .Input("default_value: T")
    .Input("row_partition_tensors: num_row_partition_tensors * Tindex")
    .Output("result: T")
    .Attr("T: type")
    .Attr("Tindex: {int64, int32}")
    .Attr("Tshape: {int64, int32}")
    .Attr("num_row_partition_tensors: int")
    .Attr("row_partition_types: list(string)")
    .Doc(
        "A ragged tensor (values partitioned by ROW_SPLITS, or FIRST_DIM_SIZE and VALUE_ROWIDS, "
        "per ragged dimension) as a dense one of shape (-1: as long as the longest row), "
        "padded with default_value, cut where shape is smaller.")
    .SetShapeFn([](InferenceContext* c) {
      std::vector<std::string> types;
      TW_RETURN_IF_ERROR(c->GetAttr("row_partition_types", &types));
      const int ragged_rank =
          static_cast<int>(types.size()) - (!types.empty() && types[0] == "FIRST_DIM_SIZE");
      PartialTensorShape values;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 1, &values));
      PartialTensorShape out;
      if (!values.unknown_rank()) {
        out = PartialTensorShape::UnknownDims(ragged_rank + 1)
                  .Concatenate(PartialTensorShape(values.dim_sizes().subspan(1)));
      }
      if (c->input(0).dims() == 1) {
        absl::StatusOr<PartialTensorShape> given = c->MakeShapeFromShapeTensor(0);
        if (given.ok()) {
          TW_ASSIGN_OR_RETURN(out, out.MergeWith(*given));
        }
      }
      c->set_output(0, out);
      return absl::OkStatus();
    });

// The tf.sets ops (kernels/cpu/set_ops.cc): a set is the last dimension of
// each group of the other dimensions; results are SparseTensors of the
// operands' rank.
constexpr char kSetTypes[] = "T: {int8, int16, int32, int64, uint8, uint16, string}";

// A set result of rank `rank` (-1 unknown).
absl::Status SetResult(InferenceContext* c, int64_t rank) {
  SetSparseOutput(c, 0, rank, true);
  return absl::OkStatus();
}

// A SparseTensor set operand's rank is `want` (when known) too.
absl::Status SameRank(int64_t want, int64_t* rank) {
  if (want >= 0 && *rank >= 0 && *rank != want) {
    return absl::InvalidArgumentError(absl::StrCat("Dimension must be ", want, " but is ", *rank));
  }
  if (want >= 0) *rank = want;
  return absl::OkStatus();
}

absl::Status DenseSetsShape(InferenceContext* c) {
  PartialTensorShape a, b;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &a));
  if (a.unknown_rank()) {
    TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 2, &b));
    return SetResult(c, b.dims());
  }
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), a.dims(), &b));
  if (!b.unknown_rank()) {
    PartialTensorShape groups;
    const auto group = [](const PartialTensorShape& s) {
      return PartialTensorShape(s.dim_sizes().first(s.dims() - 1));
    };
    TW_RETURN_IF_ERROR(c->Merge(group(a), group(b), &groups));
  }
  return SetResult(c, a.dims());
}

// As TF's: the SparseTensor's rank is only checked against the dense one.
absl::Status DenseSparseSetsShape(InferenceContext* c) {
  int64_t nnz = 0, rank = -1;
  TW_RETURN_IF_ERROR(SparseOperand(c, 1, &nnz, &rank));
  PartialTensorShape a;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &a));
  TW_RETURN_IF_ERROR(SameRank(a.dims(), &rank));
  return SetResult(c, rank);
}

absl::Status SparseSetsShape(InferenceContext* c) {
  int64_t nnz = 0, a = -1, b = -1;
  TW_RETURN_IF_ERROR(SparseOperand(c, 0, &nnz, &a));
  TW_RETURN_IF_ERROR(SparseOperand(c, 3, &nnz, &b));
  // TF checks the second's rank only when the first's is unknown.
  const int64_t known = a >= 0 ? a : b;
  if (known >= 0 && known < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input ", a >= 0 ? 0 : 1, ", expected rank >= 2, got ", known, "."));
  }
  TW_RETURN_IF_ERROR(SameRank(a, &b));
  return SetResult(c, b);
}

TW_REGISTER_OP("SetSize")
    .Input("set_indices: int64")
    .Input("set_values: T")
    .Input("set_shape: int64")
    .Output("size: int32")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Doc("The number of distinct values in each set (last dimension) of a SparseTensor.")
    .SetShapeFn(shape_fns::UnknownShape);  // TF's: the kernel checks its operands

TW_REGISTER_OP("DenseToDenseSetOperation")
    .Input("set1: T")
    .Input("set2: T")
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Doc("set_operation (a-b, b-a, intersection, union) of the sets of two dense tensors.")
    .SetShapeFn(DenseSetsShape);

TW_REGISTER_OP("DenseToSparseSetOperation")
    .Input("set1: T")
    .Input("set2_indices: int64")
    .Input("set2_values: T")
    .Input("set2_shape: int64")
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Doc("set_operation of the sets of a dense tensor and a SparseTensor.")
    .SetShapeFn(DenseSparseSetsShape);

TW_REGISTER_OP("SparseToSparseSetOperation")
    .Input("set1_indices: int64")
    .Input("set1_values: T")
    .Input("set1_shape: int64")
    .Input("set2_indices: int64")
    .Input("set2_values: T")
    .Input("set2_shape: int64")
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Doc("set_operation of the sets of two SparseTensors.")
    .SetShapeFn(SparseSetsShape);

// Feature crosses (kernels/cpu/sparse_cross_ops.cc): N SparseTensors and
// the dense matrices crossed row by row into a [batch, ?] SparseTensor.
absl::Status CrossShape(InferenceContext* c) {
  SetSparseOutput(c, 0, 2, true);
  return absl::OkStatus();
}

TW_REGISTER_OP("SparseCross")
    .Input("indices: N * int64")
    .Input("values: sparse_types")
    .Input("shapes: N * int64")
    .Input("dense_inputs: dense_types")
    .Output("output_indices: int64")
    .Output("output_values: out_type")
    .Output("output_shape: int64")
    .Attr("N: int >= 0")
    .Attr("hashed_output: bool")
    .Attr("num_buckets: int >= 0")
    .Attr("hash_key: int")
    .Attr("sparse_types: list({int64, string}) >= 0")
    .Attr("dense_types: list({int64, string}) >= 0")
    .Attr("out_type: {int64, string}")
    .Attr("internal_type: {int64, string}")
    .Doc(
        "Each row's crosses: features joined by \"_X_\", or their fingerprints chained from "
        "hash_key (modulo num_buckets) for an int64 out_type.")
    .SetShapeFn(CrossShape);

TW_REGISTER_OP("SparseCrossV2")
    .Input("indices: N * int64")
    .Input("values: sparse_types")
    .Input("shapes: N * int64")
    .Input("dense_inputs: dense_types")
    .Input("sep: string")
    .Output("output_indices: int64")
    .Output("output_values: string")
    .Output("output_shape: int64")
    .Attr("N: int >= 0")
    .Attr("sparse_types: list({int64, string}) >= 0")
    .Attr("dense_types: list({int64, string}) >= 0")
    .Doc("Each row's crosses, features joined by sep.")
    .SetShapeFn(CrossShape);

TW_REGISTER_OP("SparseCrossHashed")
    .Input("indices: N * int64")
    .Input("values: sparse_types")
    .Input("shapes: N * int64")
    .Input("dense_inputs: dense_types")
    .Input("num_buckets: int64")
    .Input("strong_hash: bool")
    .Input("salt: int64")
    .Output("output_indices: int64")
    .Output("output_values: int64")
    .Output("output_shape: int64")
    .Attr("N: int >= 0")
    .Attr("sparse_types: list({int64, string}) >= 0")
    .Attr("dense_types: list({int64, string}) >= 0")
    .Doc(
        "Each row's crosses as chained fingerprints (SipHash under salt if strong_hash), "
        "modulo num_buckets.")
    .SetShapeFn(CrossShape);

}  // namespace
}  // namespace towerflow
