// GPU kernels that make or reshape whole tensors, as cpu/shape_ops.cc:
// BroadcastTo, Cast, Fill, ZerosLike, OnesLike (the 16-bit floats moved as
// their bits), and the basic kernels (Const, Identity, _Send/_Recv...) for
// the GPU device.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/basic_ops.h"
#include "kernels/bcast.h"
#include "kernels/gpu/cwise_kernels.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace gpu {
namespace {

// BroadcastTo(input, shape): the CPU kernel's checks; a copy when nothing
// broadcasts.
template <typename T>
class BroadcastToOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(1), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    const BCast b(in.shape(), shape);
    TW_RETURN_IF_ERROR(CheckBroadcastTo(b, in.shape(), shape));
    if (in.shape() == shape) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(const Broadcast bcast, MakeBroadcast(b, in.shape(), shape));
    TW_CUDA_RETURN_IF_ERROR(LaunchBroadcastCopy<Moved<T>>(
        Bits<T>(in), Bits<T>(*out), shape.num_elements(), bcast, gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// Cast between float, double, int64 and bool (int32 lives on the host), and
// between float and half or bfloat16.
class CastOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    DataType src, dst;
    TW_RETURN_IF_ERROR(c.GetAttr("SrcT", &src));
    TW_RETURN_IF_ERROR(c.GetAttr("DstT", &dst));
    fn_ = Pick(src, dst);
    if (fn_ == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("no GPU Cast from ", DataTypeString(src), " to ", DataTypeString(dst)));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    TW_CUDA_RETURN_IF_ERROR(fn_(in, out, gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  using Fn = cudaError_t (*)(const Tensor&, Tensor*, cudaStream_t);
  template <typename From, typename To>
  static cudaError_t Run(const Tensor& in, Tensor* out, cudaStream_t stream) {
    return LaunchCast<From, To>(in.data<From>(), out->data<To>(), in.NumElements(), stream);
  }
  template <Float16Kind kKind>
  static cudaError_t To16(const Tensor& in, Tensor* out, cudaStream_t stream) {
    return LaunchCastToFloat16(in.data<float>(), static_cast<uint16_t*>(out->raw_data()),
                               in.NumElements(), kKind, stream);
  }
  template <Float16Kind kKind>
  static cudaError_t From16(const Tensor& in, Tensor* out, cudaStream_t stream) {
    return LaunchCastFromFloat16(static_cast<const uint16_t*>(in.raw_data()), out->data<float>(),
                                 in.NumElements(), kKind, stream);
  }
  template <typename From>
  static Fn PickTo(DataType dst) {
    switch (dst) {
      case DT_FLOAT:
        return &Run<From, float>;
      case DT_DOUBLE:
        return &Run<From, double>;
      case DT_INT64:
        return &Run<From, int64_t>;
      case DT_BOOL:
        return &Run<From, bool>;
      default:
        return nullptr;
    }
  }
  static Fn Pick(DataType src, DataType dst) {
    if (src == DT_FLOAT && dst == DT_HALF) return &To16<Float16Kind::kHalf>;
    if (src == DT_FLOAT && dst == DT_BFLOAT16) return &To16<Float16Kind::kBfloat16>;
    if (src == DT_HALF && dst == DT_FLOAT) return &From16<Float16Kind::kHalf>;
    if (src == DT_BFLOAT16 && dst == DT_FLOAT) return &From16<Float16Kind::kBfloat16>;
    switch (src) {
      case DT_FLOAT:
        return PickTo<float>(dst);
      case DT_DOUBLE:
        return PickTo<double>(dst);
      case DT_INT64:
        return PickTo<int64_t>(dst);
      case DT_BOOL:
        return PickTo<bool>(dst);
      default:
        return nullptr;
    }
  }
  Fn fn_ = nullptr;
};

// Fill(dims on the host, value on the device).
template <typename T>
class FillOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    if (dims.dims() != 1 || value.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill wants dims as a vector and a scalar "
                       "value, got ",
                       dims.shape().DebugString(), " and ", value.shape().DebugString()));
    }
    TensorShape shape;
    for (int64_t i = 0; i < dims.NumElements(); ++i) {
      const int64_t d =
          dims.dtype() == DT_INT32 ? dims.data<int32_t>()[i] : dims.data<int64_t>()[i];
      TW_RETURN_IF_ERROR(shape.AddDim(d));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    TW_CUDA_RETURN_IF_ERROR(LaunchFill<Moved<T>>(Bits<T>(value), Bits<T>(*out), out->NumElements(),
                                                 gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T, int kValue>
class ConstantLikeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchFillConstant<Moved<T>>(
        BitsOf(static_cast<T>(kValue)), Bits<T>(*out), out->NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("BroadcastTo").HostMemory("shape"), MakeFactory<BroadcastToOp<T>>());
  RegisterKernel(on("Fill").HostMemory("dims"), MakeFactory<FillOp<T>>());
  RegisterKernel(on("ZerosLike"), MakeFactory<ConstantLikeOp<T, 0>>());
  RegisterKernel(on("OnesLike"), MakeFactory<ConstantLikeOp<T, 1>>());
}

TW_REGISTER_KERNELS(gpu_shape_ops) {
  RegisterBasicKernels(kDeviceGpu);  // Const, Identity, _Send/_Recv, _Arg/_Retval...
  RegisterForType<float>();
  RegisterForType<double>();
  RegisterForType<half>();
  RegisterForType<bfloat16>();
  for (DataType src : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    for (DataType dst : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
      RegisterKernel(KernelDefBuilder("Cast")
                         .Device(kDeviceGpu)
                         .Capturable()
                         .TypeConstraint("SrcT", src)
                         .TypeConstraint("DstT", dst),
                     MakeFactory<CastOp>());
    }
  }
  // The casts of mixed precision (runtime/auto_mixed_precision.h).
  for (DataType low : {DT_HALF, DT_BFLOAT16}) {
    for (const auto& [src, dst] : {std::pair(DT_FLOAT, low), std::pair(low, DT_FLOAT)}) {
      RegisterKernel(KernelDefBuilder("Cast")
                         .Device(kDeviceGpu)
                         .Capturable()
                         .TypeConstraint("SrcT", src)
                         .TypeConstraint("DstT", dst),
                     MakeFactory<CastOp>());
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
