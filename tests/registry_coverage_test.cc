// The three registries against each other. Every op of the op registry
// (whose schemas are TensorFlow's, so they allow more dtypes than
// TensorFlow's own CPU kernels take) has
// - a CPU kernel, or an entry in kOpsWithoutCpuKernel with the reason;
// - for each dtype a `type` attr allows, a CPU kernel that takes it, unless
//   the dtype is in kDtypesWithoutCpuMath or the op's gap is in kDtypeGaps;
// - a gradient (or an explicit TW_REGISTER_NO_GRADIENT), or an entry in
//   kOpsWithoutGradient.
// Exemptions that no longer apply fail too, so the lists stay true.
//
// Attrs of any type (`T: type`, Identity's) and list(type) attrs are not
// enumerated: their kernels take what they are given.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/types.h"
#include "framework/device.h"
#include "framework/kernel_registry.h"
#include "gmock/gmock.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "ops/grad_registry.h"

namespace towerflow {
namespace {

using ::testing::IsEmpty;

// Dtypes the schemas allow that no CPU kernel computes in.
const std::map<DataType, std::string>& DtypesWithoutCpuMath() {
  static const auto* dtypes = new std::map<DataType, std::string>{
      // kernels/cpu/complex_ops.cc and fft_ops.cc, the elementwise
      // arithmetic (cwise_*_ops.cc), Sum/Mean/Prod, Cast and the kernels
      // that move elements serve complex numbers; not yet MatMul, the
      // comparisons beyond equality, the activations and the rest.
      {DT_COMPLEX64, "complex numbers: arithmetic, FFTs, casts and moves only"},
      {DT_COMPLEX128, "complex numbers: arithmetic, FFTs, casts and moves only"},
      {DT_QINT8, "quantized types: TF's type pairs of its quantized kernels only"},
      {DT_QUINT8, "quantized types: TF's type pairs of its quantized kernels only"},
      {DT_QINT16, "quantized types: TF's type pairs of its quantized kernels only"},
      {DT_QUINT16, "quantized types: TF's type pairs of its quantized kernels only"},
      {DT_QINT32, "quantized types: TF's type pairs of its quantized kernels only"},
      // kernels/cpu/cwise_int_ops.cc serves these in the elementwise
      // binary ops, comparisons and bits, as TensorFlow's CPU kernels, and
      // narrow_int_kernels.cc in the reductions, activations, selections
      // and scans (Note [Narrow integers on the CPU]); elsewhere they are
      // data (Cast, copies).
      {DT_INT8, "narrow integers: elementwise ops, reductions, activations and scans only"},
      {DT_INT16, "narrow integers: elementwise ops, reductions, activations and scans only"},
      {DT_UINT16, "narrow integers: elementwise ops, reductions, activations and scans only"},
      {DT_UINT32, "narrow integers: elementwise ops, reductions, activations and scans only"},
      {DT_UINT64, "unsigned integers wider than 8 bits: elementwise binary ops and bits only"},
  };
  return *dtypes;
}

// Ops registered (so that TensorFlow's graphs import) whose CPU kernel is
// not written yet.
const std::map<std::string, std::string>& OpsWithoutCpuKernel() {
  static const auto* ops = new std::map<std::string, std::string>{
      {"Send", "the executor partitions with _Send/_Recv; Send/Recv are multi-process (issue 22)"},
      {"Recv", "the executor partitions with _Send/_Recv; Send/Recv are multi-process (issue 22)"},
      {"PartitionedCall", "the session replaces calls with the body (graph/lower_functions.h)"},
      {"StatefulPartitionedCall",
       "the session replaces calls with the body (graph/lower_functions.h)"},
      {"If", "the session lowers it to Switch and Merge (graph/lower_functions.h)"},
      {"StatelessIf", "the session lowers it to Switch and Merge (graph/lower_functions.h)"},
      {"Case", "the session lowers it to Switch and Merge (graph/lower_functions.h)"},
      {"StatelessCase", "the session lowers it to Switch and Merge (graph/lower_functions.h)"},
      {"While", "the session lowers it to a while loop's frame (graph/lower_functions.h)"},
      {"StatelessWhile", "the session lowers it to a while loop's frame (graph/lower_functions.h)"},
  };
  return *ops;
}

struct DtypeGap {
  std::vector<DataType> dtypes;
  std::string reason;
  std::string attr = "T";  // the type attr the gap is in
};

// Per op, dtypes of its `T` (or the gap's attr) the schema allows but the
// CPU kernels do not take (besides DtypesWithoutCpuMath).
const std::map<std::string, DtypeGap>& DtypeGaps() {
  const std::vector<DataType> ints = {DT_INT32, DT_INT64, DT_UINT8};
  const std::string floats_only = "floating point only, as TensorFlow's CPU kernels";
  const std::string no_uint8 = "uint8 beyond the elementwise binary ops: not implemented";
  static const auto* gaps = new std::map<std::string, DtypeGap>{
      {"Add", {{DT_STRING}, "string concatenation: not implemented"}},
      {"QuantizedResizeBilinear",
       {{DT_FLOAT}, "TF's float kernel reads floats as 32-bit quantized values (no resize)"}},
      {"Multinomial", {ints, floats_only}},
      {"StatelessRandomBinomial",
       {{DT_INT32, DT_INT64}, "TF's CPU kernels take half, float and double counts and probs"}},
      {"StatefulRandomBinomial",
       {{DT_INT32, DT_INT64}, "TF's CPU kernels take half, float and double counts and probs"}},
      {"BatchNormWithGlobalNormalization", {ints, floats_only}},
      {"BatchNormWithGlobalNormalizationGrad", {ints, floats_only}},
      {"StatelessMultinomial", {ints, floats_only}},
      {"ApproximateEqual", {ints, floats_only}},
      {"Dilation2D", {{DT_UINT8}, no_uint8}},
      {"Dilation2DBackpropInput", {{DT_UINT8}, no_uint8}},
      {"Dilation2DBackpropFilter", {{DT_UINT8}, no_uint8}},
      {"Conj", {{DT_VARIANT}, "conjugating the elements of a list of tensors: not implemented"}},
      {"ApplyAdagrad", {ints, floats_only}},
      {"ApplyAdam", {ints, floats_only}},
      {"ApplyGradientDescent", {ints, floats_only}},
      {"ApplyMomentum", {ints, floats_only}},
      {"ApplyRMSProp", {ints, floats_only}},
      {"ResourceApplyAdagrad", {ints, floats_only}},
      {"ResourceApplyAdam", {ints, floats_only}},
      {"ResourceApplyGradientDescent", {ints, floats_only}},
      {"ResourceApplyMomentum", {ints, floats_only}},
      {"ResourceApplyRMSProp", {ints, floats_only}},
      {"SparseApplyAdagrad", {ints, floats_only}},
      {"SparseApplyMomentum", {ints, floats_only}},
      {"ResourceSparseApplyAdagrad", {ints, floats_only}},
      {"ResourceSparseApplyMomentum", {ints, floats_only}},
      {"SparseApplyRMSProp", {ints, floats_only}},
      {"ResourceSparseApplyRMSProp", {ints, floats_only}},
      {"ApplyAdaMax", {ints, floats_only}},
      {"ApplyAdadelta", {ints, floats_only}},
      {"ApplyAdagradV2", {ints, floats_only}},
      {"ApplyCenteredRMSProp", {ints, floats_only}},
      {"ApplyFtrl", {ints, floats_only}},
      {"ApplyFtrlV2", {ints, floats_only}},
      {"ResourceApplyAdaMax", {ints, floats_only}},
      {"ResourceApplyAdadelta", {ints, floats_only}},
      {"ResourceApplyAdagradV2", {ints, floats_only}},
      {"ResourceApplyAdamWithAmsgrad", {ints, floats_only}},
      {"ResourceApplyCenteredRMSProp", {ints, floats_only}},
      {"ResourceApplyFtrl", {ints, floats_only}},
      {"ResourceApplyFtrlV2", {ints, floats_only}},
      {"ResourceApplyKerasMomentum", {ints, floats_only}},
      {"ResourceSparseApplyAdagradV2", {ints, floats_only}},
      {"ResourceSparseApplyFtrl", {ints, floats_only}},
      {"ResourceSparseApplyFtrlV2", {ints, floats_only}},
      {"ResourceSparseApplyKerasMomentum", {ints, floats_only}},
      {"SparseApplyAdagradV2", {ints, floats_only}},
      {"SparseApplyFtrl", {ints, floats_only}},
      {"SparseApplyFtrlV2", {ints, floats_only}},
      {"ApplyAdagradDA", {ints, floats_only}},
      {"ApplyAddSign", {ints, floats_only}},
      {"ApplyPowerSign", {ints, floats_only}},
      {"ApplyProximalAdagrad", {ints, floats_only}},
      {"ApplyProximalGradientDescent", {ints, floats_only}},
      {"ResourceApplyAdagradDA", {ints, floats_only}},
      {"ResourceApplyAddSign", {ints, floats_only}},
      {"ResourceApplyPowerSign", {ints, floats_only}},
      {"ResourceApplyProximalAdagrad", {ints, floats_only}},
      {"ResourceApplyProximalGradientDescent", {ints, floats_only}},
      {"ResourceSparseApplyAdadelta", {ints, floats_only}},
      {"ResourceSparseApplyAdagradDA", {ints, floats_only}},
      {"ResourceSparseApplyCenteredRMSProp", {ints, floats_only}},
      {"ResourceSparseApplyProximalAdagrad", {ints, floats_only}},
      {"ResourceSparseApplyProximalGradientDescent", {ints, floats_only}},
      {"SparseApplyAdadelta", {ints, floats_only}},
      {"SparseApplyAdagradDA", {ints, floats_only}},
      {"SparseApplyCenteredRMSProp", {ints, floats_only}},
      {"SparseApplyProximalAdagrad", {ints, floats_only}},
      {"SparseApplyProximalGradientDescent", {ints, floats_only}},
      {"MaxPool", {ints, floats_only}},
      {"MaxPoolGrad", {ints, floats_only}},
      {"MaxPoolGradGrad", {ints, floats_only}},
      {"MaxPoolV2", {ints, floats_only}},
      {"MaxPoolGradV2", {ints, floats_only}},
      {"MaxPoolGradGradV2", {ints, floats_only}},
      {"RealDiv", {ints, "floating point only: integer division is Div, as in TensorFlow"}},
      {"Reciprocal", {{DT_INT32, DT_INT64}, floats_only}},
      {"Inv", {{DT_INT32, DT_INT64}, floats_only}},
      {"Conv2D", {{DT_INT32}, floats_only}},
      {"Conv2DBackpropInput", {{DT_INT32}, floats_only}},
      {"MatMul", {{DT_INT64}, "float, double and int32, as the BLAS and Eigen paths"}},
      {"BatchMatMul", {{DT_INT64}, "float, double and int32, as the BLAS and Eigen paths"}},
      {"BatchMatMulV2", {{DT_INT64}, "float, double and int32, as the BLAS and Eigen paths"}},
      {"AssignAdd", {{DT_UINT8}, no_uint8}},
      {"AssignSub", {{DT_UINT8}, no_uint8}},
  };
  return *gaps;
}

// Ops registered without a gradient function or a declared no-gradient.
const std::map<std::string, std::string>& OpsWithoutGradient() {
  static const auto* ops = new std::map<std::string, std::string>{
      {"LRNGrad", "second-order LRN: TensorFlow defines none either"},
      {"Mod", "TensorFlow defines none for Mod (users register their own); FloorMod has one"},
      {"ResizeArea", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"StatelessShuffle", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CholeskyGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"MatrixLogarithm", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"ExtractGlimpseV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DeviceIndex", "no inputs; TensorFlow defines none (LookupError)"},
      {"Copy", "tfdbg's: TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CopyHost", "tfdbg's: TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DebugIdentity", "tfdbg's: TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DebugNanCount", "tfdbg's: TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DebugNumericSummary", "tfdbg's: TensorFlow defines none (LookupError)"},
      {"DebugNumericSummaryV2", "tfdbg's: TensorFlow defines none (LookupError)"},
      {"QuantizeV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Dequantize", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"QuantizedConv2D", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedMatMul", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedResizeBilinear",
       "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedBatchNormWithGlobalNormalization",
       "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedAdd", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedMul", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedBiasAdd", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedRelu", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedRelu6", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedMaxPool", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedAvgPool", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedConcat", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizedReshape", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"RequantizationRange", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"Requantize", "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"QuantizeDownAndShrinkRange",
       "TF 1's eight-bit inference: TensorFlow defines none (LookupError)"},
      {"GuaranteeConst", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DecodeWav", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"AudioSpectrogram", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Mfcc", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"EncodeWav", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"ReadFile", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"WriteFile", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"MatchingFiles", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UnsortedSegmentJoin", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"BatchNormWithGlobalNormalizationGrad",
       "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"AdjustContrastv2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"AdjustHue", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"AdjustSaturation", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppression", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CombinedNonMaxSuppression", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseReduceMax", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppressionV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppressionV3", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppressionWithOverlaps",
       "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppressionV4", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"NonMaxSuppressionV5", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CropAndResizeGradBoxes", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CropAndResizeGradImage", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"MaxPoolGradWithArgmax", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DrawBoundingBoxes", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DrawBoundingBoxesV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"CompareAndBitpack", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"BlockLSTMGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"BlockLSTMGradV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"GRUBlockCellGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"LSTMBlockCellGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Lu", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"HSVToRGB", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"BroadcastArgs", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Bincount", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DenseBincount", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseBincount", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"RaggedBincount", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DenseCountSparseOutput", "TensorFlow defines none (LookupError)"},
      {"SparseCountSparseOutput", "TensorFlow defines none (LookupError)"},
      {"RaggedCountSparseOutput", "TensorFlow defines none (LookupError)"},
      {"LowerBound", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UpperBound", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DeepCopy", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Empty", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"FakeQuantWithMinMaxArgsGradient", "TensorFlow defines none (a straight-through mask)"},
      {"FakeQuantWithMinMaxVarsGradient", "TensorFlow defines none (a straight-through mask)"},
      {"FakeQuantWithMinMaxVarsPerChannelGradient",
       "TensorFlow defines none (a straight-through mask)"},
      {"HistogramFixedWidth", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"ParallelConcat", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"RaggedRange", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UniqueWithCounts", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Dilation2DBackpropInput", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Dilation2DBackpropFilter", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"QuantizeAndDequantizeV4Grad",
       "TensorFlow's registered one returns 3 gradients for the op's 4 inputs (unusable)"},
      {"MaxPoolGradGradV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UniqueV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UniqueWithCountsV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"StatelessRandomGetKeyCounterAlg",
       "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"UnravelIndex", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"InplaceAdd", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"InplaceSub", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"InplaceUpdate", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"TruncateMod", "TensorFlow defines none (nor for Mod); FloorMod has one"},
      {"DecodeCSV", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"StringNGrams", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Fingerprint", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseDenseCwiseAdd", "TensorFlow's registered one raises NotImplementedError"},
      {"SparseSparseMaximum", "TensorFlow's registered one raises NotImplementedError"},
      {"SparseSparseMinimum", "TensorFlow's registered one raises NotImplementedError"},
      {"SparseSliceGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSplit", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseReduceSumSparse", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseReduceMaxSparse", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"Bucketize", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DataFormatDimMap", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"DataFormatVecPermute", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseFillEmptyRowsGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"RaggedFillEmptyRowsGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseReshape", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentMeanGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentSqrtNGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentSumGrad", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentSumGradV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentMeanGradV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
      {"SparseSegmentSqrtNGradV2", "TensorFlow defines none (tf.gradients raises LookupError)"},
  };
  return *ops;
}

std::map<std::string, std::vector<const KernelDef*>> CpuKernels() {
  std::map<std::string, std::vector<const KernelDef*>> cpu;
  for (const KernelDef* def : AllKernelDefs()) {
    if (def->device_type == kDeviceCpu) cpu[def->op].push_back(def);
  }
  return cpu;
}

TEST(RegistryCoverageTest, TheOpRegistryHasOps) {
  EXPECT_GT(OpRegistry::Global()->ListOps().size(), 200u);
  EXPECT_THAT(OpRegistry::Global()->registration_errors(), IsEmpty());
}

TEST(RegistryCoverageTest, EveryOpHasACpuKernelOrAReason) {
  const auto cpu = CpuKernels();
  std::vector<std::string> missing, stale;
  for (const std::string& op : OpRegistry::Global()->ListOps()) {
    const bool exempt = OpsWithoutCpuKernel().count(op) > 0;
    if (cpu.count(op) == 0 && !exempt) missing.push_back(op);
    if (cpu.count(op) > 0 && exempt) stale.push_back(op);
  }
  for (const auto& [op, reason] : OpsWithoutCpuKernel()) {
    if (OpRegistry::Global()->Find(op) == nullptr) stale.push_back(op + " (not registered)");
  }
  EXPECT_THAT(missing, IsEmpty()) << "ops without a CPU kernel";
  EXPECT_THAT(stale, IsEmpty()) << "exemptions in OpsWithoutCpuKernel that no longer apply";
}

TEST(RegistryCoverageTest, EveryDtypeASchemaAllowsHasACpuKernelOrAReason) {
  const auto cpu = CpuKernels();
  std::vector<std::string> missing;
  std::set<std::string> gaps_used;
  for (const std::string& op : OpRegistry::Global()->ListOps()) {
    auto kernels = cpu.find(op);
    if (kernels == cpu.end()) continue;  // the test above
    auto gap = DtypeGaps().find(op);
    for (const auto& attr : OpRegistry::Global()->Find(op)->op_def.attr()) {
      if (attr.type() != "type") continue;
      for (int t : attr.allowed_values().list().type()) {
        const auto dtype = static_cast<DataType>(t);
        if (AnyKernelTakes(kernels->second, attr.name(), dtype)) continue;
        if (DtypesWithoutCpuMath().count(dtype) > 0) continue;
        if (gap != DtypeGaps().end() && attr.name() == gap->second.attr &&
            absl::c_linear_search(gap->second.dtypes, dtype)) {
          gaps_used.insert(absl::StrCat(op, ":", DataTypeString(dtype)));
          continue;
        }
        missing.push_back(absl::StrCat(op, " ", attr.name(), "=", DataTypeString(dtype)));
      }
    }
  }
  std::vector<std::string> stale;
  for (const auto& [op, gap] : DtypeGaps()) {
    for (DataType dtype : gap.dtypes) {
      const std::string key = absl::StrCat(op, ":", DataTypeString(dtype));
      if (gaps_used.count(key) == 0) stale.push_back(key);
    }
  }
  EXPECT_THAT(missing, IsEmpty()) << "dtypes a schema allows that no CPU kernel takes";
  EXPECT_THAT(stale, IsEmpty()) << "DtypeGaps entries a kernel now covers (or not allowed)";
}

TEST(RegistryCoverageTest, EveryOpHasAGradientOrADeclaredNone) {
  std::vector<std::string> missing, stale;
  for (const std::string& op : OpRegistry::Global()->ListOps()) {
    const bool registered = GradientRegistry::Global()->Lookup(op).ok();
    const bool exempt = OpsWithoutGradient().count(op) > 0;
    if (!registered && !exempt) missing.push_back(op);
    if (registered && exempt) stale.push_back(op);
  }
  EXPECT_THAT(missing, IsEmpty())
      << "ops with neither TW_REGISTER_GRADIENT nor TW_REGISTER_NO_GRADIENT";
  EXPECT_THAT(stale, IsEmpty()) << "exemptions in OpsWithoutGradient that no longer apply";
}

// The gradient registry names only registered ops.
TEST(RegistryCoverageTest, GradientsAreForRegisteredOps) {
  std::vector<std::string> unknown;
  for (const std::string& op : GradientRegistry::Global()->Ops(/*with_gradient=*/false)) {
    if (OpRegistry::Global()->Find(op) == nullptr) unknown.push_back(op);
  }
  EXPECT_THAT(unknown, IsEmpty());
}

}  // namespace
}  // namespace towerflow
