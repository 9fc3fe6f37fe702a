// The complex-number kernels (ops/spectral_ops.cc): Complex (broadcasting,
// through the binary machinery of cwise_ops.h), Real, Imag, Angle,
// ComplexAbs and Conj, for complex64 with float and complex128 with
// double, as TF registers them. Arithmetic on complex numbers is the cwise
// kernels' (cwise_unary_ops.cc, cwise_binary_ops.cc).
#include <cmath>
#include <complex>

#include "kernels/cpu/cwise_ops.h"

namespace towerflow {
namespace cwise {
namespace {

template <typename R, typename C>
struct MakeComplexFn {
  C operator()(const R& re, const R& im) const { return C(re, im); }
};
template <typename C>
struct RealFn {
  typename C::value_type operator()(const C& x) const { return x.real(); }
};
template <typename C>
struct ImagFn {
  typename C::value_type operator()(const C& x) const { return x.imag(); }
};
template <typename C>
struct AngleFn {
  typename C::value_type operator()(const C& x) const { return std::arg(x); }
};
template <typename C>
struct AbsFn {  // std::abs is hypot's: no overflow for large parts
  typename C::value_type operator()(const C& x) const { return std::abs(x); }
};
template <typename C>
struct ConjFn {
  C operator()(const C& x) const { return std::conj(x); }
};

// out = f(in), elementwise, with out's element type F's result.
template <typename T, typename F>
class MapOp : public OpKernel {
 public:
  using Out = decltype(F()(T()));
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() > 0) {
      y->flat<Out>().device(ctx->eigen_cpu_device()) = x.flat<T>().unaryExpr(F());
    }
    return absl::OkStatus();
  }
};

template <typename R, typename C>
void RegisterPair() {
  constexpr DataType r = DataTypeToEnum<R>::value, c = DataTypeToEnum<C>::value;
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("Complex").TypeConstraint("T", r).TypeConstraint("Tout", c),
                 MakeFactory<BinaryOp<R, C, MakeComplexFn<R, C>>>());
  RegisterKernel(cpu("Real").TypeConstraint("T", c).TypeConstraint("Tout", r),
                 MakeFactory<MapOp<C, RealFn<C>>>());
  RegisterKernel(cpu("Imag").TypeConstraint("T", c).TypeConstraint("Tout", r),
                 MakeFactory<MapOp<C, ImagFn<C>>>());
  RegisterKernel(cpu("Angle").TypeConstraint("T", c).TypeConstraint("Tout", r),
                 MakeFactory<MapOp<C, AngleFn<C>>>());
  RegisterKernel(cpu("ComplexAbs").TypeConstraint("T", c).TypeConstraint("Tout", r),
                 MakeFactory<MapOp<C, AbsFn<C>>>());
  RegisterKernel(cpu("Conj").TypeConstraint("T", c), MakeFactory<MapOp<C, ConjFn<C>>>());
}

}  // namespace
}  // namespace cwise

TW_REGISTER_KERNELS(complex_ops) {
  cwise::RegisterPair<float, complex64>();
  cwise::RegisterPair<double, complex128>();
}

}  // namespace towerflow
