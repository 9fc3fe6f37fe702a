// half and bfloat16 twins of the float cases of the ops that mixed
// precision moves to 16 bits on a GPU (runtime/auto_mixed_precision.h): the
// elementwise maths, the biases, the pools and batch norm.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "kernels/gpu/testing/conformance_cases.h"

namespace towerflow {
namespace conformance {
namespace {

bool Twinned(const std::string& op) {
  static const auto* ops = new absl::flat_hash_set<std::string>{"Neg",
                                                                "Abs",
                                                                "Square",
                                                                "Exp",
                                                                "Tanh",
                                                                "Sigmoid",
                                                                "Relu",
                                                                "Softplus",
                                                                "Selu",
                                                                "Erf",
                                                                "Sqrt",
                                                                "Rsqrt",
                                                                "Log",
                                                                "Reciprocal",
                                                                "Floor",
                                                                "AddV2",
                                                                "Sub",
                                                                "Mul",
                                                                "RealDiv",
                                                                "DivNoNan",
                                                                "Maximum",
                                                                "Minimum",
                                                                "SquaredDifference",
                                                                "ReluGrad",
                                                                "TanhGrad",
                                                                "SigmoidGrad",
                                                                "SoftplusGrad",
                                                                "SeluGrad",
                                                                "AddN",
                                                                "BiasAdd",
                                                                "BiasAddGrad",
                                                                "MaxPool",
                                                                "AvgPool",
                                                                "MaxPoolGrad",
                                                                "AvgPoolGrad",
                                                                "LeakyRelu",
                                                                "LeakyReluGrad",
                                                                "ZerosLike",
                                                                "OnesLike",
                                                                "BroadcastTo",
                                                                "FusedBatchNorm",
                                                                "FusedBatchNormGrad"};
  return ops->contains(op);
}

// The twin of `c` in `dtype`: T becomes dtype and the random float inputs
// of type T are rounded to it. Batch norm runs as V3 (V1 is float only),
// whose statistics and parameters (type U) stay float32.
Case Twin(const Case& c, const char* dtype, const char* suffix, double tolerance) {
  Case t = c;
  t.name = absl::StrCat(c.name, "_", suffix);
  const std::string from = "type: DT_FLOAT";
  t.attrs.replace(t.attrs.find(from), from.size(), absl::StrCat("type: ", dtype));
  size_t typed = t.inputs.size();
  if (c.op == "FusedBatchNorm" || c.op == "FusedBatchNormGrad") {
    const bool grad = c.op == "FusedBatchNormGrad";
    t.op = absl::StrCat(c.op, "V3");
    absl::StrAppend(&t.attrs, " attr { key: 'U' value { type: DT_FLOAT } }");
    typed = grad ? 2 : 1;                       // y_backprop and x, or x
    if (grad) t.inputs.push_back(Floats({0}));  // reserve_space_3
  }
  for (size_t i = 0; i < typed; ++i) {
    if (!t.inputs[i].is_int) t.inputs[i].dtype = dtype;
  }
  t.tolerance = std::max(c.tolerance, tolerance);
  return t;
}

}  // namespace

void AddFloat16Twins(std::vector<Case>* cases) {
  const std::vector<Case> float_cases = *cases;
  // Both devices compute in float32 from the same 16-bit inputs and round
  // once, so results agree to a unit in the last place (half 2^-11,
  // bfloat16 2^-8, relative); AddN's GPU sum rounds after each addition,
  // as TF's does.
  for (const auto& [dtype, suffix, tolerance] :
       {std::tuple{"DT_HALF", "half", 2e-3}, std::tuple{"DT_BFLOAT16", "bfloat16", 1.6e-2}}) {
    for (const Case& c : float_cases) {
      if (!Twinned(c.op) || c.attrs.find("type: DT_FLOAT") == std::string::npos) continue;
      // Exact values given as floats (ties) have no 16-bit twin.
      if (std::any_of(c.inputs.begin(), c.inputs.end(), [](const Input& in) {
            return in.is_int && std::string(in.dtype) == "DT_FLOAT";
          })) {
        continue;
      }
      cases->push_back(Twin(c, dtype, suffix, tolerance));
    }
  }
}

}  // namespace conformance
}  // namespace towerflow
