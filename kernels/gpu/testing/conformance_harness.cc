#include "kernels/gpu/testing/conformance_harness.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/float16.h"

namespace towerflow {
namespace conformance {

std::string NodeText(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, const std::string& device,
                     const std::string& attrs) {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' device: '", device, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  return absl::StrCat(s, attrs, " }\n");
}

// A Const of the input's values on `device`: the CPU unless said (so both
// twins read one tensor).
std::string InputText(const std::string& name, const Input& in, std::mt19937* rng,
                      const std::string& device) {
  std::string dims;
  for (int64_t d : in.shape) absl::StrAppend(&dims, "dim { size: ", d, " } ");
  int64_t n = 1;
  for (int64_t d : in.shape) n *= d;
  std::string values;
  if (in.is_int) {
    const std::string dtype = in.dtype;
    const char* field = dtype == "DT_FLOAT"   ? "float_val"
                        : dtype == "DT_BOOL"  ? "bool_val"
                        : dtype == "DT_INT64" ? "int64_val"
                                              : "int_val";
    for (int32_t v : in.ints) {
      if (dtype == "DT_BOOL") {
        absl::StrAppend(&values, field, ": ", v != 0 ? "true" : "false", " ");
      } else {
        absl::StrAppend(&values, field, ": ", v, " ");
      }
    }
  } else {
    const std::string dtype = in.dtype;
    std::uniform_real_distribution<float> dist(in.lo, in.hi);
    for (int64_t i = 0; i < n; ++i) {
      const float v = dist(*rng);
      // 16-bit floats as TF writes them: their bits in half_val.
      if (dtype == "DT_HALF") {
        absl::StrAppend(&values, "half_val: ", Float16Bits(half(v)), " ");
      } else if (dtype == "DT_BFLOAT16") {
        absl::StrAppend(&values, "half_val: ", Float16Bits(bfloat16(v)), " ");
      } else {
        absl::StrAppend(&values, "float_val: ", v, " ");
      }
    }
  }
  const char* dtype = in.is_int || in.dtype != std::string("DT_INT32") ? in.dtype : "DT_FLOAT";
  return NodeText(name, "Const", {}, device,
                  absl::StrCat("attr { key: 'dtype' value { type: ", dtype,
                               " } } attr { key: 'value' value { tensor { dtype: ", dtype,
                               " tensor_shape { ", dims, "} ", values, "} } }"));
}

namespace {

// Element i of a float, int64, int32 or bool tensor, as a double.
std::optional<double> ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DT_FLOAT:
      return t.data<float>()[i];
    case DT_INT64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DT_INT32:
      return t.data<int32_t>()[i];
    case DT_BOOL:
      return t.data<bool>()[i];
    case DT_HALF:
      return static_cast<float>(t.data<half>()[i]);
    case DT_BFLOAT16:
      return static_cast<float>(t.data<bfloat16>()[i]);
    default:
      return std::nullopt;
  }
}

}  // namespace

::testing::AssertionResult Agree(const Tensor& gpu, const Tensor& cpu, double tolerance,
                                 bool of_largest) {
  if (gpu.dtype() != cpu.dtype() || gpu.shape() != cpu.shape()) {
    return ::testing::AssertionFailure()
           << "GPU " << gpu.DebugString() << " vs CPU " << cpu.DebugString();
  }
  double largest = 1;
  for (int64_t i = 0; of_largest && i < cpu.NumElements(); ++i) {
    const std::optional<double> c = ValueAt(cpu, i);
    if (c.has_value() && std::isfinite(*c)) largest = std::max(largest, std::abs(*c));
  }
  for (int64_t i = 0; i < cpu.NumElements(); ++i) {
    const std::optional<double> got = ValueAt(gpu, i), want = ValueAt(cpu, i);
    if (!got.has_value() || !want.has_value()) {
      return ::testing::AssertionFailure() << "unexpected dtype " << DataTypeString(cpu.dtype());
    }
    const double g = *got, c = *want;
    if (g == c || (std::isnan(g) && std::isnan(c))) continue;  // infinities too
    const double scale = of_largest ? largest : std::max(1.0, std::abs(c));
    if (!(std::abs(g - c) <= tolerance * scale)) {
      return ::testing::AssertionFailure() << "element " << i << ": GPU " << g << ", CPU " << c;
    }
  }
  return ::testing::AssertionSuccess();
}

Tensor RandomFloats(const Input& in, std::mt19937* rng) {
  Tensor t(DT_FLOAT, TensorShape(in.shape));
  std::uniform_real_distribution<float> dist(in.lo, in.hi);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(*rng);
  return t;
}

}  // namespace conformance
}  // namespace towerflow
