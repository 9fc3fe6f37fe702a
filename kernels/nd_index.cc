#include "kernels/nd_index.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {

absl::StatusOr<BadIndices> ParseBadIndices(const std::string& policy) {
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") return BadIndices::kError;
  if (policy == "IGNORE") return BadIndices::kIgnore;
  return absl::InvalidArgumentError(
      absl::StrCat("Unknown bad indices handling attribute: ", policy));
}

absl::StatusOr<BadIndices> BadIndicesOf(const KernelConstruction& c) {
  if (!c.def().attr().contains("bad_indices_policy")) return BadIndices::kError;
  std::string policy;
  TW_RETURN_IF_ERROR(c.GetAttr("bad_indices_policy", &policy));
  return ParseBadIndices(policy);
}

absl::StatusOr<NdIndex> ResolveNd(const Tensor& indices, absl::Span<const int64_t> dims,
                                  const char* what, BadIndices bad) {
  if (indices.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices must be at least 1-D, got ", indices.shape().DebugString()));
  }
  NdIndex nd;
  nd.depth = indices.dim_size(indices.dims() - 1);
  if (nd.depth > static_cast<int64_t>(dims.size())) {
    const char* name = *what != '\0' ? what : "input";
    return absl::InvalidArgumentError(absl::StrCat(
        "indices.shape[-1] must be <= ", name, ".rank, but saw indices shape ",
        indices.shape().DebugString(), " and ", name, " shape [", absl::StrJoin(dims, ","), "]"));
  }
  nd.batch_dims.assign(indices.shape().dim_sizes().begin(), indices.shape().dim_sizes().end() - 1);
  nd.rows = 1;
  for (int64_t d : nd.batch_dims) nd.rows *= d;
  for (size_t d = nd.depth; d < dims.size(); ++d) nd.slice_size *= dims[d];
  nd.offsets.resize(nd.rows);
  for (int64_t r = 0; r < nd.rows; ++r) {
    int64_t offset = 0;
    for (int64_t k = 0; k < nd.depth; ++k) {
      const int64_t i = IntAt(indices, r * nd.depth + k);
      if ((i < 0 || i >= dims[k]) && bad == BadIndices::kIgnore) {
        offset = kIgnoredRow;
        break;
      }
      if (i < 0 || i >= dims[k]) {
        std::vector<int64_t> row(nd.depth);
        for (int64_t j = 0; j < nd.depth; ++j) row[j] = IntAt(indices, r * nd.depth + j);
        return absl::InvalidArgumentError(
            absl::StrCat("indices[", r, "] = [", absl::StrJoin(row, ", "), "] does not index into ",
                         what, *what == '\0' ? "" : " ", "shape [", absl::StrJoin(dims, ","), "]"));
      }
      offset = offset * dims[k] + i;
    }
    nd.offsets[r] = offset;
  }
  return nd;
}

std::vector<int64_t> GatherNdDims(const NdIndex& nd, absl::Span<const int64_t> dims) {
  std::vector<int64_t> out = nd.batch_dims;
  out.insert(out.end(), dims.begin() + nd.depth, dims.end());
  return out;
}

absl::Status CheckNdUpdates(const NdIndex& nd, const Tensor& indices, const Tensor& updates,
                            absl::Span<const int64_t> dims) {
  const TensorShape expected(GatherNdDims(nd, dims));
  if (updates.shape() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("updates must have shape ", expected.DebugString(), " for indices ",
                     indices.shape().DebugString(), " into [", absl::StrJoin(dims, ","), "], got ",
                     updates.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<NdIndex> ResolveScatter(const Tensor& indices, const Tensor& updates,
                                       const TensorShape& params) {
  if (params.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("params must be at least 1-D, got shape ", params.DebugString()));
  }
  bool shapes_agree = updates.dims() == indices.dims() + params.dims() - 1;
  for (int d = 0; shapes_agree && d < indices.dims(); ++d) {
    shapes_agree = updates.dim_size(d) == indices.dim_size(d);
  }
  for (int d = 1; shapes_agree && d < params.dims(); ++d) {
    shapes_agree = updates.dim_size(indices.dims() + d - 1) == params.dim_size(d);
  }
  if (!shapes_agree && updates.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got "
        "updates.shape ",
        updates.shape().DebugString(), ", indices.shape ", indices.shape().DebugString(),
        ", params.shape ", params.DebugString()));
  }
  NdIndex nd;
  nd.depth = 1;
  nd.rows = indices.NumElements();
  nd.slice_size = DimProduct(params, 1, params.dims());
  nd.batch_dims.assign(indices.shape().dim_sizes().begin(), indices.shape().dim_sizes().end());
  nd.offsets.resize(nd.rows);
  const int64_t limit = params.dim_size(0);
  for (int64_t r = 0; r < nd.rows; ++r) {
    const int64_t i = IntAt(indices, r);
    if (i < 0 || i >= limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices[", r, "] = ", i, " is not in [0, ", limit, ")"));
    }
    nd.offsets[r] = i;
  }
  return nd;
}

std::vector<int64_t> GroupRowsBySlice(const NdIndex& nd, int64_t* groups) {
  std::vector<int64_t> order(nd.rows);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return nd.offsets[a] < nd.offsets[b]; });
  std::vector<int64_t> offsets, starts;
  for (int64_t j = 0; j < nd.rows; ++j) {
    if (j == 0 || nd.offsets[order[j]] != nd.offsets[order[j - 1]]) {
      offsets.push_back(nd.offsets[order[j]]);
      starts.push_back(j);
    }
  }
  starts.push_back(nd.rows);
  *groups = static_cast<int64_t>(offsets.size());
  offsets.insert(offsets.end(), starts.begin(), starts.end());
  offsets.insert(offsets.end(), order.begin(), order.end());
  return offsets;
}

absl::StatusOr<NdIndex> ResolveSparseApply(const Tensor& indices, const Tensor& grad,
                                           const TensorShape& var) {
  if (var.dims() < 1) return absl::InvalidArgumentError("var must be at least 1 dimensional");
  if (indices.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices must be one-dimensional, got shape ", indices.shape().DebugString()));
  }
  if (grad.dims() != var.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("var and grad must have the same rank, got ",
                                                   var.DebugString(), " and ",
                                                   grad.shape().DebugString()));
  }
  for (int d = 1; d < var.dims(); ++d) {
    if (var.dim_size(d) != grad.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat("var and grad must match in dimension ", d,
                                                     ", got ", var.DebugString(), " and ",
                                                     grad.shape().DebugString()));
    }
  }
  if (grad.dim_size(0) != indices.dim_size(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("grad must be the same size as indices in the first dimension, got ",
                     grad.shape().DebugString(), " and ", indices.shape().DebugString()));
  }
  NdIndex nd;
  nd.depth = 1;
  nd.rows = indices.NumElements();
  nd.slice_size = DimProduct(var, 1, var.dims());
  nd.batch_dims = {nd.rows};
  nd.offsets.resize(nd.rows);
  for (int64_t i = 0; i < nd.rows; ++i) {
    const int64_t index = IntAt(indices, i);
    if (index < 0 || index >= var.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat("Index ", index, " at offset ", i,
                                                     " in indices is out of range [0, ",
                                                     var.dim_size(0), ")"));
    }
    nd.offsets[i] = index;
  }
  return nd;
}

}  // namespace towerflow
