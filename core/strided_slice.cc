#include "core/strided_slice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace {

constexpr int kMaxSliceDims = 63;
// Markers in the gather list that builds the final shape.
constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return (mask >> i) & 1; }

struct Dense {
  std::vector<int64_t> begin, end, strides;
  std::vector<bool> begin_masked, end_masked, shrink;
  std::vector<int> gather;  // final shape: input dim index, kNewAxis, kShrinkAxis
};

// Expands the sparse spec (with ellipsis and new axes) to one entry per
// input dimension.
absl::StatusOr<Dense> BuildDense(int rank, const StridedSliceSpec& spec) {
  int sparse_dims = static_cast<int>(spec.begin.size());
  int64_t ellipsis_mask = spec.ellipsis_mask;
  // No ellipsis: an implicit one after the last entry keeps the rest.
  if (ellipsis_mask == 0) ellipsis_mask = int64_t{1} << sparse_dims;
  const int total = ellipsis_mask == (int64_t{1} << sparse_dims) ? sparse_dims + 1 : sparse_dims;
  int ellipsis_seen = 0, new_axes_after_ellipsis = 0;
  for (int i = 0; i < total; ++i) {
    if (Bit(ellipsis_mask, i)) {
      ++ellipsis_seen;
    } else if (ellipsis_seen > 0 && i < sparse_dims && Bit(spec.new_axis_mask, i)) {
      ++new_axes_after_ellipsis;
    }
  }
  if (ellipsis_seen > 1) {
    return absl::InvalidArgumentError("Multiple ellipses in a slice spec are not allowed");
  }
  Dense d;
  d.begin.assign(rank, 0);
  d.end.assign(rank, 0);
  d.strides.assign(rank, 1);
  d.begin_masked.assign(rank, false);
  d.end_masked.assign(rank, false);
  d.shrink.assign(rank, false);
  int full = 0;
  for (int i = 0; i < total; ++i) {
    if (Bit(ellipsis_mask, i)) {
      const int next = std::min(rank - (total - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        d.begin_masked[full] = d.end_masked[full] = true;
        d.gather.push_back(full);
      }
    } else if (Bit(spec.new_axis_mask, i)) {
      d.gather.push_back(kNewAxis);
    } else {
      if (full >= rank) {
        return absl::InvalidArgumentError(absl::StrCat("Index out of range using input dim ", full,
                                                       "; input has only ", rank, " dims"));
      }
      d.begin[full] = spec.begin[i];
      d.end[full] = spec.end[i];
      d.strides[full] = spec.strides[i];
      d.begin_masked[full] = Bit(spec.begin_mask, i);
      d.end_masked[full] = Bit(spec.end_mask, i);
      if (Bit(spec.shrink_axis_mask, i)) {
        d.shrink[full] = true;
        d.gather.push_back(kShrinkAxis);
      } else {
        d.gather.push_back(full);
      }
      ++full;
    }
  }
  return d;
}

}  // namespace

absl::StatusOr<StridedSliceResult> ComputeStridedSlice(const PartialTensorShape& input,
                                                       const StridedSliceSpec& spec) {
  const size_t n = spec.begin.size();
  if (spec.end.size() != n || spec.strides.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("begin, end and strides must have the same length, got ", n, ", ",
                     spec.end.size(), " and ", spec.strides.size()));
  }
  if (n > static_cast<size_t>(kMaxSliceDims)) {
    return absl::InvalidArgumentError(absl::StrCat("StridedSlice supports at most ", kMaxSliceDims,
                                                   " slice dimensions, got ", n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (spec.strides[i] == 0) {
      return absl::InvalidArgumentError(absl::StrCat("strides[", i, "] must be non-zero"));
    }
  }
  if (input.unknown_rank()) {
    return absl::InvalidArgumentError("StridedSlice needs an input of known rank");
  }
  const int rank = input.dims();
  absl::StatusOr<Dense> dense = BuildDense(rank, spec);
  if (!dense.ok()) return dense.status();
  const Dense& d = *dense;

  StridedSliceResult r;
  r.begin.resize(rank);
  r.end.resize(rank);
  r.strides = d.strides;
  std::vector<int64_t> processing(rank);
  bool identity = true;
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = input.dim_size(i);
    const int64_t stride = d.strides[i];
    if (d.shrink[i]) {
      int64_t x = d.begin[i];
      if (dim >= 0) {
        const int64_t canonical = x < 0 ? x + dim : x;
        if (canonical < 0 || canonical >= dim) {
          return absl::InvalidArgumentError(
              absl::StrCat("slice index ", x, " of dimension ", i, " out of bounds"));
        }
        x = canonical;
      }
      r.begin[i] = x;
      r.end[i] = x + 1;
      r.strides[i] = 1;
      processing[i] = 1;
      identity = false;
      continue;
    }
    if (dim < 0) {
      processing[i] = -1;
      identity = false;
      continue;
    }
    // Canonical begin (c = 0) or end (c = 1) for this dim.
    const auto canonical = [&](int64_t x, int c) -> int64_t {
      const bool masked = c == 0 ? d.begin_masked[i] : d.end_masked[i];
      if (masked) return stride > 0 ? (c == 0 ? 0 : dim) : (c == 0 ? dim - 1 : -1);
      const int64_t fwd = x < 0 ? x + dim : x;
      return stride > 0 ? std::clamp<int64_t>(fwd, 0, dim) : std::clamp<int64_t>(fwd, -1, dim - 1);
    };
    const int64_t b = canonical(d.begin[i], 0);
    const int64_t e = canonical(d.end[i], 1);
    r.begin[i] = b;
    r.end[i] = e;
    const int64_t length = e - b;
    int64_t size;
    if (length == 0 || ((length < 0) != (stride < 0))) {
      size = 0;
    } else {
      size = length / stride + (length % stride != 0 ? 1 : 0);
    }
    processing[i] = size;
    if (!(stride == 1 && b == 0 && e == dim)) identity = false;
  }
  r.processing = PartialTensorShape(processing);
  std::vector<int64_t> final_dims;
  for (int g : d.gather) {
    if (g == kNewAxis) {
      final_dims.push_back(1);
      identity = false;
    } else if (g >= 0) {
      final_dims.push_back(processing[g]);
    }
  }
  r.final = PartialTensorShape(final_dims);
  r.is_identity = identity;
  return r;
}

}  // namespace towerflow
