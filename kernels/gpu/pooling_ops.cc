// MaxPool, AvgPool and their gradients on GPUs, NHWC or NCHW, on the CUDA
// kernels of pooling_kernels.cu.cc (why not cuDNN's: see there). Shapes are
// checked with the CPU kernels' geometry (kernels/window.h) and
// messages; AvgPoolGrad's orig_input_shape is int32, so it is read on the
// host.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/pooling_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/window.h"

namespace towerflow {
namespace gpu {
namespace {

// The geometry of pooling an input of `dims` (in the data format).
absl::StatusOr<PoolShape> Geometry(const WindowAttrs& attrs, const std::vector<int64_t>& dims,
                                   const char* what) {
  if (dims.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 4-dimensional, got ", TensorShape(dims).DebugString()));
  }
  const std::vector<int64_t> nhwc = attrs.nchw ? NchwToNhwcDims(dims) : dims;
  TW_ASSIGN_OR_RETURN(Window2D w, attrs.Compute(nhwc, attrs.k_h, attrs.k_w));
  return PoolShape{w.batch, w.in_h,     w.in_w,     w.channels, w.out_h,    w.out_w,   w.k_h,
                   w.k_w,   w.stride_h, w.stride_w, w.pad_top,  w.pad_left, attrs.nchw};
}

TensorShape PooledShape(const PoolShape& p) {
  return p.nchw ? TensorShape({p.batch, p.channels, p.out_h, p.out_w})
                : TensorShape({p.batch, p.out_h, p.out_w, p.channels});
}

std::vector<int64_t> Dims(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
}

class PoolBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }

 protected:
  WindowAttrs attrs_;
};

template <typename T, bool kMax>
class PoolOp : public PoolBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(PoolShape p, Geometry(attrs_, Dims(in), "input"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, PooledShape(p)));
    TW_CUDA_RETURN_IF_ERROR(
        kMax ? LaunchMaxPool<OnGpu<T>>(p, GpuData<T>(in), GpuData<T>(*out), gpu->compute_stream())
             : LaunchAvgPool<OnGpu<T>>(p, GpuData<T>(in), GpuData<T>(*out), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// MaxPoolGrad(orig_input, orig_output, grad).
template <typename T>
class MaxPoolGradOp : public PoolBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(PoolShape p, Geometry(attrs_, Dims(in), "orig_input"));
    const TensorShape pooled = PooledShape(p);
    for (int i : {1, 2}) {
      if (ctx->input(i).shape() != pooled) {
        return absl::InvalidArgumentError(absl::StrCat(
            i == 1 ? "orig_output" : "grad", " has shape ", ctx->input(i).shape().DebugString(),
            " but must be ", pooled.DebugString(), " for orig_input ", in.shape().DebugString()));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, in.shape()));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchMaxPoolGrad<OnGpu<T>>(p, GpuData<T>(in), GpuData<T>(ctx->input(2)), GpuData<T>(*dx),
                                    DeterministicOpsRequested(), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// AvgPoolGrad(orig_input_shape, grad).
template <typename T>
class AvgPoolGradOp : public PoolBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "orig_input_shape"));
    TW_ASSIGN_OR_RETURN(TensorShape in_shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(PoolShape p, Geometry(attrs_, dims, "orig_input_shape"));
    const Tensor& dy = ctx->input(1);
    if (dy.shape() != PooledShape(p)) {
      return absl::InvalidArgumentError(absl::StrCat("grad has shape ", dy.shape().DebugString(),
                                                     " but pooling ", in_shape.DebugString(),
                                                     " gives ", PooledShape(p).DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, in_shape));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchAvgPoolGrad<OnGpu<T>>(p, GpuData<T>(dy), GpuData<T>(*dx), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op)
        .Device(kDeviceGpu)
        .Capturable()
        .TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  RegisterKernel(on("MaxPool"), MakeFactory<PoolOp<T, true>>());
  RegisterKernel(on("AvgPool"), MakeFactory<PoolOp<T, false>>());
  RegisterKernel(on("MaxPoolGrad"), MakeFactory<MaxPoolGradOp<T>>());
  RegisterKernel(on("AvgPoolGrad"), MakeFactory<AvgPoolGradOp<T>>());
}

TW_REGISTER_KERNELS(gpu_pooling) {
  RegisterForType<float>();
  RegisterForType<double>();
  RegisterForType<half>();
  RegisterForType<bfloat16>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
