// Sparse and ragged tensors as TensorFlow passes them between ops: a
// SparseTensor as (indices [nnz, rank], values [nnz], dense_shape [rank]),
// a ragged one as (row splits, flat values). SparseTensorDenseAdd and
// RaggedRange (kernels/cpu/sparse_ops.cc).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status SparseTensorDenseAddShape(InferenceContext* c) {
  PartialTensorShape indices, values, shape;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &indices));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &values));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &shape));
  int64_t nnz = 0, rank = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(indices.dim_size(0), values.dim_size(0), &nnz));
  TW_RETURN_IF_ERROR(c->MergeDim(indices.dim_size(1), shape.dim_size(0), &rank));
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

}  // namespace
}  // namespace towerflow
