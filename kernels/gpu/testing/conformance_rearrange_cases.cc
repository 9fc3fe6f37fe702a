// gpu_conformance_test's cases for the ops that move elements without
// arithmetic: transposes, slices, tiles, reversals, pads, gathers and
// concatenations, with their int32 index inputs.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/testing/conformance_cases.h"

namespace towerflow {
namespace conformance {

// Transpose, Slice, StridedSlice, Tile, ReverseV2, Pad, GatherV2 (with and
// without batch_dims) and ConcatV2 (int32 index inputs).
void AddRearrangeCases(std::vector<Case>* cases) {
  const std::string index = absl::StrCat(kFloat, " attr { key: 'Index' value { type: DT_INT32 } }");
  const std::string perm = absl::StrCat(kFloat, " attr { key: 'Tperm' value { type: DT_INT32 } }");
  cases->push_back(
      {"Transpose_NHWC_NCHW", "Transpose", perm, {Floats({2, 5, 7, 3}), Ints({0, 3, 1, 2})}});
  cases->push_back({"Transpose_2d", "Transpose", perm, {Floats({33, 17}), Ints({1, 0})}});
  cases->push_back(
      {"Transpose_5d", "Transpose", perm, {Floats({2, 3, 1, 4, 5}), Ints({4, 2, 0, 3, 1})}});
  cases->push_back({"Transpose_ones", "Transpose", perm, {Floats({1, 6, 1}), Ints({2, 1, 0})}});
  cases->push_back({"Transpose_empty", "Transpose", perm, {Floats({0, 3}), Ints({1, 0})}});
  cases->push_back(
      {"Slice", "Slice", index, {Floats({5, 6, 7}), Ints({1, 0, 2}), Ints({3, -1, 4})}});
  cases->push_back({"Slice_empty", "Slice", index, {Floats({4, 3}), Ints({2, 1}), Ints({0, 2})}});
  // int32 shape arithmetic of GPU nodes, on the host (HostMemory).
  const std::string int32 = "attr { key: 'T' value { type: DT_INT32 } }";
  for (const char* op :
       {"AddV2", "Sub", "Mul", "FloorDiv", "Mod", "FloorMod", "Maximum", "Minimum"}) {
    cases->push_back({absl::StrCat(op, "_int32"), op, int32, {Ints({6, -7, 8}), Ints({3})}});
  }
  cases->push_back({"Cast_int32_float",
                    "Cast",
                    "attr { key: 'SrcT' value { type: DT_INT32 } } "
                    "attr { key: 'DstT' value { type: DT_FLOAT } }",
                    {Ints({3, -1, 40})}});
  // Shape arithmetic on the host for a GPU node (HostMemory throughout).
  cases->push_back({"BroadcastGradientArgs",
                    "BroadcastGradientArgs",
                    "attr { key: 'T' value { type: DT_INT32 } }",
                    {Ints({4, 1, 5}), Ints({3, 1})},
                    2});
  cases->push_back({"StridedSlice",
                    "StridedSlice",
                    index,
                    {Floats({6, 7, 8}), Ints({1, 6, 0}), Ints({5, 0, 8}), Ints({2, -2, 3})}});
  cases->push_back({"StridedSlice_shrink",
                    "StridedSlice",
                    absl::StrCat(index, " attr { key: 'shrink_axis_mask' value { i: 1 } }",
                                 " attr { key: 'end_mask' value { i: 2 } }"),
                    {Floats({4, 9}), Ints({2, 1}), Ints({3, 0}), Ints({1, 1})}});
  const std::string tile =
      absl::StrCat(kFloat, " attr { key: 'Tmultiples' value { type: DT_INT32 } }");
  cases->push_back({"Tile", "Tile", tile, {Floats({2, 3, 5}), Ints({3, 1, 2})}});
  cases->push_back({"Tile_zero", "Tile", tile, {Floats({2, 3}), Ints({0, 2})}});
  const std::string reverse =
      absl::StrCat(kFloat, " attr { key: 'Tidx' value { type: DT_INT32 } }");
  cases->push_back({"ReverseV2", "ReverseV2", reverse, {Floats({2, 3, 5}), Ints({0, 2})}});
  cases->push_back({"ReverseV2_negative_axis", "ReverseV2", reverse, {Floats({4, 3}), Ints({-1})}});
  cases->push_back({"ReverseV2_none", "ReverseV2", reverse, {Floats({3, 2}), Ints({})}});
  cases->push_back(
      {"ReverseV2_all", "ReverseV2", reverse, {Floats({2, 1, 3, 4}), Ints({3, 1, 0, 2})}});
  // Pack and Unpack along the first, a middle and the last axis; Split in
  // equal parts; SplitV with a size left to be worked out.
  for (int axis : {0, 1, -1}) {
    cases->push_back({absl::StrCat("Pack_axis", axis),
                      "Pack",
                      absl::StrCat(kFloat, " attr { key: 'N' value { i: 3 } } attr { key: 'axis' ",
                                   "value { i: ", axis, " } }"),
                      {Floats({2, 5}), Floats({2, 5}), Floats({2, 5})}});
    cases->push_back(
        {absl::StrCat("Unpack_axis", axis),
         "Unpack",
         absl::StrCat(kFloat, " attr { key: 'num' value { i: 3 } } attr { key: 'axis' ",
                      "value { i: ", axis, " } }"),
         {Floats({3, 3, 3})},
         3});
  }
  cases->push_back({"Split",
                    "Split",
                    absl::StrCat(kFloat, " attr { key: 'num_split' value { i: 3 } }"),
                    {IntScalar(1), Floats({2, 6, 4})},
                    3});
  cases->push_back({"SplitV",
                    "SplitV",
                    absl::StrCat(kFloat,
                                 " attr { key: 'num_split' value { i: 3 } } attr { key: 'Tlen' "
                                 "value { type: DT_INT32 } }"),
                    {Floats({3, 7}), Ints({2, -1, 4}), IntScalar(-1)},
                    3});
  // MirrorPad: both modes, each at its largest paddings, and the gradient
  // (where a small dim is hit from both sides and itself).
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    const bool reflect = std::string(mode) == "REFLECT";
    const std::string attrs =
        absl::StrCat(kFloat, " attr { key: 'Tpaddings' value { type: DT_INT32 } } attr { key: ",
                     "'mode' value { s: '", mode, "' } }");
    const int32_t most = reflect ? 2 : 3;  // a dim of 3
    cases->push_back({absl::StrCat("MirrorPad_", mode),
                      "MirrorPad",
                      attrs,
                      {Floats({3, 3, 4}), Values({3, 2}, {most, 1, 0, most, 2, 1}, "DT_INT32")}});
    cases->push_back(
        {absl::StrCat("MirrorPadGrad_", mode),
         "MirrorPadGrad",
         attrs,
         {Floats({3 + 2 * most, 4, 7}), Values({3, 2}, {most, most, 1, 0, 2, 1}, "DT_INT32")}});
  }
  const std::string pad =
      absl::StrCat(kFloat, " attr { key: 'Tpaddings' value { type: DT_INT32 } }");
  cases->push_back(
      {"Pad", "Pad", pad, {Floats({2, 3, 4}), Input{{3, 2}, true, {1, 0, 0, 2, 3, 1}}}});
  cases->push_back(
      {"PadV2", "PadV2", pad, {Floats({3, 5}), Input{{2, 2}, true, {0, 1, 2, 2}}, Floats({})}});
  cases->push_back(
      {"Pad_empty_input", "Pad", pad, {Floats({0, 2}), Input{{2, 2}, true, {1, 1, 0, 1}}}});
  const std::string gather =
      "attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: "
      "DT_INT32 } } attr { key: 'Taxis' value { type: DT_INT32 } }";
  cases->push_back({"GatherV2_axis0",
                    "GatherV2",
                    gather,
                    {Floats({5, 3}), Input{{2, 2}, true, {4, 0, 0, 2}}, IntScalar(0)}});
  cases->push_back(
      {"GatherV2_axis1", "GatherV2", gather, {Floats({2, 6, 3}), Ints({5, 1, 1}), IntScalar(-2)}});
  cases->push_back(
      {"GatherV2_no_indices", "GatherV2", gather, {Floats({4, 2}), Ints({}), IntScalar(0)}});
  // batch_dims 1, axis 2: params [2, 3, 5, 4] row (j, o) gathers with indices[j].
  cases->push_back({"GatherV2_batch_dims",
                    "GatherV2",
                    absl::StrCat(gather, " attr { key: 'batch_dims' value { i: 1 } }"),
                    {Floats({2, 3, 5, 4}), Input{{2, 3}, true, {4, 0, 4, 1, 2, 3}}, IntScalar(2)}});
  const auto concat = [](int n) {
    return absl::StrCat(kFloat, " attr { key: 'Tidx' value { type: DT_INT32 } }",
                        " attr { key: 'N' value { i: ", n, " } }");
  };
  cases->push_back({"ConcatV2_axis1",
                    "ConcatV2",
                    concat(3),
                    {Floats({4, 3, 5}), Floats({4, 1, 5}), Floats({4, 7, 5}), IntScalar(1)}});
  cases->push_back(
      {"ConcatV2_axis0", "ConcatV2", concat(2), {Floats({3, 9}), Floats({5, 9}), IntScalar(0)}});
  cases->push_back({"ConcatV2_last_with_empty",
                    "ConcatV2",
                    concat(3),
                    {Floats({6, 2}), Floats({6, 0}), Floats({6, 3}), IntScalar(-1)}});
}

}  // namespace conformance
}  // namespace towerflow
