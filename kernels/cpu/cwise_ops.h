// Elementwise kernels: unary ops and binary ops with NumPy broadcasting,
// on Eigen expressions evaluated by the intra-op pool.
//
// A binary op is BinaryOp<T, Out, F> and a unary one UnaryOp<T, F>, where
// F is a scalar functor: the device-neutral maths of kernels/cwise_functors.h
// (which the GPU kernels compute with too), or Eigen's own functor for ops
// only the CPU has (Sign, Sin...). A shared functor runs with
// Eigen's SIMD form of the same maths where Eigen has one (CpuForm below). Shapes broadcast through
// BCast: equal shapes and one-element operands run as flat loops, everything else as a rank-2..5
// Eigen broadcast after collapsing dims (TF's limit is also 5).
//
// Buffers: x [any], y [any], z [BCast(x, y).output_shape()], written over
// x's or y's buffer when no one else holds it.
#ifndef TOWERFLOW_KERNELS_CPU_CWISE_OPS_H_
#define TOWERFLOW_KERNELS_CPU_CWISE_OPS_H_

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cwise_functors.h"

namespace towerflow {
namespace cwise {

template <int N>
std::array<Eigen::DenseIndex, N> AsArray(const BCast::Vec& v) {
  std::array<Eigen::DenseIndex, N> a;
  for (int i = 0; i < N; ++i) a[i] = v[i];
  return a;
}

// Integer division by zero is an error (it would be SIGFPE), as in TF.
template <typename T>
absl::Status CheckNoZeroDivisor(const Tensor& y) {
  if constexpr (std::is_integral_v<T>) {
    const T* p = y.data<T>();
    for (int64_t i = 0, n = y.NumElements(); i < n; ++i) {
      if (p[i] == 0) return absl::InvalidArgumentError("Integer division by zero");
    }
  }
  return absl::OkStatus();
}

// Integer powers with negative exponents are an error, as in TF.
template <typename T>
absl::Status CheckNonNegative(const Tensor& y) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    const T* p = y.data<T>();
    for (int64_t i = 0, n = y.NumElements(); i < n; ++i) {
      if (p[i] < 0) {
        return absl::InvalidArgumentError("Integers to negative integer powers are not allowed");
      }
    }
  }
  return absl::OkStatus();
}

namespace ei = Eigen::internal;

// A shared functor F with Eigen's SIMD form `Simd` of the same maths: Eigen
// calls packetOp on whole registers and F's operator() on the rest.
template <typename F, typename Simd>
struct WithSimd : F {
  using F::operator();
  template <typename Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& x) const {
    return Simd().packetOp(x);
  }
  template <typename Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& x, const Packet& y) const {
    return Simd().packetOp(x, y);
  }
};

// What the CPU kernels evaluate for F: F itself, or F WithSimd where Eigen
// has a packet form of F's maths.
template <typename F>
struct CpuFormOf {
  using type = F;
};
template <typename F>
using CpuForm = typename CpuFormOf<F>::type;

#define TW_CPU_SIMD_FORM(Functor, ...)                           \
  template <typename T>                                          \
  struct CpuFormOf<functor::Functor<T>> {                        \
    using type = WithSimd<functor::Functor<T>, ei::__VA_ARGS__>; \
  };
TW_CPU_SIMD_FORM(Neg, scalar_opposite_op<T>)
TW_CPU_SIMD_FORM(Abs, scalar_abs_op<T>)
TW_CPU_SIMD_FORM(Square, scalar_square_op<T>)
TW_CPU_SIMD_FORM(Sqrt, scalar_sqrt_op<T>)
TW_CPU_SIMD_FORM(Rsqrt, scalar_rsqrt_op<T>)
TW_CPU_SIMD_FORM(Exp, scalar_exp_op<T>)
TW_CPU_SIMD_FORM(Log, scalar_log_op<T>)
TW_CPU_SIMD_FORM(Tanh, scalar_tanh_op<T>)
TW_CPU_SIMD_FORM(Sigmoid, scalar_logistic_op<T>)
TW_CPU_SIMD_FORM(Reciprocal, scalar_inverse_op<T>)
TW_CPU_SIMD_FORM(Floor, scalar_floor_op<T>)
TW_CPU_SIMD_FORM(Add, scalar_sum_op<T, T>)
TW_CPU_SIMD_FORM(Sub, scalar_difference_op<T, T>)
TW_CPU_SIMD_FORM(Mul, scalar_product_op<T, T>)
#undef TW_CPU_SIMD_FORM
// Maximum and Minimum propagate NaN from either input, as the functors.
template <typename T, template <typename, typename, int> class EigenOp>
using NaNPropagating =
    EigenOp<T, T, std::is_floating_point_v<T> ? Eigen::PropagateNaN : Eigen::PropagateFast>;
template <typename T>
struct CpuFormOf<functor::Maximum<T>> {
  using type = WithSimd<functor::Maximum<T>, NaNPropagating<T, ei::scalar_max_op>>;
};
template <typename T>
struct CpuFormOf<functor::Minimum<T>> {
  using type = WithSimd<functor::Minimum<T>, NaNPropagating<T, ei::scalar_min_op>>;
};
// Division vectorises for floating point only (integers truncate, wrap
// INT_MIN / -1 and were checked for zero divisors).
template <typename T>
struct CpuFormOf<functor::Div<T>> {
  using type =
      std::conditional_t<std::is_floating_point_v<T>,
                         WithSimd<functor::Div<T>, ei::scalar_quotient_op<T, T>>, functor::Div<T>>;
};

template <typename T, typename Out, typename F, int N>
void Broadcast(const Eigen::ThreadPoolDevice& d, const Tensor& x, const Tensor& y, const BCast& b,
               Tensor* z) {
  z->shaped<Out, N>(b.result_shape()).device(d) =
      x.shaped<T, N>(b.x_reshape())
          .broadcast(AsArray<N>(b.x_bcast()))
          .binaryExpr(y.shaped<T, N>(b.y_reshape()).broadcast(AsArray<N>(b.y_bcast())),
                      CpuForm<F>());
}

template <typename T, typename Out, typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const BCast b(x.shape(), y.shape());
    TW_RETURN_IF_ERROR(b.status());
    if constexpr (functor::DividesByY<F>::value) TW_RETURN_IF_ERROR(CheckNoZeroDivisor<T>(y));
    if constexpr (functor::NonNegativeIntY<F>::value) TW_RETURN_IF_ERROR(CheckNonNegative<T>(y));
    const TensorShape& shape = b.output_shape();
    Tensor* z;
    if (std::is_same_v<T, Out> && x.shape() == shape) {
      TW_ASSIGN_OR_RETURN(z, ctx->forward_input_or_allocate_output(0, 0, shape));
    } else if (std::is_same_v<T, Out> && y.shape() == shape) {
      TW_ASSIGN_OR_RETURN(z, ctx->forward_input_or_allocate_output(1, 0, shape));
    } else {
      TW_ASSIGN_OR_RETURN(z, ctx->allocate_output(0, shape));
    }
    if (shape.num_elements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    auto out = z->flat<Out>();
    const CpuForm<F> f;
    if (x.NumElements() == shape.num_elements() && y.NumElements() == shape.num_elements()) {
      out.device(d) = x.flat<T>().binaryExpr(y.flat<T>(), f);
    } else if (y.NumElements() == 1) {
      out.device(d) = x.flat<T>().binaryExpr(x.flat<T>().constant(*y.data<T>()), f);
    } else if (x.NumElements() == 1) {
      out.device(d) = y.flat<T>().constant(*x.data<T>()).binaryExpr(y.flat<T>(), f);
    } else {
      switch (b.result_shape().size()) {
        case 2:
          Broadcast<T, Out, F, 2>(d, x, y, b, z);
          break;
        case 3:
          Broadcast<T, Out, F, 3>(d, x, y, b, z);
          break;
        case 4:
          Broadcast<T, Out, F, 4>(d, x, y, b, z);
          break;
        case 5:
          Broadcast<T, Out, F, 5>(d, x, y, b, z);
          break;
        default:
          return absl::UnimplementedError(
              absl::StrCat("Broadcast between ", x.shape().DebugString(), " and ",
                           y.shape().DebugString(), " is not supported yet."));
      }
    }
    return absl::OkStatus();
  }
};

// A binary op whose inputs must have one shape (the *Grad companions of
// unary ops: y and dy, gradients and features).
template <typename T, typename F>
class SameShapeBinaryOp : public BinaryOp<T, T, F> {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->input(0).shape() != ctx->input(1).shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx->op(), " needs both inputs of one shape, got ", ctx->input(0).shape().DebugString(),
          " and ", ctx->input(1).shape().DebugString()));
    }
    return BinaryOp<T, T, F>::Compute(ctx);
  }
};

template <typename T, typename F>
class UnaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() > 0) {
      y->flat<T>().device(ctx->eigen_cpu_device()) = x.flat<T>().unaryExpr(CpuForm<F>());
    }
    return absl::OkStatus();
  }
};

}  // namespace cwise
}  // namespace towerflow

namespace Eigen {
namespace internal {
// Cost and vectorisation of a shared functor with a SIMD form: Eigen's.
template <typename F, typename Simd>
struct functor_traits<towerflow::cwise::WithSimd<F, Simd>> : functor_traits<Simd> {};
}  // namespace internal
}  // namespace Eigen

#endif  // TOWERFLOW_KERNELS_CPU_CWISE_OPS_H_
