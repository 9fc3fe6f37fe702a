// Every GPU kernel against its CPU twin: one graph holds each case twice,
// the node on /device:GPU:0 and its copy on /device:CPU:0, fed the same
// random inputs (seeded), including empty and odd shapes; the outputs must
// agree within the case's tolerance. The GPU allocator runs with guard
// bytes around every block, so a kernel writing past its output fails the
// suite. Skipped on machines without a GPU (and in CPU-only builds); the
// cases themselves run on two CPU devices everywhere.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/proto_io.h"
#include "framework/device.h"
#include "framework/tensor_float32.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/gpu/conformance_cases.h"
#include "runtime/session.h"
#include "tests/test_util.h"

#ifdef TOWERFLOW_CUDA
#include "framework/gpu/gpu_device.h"
#endif

namespace towerflow {
namespace {

using conformance::AddLogicCases;
using conformance::AddModelOpCases;
using conformance::AddRearrangeCases;
using conformance::Case;
using conformance::Floats;
using conformance::Input;
using conformance::Ints;
using conformance::IntScalar;
using conformance::kFloat;
using conformance::Values;

std::vector<Case> Cases() {
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
  AddRearrangeCases(&cases);
  AddModelOpCases(&cases);
  AddLogicCases(&cases);
  return cases;
}

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
                      const std::string& device = "/device:CPU:0") {
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
    std::uniform_real_distribution<float> dist(in.lo, in.hi);
    for (int64_t i = 0; i < n; ++i) absl::StrAppend(&values, "float_val: ", dist(*rng), " ");
  }
  const char* dtype = in.is_int ? in.dtype : "DT_FLOAT";
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
    } else {
      return ::testing::AssertionFailure() << "unexpected dtype " << DataTypeString(cpu.dtype());
    }
    if (std::isnan(g) && std::isnan(c)) continue;
    if (!(std::abs(g - c) <= tolerance * std::max(1.0, std::abs(c)))) {
      return ::testing::AssertionFailure() << "element " << i << ": GPU " << g << ", CPU " << c;
    }
  }
  return ::testing::AssertionSuccess();
}

// Guard violations (GPU blocks freed with a guard byte overwritten) since
// the last call; always 0 without CUDA.
int64_t NewGuardViolations() {
#ifdef TOWERFLOW_CUDA
  static int64_t seen = 0;
  const int64_t total = gpu::CachingGpuAllocator::TotalGuardViolations();
  const int64_t fresh = total - seen;
  seen = total;
  return fresh;
#else
  return 0;
#endif
}

// Runs every case on `device` and on /device:CPU:0 and compares. A case's
// device blocks are freed by the end of its run, so a kernel writing out of
// bounds is named by its case.
void CheckTwins(const SessionOptions& options, const std::string& device) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  std::mt19937 rng(301);
  std::string text;
  std::vector<Case> cases = Cases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    std::vector<std::string> inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs.push_back(absl::StrCat("in", k, "_", i));
      text += InputText(inputs.back(), c.inputs[i], &rng);
    }
    text += NodeText(absl::StrCat("gpu", k), c.op, inputs, device, c.attrs);
    text += NodeText(absl::StrCat("cpu", k), c.op, inputs, "/device:CPU:0", c.attrs);
  }
  GraphDef graph;
  TW_ASSERT_OK(ParseTextProto(text, &graph));
  TW_ASSERT_OK(session->Create(graph));
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    std::vector<std::string> fetches;
    for (int o = 0; o < c.num_outputs; ++o) {
      fetches.push_back(absl::StrCat("gpu", k, ":", o));
      fetches.push_back(absl::StrCat("cpu", k, ":", o));
    }
    std::vector<Tensor> out;
    absl::Status s = session->Run({}, fetches, {}, &out);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s;
    for (int o = 0; o < c.num_outputs; ++o) {
      EXPECT_TRUE(Agree(out[2 * o], out[2 * o + 1], c.tolerance)) << c.name << " output " << o;
    }
    out.clear();
    EXPECT_EQ(NewGuardViolations(), 0) << c.name << " wrote outside its GPU buffers";
  }
}

// ---- Variables and their updates ----

// One optimizer update run three times on twin variables: the variable and
// its slots start from the same values, every step applies the same grad.
struct UpdateCase {
  std::string op;
  std::string attrs;
  int slots;
  std::vector<std::pair<int, float>> scalars;  // (input index, value)
  int grad;                                    // or AssignAdd's value, or a scatter's updates
  bool resource = false;
  // A row scatter or a sparse update: input `indices` is {3, 1, 3, 0} (row
  // 3 twice, row 2 never), and grad is [4, 33] rows, or a scalar when
  // scalar_grad.
  int indices = -1;
  bool scalar_grad = false;
};

std::vector<UpdateCase> UpdateCases() {
  const std::string nesterov =
      absl::StrCat(kFloat, " attr { key: 'use_nesterov' value { b: true } }");
  std::vector<UpdateCase> cases = {
      {"ApplyGradientDescent", kFloat, 0, {{1, 0.1f}}, 2},
      {"ApplyMomentum", kFloat, 1, {{2, 0.1f}, {4, 0.9f}}, 3},
      {"ApplyMomentum", nesterov, 1, {{2, 0.1f}, {4, 0.9f}}, 3},
      {"ApplyAdam",
       kFloat,
       2,
       {{3, 0.9f}, {4, 0.999f}, {5, 0.01f}, {6, 0.9f}, {7, 0.999f}, {8, 1e-3f}},
       9},
      {"ApplyAdam",
       nesterov,
       2,
       {{3, 0.81f}, {4, 0.998f}, {5, 0.01f}, {6, 0.9f}, {7, 0.999f}, {8, 1e-3f}},
       9},
      {"ApplyAdagrad", kFloat, 1, {{2, 0.1f}}, 3},
      {"ApplyRMSProp", kFloat, 2, {{3, 0.01f}, {4, 0.9f}, {5, 0.5f}, {6, 1e-3f}}, 7},
  };
  for (size_t i = 0, n = cases.size(); i < n; ++i) {
    UpdateCase r = cases[i];
    r.op = "Resource" + r.op;
    r.resource = true;
    cases.push_back(r);
  }
  const std::string dtype = "attr { key: 'dtype' value { type: DT_FLOAT } }";
  cases.push_back({"AssignAdd", kFloat, 0, {}, 1});
  cases.push_back({"AssignSub", kFloat, 0, {}, 1});
  cases.push_back({"AssignAddVariableOp", dtype, 0, {}, 1, true});
  cases.push_back({"AssignSubVariableOp", dtype, 0, {}, 1, true});
  const std::string tindices = " attr { key: 'Tindices' value { type: DT_INT32 } }";
  for (const bool resource : {false, true}) {
    const std::string attrs = absl::StrCat(resource ? dtype : kFloat, tindices);
    const std::string prefix = resource ? "ResourceScatter" : "Scatter";
    for (const char* mode : {"Add", "Sub", "Update"}) {
      cases.push_back({prefix + mode, attrs, 0, {}, 2, resource, /*indices=*/1});
    }
    cases.push_back({prefix + "Sub", attrs, 0, {}, 2, resource, 1, /*scalar_grad=*/true});
    cases.push_back({prefix + "Update", attrs, 0, {}, 2, resource, 1, /*scalar_grad=*/true});
    const std::string sparse = absl::StrCat(kFloat, tindices);
    const std::string op = resource ? "ResourceSparseApply" : "SparseApply";
    cases.push_back({op + "Momentum", sparse, 1, {{2, 0.1f}, {5, 0.9f}}, 3, resource, 4});
    cases.push_back({op + "Momentum",
                     absl::StrCat(sparse, " attr { key: 'use_nesterov' value { b: true } }"),
                     1,
                     {{2, 0.1f}, {5, 0.9f}},
                     3,
                     resource,
                     4});
    cases.push_back({op + "Adagrad", sparse, 1, {{2, 0.1f}}, 3, resource, 4});
    cases.push_back({op + "RMSProp",
                     sparse,
                     2,
                     {{3, 0.01f}, {4, 0.9f}, {5, 0.5f}, {6, 1e-3f}},
                     7,
                     resource,
                     8});
  }
  return cases;
}

// Builds every update case on `device` and on /device:CPU:0, runs the
// initialisers, then three steps, and compares the variables and slots,
// and for resource variables a ResourceGather of their rows.
// Each ref case also reads the variable before its first update and keeps
// that read alive past the update (a consumer ordered after it), so the
// update must copy the shared buffer first: the read must keep the initial
// value on both devices.
void CheckUpdateTwins(const SessionOptions& options, const std::string& device) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  std::mt19937 rng(302);
  const std::vector<UpdateCase> cases = UpdateCases();
  const std::vector<int64_t> shape = {4, 33};
  const std::string shape_attr =
      "attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 33 } } } }";
  const std::string float_dtype = "attr { key: 'dtype' value { type: DT_FLOAT } }";
  std::string text;
  std::vector<std::string> init, step, fetch_pairs, snapshots, gathers;
  const std::string gather_indices = "gather_indices";
  text += InputText(gather_indices, Ints({2, 0, 3, 3}), &rng);
  for (size_t k = 0; k < cases.size(); ++k) {
    const UpdateCase& c = cases[k];
    const bool resource = c.resource;
    const std::string in = absl::StrCat("u", k, "_");
    // Slots start positive (Adagrad's accum, RMSProp's ms are square roots' arguments).
    for (int j = 0; j <= c.slots; ++j) {
      text += InputText(absl::StrCat(in, "init", j),
                        j == 0 ? Floats(shape) : Floats(shape, 0.1f, 1.0f), &rng);
    }
    text += InputText(in + "grad", c.scalar_grad ? Floats({}) : Floats(shape), &rng);
    if (c.indices >= 0) text += InputText(in + "indices", Ints({3, 1, 3, 0}), &rng);
    for (const auto& [index, value] : c.scalars) {
      text += NodeText(absl::StrCat(in, "s", index), "Const", {}, "/device:CPU:0",
                       absl::StrCat("attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                                    "'value' value { tensor { dtype: DT_FLOAT float_val: ",
                                    value, " } } }"));
    }
    for (const std::string& dev : {device, std::string("/device:CPU:0")}) {
      const std::string p = absl::StrCat(in, dev == device ? "dev" : "cpu", "_");
      int num_inputs = std::max(c.grad, c.indices) + 1;
      for (const auto& scalar : c.scalars) num_inputs = std::max(num_inputs, scalar.first + 1);
      std::vector<std::string> args(num_inputs);
      for (int j = 0; j <= c.slots; ++j) {
        const std::string var = absl::StrCat(p, "v", j);
        if (resource) {
          text += NodeText(var, "VarHandleOp", {}, dev, absl::StrCat(float_dtype, shape_attr));
          text += NodeText(var + "_init", "AssignVariableOp", {var, absl::StrCat(in, "init", j)},
                           dev, float_dtype);
          text += NodeText(var + "_read", "ReadVariableOp", {var}, dev, float_dtype);
          fetch_pairs.push_back(var + "_read");
        } else {
          text += NodeText(var, "VariableV2", {}, dev, absl::StrCat(float_dtype, shape_attr));
          text +=
              NodeText(var + "_init", "Assign", {var, absl::StrCat(in, "init", j)}, dev, kFloat);
          fetch_pairs.push_back(var);
        }
        init.push_back(var + "_init");
        args[j] = var;
      }
      for (const auto& [index, value] : c.scalars) args[index] = absl::StrCat(in, "s", index);
      args[c.grad] = in + "grad";
      if (c.indices >= 0) args[c.indices] = in + "indices";
      if (resource) {
        // A gather of the variable's rows after the steps, on its device.
        text += NodeText(p + "gather", "ResourceGather", {p + "v0", gather_indices}, dev,
                         absl::StrCat(float_dtype,
                                      " attr { key: 'Tindices' value { type: "
                                      "DT_INT32 } }"));
        gathers.push_back(p + "gather");
      }
      std::string update = p + "update";
      if (!resource) {
        // The read that shares the buffer, and a consumer after the update.
        text += NodeText(p + "snap", "Identity", {p + "v0"}, dev, kFloat);
        args.push_back("^" + p + "snap");
        text += NodeText(p + "after", "Identity", {p + "snap", "^" + update}, dev, kFloat);
        snapshots.push_back(p + "after");
      }
      if (!resource && dev != device) snapshots.push_back(in + "init0");
      text += NodeText(update, c.op, args, dev, c.attrs);
      step.push_back(update);
    }
  }
  GraphDef graph;
  TW_ASSERT_OK(ParseTextProto(text, &graph));
  TW_ASSERT_OK(session->Create(graph));
  TW_ASSERT_OK(session->Run({}, {}, init, nullptr));
  std::vector<Tensor> snaps;
  TW_ASSERT_OK(session->Run({}, snapshots, step, &snaps));
  for (size_t i = 0; i < snaps.size(); i += 3) {  // device read, CPU read, initial value
    EXPECT_TRUE(Agree(snaps[i], snaps[i + 2], 0)) << snapshots[i];
    EXPECT_TRUE(Agree(snaps[i + 1], snaps[i + 2], 0)) << snapshots[i + 1];
  }
  for (int i = 0; i < 2; ++i) TW_ASSERT_OK(session->Run({}, {}, step, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, fetch_pairs, {}, &out));
  // fetch_pairs holds each case's device variables, then its CPU ones.
  size_t i = 0;
  for (const UpdateCase& c : cases) {
    for (int j = 0; j <= c.slots; ++j, ++i) {
      EXPECT_TRUE(Agree(out[i], out[i + c.slots + 1], 1e-5))
          << c.op << c.attrs << " variable " << j;
    }
    i += c.slots + 1;
  }
  out.clear();
  TW_ASSERT_OK(session->Run({}, gathers, {}, &out));
  for (size_t g = 0; g < gathers.size(); g += 2) {  // the device's gather, then the CPU's
    EXPECT_TRUE(Agree(out[g], out[g + 1], 1e-5)) << gathers[g];
  }
  out.clear();
  snaps.clear();
  session.reset();  // frees the variables
  EXPECT_EQ(NewGuardViolations(), 0) << "an update kernel wrote outside its GPU buffers";
}

TEST(GpuConformanceTest, EveryKernelMatchesItsCpuTwin) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  setenv("TOWERFLOW_GPU_GUARD_BYTES", "1", 1);  // read by the GPU allocators made below
  // Full float32: the CPU twins' rounding is the reference.
  EnableTensorFloat32Execution(false);
  SessionOptions options;
  options.device_count[kDeviceGpu] = 1;
  // The sessions' ends free (and check) every block.
  CheckTwins(options, "/device:GPU:0");
  CheckUpdateTwins(options, "/device:GPU:0");
}

// Random float values of `in`'s shape and range.
Tensor RandomFloats(const Input& in, std::mt19937* rng) {
  Tensor t(DT_FLOAT, TensorShape(in.shape));
  std::uniform_real_distribution<float> dist(in.lo, in.hi);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(*rng);
  return t;
}

// Ops whose GPU kernels are not capturable (Note [Capturable GPU kernels]).
bool NotCapturable(const std::string& op) { return op == "Where" || op == "TopKV2"; }

// Each case's op alone on the GPU, recorded (runtime/step_replay.h) and
// replayed on new inputs written into the recording's slots: the values the
// same op gives run eagerly on those inputs. Float inputs are fed, the
// others are constants on the GPU (int32 ones in host memory, as a GPU
// node's shapes and axes are). Under compute-sanitizer (tools/gpu_check.sh)
// this is also the memcheck of replays.
TEST(GpuConformanceTest, EveryCaseReplaysAsItRunsEagerly) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  EnableTensorFloat32Execution(false);
  SessionOptions eager_options;
  eager_options.device_count[kDeviceGpu] = 1;
  SessionOptions replay_options = eager_options;
  replay_options.replay.enabled = true;
  replay_options.replay.warmup_steps = 1;
  replay_options.replay.log = false;
  std::mt19937 rng(17);
  int replayed = 0, not_capturable = 0;
  std::vector<std::string> refused;
  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    std::string text;
    std::vector<std::string> inputs;
    std::vector<int> fed;  // indices of c.inputs that are fed
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs.push_back(absl::StrCat("in", i));
      if (c.inputs[i].is_int) {
        text += InputText(inputs.back(), c.inputs[i], &rng, "/device:GPU:0");
      } else {
        text += NodeText(inputs.back(), "Placeholder", {}, "/device:GPU:0",
                         "attr { key: 'dtype' value { type: DT_FLOAT } }");
        fed.push_back(static_cast<int>(i));
      }
    }
    text += NodeText("op", c.op, inputs, "/device:GPU:0", c.attrs);
    std::vector<std::string> fetches;
    for (int j = 0; j < c.num_outputs; ++j) fetches.push_back(absl::StrCat("op:", j));
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(text, &graph));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, NewSession(eager_options));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replay, NewSession(replay_options));
    TW_ASSERT_OK(eager->Create(graph));
    TW_ASSERT_OK(replay->Create(graph));
    RunMetadata metadata;
    for (int run = 0; run < 4; ++run) {
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (int i : fed) feeds.push_back({inputs[i], RandomFloats(c.inputs[i], &rng)});
      std::vector<Tensor> want, got;
      TW_ASSERT_OK(eager->Run(feeds, fetches, {}, &want)) << c.name;
      TW_ASSERT_OK(replay->Run(RunOptions(), feeds, fetches, {}, &got, &metadata)) << c.name;
      for (size_t j = 0; j < want.size(); ++j) {
        EXPECT_TRUE(Agree(got[j], want[j], c.tolerance)) << c.name << " run " << run << " output " << j;
      }
    }
    if (metadata.replay.mode == StepReplayReport::Mode::kReplayed) {
      ++replayed;
    } else if (NotCapturable(c.op)) {
      ++not_capturable;
    } else {
      refused.push_back(absl::StrCat(c.name, ": ", metadata.replay.why_eager));
    }
  }
  EXPECT_TRUE(refused.empty()) << absl::StrJoin(refused, "\n");
  EXPECT_EQ(replayed + not_capturable, static_cast<int>(cases.size()));
}

// A data_format the CPU kernel refuses the GPU kernel refuses with the same
// error: the two parse BiasAdd's attrs with one function (kernels/nn_attrs.h).
TEST(GpuConformanceTest, BadAttrsAreRefusedAsOnTheCpu) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  std::mt19937 rng(7);
  for (const std::string device : {"/device:GPU:0", "/device:CPU:0"}) {
    SessionOptions options;
    options.device_count[kDeviceGpu] = 1;
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
    const std::string text =
        absl::StrCat(InputText("x", Floats({2, 3}), &rng), InputText("b", Floats({3}), &rng),
                     NodeText("y", "BiasAdd", {"x", "b"}, device,
                              absl::StrCat(kFloat, " attr { key: 'data_format' value { s: "
                                                   "'NDHWC' } }")));
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(text, &graph));
    TW_ASSERT_OK(session->Create(graph));
    std::vector<Tensor> out;
    EXPECT_THAT(session->Run({}, {"y"}, {}, &out),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "Unknown data_format: NDHWC"))
        << device;
  }
}

// The suite itself, on any machine: every case builds and runs, and two CPU
// devices agree exactly, so on a GPU only the GPU side can differ.
TEST(GpuConformanceTest, CasesRunOnTwoCpus) {
  SessionOptions options;
  options.device_count[kDeviceCpu] = 2;
  CheckTwins(options, "/device:CPU:1");
  CheckUpdateTwins(options, "/device:CPU:1");
}

}  // namespace
}  // namespace towerflow
