// Block rearrangements and image resizes on GPUs, as cpu/image_ops.cc:
// SpaceToBatchND, BatchToSpaceND, ResizeBilinear, ResizeNearestNeighbor and
// the resizes' gradients. Sizes and block shapes stay in host memory: the
// CPU kernels' plans (kernels/image_plans.h) check them and give the same
// errors, and what the device needs of them (taps) is copied over once per
// call.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/index_kernels.h"
#include "kernels/image_plans.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace gpu {
namespace {

// SpaceToBatchND (to_batch) and BatchToSpaceND.
class SpaceBatchOp : public OpKernel {
 public:
  explicit SpaceBatchOp(bool to_batch) : to_batch_(to_batch) {}
  absl::Status Compute(KernelContext* ctx) override {
    const char* op = to_batch_ ? "SpaceToBatchND" : "BatchToSpaceND";
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const SpaceBatchPlan p,
                        PlanSpaceBatch(to_batch_, in.shape(), ctx->input(1), ctx->input(2)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.shape));
    if (p.shape.num_elements() == 0) return absl::OkStatus();
    const int m = static_cast<int>(p.block.size());
    if (m > kMaxBlockDims) {
      return absl::UnimplementedError(absl::StrCat(op, " on a GPU takes at most ", kMaxBlockDims,
                                                   " block dimensions, got ", m));
    }
    SpaceBatchMap map;
    map.to_batch = to_batch_;
    map.m = m;
    for (int k = 0; k < m; ++k) {
      map.block[k] = p.block[k];
      map.pad_before[k] = p.pads[2 * k];
      map.deep[k] = p.deep[k + 1];
      map.limit[k] = p.limit[k];
    }
    map.wide_batch = p.wide_batch;
    map.product = p.product;
    map.inner = p.inner;
    const Tensor& deep = to_batch_ ? *out : in;
    const int64_t positions = deep.NumElements() / std::max<int64_t>(p.inner, 1);
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      error = LaunchSpaceBatch<U>(static_cast<const U*>(in.raw_data()),
                                  static_cast<U*>(out->raw_data()), map, positions,
                                  gpu->compute_stream());
    });
    if (!ok) return UnsupportedDtype(op, in.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }

 private:
  const bool to_batch_;
};

// A bilinear resize's taps and fractions on the device, for `in` resized to
// `out` rows and columns.
struct DeviceTaps {
  Tensor taps, lerps;
};
absl::StatusOr<DeviceTaps> BilinearTapsOnDevice(GpuDevice* gpu, const ResizeAttrs& a,
                                                const ResizeShape& s) {
  const Taps ys = BilinearTaps(a, s.in_h, s.out_h), xs = BilinearTaps(a, s.in_w, s.out_w);
  std::vector<int64_t> taps = ys.lower;
  taps.insert(taps.end(), ys.upper.begin(), ys.upper.end());
  taps.insert(taps.end(), xs.lower.begin(), xs.lower.end());
  taps.insert(taps.end(), xs.upper.begin(), xs.upper.end());
  std::vector<float> lerps = ys.lerp;
  lerps.insert(lerps.end(), xs.lerp.begin(), xs.lerp.end());
  DeviceTaps d;
  TW_ASSIGN_OR_RETURN(d.taps, Upload(gpu, taps));
  TW_ASSIGN_OR_RETURN(d.lerps, Upload(gpu, lerps));
  return d;
}

absl::StatusOr<Tensor> NearestTapsOnDevice(GpuDevice* gpu, const ResizeAttrs& a,
                                           const ResizeShape& s) {
  std::vector<int64_t> taps = NearestTaps(a, s.in_h, s.out_h);
  const std::vector<int64_t> xs = NearestTaps(a, s.in_w, s.out_w);
  taps.insert(taps.end(), xs.begin(), xs.end());
  return Upload(gpu, taps);
}

ResizeShape ShapeOf(const ResizeIo& io) {
  return ResizeShape{io.n, io.in_h, io.in_w, io.c, io.out_h, io.out_w};
}

template <typename T>
class ResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    if (io.out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const ResizeShape s = ShapeOf(io);
    TW_ASSIGN_OR_RETURN(const DeviceTaps t, BilinearTapsOnDevice(gpu, a_, s));
    TW_CUDA_RETURN_IF_ERROR(LaunchResizeBilinear<T>(s, ctx->input(0).data<T>(),
                                                    t.taps.data<int64_t>(), t.lerps.data<float>(),
                                                    io.out->data<float>(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeBilinearGrad(grads, original_image).
template <typename T>
class ResizeBilinearGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckResizeGrad(grads, original));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, original.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), gpu->compute_stream()));
    const ResizeShape s{grads.dim_size(0), original.dim_size(1), original.dim_size(2),
                        grads.dim_size(3), grads.dim_size(1),    grads.dim_size(2)};
    TW_ASSIGN_OR_RETURN(const DeviceTaps t, BilinearTapsOnDevice(gpu, a_, s));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchResizeBilinearGrad<T>(s, grads.data<float>(), t.taps.data<int64_t>(),
                                    t.lerps.data<float>(), out->data<T>(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

class ResizeNearestOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    if (io.out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const ResizeShape s = ShapeOf(io);
    TW_ASSIGN_OR_RETURN(const Tensor taps, NearestTapsOnDevice(gpu, a_, s));
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(in.dtype(), [&](auto zero) {
      using U = decltype(zero);
      error = LaunchResizeNearest<U>(s, static_cast<const U*>(in.raw_data()), taps.data<int64_t>(),
                                     static_cast<U*>(io.out->raw_data()), gpu->compute_stream());
    });
    if (!ok) return UnsupportedDtype("ResizeNearestNeighbor", in.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeNearestNeighborGrad(grads, size): each gradient added at the pixel
// the forward resize (size -> grads) read.
template <typename T>
class ResizeNearestGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "grads"));
    if (io.out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(io.out->raw_data(), 0, io.out->TotalBytes(), gpu->compute_stream()));
    // The forward resize read the size-shaped image into grads' shape.
    const ResizeShape s{io.n, io.out_h, io.out_w, io.c, io.in_h, io.in_w};
    TW_ASSIGN_OR_RETURN(const Tensor taps, NearestTapsOnDevice(gpu, a_, s));
    TW_CUDA_RETURN_IF_ERROR(LaunchResizeNearestGrad<T>(s, ctx->input(0).data<T>(),
                                                       taps.data<int64_t>(), io.out->data<T>(),
                                                       gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

}  // namespace

TW_REGISTER_KERNELS(gpu_image_ops) {
  const auto gpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable();
  };
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    RegisterKernel(gpu("SpaceToBatchND")
                       .TypeConstraint("T", t)
                       .HostMemory("block_shape")
                       .HostMemory("paddings"),
                   [] { return std::make_unique<SpaceBatchOp>(true); });
    RegisterKernel(
        gpu("BatchToSpaceND").TypeConstraint("T", t).HostMemory("block_shape").HostMemory("crops"),
        [] { return std::make_unique<SpaceBatchOp>(false); });
    RegisterKernel(gpu("ResizeNearestNeighbor").TypeConstraint("T", t).HostMemory("size"),
                   MakeFactory<ResizeNearestOp>());
  }
  RegisterTypedKernels<ResizeBilinearOp, float, double>(gpu("ResizeBilinear").HostMemory("size"),
                                                        "T");
  RegisterTypedKernels<ResizeBilinearGradOp, float, double>(gpu("ResizeBilinearGrad"), "T");
  RegisterTypedKernels<ResizeNearestGradOp, float, double>(
      gpu("ResizeNearestNeighborGrad").HostMemory("size"), "T");
}

}  // namespace gpu
}  // namespace towerflow
