// Unary elementwise kernels, the *Grad companions of unary activations,
// AddN and Select/SelectV2.
#include <cmath>
#include <type_traits>

#include "framework/tensor_views.h"
#include "kernels/cpu/cwise_ops.h"

namespace towerflow {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

struct NotFn {
  bool operator()(bool x) const { return !x; }
};

template <typename T, typename F>
class PredicateOp : public OpKernel {  // float -> bool
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() > 0) {
      y->flat<bool>().device(ctx->eigen_cpu_device()) = x.flat<T>().unaryExpr(F());
    }
    return absl::OkStatus();
  }
};

// sum_i inputs[i]; all of one shape.
template <typename T>
class AddNOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs();
    if (n == 0) return absl::InvalidArgumentError(absl::StrCat(ctx->op(), " needs an input"));
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat("Inputs to operation ", ctx->name(),
                                                       " of type ", ctx->op(),
                                                       " must have the same size and shape. "
                                                       "Input 0: ",
                                                       first.shape().DebugString(), " != input ", i,
                                                       ": ", ctx->input(i).shape().DebugString()));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, first.shape()));
    if (first.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    auto o = out->flat<T>();
    int i = 1;
    if (n == 1) {
      if (!out->SharesBufferWith(first)) o.device(d) = first.flat<T>();
      return absl::OkStatus();
    }
    // Add up to three more inputs per pass over the output. (functor::Add:
    // integers wrap around on overflow.)
    const CpuForm<functor::Add<T>> add;
    o.device(d) = first.flat<T>().binaryExpr(ctx->input(i++).flat<T>(), add);
    for (; i + 2 < n; i += 3) {
      o.device(d) = o.binaryExpr(ctx->input(i).flat<T>(), add)
                        .binaryExpr(ctx->input(i + 1).flat<T>(), add)
                        .binaryExpr(ctx->input(i + 2).flat<T>(), add);
    }
    for (; i < n; ++i) o.device(d) = o.binaryExpr(ctx->input(i).flat<T>(), add);
    return absl::OkStatus();
  }
};

// Select(condition, t, e): condition of t's shape, or a vector over t's
// first dimension (rows), or a scalar.
template <typename T>
class SelectOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& c = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    TW_ASSIGN_OR_RETURN(const SelectCondition kind, PlanSelect(c.shape(), t.shape(), e.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, t.shape()));
    if (t.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    if (kind == SelectCondition::kSame) {
      out->flat<T>().device(d) = c.flat<bool>().select(t.flat<T>(), e.flat<T>());
    } else if (kind == SelectCondition::kScalar) {
      out->flat<T>().device(d) = *c.data<bool>() ? t.flat<T>() : e.flat<T>();
    } else {
      const int64_t n = t.dim_size(0), inner = t.NumElements() / n;
      const std::array<Eigen::DenseIndex, 2> bcast{1, inner};
      const std::array<int64_t, 2> dims{n, inner};
      out->shaped<T, 2>(dims).device(d) = c.shaped<bool, 2>({n, 1}).broadcast(bcast).select(
          t.shaped<T, 2>(dims), e.shaped<T, 2>(dims));
    }
    return absl::OkStatus();
  }
};

// SelectV2: condition, t and e broadcast together.
template <typename T>
class SelectV2Op : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& c = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    TW_ASSIGN_OR_RETURN(const TensorShape shape, SelectV2Shape(c.shape(), t.shape(), e.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    switch (std::max(shape.dims(), 1)) {
      case 1:
        return Run<1>(ctx, c, t, e, out);
      case 2:
        return Run<2>(ctx, c, t, e, out);
      case 3:
        return Run<3>(ctx, c, t, e, out);
      case 4:
        return Run<4>(ctx, c, t, e, out);
      case 5:
        return Run<5>(ctx, c, t, e, out);
      default:
        return absl::UnimplementedError(
            absl::StrCat("SelectV2 broadcasting to rank ", shape.dims(), " is not supported"));
    }
  }

 private:
  // `in` viewed at rank N (leading 1s) and its broadcast to `out`.
  template <int N>
  static std::pair<BCast::Vec, BCast::Vec> Plan(const TensorShape& in, const TensorShape& out) {
    BCast::Vec dims(N, 1), bcast(N, 1);
    for (int i = 0; i < in.dims(); ++i) dims[N - in.dims() + i] = in.dim_size(i);
    for (int i = 0; i < N; ++i) {
      const int64_t o = i - (N - out.dims()) >= 0 ? out.dim_size(i - (N - out.dims())) : 1;
      bcast[i] = dims[i] == o ? 1 : o;
    }
    return {dims, bcast};
  }

  template <int N>
  absl::Status Run(KernelContext* ctx, const Tensor& c, const Tensor& t, const Tensor& e,
                   Tensor* out) {
    const auto [cd, cb] = Plan<N>(c.shape(), out->shape());
    const auto [td, tb] = Plan<N>(t.shape(), out->shape());
    const auto [ed, eb] = Plan<N>(e.shape(), out->shape());
    BCast::Vec od(N, 1);
    for (int i = 0; i < out->dims(); ++i) od[N - out->dims() + i] = out->dim_size(i);
    out->shaped<T, N>(od).device(ctx->eigen_cpu_device()) =
        c.shaped<bool, N>(cd)
            .broadcast(AsArray<N>(cb))
            .select(t.shaped<T, N>(td).broadcast(AsArray<N>(tb)),
                    e.shaped<T, N>(ed).broadcast(AsArray<N>(eb)));
    return absl::OkStatus();
  }
};

template <typename T>
using NegOp = UnaryOp<T, functor::Neg<T>>;
template <typename T>
using AbsOp = UnaryOp<T, functor::Abs<T>>;
template <typename T>
using SquareOp = UnaryOp<T, functor::Square<T>>;
template <typename T>
using SignOp = UnaryOp<T, ei::scalar_sign_op<T>>;
template <typename T>
using SqrtOp = UnaryOp<T, functor::Sqrt<T>>;
template <typename T>
using RsqrtOp = UnaryOp<T, functor::Rsqrt<T>>;
template <typename T>
using ExpOp = UnaryOp<T, functor::Exp<T>>;
template <typename T>
using Expm1Op = UnaryOp<T, ei::scalar_expm1_op<T>>;
template <typename T>
using LogOp = UnaryOp<T, functor::Log<T>>;
template <typename T>
using Log1pOp = UnaryOp<T, ei::scalar_log1p_op<T>>;
template <typename T>
using SigmoidOp = UnaryOp<T, functor::Sigmoid<T>>;
template <typename T>
using ErfOp = UnaryOp<T, functor::Erf<T>>;
template <typename T>
using TanhOp = UnaryOp<T, functor::Tanh<T>>;
template <typename T>
using ReciprocalOp = UnaryOp<T, functor::Reciprocal<T>>;
template <typename T>
using FloorOp = UnaryOp<T, functor::Floor<T>>;
template <typename T>
using CeilOp = UnaryOp<T, ei::scalar_ceil_op<T>>;
template <typename T>
using RintOp = UnaryOp<T, functor::Rint<T>>;
template <typename T>
using RoundOp = UnaryOp<T, functor::Round<T>>;
template <typename T>
using SinOp = UnaryOp<T, ei::scalar_sin_op<T>>;
template <typename T>
using CosOp = UnaryOp<T, ei::scalar_cos_op<T>>;
template <typename T>
using ErfcOp = UnaryOp<T, functor::Erfc<T>>;
template <typename T>
using TanOp = UnaryOp<T, functor::Tan<T>>;
template <typename T>
using AsinOp = UnaryOp<T, functor::Asin<T>>;
template <typename T>
using AcosOp = UnaryOp<T, functor::Acos<T>>;
template <typename T>
using AtanOp = UnaryOp<T, functor::Atan<T>>;
template <typename T>
using SinhOp = UnaryOp<T, functor::Sinh<T>>;
template <typename T>
using CoshOp = UnaryOp<T, functor::Cosh<T>>;
template <typename T>
using AsinhOp = UnaryOp<T, functor::Asinh<T>>;
template <typename T>
using AcoshOp = UnaryOp<T, functor::Acosh<T>>;
template <typename T>
using AtanhOp = UnaryOp<T, functor::Atanh<T>>;
template <typename T>
using InvertOp = UnaryOp<T, functor::Invert<T>>;

// PopulationCount: the set bits of each element, as uint8.
template <typename T>
class PopulationCountOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const T* in = x.data<T>();
    uint8_t* out = y->data<uint8_t>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      out[i] = static_cast<uint8_t>(
          __builtin_popcountll(static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(in[i]))));
    }
    return absl::OkStatus();
  }
};

template <typename T>
using IsNanOp = PredicateOp<T, ei::scalar_isnan_op<T>>;
template <typename T>
using IsInfOp = PredicateOp<T, ei::scalar_isinf_op<T>>;
template <typename T>
using IsFiniteOp = PredicateOp<T, ei::scalar_isfinite_op<T>>;
template <typename T>
using SigmoidGradOp = SameShapeBinaryOp<T, functor::SigmoidGrad<T>>;
template <typename T>
using TanhGradOp = SameShapeBinaryOp<T, functor::TanhGrad<T>>;
template <typename T>
using SqrtGradOp = SameShapeBinaryOp<T, functor::SqrtGrad<T>>;
template <typename T>
using RsqrtGradOp = SameShapeBinaryOp<T, functor::RsqrtGrad<T>>;
template <typename T>
using ReciprocalGradOp = SameShapeBinaryOp<T, functor::ReciprocalGrad<T>>;

TW_REGISTER_KERNELS(cwise_unary) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<NegOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Neg"),
                                                                                      "T");
  RegisterTypedKernels<AbsOp, float, double, int32_t, int64_t>(cpu("Abs"), "T");
  RegisterTypedKernels<SquareOp, float, double, int32_t, int64_t, complex64, complex128>(
      cpu("Square"), "T");
  RegisterTypedKernels<SignOp, float, double, int32_t, int64_t>(cpu("Sign"), "T");
  RegisterTypedKernels<SqrtOp, float, double, complex64, complex128>(cpu("Sqrt"), "T");
  RegisterTypedKernels<RsqrtOp, float, double, complex64, complex128>(cpu("Rsqrt"), "T");
  RegisterTypedKernels<ExpOp, float, double, complex64, complex128>(cpu("Exp"), "T");
  RegisterTypedKernels<Expm1Op, float, double>(cpu("Expm1"), "T");
  RegisterTypedKernels<LogOp, float, double, complex64, complex128>(cpu("Log"), "T");
  RegisterTypedKernels<Log1pOp, float, double>(cpu("Log1p"), "T");
  RegisterTypedKernels<ErfOp, float, double>(cpu("Erf"), "T");
  RegisterTypedKernels<SigmoidOp, float, double>(cpu("Sigmoid"), "T");
  RegisterTypedKernels<TanhOp, float, double, complex64, complex128>(cpu("Tanh"), "T");
  RegisterTypedKernels<ReciprocalOp, float, double, complex64, complex128>(cpu("Reciprocal"), "T");
  RegisterTypedKernels<ReciprocalOp, float, double, complex64, complex128>(cpu("Inv"), "T");
  RegisterTypedKernels<FloorOp, float, double>(cpu("Floor"), "T");
  RegisterTypedKernels<CeilOp, float, double>(cpu("Ceil"), "T");
  RegisterTypedKernels<RoundOp, float, double, int32_t, int64_t>(cpu("Round"), "T");
  RegisterTypedKernels<RintOp, float, double>(cpu("Rint"), "T");
  RegisterTypedKernels<SinOp, float, double, complex64, complex128>(cpu("Sin"), "T");
  RegisterTypedKernels<CosOp, float, double, complex64, complex128>(cpu("Cos"), "T");
  RegisterTypedKernels<ErfcOp, float, double>(cpu("Erfc"), "T");
  RegisterTypedKernels<InvertOp, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                       uint64_t>(cpu("Invert"), "T");
  RegisterTypedKernels<PopulationCountOp, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                       uint32_t, uint64_t>(cpu("PopulationCount"), "T");
  RegisterTypedKernels<TanOp, float, double>(cpu("Tan"), "T");
  RegisterTypedKernels<AsinOp, float, double>(cpu("Asin"), "T");
  RegisterTypedKernels<AcosOp, float, double>(cpu("Acos"), "T");
  RegisterTypedKernels<AtanOp, float, double>(cpu("Atan"), "T");
  RegisterTypedKernels<SinhOp, float, double>(cpu("Sinh"), "T");
  RegisterTypedKernels<CoshOp, float, double>(cpu("Cosh"), "T");
  RegisterTypedKernels<AsinhOp, float, double>(cpu("Asinh"), "T");
  RegisterTypedKernels<AcoshOp, float, double>(cpu("Acosh"), "T");
  RegisterTypedKernels<AtanhOp, float, double>(cpu("Atanh"), "T");
  RegisterTypedKernels<IsNanOp, float, double>(cpu("IsNan"), "T");
  RegisterTypedKernels<IsInfOp, float, double>(cpu("IsInf"), "T");
  RegisterTypedKernels<IsFiniteOp, float, double>(cpu("IsFinite"), "T");
  RegisterKernel(cpu("LogicalNot"), MakeFactory<UnaryOp<bool, NotFn>>());
  RegisterTypedKernels<SigmoidGradOp, float, double>(cpu("SigmoidGrad"), "T");
  RegisterTypedKernels<TanhGradOp, float, double>(cpu("TanhGrad"), "T");
  RegisterTypedKernels<SqrtGradOp, float, double>(cpu("SqrtGrad"), "T");
  RegisterTypedKernels<RsqrtGradOp, float, double>(cpu("RsqrtGrad"), "T");
  RegisterTypedKernels<ReciprocalGradOp, float, double>(cpu("ReciprocalGrad"), "T");
  RegisterTypedKernels<ReciprocalGradOp, float, double>(cpu("InvGrad"), "T");
  RegisterTypedKernels<AddNOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("AddN"),
                                                                                       "T");
  // TF rewrites AccumulateNV2 into an accumulator variable before it runs;
  // its sum is AddN's.
  RegisterTypedKernels<AddNOp, float, double, int32_t, int64_t>(cpu("AccumulateNV2"), "T");
  // Strings too: TF 2's save functions pick a file-name suffix with Select.
  RegisterTypedKernels<SelectOp, float, double, int32_t, int64_t, bool, std::string, complex64,
                       complex128>(cpu("Select"), "T");
  RegisterTypedKernels<SelectV2Op, float, double, int32_t, int64_t, bool, std::string, complex64,
                       complex128>(cpu("SelectV2"), "T");
  // int32 selects of GPU nodes (shape arithmetic), on the host with their
  // int32 branches (see cwise_binary_ops.cc); the condition joins them.
  const auto gpu_host = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).HostMemory("condition").Capturable();
  };
  RegisterTypedKernels<SelectOp, int32_t>(gpu_host("Select"), "T");
  RegisterTypedKernels<SelectV2Op, int32_t>(gpu_host("SelectV2"), "T");
}

}  // namespace
}  // namespace cwise
}  // namespace towerflow
