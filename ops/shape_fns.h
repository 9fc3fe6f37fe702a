// Shape functions shared by the op schemas in this folder.
//
// Each has the ShapeFn signature and follows TensorFlow's common_shape_fns:
// unknown stays unknown, and only inputs that can never be valid are errors.
// The op families' own shape functions live beside their registrations.
#ifndef TOWERFLOW_OPS_SHAPE_FNS_H_
#define TOWERFLOW_OPS_SHAPE_FNS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "core/window_util.h"
#include "graph/shape_inference.h"

namespace towerflow {
namespace shape_fns {

// Output 0 has the shape of input 0.
absl::Status UnchangedShape(InferenceContext* c);
// Every output is a scalar.
absl::Status ScalarShape(InferenceContext* c);
// Outputs (if any) stay unknown.
absl::Status UnknownShape(InferenceContext* c);
// The merge of the shapes of inputs [first, first + count); InvalidArgument
// naming the input that disagrees ("Shapes of all inputs must match: ...").
absl::StatusOr<PartialTensorShape> MergeInputShapes(InferenceContext* c, int first, int count);
// Output 0 is the merge of all inputs' shapes (AddN; elementwise grads).
absl::Status MergeAllInputsShape(InferenceContext* c);

// NumPy/TensorFlow broadcasting of two shapes; InvalidArgument naming both
// when a pair of known dims differs and neither is 1.
absl::StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a,
                                                   const PartialTensorShape& b);
// Output 0 is input 0 broadcast with input 1.
absl::Status BroadcastBinaryOpShape(InferenceContext* c);

// MatMul's: [m, k] x [k, n], either transposed by transpose_a/transpose_b.
absl::Status MatMulShape(InferenceContext* c);

// Input 0 reduced over the axes in input 1, honouring attr keep_dims.
absl::Status ReductionShape(InferenceContext* c);

// Output 0 has the shape given by the 1-D shape tensor at input 0, whose
// known dims must be >= 0 (random ops, Fill).
absl::Status ShapeFromShapeTensorInput(InferenceContext* c, int input);

// True when `shape` has at least `prefix`'s rank and its leading dims are
// compatible with `prefix` (unknown dims match anything). REQUIRES: both
// ranks known. Segment, stitch and partition ops need their index tensor's
// shape to be a prefix of the data's.
bool StartsWithShape(const PartialTensorShape& shape, const PartialTensorShape& prefix);

// Resolves a possibly negative axis against `rank` (which may be -1 for
// unknown). InvalidArgument "axis 5 is out of range for rank 2" when it does
// not fall in [-rank, rank). With unknown rank a non-negative axis is kept
// and a negative one gives -1.
absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank);

// GetWindowedOutputSize (core/window_util.h), plus what TF's shape
// functions refuse although its kernels would give an empty output: a VALID
// or EXPLICIT window larger than its (padded) input ("Negative dimension
// size caused by subtracting 5 from 4"). For the windowed ops of any rank.
absl::Status WindowedShape(int64_t input, int64_t window, int64_t dilation, int64_t stride,
                           Padding padding, int64_t* out, int64_t* before, int64_t* after);

}  // namespace shape_fns
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_SHAPE_FNS_H_
