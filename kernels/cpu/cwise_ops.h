// Elementwise kernels: unary ops and binary ops with NumPy broadcasting,
// on Eigen expressions evaluated by the intra-op pool.
//
// A binary op is BinaryOp<T, Out, F> and a unary one UnaryOp<T, F>, where
// F is a scalar functor: the device-neutral maths of kernels/cwise_functors.h
// (which the GPU kernels compute with too), or Eigen's own functor for ops
// only the CPU has (Sign, Sin...). A shared functor runs with
// Eigen's SIMD form of the same maths where Eigen has one (CpuForm below). Shapes broadcast through
// BCast: equal shapes and one-element operands run as flat expressions, everything else as rows
// of the collapsed result (Note [Broadcasting by rows]).
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

// Complex numbers take the functors' scalar maths (std::complex's).
#define TW_CPU_SIMD_FORM(Functor, ...)                                               \
  template <typename T>                                                              \
  struct CpuFormOf<functor::Functor<T>> {                                            \
    using type = std::conditional_t<kIsComplex<T>, functor::Functor<T>,              \
                                    WithSimd<functor::Functor<T>, ei::__VA_ARGS__>>; \
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

// Note [Broadcasting by rows]
// A broadcast is evaluated as rows of the collapsed result's last dimension
// (BCastRows, kernels/bcast.h): in each row, x and y are each either a run
// of that dimension or one element repeated. Rows are spread over the pool;
// a long row is one flat, vectorised Eigen expression, a short one a scalar
// loop. Every rank is served so, by three flat expressions per kernel,
// where Eigen's broadcast evaluators took an instantiation per op, dtype
// and rank (60% of the binary ops' compile time) and ran slower
// (bench/README.md, "Broadcasting binary ops"). When z is written over x
// (or y), that input has z's shape, so its row r is z's row r: each
// element is read before it is written.
template <typename T, typename Out, typename F>
void BroadcastRows(const Eigen::ThreadPoolDevice& d, const Tensor& x, const Tensor& y,
                   const BCast& b, Tensor* z) {
  const BCastRows rows(b);
  const int64_t n = rows.row_length(), x_step = rows.x_step(), y_step = rows.y_step();
  const T* xp = x.data<T>();
  const T* yp = y.data<T>();
  Out* zp = z->data<Out>();
  const auto shard = [&](Eigen::Index first, Eigen::Index last) {
    using In = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::DenseIndex>>;
    using Row = Eigen::TensorMap<Eigen::Tensor<Out, 1, Eigen::RowMajor, Eigen::DenseIndex>>;
    constexpr int64_t kShortRow = 16;
    const CpuForm<F> f;
    for (BCastRows::Cursor c = rows.At(first); c.row() < last; c.Next()) {
      Out* out = zp + c.row() * n;
      const T* xr = xp + c.x();
      const T* yr = yp + c.y();
      if (n < kShortRow) {
        for (int64_t j = 0; j < n; ++j) out[j] = f(xr[j * x_step], yr[j * y_step]);
      } else if (x_step != 0 && y_step != 0) {
        Row(out, n) = In(xr, n).binaryExpr(In(yr, n), f);
      } else if (x_step != 0) {
        Row(out, n) = In(xr, n).binaryExpr(In(xr, n).constant(*yr), f);
      } else {
        Row(out, n) = In(yr, n).constant(*xr).binaryExpr(In(yr, n), f);
      }
    }
  };
  const double cycles = Eigen::internal::functor_traits<CpuForm<F>>::Cost;
  d.parallelFor(rows.rows(),
                Eigen::TensorOpCost(2.0 * n * sizeof(T), 1.0 * n * sizeof(Out), cycles * n), shard);
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
      BroadcastRows<T, Out, F>(d, x, y, b, z);
    }
    return absl::OkStatus();
  }
};

// A binary op whose inputs must have one shape (the *Grad companions of
// unary ops: y and dy, gradients and features): one flat expression.
template <typename T, typename F>
class SameShapeBinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.shape() != y.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->op(), " needs both inputs of one shape, got ", x.shape().DebugString(),
                       " and ", y.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * z, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() > 0) {
      z->flat<T>().device(ctx->eigen_cpu_device()) =
          x.flat<T>().binaryExpr(y.flat<T>(), CpuForm<F>());
    }
    return absl::OkStatus();
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
