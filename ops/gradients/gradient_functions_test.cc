// Every registered gradient function against central finite differences
// (ComputeGradientError, delta 1e-3): max error < 1e-4 in float and < 1e-10
// in double, TensorFlow's bounds. One table of cases (PyTorch's OpInfo
// style, grad_cases.h), kept by family in *_grad_cases.cc; a coverage test
// keeps it in step with the registry.
#include <cctype>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/testing/grad_cases.h"
#include "testing/gradient_checker.h"

namespace towerflow {
namespace {

using grad_cases::ArrayCases;
using grad_cases::Double;
using grad_cases::Dynamic;
using grad_cases::GradCase;
using grad_cases::InputSpec;
using grad_cases::ListCases;
using grad_cases::MathCases;
using grad_cases::NnCases;
using grad_cases::RnnCases;
using grad_cases::SparseCases;
using grad_cases::SpectralCases;
using grad_cases::Values;

std::vector<GradCase> Cases() {
  std::vector<GradCase> c = MathCases();
  for (std::vector<GradCase> family :
       {ArrayCases(), ListCases(), NnCases(), RnnCases(), SpectralCases(), SparseCases()}) {
    c.insert(c.end(), family.begin(), family.end());
  }
  // Double precision for the linear ops (truncation error vanishes, so
  // TF's 1e-10 bound applies).
  for (const char* linear : {"Add", "MatMul", "Conv2D", "Transpose", "Sum", "Tile", "Pad"}) {
    for (const GradCase& g : std::vector<GradCase>(c)) {
      if (g.name == linear) c.push_back(Double(g));
    }
  }
  // Run-time shape paths (no static shapes).
  for (const char* name :
       {"Add", "Sub", "Sum", "Mean", "Max", "Reshape", "ConcatV2", "BiasAdd", "BatchMatMulV2",
        "GatherV2", "GatherV2/axis1", "BroadcastTo", "Prod", "Prod/two_axes_keep_dims"}) {
    for (const GradCase& g : std::vector<GradCase>(c)) {
      if (g.name == name) c.push_back(Dynamic(g));
    }
  }
  return c;
}

class GradientFunctionTest : public ::testing::TestWithParam<GradCase> {};

template <typename T>
absl::StatusOr<double> Check(const GradCase& c) {
  Scope s = Scope::NewRootScope();
  std::vector<Output> xs;
  std::vector<Tensor> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputSpec& in = c.inputs[i];
    PartialTensorShape shape = c.dynamic_shapes
                                   ? PartialTensorShape()
                                   : *PartialTensorShape::FromDims(in.shape.dim_sizes());
    xs.push_back(ops::Placeholder(s, DataTypeToEnum<T>::value, ops::Placeholder::Shape(shape)));
    values.push_back(Values<T>(in, 17 + i));
  }
  std::vector<Output> ys = c.build(s, xs);
  if (!s.ok()) return s.status();
  return ComputeGradientError<T>(s, xs, values, ys, c.delta > 0 ? c.delta : 1e-3);
}

TEST_P(GradientFunctionTest, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  if (c.dtype == DT_DOUBLE) {
    absl::StatusOr<double> err = Check<double>(c);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, c.max_error > 0 ? c.max_error : 1e-10);
  } else {
    absl::StatusOr<double> err = Check<float>(c);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, c.max_error > 0 ? c.max_error : 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, GradientFunctionTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(GradientCoverageTest, EveryRegisteredGradientHasACase) {
  std::set<std::string> covered;
  for (const GradCase& c : Cases()) covered.insert(c.name.substr(0, c.name.find('/')));
  // Checked with variables in ops/gradients_test.cc (they take a handle).
  covered.insert("ReadVariableOp");
  covered.insert("ResourceGather");
  covered.insert("ResourceGatherNd");
  // Their input is a ref (a TF 1 variable), which the cases cannot feed;
  // their gradient is TW_REGISTER_PASS_THROUGH_GRADIENT's, Identity's and
  // Snapshot's, whose cases check it.
  covered.insert("RefIdentity");
  covered.insert("DebugGradientRefIdentity");
  // A sampler: its gradient is TF's implicit reparameterisation, not the
  // finite differences of the seeded draws; against TF's values in
  // kernels/cpu/random_sampling_ops_test.cc, where RandomGammaGrad meets
  // finite differences of the gamma CDF.
  for (const char* op : {"RandomGamma", "StatelessRandomGammaV2", "StatelessRandomGammaV3"}) {
    covered.insert(op);
  }
  // Its gradient is an error by design (gradients_test.cc).
  covered.insert("PreventGradient");
  // Straight-through estimators, not derivatives (the ops are step
  // functions): against TF's values in kernels/cpu/fake_quant_ops_test.cc.
  for (const char* op : {"FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars",
                         "FakeQuantWithMinMaxVarsPerChannel"}) {
    covered.insert(op);
  }
  // The same for QuantizeAndDequantize (the same file).
  for (const char* op :
       {"QuantizeAndDequantizeV2", "QuantizeAndDequantizeV3", "QuantizeAndDequantizeV4"}) {
    covered.insert(op);
  }
  // Control flow: Cond's Switch and Merge (and their Ref forms, the same
  // functions) against finite differences in ops/control_flow_test.cc; while
  // loops, differentiated as a whole (Enter, Exit and NextIteration only
  // refuse when reached alone), in ops/while_gradients_test.cc.
  for (const char* op : {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                         "RefExit", "NextIteration", "RefNextIteration"}) {
    covered.insert(op);
  }
  // Function calls, by running the body again: ops/function_gradients_test.cc.
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall", "If", "StatelessIf", "Case",
                         "StatelessCase", "While", "StatelessWhile"}) {
    covered.insert(op);
  }
  std::vector<std::string> missing;
  for (const std::string& op : GradientRegistry::Global()->Ops(/*with_gradient=*/true)) {
    if (!covered.count(op)) missing.push_back(op);
  }
  EXPECT_THAT(missing, ::testing::IsEmpty());
}

}  // namespace
}  // namespace towerflow
