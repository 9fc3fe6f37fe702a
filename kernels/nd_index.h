// Indexing by N-d index rows (GatherNd, ScatterNd, TensorScatterUpdate),
// resolved on the host and shared by the CPU kernels and their GPU twins so
// that both refuse the same inputs with the same errors.
//
// indices [..., D] address the first D dims of a tensor T (params, or the
// output): index row r = (i0, ..., iD-1) names the slice T[i0, ..., iD-1]
// of slice_size = prod(T.shape[D:]) elements, at flat offset
// sum(ik * stride_k) * slice_size. Every row is checked against T's shape
// first, so a bad index is an error naming it and nothing is written.
#ifndef TOWERFLOW_KERNELS_ND_INDEX_H_
#define TOWERFLOW_KERNELS_ND_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/kernel.h"
#include "framework/tensor.h"

namespace towerflow {

// `indices` (int32 or int64, in host memory) resolved against a tensor of
// dims `dims`: the slice offset of each index row, in slices.
struct NdIndex {
  int64_t rows = 0;        // index rows: prod(indices.shape[:-1])
  int64_t depth = 0;       // D: indices.shape[-1]
  int64_t slice_size = 1;  // elements per slice: prod(dims[D:])
  std::vector<int64_t> offsets;
  std::vector<int64_t> batch_dims;  // indices.shape[:-1]
};

// TF's bad_indices_policy attr: "", "DEFAULT" and "ERROR" make an index row
// outside the tensor an error (the CPU's default); "IGNORE" skips the row
// (a gather gives zeros for it, a scatter writes nothing).
enum class BadIndices { kError, kIgnore };
// InvalidArgument ("Unknown bad indices handling attribute: X") for any
// other value.
absl::StatusOr<BadIndices> ParseBadIndices(const std::string& policy);
// The kernel's policy from its NodeDef (kError when the attr is absent).
absl::StatusOr<BadIndices> BadIndicesOf(const KernelConstruction& c);
// The offset ResolveNd gives a row it ignores.
inline constexpr int64_t kIgnoredRow = -1;

// InvalidArgument for indices of rank 0, a depth past dims' rank, or (with
// BadIndices::kError) a row outside dims ("indices[2] = [0, 7] does not
// index into params shape [3,5]"); `what` names the indexed tensor ("":
// TF's bare "shape [3,5]", ScatterNdNonAliasingAdd's). With
// kIgnore such a row's offset is kIgnoredRow.
absl::StatusOr<NdIndex> ResolveNd(const Tensor& indices, absl::Span<const int64_t> dims,
                                  const char* what, BadIndices bad = BadIndices::kError);

// GatherNd's output dims: indices.shape[:-1] + dims[D:].
std::vector<int64_t> GatherNdDims(const NdIndex& nd, absl::Span<const int64_t> dims);

// InvalidArgument unless updates has shape indices.shape[:-1] + dims[D:].
absl::Status CheckNdUpdates(const NdIndex& nd, const Tensor& indices, const Tensor& updates,
                            absl::Span<const int64_t> dims);

// The row scatters into a variable (ScatterAdd, ScatterSub, ScatterUpdate
// and their resource forms): each element of `indices` (any shape, int32 or
// int64, in host memory) picks a row of `params`' first dim, so the rows
// resolve as an NdIndex of depth 1 over params. `updates` has shape
// indices.shape + params.shape[1:], or is a scalar that every picked
// element takes. InvalidArgument (TF's messages) for a scalar params,
// updates of another shape, or an index outside [0, params.shape[0]).
absl::StatusOr<NdIndex> ResolveScatter(const Tensor& indices, const Tensor& updates,
                                       const TensorShape& params);

// The index rows grouped by the slice they address, for a device that
// gives each slice to one thread (kernels/gpu/launch.h LaunchScatterRows):
// [offsets of the groups' slices, starts (groups + 1), rows in index order
// within each group], *groups set to the number of groups.
std::vector<int64_t> GroupRowsBySlice(const NdIndex& nd, int64_t* groups);

// The rows of a sparse optimizer update (SparseApplyMomentum, ...): grad's
// row i updates var's row indices[i], so indices (int32 or int64, host
// memory) is a vector and grad has shape [len(indices)] + var.shape[1:].
// InvalidArgument (TF's messages) otherwise, or for an index outside
// [0, var.shape[0]).
absl::StatusOr<NdIndex> ResolveSparseApply(const Tensor& indices, const Tensor& grad,
                                           const TensorShape& var);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_ND_INDEX_H_
