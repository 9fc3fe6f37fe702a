#include "kernels/cpu/sparse_util.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace sparse {

absl::Status Validate(const Tensor& indices, const Tensor& values, const Tensor& shape) {
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sparse indices must be rank 2 but is rank ", indices.dims()));
  }
  if (values.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sparse values must be rank 1 but is rank ", values.dims()));
  }
  if (shape.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sparse shape must be rank 1 but is rank ", shape.dims()));
  }
  if (indices.dim_size(0) != values.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat("Number of elements in indices (",
                                                   indices.dim_size(0), ") and values (",
                                                   values.dim_size(0), ") do not match"));
  }
  if (indices.dim_size(1) != shape.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat("Index rank (", indices.dim_size(1),
                                                   ") and shape rank (", shape.dim_size(0),
                                                   ") do not match"));
  }
  return absl::OkStatus();
}

absl::Status CheckOperandRanks(const Tensor& indices, const Tensor& values, const Tensor& shape,
                               absl::string_view prefix) {
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input ", prefix,
        "indices should be a matrix but received shape: ", indices.shape().DebugString()));
  }
  if (values.dims() != 1 || shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Inputs ", prefix, "values and ", prefix, "shape should be vectors but received shapes: ",
        values.shape().DebugString(), " and ", shape.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status CheckInBounds(const Tensor& indices, const Tensor& shape) {
  const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
  const int64_t* idx = indices.data<int64_t>();
  const int64_t* dims = shape.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* row = idx + i * rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (row[d] < 0 || row[d] >= dims[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Sparse index tuple indices[", i, ", :] = [",
            absl::StrJoin(absl::MakeConstSpan(row, rank), ", "), "] is out of bounds"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIndicesValid(const Tensor& indices, absl::Span<const int64_t> dims) {
  const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
  const int64_t* idx = indices.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* row = idx + i * rank;
    const auto where = [&] {
      return absl::StrCat("indices[", i, "] = [",
                          absl::StrJoin(absl::MakeConstSpan(row, rank), ","), "]");
    };
    for (int64_t d = 0; d < rank; ++d) {
      if (row[d] < 0 || row[d] >= dims[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), " is out of bounds: need 0 <= index < [", absl::StrJoin(dims, ","), "]"));
      }
    }
    const int order = i == 0 ? 1 : CompareRows(row, row - rank, rank);
    if (order == 0) return absl::InvalidArgumentError(absl::StrCat(where(), " is repeated"));
    if (order < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(),
                       " is out of order. Many sparse ops require sorted indices.\n"
                       "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n"));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> CanonicalOrder(const Tensor& indices) {
  const int64_t rank = indices.dim_size(1);
  const int64_t* idx = indices.data<int64_t>();
  std::vector<int64_t> order(indices.dim_size(0));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return CompareRows(idx + a * rank, idx + b * rank, rank) < 0;
  });
  return order;
}

absl::Status TakeValues(absl::string_view op, const Tensor& values, absl::Span<const int64_t> from,
                        Tensor* out) {
  if (values.dtype() == DT_STRING) {
    const std::string* src = values.data<std::string>();
    std::string* dst = out->data<std::string>();
    for (size_t i = 0; i < from.size(); ++i) dst[i] = src[from[i]];
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize(op, values.dtype()));
  const char* src = static_cast<const char*>(values.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  for (size_t i = 0; i < from.size(); ++i) {
    std::memcpy(dst + i * elem, src + from[i] * elem, elem);
  }
  return absl::OkStatus();
}

void TakeRows(const Tensor& indices, absl::Span<const int64_t> rows,
              absl::Span<const int64_t> shift, Tensor* out) {
  const int64_t rank = indices.dim_size(1);
  const int64_t* src = indices.data<int64_t>();
  int64_t* dst = out->data<int64_t>();
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t d = 0; d < rank; ++d) {
      const uint64_t by = shift.empty() ? 0 : static_cast<uint64_t>(shift[d]);
      dst[i * rank + d] = static_cast<int64_t>(static_cast<uint64_t>(src[rows[i] * rank + d]) - by);
    }
  }
}

}  // namespace sparse
}  // namespace towerflow
