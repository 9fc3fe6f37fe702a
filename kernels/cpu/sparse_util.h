// What the SparseTensor kernels share (kernels/cpu/sparse_tensor_ops.cc,
// sparse_binary_ops.cc): TF's checks of a SparseTensor's three tensors, with
// its messages, the row-major order of index rows, and moving values by a
// list of positions whatever their dtype.
#ifndef TOWERFLOW_KERNELS_CPU_SPARSE_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_SPARSE_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace towerflow {
namespace sparse {

// TF's SparseTensor::Create checks: indices a matrix, values and shape
// vectors, one value per index row, one shape entry per index column.
absl::Status Validate(const Tensor& indices, const Tensor& values, const Tensor& shape);

// TF's first checks of a SparseTensor operand whose inputs are named
// `prefix` + indices/values/shape ("sp_", "a_"): indices a matrix, values
// and shape vectors.
absl::Status CheckOperandRanks(const Tensor& indices, const Tensor& values, const Tensor& shape,
                               absl::string_view prefix);

// Every index row inside the dense shape ("Sparse index tuple indices[i, :]
// = [...] is out of bounds").
absl::Status CheckInBounds(const Tensor& indices, const Tensor& shape);

// TF's SparseTensor::IndicesValid: every index row inside `dims` and rows
// in strictly increasing row-major order ("indices[1] = [0,0] is out of
// order. Many sparse ops require sorted indices...", "... is repeated",
// "... is out of bounds: need 0 <= index < [3,4]"). REQUIRES: indices an
// int64 matrix with dims.size() columns.
absl::Status CheckIndicesValid(const Tensor& indices, absl::Span<const int64_t> dims);

// -1, 0 or 1 as index row a (of `rank` entries) comes before, equals or
// follows row b in row-major order.
inline int CompareRows(const int64_t* a, const int64_t* b, int64_t rank) {
  for (int64_t d = 0; d < rank; ++d) {
    if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
  }
  return 0;
}

// The positions of `indices`' rows in row-major order (a stable sort).
std::vector<int64_t> CanonicalOrder(const Tensor& indices);

// out[i] = values[from[i]] for any dtype but resources and variants, which
// are Unimplemented naming `op`; out is allocated by the caller.
absl::Status TakeValues(absl::string_view op, const Tensor& values, absl::Span<const int64_t> from,
                        Tensor* out);

// Writes into `out` ([rows.size(), rank] int64) the index rows of `indices`
// at `rows`, minus shift[d] in column d (empty: none); wrapping as unsigned,
// so a fuzzed index cannot overflow.
void TakeRows(const Tensor& indices, absl::Span<const int64_t> rows,
              absl::Span<const int64_t> shift, Tensor* out);

}  // namespace sparse
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_SPARSE_UTIL_H_
