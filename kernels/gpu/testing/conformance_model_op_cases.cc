// gpu_conformance_test's cases for the ops the control-flow issue added:
// indices with duplicates, padding on both sides, blocks of 2 and 3, every
// resize coordinate mode, diagonals read and written, rows partitioned and
// stitched, Where and TopKV2 on ties.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/testing/conformance_cases.h"

namespace towerflow {
namespace conformance {

void AddModelOpCases(std::vector<Case>* cases) {
  const std::string leaky = absl::StrCat(kFloat, " attr { key: 'alpha' value { f: 0.1 } }");
  cases->push_back({"LeakyRelu", "LeakyRelu", leaky, {Floats({7, 9})}});
  cases->push_back({"LeakyReluGrad", "LeakyReluGrad", leaky, {Floats({7, 9}), Floats({7, 9})}});
  const auto depthwise = [](const char* padding, int stride, bool nchw, int dilation) {
    const auto four = [nchw](int v) {
      return nchw ? absl::StrCat("i: 1 i: 1 i: ", v, " i: ", v)
                  : absl::StrCat("i: 1 i: ", v, " i: ", v, " i: 1");
    };
    return absl::StrCat(kFloat, " attr { key: 'padding' value { s: '", padding,
                        "' } } attr { key: 'strides' value { list { ", four(stride),
                        " } } } attr { key: 'dilations' value { list { ", four(dilation),
                        " } } } attr { key: 'data_format' value { s: '", nchw ? "NCHW" : "NHWC",
                        "' } }");
  };
  struct DepthwiseCase {
    const char* name;
    std::string attrs;
    std::vector<int64_t> in, filter, out;
  };
  const DepthwiseCase depthwise_cases[] = {
      {"same_m2", depthwise("SAME", 1, false, 1), {2, 7, 8, 3}, {3, 3, 3, 2}, {2, 7, 8, 6}},
      {"same_s2", depthwise("SAME", 2, false, 1), {1, 9, 9, 4}, {3, 3, 4, 1}, {1, 5, 5, 4}},
      {"valid_nchw", depthwise("VALID", 1, true, 1), {2, 3, 6, 5}, {2, 2, 3, 3}, {2, 9, 5, 4}},
      {"dilated", depthwise("SAME", 1, false, 2), {1, 8, 8, 2}, {3, 3, 2, 2}, {1, 8, 8, 4}},
  };
  const auto ints = [](const std::vector<int64_t>& v) {
    return Ints(std::vector<int32_t>(v.begin(), v.end()));
  };
  for (const DepthwiseCase& c : depthwise_cases) {
    cases->push_back({absl::StrCat("DepthwiseConv2dNative_", c.name),
                      "DepthwiseConv2dNative",
                      c.attrs,
                      {Floats(c.in), Floats(c.filter)},
                      1,
                      1e-4});
    cases->push_back({absl::StrCat("DepthwiseConv2dNativeBackpropInput_", c.name),
                      "DepthwiseConv2dNativeBackpropInput",
                      c.attrs,
                      {ints(c.in), Floats(c.filter), Floats(c.out)},
                      1,
                      1e-4});
    cases->push_back({absl::StrCat("DepthwiseConv2dNativeBackpropFilter_", c.name),
                      "DepthwiseConv2dNativeBackpropFilter",
                      c.attrs,
                      {Floats(c.in), ints(c.filter), Floats(c.out)},
                      1,
                      1e-4});
  }
  const std::string gather_nd =
      "attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: "
      "DT_INT32 } }";
  cases->push_back({"GatherNd_slices",
                    "GatherNd",
                    gather_nd,
                    {Floats({4, 3, 5}), Input{{3, 2}, true, {3, 2, 0, 0, 3, 2}}}});
  cases->push_back({"GatherNd_elements",
                    "GatherNd",
                    gather_nd,
                    {Floats({4, 3}), Input{{2, 2, 2}, true, {0, 1, 3, 2, 1, 1, 0, 0}}}});
  const std::string scatter_nd =
      absl::StrCat(kFloat, " attr { key: 'Tindices' value { type: DT_INT32 } }");
  cases->push_back({"ScatterNd_duplicates",
                    "ScatterNd",
                    scatter_nd,
                    {Input{{4, 1}, true, {1, 0, 1, 1}}, Floats({4, 5}), Ints({3, 5})}});
  cases->push_back({"TensorScatterUpdate_duplicates",
                    "TensorScatterUpdate",
                    scatter_nd,
                    {Floats({4, 3}), Input{{3, 1}, true, {2, 0, 2}}, Floats({3, 3})}});
  // Partition 2 gets no row; partitions of rank 2 route [3, 4] rows.
  cases->push_back({"DynamicPartition_rows",
                    "DynamicPartition",
                    absl::StrCat(kFloat, " attr { key: 'num_partitions' value { i: 3 } }"),
                    {Floats({2, 3, 4}), Input{{2, 3}, true, {1, 0, 1, 1, 0, 1}}},
                    3});
  // Merged row 3 written twice (the later data wins), row 4 never (zeros).
  cases->push_back(
      {"DynamicStitch_overlapping",
       "DynamicStitch",
       absl::StrCat(kFloat, " attr { key: 'N' value { i: 2 } }"),
       {Ints({0, 3}), Input{{2, 2}, true, {5, 1, 3, 2}}, Floats({2, 4}), Floats({2, 2, 4})}});
  // Where: zeros among the values (the row-major order of the rest), on
  // floats and bools; none at all.
  cases->push_back({"Where_float",
                    "Where",
                    kFloat,
                    {Values({3, 4}, {0, 1, 0, -2, 3, 0, 0, 0, 5, 6, 0, 7}, "DT_FLOAT")}});
  cases->push_back({"Where_bool_3d",
                    "Where",
                    "attr { key: 'T' value { type: DT_BOOL } }",
                    {Values({2, 3, 2}, {1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0}, "DT_BOOL")}});
  cases->push_back({"Where_none", "Where", kFloat, {Values({2, 2}, {0, 0, 0, 0}, "DT_FLOAT")}});
  // TopKV2: ties (the lower column first), many rows, k = n and k = 0.
  cases->push_back(
      {"TopKV2_ties",
       "TopKV2",
       kFloat,
       {Values({2, 6}, {3, 1, 3, 3, 0, -1, 2, 2, 5, 2, 5, 0}, "DT_FLOAT"), IntScalar(4)},
       2});
  cases->push_back({"TopKV2_rows", "TopKV2", kFloat, {Floats({5, 3, 40}), IntScalar(7)}, 2});
  cases->push_back({"TopKV2_all", "TopKV2", kFloat, {Floats({4, 9}), IntScalar(9)}, 2});
  cases->push_back({"TopKV2_none", "TopKV2", kFloat, {Floats({4, 9}), IntScalar(0)}, 2});
  const auto space_batch = [](const char* amounts) {
    return absl::StrCat(kFloat,
                        " attr { key: 'Tblock_shape' value { type: DT_INT32 } } attr { key: '",
                        amounts, "' value { type: DT_INT32 } }");
  };
  cases->push_back({"SpaceToBatchND_padded",
                    "SpaceToBatchND",
                    space_batch("Tpaddings"),
                    {Floats({2, 5, 4, 3}), Ints({2, 3}), Input{{2, 2}, true, {1, 0, 1, 1}}}});
  cases->push_back({"BatchToSpaceND_cropped",
                    "BatchToSpaceND",
                    space_batch("Tcrops"),
                    {Floats({12, 3, 2, 3}), Ints({2, 3}), Input{{2, 2}, true, {1, 0, 1, 1}}}});
  const auto block = [](int size) {
    return absl::StrCat(kFloat, " attr { key: 'block_size' value { i: ", size, " } }");
  };
  cases->push_back({"DepthToSpace_2", "DepthToSpace", block(2), {Floats({2, 3, 5, 12})}});
  cases->push_back({"DepthToSpace_3", "DepthToSpace", block(3), {Floats({1, 2, 3, 18})}});
  cases->push_back({"SpaceToDepth_2", "SpaceToDepth", block(2), {Floats({2, 6, 4, 3})}});
  cases->push_back({"SpaceToDepth_3", "SpaceToDepth", block(3), {Floats({1, 6, 9, 2})}});
  cases->push_back({"SpaceToDepth_empty", "SpaceToDepth", block(2), {Floats({0, 4, 4, 1})}});
  const auto resize = [](bool align, bool half) {
    return absl::StrCat(
        kFloat, " attr { key: 'align_corners' value { b: ", align ? "true" : "false",
        " } } attr { key: 'half_pixel_centers' value { ", "b: ", half ? "true" : "false", " } }");
  };
  for (const auto& [suffix, align, half] :
       {std::tuple{"", false, false}, std::tuple{"_align", true, false},
        std::tuple{"_half", false, true}}) {
    const std::string attrs = resize(align, half);
    cases->push_back({absl::StrCat("ResizeBilinear_up", suffix),
                      "ResizeBilinear",
                      attrs,
                      {Floats({2, 4, 5, 3}), Ints({7, 9})}});
    cases->push_back({absl::StrCat("ResizeBilinear_down", suffix),
                      "ResizeBilinear",
                      attrs,
                      {Floats({1, 9, 8, 2}), Ints({4, 3})}});
    cases->push_back({absl::StrCat("ResizeBilinearGrad", suffix),
                      "ResizeBilinearGrad",
                      attrs,
                      {Floats({2, 7, 9, 3}), Floats({2, 4, 5, 3})},
                      1,
                      1e-4});
    cases->push_back({absl::StrCat("ResizeNearestNeighbor", suffix),
                      "ResizeNearestNeighbor",
                      attrs,
                      {Floats({2, 4, 5, 3}), Ints({7, 3})}});
    cases->push_back({absl::StrCat("ResizeNearestNeighborGrad", suffix),
                      "ResizeNearestNeighborGrad",
                      attrs,
                      {Floats({2, 7, 3, 3}), Ints({4, 5})},
                      1,
                      1e-4});
  }
  const auto einsum = [](const char* equation, int n) {
    return absl::StrCat(kFloat, " attr { key: 'equation' value { s: '", equation,
                        "' } } attr { key: 'N' value { i: ", n, " } }");
  };
  cases->push_back({"Einsum_matmul",
                    "Einsum",
                    einsum("ij,jk->ik", 2),
                    {Floats({5, 6}), Floats({6, 7})},
                    1,
                    1e-4});
  cases->push_back({"Einsum_attention",
                    "Einsum",
                    einsum("aecd,abcd->acbe", 2),
                    {Floats({2, 3, 4, 5}), Floats({2, 6, 4, 5})},
                    1,
                    1e-4});
  cases->push_back({"Einsum_broadcast",
                    "Einsum",
                    einsum("...ij,...jk->...k", 2),
                    {Floats({2, 1, 3, 4}), Floats({5, 4, 2})},
                    1,
                    1e-4});
  cases->push_back(
      {"Einsum_one_input", "Einsum", einsum("abc->ca", 1), {Floats({3, 4, 5})}, 1, 1e-4});
  cases->push_back({"Einsum_diagonal", "Einsum", einsum("bii->ib", 1), {Floats({3, 4, 4})}});
  cases->push_back({"Einsum_trace", "Einsum", einsum("ii->", 1), {Floats({6, 6})}, 1, 1e-4});
  cases->push_back({"Einsum_inflate", "Einsum", einsum("ai->aii", 1), {Floats({2, 5})}});
  cases->push_back({"Einsum_diagonal_against_matrix",
                    "Einsum",
                    einsum("ij,jj->ji", 2),
                    {Floats({3, 4}), Floats({4, 4})},
                    1,
                    1e-4});
}

}  // namespace conformance
}  // namespace towerflow
