// The finite-difference cases of the array gradients (array_grad.cc and image_grad.cc):
// see gradient_functions_test.cc.
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/manip_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/matrix_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/scan_ops.h"
#include "ops/gen/sparse_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {

std::vector<GradCase> ArrayCases() {
  return {
      // Shapes and data movement.
      Unary("Identity", [](const Scope& s, Output x) { return ops::Identity(s, x); }),
      Unary("Snapshot", [](const Scope& s, Output x) { return ops::Snapshot(s, x); }),
      Unary("DebugGradientIdentity",
            [](const Scope& s, Output x) { return ops::DebugGradientIdentity(s, x); }),
      Unary("DebugIdentityV2", [](const Scope& s, Output x) { return ops::DebugIdentityV2(s, x); }),
      Unary("PlaceholderWithDefault",
            [](const Scope& s, Output x) {
              return ops::PlaceholderWithDefault(s, x, PartialTensorShape({2, 3}));
            }),
      Unary("Print", [](const Scope& s, Output x) { return ops::Print(s, x, {x}); }),
      Unary("CheckNumerics",
            [](const Scope& s, Output x) { return ops::CheckNumerics(s, x, "x"); }),
      Unary("CheckNumericsV2",
            [](const Scope& s, Output x) { return ops::CheckNumericsV2(s, x, "x"); }),
      Unary("EnsureShape",
            [](const Scope& s, Output x) {
              return ops::EnsureShape(s, x, PartialTensorShape({-1, 3}));
            }),
      {"IdentityN",
       {S({2}), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return ops::IdentityN(s, {x[0], x[1]}).output;
       }},
      Unary("Reshape",
            [](const Scope& s, Output x) {
              return ops::Reshape(s, x, {3, -1});
            }),
      Unary("ExpandDims", [](const Scope& s, Output x) { return ops::ExpandDims(s, x, 1); }),
      Unary(
          "Squeeze", [](const Scope& s, Output x) { return ops::Squeeze(s, x); }, S({2, 1, 3})),
      Unary(
          "Transpose",
          [](const Scope& s, Output x) {
            return ops::Transpose(s, x, {2, 0, 1});
          },
          S({2, 3, 2})),
      {"TensorStridedSliceUpdate",
       {S({3, 4}), S({2})},
       [](const Scope& s, const Outs& x) -> Outs {
         // x[1:3, ::2] = v, v [2] broadcast over the slice's rows.
         return {ops::TensorStridedSliceUpdate(s, x[0], {1, 0}, {3, 4}, {1, 2}, x[1])};
       }},
      {"ConcatV2",
       {S({2, 1}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::ConcatV2(s, {x[0], x[1]}, -1)};
       }},
      {"Concat",
       {S({1, 3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Concat(s, 0, {x[0], x[1]})};
       }},
      Unary(
          "Split", [](const Scope& s, Output x) { return ops::Split(s, 1, x, 2).output[1]; },
          S({2, 4})),
      {"SplitV",
       {S({2, 5})},
       [](const Scope& s, const Outs& x) -> Outs {
         return ops::SplitV(s, x[0], {2, 3}, 1, 2).output;
       }},
      {"Pack",
       {S({2}), S({2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Pack(s, {x[0], x[1]}, ops::Pack::Axis(1))};
       }},
      {"Unpack",
       {S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return ops::Unpack(s, x[0], 3, ops::Unpack::Axis(1)).output;
       }},
      Unary(
          "Slice",
          [](const Scope& s, Output x) {
            return ops::Slice(s, x, {1, 0}, {-1, 2});
          },
          S({3, 3})),
      Unary(
          "StridedSlice",
          [](const Scope& s, Output x) {
            return ops::StridedSlice(s, x, {0, 3}, {3, 0}, {2, -1},
                                     ops::StridedSlice::BeginMask(0).EndMask(2));
          },
          S({3, 4})),
      Unary(
          "StridedSliceGrad",
          [](const Scope& s, Output dy) {
            return ops::StridedSliceGrad(s, {3, 4}, {0, 3}, {3, 0}, {2, -1}, dy,
                                         ops::StridedSliceGrad::BeginMask(0).EndMask(2));
          },
          S({2, 4})),
      Unary(
          "UnsortedSegmentSum",
          [](const Scope& s, Output x) {
            return ops::UnsortedSegmentSum(s, x, {1, -1, 1, 0}, 3);
          },
          S({4, 2})),
      Unary(
          "SegmentSum",
          [](const Scope& s, Output x) {
            return ops::SegmentSum(s, x, {0, 0, 2, 3});
          },
          S({4, 2})),
      Unary(
          "SegmentMean",
          [](const Scope& s, Output x) {
            return ops::SegmentMean(s, x, {0, 0, 0, 2});
          },
          S({4, 2})),
      // Row 3 picked twice, row 1 never, segment 1 empty.
      Unary(
          "SparseSegmentSum",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentSum(s, x, {0, 2, 3, 3}, {0, 0, 2, 2});
          },
          S({4, 2})),
      Unary(
          "SparseSegmentMean",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentMean(s, x, {0, 2, 3, 3, 1}, {0, 0, 2, 2, 2});
          },
          S({4, 2})),
      Unary(
          "SparseSegmentSqrtN",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentSqrtN(s, x, {0, 2, 3, 3, 1}, {0, 0, 2, 2, 2});
          },
          S({4, 2})),
      Unary(
          "SparseSegmentSumWithNumSegments",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentSumWithNumSegments(s, x, {3, 1}, {1, 1}, 4);
          },
          S({4, 2})),
      Unary(
          "SparseSegmentMeanWithNumSegments",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentMeanWithNumSegments(s, x, {3, 1, 0}, {1, 1, 2}, 4);
          },
          S({4, 2})),
      Unary(
          "SparseSegmentSqrtNWithNumSegments",
          [](const Scope& s, Output x) {
            return ops::SparseSegmentSqrtNWithNumSegments(s, x, {3, 1, 0}, {0, 0, 2}, 3);
          },
          S({4, 2})),
      Unary(
          "SegmentMax",
          [](const Scope& s, Output x) {
            return ops::SegmentMax(s, x, {0, 0, 1, 1, 1});
          },
          S({5, 2})),
      Unary(
          "SegmentMin",
          [](const Scope& s, Output x) {
            return ops::SegmentMin(s, x, {0, 1, 1, 3, 3});
          },
          S({5, 2})),
      Unary(
          "SegmentProd",
          [](const Scope& s, Output x) {
            return ops::SegmentProd(s, x, {0, 0, 1, 1, 1});
          },
          S({5, 2}, 0.5, 1.5)),
      Unary(
          "UnsortedSegmentMax",
          [](const Scope& s, Output x) {
            return ops::UnsortedSegmentMax(s, x, {2, 0, -1, 2, 0}, 4);
          },
          S({5, 2})),
      Unary(
          "UnsortedSegmentMin",
          [](const Scope& s, Output x) {
            return ops::UnsortedSegmentMin(s, x, {2, 0, -1, 2, 0}, 3);
          },
          S({5, 2})),
      Unary(
          "UnsortedSegmentProd",
          [](const Scope& s, Output x) {
            return ops::UnsortedSegmentProd(s, x, {2, 0, -1, 2, 0}, 3);
          },
          S({5, 2}, 0.5, 1.5)),
      // The diagonal and band ops.
      Unary(
          "MatrixDiag", [](const Scope& s, Output x) { return ops::MatrixDiag(s, x); }, S({2, 3})),
      Unary(
          "MatrixDiagV2",
          [](const Scope& s, Output x) {
            return ops::MatrixDiagV2(s, x, {-1, 1}, -1, -1, 0.f);
          },
          S({2, 3, 3})),
      Unary(
          "MatrixDiagV3",
          [](const Scope& s, Output x) {
            return ops::MatrixDiagV3(s, x, {-1, 1}, 4, -1, 0.f);
          },
          S({2, 3, 3})),
      Unary(
          "MatrixDiagPart", [](const Scope& s, Output x) { return ops::MatrixDiagPart(s, x); },
          S({2, 3, 4})),
      Unary(
          "MatrixDiagPartV2",
          [](const Scope& s, Output x) {
            return ops::MatrixDiagPartV2(s, x, {-1, 2}, 0.f);
          },
          S({2, 3, 4})),
      Unary(
          "MatrixDiagPartV3",
          [](const Scope& s, Output x) {
            return ops::MatrixDiagPartV3(s, x, {-1, 2}, 0.f);
          },
          S({2, 3, 4})),
      Binary(
          "MatrixSetDiag",
          [](const Scope& s, Output x, Output d) { return ops::MatrixSetDiag(s, x, d); },
          S({2, 3, 4}), S({2, 3})),
      Binary(
          "MatrixSetDiagV2",
          [](const Scope& s, Output x, Output d) {
            return ops::MatrixSetDiagV2(s, x, d, {0, 1});
          },
          S({2, 3, 4}), S({2, 2, 3})),
      Binary(
          "MatrixSetDiagV3",
          [](const Scope& s, Output x, Output d) {
            return ops::MatrixSetDiagV3(s, x, d, {0, 1});
          },
          S({2, 3, 4}), S({2, 2, 3})),
      Unary(
          "MatrixBandPart",
          [](const Scope& s, Output x) { return ops::MatrixBandPart(s, x, 1, 0); }, S({2, 3, 4})),
      Unary(
          "Diag", [](const Scope& s, Output x) { return ops::Diag(s, x); }, S({2, 3})),
      Unary(
          "DiagPart", [](const Scope& s, Output x) { return ops::DiagPart(s, x); },
          S({2, 3, 2, 3})),
      // TensorArrays: each pair of a writing and a reading op, one case per
      // op whose gradient it exercises.
      Unary(
          "TensorArrayWriteV3",
          [](const Scope& s, Output x) {
            const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
            const Output flow = ops::TensorArrayWriteV3(s, ta.handle, 1, x, ta.flow);
            return ops::TensorArrayReadV3(s, ta.handle, 1, flow, DT_FLOAT);
          },
          S({2, 3})),
      Unary(
          "TensorArrayReadV3",
          [](const Scope& s, Output x) {
            // Element 1 is never read: its gradient is zeros of the shape
            // the writes fixed (Python's infer_shape), as in TF.
            const ops::TensorArrayV3 ta(s, 2, DT_FLOAT,
                                        ops::TensorArrayV3::IdenticalElementShapes(true));
            const Output flow = ops::TensorArrayScatterV3(s, ta.handle, {1, 0}, x, ta.flow);
            return ops::Square(s, ops::TensorArrayReadV3(s, ta.handle, 0, flow, DT_FLOAT));
          },
          S({2, 3})),
      Unary(
          "TensorArrayScatterV3",
          [](const Scope& s, Output x) {
            const ops::TensorArrayV3 ta(s, 3, DT_FLOAT);
            const Output flow = ops::TensorArrayScatterV3(s, ta.handle, {2, 0}, x, ta.flow);
            return ops::TensorArrayGatherV3(s, ta.handle, {0, 2}, flow, DT_FLOAT);
          },
          S({2, 3})),
      Unary(
          "TensorArrayGatherV3",
          [](const Scope& s, Output x) {
            const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
            const Output flow = ops::TensorArrayScatterV3(s, ta.handle, {0, 1}, x, ta.flow);
            return ops::Square(s, ops::TensorArrayGatherV3(s, ta.handle, {1, 0}, flow, DT_FLOAT));
          },
          S({2, 3})),
      Unary(
          "TensorArraySplitV3",
          [](const Scope& s, Output x) {
            const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
            const Output flow = ops::TensorArraySplitV3(
                s, ta.handle, x, ops::Const(s, {int64_t{1}, int64_t{3}}), ta.flow);
            return ops::TensorArrayConcatV3(s, ta.handle, flow, DT_FLOAT).value;
          },
          S({4, 2})),
      Unary(
          "TensorArrayConcatV3",
          [](const Scope& s, Output x) {
            const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
            const Output flow = ops::TensorArraySplitV3(
                s, ta.handle, x, ops::Const(s, {int64_t{3}, int64_t{1}}), ta.flow);
            return ops::Square(s, ops::TensorArrayConcatV3(s, ta.handle, flow, DT_FLOAT).value);
          },
          S({4, 2})),
      Unary(
          "DynamicPartition",
          [](const Scope& s, Output x) {
            return ops::DynamicPartition(s, x, {1, 0, 1, 2}, 3).outputs[1];
          },
          S({4, 2})),
      {"DynamicStitch",
       {S({2, 2}), S({3, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {
             ops::DynamicStitch(s, {ops::Const(s, {0, 3}), ops::Const(s, {1, 4, 2})}, {x[0], x[1]})
                 .merged};
       }},
      {"ParallelDynamicStitch",
       {S({2, 2}), S({3, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::ParallelDynamicStitch(s, {ops::Const(s, {0, 3}), ops::Const(s, {1, 4, 2})},
                                            {x[0], x[1]})
                     .merged};
       }},
      Unary(
          "NthElement", [](const Scope& s, Output x) { return ops::NthElement(s, x, 2); },
          S({3, 4})),
      Unary(
          "NthElement/reverse",
          [](const Scope& s, Output x) {
            return ops::NthElement(s, x, 1, ops::NthElement::Reverse(true));
          },
          S({2, 3, 4})),
      Unary(
          "ConjugateTranspose",
          [](const Scope& s, Output x) {
            return ops::Square(s, ops::ConjugateTranspose(s, x, {2, 0, 1}));
          },
          S({2, 3, 4})),
      // NextAfter moves x1 by one ulp: its derivative in x1 is 1, in x2 0.
      Binary(
          "NextAfter",
          [](const Scope& s, Output a, Output b) {
            return ops::Square(s, ops::NextAfter(s, a, b));
          },
          S({2, 3}), S({3})),
      Unary(
          "Roll",
          [](const Scope& s, Output x) {
            return ops::Square(s, ops::Roll(s, x, {1, -4}, {0, 2}));
          },
          S({2, 3, 3})),
      Unary(
          "ReverseSequence",
          [](const Scope& s, Output x) {
            return ops::Square(
                s, ops::ReverseSequence(s, x, ops::Const(s, {int64_t{2}, int64_t{3}}), 1,
                                        ops::ReverseSequence::BatchDim(2)));
          },
          S({3, 3, 2})),
      // Entries [0,0,1], [0,2,0], [1,1,1], [1,1,0], [0,0,0] of a [2,3,2] tensor.
      Double({"SparseReduceSum",
              {S({5})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output indices = ops::Const(s, {{int64_t{0}, int64_t{0}, int64_t{1}},
                                                      {int64_t{0}, int64_t{2}, int64_t{0}},
                                                      {int64_t{1}, int64_t{1}, int64_t{1}},
                                                      {int64_t{1}, int64_t{1}, int64_t{0}},
                                                      {int64_t{0}, int64_t{0}, int64_t{0}}});
                const Output shape = ops::Const(s, {int64_t{2}, int64_t{3}, int64_t{2}});
                return {ops::Square(s, ops::SparseReduceSum(s, indices, x[0], shape, {1})),
                        ops::SparseReduceSum(s, indices, x[0], shape, {0, -1},
                                             ops::SparseReduceSum::KeepDims(true))};
              }}),
      Double({"SparseToDense",
              {S({3}), S({})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output indices = ops::Const(s, {{0, 1}, {1, 0}, {2, 2}});
                return {ops::SparseToDense(s, indices, ops::Const(s, {3, 3}), x[0], x[1])};
              }}),
      Double(
          {"SparseToDense/scalar_value",
           {S({}), S({})},
           [](const Scope& s, const Outs& x) -> Outs {
             return {ops::SparseToDense(s, ops::Const(s, {1, 3}), ops::Const(s, {5}), x[0], x[1])};
           }}),
      // Row 0 and row 2 empty: both take the default.
      Double({"SparseFillEmptyRows",
              {S({2}), S({})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output indices = ops::Const(s, {{int64_t{1}, int64_t{0}}, {3, 1}});
                const Output shape = ops::Const(s, {int64_t{4}, int64_t{2}});
                return {ops::SparseFillEmptyRows(s, indices, x[0], shape, x[1]).output_values};
              }}),
      // Rows 1, 3 and 5 empty: all take the default.
      Double({"RaggedFillEmptyRows",
              {S({4}), S({})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output rowids = ops::Const(s, {int64_t{2}, 0, 0, 4});
                return {ops::RaggedFillEmptyRows(s, rowids, x[0], ops::Const(s, int64_t{6}), x[1])
                            .output_values};
              }}),
      {"SparseTensorDenseAdd",
       {S({3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         const Output indices = ops::Const(s, {{0, 1}, {1, 2}, {0, 1}});
         return {ops::Square(
             s, ops::SparseTensorDenseAdd(s, indices, x[0], ops::Const(s, {2, 3}), x[1]))};
       },
       DT_DOUBLE},
      Unary(
          "TopKV2", [](const Scope& s, Output x) { return ops::TopKV2(s, x, 2).values; },
          S({3, 4})),
      Unary(
          "TopKV2/int64_indices",
          [](const Scope& s, Output x) {
            return ops::TopKV2(s, x, int64_t{2}, ops::TopKV2::IndexType(DT_INT64)).values;
          },
          S({3, 4})),
      Unary(
          "TopK", [](const Scope& s, Output x) { return ops::TopK(s, x, 3).values; }, S({2, 4})),
      Unary(
          "Reverse",
          [](const Scope& s, Output x) {
            return ops::Reverse(s, x, ops::Const(s, {true, false, true}));
          },
          S({2, 3, 2})),
      Unary(
          "StridedSlice/shrink",
          [](const Scope& s, Output x) {
            return ops::StridedSlice(s, x, {1}, {2}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
          },
          S({3, 2})),
      Unary("Pad",
            [](const Scope& s, Output x) {
              return ops::Pad(s, x, {{1, 0}, {2, 1}});
            }),
      Unary(
          "ReverseV2",
          [](const Scope& s, Output x) {
            return ops::ReverseV2(s, x, {0, -1});
          },
          S({2, 3, 2})),
      Unary(
          "DepthToSpace", [](const Scope& s, Output x) { return ops::DepthToSpace(s, x, 2); },
          S({1, 1, 2, 8})),
      Unary(
          "SpaceToDepth", [](const Scope& s, Output x) { return ops::SpaceToDepth(s, x, 2); },
          S({1, 2, 4, 1})),
      Unary(
          "MirrorPad/reflect",
          [](const Scope& s, Output x) {
            return ops::MirrorPad(s, x, {{1, 2}, {2, 0}}, "REFLECT");
          },
          S({3, 3})),
      Unary(
          "MirrorPad/symmetric",
          [](const Scope& s, Output x) {
            return ops::MirrorPad(s, x, {{2, 1}, {0, 3}}, "SYMMETRIC");
          },
          S({2, 3})),
      Unary(
          "MirrorPadGrad",
          [](const Scope& s, Output x) {
            return ops::MirrorPadGrad(s, x, {{1, 1}, {0, 2}}, "REFLECT");
          },
          S({5, 5})),
      Unary("PadV2",
            [](const Scope& s, Output x) {
              return ops::PadV2(s, x, {{0, 1}, {1, 1}}, 0.5f);
            }),
      Unary(
          "Tile",
          [](const Scope& s, Output x) {
            return ops::Tile(s, x, {2, 3});
          },
          S({2, 2})),
      Unary(
          "Fill",
          [](const Scope& s, Output x) {
            return ops::Fill(s, {2, 3}, x);
          },
          S({})),
      Unary(
          "BroadcastTo",
          [](const Scope& s, Output x) {
            return ops::BroadcastTo(s, x, {2, 2, 3});
          },
          S({2, 1})),
      Unary(
          "GatherV2",
          [](const Scope& s, Output x) {
            return ops::GatherV2(s, x, {2, 0, 2}, 0);
          },
          S({3, 2})),
      Unary(
          "Gather",
          [](const Scope& s, Output x) {
            return ops::Gather(s, x, {{1, 1}, {0, 2}});
          },
          S({3, 2})),
      Unary(
          "Prod", [](const Scope& s, Output x) { return ops::Prod(s, x, 0); }, NonZero({2, 3})),
      Unary(
          "Prod/two_axes_keep_dims",
          [](const Scope& s, Output x) {
            return ops::Prod(s, x, {0, -1}, ops::Prod::KeepDims(true));
          },
          NonZero({2, 3, 2})),
      Unary(
          "Cumsum", [](const Scope& s, Output x) { return ops::Cumsum(s, x, 1); }, S({2, 3})),
      Unary(
          "Cumsum/exclusive_reverse",
          [](const Scope& s, Output x) {
            return ops::Cumsum(s, x, 0, ops::Cumsum::Exclusive(true).Reverse(true));
          },
          S({3, 2})),
      Unary(
          "Cumprod", [](const Scope& s, Output x) { return ops::Cumprod(s, x, -1); },
          NonZero({2, 3})),
      Unary(
          "Cumprod/exclusive_reverse",
          [](const Scope& s, Output x) {
            return ops::Cumprod(s, x, 0, ops::Cumprod::Exclusive(true).Reverse(true));
          },
          NonZero({3, 2})),
      Unary(
          "CumulativeLogsumexp",
          [](const Scope& s, Output x) { return ops::CumulativeLogsumexp(s, x, 1); }, S({2, 3})),
      // Exclusive: the first (reversed: last) output is -inf, constant; the
      // weights give the incoming gradient both signs.
      Unary(
          "CumulativeLogsumexp/exclusive_reverse",
          [](const Scope& s, Output x) {
            const Output y = ops::CumulativeLogsumexp(
                s, x, 1, ops::CumulativeLogsumexp::Exclusive(true).Reverse(true));
            const Output finite = ops::Slice(s, y, {0, 0}, {2, 3});
            return ops::Mul(s, finite, ops::Const(s, {{1.f, -2.f, 3.f}, {-4.f, 3.f, -2.f}}));
          },
          S({2, 4})),
      // TF's gradient warps back by the inverse transform: exact for moves
      // by whole pixels, which these are.
      Unary(
          "ImageProjectiveTransformV3",
          [](const Scope& s, Output x) {
            return ops::ImageProjectiveTransformV3(
                s, x, ops::Const(s, {{1.f, 0.f, 1.f, 0.f, 1.f, -1.f, 0.f, 0.f}}), {4, 5}, 0.f,
                "BILINEAR");
          },
          S({1, 4, 5, 2})),
      Unary(
          "ImageProjectiveTransformV2",
          [](const Scope& s, Output x) {
            // A left-right flip: x_in = 4 - x_out.
            return ops::ImageProjectiveTransformV2(
                s, x, ops::Const(s, {{-1.f, 0.f, 4.f, 0.f, 1.f, 0.f, 0.f, 0.f}}), {3, 5},
                "NEAREST");
          },
          S({2, 3, 5, 1})),
      // Rows of 1, 3 and 2 values of [2], cut to 2 per row, padded with a
      // default of [2].
      {"RaggedTensorToTensor",
       {S({6, 2}), S({2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::RaggedTensorToTensor(s, ops::Const(s, {-1, 2, -1}), x[0], x[1],
                                           {ops::Const(s, {0, 1, 4, 6})},
                                           std::vector<std::string>{"ROW_SPLITS"})};
       }},
      // Rows of a two-level ragged tensor over values of [2], one gathered
      // twice and one empty: the gathered values' gradient summed back.
      {"RaggedGather",
       {S({4, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         const ops::RaggedGather gathered(
             s,
             {ops::Const(s, {int64_t{0}, int64_t{2}, int64_t{3}}),
              ops::Const(s, {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{4}})},
             x[0], ops::Const(s, {{1, 0}, {0, 0}}), 3);
         return {gathered.output_dense_values};
       }},
      // Two ragged levels over values of [2]: the sparse values' gradient.
      {"RaggedTensorToSparse",
       {S({4, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         const ops::RaggedTensorToSparse sparse(
             s,
             {ops::Const(s, {int64_t{0}, int64_t{2}, int64_t{3}}),
              ops::Const(s, {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{4}})},
             x[0]);
         return {sparse.sparse_values};
       }},
      // A 3x4 sparse matrix with a duplicate index, times B; and adjoints.
      {"SparseTensorDenseMatMul",
       {S({4}), S({4, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         const Output indices = ops::Const(s, {{int64_t{0}, int64_t{1}},
                                               {int64_t{2}, int64_t{0}},
                                               {int64_t{2}, int64_t{3}},
                                               {int64_t{0}, int64_t{1}}});
         return {ops::SparseTensorDenseMatMul(s, indices, x[0],
                                              ops::Const(s, {int64_t{3}, int64_t{4}}), x[1])};
       }},
      {"SparseTensorDenseMatMul/adjoints",
       {S({3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         const Output indices = ops::Const(s, {{1, 0}, {2, 2}, {0, 1}});
         return {ops::SparseTensorDenseMatMul(
             s, indices, x[0], ops::Const(s, {int64_t{3}, int64_t{4}}), x[1],
             ops::SparseTensorDenseMatMul::AdjointA(true).AdjointB(true))};
       }},
      Unary(
          "GatherV2/axis1",
          [](const Scope& s, Output x) {
            return ops::GatherV2(s, x, {2, 0, 2}, 1);
          },
          S({2, 3, 2})),
      Unary(
          "GatherV2/batch_dims",
          [](const Scope& s, Output x) {
            return ops::GatherV2(s, x, {{2, 0}, {1, 1}}, 1, ops::GatherV2::BatchDims(1));
          },
          S({2, 3, 2})),
      Unary(
          "GatherV2/batch_dims_axis_past_them",
          [](const Scope& s, Output x) {
            return ops::GatherV2(s, x, {{2, 0, 2}, {1, 1, 0}}, 2, ops::GatherV2::BatchDims(-1));
          },
          S({2, 2, 3})),
      Unary(
          "GatherV2/negative_axis_matrix_indices",
          [](const Scope& s, Output x) {
            return ops::GatherV2(s, x, {{1, 0}, {1, 1}}, -1);
          },
          S({2, 3})),
  };
}

}  // namespace grad_cases
}  // namespace towerflow
