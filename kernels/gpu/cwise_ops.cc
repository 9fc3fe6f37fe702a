// GPU elementwise kernels: unary maths, binary maths with NumPy
// broadcasting (BCast's collapsed shapes as strides) and AddN, each op's
// maths the functor of kernels/cwise_functors.h that the CPU kernels use;
// and LeakyRelu with its alpha. The CPU kernels are their reference (see
// gpu_conformance_test).
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cwise_functors.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"

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
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchUnary<T, F>(x.data<T>(), y->data<T>(), x.NumElements(), gpu->compute_stream())));
    return absl::OkStatus();
  }
};

template <typename T, typename F>
absl::Status BinaryInto(KernelContext* ctx, const Tensor& x, const Tensor& y, int output) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  BCast b(x.shape(), y.shape());
  if (!b.ok()) return b.status();
  const int64_t n = b.output_shape().num_elements();
  Tensor* z = nullptr;
  if (b.IsTrivial()) {
    TW_ASSIGN_OR_RETURN(z, ctx->forward_input_or_allocate_output(0, output, b.output_shape()));
    TW_CUDA_RETURN_IF_ERROR((LaunchBinary<T, F>(x.data<T>(), y.data<T>(), z->data<T>(), n, nullptr,
                                                gpu->compute_stream())));
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(const Broadcast bcast, MakeBroadcast(b, x.shape(), y.shape()));
  TW_ASSIGN_OR_RETURN(z, ctx->allocate_output(output, b.output_shape()));
  TW_CUDA_RETURN_IF_ERROR((LaunchBinary<T, F>(x.data<T>(), y.data<T>(), z->data<T>(), n, &bcast,
                                              gpu->compute_stream())));
  return absl::OkStatus();
}

template <typename T, typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    return BinaryInto<T, F>(ctx, ctx->input(0), ctx->input(1), 0);
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
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchBinary<T, functor::Add<T>>(first.data<T>(), ctx->input(1).data<T>(), out->data<T>(),
                                          n, nullptr, gpu->compute_stream())));
    for (int i = 2; i < ctx->num_inputs(); ++i) {
      TW_CUDA_RETURN_IF_ERROR(
          (LaunchBinary<T, functor::Add<T>>(out->data<T>(), ctx->input(i).data<T>(), out->data<T>(),
                                            n, nullptr, gpu->compute_stream())));
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
    const T alpha = static_cast<T>(alpha_);
    if constexpr (kGrad) {
      TW_CUDA_RETURN_IF_ERROR(LaunchLeakyReluGrad<T>(x.data<T>(), ctx->input(1).data<T>(),
                                                     y->data<T>(), x.NumElements(), alpha,
                                                     gpu->compute_stream()));
    } else {
      TW_CUDA_RETURN_IF_ERROR(LaunchLeakyRelu<T>(x.data<T>(), y->data<T>(), x.NumElements(), alpha,
                                                 gpu->compute_stream()));
    }
    return absl::OkStatus();
  }

 private:
  float alpha_ = 0.2f;
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).TypeConstraint<T>("T");
  };
  RegisterKernel(on("Neg"), MakeFactory<UnaryOp<T, functor::Neg<T>>>());
  RegisterKernel(on("Abs"), MakeFactory<UnaryOp<T, functor::Abs<T>>>());
  RegisterKernel(on("Square"), MakeFactory<UnaryOp<T, functor::Square<T>>>());
  RegisterKernel(on("Sqrt"), MakeFactory<UnaryOp<T, functor::Sqrt<T>>>());
  RegisterKernel(on("Rsqrt"), MakeFactory<UnaryOp<T, functor::Rsqrt<T>>>());
  RegisterKernel(on("Exp"), MakeFactory<UnaryOp<T, functor::Exp<T>>>());
  RegisterKernel(on("Log"), MakeFactory<UnaryOp<T, functor::Log<T>>>());
  RegisterKernel(on("Tanh"), MakeFactory<UnaryOp<T, functor::Tanh<T>>>());
  RegisterKernel(on("Sigmoid"), MakeFactory<UnaryOp<T, functor::Sigmoid<T>>>());
  RegisterKernel(on("Relu"), MakeFactory<UnaryOp<T, functor::Relu<T>>>());
  RegisterKernel(on("Reciprocal"), MakeFactory<UnaryOp<T, functor::Reciprocal<T>>>());
  RegisterKernel(on("Floor"), MakeFactory<UnaryOp<T, functor::Floor<T>>>());
  RegisterKernel(on("Softplus"), MakeFactory<UnaryOp<T, functor::Softplus<T>>>());
  RegisterKernel(on("Selu"), MakeFactory<UnaryOp<T, functor::Selu<T>>>());
  RegisterKernel(on("Erf"), MakeFactory<UnaryOp<T, functor::Erf<T>>>());
  RegisterKernel(on("Add"), MakeFactory<BinaryOp<T, functor::Add<T>>>());
  RegisterKernel(on("AddV2"), MakeFactory<BinaryOp<T, functor::Add<T>>>());
  RegisterKernel(on("Sub"), MakeFactory<BinaryOp<T, functor::Sub<T>>>());
  RegisterKernel(on("Mul"), MakeFactory<BinaryOp<T, functor::Mul<T>>>());
  RegisterKernel(on("RealDiv"), MakeFactory<BinaryOp<T, functor::Div<T>>>());
  RegisterKernel(on("Div"), MakeFactory<BinaryOp<T, functor::Div<T>>>());
  RegisterKernel(on("DivNoNan"), MakeFactory<BinaryOp<T, functor::DivNoNan<T>>>());
  RegisterKernel(on("Maximum"), MakeFactory<BinaryOp<T, functor::Maximum<T>>>());
  RegisterKernel(on("Minimum"), MakeFactory<BinaryOp<T, functor::Minimum<T>>>());
  RegisterKernel(on("SquaredDifference"),
                 MakeFactory<BinaryOp<T, functor::SquaredDifference<T>>>());
  RegisterKernel(on("FloorDiv"), MakeFactory<BinaryOp<T, functor::FloorDiv<T>>>());
  RegisterKernel(on("Pow"), MakeFactory<BinaryOp<T, functor::Pow<T>>>());
  RegisterKernel(on("ReluGrad"), MakeFactory<BinaryOp<T, functor::ReluGrad<T>>>());
  RegisterKernel(on("TanhGrad"), MakeFactory<BinaryOp<T, functor::TanhGrad<T>>>());
  RegisterKernel(on("SigmoidGrad"), MakeFactory<BinaryOp<T, functor::SigmoidGrad<T>>>());
  RegisterKernel(on("SoftplusGrad"), MakeFactory<BinaryOp<T, functor::SoftplusGrad<T>>>());
  RegisterKernel(on("SeluGrad"), MakeFactory<BinaryOp<T, functor::SeluGrad<T>>>());
  RegisterKernel(on("AddN"), MakeFactory<AddNOp<T>>());
  RegisterKernel(on("LeakyRelu"), MakeFactory<LeakyReluOp<T, false>>());
  RegisterKernel(on("LeakyReluGrad"), MakeFactory<LeakyReluOp<T, true>>());
}

TW_REGISTER_KERNELS(gpu_cwise) {
  RegisterForType<float>();
  RegisterForType<double>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
