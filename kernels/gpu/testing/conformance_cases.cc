// The elementwise, reduction, matrix, convolution, normalisation, pooling
// and shape cases of the GPU conformance suite, and every family's table
// (conformance_cases.h).
#include "kernels/gpu/testing/conformance_cases.h"

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace conformance {

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {7}, {3, 5, 17}, {1000}};
  for (const char* op :
       {"Neg", "Abs", "Square", "Exp", "Tanh", "Sigmoid", "Relu", "Softplus", "Selu", "Erf"}) {
    for (const auto& s : shapes) {
      cases.push_back({absl::StrCat(op, "_", s.size()), op, kFloat, {Floats(s)}});
    }
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) {
    cases.push_back({op, op, kFloat, {Floats({4, 33}, 0.1f, 3)}});
  }
  cases.push_back({"Floor", "Floor", kFloat, {Floats({5, 9}, -5, 5)}});
  cases.push_back({"Pow", "Pow", kFloat, {Floats({6, 7}, 0.1f, 3), Floats({7}, -2, 2)}});
  cases.push_back({"FloorDiv", "FloorDiv", kFloat, {Floats({6, 7}, -9, 9), Floats({}, 0.5f, 2)}});
  // Mod takes the sign of x, FloorMod that of y; divisors of both signs.
  for (const char* op : {"Mod", "FloorMod"}) {
    cases.push_back(
        {absl::StrCat(op, "_bcast"), op, kFloat, {Floats({6, 7}, -9, 9), Floats({7}, 0.5f, 2)}});
    cases.push_back({absl::StrCat(op, "_negative"),
                     op,
                     kFloat,
                     {Floats({5, 4}, -9, 9), Floats({}, -2, -0.5f)}});
  }
  for (const char* op :
       {"AddV2", "Sub", "Mul", "RealDiv", "DivNoNan", "Maximum", "Minimum", "SquaredDifference"}) {
    cases.push_back(
        {absl::StrCat(op, "_same"), op, kFloat, {Floats({5, 7}), Floats({5, 7}, 0.5f)}});
    cases.push_back(
        {absl::StrCat(op, "_bcast"), op, kFloat, {Floats({4, 1, 5}), Floats({3, 1}, 0.5f)}});
    cases.push_back({absl::StrCat(op, "_scalar"), op, kFloat, {Floats({9}), Floats({}, 0.5f)}});
    cases.push_back({absl::StrCat(op, "_empty"), op, kFloat, {Floats({0, 3}), Floats({3}, 0.5f)}});
  }
  for (const char* op : {"ReluGrad", "TanhGrad", "SigmoidGrad", "SoftplusGrad", "SeluGrad"}) {
    cases.push_back({op, op, kFloat, {Floats({6, 11}), Floats({6, 11})}});
  }
  cases.push_back({"AddN",
                   "AddN",
                   absl::StrCat(kFloat, " attr { key: 'N' value { i: 3 } }"),
                   {Floats({2, 9}), Floats({2, 9}), Floats({2, 9})}});
  cases.push_back({"BiasAdd_NHWC", "BiasAdd", kFloat, {Floats({2, 3, 4, 5}), Floats({5})}});
  cases.push_back({"BiasAdd_NCHW",
                   "BiasAdd",
                   absl::StrCat(kFloat, " attr { key: 'data_format' value { s: 'NCHW' } }"),
                   {Floats({2, 3, 4, 5}), Floats({3})}});
  cases.push_back({"BiasAddGrad_NHWC", "BiasAddGrad", kFloat, {Floats({8, 3, 3, 16})}});
  cases.push_back({"BiasAddGrad_NCHW",
                   "BiasAddGrad",
                   absl::StrCat(kFloat, " attr { key: 'data_format' value { s: 'NCHW' } }"),
                   {Floats({2, 16, 3, 3})}});
  const std::string reduce_attrs =
      absl::StrCat(kFloat, " attr { key: 'Tidx' value { type: DT_INT32 } }");
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    cases.push_back({absl::StrCat(op, "_rows"), op, reduce_attrs, {Floats({37, 300}), Ints({1})}});
    cases.push_back({absl::StrCat(op, "_cols"), op, reduce_attrs, {Floats({300, 37}), Ints({0})}});
    cases.push_back(
        {absl::StrCat(op, "_0_2"), op, reduce_attrs, {Floats({3, 4, 5}), Ints({0, -1})}});
    cases.push_back(
        {absl::StrCat(op, "_all"), op, reduce_attrs, {Floats({2, 3, 4}), Ints({0, 1, 2})}});
    cases.push_back({absl::StrCat(op, "_none"), op, reduce_attrs, {Floats({2, 3}), Ints({})}});
    cases.push_back({absl::StrCat(op, "_keep"),
                     op,
                     absl::StrCat(reduce_attrs, " attr { key: 'keep_dims' value { b: true } }"),
                     {Floats({4, 6}), Ints({1})}});
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    cases.push_back({op,
                     op,
                     absl::StrCat(kFloat, " attr { key: 'output_type' value { type: DT_INT64 } }"),
                     {Floats({5, 10, 3}), IntScalar(1)}});
  }
  cases.push_back({"Softmax", "Softmax", kFloat, {Floats({5, 1000}, -20, 20)}});
  cases.push_back({"LogSoftmax", "LogSoftmax", kFloat, {Floats({7, 10})}});
  cases.push_back({"SoftmaxXent",
                   "SoftmaxCrossEntropyWithLogits",
                   kFloat,
                   {Floats({8, 10}), Floats({8, 10}, 0, 1)},
                   2});
  cases.push_back({"SparseSoftmaxXent",
                   "SparseSoftmaxCrossEntropyWithLogits",
                   absl::StrCat(kFloat, " attr { key: 'Tlabels' value { type: DT_INT32 } }"),
                   {Floats({4, 10}), Ints({0, 9, 3, 3})},
                   2});
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const std::vector<int64_t> a =
          ta ? std::vector<int64_t>{33, 17} : std::vector<int64_t>{17, 33};
      const std::vector<int64_t> b = tb ? std::vector<int64_t>{9, 33} : std::vector<int64_t>{33, 9};
      cases.push_back(
          {absl::StrCat("MatMul_", ta, tb),
           "MatMul",
           absl::StrCat(kFloat, " attr { key: 'transpose_a' value { b: ", ta ? "true" : "false",
                        " } } attr { key: 'transpose_b' value { b: ", tb ? "true" : "false",
                        " } }"),
           {Floats(a), Floats(b)},
           1,
           1e-4});
    }
  }
  cases.push_back({"MatMul_empty_k", "MatMul", kFloat, {Floats({3, 0}), Floats({0, 4})}});
  const auto adj = [](bool x, bool y) {
    return absl::StrCat(kFloat, " attr { key: 'adj_x' value { b: ", x ? "true" : "false",
                        " } } attr { key: 'adj_y' value { b: ", y ? "true" : "false", " } }");
  };
  // Same batch (strided), one side broadcast (stride 0), and a general
  // broadcast ([2,1] x [3]: pointer arrays).
  cases.push_back({"BatchMatMulV2_same",
                   "BatchMatMulV2",
                   adj(false, false),
                   {Floats({4, 5, 6}), Floats({4, 6, 3})},
                   1,
                   1e-4});
  cases.push_back({"BatchMatMulV2_adj_bcast",
                   "BatchMatMulV2",
                   adj(true, true),
                   {Floats({3, 6, 5}), Floats({4, 6})},
                   1,
                   1e-4});
  cases.push_back({"BatchMatMulV2_general",
                   "BatchMatMulV2",
                   adj(false, false),
                   {Floats({2, 1, 4, 5}), Floats({3, 5, 2})},
                   1,
                   1e-4});
  cases.push_back({"BatchMatMul_empty_k",
                   "BatchMatMul",
                   adj(false, false),
                   {Floats({2, 3, 0}), Floats({2, 0, 4})}});
  cases.push_back({"Cast_float_int64",
                   "Cast",
                   "attr { key: 'SrcT' value { type: DT_FLOAT } } attr { key: 'DstT' value { type: "
                   "DT_INT64 } }",
                   {Floats({13}, -50, 50)}});
  cases.push_back({"Fill",
                   "Fill",
                   absl::StrCat(kFloat, " attr { key: 'index_type' value { type: DT_INT32 } }"),
                   {Ints({3, 0, 2}), Floats({})}});
  // Convolutions: symmetric and asymmetric (SAME, stride 2) padding, NCHW,
  // dilation, 1x1; each pass. cuDNN computes in NCHW, so the NHWC cases
  // check the transposes around it too.
  const auto conv_attrs = [](const char* padding, int stride, bool nchw, int dilation) {
    const std::string s = nchw ? absl::StrCat("i: 1 i: 1 i: ", stride, " i: ", stride)
                               : absl::StrCat("i: 1 i: ", stride, " i: ", stride, " i: 1");
    const std::string d = nchw ? absl::StrCat("i: 1 i: 1 i: ", dilation, " i: ", dilation)
                               : absl::StrCat("i: 1 i: ", dilation, " i: ", dilation, " i: 1");
    return absl::StrCat(kFloat, " attr { key: 'padding' value { s: '", padding,
                        "' } } attr { key: 'strides' value { list { ", s,
                        " } } } attr { key: 'dilations' value { list { ", d,
                        " } } } attr { key: 'data_format' value { s: '", nchw ? "NCHW" : "NHWC",
                        "' } }");
  };
  struct ConvCase {
    const char* name;
    const char* padding;
    int stride;
    bool nchw;
    int dilation;
    std::vector<int64_t> in, filter, out;  // out: the forward output's shape
  };
  const ConvCase convs[] = {
      {"same5x5", "SAME", 1, false, 1, {2, 12, 12, 3}, {5, 5, 3, 8}, {2, 12, 12, 8}},
      {"same_s2", "SAME", 2, false, 1, {2, 9, 10, 4}, {3, 3, 4, 5}, {2, 5, 5, 5}},
      {"valid", "VALID", 1, false, 1, {1, 7, 6, 2}, {3, 2, 2, 3}, {1, 5, 5, 3}},
      {"nchw_s2", "SAME", 2, true, 1, {2, 3, 8, 8}, {3, 3, 3, 4}, {2, 4, 4, 4}},
      {"dilated", "SAME", 1, false, 2, {1, 9, 9, 2}, {3, 3, 2, 3}, {1, 9, 9, 3}},
      {"pointwise", "VALID", 1, false, 1, {3, 4, 4, 16}, {1, 1, 16, 7}, {3, 4, 4, 7}},
      // ResNet's downsampling layer: an even input, stride 2, one row and
      // column of padding at the bottom and right only.
      {"resnet_s2", "SAME", 2, false, 1, {4, 16, 16, 16}, {3, 3, 16, 32}, {4, 8, 8, 32}},
  };
  for (const ConvCase& c : convs) {
    const std::string attrs = conv_attrs(c.padding, c.stride, c.nchw, c.dilation);
    const auto ints = [](const std::vector<int64_t>& v) {
      return Ints(std::vector<int32_t>(v.begin(), v.end()));
    };
    cases.push_back({absl::StrCat("Conv2D_", c.name),
                     "Conv2D",
                     attrs,
                     {Floats(c.in), Floats(c.filter)},
                     1,
                     1e-4});
    cases.push_back({absl::StrCat("Conv2DBackpropInput_", c.name),
                     "Conv2DBackpropInput",
                     attrs,
                     {ints(c.in), Floats(c.filter), Floats(c.out)},
                     1,
                     1e-4});
    cases.push_back({absl::StrCat("Conv2DBackpropFilter_", c.name),
                     "Conv2DBackpropFilter",
                     attrs,
                     {Floats(c.in), ints(c.filter), Floats(c.out)},
                     1,
                     1e-4});
    // half and bfloat16 twins (tensor cores against the CPU's float32,
    // rounded once): a few units in the last place of the largest output,
    // as cuDNN's kernels may round partial sums to the 16-bit type
    // (Case::of_largest).
    for (const auto& [dtype, name, tolerance] :
         {std::tuple{"DT_HALF", "half", 4e-3}, std::tuple{"DT_BFLOAT16", "bfloat16", 3e-2}}) {
      std::string low = attrs;
      low.replace(low.find("DT_FLOAT"), 8, dtype);
      cases.push_back({absl::StrCat("Conv2D_", c.name, "_", name),
                       "Conv2D",
                       low,
                       {Floats16(c.in, dtype), Floats16(c.filter, dtype)},
                       1,
                       tolerance,
                       /*of_largest=*/true});
      cases.push_back({absl::StrCat("Conv2DBackpropInput_", c.name, "_", name),
                       "Conv2DBackpropInput",
                       low,
                       {ints(c.in), Floats16(c.filter, dtype), Floats16(c.out, dtype)},
                       1,
                       tolerance,
                       /*of_largest=*/true});
      cases.push_back({absl::StrCat("Conv2DBackpropFilter_", c.name, "_", name),
                       "Conv2DBackpropFilter",
                       low,
                       {Floats16(c.in, dtype), ints(c.filter), Floats16(c.out, dtype)},
                       1,
                       tolerance,
                       /*of_largest=*/true});
    }
  }
  // Pooling: the CIFAR-10 model's 3x3 stride-2 SAME window on 24x24 (one
  // padded row below, none above), VALID, NCHW.
  const auto pool_attrs = [](const char* padding, int k, int stride, bool nchw) {
    const auto four = [nchw](int v) {
      return nchw ? absl::StrCat("i: 1 i: 1 i: ", v, " i: ", v)
                  : absl::StrCat("i: 1 i: ", v, " i: ", v, " i: 1");
    };
    return absl::StrCat(kFloat, " attr { key: 'padding' value { s: '", padding,
                        "' } } attr { key: 'ksize' value { list { ", four(k),
                        " } } } attr { key: 'strides' value { list { ", four(stride),
                        " } } } attr { key: 'data_format' value { s: '", nchw ? "NCHW" : "NHWC",
                        "' } }");
  };
  const std::string cifar_pool = pool_attrs("SAME", 3, 2, false);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    cases.push_back({absl::StrCat(op, "_cifar"), op, cifar_pool, {Floats({2, 24, 24, 8})}});
    cases.push_back(
        {absl::StrCat(op, "_valid"), op, pool_attrs("VALID", 2, 2, false), {Floats({1, 7, 9, 3})}});
    cases.push_back(
        {absl::StrCat(op, "_nchw"), op, pool_attrs("SAME", 3, 2, true), {Floats({2, 3, 11, 10})}});
  }
  cases.push_back({"MaxPoolGrad_cifar",
                   "MaxPoolGrad",
                   cifar_pool,
                   {Floats({2, 24, 24, 8}), Floats({2, 12, 12, 8}), Floats({2, 12, 12, 8})}});
  cases.push_back({"MaxPoolGrad_nchw",
                   "MaxPoolGrad",
                   pool_attrs("SAME", 3, 2, true),
                   {Floats({2, 3, 11, 10}), Floats({2, 3, 6, 5}), Floats({2, 3, 6, 5})}});
  cases.push_back({"AvgPoolGrad_cifar",
                   "AvgPoolGrad",
                   cifar_pool,
                   {Ints({2, 24, 24, 8}), Floats({2, 12, 12, 8})}});
  cases.push_back({"AvgPoolGrad_valid",
                   "AvgPoolGrad",
                   pool_attrs("VALID", 2, 2, false),
                   {Ints({1, 7, 9, 3}), Floats({1, 3, 4, 3})}});
  // LRN (the CIFAR-10 model's parameters, and a radius wider than the depth).
  const auto lrn = [](int radius) {
    return absl::StrCat(kFloat, " attr { key: 'depth_radius' value { i: ", radius,
                        " } } attr { key: 'bias' value { f: 1.0 } } attr { key: 'alpha' value { "
                        "f: 0.00011 } } attr { key: 'beta' value { f: 0.75 } }");
  };
  cases.push_back({"LRN_cifar", "LRN", lrn(4), {Floats({2, 5, 5, 64})}});
  cases.push_back({"LRN_wide", "LRN", lrn(9), {Floats({1, 2, 3, 7})}});
  cases.push_back({"LRNGrad_cifar",
                   "LRNGrad",
                   lrn(4),
                   {Floats({2, 5, 5, 64}), Floats({2, 5, 5, 64}), Floats({2, 5, 5, 64})},
                   1,
                   1e-4});
  // Batch norm: training and inference, NHWC and NCHW, V3 with a running
  // average; every output (the reserve spaces hold mean and biased variance
  // on both devices).
  const auto bn = [](bool training, bool nchw, const char* extra) {
    return absl::StrCat(kFloat,
                        " attr { key: 'epsilon' value { f: 0.001 } } attr { key: "
                        "'is_training' value { b: ",
                        training ? "true" : "false", " } } attr { key: 'data_format' value { s: '",
                        nchw ? "NCHW" : "NHWC", "' } } ", extra);
  };
  const char* v3 =
      "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'exponential_avg_factor' value { f: "
      "0.25 } }";
  const auto stats = [](int64_t c) {
    return std::vector<Input>{Floats({c}), Floats({c}), Floats({c}), Floats({c}, 0.5f, 2)};
  };
  const auto with = [](Input x, std::vector<Input> rest) {
    rest.insert(rest.begin(), std::move(x));
    return rest;
  };
  cases.push_back({"FusedBatchNorm_train", "FusedBatchNorm", bn(true, false, ""),
                   with(Floats({4, 5, 5, 6}), stats(6)), 5, 1e-4});
  cases.push_back({"FusedBatchNorm_train_nchw", "FusedBatchNorm", bn(true, true, ""),
                   with(Floats({4, 6, 5, 5}), stats(6)), 5, 1e-4});
  cases.push_back({"FusedBatchNorm_infer", "FusedBatchNorm", bn(false, false, ""),
                   with(Floats({3, 4, 4, 5}), stats(5)), 5, 1e-4});
  cases.push_back({"FusedBatchNormV3_running", "FusedBatchNormV3", bn(true, false, v3),
                   with(Floats({2, 3, 3, 4}), stats(4)), 5, 1e-4});
  cases.push_back({"FusedBatchNormV2_train", "FusedBatchNormV2",
                   bn(true, false, "attr { key: 'U' value { type: DT_FLOAT } }"),
                   with(Floats({2, 3, 3, 4}), stats(4)), 5, 1e-4});
  // NHWC training runs on our own kernels: many blocks of rows (ResNet's
  // 16 channels), several channel tiles (1100 channels), a tile that is no
  // power of 2 (3 channels), and data far from 0 (the variance's
  // cancellation).
  cases.push_back({"FusedBatchNorm_train_rows", "FusedBatchNorm", bn(true, false, ""),
                   with(Floats({64, 16, 16, 16}), stats(16)), 5, 1e-4});
  cases.push_back({"FusedBatchNorm_train_wide", "FusedBatchNorm", bn(true, false, ""),
                   with(Floats({2, 3, 2, 1100}), stats(1100)), 5, 1e-4});
  cases.push_back({"FusedBatchNorm_train_odd", "FusedBatchNorm", bn(true, false, ""),
                   with(Floats({5, 7, 9, 3}), stats(3)), 5, 1e-4});
  cases.push_back({"FusedBatchNorm_train_offset", "FusedBatchNorm", bn(true, false, ""),
                   with(Floats({8, 6, 6, 5}, 99, 101), stats(5)), 5, 1e-4});
  const auto grad_inputs = [](std::vector<int64_t> shape, int64_t c) {
    return std::vector<Input>{Floats(shape), Floats(shape), Floats({c}), Floats({c}),
                              Floats({c}, 0.5f, 2)};
  };
  cases.push_back({"FusedBatchNormGrad_train", "FusedBatchNormGrad", bn(true, false, ""),
                   grad_inputs({4, 5, 5, 6}, 6), 3, 1e-4});
  cases.push_back({"FusedBatchNormGrad_train_nchw", "FusedBatchNormGrad", bn(true, true, ""),
                   grad_inputs({4, 6, 5, 5}, 6), 3, 1e-4});
  cases.push_back({"FusedBatchNormGrad_infer", "FusedBatchNormGrad", bn(false, true, ""),
                   grad_inputs({3, 5, 4, 4}, 5), 3, 1e-4});
  cases.push_back({"FusedBatchNormGrad_train_rows", "FusedBatchNormGrad", bn(true, false, ""),
                   grad_inputs({64, 16, 16, 16}, 16), 3, 1e-4});
  cases.push_back({"FusedBatchNormGrad_train_wide", "FusedBatchNormGrad", bn(true, false, ""),
                   grad_inputs({2, 3, 2, 1100}, 1100), 3, 1e-4});
  cases.push_back({"FusedBatchNormGrad_train_odd", "FusedBatchNormGrad", bn(true, false, ""),
                   grad_inputs({5, 7, 9, 3}, 3), 3, 1e-4});
  cases.push_back({"FusedBatchNormGradV2_train", "FusedBatchNormGradV2",
                   bn(true, false, "attr { key: 'U' value { type: DT_FLOAT } }"),
                   grad_inputs({4, 5, 5, 6}, 6), 3, 1e-4});
  // Seeded random ops draw the same Philox streams on both devices.
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    cases.push_back({op,
                     op,
                     "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'T' value { type: "
                     "DT_INT32 } } attr { key: 'seed' value { i: 7 } } attr { key: 'seed2' value "
                     "{ i: 3 } }",
                     {Ints({40, 50})}});
  }
  cases.push_back({"L2Loss", "L2Loss", kFloat, {Floats({5, 5, 3, 64})}, 1, 1e-4});
  cases.push_back({"L2Loss_empty", "L2Loss", kFloat, {Floats({0, 3})}});
  const std::string broadcast_to =
      absl::StrCat(kFloat, " attr { key: 'Tidx' value { type: DT_INT32 } }");
  cases.push_back({"BroadcastTo", "BroadcastTo", broadcast_to, {Floats({3, 1}), Ints({2, 3, 4})}});
  cases.push_back(
      {"BroadcastTo_same", "BroadcastTo", broadcast_to, {Floats({2, 2}), Ints({2, 2})}});
  cases.push_back({"ZerosLike", "ZerosLike", kFloat, {Floats({4, 4})}});
  cases.push_back({"OnesLike", "OnesLike", kFloat, {Floats({4, 4})}});
  // half and bfloat16 twins: the GPU's tensor-core GEMMs against the CPU's
  // float32 ones, both accumulating in float32 and rounding once, so they
  // agree to about one unit in the last place (half 11 bits, bfloat16 8).
  for (const auto& [dtype, name, tolerance] :
       {std::tuple{"DT_HALF", "half", 2e-3}, std::tuple{"DT_BFLOAT16", "bfloat16", 1.6e-2}}) {
    const std::string t = absl::StrCat("attr { key: 'T' value { type: ", dtype, " } }");
    for (bool tb : {false, true}) {
      cases.push_back(
          {absl::StrCat("MatMul_", name, tb ? "_tb" : ""),
           "MatMul",
           absl::StrCat(t, " attr { key: 'transpose_b' value { b: ", tb ? "true" : "false", " } }"),
           {Floats16({7, 24}, dtype),
            Floats16(tb ? std::vector<int64_t>{9, 24} : std::vector<int64_t>{24, 9}, dtype)},
           1,
           tolerance});
    }
    const std::string adj = absl::StrCat(
        t, " attr { key: 'adj_x' value { b: false } } attr { key: 'adj_y' value { b: false } }");
    cases.push_back({absl::StrCat("BatchMatMulV2_", name, "_same"),
                     "BatchMatMulV2",
                     adj,
                     {Floats16({4, 5, 16}, dtype), Floats16({4, 16, 3}, dtype)},
                     1,
                     tolerance});
    cases.push_back({absl::StrCat("BatchMatMulV2_", name, "_general"),
                     "BatchMatMulV2",
                     adj,
                     {Floats16({2, 1, 4, 16}, dtype), Floats16({3, 16, 2}, dtype)},
                     1,
                     tolerance});
    // Casts: rounding to nearest even both ways is exact against the CPU's.
    cases.push_back({absl::StrCat("Cast_float_", name),
                     "Cast",
                     absl::StrCat("attr { key: 'SrcT' value { type: DT_FLOAT } } attr { key: "
                                  "'DstT' value { type: ",
                                  dtype, " } }"),
                     {Floats({5, 7}, -70000, 70000)},
                     1,
                     0});
    cases.push_back({absl::StrCat("Cast_", name, "_float"),
                     "Cast",
                     absl::StrCat("attr { key: 'SrcT' value { type: ", dtype,
                                  " } } attr { key: 'DstT' value { type: DT_FLOAT } }"),
                     {Floats16({5, 7}, dtype)},
                     1,
                     0});
  }
  AddRearrangeCases(&cases);
  AddModelOpCases(&cases);
  AddLogicCases(&cases);
  AddFloat16Twins(&cases);
  return cases;
}

}  // namespace conformance
}  // namespace towerflow
