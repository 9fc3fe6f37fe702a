// The shape functions of the segment reductions (ops/math_ops.cc):
// Segment*, UnsortedSegment* and SparseSegment* (and its gradients).
#ifndef TOWERFLOW_OPS_SEGMENT_SHAPES_H_
#define TOWERFLOW_OPS_SEGMENT_SHAPES_H_

#include "absl/status/status.h"
#include "graph/shape_inference.h"

namespace towerflow {
namespace segment_shapes {

// UnsortedSegment*: data [I..., R...] with ids [I...] gives [num_segments,
// R...].
absl::Status UnsortedSegmentShape(InferenceContext* c);
// Segment*: data [N, R...] with ids [N] gives [segments, R...].
absl::Status SegmentShape(InferenceContext* c);
// SparseSegment* and their gradients: [segments or output_dim0, R...].
absl::Status SparseSegmentShape(InferenceContext* c);

}  // namespace segment_shapes
}  // namespace towerflow

#endif  // TOWERFLOW_OPS_SEGMENT_SHAPES_H_
