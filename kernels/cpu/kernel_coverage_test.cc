// Every op the CPU kernel library promises (the op list of the CPU kernel
// issue) has a registered CPU kernel.
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "framework/kernel_registry.h"
#include "framework/device.h"

namespace towerflow {
namespace {

TEST(KernelCoverageTest, EveryPromisedOpHasACpuKernel) {
  std::set<std::string> have;
  for (const KernelDef* def : AllKernelDefs()) {
    if (def->device_type == kDeviceCpu) have.insert(def->op);
  }
  const std::vector<std::string> promised = {
      // Array
      "Const", "Identity", "IdentityN", "Placeholder", "PlaceholderWithDefault", "Reshape", "Shape",
      "ShapeN", "Size", "Rank", "ExpandDims", "Squeeze", "Transpose", "ConcatV2", "Split", "SplitV",
      "Pack", "Unpack", "Slice", "StridedSlice", "Pad", "Tile", "Fill", "ZerosLike", "OnesLike",
      "Cast", "GatherV2", "ResourceGather", "OneHot", "BroadcastTo", "BroadcastGradientArgs",
      "StopGradient", "PreventGradient", "Select", "SelectV2",
      // Math
      "Add", "AddV2", "AddN", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Maximum", "Minimum",
      "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Pow", "Sigmoid", "Tanh", "Reciprocal",
      "Sign", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd",
      "LogicalOr", "LogicalNot", "Sum", "Mean", "Max", "Min", "Prod", "ArgMax", "ArgMin", "MatMul",
      "BatchMatMulV2",
      // NN
      "BiasAdd", "BiasAddGrad", "Relu", "ReluGrad", "Relu6", "Elu", "Softmax", "LogSoftmax",
      "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Conv2D",
      "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad", "AvgPool",
      "AvgPoolGrad", "LRN", "LRNGrad", "FusedBatchNormV3", "FusedBatchNormGradV3", "L2Loss",
      "InTopKV2", "RandomUniform", "Floor",
      // Random
      "TruncatedNormal", "RandomStandardNormal", "RandomUniformInt", "RandomShuffle",
      // Training updates
      "ApplyGradientDescent", "ResourceApplyGradientDescent", "ApplyMomentum",
      "ResourceApplyMomentum", "ApplyAdam", "ResourceApplyAdam", "ApplyAdagrad",
      "ResourceApplyAdagrad", "ApplyRMSProp", "ResourceApplyRMSProp",
      // Checks and summaries
      "CheckNumerics", "Assert", "NoOp", "Print", "ScalarSummary", "HistogramSummary",
      "MergeSummary"};
  std::vector<std::string> missing;
  for (const std::string& op : promised) {
    if (!have.count(op)) missing.push_back(op);
  }
  EXPECT_THAT(missing, ::testing::IsEmpty());
}

}  // namespace
}  // namespace towerflow
