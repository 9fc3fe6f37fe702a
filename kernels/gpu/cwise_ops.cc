// GPU elementwise kernels: unary maths, IsFinite, binary maths, comparisons
// and LogicalAnd/LogicalOr with NumPy broadcasting (BCast's collapsed
// shapes as strides) and AddN, each
// op's maths the functor of kernels/cwise_functors.h that the CPU kernels
// use; LeakyRelu with its alpha; Select and SelectV2. half and bfloat16
// compute in float32 and round each result once, as the CPU's 16-bit
// kernels do (kernels/cpu/float16_kernels.cc). The CPU kernels are their
// reference (see gpu_conformance_test).
#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cwise_functors.h"
#include "kernels/gpu/cwise_kernels.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T, typename F>
class UnaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    TW_CUDA_RETURN_IF_ERROR((LaunchUnary<OnGpu<T>, F>(GpuData<T>(x), GpuData<T>(*y),
                                                      x.NumElements(), gpu->compute_stream())));
    return absl::OkStatus();
  }
};

// z = F(x, y) with broadcasting; Out is T (maths, written over x or y when
// no one else holds it) or bool (comparisons).
template <typename T, typename Out, typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    BCast b(x.shape(), y.shape());
    if (!b.ok()) return b.status();
    const int64_t n = b.output_shape().num_elements();
    Tensor* z = nullptr;
    std::optional<Broadcast> bcast;
    if (b.IsTrivial() && std::is_same_v<T, Out>) {
      TW_ASSIGN_OR_RETURN(z, ctx->forward_input_or_allocate_output(0, 0, b.output_shape()));
    } else {
      TW_ASSIGN_OR_RETURN(z, ctx->allocate_output(0, b.output_shape()));
    }
    if (!b.IsTrivial()) {
      TW_ASSIGN_OR_RETURN(bcast, MakeBroadcast(b, x.shape(), y.shape()));
    }
    const Broadcast* plan = bcast.has_value() ? &*bcast : nullptr;
    if constexpr (std::is_same_v<Out, bool>) {
      TW_CUDA_RETURN_IF_ERROR((LaunchCompare<OnGpu<T>, F>(
          GpuData<T>(x), GpuData<T>(y), z->data<bool>(), n, plan, gpu->compute_stream())));
    } else {
      TW_CUDA_RETURN_IF_ERROR((LaunchBinary<OnGpu<T>, F>(
          GpuData<T>(x), GpuData<T>(y), GpuData<T>(*z), n, plan, gpu->compute_stream())));
    }
    return absl::OkStatus();
  }
};

// IsFinite: a bool per element.
template <typename T>
class IsFiniteOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchIsFinite<OnGpu<T>>(GpuData<T>(x), y->data<bool>(),
                                                     x.NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }
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
    using Add = functor::Add<GpuMath<T>>;
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchBinary<OnGpu<T>, Add>(GpuData<T>(first), GpuData<T>(ctx->input(1)), GpuData<T>(*out),
                                     n, nullptr, gpu->compute_stream())));
    for (int i = 2; i < ctx->num_inputs(); ++i) {
      TW_CUDA_RETURN_IF_ERROR(
          (LaunchBinary<OnGpu<T>, Add>(GpuData<T>(*out), GpuData<T>(ctx->input(i)),
                                       GpuData<T>(*out), n, nullptr, gpu->compute_stream())));
    }
    return absl::OkStatus();
  }
};

// LeakyRelu(features) and LeakyReluGrad(gradients, features), with alpha.
template <typename T, bool kGrad>
class LeakyReluOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("alpha", &alpha_); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    if (kGrad && ctx->input(1).shape() != x.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("LeakyReluGrad needs both inputs of one shape, got ",
                       x.shape().DebugString(), " and ", ctx->input(1).shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if constexpr (kGrad) {
      TW_CUDA_RETURN_IF_ERROR(
          LaunchLeakyReluGrad<OnGpu<T>>(GpuData<T>(x), GpuData<T>(ctx->input(1)), GpuData<T>(*y),
                                        x.NumElements(), alpha_, gpu->compute_stream()));
    } else {
      TW_CUDA_RETURN_IF_ERROR(LaunchLeakyRelu<OnGpu<T>>(
          GpuData<T>(x), GpuData<T>(*y), x.NumElements(), alpha_, gpu->compute_stream()));
    }
    return absl::OkStatus();
  }

 private:
  float alpha_ = 0.2f;
};

// Select(condition, t, e) and SelectV2 (condition, t and e broadcast
// together): the CPU kernels' shapes and errors (kernels/bcast.h); elements
// move as bytes, so one kernel serves every dtype.
class SelectOp : public OpKernel {
 public:
  explicit SelectOp(bool v2) : v2_(v2) {}
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& c = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    TensorShape shape;
    std::optional<SelectBroadcast> bcast;
    if (v2_) {
      TW_ASSIGN_OR_RETURN(shape, SelectV2Shape(c.shape(), t.shape(), e.shape()));
      if (c.shape() != shape || t.shape() != shape || e.shape() != shape) {
        TW_ASSIGN_OR_RETURN(bcast, Plan(shape, c.shape(), t.shape(), e.shape()));
      }
    } else {
      TW_ASSIGN_OR_RETURN(const SelectCondition kind, PlanSelect(c.shape(), t.shape(), e.shape()));
      shape = t.shape();
      if (kind != SelectCondition::kSame) {
        // The condition's strides: 0 for a scalar; a row vector's 1 along
        // dimension 0 (it is not aligned at the end, so not a broadcast).
        TW_ASSIGN_OR_RETURN(bcast, Plan(shape, TensorShape(), t.shape(), e.shape()));
        if (kind == SelectCondition::kRows) bcast->c_strides[0] = 1;
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t n = shape.num_elements();
    if (n == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(t.dtype(), [&](auto zero) {
      using U = decltype(zero);
      error = LaunchSelect<U>(c.data<bool>(), static_cast<const U*>(t.raw_data()),
                              static_cast<const U*>(e.raw_data()), static_cast<U*>(out->raw_data()),
                              n, bcast.has_value() ? &*bcast : nullptr, gpu->compute_stream());
    });
    if (!ok) return UnsupportedDtype(v2_ ? "SelectV2" : "Select", t.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }

 private:
  // Each operand's strides over `out`'s dims, aligned at the end: 0 where
  // it has no such dim or a 1 that broadcasts.
  static absl::StatusOr<SelectBroadcast> Plan(const TensorShape& out, const TensorShape& c,
                                              const TensorShape& t, const TensorShape& e) {
    if (out.dims() > kMaxDims) {
      return absl::UnimplementedError(absl::StrCat("Select on GPUs takes up to ", kMaxDims,
                                                   " dimensions, got ", out.DebugString()));
    }
    SelectBroadcast b;
    b.rank = std::max(out.dims(), 1);
    const auto strides = [&](const TensorShape& in, int64_t* into) {
      int64_t stride = 1;
      for (int d = b.rank - 1; d >= 0; --d) {
        const int k = d - (b.rank - in.dims());
        const int64_t size = k >= 0 ? in.dim_size(k) : 1;
        const int64_t out_size = out.dims() == 0 ? 1 : out.dim_size(d);
        into[d] = size == out_size && size != 1 ? stride : 0;
        stride *= size;
      }
    };
    for (int d = 0; d < b.rank; ++d) b.dims[d] = out.dims() == 0 ? 1 : out.dim_size(d);
    strides(c, b.c_strides);
    strides(t, b.t_strides);
    strides(e, b.e_strides);
    return b;
  }

  const bool v2_;
};

// The functors on GpuMath<T>: float for the 16-bit floats.
template <typename T>
void RegisterCompares() {
  using M = GpuMath<T>;
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("Equal"), MakeFactory<BinaryOp<T, bool, functor::Equal<M>>>());
  RegisterKernel(on("NotEqual"), MakeFactory<BinaryOp<T, bool, functor::NotEqual<M>>>());
  RegisterKernel(on("Less"), MakeFactory<BinaryOp<T, bool, functor::Less<M>>>());
  RegisterKernel(on("LessEqual"), MakeFactory<BinaryOp<T, bool, functor::LessEqual<M>>>());
  RegisterKernel(on("Greater"), MakeFactory<BinaryOp<T, bool, functor::Greater<M>>>());
  RegisterKernel(on("GreaterEqual"), MakeFactory<BinaryOp<T, bool, functor::GreaterEqual<M>>>());
}

template <typename T>
void RegisterForType() {
  using M = GpuMath<T>;
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("Neg"), MakeFactory<UnaryOp<T, functor::Neg<M>>>());
  RegisterKernel(on("IsFinite"), MakeFactory<IsFiniteOp<T>>());
  RegisterKernel(on("Abs"), MakeFactory<UnaryOp<T, functor::Abs<M>>>());
  RegisterKernel(on("Square"), MakeFactory<UnaryOp<T, functor::Square<M>>>());
  RegisterKernel(on("Sqrt"), MakeFactory<UnaryOp<T, functor::Sqrt<M>>>());
  RegisterKernel(on("Rsqrt"), MakeFactory<UnaryOp<T, functor::Rsqrt<M>>>());
  RegisterKernel(on("Exp"), MakeFactory<UnaryOp<T, functor::Exp<M>>>());
  RegisterKernel(on("Log"), MakeFactory<UnaryOp<T, functor::Log<M>>>());
  RegisterKernel(on("Tanh"), MakeFactory<UnaryOp<T, functor::Tanh<M>>>());
  RegisterKernel(on("Sigmoid"), MakeFactory<UnaryOp<T, functor::Sigmoid<M>>>());
  RegisterKernel(on("Relu"), MakeFactory<UnaryOp<T, functor::Relu<M>>>());
  RegisterKernel(on("Reciprocal"), MakeFactory<UnaryOp<T, functor::Reciprocal<M>>>());
  RegisterKernel(on("Floor"), MakeFactory<UnaryOp<T, functor::Floor<M>>>());
  RegisterKernel(on("Softplus"), MakeFactory<UnaryOp<T, functor::Softplus<M>>>());
  RegisterKernel(on("Selu"), MakeFactory<UnaryOp<T, functor::Selu<M>>>());
  RegisterKernel(on("Erf"), MakeFactory<UnaryOp<T, functor::Erf<M>>>());
  RegisterKernel(on("Add"), MakeFactory<BinaryOp<T, T, functor::Add<M>>>());
  RegisterKernel(on("AddV2"), MakeFactory<BinaryOp<T, T, functor::Add<M>>>());
  RegisterKernel(on("Sub"), MakeFactory<BinaryOp<T, T, functor::Sub<M>>>());
  RegisterKernel(on("Mul"), MakeFactory<BinaryOp<T, T, functor::Mul<M>>>());
  RegisterKernel(on("RealDiv"), MakeFactory<BinaryOp<T, T, functor::Div<M>>>());
  RegisterKernel(on("Div"), MakeFactory<BinaryOp<T, T, functor::Div<M>>>());
  RegisterKernel(on("DivNoNan"), MakeFactory<BinaryOp<T, T, functor::DivNoNan<M>>>());
  RegisterKernel(on("Maximum"), MakeFactory<BinaryOp<T, T, functor::Maximum<M>>>());
  RegisterKernel(on("Minimum"), MakeFactory<BinaryOp<T, T, functor::Minimum<M>>>());
  RegisterKernel(on("SquaredDifference"),
                 MakeFactory<BinaryOp<T, T, functor::SquaredDifference<M>>>());
  RegisterKernel(on("FloorDiv"), MakeFactory<BinaryOp<T, T, functor::FloorDiv<M>>>());
  RegisterKernel(on("Mod"), MakeFactory<BinaryOp<T, T, functor::Mod<M>>>());
  RegisterKernel(on("FloorMod"), MakeFactory<BinaryOp<T, T, functor::FloorMod<M>>>());
  RegisterKernel(on("Pow"), MakeFactory<BinaryOp<T, T, functor::Pow<M>>>());
  RegisterKernel(on("ReluGrad"), MakeFactory<BinaryOp<T, T, functor::ReluGrad<M>>>());
  RegisterKernel(on("TanhGrad"), MakeFactory<BinaryOp<T, T, functor::TanhGrad<M>>>());
  RegisterKernel(on("SigmoidGrad"), MakeFactory<BinaryOp<T, T, functor::SigmoidGrad<M>>>());
  RegisterKernel(on("SoftplusGrad"), MakeFactory<BinaryOp<T, T, functor::SoftplusGrad<M>>>());
  RegisterKernel(on("SeluGrad"), MakeFactory<BinaryOp<T, T, functor::SeluGrad<M>>>());
  RegisterKernel(on("AddN"), MakeFactory<AddNOp<T>>());
  RegisterKernel(on("LeakyRelu"), MakeFactory<LeakyReluOp<T, false>>());
  RegisterKernel(on("LeakyReluGrad"), MakeFactory<LeakyReluOp<T, true>>());
}

TW_REGISTER_KERNELS(gpu_cwise) {
  RegisterForType<float>();
  RegisterForType<double>();
  RegisterForType<half>();
  RegisterForType<bfloat16>();
  RegisterCompares<float>();
  RegisterCompares<double>();
  RegisterCompares<int64_t>();
  RegisterCompares<half>();
  RegisterCompares<bfloat16>();
  const auto gpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable();
  };
  RegisterKernel(gpu("LogicalAnd"), MakeFactory<BinaryOp<bool, bool, functor::LogicalAnd<bool>>>());
  RegisterKernel(gpu("LogicalOr"), MakeFactory<BinaryOp<bool, bool, functor::LogicalOr<bool>>>());
  // int64 sums (int32 ones run on the host, kernels/cpu/cwise_binary_ops.cc).
  for (const char* op : {"Add", "AddV2"}) {
    RegisterKernel(gpu(op).TypeConstraint<int64_t>("T"),
                   MakeFactory<BinaryOp<int64_t, int64_t, functor::Add<int64_t>>>());
  }
  // int32 selects run on the host (kernels/cpu/cwise_unary_ops.cc).
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    const auto on = [t](const char* op) {
      return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint("T", t);
    };
    RegisterKernel(on("Select"), [] { return std::make_unique<SelectOp>(false); });
    RegisterKernel(on("SelectV2"), [] { return std::make_unique<SelectOp>(true); });
  }
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
