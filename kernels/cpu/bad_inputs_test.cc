// The bad-input tables: the templates T1-T8 of
// ../shared/reference/BAD_INPUTS.md applied to every CPU kernel.
//
// Each family lists valid cases (op, attrs, inputs). The mutation engine
// derives bad variants of every case — each input made a scalar, a
// vector, one rank higher, empty along each dimension (T1, T2); integer
// inputs filled with -1, -2^31, 2^31-1, 0xdeadbeef, -1.25e12, 2^62 (T3,
// T4); float inputs filled with NaN, +-Inf, 1e20, -0.0 and a denormal
// (T8); integer attrs and list entries set to 0, -1, 0x7fffffff and 2^62
// (T5) — and runs each through KernelRunner. Every run must return a
// Status (a crash or sanitizer report fails the whole binary) and an error
// must be one of the codes bad input deserves, never Internal or Unknown.
// Each variant runs twice: through KernelRunner, and as Const nodes of an
// imported GraphDef run by a Session (import-time shape functions too).
// T6 (dtype confusion) and T7 (list arity) are checked where they are
// caught: the runner's type checks as the executor's, and NodeDef
// validation. Specific advisories get explicit cases at the end.
#include <dlfcn.h>
#include <sys/resource.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/jpeg.h"
#include "core/png.h"
#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "runtime/session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

struct Case {
  std::string op;
  std::map<std::string, AttrValue> attrs;
  std::vector<Tensor> inputs;
};

template <typename V>
AttrValue A(const V& v) {
  AttrValue a;
  SetAttrValue(v, &a);
  return a;
}
AttrValue Ints(std::vector<int64_t> v) { return A(v); }

Tensor Str(const std::string& s) {
  Tensor t(DT_STRING, TensorShape());
  *t.data<std::string>() = s;
  return t;
}

Tensor F(const TensorShape& s) {
  Tensor t(DT_FLOAT, s);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = 0.25f * (i % 7) - 0.5f;
  return t;
}
Tensor I32(std::vector<int32_t> v) { return Literal<int32_t>({static_cast<int64_t>(v.size())}, v); }

std::vector<Case> ArrayCases() {
  return {
      {"Reshape", {}, {F({2, 3}), I32({3, 2})}},
      {"Bitcast", {{"type", A(DT_UINT8)}}, {F({2, 3})}},
      {"Bitcast", {{"type", A(DT_INT64)}}, {I32({4, 2})}},
      {"ExpandDims", {}, {F({2, 3}), Scalar<int32_t>(1)}},
      {"Squeeze", {{"squeeze_dims", Ints({0})}}, {F({1, 3})}},
      {"EnsureShape", {{"shape", A(PartialTensorShape({-1, 3}))}}, {F({2, 3})}},
      {"Shape", {}, {F({2, 3})}},
      {"Size", {}, {F({2, 3})}},
      {"Fill", {}, {I32({2, 2}), Scalar<float>(1)}},
      {"ZerosLike", {}, {F({2})}},
      {"BroadcastTo", {}, {F({3}), I32({2, 3})}},
      {"BroadcastGradientArgs", {}, {I32({2, 3}), I32({3})}},
      {"Range", {}, {Scalar<int32_t>(0), Scalar<int32_t>(5), Scalar<int32_t>(1)}},
      {"InvertPermutation", {}, {I32({1, 0, 2})}},
      {"Cast", {{"DstT", A(DT_INT32)}}, {F({4})}},
      {"Transpose", {}, {F({2, 3}), I32({1, 0})}},
      {"Slice", {}, {F({3, 4}), I32({1, 0}), I32({2, 2})}},
      {"StridedSlice",
       {{"begin_mask", A(int64_t{1})}, {"shrink_axis_mask", A(int64_t{2})}},
       {F({3, 4}), I32({0, 1}), I32({2, 2}), I32({1, 1})}},
      {"Pad", {}, {F({2, 2}), Literal<int32_t>({2, 2}, {1, 0, 0, 1})}},
      {"Tile", {}, {F({2, 2}), I32({2, 1})}},
      {"ReverseV2", {}, {F({2, 3}), I32({1, 0})}},
      {"Where", {}, {F({2, 3})}},
      {"DepthToSpace", {{"block_size", A(int64_t{2})}}, {F({1, 2, 2, 8})}},
      {"SpaceToDepth", {{"block_size", A(int64_t{2})}}, {F({1, 4, 2, 3})}},
      {"MirrorPad", {{"mode", A("REFLECT")}}, {F({3, 2}), Literal<int32_t>({2, 2}, {1, 2, 0, 1})}},
      {"MirrorPadGrad",
       {{"mode", A("SYMMETRIC")}},
       {F({5, 3}), Literal<int32_t>({2, 2}, {1, 2, 0, 1})}},
      {"ConcatV2", {}, {F({2, 2}), F({2, 1}), Scalar<int32_t>(1)}},
      {"Pack", {{"axis", A(int64_t{1})}}, {F({2}), F({2})}},
      {"Unpack", {{"num", A(int64_t{2})}}, {F({2, 3})}},
      {"Split", {{"num_split", A(int64_t{2})}}, {Scalar<int32_t>(1), F({2, 4})}},
      {"SplitV", {{"num_split", A(int64_t{2})}}, {F({5}), I32({2, -1}), Scalar<int32_t>(0)}},
      {"GatherV2", {}, {F({4, 2}), I32({3, 0}), Scalar<int32_t>(0)}},
      {"GatherV2",
       {{"batch_dims", A(int64_t{1})}},
       {F({2, 3, 2}), Literal<int32_t>({2, 2}, {2, 0, 1, 1}), Scalar<int32_t>(1)}},
      {"DynamicPartition", {{"num_partitions", A(int64_t{2})}}, {F({3, 2}), I32({1, 0, 1})}},
      {"DynamicStitch", {{"N", A(int64_t{2})}}, {I32({0, 2}), I32({1}), F({2, 2}), F({1, 2})}},
      {"TopKV2", {}, {F({2, 4}), Scalar<int32_t>(2)}},
      {"TopKV2", {{"index_type", A(DT_INT64)}}, {F({2, 4}), Scalar<int64_t>(2)}},
      {"TopK", {{"k", A(int64_t{2})}}, {F({2, 4})}},
      {"DataFormatDimMap", {}, {I32({0, 1, -1, 3})}},
      {"DataFormatVecPermute", {}, {I32({1, 2, 3, 4})}},
      {"DataFormatVecPermute",
       {{"src_format", A("NDHWC")}, {"dst_format", A("NCDHW")}},
       {Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6})}},
      {"Unique", {}, {I32({3, 1, 3, 0})}},
      {"UniqueWithCounts", {}, {I32({3, 1, 3, 0})}},
      {"Roll", {}, {F({3, 4}), I32({1, -2}), I32({0, 1})}},
      {"ReverseSequence",
       {{"seq_dim", A(int64_t{1})}, {"batch_dim", A(int64_t{0})}},
       {F({2, 3}), Literal<int64_t>({2}, {2, 3})}},
      {"ParallelConcat",
       {{"shape", A(PartialTensorShape({2, 3}))}, {"N", A(int64_t{2})}},
       {F({1, 3}), F({1, 3})}},
      {"ParallelDynamicStitch",
       {{"N", A(int64_t{2})}},
       {I32({0, 2}), I32({1}), F({2, 2}), F({1, 2})}},
      {"BroadcastArgs", {}, {I32({2, 1, 3}), I32({4, 1})}},
      {"Empty", {{"dtype", A(DT_FLOAT)}}, {I32({2, 3})}},
      {"DeepCopy", {}, {F({2, 3})}},
      {"CompareAndBitpack", {}, {F({2, 16}), Scalar<float>(0.1f)}},
      {"LinSpace", {}, {Scalar<float>(0), Scalar<float>(1), Scalar<int32_t>(5)}},
      {"RaggedRange", {}, {I32({0, 2}), I32({3, 9}), I32({1, 3})}},
      {"RaggedRange", {}, {Literal<float>({2}, {0, 1}), Scalar<float>(2), Scalar<float>(0.5f)}},
      {"SparseTensorDenseAdd",
       {},
       {Literal<int64_t>({2, 2}, {0, 1, 1, 0}), F({2}), Literal<int64_t>({2}, {2, 2}), F({2, 2})}},
      {"GatherNd", {}, {F({3, 2}), Literal<int32_t>({2, 2}, {0, 1, 2, 0})}},
      {"MatrixInverse", {}, {F({2, 3, 3})}},
      {"MatrixDeterminant", {}, {F({2, 3, 3})}},
      {"LogMatrixDeterminant", {}, {F({2, 3, 3})}},
      {"MatrixSolve", {}, {F({2, 3, 3}), F({2, 3, 2})}},
      {"MatrixTriangularSolve", {}, {F({2, 3, 3}), F({2, 3, 2})}},
      {"Cholesky", {}, {F({2, 3, 3})}},
      {"MatrixDiag", {}, {F({2, 3})}},
      {"MatrixDiagV3",
       {},
       {F({2, 2, 3}), I32({-1, 0}), Scalar<int32_t>(-1), Scalar<int32_t>(-1), Scalar<float>(0)}},
      {"MatrixDiagPart", {}, {F({2, 3, 4})}},
      {"MatrixDiagPartV3", {}, {F({2, 3, 4}), I32({-1, 2}), Scalar<float>(0)}},
      {"MatrixSetDiag", {}, {F({2, 3, 4}), F({2, 3})}},
      {"MatrixSetDiagV3", {}, {F({2, 3, 4}), F({2, 2, 3}), I32({0, 1})}},
      {"MatrixBandPart", {}, {F({2, 3, 4}), Scalar<int64_t>(1), Scalar<int64_t>(0)}},
      {"Diag", {}, {F({2, 3})}},
      {"DiagPart", {}, {F({2, 3, 2, 3})}},
      {"SegmentSum", {}, {F({4, 2}), I32({0, 0, 1, 3})}},
      {"SegmentMean", {}, {F({4, 2}), I32({0, 0, 1, 3})}},
      {"SegmentProd", {}, {F({4, 2}), I32({0, 0, 1, 3})}},
      {"SegmentMax", {}, {F({4, 2}), I32({0, 0, 1, 3})}},
      {"SegmentMin", {}, {F({4, 2}), I32({0, 0, 1, 3})}},
      {"UnsortedSegmentSum", {}, {F({4, 2}), I32({2, 0, -1, 2}), Scalar<int32_t>(3)}},
      {"UnsortedSegmentProd", {}, {F({4, 2}), I32({2, 0, -1, 2}), Scalar<int32_t>(3)}},
      {"UnsortedSegmentMax", {}, {F({4, 2}), I32({2, 0, -1, 2}), Scalar<int32_t>(3)}},
      {"UnsortedSegmentMin", {}, {F({4, 2}), I32({2, 0, -1, 2}), Scalar<int32_t>(3)}},
      {"ScatterNd", {}, {Literal<int32_t>({2, 1}, {1, 0}), F({2, 3}), I32({3, 3})}},
      {"TensorScatterUpdate", {}, {F({3, 2}), Literal<int32_t>({1, 1}, {2}), F({1, 2})}},
      {"TensorScatterUpdate",
       {{"bad_indices_policy", A("IGNORE")}},
       {F({3, 2}), Literal<int32_t>({2, 1}, {2, 7}), F({2, 2})}},
      {"GatherNd",
       {{"bad_indices_policy", A("IGNORE")}},
       {F({3, 2}), Literal<int32_t>({2, 1}, {2, 7})}},
      {"TensorScatterAdd", {}, {F({3, 2}), Literal<int32_t>({1, 1}, {2}), F({1, 2})}},
      {"TensorScatterSub", {}, {F({3, 2}), Literal<int32_t>({1, 1}, {2}), F({1, 2})}},
      {"TensorScatterMax",
       {{"bad_indices_policy", A("IGNORE")}},
       {F({3, 2}), Literal<int32_t>({2, 1}, {2, 9}), F({2, 2})}},
      {"TensorScatterMin", {}, {F({3, 2}), Literal<int32_t>({1, 1}, {2}), F({1, 2})}},
      {"Reverse", {}, {F({2, 3}), Literal<bool>({2}, {true, false})}},
      {"SpaceToBatch",
       {{"block_size", A(int64_t{2})}},
       {F({1, 2, 4, 1}), Literal<int32_t>({2, 2}, {0, 0, 1, 1})}},
      {"BatchToSpace",
       {{"block_size", A(int64_t{2})}},
       {F({4, 1, 3, 1}), Literal<int32_t>({2, 2}, {0, 0, 1, 1})}},
      {"SpaceToBatchND",
       {},
       {F({1, 2, 4, 1}), I32({2, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})}},
      {"BatchToSpaceND",
       {},
       {F({4, 1, 2, 1}), I32({2, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 1})}},
      {"ResizeBilinear", {}, {F({1, 2, 3, 2}), I32({4, 5})}},
      {"ResizeBilinearGrad", {}, {F({1, 4, 5, 2}), F({1, 2, 3, 2})}},
      {"ResizeBicubic", {{"half_pixel_centers", A(true)}}, {F({1, 2, 3, 2}), I32({4, 5})}},
      {"ResizeBicubicGrad", {}, {F({1, 4, 5, 2}), F({1, 2, 3, 2})}},
      {"ResizeArea", {}, {F({1, 3, 4, 2}), I32({2, 5})}},
      {"Qr", {{"full_matrices", A(true)}}, {F({2, 4, 3})}},
      {"Svd", {}, {F({2, 4, 3})}},
      {"SelfAdjointEigV2", {}, {Literal<float>({2, 2}, {2, 1, 1, 3})}},
      {"Lu", {}, {Literal<float>({2, 2}, {2, 1, 1, 3})}},
      {"MatrixSolveLs",
       {},
       {Literal<double>({3, 2}, {1, 0, 0, 1, 1, 1}), Literal<double>({3, 1}, {1, 2, 3}),
        Scalar<double>(0.1)}},
      {"LSTMBlockCell",
       {{"use_peephole", A(true)}},
       {F({2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}), F({8})}},
      {"BlockLSTM",
       {},
       {Scalar<int64_t>(2), F({3, 2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}),
        F({8})}},
      {"BlockLSTMV2",
       {},
       {Scalar<int64_t>(3), F({3, 2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}),
        F({8})}},
      {"GRUBlockCell", {}, {F({2, 3}), F({2, 2}), F({5, 4}), F({5, 2}), F({4}), F({2})}},
      {"LSTMBlockCellGrad",
       {{"use_peephole", A(true)}},
       {F({2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}), F({8}), F({2, 2}),
        F({2, 2}), F({2, 2}), F({2, 2}), F({2, 2}), F({2, 2}), F({2, 2}), F({2, 2})}},
      {"BlockLSTMGrad",
       {{"use_peephole", A(true)}},
       {Scalar<int64_t>(2), F({3, 2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}),
        F({8}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}),
        F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2})}},
      {"BlockLSTMGradV2",
       {{"use_peephole", A(false)}},
       {Scalar<int64_t>(3), F({3, 2, 3}), F({2, 2}), F({2, 2}), F({5, 8}), F({2}), F({2}), F({2}),
        F({8}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2}),
        F({3, 2, 2}), F({3, 2, 2}), F({3, 2, 2})}},
      {"GRUBlockCellGrad",
       {},
       {F({2, 3}), F({2, 2}), F({5, 4}), F({5, 2}), F({4}), F({2}), F({2, 2}), F({2, 2}), F({2, 2}),
        F({2, 2})}},
      {"RGBToHSV", {}, {F({2, 2, 3})}},
      {"DrawBoundingBoxes",
       {},
       {F({1, 5, 6, 3}),
        Literal<float>({1, 2, 4}, {0.2f, 0.1f, 0.8f, 0.7f, -0.5f, 0.5f, 0.5f, 1.5f})}},
      {"DrawBoundingBoxesV2",
       {},
       {F({1, 5, 6, 3}),
        Literal<float>({1, 2, 4}, {0.2f, 0.1f, 0.8f, 0.7f, -0.5f, 0.5f, 0.5f, 1.5f}),
        Literal<float>({1, 3}, {0.5f, 0.5f, 1})}},
      {"ExtractImagePatches",
       {{"ksizes", Ints({1, 2, 2, 1})},
        {"strides", Ints({1, 1, 2, 1})},
        {"rates", Ints({1, 2, 1, 1})},
        {"padding", A("SAME")}},
       {F({2, 5, 6, 2})}},
      {"MaxPoolWithArgmax",
       {{"ksize", Ints({1, 2, 2, 1})}, {"strides", Ints({1, 1, 2, 1})}, {"padding", A("VALID")}},
       {F({2, 3, 4, 2})}},
      {"MaxPoolGradWithArgmax",
       {{"ksize", Ints({1, 2, 2, 1})},
        {"strides", Ints({1, 1, 2, 1})},
        {"padding", A("VALID")},
        {"Targmax", A(DT_INT64)}},
       {F({1, 3, 4, 1}), F({1, 2, 2, 1}), Literal<int64_t>({1, 2, 2, 1}, {0, 3, 5, 11})}},
      {"CropAndResize",
       {},
       {F({2, 4, 5, 2}), Literal<float>({2, 4}, {0.1f, 0.2f, 0.8f, 0.9f, 0.5f, -0.2f, 1.3f, 0.6f}),
        I32({1, 0}), I32({3, 2})}},
      {"CropAndResizeGradImage",
       {{"T", A(DT_FLOAT)}},
       {F({2, 3, 2, 2}), Literal<float>({2, 4}, {0.1f, 0.2f, 0.8f, 0.9f, 0.5f, -0.2f, 1.3f, 0.6f}),
        I32({1, 0}), I32({2, 4, 5, 2})}},
      {"CropAndResizeGradBoxes",
       {},
       {F({2, 3, 2, 2}), F({2, 4, 5, 2}),
        Literal<float>({2, 4}, {0.1f, 0.2f, 0.8f, 0.9f, 0.5f, -0.2f, 1.3f, 0.6f}), I32({1, 0})}},
      {"NonMaxSuppression", {{"iou_threshold", A(0.5f)}}, {F({3, 4}), F({3}), Scalar<int32_t>(2)}},
      {"NonMaxSuppressionV2", {}, {F({3, 4}), F({3}), Scalar<int32_t>(2), Scalar<float>(0.5f)}},
      {"NonMaxSuppressionV3",
       {},
       {F({3, 4}), F({3}), Scalar<int32_t>(2), Scalar<float>(0.5f), Scalar<float>(0)}},
      {"NonMaxSuppressionV4",
       {{"pad_to_max_output_size", A(true)}},
       {F({3, 4}), F({3}), Scalar<int32_t>(2), Scalar<float>(0.5f), Scalar<float>(0)}},
      {"NonMaxSuppressionV5",
       {},
       {F({3, 4}), F({3}), Scalar<int32_t>(2), Scalar<float>(0.5f), Scalar<float>(0),
        Scalar<float>(0.5f)}},
      {"HSVToRGB", {}, {F({4, 3})}},
      {"AdjustHue", {}, {F({1, 2, 2, 3}), Scalar<float>(0.3f)}},
      {"AdjustSaturation", {}, {F({2, 2, 3}), Scalar<float>(1.5f)}},
      {"AdjustContrastv2", {}, {F({2, 3, 2, 1}), Scalar<float>(0.5f)}},
      {"ResizeNearestNeighbor", {}, {F({1, 2, 3, 2}), I32({4, 5})}},
      {"ResizeNearestNeighborGrad", {}, {F({1, 4, 5, 2}), I32({2, 3})}},
      {"OneHot",
       {{"axis", A(int64_t{-1})}},
       {I32({0, 2}), Scalar<int32_t>(3), Scalar<float>(1), Scalar<float>(0)}},
  };
}

std::vector<Case> MathCases() {
  return {
      {"AddV2", {}, {F({2, 3}), F({3})}},
      {"FloorDiv", {}, {I32({7, -7}), I32({2, 3})}},
      {"Div", {}, {I32({7, -7}), I32({2, 3})}},
      {"TruncateDiv", {}, {I32({7, -7}), I32({2, 3})}},
      {"TruncateMod", {}, {F({2, 3}), F({3})}},
      {"Div", {}, {Literal<int8_t>({2}, {7, -7}), Literal<int8_t>({2}, {2, 3})}},
      {"FloorMod", {}, {Literal<uint16_t>({2, 1}, {7, 9}), Literal<uint16_t>({2}, {2, 3})}},
      {"Pow", {}, {I32({2, 3}), I32({2, 1})}},
      {"Maximum", {}, {F({2, 1}), F({1, 2})}},
      {"Less", {}, {F({2}), F({2})}},
      {"Sqrt", {}, {F({3})}},
      {"AddN", {}, {F({2}), F({2}), F({2})}},
      {"AccumulateNV2", {{"shape", A(PartialTensorShape({2}))}}, {F({2}), F({2}), F({2})}},
      {"Bincount", {}, {I32({1, 1, 3, 0}), Scalar<int32_t>(5), F({4})}},
      {"HistogramFixedWidth", {}, {F({2, 3}), Literal<float>({2}, {0, 5}), Scalar<int32_t>(4)}},
      {"NthElement", {}, {F({2, 4}), Scalar<int32_t>(2)}},
      {"FakeQuantWithMinMaxArgs", {{"num_bits", A(int64_t{4})}}, {F({2, 3})}},
      {"FakeQuantWithMinMaxArgsGradient", {}, {F({2, 3}), F({2, 3})}},
      {"FakeQuantWithMinMaxVars", {}, {F({2, 3}), Scalar<float>(-1), Scalar<float>(1)}},
      {"FakeQuantWithMinMaxVarsGradient",
       {},
       {F({2, 3}), F({2, 3}), Scalar<float>(-1), Scalar<float>(1)}},
      {"FakeQuantWithMinMaxVarsPerChannel",
       {},
       {F({2, 3}), Literal<float>({3}, {-1, -2, 0}), Literal<float>({3}, {1, 2, 3})}},
      {"FakeQuantWithMinMaxVarsPerChannelGradient",
       {},
       {F({2, 3}), F({2, 3}), Literal<float>({3}, {-1, -2, 0}), Literal<float>({3}, {1, 2, 3})}},
      {"Select", {}, {Literal<bool>({2}, {true, false}), F({2, 2}), F({2, 2})}},
      {"SelectV2", {}, {Literal<bool>({2}, {true, false}), F({2, 2}), F({2})}},
      {"Sum", {{"keep_dims", A(false)}}, {F({2, 3}), I32({1})}},
      {"Mean", {{"keep_dims", A(true)}}, {F({2, 3}), Scalar<int32_t>(0)}},
      {"Max", {}, {F({2, 3, 2}), I32({0, 2})}},
      {"ArgMax", {}, {F({2, 3}), Scalar<int32_t>(1)}},
      {"MatMul", {}, {F({2, 3}), F({3, 2})}},
      {"Einsum", {{"equation", A("ij,jk->ik")}, {"N", A(int64_t{2})}}, {F({2, 3}), F({3, 2})}},
      {"BatchMatMulV2", {}, {F({2, 2, 3}), F({3, 1})}},
      {"SigmoidGrad", {}, {F({2}), F({2})}},
      {"Tan", {}, {F({3})}},
      {"Asin", {}, {F({3})}},
      {"Acos", {}, {F({3})}},
      {"Atan", {}, {F({3})}},
      {"Sinh", {}, {F({3})}},
      {"Cosh", {}, {F({3})}},
      {"Asinh", {}, {F({3})}},
      {"Acosh", {}, {F({3})}},
      {"Atanh", {}, {F({3})}},
      {"Erfc", {}, {F({3})}},
      {"Rint", {}, {F({3})}},
      {"Atan2", {}, {F({2, 3}), F({3})}},
      {"Xlogy", {}, {F({2, 3}), F({3})}},
      {"Xlog1py", {}, {F({2, 3}), F({3})}},
      {"Xdivy", {}, {F({2, 3}), F({3})}},
      {"MulNoNan", {}, {F({2, 3}), F({3})}},
      {"InvGrad", {}, {F({2, 3}), F({2, 3})}},
      {"ClipByValue", {}, {F({2, 3}), F({}), F({2, 3})}},
      {"Lgamma", {}, {F({3})}},
      {"Digamma", {}, {F({3})}},
      {"Erfinv", {}, {F({3})}},
      {"Ndtri", {}, {F({3})}},
      {"BesselI0", {}, {F({3})}},
      {"BesselI1", {}, {F({3})}},
      {"BesselI0e", {}, {F({3})}},
      {"BesselI1e", {}, {F({3})}},
      {"Igamma", {}, {F({2, 3}), F({3})}},
      {"Igammac", {}, {F({2, 3}), F({3})}},
      {"IgammaGradA", {}, {F({2, 3}), F({3})}},
      {"Zeta", {}, {F({2, 3}), F({3})}},
      {"Polygamma", {}, {F({2, 3}), F({3})}},
      {"Betainc", {}, {F({2, 3}), Scalar<float>(2), F({2, 3})}},
      {"BitwiseAnd", {}, {I32({7, -7}), I32({3, 2})}},
      {"LeftShift", {}, {I32({7, -7}), I32({3, 40})}},
      {"RightShift", {}, {I32({7, -7}), I32({1})}},
      {"Invert", {}, {I32({7, -7})}},
      {"PopulationCount", {}, {I32({7, -7})}},
  };
}

std::vector<Case> NnCases() {
  const AttrValue s1 = Ints({1, 1, 1, 1}), s2 = Ints({1, 2, 2, 1});
  const AttrValue s5 = Ints({1, 1, 1, 1, 1}), k5 = Ints({1, 2, 2, 2, 1});
  return {
      {"BiasAdd", {}, {F({2, 3}), F({3})}},
      {"BiasAddGrad", {}, {F({2, 3})}},
      {"Relu", {}, {F({4})}},
      {"Softsign", {}, {F({4})}},
      {"SoftsignGrad", {}, {F({4}), F({4})}},
      {"ReluGrad", {}, {F({4}), F({4})}},
      {"Softmax", {}, {F({2, 3})}},
      {"LogSoftmax", {}, {F({2, 3})}},
      {"SoftmaxCrossEntropyWithLogits", {}, {F({2, 3}), F({2, 3})}},
      {"SparseSoftmaxCrossEntropyWithLogits", {}, {F({2, 3}), I32({0, 2})}},
      {"Conv2D", {{"strides", s1}, {"padding", A("SAME")}}, {F({1, 4, 4, 2}), F({3, 3, 2, 2})}},
      {"Conv2D",
       {{"strides", s2},
        {"padding", A("EXPLICIT")},
        {"explicit_paddings", Ints({0, 0, 1, 1, 1, 1, 0, 0})}},
       {F({1, 4, 4, 1}), F({2, 2, 1, 1})}},
      {"Conv2DBackpropInput",
       {{"strides", s1}, {"padding", A("VALID")}},
       {I32({1, 4, 4, 1}), F({2, 2, 1, 1}), F({1, 3, 3, 1})}},
      {"Conv2DBackpropFilter",
       {{"strides", s1}, {"padding", A("VALID")}},
       {F({1, 4, 4, 1}), I32({2, 2, 1, 1}), F({1, 3, 3, 1})}},
      {"DepthwiseConv2dNative",
       {{"strides", s1}, {"padding", A("SAME")}},
       {F({1, 4, 4, 2}), F({2, 2, 2, 3})}},
      {"DepthwiseConv2dNativeBackpropInput",
       {{"strides", s1}, {"padding", A("VALID")}},
       {I32({1, 4, 4, 2}), F({2, 2, 2, 1}), F({1, 3, 3, 2})}},
      {"DepthwiseConv2dNativeBackpropFilter",
       {{"strides", s1}, {"padding", A("VALID")}},
       {F({1, 4, 4, 2}), I32({2, 2, 2, 1}), F({1, 3, 3, 2})}},
      {"MaxPool", {{"ksize", s2}, {"strides", s2}, {"padding", A("VALID")}}, {F({1, 4, 4, 1})}},
      {"AvgPool", {{"ksize", s2}, {"strides", s2}, {"padding", A("SAME")}}, {F({1, 3, 3, 2})}},
      {"MaxPoolGrad",
       {{"ksize", s2}, {"strides", s2}, {"padding", A("VALID")}},
       {F({1, 4, 4, 1}), F({1, 2, 2, 1}), F({1, 2, 2, 1})}},
      {"AvgPoolGrad",
       {{"ksize", s2}, {"strides", s2}, {"padding", A("VALID")}},
       {I32({1, 4, 4, 1}), F({1, 2, 2, 1})}},
      {"Conv3D",
       {{"strides", Ints({1, 1, 2, 1, 1})}, {"padding", A("SAME")}},
       {F({1, 2, 3, 3, 2}), F({2, 2, 2, 2, 3})}},
      {"Conv3DBackpropInputV2",
       {{"strides", s5}, {"padding", A("VALID")}},
       {I32({1, 2, 3, 3, 1}), F({2, 2, 2, 1, 1}), F({1, 1, 2, 2, 1})}},
      {"Conv3DBackpropFilterV2",
       {{"strides", s5}, {"padding", A("VALID")}},
       {F({1, 2, 3, 3, 1}), I32({2, 2, 2, 1, 1}), F({1, 1, 2, 2, 1})}},
      {"Conv3DBackpropInput",
       {{"strides", s5}, {"padding", A("VALID")}},
       {F({1, 2, 3, 3, 1}), F({2, 2, 2, 1, 1}), F({1, 1, 2, 2, 1})}},
      {"Conv3DBackpropFilter",
       {{"strides", s5}, {"padding", A("VALID")}},
       {F({1, 2, 3, 3, 1}), F({2, 2, 2, 1, 1}), F({1, 1, 2, 2, 1})}},
      {"MaxPool3D", {{"ksize", k5}, {"strides", k5}, {"padding", A("SAME")}}, {F({1, 3, 3, 3, 2})}},
      {"AvgPool3D",
       {{"ksize", k5}, {"strides", s5}, {"padding", A("VALID")}},
       {F({1, 3, 3, 3, 2})}},
      {"MaxPool3DGrad",
       {{"ksize", k5}, {"strides", k5}, {"padding", A("VALID")}},
       {F({1, 2, 2, 2, 1}), F({1, 1, 1, 1, 1}), F({1, 1, 1, 1, 1})}},
      {"AvgPool3DGrad",
       {{"ksize", k5}, {"strides", s5}, {"padding", A("VALID")}},
       {I32({1, 3, 3, 3, 1}), F({1, 2, 2, 2, 1})}},
      {"MaxPool3DGradGrad",
       {{"ksize", k5}, {"strides", k5}, {"padding", A("SAME")}},
       {F({1, 3, 3, 3, 1}), F({1, 2, 2, 2, 1}), F({1, 3, 3, 3, 1})}},
      {"LRN", {{"depth_radius", A(int64_t{2})}}, {F({1, 2, 2, 5})}},
      {"LRNGrad",
       {{"depth_radius", A(int64_t{2})}},
       {F({1, 1, 1, 5}), F({1, 1, 1, 5}), F({1, 1, 1, 5})}},
      {"FusedBatchNormV3", {}, {F({2, 1, 1, 3}), F({3}), F({3}), F({0}), F({0})}},
      {"FusedBatchNormV2", {}, {F({2, 1, 1, 3}), F({3}), F({3}), F({0}), F({0})}},
      {"FusedBatchNormGradV2", {}, {F({2, 1, 1, 3}), F({2, 1, 1, 3}), F({3}), F({3}), F({3})}},
      {"FusedBatchNormGradV3",
       {},
       {F({2, 1, 1, 3}), F({2, 1, 1, 3}), F({3}), F({3}), F({3}), F({0})}},
      {"L2Loss", {}, {F({3})}},
      {"InTopKV2", {}, {F({2, 3}), I32({0, 1}), Scalar<int32_t>(1)}},
  };
}

// A 2x3 RGB image, and it as JPEG and PNG; crops of a 40x30 image.
std::vector<Case> ImageCodecCases() {
  std::vector<uint8_t> pixels(18);
  for (int i = 0; i < 18; ++i) pixels[i] = static_cast<uint8_t>(i * 14);
  const Tensor image = Literal<uint8_t>({2, 3, 3}, pixels);
  const std::string jpeg = jpeg::Encode(pixels.data(), 2, 3, 3, jpeg::EncodeOptions()).value();
  const std::string png = png::Encode(pixels.data(), 2, 3, 3, 8, -1).value();
  return {
      {"DecodeJpeg", {}, {Str(jpeg)}},
      {"DecodeJpeg",
       {{"channels", A(int64_t{1})}, {"ratio", A(int64_t{2})}, {"acceptable_fraction", A(0.5f)}},
       {Str(jpeg)}},
      {"DecodeAndCropJpeg", {}, {Str(jpeg), I32({0, 1, 2, 2})}},
      {"ExtractJpegShape", {}, {Str(jpeg)}},
      {"EncodeJpeg", {{"quality", A(int64_t{80})}, {"x_density", A(int64_t{72})}}, {image}},
      {"DecodePng", {{"channels", A(int64_t{4})}}, {Str(png)}},
      {"DecodeImage", {}, {Str(png)}},
      {"EncodePng", {{"compression", A(int64_t{3})}}, {image}},
      {"SampleDistortedBoundingBoxV2",
       {{"seed", A(int64_t{1})}, {"max_attempts", A(int64_t{5})}},
       {I32({40, 30, 3}), Literal<float>({1, 1, 4}, {0.1f, 0.1f, 0.9f, 0.8f}),
        Scalar<float>(0.1f)}},
      {"SampleDistortedBoundingBox",
       {{"seed", A(int64_t{1})}, {"use_image_if_no_bounding_boxes", A(true)}},
       {I32({40, 30, 3}), Tensor(DT_FLOAT, TensorShape({1, 0, 4}))}},
  };
}

std::vector<Case> StateCases() {
  return {
      {"RandomUniform", {{"dtype", A(DT_FLOAT)}, {"seed", A(int64_t{1})}}, {I32({2, 3})}},
      {"TruncatedNormal", {{"dtype", A(DT_FLOAT)}, {"seed", A(int64_t{1})}}, {I32({4})}},
      {"RandomUniformInt",
       {{"seed", A(int64_t{1})}},
       {I32({3}), Scalar<int32_t>(0), Scalar<int32_t>(5)}},
      {"RandomShuffle", {{"seed", A(int64_t{1})}}, {F({4, 2})}},
      {"StatelessRandomUniform",
       {{"dtype", A(DT_FLOAT)}},
       {I32({2, 3}), Literal<int64_t>({2}, {1, 2})}},
      {"StatelessTruncatedNormal", {{"dtype", A(DT_DOUBLE)}}, {I32({5}), I32({1, 2})}},
      {"StatelessRandomUniformInt",
       {},
       {I32({3}), Literal<int64_t>({2}, {1, 2}), Scalar<int32_t>(0), Scalar<int32_t>(10)}},
      {"StatelessRandomGetKeyCounter", {}, {Literal<int64_t>({2}, {7, 8})}},
      {"ApplyGradientDescent", {}, {F({3}), Scalar<float>(0.1f), F({3})}},
      {"ApplyMomentum", {}, {F({3}), F({3}), Scalar<float>(0.1f), F({3}), Scalar<float>(0.9f)}},
      {"ApplyAdam",
       {},
       {F({2}), F({2}), F({2}), Scalar<float>(0.9f), Scalar<float>(0.99f), Scalar<float>(0.1f),
        Scalar<float>(0.9f), Scalar<float>(0.99f), Scalar<float>(1e-8f), F({2})}},
      {"SparseApplyMomentum",
       {},
       {F({4, 2}), F({4, 2}), Scalar<float>(0.1f), F({3, 2}), I32({3, 0, 3}), Scalar<float>(0.9f)}},
      {"SparseApplyAdagrad",
       {},
       {F({4, 2}), F({4, 2}), Scalar<float>(0.1f), F({2, 2}), I32({1, 2})}},
      {"SparseApplyRMSProp",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), Scalar<float>(0.1f), Scalar<float>(0.9f),
        Scalar<float>(0.5f), Scalar<float>(1e-10f), F({2, 2}), I32({3, 1})}},
      {"SparseToDense",
       {},
       {Literal<int64_t>({2, 2}, {0, 1, 1, 0}), Literal<int64_t>({2}, {3, 3}), F({2}),
        Scalar<float>(0)}},
      {"SparseFillEmptyRows",
       {},
       {Literal<int64_t>({2, 2}, {1, 0, 3, 1}), F({2}), Literal<int64_t>({2}, {4, 2}),
        Scalar<float>(0)}},
      {"SparseFillEmptyRowsGrad", {}, {Literal<int64_t>({2}, {1, 3}), F({4})}},
      {"SparseReshape",
       {},
       {Literal<int64_t>({2, 2}, {0, 1, 2, 3}), Literal<int64_t>({2}, {3, 4}),
        Literal<int64_t>({2}, {2, -1})}},
      {"SparseSegmentSum", {}, {F({4, 2}), I32({0, 3, 3}), I32({0, 0, 2})}},
      {"SparseSegmentMeanWithNumSegments",
       {},
       {F({4, 2}), I32({0, 3, 3}), I32({0, 0, 2}), Scalar<int32_t>(4)}},
      {"SparseSegmentSqrtN", {}, {F({4, 2}), I32({1, 2}), I32({0, 1})}},
      {"SparseSegmentSumGrad", {}, {F({3, 2}), I32({0, 3, 3}), I32({0, 0, 2}), Scalar<int32_t>(4)}},
      {"SparseSegmentMeanGrad",
       {},
       {F({3, 2}), I32({0, 3, 3}), I32({0, 0, 2}), Scalar<int32_t>(4)}},
      {"Bucketize", {{"boundaries", A(std::vector<float>{0, 1, 3})}}, {F({2, 3})}},
      {"ApplyAdagradV2", {}, {F({3}), F({3}), Scalar<float>(0.1f), Scalar<float>(1e-7f), F({3})}},
      {"ApplyAdadelta",
       {},
       {F({3}), F({3}), F({3}), Scalar<float>(1), Scalar<float>(0.95f), Scalar<float>(1e-6f),
        F({3})}},
      {"ApplyAdaMax",
       {},
       {F({2}), F({2}), F({2}), Scalar<float>(0.9f), Scalar<float>(0.1f), Scalar<float>(0.9f),
        Scalar<float>(0.99f), Scalar<float>(1e-7f), F({2})}},
      {"ApplyCenteredRMSProp",
       {},
       {F({2}), F({2}), F({2}), F({2}), Scalar<float>(0.1f), Scalar<float>(0.9f),
        Scalar<float>(0.5f), Scalar<float>(1e-7f), F({2})}},
      {"ApplyFtrl",
       {},
       {F({2}), F({2}), F({2}), F({2}), Scalar<float>(0.1f), Scalar<float>(0.05f),
        Scalar<float>(0.01f), Scalar<float>(-0.5f)}},
      {"ApplyFtrlV2",
       {{"multiply_linear_by_lr", A(true)}},
       {F({2}), F({2}), F({2}), F({2}), Scalar<float>(0.1f), Scalar<float>(0.05f),
        Scalar<float>(0.01f), Scalar<float>(0.2f), Scalar<float>(-0.7f)}},
      {"SparseApplyAdagradV2",
       {},
       {F({4, 2}), F({4, 2}), Scalar<float>(0.1f), Scalar<float>(1e-7f), F({2, 2}), I32({1, 2})}},
      {"SparseApplyFtrl",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), F({2, 2}), I32({3, 1}), Scalar<float>(0.1f),
        Scalar<float>(0.05f), Scalar<float>(0.01f), Scalar<float>(-0.5f)}},
      {"SparseApplyFtrlV2",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), F({2, 2}), I32({3, 1}), Scalar<float>(0.1f),
        Scalar<float>(0.05f), Scalar<float>(0.01f), Scalar<float>(0.2f), Scalar<float>(-0.5f)}},
      {"ScatterAdd", {}, {F({4, 2}), I32({3, 0, 3}), F({3, 2})}},
      {"ScatterSub", {}, {F({4, 2}), Literal<int32_t>({2, 1}, {1, 2}), F({2, 1, 2})}},
      {"ScatterUpdate", {}, {F({4, 2}), I32({2, 2}), Scalar<float>(1)}},
      {"StringToHashBucketFast", {{"num_buckets", A(int64_t{7})}}, {Str("word")}},
      {"CheckNumerics", {{"message", A("m")}}, {F({3})}},
      {"CheckNumericsV2", {{"message", A("m")}}, {F({3})}},
      {"Assert", {}, {Scalar<bool>(true), F({2})}},
      {"ScalarSummary", {}, {Str("t"), Scalar<float>(1)}},
      {"HistogramSummary", {}, {Str("h"), F({4})}},
      {"StackV2", {{"elem_type", A(DT_FLOAT)}}, {Scalar<int32_t>(4)}},
  };
}

// ---- Mutations ----

template <typename T>
Tensor FilledLike(const Tensor& t, T v) {
  return Filled<T>(t.shape(), v);
}

// Same dtype, other shapes (T1, T2).
std::vector<Tensor> ShapeMutations(const Tensor& t) {
  std::vector<TensorShape> shapes = {TensorShape({}), TensorShape({1}), TensorShape({0}),
                                     TensorShape({2, 2, 2, 2, 2})};
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  std::vector<int64_t> up = dims;
  up.push_back(1);
  shapes.push_back(TensorShape(up));
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> e = dims;
    e[d] = 0;
    shapes.push_back(TensorShape(e));
  }
  std::vector<Tensor> out;
  for (const TensorShape& s : shapes) {
    Tensor m(t.dtype(), s);
    if (t.dtype() == DT_STRING) {
      for (int64_t i = 0; i < m.NumElements(); ++i) m.data<std::string>()[i] = "x";
    } else if (m.NumElements() > 0) {
      std::memset(m.raw_data(), 1, m.TotalBytes());  // small positive ints / finite floats
      if (t.dtype() == DT_FLOAT) m.flat<float>().setConstant(1);
      if (t.dtype() == DT_BOOL) m.flat<bool>().setConstant(true);
    }
    out.push_back(m);
  }
  return out;
}

// Same shape, hostile values (T3, T4, T8).
std::vector<Tensor> ValueMutations(const Tensor& t) {
  std::vector<Tensor> out;
  if (t.dtype() == DT_INT32) {
    for (int32_t v : {-1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                      static_cast<int32_t>(0xdeadbeef), -1879048192, 0}) {
      out.push_back(FilledLike<int32_t>(t, v));
    }
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : {int64_t{-1}, int64_t{-1250000000000}, int64_t{1} << 62,
                      std::numeric_limits<int64_t>::max(), int64_t{0xdeadbeef}}) {
      out.push_back(FilledLike<int64_t>(t, v));
    }
  } else if (t.dtype() == DT_FLOAT) {
    for (float v : {std::nanf(""), INFINITY, -INFINITY, 1e20f, -0.0f, 1e-45f}) {
      out.push_back(FilledLike<float>(t, v));
    }
  }
  return out;
}

// Integer attrs and list(int) entries set to hostile values (T5).
std::vector<std::map<std::string, AttrValue>> AttrMutations(
    const std::map<std::string, AttrValue>& attrs) {
  std::vector<std::map<std::string, AttrValue>> out;
  const std::vector<int64_t> bad = {0, -1, 0x7fffffff, int64_t{1} << 62};
  for (const auto& [name, value] : attrs) {
    if (value.value_case() == AttrValue::kI) {
      for (int64_t b : bad) {
        auto m = attrs;
        m[name].set_i(b);
        out.push_back(m);
      }
    } else if (value.has_list() && value.list().i_size() > 0) {
      for (int k = 0; k < value.list().i_size(); ++k) {
        for (int64_t b : bad) {
          auto m = attrs;
          m[name].mutable_list()->set_i(k, b);
          out.push_back(m);
        }
      }
    }
  }
  return out;
}

bool AcceptableError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
      return true;
    default:
      return false;
  }
}

// The variant as Const nodes (names prefixed with `prefix`) added to
// `session` by Extend and run: the same values now also pass Const
// decoding and the shape functions at import. Extend leaves the graph as
// it was when it fails. Returns a failure description or "".
std::string RunInGraph(KernelRunner& r, const std::vector<Tensor>& inputs, Session* session,
                       const std::string& prefix) {
  absl::StatusOr<NodeDef> def = r.CompleteNodeDef(inputs);
  if (!def.ok()) return AcceptableError(def.status()) ? "" : def.status().ToString();
  GraphDef g;
  for (size_t i = 0; i < inputs.size(); ++i) {
    NodeDef* c = g.add_node();
    c->set_name(absl::StrCat(prefix, "in", i));
    c->set_op("Const");
    (*c->mutable_attr())["dtype"] = A(inputs[i].dtype());
    *(*c->mutable_attr())["value"].mutable_tensor() = inputs[i].AsProto();
    def->add_input(c->name());
  }
  def->set_name(prefix + "k");
  *g.add_node() = *def;
  absl::Status s = session->Extend(g);
  if (s.ok()) {
    const bool has_outputs = OpRegistry::Global()->Find(def->op())->op_def.output_arg_size() > 0;
    std::vector<Tensor> out;
    s = has_outputs ? session->Run({}, {def->name() + ":0"}, {}, &out)
                    : session->Run({}, {}, {def->name()}, &out);
  }
  return s.ok() || AcceptableError(s) ? "" : absl::StrCat("in a graph: ", s.ToString());
}

// Runs one variant on its own and in `session`'s graph; returns a failure
// description or "".
std::string RunVariant(const std::string& op, const std::map<std::string, AttrValue>& attrs,
                       const std::vector<Tensor>& inputs, Session* session) {
  static int variant = 0;
  KernelRunner r(op);
  for (const auto& [name, value] : attrs) r.Attr(name, value);
  const std::string in_graph = RunInGraph(r, inputs, session, absl::StrCat("v", variant++, "/"));
  if (!in_graph.empty()) return in_graph;
  absl::StatusOr<std::vector<Tensor>> out = r.Run(inputs);
  if (out.ok()) {
    for (const Tensor& t : *out) {
      if (!t.IsInitialized()) return "an output is uninitialised";
    }
    return "";
  }
  if (!AcceptableError(out.status())) return out.status().ToString();
  return "";
}

// Legal but huge requests (OneHot of depth 2^31 - 1, Range over all int32)
// must fail fast with ResourceExhausted instead of paging in tens of GiB.
// KernelRunner's allocator is capped; the Session's host allocator is not,
// so the process's address space is (4 GiB). Not under ASan or TSan, which
// reserve terabytes of shadow memory and cap allocations themselves
// (max_allocation_size_mb: .bazelrc, tools/tsan). TSan is found at run time:
// --config=tsan hides __SANITIZE_THREAD__ from the headers.
void CapAddressSpace() {
#ifndef __SANITIZE_ADDRESS__
  if (dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr) return;
  static const bool capped = [] {
    rlimit limit{size_t{4} << 30, size_t{4} << 30};
    return setrlimit(RLIMIT_AS, &limit) == 0;
  }();
  ASSERT_TRUE(capped);
#endif
}

void RunTable(const std::vector<Case>& cases) {
  CapAddressSpace();
  int variants = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    // One session per case: sessions are cheap to use, not to make.
    absl::StatusOr<std::unique_ptr<Session>> made = NewSession(SessionOptions());
    ASSERT_TRUE(made.ok()) << made.status();
    Session* session = made->get();
    ASSERT_EQ(RunVariant(c.op, c.attrs, c.inputs, session), "") << "the valid case must run";
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::vector<Tensor> mutated = ShapeMutations(c.inputs[i]);
      for (Tensor& t : ValueMutations(c.inputs[i])) mutated.push_back(t);
      for (const Tensor& t : mutated) {
        std::vector<Tensor> inputs = c.inputs;
        inputs[i] = t;
        ++variants;
        EXPECT_EQ(RunVariant(c.op, c.attrs, inputs, session), "")
            << "input " << i << " = " << t.DebugString();
      }
    }
    for (const auto& attrs : AttrMutations(c.attrs)) {
      ++variants;
      std::string desc;
      for (const auto& [k, v] : attrs) desc += k + "=" + SummarizeAttrValue(v) + " ";
      EXPECT_EQ(RunVariant(c.op, attrs, c.inputs, session), "") << desc;
    }
  }
  EXPECT_GT(variants, static_cast<int>(cases.size()) * 5);
}

TEST(BadInputsTest, ArrayOps) { RunTable(ArrayCases()); }
TEST(BadInputsTest, MathOps) { RunTable(MathCases()); }
TEST(BadInputsTest, NnOps) { RunTable(NnCases()); }
TEST(BadInputsTest, StateRandomAndLoggingOps) { RunTable(StateCases()); }
TEST(BadInputsTest, ImageCodecs) { RunTable(ImageCodecCases()); }

// ---- Specific advisories ----

TEST(BadInputsTest, ReshapeTo255DimsIsAnError) {  // tfsa-2022-085
  KernelRunner r("Reshape");
  const auto out = r.Run({F({0}), Literal<int32_t>({255}, std::vector<int32_t>(255, 0))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BadInputsTest, Conv2DEmptyInputWithExplicitPadding) {  // tfsa-2022-124
  KernelRunner r("Conv2D");
  r.Attr("strides", {1, 1, 1, 1})
      .Attr("padding", "EXPLICIT")
      .Attr("explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0});
  const auto out = r.Run({F({1, 0, 2, 1}), F({1, 1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 2, 4, 1}));
}

TEST(BadInputsTest, AvgPoolGradHugeNegativeShape) {  // tfsa-2022-100, tfsa-2023-010
  KernelRunner r("AvgPoolGrad");
  r.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_EQ(r.Run({I32({-536870912, -536870912, -536870912, -536870912}), F({1, 1, 1, 1})})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Run({I32({1, 4, 4, 1}), F({1, 5, 5, 1})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BadInputsTest, DtypeConfusionIsCaughtBeforeTheKernel) {  // CVE-2022-23583
  KernelRunner r("AddV2");
  r.Attr("T", DT_INT32);
  EXPECT_THAT(r.Run({F({2}), F({2})}).status().message(), HasSubstr("should be int32"));
}

TEST(BadInputsTest, ListArityMismatchIsCaught) {  // tfsa-2022-145 family
  KernelRunner r("AddN");
  r.Attr("N", int64_t{3});
  EXPECT_THAT(r.Run({F({2}), F({2})}), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                         "AddN takes 3 inputs, given 2"));
  KernelRunner c("ConcatV2");
  c.Attr("N", int64_t{1});
  EXPECT_THAT(c.Run({F({2}), Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Value for attr 'N' of 1 must be at least minimum 2"));
}

TEST(BadInputsTest, NanSizesAndIndices) {  // tfsa-2022-080 family
  KernelRunner r("Range");
  EXPECT_THAT(
      r.Run({Scalar<float>(0), Scalar<float>(NAN), Scalar<float>(1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Range of nan elements is too large"));
  EXPECT_THAT(
      r.Run({Scalar<float>(0), Scalar<float>(INFINITY), Scalar<float>(1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Range of inf elements is too large"));
  KernelRunner c("Cast");
  c.Attr("DstT", DT_INT64);
  EXPECT_THAT(RunOk(c, {Literal<float>({2}, {NAN, -INFINITY})}),
              TensorIs<int64_t>({2}, {0, std::numeric_limits<int64_t>::min()}));
}

TEST(BadInputsTest, GatherNegativeAndHugeIndices) {  // CVE-2021-37654 family
  KernelRunner g("GatherV2");
  for (int32_t bad :
       {-1, 4, 5, std::numeric_limits<int32_t>::max(), static_cast<int32_t>(0xdeadbeef)}) {
    EXPECT_EQ(g.Run({F({4, 2}), I32({0, bad}), Scalar<int32_t>(0)}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace towerflow
