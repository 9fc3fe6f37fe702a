// GPU elementwise kernels: unary maths, binary maths with NumPy
// broadcasting (BCast's collapsed shapes as strides), AddN, BiasAdd, Cast,
// Fill / ZerosLike / OnesLike. The CPU kernels are their reference (see
// gpu_conformance_test).
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/basic_ops.h"
#include "kernels/bcast.h"
#include "kernels/kernel_util.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(UnaryFn fn) : fn_(fn) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchUnary<T>(fn_, x.data<T>(), y->data<T>(), x.NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  const UnaryFn fn_;
};

// Strides over the collapsed output for operands reshaped to `reshape`
// (a dimension of 1 broadcasts: stride 0).
void FillStrides(const BCast::Vec& reshape, int64_t* strides) {
  int64_t stride = 1;
  for (int d = static_cast<int>(reshape.size()) - 1; d >= 0; --d) {
    strides[d] = reshape[d] == 1 ? 0 : stride;
    stride *= reshape[d];
  }
}

// The kernels' description of a (non-trivial) broadcast of x and y.
absl::StatusOr<Broadcast> MakeBroadcast(const BCast& b, const TensorShape& x,
                                        const TensorShape& y) {
  const int rank = static_cast<int>(b.result_shape().size());
  if (rank > kMaxDims) {
    return absl::UnimplementedError(absl::StrCat("broadcasting ", x.DebugString(), " and ",
                                                 y.DebugString(), " needs ", rank,
                                                 " dimensions; the GPU kernels take ", kMaxDims));
  }
  Broadcast bcast;
  bcast.rank = rank;
  for (int d = 0; d < rank; ++d) bcast.dims[d] = b.result_shape()[d];
  FillStrides(b.x_reshape(), bcast.x_strides);
  FillStrides(b.y_reshape(), bcast.y_strides);
  return bcast;
}

template <typename T>
absl::Status BinaryInto(KernelContext* ctx, BinaryFn fn, const Tensor& x, const Tensor& y,
                        int output) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  BCast b(x.shape(), y.shape());
  if (!b.ok()) return b.status();
  const int64_t n = b.output_shape().num_elements();
  Tensor* z = nullptr;
  if (b.IsTrivial()) {
    TW_ASSIGN_OR_RETURN(z, ctx->forward_input_or_allocate_output(0, output, b.output_shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchBinary<T>(fn, x.data<T>(), y.data<T>(), z->data<T>(), n, nullptr,
                                            gpu->compute_stream()));
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(const Broadcast bcast, MakeBroadcast(b, x.shape(), y.shape()));
  TW_ASSIGN_OR_RETURN(z, ctx->allocate_output(output, b.output_shape()));
  TW_CUDA_RETURN_IF_ERROR(LaunchBinary<T>(fn, x.data<T>(), y.data<T>(), z->data<T>(), n, &bcast,
                                          gpu->compute_stream()));
  return absl::OkStatus();
}

template <typename T>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(BinaryFn fn) : fn_(fn) {}
  absl::Status Compute(KernelContext* ctx) override {
    return BinaryInto<T>(ctx, fn_, ctx->input(0), ctx->input(1), 0);
  }

 private:
  const BinaryFn fn_;
};

// AddN: a running sum into the output.
template <typename T>
class AddNOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddN inputs must have one shape: input 0 is ", first.shape().DebugString(), ", input ",
            i, " is ", ctx->input(i).shape().DebugString()));
      }
    }
    if (ctx->num_inputs() == 1) return ctx->set_output(0, first);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, first.shape()));
    const int64_t n = first.NumElements();
    TW_CUDA_RETURN_IF_ERROR(LaunchBinary<T>(BinaryFn::kAdd, first.data<T>(),
                                            ctx->input(1).data<T>(), out->data<T>(), n, nullptr,
                                            gpu->compute_stream()));
    for (int i = 2; i < ctx->num_inputs(); ++i) {
      TW_CUDA_RETURN_IF_ERROR(LaunchBinary<T>(BinaryFn::kAdd, out->data<T>(),
                                              ctx->input(i).data<T>(), out->data<T>(), n, nullptr,
                                              gpu->compute_stream()));
    }
    return absl::OkStatus();
  }
};

// BiasAdd: value [..., C] (NHWC) or [N, C, ...] (NCHW) plus bias [C].
template <typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(nchw_, IsNchw(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    const int channel_dim = nchw_ ? 1 : x.dims() - 1;
    if (bias.dims() != 1 || x.dims() < (nchw_ ? 3 : 2) ||
        x.dim_size(channel_dim) != bias.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("BiasAdd: bias ", bias.shape().DebugString(), " does not fit value ",
                       x.shape().DebugString(), " in ", nchw_ ? "NCHW" : "NHWC"));
    }
    const int64_t c = bias.dim_size(0);
    const int64_t n = x.NumElements();
    Broadcast b;
    if (nchw_) {
      const int64_t inner = c == 0 ? 0 : n / x.dim_size(0) / c;
      b.rank = 3;
      const int64_t dims[] = {x.dim_size(0), c, inner};
      const int64_t xs[] = {c * inner, inner, 1};
      const int64_t ys[] = {0, 1, 0};
      for (int d = 0; d < 3; ++d)
        b.dims[d] = dims[d], b.x_strides[d] = xs[d], b.y_strides[d] = ys[d];
    } else {
      b.rank = 2;
      b.dims[0] = c == 0 ? 0 : n / c, b.dims[1] = c;
      b.x_strides[0] = c, b.x_strides[1] = 1;
      b.y_strides[0] = 0, b.y_strides[1] = 1;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchBinary<T>(BinaryFn::kAdd, x.data<T>(), bias.data<T>(),
                                            out->data<T>(), n, &b, gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  bool nchw_ = false;
};

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
    TW_CUDA_RETURN_IF_ERROR(LaunchBroadcastCopy<T>(
        in.data<T>(), out->data<T>(), shape.num_elements(), bcast, gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// Cast between float, double, int64 and bool (int32 lives on the host).
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
    TW_CUDA_RETURN_IF_ERROR(
        LaunchFill<T>(value.data<T>(), out->data<T>(), out->NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T, int kValue>
class ConstantLikeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchFillConstant<T>(T(kValue), out->data<T>(), out->NumElements(),
                                                  gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op, const char* attr = "T") {
    return KernelDefBuilder(op).Device(kDeviceGpu).TypeConstraint<T>(attr);
  };
  const std::pair<const char*, UnaryFn> unary[] = {
      {"Neg", UnaryFn::kNeg},
      {"Abs", UnaryFn::kAbs},
      {"Square", UnaryFn::kSquare},
      {"Sqrt", UnaryFn::kSqrt},
      {"Rsqrt", UnaryFn::kRsqrt},
      {"Exp", UnaryFn::kExp},
      {"Log", UnaryFn::kLog},
      {"Tanh", UnaryFn::kTanh},
      {"Sigmoid", UnaryFn::kSigmoid},
      {"Relu", UnaryFn::kRelu},
      {"Reciprocal", UnaryFn::kReciprocal},
      {"Floor", UnaryFn::kFloor},
  };
  for (const auto& [op, fn] : unary) {
    RegisterKernel(on(op), [fn = fn] { return std::make_unique<UnaryOp<T>>(fn); });
  }
  const std::pair<const char*, BinaryFn> binary[] = {
      {"Add", BinaryFn::kAdd},
      {"AddV2", BinaryFn::kAdd},
      {"Sub", BinaryFn::kSub},
      {"Mul", BinaryFn::kMul},
      {"RealDiv", BinaryFn::kDiv},
      {"Div", BinaryFn::kDiv},
      {"Maximum", BinaryFn::kMaximum},
      {"Minimum", BinaryFn::kMinimum},
      {"SquaredDifference", BinaryFn::kSquaredDifference},
      {"FloorDiv", BinaryFn::kFloorDiv},
      {"Pow", BinaryFn::kPow},
      {"ReluGrad", BinaryFn::kReluGrad},
      {"TanhGrad", BinaryFn::kTanhGrad},
      {"SigmoidGrad", BinaryFn::kSigmoidGrad},
  };
  for (const auto& [op, fn] : binary) {
    RegisterKernel(on(op), [fn = fn] { return std::make_unique<BinaryOp<T>>(fn); });
  }
  RegisterKernel(on("AddN"), MakeFactory<AddNOp<T>>());
  RegisterKernel(on("BiasAdd"), MakeFactory<BiasAddOp<T>>());
  RegisterKernel(on("BroadcastTo").HostMemory("shape"), MakeFactory<BroadcastToOp<T>>());
  RegisterKernel(on("Fill").HostMemory("dims"), MakeFactory<FillOp<T>>());
  RegisterKernel(on("ZerosLike"), MakeFactory<ConstantLikeOp<T, 0>>());
  RegisterKernel(on("OnesLike"), MakeFactory<ConstantLikeOp<T, 1>>());
}

TW_REGISTER_KERNELS(gpu_cwise) {
  RegisterBasicKernels(kDeviceGpu);  // Const, Identity, _Send/_Recv, _Arg/_Retval...
  RegisterForType<float>();
  RegisterForType<double>();
  for (DataType src : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    for (DataType dst : {DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
      RegisterKernel(KernelDefBuilder("Cast")
                         .Device(kDeviceGpu)
                         .TypeConstraint("SrcT", src)
                         .TypeConstraint("DstT", dst),
                     MakeFactory<CastOp>());
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
