// TensorFlow's StridedSlice semantics: turning begin/end/strides and the five
// masks into the slice actually taken, for shape inference and kernels alike.
//
// The "sparse" spec (what the op receives, with ellipsis and new axes) is
// expanded to a "dense" one with one entry per input dimension; each entry is
// then canonicalised (negative indices, masks, clamping). The result has
//  * `processing`: the shape of the slice before new axes are added and
//    shrunk axes removed (rank = input rank);
//  * `final`: the op's output shape;
//  * per input dimension, the canonical begin, end and stride.
// Unknown input dims (-1) give unknown output dims, except shrunk axes.
//
//   StridedSliceSpec spec{{1}, {0}, {1}, /*begin_mask=*/0, /*end_mask=*/1};
//   absl::StatusOr<StridedSliceResult> r = ComputeStridedSlice({5, 3}, spec);
//   r->final.DebugString();   // "[4,3]"
//
// Pure function; thread-safe.
#ifndef TOWERFLOW_CORE_STRIDED_SLICE_H_
#define TOWERFLOW_CORE_STRIDED_SLICE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"

namespace towerflow {

struct StridedSliceSpec {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};

struct StridedSliceResult {
  PartialTensorShape processing;
  PartialTensorShape final;
  // One entry per input dimension (canonical; meaningful for known dims).
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;
  // True when the slice takes every element in order (a copy).
  bool is_identity = false;
};

// InvalidArgument for: begin/end/strides of different lengths or more than
// 63 entries, a zero stride, several ellipses, more slice dimensions than
// the input has, or a shrunk index outside its dimension ("slice index 7 of
// dimension 0 out of bounds"). REQUIRES: the input rank is known.
absl::StatusOr<StridedSliceResult> ComputeStridedSlice(const PartialTensorShape& input,
                                                       const StridedSliceSpec& spec);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_STRIDED_SLICE_H_
