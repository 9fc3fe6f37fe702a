#include "framework/tensor_print.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/type_dispatch.h"

namespace towerflow {
namespace {

// TF's number text (FloatToBuffer / DoubleToBuffer): %g with digits10
// significant digits, or max_digits10 when that does not read back as the
// value (so 0.1f is "0.1" and 1/3.f is "0.333333343").
template <typename F>
std::string RoundTripString(F v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*g", std::numeric_limits<F>::digits10, v);
  const F back = std::is_same_v<F, float> ? std::strtof(buf, nullptr) : std::strtod(buf, nullptr);
  if (back != v) std::snprintf(buf, sizeof(buf), "%.*g", std::numeric_limits<F>::max_digits10, v);
  return buf;
}

template <typename T>
std::string ElementString(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return absl::StrCat("\"", absl::Utf8SafeCEscape(v), "\"");
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, double>) {
    return RoundTripString(v);
  } else if constexpr (std::is_floating_point_v<T> || kIsFloat16<T>) {
    return RoundTripString(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return absl::StrCat(static_cast<int>(v));
  } else {
    return absl::StrCat(v);
  }
}

// Between two entries of dimension `dim`: a space in the last dimension,
// else a newline per dimension below it and an indent past the brackets.
void AppendSpacing(int dim, int num_dims, std::string* out) {
  if (dim == num_dims - 1) {
    out->push_back(' ');
    return;
  }
  out->append(num_dims - dim - 1, '\n');
  out->append(dim + 1, ' ');
}

// Dimension `dim` of the block at `offset`: its first and last `ends`
// entries, with "..." between when there are more.
template <typename T>
void AppendDim(const T* data, absl::Span<const int64_t> shape, int dim, int64_t ends,
               int64_t offset, std::string* out) {
  const int num_dims = static_cast<int>(shape.size());
  if (dim == num_dims) {
    out->append(ElementString(data[offset]));
    return;
  }
  out->push_back('[');
  const int64_t count = shape[dim];
  int64_t stride = 1;
  for (int d = dim + 1; d < num_dims; ++d) stride *= shape[d];
  for (int64_t i = 0; i < std::min(ends, count); ++i) {
    if (i > 0) AppendSpacing(dim, num_dims, out);
    AppendDim(data, shape, dim + 1, ends, offset + stride * i, out);
  }
  if (count > 2 * ends) {
    AppendSpacing(dim, num_dims, out);
    out->append("...");
  }
  for (int64_t i = std::max(ends, count - ends); i < count; ++i) {
    AppendSpacing(dim, num_dims, out);
    AppendDim(data, shape, dim + 1, ends, offset + stride * i, out);
  }
  out->push_back(']');
}

template <typename T>
std::string Summarize(const T* data, const TensorShape& shape, int64_t limit) {
  std::string out;
  if (shape.dims() == 0) {
    if (limit > 0) out = ElementString(data[0]);
    if (limit < shape.num_elements()) out.append("...");
    return out;
  }
  AppendDim(data, shape.dim_sizes(), 0, limit, 0, &out);
  return out;
}

}  // namespace

std::string SummarizeForPrint(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.NumElements();
  const int64_t limit = max_entries < 0 ? n : std::min(max_entries, n);
  std::string out;
  if (t.dtype() == DT_STRING) return Summarize(t.data<std::string>(), t.shape(), limit);
  bool done = false;
  VisitNumberType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, complex64> && !std::is_same_v<T, complex128>) {
      out = Summarize(t.data<T>(), t.shape(), limit);
      done = true;
    }
  });
  if (done) return out;
  // As TF: complex numbers, handles and variants are a flat list ("?" for
  // a complex number, "<...>" for the others).
  if (t.dims() > 0) out = "[";
  for (int64_t i = 0; i < limit; ++i) {
    if (i > 0) out.push_back(' ');
    if (t.dtype() == DT_VARIANT) {
      absl::StrAppend(&out, "<", t.data<Variant>()[i].DebugString(), ">");
    } else if (t.dtype() == DT_RESOURCE) {
      absl::StrAppend(&out, "<", t.data<ResourceHandle>()[i].DebugString(), ">");
    } else {
      out.push_back('?');
    }
  }
  if (limit < n) out.append("...");
  if (t.dims() > 0) out.push_back(']');
  return out;
}

}  // namespace towerflow
