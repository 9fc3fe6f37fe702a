// Small helpers shared by CPU kernels: reading shape and axis arguments
// from int32/int64 tensors with checks, writing int vectors in a kernel's
// out_type, and typed views of raw storage for kernels that only move
// elements (dispatched by element size, so Transpose of float and int32
// share one instantiation).
#ifndef TOWERFLOW_KERNELS_KERNEL_UTIL_H_
#define TOWERFLOW_KERNELS_KERNEL_UTIL_H_

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/tensor.h"
#include "framework/tensor_views.h"

namespace towerflow {

// Element i of an int32 or int64 tensor. REQUIRES: i in range.
inline int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// The values of a rank-1 int32/int64 tensor ("shape must be a vector").
inline absl::StatusOr<std::vector<int64_t>> IntVector(const Tensor& t, absl::string_view what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector, got shape ", t.shape().DebugString()));
  }
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be int32 or int64, got ", DataTypeString(t.dtype())));
  }
  std::vector<int64_t> v(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) v[i] = IntAt(t, i);
  return v;
}

// The value of a one-element int32/int64 tensor of rank 0 (or rank 1 when
// `allow_vector` — several TF ops accept [1]).
inline absl::StatusOr<int64_t> IntScalar(const Tensor& t, absl::string_view what,
                                         bool allow_vector = false) {
  if (t.NumElements() != 1 || t.dims() > (allow_vector ? 1 : 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be int32 or int64, got ", DataTypeString(t.dtype())));
  }
  return IntAt(t, 0);
}

// `axis` in [-rank, rank) made non-negative; InvalidArgument otherwise.
inline absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank, absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range [", -rank, ", ", rank, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Writes `values` into `out` (int32 or int64); InvalidArgument when a value
// does not fit int32.
inline absl::Status WriteInts(const std::vector<int64_t>& values, Tensor* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (out->dtype() == DT_INT32) {
      if (values[i] > std::numeric_limits<int32_t>::max() ||
          values[i] < std::numeric_limits<int32_t>::min()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "value ", values[i], " does not fit the int32 output; use out_type=int64"));
      }
      out->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      out->data<int64_t>()[i] = values[i];
    }
  }
  return absl::OkStatus();
}

// Calls f(U{}) with an unsigned integer type as wide as one element of
// `dtype`, for kernels that only move elements; false for dtypes whose
// elements are not plain bytes (string, resource).
template <typename F>
bool VisitByElementSize(DataType dtype, F&& f) {
  if (dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT) return false;
  switch (TensorElementSize(dtype)) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// VisitByElementSize with complex128 for 16-byte elements, for CPU kernels
// (the GPU kernels are instantiated for the unsigned types only).
template <typename F>
bool VisitByElementSizeCpu(DataType dtype, F&& f) {
  if (dtype == DT_COMPLEX128) {
    f(complex128{});
    return true;
  }
  return VisitByElementSize(dtype, std::forward<F>(f));
}

// `t`'s elements viewed as U (same size as its dtype's elements).
template <typename U, int N>
TensorMap<U, N> RawMap(const Tensor& t, absl::Span<const int64_t> dims) {
  std::array<Eigen::DenseIndex, N> d;
  for (int i = 0; i < N; ++i) d[i] = dims[i];
  return TensorMap<U, N>(static_cast<U*>(t.raw_data()), d);
}
template <typename U>
U* RawData(const Tensor& t) {
  return static_cast<U*>(t.raw_data());
}

inline absl::Status UnsupportedDtype(absl::string_view op, DataType dtype) {
  return absl::UnimplementedError(
      absl::StrCat(op, " does not support elements of type ", DataTypeString(dtype)));
}

// Byte size of one element, for kernels that copy elements as bytes;
// strings and resources are not plain bytes (Unimplemented naming `op`).
inline absl::StatusOr<size_t> PlainElementSize(absl::string_view op, DataType dtype) {
  if (dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT) {
    return UnsupportedDtype(op, dtype);
  }
  return TensorElementSize(dtype);
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_KERNEL_UTIL_H_
