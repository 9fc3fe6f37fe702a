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
#include "kernels/gpu/testing/conformance_cases.h"
#include "kernels/gpu/testing/conformance_harness.h"
#include "runtime/session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

#ifdef TOWERFLOW_CUDA
#include "framework/gpu/gpu_device.h"
#endif

namespace towerflow {
namespace {

using conformance::Agree;
using conformance::AllCases;
using conformance::Case;
using conformance::Floats;
using conformance::InputText;
using conformance::Ints;
using conformance::kFloat;
using conformance::NodeText;

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
  std::vector<Case> cases = AllCases();
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
      EXPECT_TRUE(Agree(out[2 * o], out[2 * o + 1], c.tolerance, c.of_largest))
          << c.name << " output " << o;
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

// A data_format outside BiasAdd's allowed values is refused when the graph
// is created, with the same message whichever device the node is on: no
// kernel, CPU or GPU, sees it (both would parse it with one function,
// kernels/nn_attrs.h, and refuse it as well).
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
                              absl::StrCat(kFloat,
                                           " attr { key: 'data_format' value { s: "
                                           "'NDHWC' } }")));
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(text, &graph));
    EXPECT_THAT(session->Create(graph),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "Node 'y' (op 'BiasAdd'): Value for attr 'data_format' of "
                                  "\"NDHWC\" is not in the list of allowed values: \"NHWC\", "
                                  "\"NCHW\""))
        << device;
  }
}

// IsFinite on the GPU: the infinities and NaN of each float type (16-bit
// ones by their bits, as TF writes them in half_val) and its largest finite
// value.
TEST(GpuConformanceTest, IsFiniteFindsInfinitiesAndNans) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  const std::pair<const char*, std::string> values[] = {
      {"DT_FLOAT", "float_val: 1 float_val: inf float_val: nan float_val: -inf float_val: 3.4e38"},
      // 1, inf, NaN, -inf, 65504
      {"DT_HALF",
       "half_val: 15360 half_val: 31744 half_val: 32256 half_val: 64512 half_val: 31743"},
      // 1, inf, NaN, -inf, 3.39e38
      {"DT_BFLOAT16",
       "half_val: 16256 half_val: 32640 half_val: 32704 half_val: 65408 half_val: 32639"},
  };
  for (const auto& [dtype, text_values] : values) {
    SessionOptions options;
    options.device_count[kDeviceGpu] = 1;
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
    const std::string type = absl::StrCat("attr { key: 'T' value { type: ", dtype, " } }");
    const std::string text = absl::StrCat(
        "node { name: 'x' op: 'Const' device: '/device:CPU:0' attr { key: 'dtype' value { type: ",
        dtype, " } } attr { key: 'value' value { tensor { dtype: ", dtype,
        " tensor_shape { dim { size: 5 } } ", text_values, " } } } }",
        NodeText("y", "IsFinite", {"x"}, "/device:GPU:0", type));
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(text, &graph));
    TW_ASSERT_OK(session->Create(graph));
    std::vector<Tensor> out;
    TW_ASSERT_OK(session->Run({}, {"y"}, {}, &out));
    EXPECT_THAT(out[0], TensorIs<bool>({5}, {true, false, false, false, true})) << dtype;
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
