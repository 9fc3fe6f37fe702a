#include "testing/tensor_testing.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/type_dispatch.h"

namespace towerflow {
namespace {

// "[1, 0, 2]": the position of flat index `flat` in `shape`, row-major.
std::string Position(const TensorShape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    const int64_t size = shape.dim_size(d);
    index[d] = size == 0 ? 0 : flat % size;
    flat = size == 0 ? 0 : flat / size;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return absl::StrCat("\"", v, "\"");
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return absl::StrCat("(", v.real(), ",", v.imag(), ")");
  } else if constexpr (std::is_integral_v<T>) {
    return absl::StrCat(static_cast<int64_t>(v));
  } else if constexpr (kIsFloat16<T>) {
    return absl::StrCat(static_cast<float>(v));
  } else {
    return absl::StrCat(v);
  }
}

template <typename T>
bool IsNan(const T& v) {
  if constexpr (kIsFloatingPoint<T>) {
    return std::isnan(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return false;
  }
}

template <typename T>
double AsDouble(const T& v) {
  if constexpr (kIsFloat16<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

// How far `got` is from `want` (0 when equal), and the tolerance allowed.
template <typename T>
bool Close(const T& got, const T& want, bool exact, double atol, double rtol, double* distance,
           double* tolerance) {
  *distance = 0;
  *tolerance = 0;
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    return got == want;
  } else {
    if (IsNan(got) || IsNan(want)) return IsNan(got) && IsNan(want);
    if (exact) return got == want;
    if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      *distance = std::abs(std::complex<double>(got) - std::complex<double>(want));
      *tolerance = atol + rtol * std::abs(std::complex<double>(want));
    } else {
      const double g = AsDouble(got), w = AsDouble(want);
      *distance = std::fabs(g - w);
      *tolerance = atol + rtol * std::fabs(w);
    }
    // Infinities match only themselves (their distance is NaN or inf).
    if (std::isinf(*distance) || std::isnan(*distance)) return got == want;
    return *distance <= *tolerance;
  }
}

template <typename T>
std::string CompareValues(const Tensor& got, const Tensor& expected, bool exact, double atol,
                          double rtol) {
  const T* g = got.data<T>();
  const T* e = expected.data<T>();
  const int64_t n = expected.NumElements();
  int64_t differing = 0;
  std::string first;
  for (int64_t i = 0; i < n; ++i) {
    double distance, tolerance;
    if (Close(g[i], e[i], exact, atol, rtol, &distance, &tolerance)) continue;
    if (differing++ > 0) continue;
    first = absl::StrCat("the first at ", Position(expected.shape(), i), " (flat ", i,
                         "): ", Show(g[i]), " where ", Show(e[i]), " was expected");
    if (!exact && distance > 0 && !std::isinf(distance) && !std::isnan(distance)) {
      absl::StrAppend(&first, " (|difference| ", distance, " > tolerance ", tolerance, ")");
    }
  }
  if (differing == 0) return "";
  return absl::StrCat(differing, " of ", n, " values differ; ", first);
}

}  // namespace

std::string TensorDifference(const Tensor& got, const Tensor& expected, bool exact, double atol,
                             double rtol) {
  if (got.dtype() != expected.dtype()) {
    return absl::StrCat("dtype ", DataTypeString(got.dtype()), " where ",
                        DataTypeString(expected.dtype()), " was expected");
  }
  if (got.shape() != expected.shape()) {
    return absl::StrCat("shape ", got.shape().DebugString(), " where ",
                        expected.shape().DebugString(), " was expected");
  }
  std::string difference;
  if (got.dtype() == DT_STRING) {
    return CompareValues<std::string>(got, expected, true, 0, 0);
  }
  if (VisitNumberType(got.dtype(), [&](auto zero) {
        difference = CompareValues<decltype(zero)>(got, expected, exact, atol, rtol);
      })) {
    return difference;
  }
  if (got.dtype() == DT_RESOURCE || got.dtype() == DT_VARIANT) {
    return absl::StrCat("values of dtype ", DataTypeString(got.dtype()), " cannot be compared");
  }
  // Other dtypes (quantized): their bytes.
  const size_t bytes = expected.TotalBytes();
  if (got.TotalBytes() == bytes &&
      (bytes == 0 || std::memcmp(got.raw_data(), expected.raw_data(), bytes) == 0)) {
    return "";
  }
  return absl::StrCat("the bytes of the ", DataTypeString(got.dtype()), " values differ");
}

}  // namespace towerflow
