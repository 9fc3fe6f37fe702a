// gpu_conformance_test's cases for comparisons, LogicalAnd and LogicalOr,
// int64 sums and selects, and for the int32 shape arithmetic that GPU nodes
// run on the host (a reduction's gradient
// normalises its axes with comparisons, selects, a one-hot and sums; a
// loss's weighting counts with ranges and ones).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/testing/conformance_cases.h"

namespace towerflow {
namespace conformance {

void AddLogicCases(std::vector<Case>* cases) {
  const char* compares[] = {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"};
  const std::string int32 = "attr { key: 'T' value { type: DT_INT32 } }";
  for (const char* op : compares) {
    // Ties (exact values), broadcasting, a scalar side, and nothing.
    cases->push_back({absl::StrCat(op, "_ties"),
                      op,
                      kFloat,
                      {Values({2, 3}, {1, -2, 3, 0, 5, 5}, "DT_FLOAT"),
                       Values({2, 3}, {1, 2, -3, 0, 4, 6}, "DT_FLOAT")}});
    cases->push_back({absl::StrCat(op, "_bcast"), op, kFloat, {Floats({4, 1, 5}), Floats({3, 1})}});
    cases->push_back({absl::StrCat(op, "_scalar"), op, kFloat, {Floats({9}), Floats({})}});
    cases->push_back({absl::StrCat(op, "_empty"), op, kFloat, {Floats({0, 3}), Floats({3})}});
    cases->push_back({absl::StrCat(op, "_int32"), op, int32, {Ints({6, -7, 8, 3}), Ints({3})}});
  }
  // A loss scale's step logic: its flags, and its count of good steps.
  for (const char* op : {"LogicalAnd", "LogicalOr"}) {
    cases->push_back(
        {absl::StrCat(op, "_bcast"),
         op,
         "",
         {Values({2, 3}, {1, 0, 1, 0, 1, 1}, "DT_BOOL"), Values({3}, {1, 1, 0}, "DT_BOOL")}});
    cases->push_back({absl::StrCat(op, "_scalar"),
                      op,
                      "",
                      {Values({}, {1}, "DT_BOOL"), Values({}, {0}, "DT_BOOL")}});
  }
  const std::string int64 = "attr { key: 'T' value { type: DT_INT64 } }";
  for (const char* op : {"Add", "AddV2"}) {
    cases->push_back({absl::StrCat(op, "_int64"),
                      op,
                      int64,
                      {Values({2, 3}, {1, -2, 2000000000, 0, 7, -9}, "DT_INT64"),
                       Values({3}, {5, 2000000000, 11}, "DT_INT64")}});
  }
  for (const char* type : {"DT_FLOAT", "DT_INT32"}) {
    const std::string t = absl::StrCat("attr { key: 'T' value { type: ", type, " } }");
    const bool is_float = std::string(type) == "DT_FLOAT";
    const auto branch = [is_float](std::vector<int64_t> shape, int salt) {
      if (is_float) return Floats(std::move(shape));
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<int32_t> values;
      for (int64_t i = 0; i < n; ++i) values.push_back(static_cast<int32_t>(i * 7 + salt) % 11);
      return Values(std::move(shape), std::move(values), "DT_INT32");
    };
    const auto bools = [](std::vector<int64_t> shape, std::vector<int32_t> values) {
      return Values(std::move(shape), std::move(values), "DT_BOOL");
    };
    const std::string suffix = is_float ? "" : "_int32";
    cases->push_back({"Select_same" + suffix,
                      "Select",
                      t,
                      {bools({2, 3}, {1, 0, 0, 1, 1, 0}), branch({2, 3}, 1), branch({2, 3}, 2)}});
    cases->push_back({"Select_rows" + suffix,
                      "Select",
                      t,
                      {bools({3}, {0, 1, 0}), branch({3, 2, 2}, 1), branch({3, 2, 2}, 2)}});
    cases->push_back({"Select_scalar" + suffix,
                      "Select",
                      t,
                      {bools({}, {1}), branch({4, 3}, 1), branch({4, 3}, 2)}});
    cases->push_back({"SelectV2_same" + suffix,
                      "SelectV2",
                      t,
                      {bools({5}, {1, 1, 0, 1, 0}), branch({5}, 1), branch({5}, 2)}});
    cases->push_back({"SelectV2_bcast" + suffix,
                      "SelectV2",
                      t,
                      {bools({4, 1}, {1, 0, 0, 1}), branch({1, 5}, 1), branch({4, 5}, 2)}});
    cases->push_back({"SelectV2_scalars" + suffix,
                      "SelectV2",
                      t,
                      {bools({}, {0}), branch({3, 2}, 1), branch({2}, 2)}});
    cases->push_back({"SelectV2_empty" + suffix,
                      "SelectV2",
                      t,
                      {bools({0, 1}, {}), branch({0, 3}, 1), branch({3}, 2)}});
  }
  // The int32 reductions, one-hot, range and ones of a reduction's gradient.
  const std::string reduce = absl::StrCat(int32, " attr { key: 'Tidx' value { type: DT_INT32 } }");
  for (const char* op : {"Sum", "Prod", "Max", "Min"}) {
    cases->push_back({absl::StrCat(op, "_int32"),
                      op,
                      reduce,
                      {Values({2, 3}, {4, -1, 3, 2, 0, 5}, "DT_INT32"), Ints({0})}});
  }
  cases->push_back({"OneHot_int32",
                    "OneHot",
                    absl::StrCat(int32, " attr { key: 'TI' value { type: DT_INT32 } }"),
                    {Ints({2, 0, -1, 3}), IntScalar(3), IntScalar(1), IntScalar(0)}});
  cases->push_back({"Range_int32",
                    "Range",
                    "attr { key: 'Tidx' value { type: DT_INT32 } }",
                    {IntScalar(1), IntScalar(10), IntScalar(3)}});
  cases->push_back({"OnesLike_int32", "OnesLike", int32, {Ints({4, 5, 6})}});
  cases->push_back({"ZerosLike_int32", "ZerosLike", int32, {Ints({4, 5, 6})}});
}

}  // namespace conformance
}  // namespace towerflow
