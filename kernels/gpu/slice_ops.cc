// Element moves on GPUs: Transpose, Slice, StridedSlice, Tile, ReverseV2,
// DepthToSpace and SpaceToDepth through one index-arithmetic gather
// (LaunchIndexGather), Pad and PadV2 through its twin (LaunchIndexPad),
// MirrorPad and its gradient through their own (LaunchMirrorPad,
// LaunchMirrorPadGrad). The checks and shapes are the CPU kernels'
// (kernels/rearrange.h, core/strided_slice.h, kernels/image_plans.h); the
// index arguments stay in host memory.
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/strided_slice.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/image_plans.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace gpu {
namespace {

// Row-major strides of `s` (at least one entry).
std::vector<int64_t> Strides(const TensorShape& s) {
  std::vector<int64_t> strides(std::max(s.dims(), 1), 1);
  for (int d = s.dims() - 2; d >= 0; --d) strides[d] = strides[d + 1] * s.dim_size(d + 1);
  return strides;
}

// An IndexMap over `dims` (a scalar is [1]); Unimplemented past the rank limit.
absl::StatusOr<IndexMap> MapOver(absl::string_view op, absl::Span<const int64_t> dims) {
  if (dims.size() > kMaxIndexRank) {
    return absl::UnimplementedError(absl::StrCat(op, " on GPUs supports tensors of rank up to ",
                                                 kMaxIndexRank, ", got rank ", dims.size()));
  }
  IndexMap map;
  map.rank = std::max<int>(static_cast<int>(dims.size()), 1);
  for (int d = 0; d < map.rank; ++d) {
    map.dims[d] = dims.empty() ? 1 : dims[d];
    map.mult[d] = 0;
    map.mod[d] = 0;
  }
  return map;
}

// out = in gathered through `map`, moving elements as bytes.
absl::Status Gather(KernelContext* ctx, absl::string_view op, const Tensor& in, const IndexMap& map,
                    Tensor* out) {
  if (out->NumElements() == 0) return absl::OkStatus();
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  cudaError_t error = cudaSuccess;
  const bool ok = VisitByElementSize(in.dtype(), [&](auto zero) {
    using U = decltype(zero);
    error = LaunchIndexGather<U>(static_cast<const U*>(in.raw_data()),
                                 static_cast<U*>(out->raw_data()), map, gpu->compute_stream());
  });
  if (!ok) return UnsupportedDtype(op, in.dtype());
  TW_CUDA_RETURN_IF_ERROR(error);
  return absl::OkStatus();
}

class TransposeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(TransposePlan plan, PlanTranspose(x.shape(), ctx->input(1)));
    if (plan.identity) {
      TW_ASSIGN_OR_RETURN(Tensor out, x.Reshaped(plan.shape));
      return ctx->set_output(0, std::move(out));
    }
    TW_ASSIGN_OR_RETURN(IndexMap map, MapOver("Transpose", plan.shape.dim_sizes()));
    const std::vector<int64_t> strides = Strides(x.shape());
    for (int d = 0; d < x.dims(); ++d) map.mult[d] = strides[plan.perm[d]];
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    return Gather(ctx, "Transpose", x, map, out);
  }
};

// in[begin : end : strides] (one entry per input dim) into out, whose
// elements are those of `dims` in order.
absl::Status StridedGather(KernelContext* ctx, absl::string_view op, const Tensor& in,
                           absl::Span<const int64_t> dims, const std::vector<int64_t>& begin,
                           const std::vector<int64_t>& strides, Tensor* out) {
  TW_ASSIGN_OR_RETURN(IndexMap map, MapOver(op, dims));
  const std::vector<int64_t> in_strides = Strides(in.shape());
  for (size_t d = 0; d < begin.size(); ++d) {
    map.mult[d] = in_strides[d] * strides[d];
    map.base += begin[d] * in_strides[d];
  }
  return Gather(ctx, op, in, map, out);
}

class SliceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(in.shape(), ctx->input(1), ctx->input(2)));
    if (plan.shape == in.shape()) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    return StridedGather(ctx, "Slice", in, plan.size, plan.begin,
                         std::vector<int64_t>(in.dims(), 1), out);
  }
};

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
    return StridedGather(ctx, "StridedSlice", in, plan.processing.dim_sizes(), plan.slice.begin,
                         plan.slice.strides, out);
  }

 private:
  StridedSliceSpec spec_;
};

class TileOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(TilePlan plan, PlanTile(in.shape(), ctx->input(1)));
    TW_ASSIGN_OR_RETURN(IndexMap map, MapOver("Tile", plan.shape.dim_sizes()));
    const std::vector<int64_t> strides = Strides(in.shape());
    for (int d = 0; d < in.dims(); ++d) {
      map.mult[d] = strides[d];
      map.mod[d] = in.dim_size(d);
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    return Gather(ctx, "Tile", in, map, out);
  }
};

// ReverseV2: a flipped dim reads from its far end (a negative stride).
class ReverseOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const std::vector<bool> flip, PlanReverse(in.shape(), ctx->input(1)));
    if (in.dims() == 0 || in.NumElements() == 0) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(IndexMap map, MapOver("ReverseV2", in.shape().dim_sizes()));
    const std::vector<int64_t> strides = Strides(in.shape());
    for (int d = 0; d < in.dims(); ++d) {
      map.mult[d] = flip[d] ? -strides[d] : strides[d];
      if (flip[d]) map.base += (in.dim_size(d) - 1) * strides[d];
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    return Gather(ctx, "ReverseV2", in, map, out);
  }
};

// MirrorPad and MirrorPadGrad: the CPU kernels' plan, then one thread per
// output element.
absl::StatusOr<MirrorMap> MirrorMapOf(absl::string_view op, const MirrorPlan& plan, bool reflect) {
  if (plan.big.dims() > kMaxIndexRank) {
    return absl::UnimplementedError(absl::StrCat(op, " on GPUs supports tensors of rank up to ",
                                                 kMaxIndexRank, ", got rank ", plan.big.dims()));
  }
  MirrorMap map;
  map.rank = plan.big.dims();
  map.reflect = reflect;
  for (int d = 0; d < map.rank; ++d) {
    map.big[d] = plan.big.dim_size(d);
    map.small[d] = plan.small.dim_size(d);
    map.before[d] = plan.before[d];
  }
  return map;
}

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(bool grad) : grad_(grad) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(reflect_, ReadMirrorReflect(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const char* op = grad_ ? "MirrorPadGrad" : "MirrorPad";
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const MirrorPlan plan,
                        PlanMirrorPad(in.shape(), ctx->input(1), reflect_, grad_));
    TW_ASSIGN_OR_RETURN(const MirrorMap map, MirrorMapOf(op, plan, reflect_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, grad_ ? plan.small : plan.big));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaStream_t stream = gpu->compute_stream();
    if (grad_) {
      // The sums: float or double (the registration's types).
      if (in.dtype() == DT_DOUBLE) {
        TW_CUDA_RETURN_IF_ERROR(
            LaunchMirrorPadGrad<double>(in.data<double>(), out->data<double>(), map, stream));
      } else {
        TW_CUDA_RETURN_IF_ERROR(
            LaunchMirrorPadGrad<float>(in.data<float>(), out->data<float>(), map, stream));
      }
      return absl::OkStatus();
    }
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      error = LaunchMirrorPad<U>(static_cast<const U*>(in.raw_data()),
                                 static_cast<U*>(out->raw_data()), map, stream);
    });
    if (!ok) return UnsupportedDtype(op, in.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }

 private:
  const bool grad_;
  bool reflect_ = true;
};

// Pad and PadV2 (the constant read on the host).
class PadOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor* constant = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    TW_ASSIGN_OR_RETURN(PadPlan plan, PlanPad(in.shape(), ctx->input(1), constant));
    if (in.dims() > kMaxIndexRank) {
      return absl::UnimplementedError(absl::StrCat("Pad on GPUs supports tensors of rank up to ",
                                                   kMaxIndexRank, ", got rank ", in.dims()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    PadMap map;
    map.rank = std::max(in.dims(), 1);
    for (int d = 0; d < map.rank; ++d) {
      map.out_dims[d] = in.dims() == 0 ? 1 : plan.shape.dim_size(d);
      map.in_dims[d] = in.dims() == 0 ? 1 : in.dim_size(d);
      map.offset[d] = in.dims() == 0 ? 0 : plan.before[d];
    }
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      U fill{};  // zero bits: 0 of every numeric type
      if (constant != nullptr) std::memcpy(&fill, constant->raw_data(), sizeof(U));
      error = LaunchIndexPad<U>(static_cast<const U*>(in.raw_data()),
                                static_cast<U*>(out->raw_data()), map, fill, gpu->compute_stream());
    });
    if (!ok) return UnsupportedDtype("Pad", in.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }
};

// DepthToSpace and SpaceToDepth (kernels/image_plans.h's BlockPlan): the
// output walked as six dims that split the block out of the spatial ones,
// each read from the input by its stride there.
class BlockOp : public OpKernel {
 public:
  explicit BlockOp(bool to_space) : to_space_(to_space) {}
  absl::Status Init(const KernelConstruction& c) override { return attrs_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const BlockPlan p, PlanBlock(to_space_, attrs_.block, in.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.shape));
    const int64_t s = p.s, h = p.h, w = p.w, c = p.c;
    IndexMap map;
    map.rank = 6;
    // DepthToSpace: out [b, y, i, x, j, k] = in [b, y, x, (i * s + j) * c + k];
    // SpaceToDepth: out [b, y, x, i, j, k] = in [b, y * s + i, x * s + j, k].
    const int64_t dims_to_space[6] = {p.batch, h, s, w, s, c};
    const int64_t mult_to_space[6] = {h * w * c * s * s, w * c * s * s, s * c, c * s * s, c, 1};
    const int64_t dims_to_depth[6] = {p.batch, h, w, s, s, c};
    const int64_t mult_to_depth[6] = {h * s * w * s * c, s * w * s * c, s * c, w * s * c, c, 1};
    for (int d = 0; d < 6; ++d) {
      map.dims[d] = to_space_ ? dims_to_space[d] : dims_to_depth[d];
      map.mult[d] = to_space_ ? mult_to_space[d] : mult_to_depth[d];
      map.mod[d] = 0;
    }
    return Gather(ctx, to_space_ ? "DepthToSpace" : "SpaceToDepth", in, map, out);
  }

 private:
  const bool to_space_;
  BlockAttrs attrs_;
};

}  // namespace

TW_REGISTER_KERNELS(gpu_slice_ops) {
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    const auto gpu = [t](const char* op) {
      return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint("T", t);
    };
    RegisterKernel(gpu("Transpose").HostMemory("perm"), MakeFactory<TransposeOp>());
    RegisterKernel(gpu("Slice").HostMemory("begin").HostMemory("size"), MakeFactory<SliceOp>());
    RegisterKernel(gpu("StridedSlice").HostMemory("begin").HostMemory("end").HostMemory("strides"),
                   MakeFactory<StridedSliceOp>());
    RegisterKernel(gpu("Tile").HostMemory("multiples"), MakeFactory<TileOp>());
    for (DataType index : {DT_INT32, DT_INT64}) {
      RegisterKernel(gpu("ReverseV2").TypeConstraint("Tidx", index).HostMemory("axis"),
                     MakeFactory<ReverseOp>());
      RegisterKernel(gpu("MirrorPad").TypeConstraint("Tpaddings", index).HostMemory("paddings"),
                     [] { return std::make_unique<MirrorPadOp>(false); });
      if (t == DT_FLOAT || t == DT_DOUBLE) {
        RegisterKernel(
            gpu("MirrorPadGrad").TypeConstraint("Tpaddings", index).HostMemory("paddings"),
            [] { return std::make_unique<MirrorPadOp>(true); });
      }
    }
    RegisterKernel(gpu("Pad").HostMemory("paddings"), MakeFactory<PadOp>());
    RegisterKernel(gpu("PadV2").HostMemory("paddings").HostMemory("constant_values"),
                   MakeFactory<PadOp>());
    RegisterKernel(gpu("DepthToSpace"), [] { return std::make_unique<BlockOp>(true); });
    RegisterKernel(gpu("SpaceToDepth"), [] { return std::make_unique<BlockOp>(false); });
  }
}

}  // namespace gpu
}  // namespace towerflow
