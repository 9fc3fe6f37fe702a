// Binary elementwise kernels with broadcasting: arithmetic and comparisons
// (the shared functors of kernels/cwise_functors.h) and logical ops (local
// functors: the CPU alone has them). The machinery is in cwise_ops.h.
#include "kernels/cpu/cwise_ops.h"

namespace towerflow {
namespace cwise {
namespace {

template <typename T>
using AddOp = BinaryOp<T, T, functor::Add<T>>;
template <typename T>
using SubOp = BinaryOp<T, T, functor::Sub<T>>;
template <typename T>
using MulOp = BinaryOp<T, T, functor::Mul<T>>;
template <typename T>
using RealDivOp = BinaryOp<T, T, functor::Div<T>>;
template <typename T>
using IntDivOp = BinaryOp<T, T, functor::Div<T>>;
template <typename T>
using FloorDivOp = BinaryOp<T, T, functor::FloorDiv<T>>;
template <typename T>
using TruncateDivOp = BinaryOp<T, T, functor::TruncateDiv<T>>;
template <typename T>
using DivNoNanOp = BinaryOp<T, T, functor::DivNoNan<T>>;
template <typename T>
using ModOp = BinaryOp<T, T, functor::Mod<T>>;
template <typename T>
using FloorModOp = BinaryOp<T, T, functor::FloorMod<T>>;
template <typename T>
using MaximumOp = BinaryOp<T, T, functor::Maximum<T>>;
template <typename T>
using MinimumOp = BinaryOp<T, T, functor::Minimum<T>>;
template <typename T>
using PowOp = BinaryOp<T, T, functor::Pow<T>>;
template <typename T>
using SquaredDifferenceOp = BinaryOp<T, T, functor::SquaredDifference<T>>;

template <typename T>
using EqualOp = BinaryOp<T, bool, functor::Equal<T>>;
template <typename T>
using NotEqualOp = BinaryOp<T, bool, functor::NotEqual<T>>;
template <typename T>
using LessOp = BinaryOp<T, bool, functor::Less<T>>;
template <typename T>
using LessEqualOp = BinaryOp<T, bool, functor::LessEqual<T>>;
template <typename T>
using GreaterOp = BinaryOp<T, bool, functor::Greater<T>>;
template <typename T>
using GreaterEqualOp = BinaryOp<T, bool, functor::GreaterEqual<T>>;

template <typename T>
using Atan2Op = BinaryOp<T, T, functor::Atan2<T>>;
template <typename T>
using XlogyOp = BinaryOp<T, T, functor::Xlogy<T>>;
template <typename T>
using Xlog1pyOp = BinaryOp<T, T, functor::Xlog1py<T>>;
template <typename T>
using XdivyOp = BinaryOp<T, T, functor::Xdivy<T>>;
template <typename T>
using MulNoNanOp = BinaryOp<T, T, functor::MulNoNan<T>>;
template <typename T>
using BitwiseAndOp = BinaryOp<T, T, functor::BitwiseAnd<T>>;
template <typename T>
using BitwiseOrOp = BinaryOp<T, T, functor::BitwiseOr<T>>;
template <typename T>
using BitwiseXorOp = BinaryOp<T, T, functor::BitwiseXor<T>>;
template <typename T>
using LeftShiftOp = BinaryOp<T, T, functor::LeftShift<T>>;
template <typename T>
using RightShiftOp = BinaryOp<T, T, functor::RightShift<T>>;

template <typename T>
struct NextAfterFn {
  T operator()(T a, T b) const { return std::nextafter(a, b); }
};
template <typename T>
using NextAfterOp = BinaryOp<T, T, NextAfterFn<T>>;

// ApproximateEqual(x, y): |x - y| < tolerance, x and y of one shape (no
// broadcasting, as TF's).
template <typename T>
class ApproximateEqualOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("tolerance", &tolerance_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.shape() != y.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("x and y must be of the same shape. x shape: ", x.shape().DebugString(),
                       ". y shape: ", y.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * z, ctx->allocate_output(0, x.shape()));
    const T tolerance = static_cast<T>(tolerance_);
    z->flat<bool>().device(ctx->eigen_cpu_device()) =
        (x.flat<T>() - y.flat<T>()).abs() < x.flat<T>().constant(tolerance);
    return absl::OkStatus();
  }

 private:
  float tolerance_ = 1e-5f;
};

struct AndFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrFn {
  bool operator()(bool a, bool b) const { return a || b; }
};

// The integer types other than int32 and int64 have theirs in
// cwise_int_ops.cc.
TW_REGISTER_KERNELS(cwise_binary) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const char* op : {"Add", "AddV2"}) {
    RegisterTypedKernels<AddOp, float, double, int32_t, int64_t, complex64, complex128>(cpu(op),
                                                                                        "T");
  }
  RegisterTypedKernels<SubOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Sub"),
                                                                                      "T");
  RegisterTypedKernels<MulOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Mul"),
                                                                                      "T");
  RegisterTypedKernels<RealDivOp, float, double, complex64, complex128>(cpu("RealDiv"), "T");
  RegisterTypedKernels<RealDivOp, float, double, complex64, complex128>(cpu("Div"), "T");
  RegisterTypedKernels<IntDivOp, int32_t, int64_t>(cpu("Div"), "T");
  RegisterTypedKernels<FloorDivOp, float, double, int32_t, int64_t>(cpu("FloorDiv"), "T");
  RegisterTypedKernels<DivNoNanOp, float, double, complex64, complex128>(cpu("DivNoNan"), "T");
  RegisterTypedKernels<ModOp, float, double, int32_t, int64_t>(cpu("Mod"), "T");
  RegisterTypedKernels<TruncateDivOp, float, double, int32_t, int64_t>(cpu("TruncateDiv"), "T");
  RegisterTypedKernels<ModOp, float, double, int32_t, int64_t>(cpu("TruncateMod"), "T");
  RegisterTypedKernels<FloorModOp, float, double, int32_t, int64_t>(cpu("FloorMod"), "T");
  RegisterTypedKernels<MaximumOp, float, double, int32_t, int64_t>(cpu("Maximum"), "T");
  RegisterTypedKernels<MinimumOp, float, double, int32_t, int64_t>(cpu("Minimum"), "T");
  RegisterTypedKernels<PowOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Pow"),
                                                                                      "T");
  RegisterTypedKernels<Atan2Op, float, double>(cpu("Atan2"), "T");
  RegisterTypedKernels<XlogyOp, float, double>(cpu("Xlogy"), "T");
  RegisterTypedKernels<Xlog1pyOp, float, double>(cpu("Xlog1py"), "T");
  RegisterTypedKernels<XdivyOp, float, double>(cpu("Xdivy"), "T");
  RegisterTypedKernels<MulNoNanOp, float, double>(cpu("MulNoNan"), "T");
  RegisterTypedKernels<BitwiseAndOp, int32_t, int64_t>(cpu("BitwiseAnd"), "T");
  RegisterTypedKernels<BitwiseOrOp, int32_t, int64_t>(cpu("BitwiseOr"), "T");
  RegisterTypedKernels<BitwiseXorOp, int32_t, int64_t>(cpu("BitwiseXor"), "T");
  RegisterTypedKernels<LeftShiftOp, int32_t, int64_t>(cpu("LeftShift"), "T");
  RegisterTypedKernels<RightShiftOp, int32_t, int64_t>(cpu("RightShift"), "T");
  RegisterTypedKernels<NextAfterOp, float, double>(cpu("NextAfter"), "T");
  RegisterTypedKernels<ApproximateEqualOp, float, double>(cpu("ApproximateEqual"), "T");
  RegisterTypedKernels<SquaredDifferenceOp, float, double, int32_t, int64_t>(
      cpu("SquaredDifference"), "T");

  RegisterTypedKernels<EqualOp, float, double, int32_t, int64_t, bool, std::string, complex64,
                       complex128>(cpu("Equal"), "T");
  RegisterTypedKernels<NotEqualOp, float, double, int32_t, int64_t, bool, std::string, complex64,
                       complex128>(cpu("NotEqual"), "T");
  RegisterTypedKernels<LessOp, float, double, int32_t, int64_t>(cpu("Less"), "T");
  RegisterTypedKernels<LessEqualOp, float, double, int32_t, int64_t>(cpu("LessEqual"), "T");
  RegisterTypedKernels<GreaterOp, float, double, int32_t, int64_t>(cpu("Greater"), "T");
  RegisterTypedKernels<GreaterEqualOp, float, double, int32_t, int64_t>(cpu("GreaterEqual"), "T");
  RegisterKernel(cpu("LogicalAnd"), MakeFactory<BinaryOp<bool, bool, AndFn>>());
  RegisterKernel(cpu("LogicalOr"), MakeFactory<BinaryOp<bool, bool, OrFn>>());

  // int32 shape arithmetic of GPU nodes, as TensorFlow's: int32 tensors of
  // a GPU node live in host memory, so these CPU kernels serve. Gradients
  // are colocated with their op; without these, a mean's gradient (sizes
  // multiplied and divided) would move the mean and its gradient to the CPU,
  // and the activations with them.
  // Capturable: host work on host values, which a recorded step allows
  // only when they are the same every step (runtime/capture_specializer.h).
  const auto gpu_host = [](const char* op) {
    return KernelDefBuilder(op)
        .Device(kDeviceGpu)
        .HostMemory("x")
        .HostMemory("y")
        .HostMemory("z")
        .Capturable();
  };
  for (const char* op : {"Add", "AddV2"}) RegisterTypedKernels<AddOp, int32_t>(gpu_host(op), "T");
  RegisterTypedKernels<SubOp, int32_t>(gpu_host("Sub"), "T");
  RegisterTypedKernels<MulOp, int32_t>(gpu_host("Mul"), "T");
  RegisterTypedKernels<FloorDivOp, int32_t>(gpu_host("FloorDiv"), "T");
  RegisterTypedKernels<ModOp, int32_t>(gpu_host("Mod"), "T");
  RegisterTypedKernels<FloorModOp, int32_t>(gpu_host("FloorMod"), "T");
  RegisterTypedKernels<MaximumOp, int32_t>(gpu_host("Maximum"), "T");
  RegisterTypedKernels<MinimumOp, int32_t>(gpu_host("Minimum"), "T");
  // Their comparisons too (a reduction's gradient normalises its axes so);
  // the bool result stays on the host with them.
  RegisterTypedKernels<EqualOp, int32_t>(gpu_host("Equal"), "T");
  RegisterTypedKernels<NotEqualOp, int32_t>(gpu_host("NotEqual"), "T");
  RegisterTypedKernels<LessOp, int32_t>(gpu_host("Less"), "T");
  RegisterTypedKernels<LessEqualOp, int32_t>(gpu_host("LessEqual"), "T");
  RegisterTypedKernels<GreaterOp, int32_t>(gpu_host("Greater"), "T");
  RegisterTypedKernels<GreaterEqualOp, int32_t>(gpu_host("GreaterEqual"), "T");
}

}  // namespace
}  // namespace cwise
}  // namespace towerflow
