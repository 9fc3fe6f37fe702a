#include "kernels/gpu/testing/conformance_harness.h"

#include <algorithm>
#include <cmath>
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
    const char* field = dtype == "DT_FLOAT"  ? "float_val"
                        : dtype == "DT_BOOL" ? "bool_val"
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

::testing::AssertionResult Agree(const Tensor& gpu, const Tensor& cpu, double tolerance) {
  if (gpu.dtype() != cpu.dtype() || gpu.shape() != cpu.shape()) {
    return ::testing::AssertionFailure()
           << "GPU " << gpu.DebugString() << " vs CPU " << cpu.DebugString();
  }
  for (int64_t i = 0; i < cpu.NumElements(); ++i) {
    double g, c;
    if (cpu.dtype() == DT_FLOAT) {
      g = gpu.data<float>()[i], c = cpu.data<float>()[i];
    } else if (cpu.dtype() == DT_INT64) {
      g = static_cast<double>(gpu.data<int64_t>()[i]),
      c = static_cast<double>(cpu.data<int64_t>()[i]);
    } else if (cpu.dtype() == DT_INT32) {
      g = gpu.data<int32_t>()[i], c = cpu.data<int32_t>()[i];
    } else if (cpu.dtype() == DT_BOOL) {
      g = gpu.data<bool>()[i], c = cpu.data<bool>()[i];
    } else if (cpu.dtype() == DT_HALF) {
      g = static_cast<float>(gpu.data<half>()[i]), c = static_cast<float>(cpu.data<half>()[i]);
    } else if (cpu.dtype() == DT_BFLOAT16) {
      g = static_cast<float>(gpu.data<bfloat16>()[i]),
      c = static_cast<float>(cpu.data<bfloat16>()[i]);
    } else {
      return ::testing::AssertionFailure() << "unexpected dtype " << DataTypeString(cpu.dtype());
    }
    if (g == c || (std::isnan(g) && std::isnan(c))) continue;  // infinities too
    if (!(std::abs(g - c) <= tolerance * std::max(1.0, std::abs(c)))) {
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
