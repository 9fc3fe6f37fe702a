#include "ops/segment_shapes.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace segment_shapes {

absl::Status UnsortedSegmentShape(InferenceContext* c) {
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& ids = c->input(1);
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> num, c->ConstantScalarInput(2));
  if (num.has_value() && *num < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_segments must be non-negative, got ", *num));
  }
  if (data.unknown_rank() || ids.unknown_rank()) return absl::OkStatus();
  if (!shape_fns::StartsWithShape(data, ids)) {
    return absl::InvalidArgumentError(absl::StrCat("segment_ids shape ", ids.DebugString(),
                                                   " is not a prefix of data shape ",
                                                   data.DebugString()));
  }
  std::vector<int64_t> dims = {num.has_value() ? *num : -1};
  dims.insert(dims.end(), data.dim_sizes().begin() + ids.dims(), data.dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// SegmentSum and the other sorted segment reductions: data [N, R...] with
// ids [N] gives [segments, R...], the count of segments known only from the
// ids' values.
absl::Status SegmentShape(InferenceContext* c) {
  PartialTensorShape data, ids;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &data));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &ids));
  if (data.dims() < 0) return absl::OkStatus();
  int64_t rows = -1;
  TW_RETURN_IF_ERROR(c->MergeDim(data.dim_size(0), ids.dim_size(0), &rows));
  std::vector<int64_t> dims = {-1};
  dims.insert(dims.end(), data.dim_sizes().begin() + 1, data.dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// SparseSegmentSum and friends: data [D, R...] gathered by indices [N]
// into segments by segment_ids [N]: [segments, R...], the count of segments
// known from num_segments (a constant) or only at run time. The gradients
// (SparseSegment*Grad: grad [segments, R...]) give [output_dim0, R...].
absl::Status SparseSegmentShape(InferenceContext* c) {
  PartialTensorShape data, indices, ids;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &data));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &indices));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &ids));
  int64_t n = -1;
  TW_RETURN_IF_ERROR(c->MergeDim(indices.dim_size(0), ids.dim_size(0), &n));
  if (data.dims() < 0) return absl::OkStatus();
  std::optional<int64_t> rows;
  if (c->num_inputs() > 3) {  // num_segments (WithNumSegments), or the gradients' output_dim0
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
    TW_ASSIGN_OR_RETURN(rows, c->ConstantScalarInput(3));
  }
  std::vector<int64_t> dims = {rows.value_or(-1)};
  dims.insert(dims.end(), data.dim_sizes().begin() + 1, data.dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

}  // namespace segment_shapes
}  // namespace towerflow
