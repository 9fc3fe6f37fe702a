// Elementwise kernels: unary ops and binary ops with NumPy broadcasting,
// on Eigen expressions evaluated by the intra-op pool.
//
// A binary op is BinaryOp<T, Out, F> where F is an Eigen-style scalar
// functor (operator()(const T&, const T&) -> Out, plus packetOp when Eigen
// can vectorise it): Eigen's own functors for Add, Mul, Maximum, compare...,
// ours below for the rest. Shapes broadcast through BCast: equal shapes and
// one-element operands run as flat loops, everything else as a rank-2..5
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
#include "kernels/bcast.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/device.h"

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

// Markers: functors whose integer instantiations divide by y, or need y >= 0.
template <typename F>
struct DividesByY : std::false_type {};
template <typename F>
struct NonNegativeIntY : std::false_type {};

template <typename T, typename Out, typename F, int N>
void Broadcast(const Eigen::ThreadPoolDevice& d, const Tensor& x, const Tensor& y, const BCast& b,
               Tensor* z) {
  z->shaped<Out, N>(b.result_shape()).device(d) =
      x.shaped<T, N>(b.x_reshape())
          .broadcast(AsArray<N>(b.x_bcast()))
          .binaryExpr(y.shaped<T, N>(b.y_reshape()).broadcast(AsArray<N>(b.y_bcast())), F());
}

template <typename T, typename Out, typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const BCast b(x.shape(), y.shape());
    TW_RETURN_IF_ERROR(b.status());
    if constexpr (DividesByY<F>::value) TW_RETURN_IF_ERROR(CheckNoZeroDivisor<T>(y));
    if constexpr (NonNegativeIntY<F>::value) TW_RETURN_IF_ERROR(CheckNonNegative<T>(y));
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
    const F f;
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
      y->flat<T>().device(ctx->eigen_cpu_device()) = x.flat<T>().unaryExpr(F());
    }
    return absl::OkStatus();
  }
};

// ---- Functors Eigen lacks ----

// x / y truncating for integers (INT_MIN / -1 wraps instead of trapping).
template <typename T>
struct SafeDiv {
  T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (y == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x));
    }
    return x / y;
  }
};

// floor(x / y); Python's // for integers.
template <typename T>
struct FloorDivFn {
  T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T q = SafeDiv<T>()(x, y);
      if constexpr (std::is_signed_v<T>) {
        if ((x % y != 0) && ((x < 0) != (y < 0))) return q - 1;
      }
      return q;
    } else {
      return std::floor(x / y);
    }
  }
};

template <typename T>
struct PowFn {
  T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      T result = 1, base = x;
      for (auto e = y; e > 0; e >>= 1) {  // y >= 0 was checked
        if (e & 1) result = static_cast<T>(result * base);
        base = static_cast<T>(base * base);
      }
      return result;
    } else {
      return std::pow(x, y);
    }
  }
};

// (x - y)^2
template <typename T>
struct SquaredDifferenceFn {
  T operator()(const T& x, const T& y) const { return (x - y) * (x - y); }
};

template <typename T>
struct DividesByY<SafeDiv<T>> : std::true_type {};
template <typename T>
struct DividesByY<FloorDivFn<T>> : std::true_type {};
template <typename T>
struct NonNegativeIntY<PowFn<T>> : std::true_type {};

}  // namespace cwise
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_CWISE_OPS_H_
