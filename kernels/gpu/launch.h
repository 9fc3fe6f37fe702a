// Launchers for the CUDA kernels in kernels/gpu/*.cu.cc: plain functions on
// raw device pointers, so the OpKernels (compiled by the host compiler) never
// see device code. Each enqueues on `stream` and returns the launch's
// cudaError_t (CudaStatus turns it into a Status); n == 0 launches nothing.
//
// Shapes come in collapsed: a binary op's operands as strides over the
// output's (at most kMaxDims) dimensions, a reduction as [outer, reduce,
// inner] with the middle dimension summed.
#ifndef TOWERFLOW_KERNELS_GPU_LAUNCH_H_
#define TOWERFLOW_KERNELS_GPU_LAUNCH_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace towerflow {
namespace gpu {

inline constexpr int kMaxDims = 8;

// Launch shape of the elementwise kernels: 256 threads a block and enough
// blocks for n elements, at most 4096 (the kernels loop over the rest).
inline constexpr int kThreadsPerBlock = 256;
inline int GridSize(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 4096 ? blocks : 4096);
}

// Where output element i reads x and y: its index over `dims` dotted with
// each operand's strides (0 along broadcast dimensions).
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t x_strides[kMaxDims];
  int64_t y_strides[kMaxDims];
};

enum class ReduceFn { kSum, kMax, kMin, kProd };

// half and bfloat16 as the math kernels take them: their bits, which the
// kernels widen to float32, compute on, and round back to nearest even
// (cuda_util.cu.h's DeviceValue). The OpKernels pass Eigen's types as these
// (gpu_kernel_util.h's OnGpu and GpuData).
struct HalfBits {
  uint16_t bits;
};
struct Bfloat16Bits {
  uint16_t bits;
};

// y[i] = F()(x[i]) for a functor of kernels/cwise_functors.h; instantiated
// in cwise_kernels.cu.cc for the functors the GPU kernels use. T float and
// double with F's on T, HalfBits and Bfloat16Bits with F's on float (the
// maths in float32, each result rounded once); so for the binary maths and
// comparisons below.
template <typename T, typename F>
cudaError_t LaunchUnary(const T* x, T* y, int64_t n, cudaStream_t stream);

// z[i] = F()(x[..], y[..]); `bcast` null: x, y and z all have n elements.
template <typename T, typename F>
cudaError_t LaunchBinary(const T* x, const T* y, T* z, int64_t n, const Broadcast* bcast,
                         cudaStream_t stream);

// z[i] = F()(x[..], y[..]) for a comparison functor (bool results), as
// LaunchBinary.
template <typename T, typename F>
cudaError_t LaunchCompare(const T* x, const T* y, bool* z, int64_t n, const Broadcast* bcast,
                          cudaStream_t stream);

// Where output element i of a select reads its condition and its two
// branches: its index over `dims` dotted with each one's strides (0 along
// broadcast dimensions).
struct SelectBroadcast {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t c_strides[kMaxDims];
  int64_t t_strides[kMaxDims];
  int64_t e_strides[kMaxDims];
};
// out[i] = condition[..] ? t[..] : e[..]; `bcast` null: all have n
// elements. T is uint8_t, uint16_t, uint32_t or uint64_t: elements move as
// bytes, whatever their dtype.
template <typename T>
cudaError_t LaunchSelect(const bool* condition, const T* t, const T* e, T* out, int64_t n,
                         const SelectBroadcast* bcast, cudaStream_t stream);

// out[o, i] = reduce over r of in[o, r, i], times `scale` (1/r for a mean).
// In and Out: float, double, or a 16-bit type (accumulated in float) in or
// out with float on the other side.
template <typename In, typename Out = In>
cudaError_t LaunchReduce(ReduceFn fn, const In* in, Out* out, int64_t outer, int64_t reduce,
                         int64_t inner, double scale, cudaStream_t stream);

// Row-wise over [rows, cols]: softmax (or log-softmax).
template <typename T>
cudaError_t LaunchSoftmax(const T* logits, T* out, int64_t rows, int64_t cols, bool log,
                          cudaStream_t stream);

// Softmax cross-entropy per row with dense labels: loss [rows], backprop
// [rows, cols] = softmax - labels.
template <typename T>
cudaError_t LaunchSoftmaxXent(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows,
                              int64_t cols, cudaStream_t stream);

// The same with class indices (already checked to be in [0, cols)).
template <typename T, typename Index>
cudaError_t LaunchSparseSoftmaxXent(const T* logits, const Index* labels, T* loss, T* backprop,
                                    int64_t rows, int64_t cols, cudaStream_t stream);

// LeakyRelu: y = x where x > 0, else alpha * x; LeakyReluGrad(g, features):
// out = g where features > 0, else alpha * g. T as LaunchUnary's.
template <typename T>
cudaError_t LaunchLeakyRelu(const T* x, T* y, int64_t n, float alpha, cudaStream_t stream);
template <typename T>
cudaError_t LaunchLeakyReluGrad(const T* g, const T* features, T* out, int64_t n, float alpha,
                                cudaStream_t stream);

// out[i] = value (read from device memory).
template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, cudaStream_t stream);
template <typename T>
cudaError_t LaunchFillConstant(T value, T* out, int64_t n, cudaStream_t stream);

template <typename From, typename To>
cudaError_t LaunchCast(const From* in, To* out, int64_t n, cudaStream_t stream);

// half and bfloat16 cross the launch as their bits (Eigen's types on the
// host, CUDA's __half and __nv_bfloat16 in the kernels).
enum class Float16Kind { kHalf, kBfloat16 };
// To the 16-bit type, rounding to nearest even; and back, exactly.
cudaError_t LaunchCastToFloat16(const float* in, uint16_t* out, int64_t n, Float16Kind kind,
                                cudaStream_t stream);
cudaError_t LaunchCastFromFloat16(const uint16_t* in, float* out, int64_t n, Float16Kind kind,
                                  cudaStream_t stream);

// out[i] = x at output element i's broadcast position (BroadcastTo); the
// y strides of `bcast` are unused.
template <typename T>
cudaError_t LaunchBroadcastCopy(const T* x, T* out, int64_t n, const Broadcast& bcast,
                                cudaStream_t stream);

// ArgMax / ArgMin over the middle of [outer, reduce, inner].
template <typename T, typename Index>
cudaError_t LaunchArgReduce(const T* in, Index* out, int64_t outer, int64_t reduce, int64_t inner,
                            bool is_max, cudaStream_t stream);

// The optimizer updates of kernels/cpu/training_ops.cc, elementwise over n.
enum class ApplyFn { kGradientDescent, kMomentum, kAdam, kAdagrad, kRmsProp };

// One update's operands in device memory. `scalars` are the hyperparameters
// in the order of the op's TF signature (kernels/variable_util.h), read by
// the kernel, so no step waits for a copy of the learning rate to the host.
// `flag` is use_nesterov (Momentum, Adam) or update_slots (Adagrad).
template <typename T>
struct ApplyArgs {
  T* var = nullptr;
  T* slots[2] = {nullptr, nullptr};
  const T* grad = nullptr;
  const T* scalars[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  bool flag = false;
};

template <typename T>
cudaError_t LaunchApply(ApplyFn fn, const ApplyArgs<T>& args, int64_t n, cudaStream_t stream);

// SparseApplyMomentum / SparseApplyAdagrad / SparseApplyRMSProp (fn
// kMomentum, kAdagrad or kRmsProp; else cudaErrorInvalidValue): args.grad holds rows of `slice`
// elements, grouped by the variable row they update as LaunchScatterRows' plan says; each group's
// rows apply in index order, one thread per element of the row.
template <typename T>
cudaError_t LaunchSparseApply(ApplyFn fn, const ApplyArgs<T>& args, const int64_t* plan,
                              int64_t groups, int64_t slice, cudaStream_t stream);

// out = a + b, or a - b when !add (AssignAdd / AssignSub); out may be a.
template <typename T>
cudaError_t LaunchAddInto(const T* a, const T* b, T* out, bool add, int64_t n, cudaStream_t stream);

// ---- Layout (layout_kernels.cu.cc) ----

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

// ---- Indexing and images (index_kernels.cu.cc) ----

// ScatterNd, TensorScatterUpdate and the scatters into variables, on index
// rows grouped on the host by the slice they write: group g writes slice
// offsets[g] (`slice` elements each) from update rows rows[starts[g]] ..
// rows[starts[g + 1] - 1], in index order: out's value plus (kAdd) or minus
// (kSub) each of them in turn (the CPU kernels' order, so the sums agree bit
// for bit, and no atomics), or the last of them (kAssign). `plan` in device
// memory is offsets [groups], starts [groups + 1], rows [n]. A scalar
// `updates` (scalar true) stands for rows all of its value. kAdd and kSub: T
// float, double or int64_t; kAssign: T as in LaunchIndexGather.
enum class RowScatter { kAdd, kSub, kAssign };
template <typename T>
cudaError_t LaunchScatterRows(RowScatter mode, bool scalar, const T* updates, const int64_t* plan,
                              int64_t groups, int64_t n, int64_t slice, T* out,
                              cudaStream_t stream);

// SpaceToBatchND / BatchToSpaceND (kernels/image_plans.h's SpaceBatchPlan)
// over the deep side's `positions` x inner elements; up to kMaxBlockDims
// block dims. Padding is zero. T as in LaunchIndexGather.
constexpr int kMaxBlockDims = 6;
struct SpaceBatchMap {
  bool to_batch = true;
  int m = 0;
  int64_t block[kMaxBlockDims];
  int64_t pad_before[kMaxBlockDims];
  int64_t deep[kMaxBlockDims];   // the deep side's spatial dims
  int64_t limit[kMaxBlockDims];  // the wide side's (unpadded) spatial dims
  int64_t wide_batch = 0, product = 1, inner = 1;
};
template <typename T>
cudaError_t LaunchSpaceBatch(const T* in, T* out, const SpaceBatchMap& map, int64_t positions,
                             cudaStream_t stream);

// Resizes of NHWC images (kernels/image_plans.h, Note [Resize coordinates])
// with taps computed on the host: `taps` holds int64 input rows and columns
// -- bilinear: lower [out_h], upper [out_h], lower [out_w], upper [out_w];
// nearest: rows [out_h], columns [out_w] -- and `lerps` float row then
// column fractions [out_h + out_w]. For a gradient, "in" is the image the
// forward resize read and "out" the gradient's size; dx is zeroed first.
struct ResizeShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
};
template <typename T>
cudaError_t LaunchResizeBilinear(const ResizeShape& s, const T* in, const int64_t* taps,
                                 const float* lerps, float* out, cudaStream_t stream);
// dx (in's shape, T float or double) += each gradient along its 4 taps.
template <typename T>
cudaError_t LaunchResizeBilinearGrad(const ResizeShape& s, const float* grads, const int64_t* taps,
                                     const float* lerps, T* dx, cudaStream_t stream);
// T as in LaunchIndexGather.
template <typename T>
cudaError_t LaunchResizeNearest(const ResizeShape& s, const T* in, const int64_t* taps, T* out,
                                cudaStream_t stream);
// dx (in's shape, T float or double) += each gradient at its tap.
template <typename T>
cudaError_t LaunchResizeNearestGrad(const ResizeShape& s, const T* grads, const int64_t* taps,
                                    T* dx, cudaStream_t stream);

// ---- Pooling (pooling_kernels.cu.cc) ----

// A 2-D pooling window over a 4-D tensor, TF's semantics: windows start at
// -pad_top/-pad_left and step by the strides; padding never counts (max
// over, and average over, the window's elements inside the input).
struct PoolShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
  int64_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
  bool nchw;
};

template <typename T>
cudaError_t LaunchMaxPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream);
template <typename T>
cudaError_t LaunchAvgPool(const PoolShape& p, const T* in, T* out, cudaStream_t stream);
// dx (in's shape, zeroed here) gets each dy added at its window's first
// maximum of `in`.
template <typename T>
cudaError_t LaunchMaxPoolGrad(const PoolShape& p, const T* in, const T* dy, T* dx,
                              cudaStream_t stream);
// dx[i] = sum over the windows holding i of dy / (the window's count).
template <typename T>
cudaError_t LaunchAvgPoolGrad(const PoolShape& p, const T* dy, T* dx, cudaStream_t stream);

// ---- Normalisation (norm_kernels.cu.cc) ----
// LRN in float; batch norm's data (x, y, dy, dx) of T float, HalfBits or
// Bfloat16Bits, read into float, with float parameters and statistics.

// LRN over the last dimension (`depth`) of `pixels` x depth values:
// y = x * (bias + alpha * sum_{|c'-c|<=radius} x[c']^2)^-beta.
struct LrnShape {
  int64_t pixels, depth, radius;
  float bias, alpha, beta;
};
cudaError_t LaunchLrn(const LrnShape& s, const float* x, float* y, cudaStream_t stream);
// LRNGrad: dx[j] = dy[j] n[j]^-beta - 2 alpha beta x[j] sum_{|c-j|<=r}
// dy[c] x[c] n[c]^(-beta-1); `scratch` holds 2 * pixels * depth floats.
cudaError_t LaunchLrnGrad(const LrnShape& s, const float* dy, const float* x, float* scratch,
                          float* dx, cudaStream_t stream);

// Per-channel statistics of batch norm in training from the batch mean
// and unbiased variance (cuDNN's or LaunchBatchNormTrainingNhwc's) over `n` values per channel
// (factor 1): the reserve spaces get the mean and the biased variance (the CPU kernels' layout),
// batch_mean/batch_variance the unbiased statistics, or with factor f != 1 the running averages (1
// - f) * old + f * new.
cudaError_t LaunchBatchNormFinalize(const float* mean, const float* unbiased_var, int64_t n,
                                    float factor, const float* old_mean, const float* old_var,
                                    float* batch_mean, float* batch_var, float* saved_mean,
                                    float* saved_var, int64_t channels, cudaStream_t stream);
// out = 1 / sqrt(var + epsilon), cuDNN's saved inverse deviation.
cudaError_t LaunchInverseStd(const float* var, float epsilon, float* out, int64_t channels,
                             cudaStream_t stream);
// Batch norm's gradient with given (population) statistics: per channel
// offset_bp = sum dy, scale_bp = sum dy * (x - mean) * rsqrt(var + eps);
// dx = dy * scale * rsqrt(var + eps). x is [batch, channels, spatial]
// (NCHW) or [batch * spatial, channels] (NHWC).
struct BatchNormShape {
  int64_t batch, channels, spatial;
  bool nchw;
};
template <typename T>
cudaError_t LaunchBatchNormInferenceGrad(const BatchNormShape& s, const T* dy, const T* x,
                                         const float* scale, const float* mean, const float* var,
                                         float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                         cudaStream_t stream);

// Batch norm in training on NHWC data, x as [rows, channels] (rows = batch *
// height * width), by our own kernels: cuDNN's NHWC kernels took about
// 150 us a ResNet-20 layer at batch 128 on an H100, a few times the memory
// traffic's floor. Each pass reads the data once, with every thread summing
// one channel over a strip of rows; the blocks' partial sums are added in
// double. Both take `scratch` of BatchNormNhwcScratchFloats floats.
int64_t BatchNormNhwcScratchFloats(int64_t rows, int64_t channels);
// y = scale * (x - mean) / sqrt(var + epsilon) + offset with the batch's
// mean and biased variance (two passes: the mean, then the squared
// deviations); `mean` and `unbiased_var` get the batch's mean and unbiased
// variance (0 where rows < 2), as cuDNN's, for LaunchBatchNormFinalize.
template <typename T>
cudaError_t LaunchBatchNormTrainingNhwc(int64_t rows, int64_t channels, const T* x,
                                        const float* scale, const float* offset, float epsilon,
                                        T* y, float* mean, float* unbiased_var, float* scratch,
                                        cudaStream_t stream);
// The gradient of the above given the saved mean and biased variance:
// offset_bp = sum dy, scale_bp = sum dy * xhat, and
// dx = scale * rstd * (dy - offset_bp / rows - xhat * scale_bp / rows),
// xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + epsilon).
template <typename T>
cudaError_t LaunchBatchNormTrainingGradNhwc(int64_t rows, int64_t channels, const T* dy, const T* x,
                                            const float* scale, const float* mean, const float* var,
                                            float epsilon, T* dx, float* scale_bp, float* offset_bp,
                                            float* scratch, cudaStream_t stream);

// ---- Outputs sized by the data (search_kernels.cu.cc) ----

// Where over `n` elements of `rank` dims: first LaunchWhereCount writes
// each element's output row (the non-zero elements before it) to
// `positions` [n] and their number to `count` (device memory; the caller
// reads it back to size the output), with `scratch` of WhereScratchBytes(n)
// bytes; then LaunchWhereCoords writes the coordinates of each non-zero
// element to its row of `out` [count, rank]. T bool, float, double or
// int64_t. REQUIRES: n < 2^31 (cub's item count).
struct WhereShape {
  int64_t n = 0;
  int rank = 0;
  int64_t dims[kMaxIndexRank];
};
size_t WhereScratchBytes(int64_t n);
template <typename T>
cudaError_t LaunchWhereCount(const T* in, int64_t n, int64_t* positions, int64_t* count,
                             void* scratch, size_t scratch_bytes, cudaStream_t stream);
template <typename T>
cudaError_t LaunchWhereCoords(const T* in, const int64_t* positions, const WhereShape& s,
                              int64_t* out, cudaStream_t stream);

// TopKV2 over `rows` rows of `n`: the k largest of each row, largest first,
// and their int32 columns, with the CPU kernel's order (NaN above every
// number, -0 equal to +0, equal values in column order), by a stable
// segmented radix sort of each row; `scratch` of TopKScratchBytes bytes.
// T float, double or int64_t. REQUIRES: rows * n < 2^31, k <= n.
template <typename T>
size_t TopKScratchBytes(int64_t rows, int64_t n);
template <typename T>
cudaError_t LaunchTopK(const T* in, int64_t rows, int64_t n, int64_t k, T* values, int32_t* indices,
                       void* scratch, cudaStream_t stream);

// ---- Random numbers (random_kernels.cu.cc) ----

enum class RandomFn { kUniform, kNormal, kTruncatedNormal };

// out[i] = the CPU kernels' number for counter base + i under `key`
// (kernels/philox.h), so a seeded op draws the same numbers on both; base
// is read from `counter` (device memory) and the counter advanced by n, on
// the device, so a recorded step draws new numbers on every replay.
template <typename T>
cudaError_t LaunchRandom(RandomFn fn, uint32_t key0, uint32_t key1, uint64_t* counter, T* out,
                         int64_t n, cudaStream_t stream);

}  // namespace gpu
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_GPU_LAUNCH_H_
