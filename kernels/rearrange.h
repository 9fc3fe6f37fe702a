// The checks and output shapes of the kernels that rearrange elements
// (Transpose, Slice, Tile, ReverseV2, Pad/PadV2, MirrorPad/MirrorPadGrad,
// ConcatV2/Concat, GatherV2), shared by the CPU kernels and their GPU twins
// so that both refuse the same inputs with the same errors.
// StridedSlice's is core/strided_slice.h, with its attrs read here.
#ifndef TOWERFLOW_KERNELS_REARRANGE_H_
#define TOWERFLOW_KERNELS_REARRANGE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/strided_slice.h"
#include "core/tensor_shape.h"
#include "framework/kernel.h"
#include "framework/tensor.h"

namespace towerflow {

struct TransposePlan {
  std::vector<int64_t> perm;
  TensorShape shape;      // the output's: dim i is the input's dim perm[i]
  bool identity = false;  // only size-1 dims move: a reshape does
};
// InvalidArgument unless `perm` (int vector) is a permutation of 0..rank-1.
absl::StatusOr<TransposePlan> PlanTranspose(const TensorShape& in, const Tensor& perm);

struct SlicePlan {
  std::vector<int64_t> begin, end, size;  // size with -1 resolved
  TensorShape shape;
};
// InvalidArgument unless begin and size are rank-long and inside `in`.
absl::StatusOr<SlicePlan> PlanSlice(const TensorShape& in, const Tensor& begin, const Tensor& size);

struct TilePlan {
  std::vector<int64_t> multiples;
  TensorShape shape;
};
// InvalidArgument for a multiples vector of another length, a negative
// multiple, or an output dimension that overflows.
absl::StatusOr<TilePlan> PlanTile(const TensorShape& in, const Tensor& multiples);

// ReverseV2(tensor, axis): which dims flip. InvalidArgument for an axis
// that is not a vector, out of [-rank, rank), or given twice.
absl::StatusOr<std::vector<bool>> PlanReverse(const TensorShape& in, const Tensor& axis);

// MirrorPad and MirrorPadGrad: `big` is the padded shape, `small` the
// unpadded; map[d][j] is the index in `small` that index j of `big` mirrors
// along dim d (REFLECT leaves the edge out of the mirror, SYMMETRIC repeats
// it).
struct MirrorPlan {
  TensorShape small;
  TensorShape big;
  std::vector<int64_t> before;  // padding before each dim
  std::vector<std::vector<int64_t>> map;
};
// MirrorPad (given = the input) and MirrorPadGrad (given = the padded
// gradient, given_is_padded): InvalidArgument for paddings not [rank, 2], a
// negative padding, or one past what the mode mirrors (REFLECT: at most
// dim - 1, SYMMETRIC: at most dim).
absl::StatusOr<MirrorPlan> PlanMirrorPad(const TensorShape& given, const Tensor& paddings,
                                         bool reflect, bool given_is_padded);
// MirrorPad's and MirrorPadGrad's `mode` attr: REFLECT (true) or SYMMETRIC.
absl::StatusOr<bool> ReadMirrorReflect(const KernelConstruction& c);

struct PadPlan {
  std::vector<int64_t> before;  // padding before each dim
  TensorShape shape;
};
// Pad(input, paddings) and PadV2(..., constant_values): InvalidArgument for
// paddings not [rank, 2], a negative padding, a dimension that overflows,
// or a constant that is not one element (`constant` may be null).
absl::StatusOr<PadPlan> PlanPad(const TensorShape& in, const Tensor& paddings,
                                const Tensor* constant);

struct GatherPlan {
  int axis = 0;
  TensorShape shape;  // params' dims before the axis, indices', params' after
  int64_t outer = 1;  // params' elements before the axis
  int64_t limit = 0;  // params' size along the axis
  int64_t inner = 1;  // params' elements after the axis
  // With batch_dims: the elements of the leading dims params and indices
  // share, and the indices per batch element. Output row o (of `outer`)
  // takes its indices from batch o / (outer / batch).
  int64_t batch = 1;
  int64_t batch_indices = 0;
};
// GatherV2(params, indices, axis, batch_dims) with `indices` (int16, int32
// or int64) in host memory: InvalidArgument for scalar params, an axis or
// batch_dims out of range, leading dims that differ, or an index outside
// [0, limit) ("indices[3] = 7 is not in [0, 5)").
absl::StatusOr<GatherPlan> PlanGather(const TensorShape& params, const Tensor& indices,
                                      int64_t axis, int64_t batch_dims = 0);
// Index i of `indices`, whatever its integer type.
int64_t GatherIndex(const Tensor& indices, int64_t i);

struct ConcatPlan {
  int axis = 0;
  TensorShape shape;
  int64_t outer = 1;  // elements of the dims before the axis
};
// InvalidArgument for scalars, an axis out of range, or values whose ranks
// or other dims differ (TF's messages).
absl::StatusOr<ConcatPlan> PlanConcat(absl::Span<const Tensor* const> values, const Tensor& axis);

struct PackPlan {
  int axis = 0;
  TensorShape shape;
  int64_t outer = 1;  // elements of the dims before the axis
  int64_t inner = 1;  // elements of a value from the axis on
};
// Pack (values all of one shape, the axis in [-(rank + 1), rank + 1)):
// InvalidArgument otherwise (TF's messages).
absl::StatusOr<PackPlan> PlanPack(absl::Span<const Tensor* const> values, int64_t axis);

// The pieces Split, SplitV and Unpack cut `in` into along `axis`: their
// sizes along it and their shapes (without the axis for Unpack).
struct SplitPlan {
  int axis = 0;
  std::vector<int64_t> sizes;
  std::vector<TensorShape> shapes;
  int64_t outer = 1;  // elements of the dims before the axis
  int64_t inner = 1;  // elements of the dims after it
};
// Split(split_dim, value) into `num` equal pieces.
absl::StatusOr<SplitPlan> PlanSplit(const TensorShape& in, const Tensor& split_dim, int num);
// SplitV(value, size_splits, split_dim); one size may be -1.
absl::StatusOr<SplitPlan> PlanSplitV(const TensorShape& in, const Tensor& size_splits,
                                     const Tensor& split_dim, int num);
// Unpack(value) along `axis` into `num` pieces.
absl::StatusOr<SplitPlan> PlanUnpack(const TensorShape& in, int64_t axis, int num);

// The five mask attrs of StridedSlice and StridedSliceGrad.
absl::Status ReadStridedSliceMasks(const KernelConstruction& c, StridedSliceSpec* spec);

struct StridedSlicePlan {
  StridedSliceResult slice;  // begin, end and strides per input dim
  TensorShape final_shape;   // the output's
  TensorShape processing;    // the same elements, one dim per input dim
};
// `masks` (from ReadStridedSliceMasks) with the begin, end and strides
// vectors, over a tensor of shape `in`; ComputeStridedSlice's errors.
absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const TensorShape& in,
                                                  const StridedSliceSpec& masks,
                                                  const Tensor& begin, const Tensor& end,
                                                  const Tensor& strides);

// DynamicPartition(data, partitions): output k gets, in order, the rows of
// data (its elements past partitions' dims) whose partition is k.
struct PartitionPlan {
  std::vector<TensorShape> shapes;  // output k's: [count_k] + data's row dims
  int64_t row = 0;                  // elements per row
  // The rows of data, output 0's first, then output 1's, ...: output k's
  // are rows[starts[k] .. starts[k + 1]).
  std::vector<int64_t> rows;
  std::vector<int64_t> starts;
};
// InvalidArgument (TF's messages) unless data's shape starts with
// partitions' and every partition (int32, host memory) is in
// [0, num_partitions).
absl::StatusOr<PartitionPlan> PlanDynamicPartition(const TensorShape& data,
                                                   const Tensor& partitions,
                                                   int64_t num_partitions);

// DynamicStitch(indices[0..n), data[0..n)): merged row j is the row of the
// last (m, i) with indices[m][i] = j, or zeros where no index names j (TF
// leaves those rows uninitialised).
struct StitchPlan {
  TensorShape shape;  // [max index + 1] + data[0]'s row dims
  int64_t row = 0;    // elements per row
  // Per data input m, the rows it writes: data row src[m][k] lands in
  // merged row dst[m][k]. Only the last writer of a merged row is listed,
  // so the lists of all m write each merged row at most once.
  std::vector<std::vector<int64_t>> src, dst;
};
// InvalidArgument unless each data[m] has shape indices[m].shape + data[0]'s
// row dims and every index (int32, host memory) is non-negative.
absl::StatusOr<StitchPlan> PlanDynamicStitch(absl::Span<const Tensor* const> indices,
                                             absl::Span<const Tensor* const> data);

// TopKV2(input, k): the k largest of each row (input's last dim).
struct TopKPlan {
  TensorShape shape;  // input's, with the last dim k
  int64_t rows = 0;   // input's rows
  int64_t n = 0;      // input's last dim
  int64_t k = 0;
};
// InvalidArgument (TF's messages) for k < 0, a scalar input or fewer than
// k columns; `k` is a scalar in host memory.
absl::StatusOr<TopKPlan> PlanTopK(const TensorShape& input, const Tensor& k);

// Product of dims [begin, end) of `s`.
int64_t DimProduct(const TensorShape& s, int begin, int end);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_REARRANGE_H_
