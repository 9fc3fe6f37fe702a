// Kernels that rearrange elements by index arithmetic: Transpose, Slice,
// StridedSlice, Pad/PadV2 and Tile, on Eigen's shuffle, slice, pad and
// broadcast expressions over rank-N views (N <= 8). They only move
// elements, so they dispatch on element size (kernel_util.h). ReverseV2 too;
// DepthToSpace and SpaceToDepth copy depth runs; MirrorPad and its gradient
// walk the padded shape row by row with per-dim index maps.
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/strided_slice.h"
#include "framework/tensor_views.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/image_plans.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

constexpr int kMaxRank = 8;

absl::Status RankLimit(absl::string_view op, int rank) {
  if (rank > kMaxRank) {
    return absl::UnimplementedError(
        absl::StrCat(op, " supports tensors of rank up to ", kMaxRank, ", got rank ", rank));
  }
  return absl::OkStatus();
}

std::vector<int64_t> Dims(const TensorShape& s) {
  return std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end());
}

template <int N>
Eigen::array<Eigen::DenseIndex, N> Idx(const std::vector<int64_t>& v) {
  Eigen::array<Eigen::DenseIndex, N> a;
  for (int i = 0; i < N; ++i) a[i] = v[i];
  return a;
}

// Calls f.template operator()<U, N>() for the element size of `dtype` and
// rank `rank` (0 is treated as 1); with `strings`, U is std::string for
// DT_STRING (kernels that only move elements through Eigen's expressions).
template <typename F>
absl::Status Dispatch(absl::string_view op, DataType dtype, int rank, F&& f, bool strings = false) {
  TW_RETURN_IF_ERROR(RankLimit(op, rank));
  absl::Status status;
  const auto by_rank = [&](auto zero) {
    using U = decltype(zero);
    switch (std::max(rank, 1)) {
      case 1:
        status = f.template operator()<U, 1>();
        break;
      case 2:
        status = f.template operator()<U, 2>();
        break;
      case 3:
        status = f.template operator()<U, 3>();
        break;
      case 4:
        status = f.template operator()<U, 4>();
        break;
      case 5:
        status = f.template operator()<U, 5>();
        break;
      case 6:
        status = f.template operator()<U, 6>();
        break;
      case 7:
        status = f.template operator()<U, 7>();
        break;
      default:
        status = f.template operator()<U, 8>();
        break;
    }
  };
  if (strings && dtype == DT_STRING) {
    by_rank(std::string());
  } else if (!VisitByElementSizeCpu(dtype, by_rank)) {
    return UnsupportedDtype(op, dtype);
  }
  return status;
}

// Pads a shape with leading 1s up to rank max(rank, 1).
std::vector<int64_t> AtLeast1(std::vector<int64_t> v) {
  if (v.empty()) v.push_back(1);
  return v;
}

// Transpose, and with kConjugate ConjugateTranspose (complex values
// conjugated after the move; other types as Transpose).
template <bool kConjugate>
class TransposeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(TransposePlan plan, PlanTranspose(x.shape(), ctx->input(1)));
    if constexpr (kConjugate) {
      if (x.dtype() == DT_COMPLEX64) return Conjugated<complex64>(ctx, plan);
      if (x.dtype() == DT_COMPLEX128) return Conjugated<complex128>(ctx, plan);
    }
    if (plan.identity) {
      TW_ASSIGN_OR_RETURN(Tensor out, x.Reshaped(plan.shape));
      return ctx->set_output(0, std::move(out));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (x.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    return Dispatch(
        "Transpose", x.dtype(), x.dims(),
        [&]<typename U, int N>() {
          RawMap<U, N>(*out, Dims(plan.shape)).device(d) =
              RawMap<U, N>(x, Dims(x.shape())).shuffle(Idx<N>(plan.perm));
          return absl::OkStatus();
        },
        /*strings=*/true);
  }

 private:
  template <typename C>
  static absl::Status Conjugated(KernelContext* ctx, const TransposePlan& plan) {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (x.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    if (plan.identity) {
      out->flat<C>().device(d) = x.flat<C>().conjugate();
      return absl::OkStatus();
    }
    return Dispatch(
        "ConjugateTranspose", x.dtype(), x.dims(),
        [&]<typename U, int N>() {
          // rank 0 as 1, as Dispatch does.
          const auto dims = [](const TensorShape& s) {
            std::vector<int64_t> v = Dims(s);
            v.resize(N, 1);
            return Idx<N>(v);
          };
          const Eigen::TensorMap<const Eigen::Tensor<C, N, Eigen::RowMajor>> xs(x.data<C>(),
                                                                                dims(x.shape()));
          Eigen::TensorMap<Eigen::Tensor<C, N, Eigen::RowMajor>>(out->data<C>(), dims(plan.shape))
              .device(d) = xs.shuffle(Idx<N>(plan.perm)).conjugate();
          return absl::OkStatus();
        },
        /*strings=*/false);
  }
};

// Copies in[begin : begin + size] (every stride 1; `dims` the input's) as
// runs of contiguous bytes: the trailing dims the slice takes whole join the
// innermost one it cuts into one run per row of the leading dims, memcpy'd,
// the rows in parallel. Eigen's slice evaluator computed each element's
// source index: the gradient of a Pad (a Slice) took 5% of a ResNet-20
// training step that way.
void ContiguousSliceCopy(ThreadPool* pool, const char* in, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
                         size_t element_size, char* out) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> stride(rank, 1);  // the input's, in elements
  for (int i = rank - 2; i >= 0; --i) stride[i] = stride[i + 1] * dims[i + 1];
  int cut = rank - 1;  // the innermost dim not taken whole, or 0
  while (cut > 0 && size[cut] == dims[cut]) --cut;
  const int64_t run = size[cut] * stride[cut];  // elements per row
  int64_t rows = 1;
  for (int i = 0; i < cut; ++i) rows *= size[i];
  const size_t run_bytes = static_cast<size_t>(run) * element_size;
  pool->ParallelFor(rows, run * static_cast<int64_t>(element_size) / 4 + 8,
                    [&](int64_t r0, int64_t r1) {
                      for (int64_t row = r0; row < r1; ++row) {
                        int64_t offset = begin[cut] * stride[cut];
                        for (int64_t i = cut - 1, rest = row; i >= 0; --i) {
                          offset += (begin[i] + rest % size[i]) * stride[i];
                          rest /= size[i];
                        }
                        std::memcpy(out + row * run_bytes,
                                    in + static_cast<size_t>(offset) * element_size, run_bytes);
                      }
                    });
}

// Copies input[begin : end : strides] (canonical, one entry per dim).
absl::Status StridedCopy(KernelContext* ctx, const Tensor& in, const std::vector<int64_t>& begin,
                         const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                         const std::vector<int64_t>& processing_dims, Tensor* out) {
  if (out->NumElements() == 0) return absl::OkStatus();
  const auto& d = ctx->eigen_cpu_device();
  const std::vector<int64_t> in_dims = AtLeast1(Dims(in.shape()));
  const std::vector<int64_t> pdims = AtLeast1(processing_dims);
  const std::vector<int64_t> b = begin.empty() ? std::vector<int64_t>{0} : begin,
                             e = end.empty() ? std::vector<int64_t>{1} : end,
                             s = strides.empty() ? std::vector<int64_t>{1} : strides;
  const size_t element_size = TensorElementSize(in.dtype());
  if (std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; }) && element_size > 0 &&
      in.dtype() != DT_STRING && in.dtype() != DT_RESOURCE && in.dtype() != DT_VARIANT) {
    TW_RETURN_IF_ERROR(RankLimit("StridedSlice", in.dims()));
    ContiguousSliceCopy(ctx->intra_op_pool(), static_cast<const char*>(in.raw_data()), in_dims, b,
                        pdims, element_size, static_cast<char*>(out->raw_data()));
    return absl::OkStatus();
  }
  return Dispatch(
      "StridedSlice", in.dtype(), in.dims(),
      [&]<typename U, int N>() {
        RawMap<U, N>(*out, pdims).device(d) =
            RawMap<U, N>(in, in_dims).stridedSlice(Idx<N>(b), Idx<N>(e), Idx<N>(s));
        return absl::OkStatus();
      },
      /*strings=*/true);
}

class StridedSliceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return ReadStridedSliceMasks(c, &spec_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(StridedSlicePlan plan, PlanStridedSlice(in.shape(), spec_, ctx->input(1),
                                                                ctx->input(2), ctx->input(3)));
    if (plan.slice.is_identity) {
      TW_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(plan.final_shape));
      return ctx->set_output(0, std::move(out));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.final_shape));
    return StridedCopy(ctx, in, plan.slice.begin, plan.slice.end, plan.slice.strides,
                       Dims(plan.processing), out);
  }

 private:
  StridedSliceSpec spec_;
};

// The gradient of StridedSlice: zeros of `shape` with dy written back into
// the sliced positions.
class StridedSliceGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return ReadStridedSliceMasks(c, &spec_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(StridedSlicePlan plan, PlanStridedSlice(shape, spec_, ctx->input(1),
                                                                ctx->input(2), ctx->input(3)));
    const StridedSliceResult& r = plan.slice;
    const TensorShape& final_shape = plan.final_shape;
    const TensorShape& processing = plan.processing;
    const Tensor& dy = ctx->input(4);
    if (dy.shape() != final_shape) {
      return absl::InvalidArgumentError(absl::StrCat("shape of dy was ", dy.shape().DebugString(),
                                                     " instead of ", final_shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    std::memset(out->raw_data(), 0, out->TotalBytes());
    if (dy.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    const std::vector<int64_t> out_dims = AtLeast1(dims), pdims = AtLeast1(Dims(processing));
    const std::vector<int64_t> b = r.begin.empty() ? std::vector<int64_t>{0} : r.begin,
                               e = r.end.empty() ? std::vector<int64_t>{1} : r.end,
                               st = r.strides.empty() ? std::vector<int64_t>{1} : r.strides;
    return Dispatch("StridedSliceGrad", dy.dtype(), shape.dims(), [&]<typename U, int N>() {
      RawMap<U, N>(*out, out_dims).stridedSlice(Idx<N>(b), Idx<N>(e), Idx<N>(st)).device(d) =
          RawMap<U, N>(dy, pdims);
      return absl::OkStatus();
    });
  }

 private:
  StridedSliceSpec spec_;
};

// `value` broadcast to `shape` (TF 2's slice assignments broadcast the
// r-value, NumPy's rules), or `value` itself when it has that shape.
absl::StatusOr<Tensor> BroadcastValue(KernelContext* ctx, const Tensor& value,
                                      const TensorShape& shape) {
  if (value.shape() == shape) return value;
  bool ok = value.dims() <= shape.dims();
  std::vector<int64_t> dims(shape.dims(), 1), factors(shape.dims(), 1);
  for (int i = 0; ok && i < value.dims(); ++i) {
    const int o = shape.dims() - value.dims() + i;
    dims[o] = value.dim_size(i);
    ok = dims[o] == 1 || dims[o] == shape.dim_size(o);
  }
  for (int o = 0; o < shape.dims(); ++o) {
    if (dims[o] == 1) factors[o] = shape.dim_size(o);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot broadcast input shape ",
                                                   value.shape().DebugString(),
                                                   " into final shape ", shape.DebugString()));
  }
  TW_ASSIGN_OR_RETURN(Tensor out, ctx->allocate_temp(value.dtype(), shape));
  if (out.NumElements() == 0) return out;
  const auto& d = ctx->eigen_cpu_device();
  TW_RETURN_IF_ERROR(Dispatch(
      "StridedSliceAssign", value.dtype(), shape.dims(),
      [&]<typename U, int N>() {
        RawMap<U, N>(out, Dims(shape)).device(d) =
            RawMap<U, N>(value, dims).broadcast(Idx<N>(factors));
        return absl::OkStatus();
      },
      /*strings=*/true));
  return out;
}

// target[begin:end:strides] = value, the slice read from the masks and the
// begin, end and strides inputs 1-3 of `ctx`; value broadcast to the slice.
absl::Status AssignStrided(KernelContext* ctx, const StridedSliceSpec& spec, const Tensor& value,
                           Tensor* target) {
  TW_ASSIGN_OR_RETURN(StridedSlicePlan plan, PlanStridedSlice(target->shape(), spec, ctx->input(1),
                                                              ctx->input(2), ctx->input(3)));
  TW_ASSIGN_OR_RETURN(Tensor v, BroadcastValue(ctx, value, plan.final_shape));
  if (v.NumElements() == 0) return absl::OkStatus();
  const StridedSliceResult& r = plan.slice;
  const auto& d = ctx->eigen_cpu_device();
  const std::vector<int64_t> dims = AtLeast1(Dims(target->shape())),
                             pdims = AtLeast1(Dims(plan.processing));
  const std::vector<int64_t> b = r.begin.empty() ? std::vector<int64_t>{0} : r.begin,
                             e = r.end.empty() ? std::vector<int64_t>{1} : r.end,
                             st = r.strides.empty() ? std::vector<int64_t>{1} : r.strides;
  return Dispatch(
      "StridedSliceAssign", target->dtype(), target->dims(),
      [&]<typename U, int N>() {
        RawMap<U, N>(*target, dims).stridedSlice(Idx<N>(b), Idx<N>(e), Idx<N>(st)).device(d) =
            RawMap<U, N>(v, pdims);
        return absl::OkStatus();
      },
      /*strings=*/true);
}

// TensorStridedSliceUpdate(input, begin, end, strides, value): a copy of
// input with the slice assigned.
class TensorStridedSliceUpdateOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return ReadStridedSliceMasks(c, &spec_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor out, CopyForWrite(ctx, ctx->input(0)));
    TW_RETURN_IF_ERROR(AssignStrided(ctx, spec_, ctx->input(4), &out));
    return ctx->set_output(0, std::move(out));
  }

 private:
  StridedSliceSpec spec_;
};

// StridedSliceAssign(ref, ...) and ResourceStridedSliceAssign(resource,
// ...): the variable's slice assigned in place, under its lock (copied
// first when another tensor shares its buffer, Note [Variable
// copy-on-write]); a bad slice or value leaves it as it was.
class StridedSliceAssignOp : public OpKernel {
 public:
  explicit StridedSliceAssignOp(bool resource) : resource_(resource) {}
  absl::Status Init(const KernelConstruction& c) override {
    return ReadStridedSliceMasks(c, &spec_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    std::shared_ptr<Var> holder;
    TW_ASSIGN_OR_RETURN(Var * var, RefOrResourceVar(ctx, 0, resource_, &holder));
    {
      absl::MutexLock lock(&var->mu);
      if (!var->initialized) return UninitializedError(*var);
      const Tensor& value = ctx->input(4);
      if (var->tensor.dtype() != value.dtype()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Variable ", var->name(), " holds ", DataTypeString(var->tensor.dtype()),
                         " but the assigned value is ", DataTypeString(value.dtype())));
      }
      Tensor target = var->tensor;
      if (!var->tensor.RefCountIsOne()) {
        TW_ASSIGN_OR_RETURN(target, CopyForWrite(ctx, var->tensor));
      }
      TW_RETURN_IF_ERROR(AssignStrided(ctx, spec_, value, &target));
      var->tensor = std::move(target);
    }
    if (!resource_) ctx->set_output_ref(0, var);
    return absl::OkStatus();
  }

 private:
  const bool resource_;
  StridedSliceSpec spec_;
};

class SliceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(in.shape(), ctx->input(1), ctx->input(2)));
    if (plan.shape == in.shape()) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    return StridedCopy(ctx, in, plan.begin, plan.end, std::vector<int64_t>(in.dims(), 1), plan.size,
                       out);
  }
};

// Pad(input, paddings[rank, 2]) and PadV2(..., constant_values).
class PadOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor* constant = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    TW_ASSIGN_OR_RETURN(PadPlan plan, PlanPad(in.shape(), ctx->input(1), constant));
    const int rank = in.dims();
    std::vector<std::pair<Eigen::DenseIndex, Eigen::DenseIndex>> pads(kMaxRank, {0, 0});
    for (int i = 0; i < rank && i < kMaxRank; ++i) {
      pads[i] = {plan.before[i], plan.shape.dim_size(i) - in.dim_size(i) - plan.before[i]};
    }
    const std::vector<int64_t> out_dims = Dims(plan.shape);
    const TensorShape& shape = plan.shape;
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    if (rank == 0) return ctx->set_output(0, in);
    return Dispatch(
        "Pad", in.dtype(), rank,
        [&]<typename U, int N>() {
          const U value = constant != nullptr ? *RawData<U>(*constant) : U{};
          Eigen::array<std::pair<Eigen::DenseIndex, Eigen::DenseIndex>, N> p;
          for (int i = 0; i < N; ++i) p[i] = pads[i];
          if (in.NumElements() == 0) {
            std::fill_n(RawData<U>(*out), out->NumElements(), value);
          } else {
            RawMap<U, N>(*out, out_dims).device(d) =
                RawMap<U, N>(in, Dims(in.shape())).pad(p, value);
          }
          return absl::OkStatus();
        },
        /*strings=*/true);
  }
};

// The dimensions Reverse (v1) flips: dims, one bool per input dimension.
absl::StatusOr<std::vector<bool>> PlanReverseV1(const TensorShape& in, const Tensor& dims) {
  if (dims.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'dims' must be 1-dimension, not ", dims.dims()));
  }
  if (dims.NumElements() != in.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'dims' must have the same number of values as 'input' has dimensions. 'input' has ",
        in.dims(), "'dims' has ", dims.NumElements(), " values"));
  }
  std::vector<bool> flip(std::max(in.dims(), 1), false);
  for (int i = 0; i < in.dims(); ++i) flip[i] = dims.data<bool>()[i];
  return flip;
}

// ReverseV2(tensor, axis) and Reverse(tensor, dims) (v1): Eigen's reverse
// over the element bytes (V2's axes checked by kernels/rearrange.h's
// PlanReverse, as on GPUs).
class ReverseV2Op : public OpKernel {
 public:
  explicit ReverseV2Op(bool v1 = false) : v1_(v1) {}
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const std::vector<bool> flip, v1_ ? PlanReverseV1(in.shape(), ctx->input(1))
                                                          : PlanReverse(in.shape(), ctx->input(1)));
    if (in.dims() == 0 || in.NumElements() == 0) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const auto& d = ctx->eigen_cpu_device();
    return Dispatch(
        "ReverseV2", in.dtype(), in.dims(),
        [&]<typename U, int N>() {
          Eigen::array<bool, N> r;
          for (int i = 0; i < N; ++i) r[i] = flip[i];
          RawMap<U, N>(*out, Dims(in.shape())).device(d) =
              RawMap<U, N>(in, Dims(in.shape())).reverse(r);
          return absl::OkStatus();
        },
        /*strings=*/true);
  }

 private:
  const bool v1_;
};

// DepthToSpace and SpaceToDepth (kernels/image_plans.h's BlockPlan): depth
// runs of c elements are copied as bytes.
class BlockOp : public OpKernel {
 public:
  explicit BlockOp(bool to_space) : to_space_(to_space) {}
  absl::Status Init(const KernelConstruction& c) override { return attrs_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const BlockPlan p, PlanBlock(to_space_, attrs_.block, in.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.shape));
    if (p.shape.num_elements() == 0) return absl::OkStatus();
    const int64_t s = p.s, h = p.h, w = p.w, c = p.c;
    const bool ok = VisitByElementSizeCpu(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      const U* src = RawData<U>(in);
      U* dst = RawData<U>(*out);
      // Index of (b, y, x, k) on the spatial side and on the deep side.
      const auto big = [&](int64_t b, int64_t y, int64_t x) {
        return ((b * h * s + y) * w * s + x) * c;
      };
      const auto deep = [&](int64_t b, int64_t y, int64_t x, int64_t i, int64_t j) {
        return ((b * h + y) * w + x) * c * s * s + (i * s + j) * c;
      };
      for (int64_t b = 0; b < p.batch; ++b) {
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) {
            for (int64_t i = 0; i < s; ++i) {
              for (int64_t j = 0; j < s; ++j) {
                const int64_t sp = big(b, y * s + i, x * s + j), dp = deep(b, y, x, i, j);
                if (to_space_) {
                  std::copy_n(src + dp, c, dst + sp);
                } else {
                  std::copy_n(src + sp, c, dst + dp);
                }
              }
            }
          }
        }
      }
    });
    if (!ok) return UnsupportedDtype(to_space_ ? "DepthToSpace" : "SpaceToDepth", in.dtype());
    return absl::OkStatus();
  }

 private:
  const bool to_space_;
  BlockAttrs attrs_;
};

// Calls f(big_index, small_index) for every element of the padded shape, in
// order, the small index being the flat index of the element it mirrors.
template <typename F>
void ForEachMirrored(const MirrorPlan& plan, F&& f) {
  const int rank = plan.big.dims();
  if (rank == 0) {
    f(0, 0);
    return;
  }
  if (plan.big.num_elements() == 0) return;
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * plan.small.dim_size(d + 1);
  const int64_t inner = plan.big.dim_size(rank - 1);
  const std::vector<int64_t>& last = plan.map[rank - 1];
  std::vector<int64_t> idx(rank - 1, 0);
  const int64_t rows = plan.big.num_elements() / inner;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (int d = 0; d < rank - 1; ++d) base += plan.map[d][idx[d]] * strides[d];
    for (int64_t j = 0; j < inner; ++j) f(r * inner + j, base + last[j]);
    for (int d = rank - 2; d >= 0 && ++idx[d] == plan.big.dim_size(d); --d) idx[d] = 0;
  }
}

// MirrorPad and MirrorPadGrad read their mode alike.
class MirrorKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(reflect_, ReadMirrorReflect(c));
    return absl::OkStatus();
  }

 protected:
  bool reflect_ = true;
};

template <typename T>
class MirrorPadOp : public MirrorKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(MirrorPlan plan, PlanMirrorPad(in.shape(), ctx->input(1), reflect_, false));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.big));
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    ForEachMirrored(plan, [&](int64_t b, int64_t s) { dst[b] = src[s]; });
    return absl::OkStatus();
  }
};

template <typename T>
class MirrorPadGradOp : public MirrorKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(MirrorPlan plan, PlanMirrorPad(in.shape(), ctx->input(1), reflect_, true));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.small));
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    ForEachMirrored(plan, [&](int64_t b, int64_t s) { dst[s] += src[b]; });
    return absl::OkStatus();
  }
};

class TileOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(TilePlan plan, PlanTile(in.shape(), ctx->input(1)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (in.dims() == 0) return ctx->set_output(0, in);
    const auto& d = ctx->eigen_cpu_device();
    return Dispatch(
        "Tile", in.dtype(), in.dims(),
        [&]<typename U, int N>() {
          RawMap<U, N>(*out, Dims(plan.shape)).device(d) =
              RawMap<U, N>(in, Dims(in.shape())).broadcast(Idx<N>(plan.multiples));
          return absl::OkStatus();
        },
        /*strings=*/true);
  }
};

TW_REGISTER_KERNELS(slice_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("Transpose"), MakeFactory<TransposeOp<false>>());
  RegisterKernel(cpu("ConjugateTranspose"), MakeFactory<TransposeOp<true>>());
  RegisterKernel(cpu("StridedSlice"), MakeFactory<StridedSliceOp>());
  RegisterKernel(cpu("StridedSliceGrad"), MakeFactory<StridedSliceGradOp>());
  RegisterKernel(cpu("TensorStridedSliceUpdate"), MakeFactory<TensorStridedSliceUpdateOp>());
  RegisterKernel(cpu("StridedSliceAssign"),
                 [] { return std::make_unique<StridedSliceAssignOp>(false); });
  RegisterKernel(cpu("ResourceStridedSliceAssign"),
                 [] { return std::make_unique<StridedSliceAssignOp>(true); });
  RegisterKernel(cpu("Slice"), MakeFactory<SliceOp>());
  RegisterKernel(cpu("Pad"), MakeFactory<PadOp>());
  RegisterKernel(cpu("PadV2"), MakeFactory<PadOp>());
  RegisterKernel(cpu("Tile"), MakeFactory<TileOp>());
  RegisterKernel(cpu("ReverseV2"), MakeFactory<ReverseV2Op>());
  RegisterKernel(cpu("Reverse"), [] { return std::make_unique<ReverseV2Op>(true); });
  RegisterKernel(cpu("DepthToSpace"), [] { return std::make_unique<BlockOp>(true); });
  RegisterKernel(cpu("SpaceToDepth"), [] { return std::make_unique<BlockOp>(false); });
  RegisterTypedKernels<MirrorPadOp, float, double, int32_t, int64_t, uint8_t, bool, std::string>(
      cpu("MirrorPad"), "T");
  RegisterTypedKernels<MirrorPadGradOp, float, double, int32_t, int64_t>(cpu("MirrorPadGrad"), "T");
}

}  // namespace
}  // namespace towerflow
