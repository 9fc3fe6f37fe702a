// Launchers of kernels/gpu/layout_kernels.cu.cc: element moves by index arithmetic: transposes,
// slices, tiles, pads, row gathers. The conventions every launcher keeps are in
// kernels/gpu/launch.h.
#ifndef TOWERFLOW_KERNELS_GPU_LAYOUT_KERNELS_H_
#define TOWERFLOW_KERNELS_GPU_LAYOUT_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gpu/launch.h"

namespace towerflow {
namespace gpu {

// Element moves by index arithmetic: out[i] = in[base + sum_d c_d * mult[d]]
// where (c_0 .. c_{rank-1}) is element i's index in `dims` (row-major),
// each c_d taken modulo mod[d] first when mod[d] > 0. A transpose has mult =
// the input's strides permuted; a strided slice mult = stride * input
// stride and base = the first element's offset; a tile mod = the input's
// dims. T is instantiated for uint8_t, uint16_t, uint32_t and uint64_t:
// elements move as bytes, whatever their dtype.
constexpr int kMaxIndexRank = 8;
struct IndexMap {
  int rank = 0;
  int64_t dims[kMaxIndexRank];
  int64_t mult[kMaxIndexRank];
  int64_t mod[kMaxIndexRank];
  int64_t base = 0;
};
template <typename T>
cudaError_t LaunchIndexGather(const T* in, T* out, const IndexMap& map, cudaStream_t stream);

// out[o] = in[o - offset] where that is inside `in`, else `fill`, over up
// to kMaxIndexRank dims: a pad (offsets >= 0) or a crop (offsets <= 0).
// Instantiated as LaunchIndexGather is, `fill` being the element's bytes.
struct PadMap {
  int rank = 0;
  int64_t out_dims[kMaxIndexRank];
  int64_t in_dims[kMaxIndexRank];
  int64_t offset[kMaxIndexRank];
};
template <typename T>
cudaError_t LaunchIndexPad(const T* in, T* out, const PadMap& map, T fill, cudaStream_t stream);

// MirrorPad: along each dim, padded index j reads unpadded index
// i = j - before, reflected at the edges (REFLECT leaves the edge out of
// the mirror, SYMMETRIC repeats it). Paddings already checked
// (kernels/rearrange.h's PlanMirrorPad).
struct MirrorMap {
  int rank = 0;
  int64_t big[kMaxIndexRank];    // the padded dims
  int64_t small[kMaxIndexRank];  // the unpadded dims
  int64_t before[kMaxIndexRank];
  bool reflect = true;
};
// out (big) = in (small) mirrored; T as in LaunchIndexGather.
template <typename T>
cudaError_t LaunchMirrorPad(const T* in, T* out, const MirrorMap& map, cudaStream_t stream);
// MirrorPadGrad: out (small) gets for each element the sum of the elements
// of in (big) that mirror it, at most three a dim, added in a fixed order
// (no atomics). T float or double.
template <typename T>
cudaError_t LaunchMirrorPadGrad(const T* in, T* out, const MirrorMap& map, cudaStream_t stream);

// The inverse move: out[base + sum_d c_d * mult[d]] = in[i] for element i
// of `in` (row-major over map.dims, mod unused). Elements of out that no
// element of in reaches keep their value (Einsum zeroes them first where its
// output repeats a label). T as in LaunchIndexGather.
template <typename T>
cudaError_t LaunchIndexScatter(const T* in, T* out, const IndexMap& map, cudaStream_t stream);

// GatherV2: out[(o * n + i) * inner + j] = params[(o * limit + index) *
// inner + j] over o < outer, i < n, j < inner, where index = indices[(o /
// per_batch) * n + i]: each run of `per_batch` rows o shares n indices
// (GatherV2's batch_dims; per_batch = outer without them). `indices` in
// device memory, already checked against `limit`. T as in
// LaunchIndexGather; Index int32_t or int64_t.
template <typename T, typename Index>
cudaError_t LaunchGatherRows(const T* params, const Index* indices, T* out, int64_t outer,
                             int64_t per_batch, int64_t limit, int64_t n, int64_t inner,
                             cudaStream_t stream);

// out = in with its 4 dims permuted: out's dim i is in's dim perm[i].
template <typename T>
cudaError_t LaunchTranspose4(const T* in, const int64_t in_dims[4], const int perm[4], T* out,
                             cudaStream_t stream);

// out[o] = in[o - offset] where that is inside `in`, else `fill`: a pad
// (offsets >= 0) or a crop (offsets <= 0) of a 4-D tensor.
template <typename T>
cudaError_t LaunchShift4(const T* in, const int64_t in_dims[4], T* out, const int64_t out_dims[4],
                         const int64_t offset[4], T fill, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_LAYOUT_KERNELS_H_
