// Elementwise maths, defined once per op for every device (TF's
// cwise_ops.h functor pattern): the CPU kernels evaluate these functors
// through Eigen (kernels/cpu/cwise_ops.h adds Eigen's SIMD form where Eigen
// has one), the CUDA kernels call them per element
// (kernels/gpu/cwise_kernels.cu.cc).
//
// Each functor is a stateless struct whose operator() compiles for host and
// device (TW_HOST_DEVICE). The header includes neither Eigen nor CUDA, so
// nvcc sees only this file and the C++ library.
//
// Argument order is TensorFlow's: the *Grad functors of activations take
// (incoming gradient, forward features or output) as ReluGrad does, and
// (forward output, incoming gradient) as TanhGrad and SigmoidGrad do.
#ifndef TOWERFLOW_KERNELS_CWISE_FUNCTORS_H_
#define TOWERFLOW_KERNELS_CWISE_FUNCTORS_H_

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define TW_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TW_HOST_DEVICE inline
#endif

namespace towerflow {
namespace functor {

// ---- Integer wrap-around ----
//
// Integer arithmetic wraps around on overflow, as TensorFlow's kernels and
// the hardware do (INT32_MAX + 1 is INT32_MIN, Abs(INT32_MIN) is INT32_MIN).
// C++ leaves signed overflow undefined (UBSan's signed-integer-overflow) but
// defines unsigned arithmetic modulo 2^n, so integers are computed in the
// unsigned type of their width (at least unsigned int: narrower types would
// promote to int) and converted back. Floating-point types compute as they
// are.
template <typename T, typename = void>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using type = decltype(std::make_unsigned_t<T>() + 0u);
};
template <typename T>
using WrappingType = typename Wrapping<T>::type;

template <typename T>
TW_HOST_DEVICE T WrappingAdd(T x, T y) {
  return static_cast<T>(static_cast<WrappingType<T>>(x) + static_cast<WrappingType<T>>(y));
}
template <typename T>
TW_HOST_DEVICE T WrappingSub(T x, T y) {
  return static_cast<T>(static_cast<WrappingType<T>>(x) - static_cast<WrappingType<T>>(y));
}
template <typename T>
TW_HOST_DEVICE T WrappingMul(T x, T y) {
  return static_cast<T>(static_cast<WrappingType<T>>(x) * static_cast<WrappingType<T>>(y));
}

// ---- Unary ----

template <typename T>
struct Neg {
  TW_HOST_DEVICE T operator()(const T& x) const {
    if constexpr (std::is_integral_v<T>) {
      return WrappingSub(T(0), x);
    } else {
      return -x;
    }
  }
};
template <typename T>
struct Abs {
  TW_HOST_DEVICE T operator()(const T& x) const { return x < T(0) ? Neg<T>()(x) : x; }
};
template <typename T>
struct Square {
  TW_HOST_DEVICE T operator()(const T& x) const { return WrappingMul(x, x); }
};
template <typename T>
struct Sqrt {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::sqrt(x); }
};
template <typename T>
struct Rsqrt {
  TW_HOST_DEVICE T operator()(const T& x) const { return T(1) / std::sqrt(x); }
};
template <typename T>
struct Exp {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::exp(x); }
};
template <typename T>
struct Log {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::log(x); }
};
template <typename T>
struct Tanh {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::tanh(x); }
};
template <typename T>
struct Sigmoid {
  TW_HOST_DEVICE T operator()(const T& x) const { return T(1) / (T(1) + std::exp(-x)); }
};
template <typename T>
struct Reciprocal {
  TW_HOST_DEVICE T operator()(const T& x) const { return T(1) / x; }
};
template <typename T>
struct Floor {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::floor(x); }
};
// TF's Round: half to even.
template <typename T>
struct Round {  // half to even; integers are already round
  TW_HOST_DEVICE T operator()(const T& x) const {
    if constexpr (std::is_integral_v<T>) {
      return x;
    } else {
      return std::nearbyint(x);
    }
  }
};
template <typename T>
struct Relu {  // TF's max(x, 0): NaN and -0 pass through
  TW_HOST_DEVICE T operator()(const T& x) const { return x < T(0) ? T(0) : x; }
};
template <typename T>
struct Relu6 {  // TF's min(max(x, 0), 6): NaN and -0 pass through
  TW_HOST_DEVICE T operator()(const T& x) const {
    const T y = x < T(0) ? T(0) : x;
    return T(6) < y ? T(6) : y;
  }
};
template <typename T>
struct Elu {
  TW_HOST_DEVICE T operator()(const T& x) const { return x < T(0) ? std::expm1(x) : x; }
};

// log(1 + e^x), without overflow for large x.
template <typename T>
struct Softplus {
  TW_HOST_DEVICE T operator()(const T& x) const {
    return (x > T(0) ? x : T(0)) + std::log1p(std::exp(x > T(0) ? -x : x));
  }
};
// The nearest integer, halves to even (the default rounding mode), as TF.
template <typename T>
struct Rint {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::rint(x); }
};
// x / (1 + |x|).
template <typename T>
struct Softsign {
  TW_HOST_DEVICE T operator()(const T& x) const { return x / (T(1) + (x < T(0) ? -x : x)); }
};
// Scaled ELU with TensorFlow's constants (Klambauer et al.).
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
template <typename T>
struct Selu {
  TW_HOST_DEVICE T operator()(const T& x) const {
    return x > T(0) ? T(kSeluScale) * x : T(kSeluScale * kSeluAlpha) * std::expm1(x);
  }
};
template <typename T>
struct Erf {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::erf(x); }
};
template <typename T>
struct Erfc {
  TW_HOST_DEVICE T operator()(const T& x) const { return std::erfc(x); }
};
// The trigonometric and hyperbolic functions (and their inverses) of the
// C library, as TF's CPU kernels compute them.
#define TW_STD_UNARY_FUNCTOR(Name, fn)                                   \
  template <typename T>                                                  \
  struct Name {                                                          \
    TW_HOST_DEVICE T operator()(const T& x) const { return std::fn(x); } \
  };
TW_STD_UNARY_FUNCTOR(Tan, tan)
TW_STD_UNARY_FUNCTOR(Asin, asin)
TW_STD_UNARY_FUNCTOR(Acos, acos)
TW_STD_UNARY_FUNCTOR(Atan, atan)
TW_STD_UNARY_FUNCTOR(Sinh, sinh)
TW_STD_UNARY_FUNCTOR(Cosh, cosh)
TW_STD_UNARY_FUNCTOR(Asinh, asinh)
TW_STD_UNARY_FUNCTOR(Acosh, acosh)
TW_STD_UNARY_FUNCTOR(Atanh, atanh)
#undef TW_STD_UNARY_FUNCTOR

// ---- Binary ----

template <typename T>
struct Add {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return WrappingAdd(x, y); }
};
template <typename T>
struct Sub {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return WrappingSub(x, y); }
};
template <typename T>
struct Mul {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return WrappingMul(x, y); }
};
// x / y, truncating for integers; INT_MIN / -1 wraps instead of trapping.
// (Integer kernels refuse y == 0 before they run: DividesByY.)
template <typename T>
struct Div {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (y == T(-1)) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x));
    }
    return x / y;
  }
};
// x / y, or 0 where y is 0 (TF's DivNoNan).
template <typename T>
struct DivNoNan {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return y == T(0) ? T(0) : x / y; }
};
// x % y with the sign of x (C's %, fmod; TF's Mod and TruncateMod).
// INT_MIN % -1 is 0 instead of trapping.
template <typename T>
struct Mod {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) return T(0);
      }
      return x % y;
    } else {
      return std::fmod(x, y);
    }
  }
};
// x - floor(x / y) * y, with the sign of y (Python's %; TF's FloorMod).
template <typename T>
struct FloorMod {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    const T r = Mod<T>()(x, y);
    if constexpr (std::is_unsigned_v<T>) {
      return r;
    } else {
      return r != T(0) && ((r < T(0)) != (y < T(0))) ? r + y : r;
    }
  }
};
// floor(x / y); Python's // for integers.
template <typename T>
struct FloorDiv {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      const T q = Div<T>()(x, y);
      if constexpr (std::is_signed_v<T>) {
        // Mod: INT_MIN % -1 is undefined in C++ (found by UBSan).
        if ((Mod<T>()(x, y) != 0) && ((x < 0) != (y < 0))) return q - 1;
      }
      return q;
    } else {
      return std::floor(x / y);
    }
  }
};
// x / y rounded toward zero: Div for integers, trunc(x / y) for floating
// point (TF's TruncateDiv).
template <typename T>
struct TruncateDiv {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      return Div<T>()(x, y);
    } else {
      return std::trunc(x / y);
    }
  }
};
// A NaN in either input gives NaN (TF's scalar_max_op<T, T, PropagateNaN>).
template <typename T>
struct Maximum {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (y != y) return y;
    }
    return x < y ? y : x;  // x when x is NaN
  }
};
template <typename T>
struct Minimum {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (y != y) return y;
    }
    return y < x ? y : x;  // x when x is NaN
  }
};
template <typename T>
struct SquaredDifference {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    const T d = WrappingSub(x, y);
    return WrappingMul(d, d);
  }
};
// x^y; for integers by squaring (integer kernels refuse y < 0 first:
// NonNegativeIntY).
// The bitwise ops, as TF computes them: shift counts clamped to [0, bits
// - 1], the left shift done unsigned (no overflow), the right shift
// arithmetic for signed types.
template <typename T>
struct Invert {
  TW_HOST_DEVICE T operator()(const T& x) const { return static_cast<T>(~x); }
};
template <typename T>
struct BitwiseAnd {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return x & y; }
};
template <typename T>
struct BitwiseOr {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return x | y; }
};
template <typename T>
struct BitwiseXor {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return x ^ y; }
};
template <typename T>
TW_HOST_DEVICE T ClampShift(const T& y) {
  const T top = static_cast<T>(sizeof(T) * 8 - 1);
  return y < T(0) ? T(0) : (y > top ? top : y);
}
template <typename T>
struct LeftShift {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) << ClampShift(y)));
  }
};
template <typename T>
struct RightShift {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    return static_cast<T>(x >> ClampShift(y));
  }
};
template <typename T>
struct Atan2 {  // atan2(y, x): the angle of the point (x, y)
  TW_HOST_DEVICE T operator()(const T& y, const T& x) const { return std::atan2(y, x); }
};
// The "safe" products of TF's math_ops: 0 where x is 0 whatever y is (NaN
// and infinities too) for Xlogy, Xlog1py and Xdivy; 0 where y is 0 for
// MulNoNan.
template <typename T>
struct Xlogy {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    return x == T(0) ? T(0) : x * std::log(y);
  }
};
template <typename T>
struct Xlog1py {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    return x == T(0) ? T(0) : x * std::log1p(y);
  }
};
template <typename T>
struct Xdivy {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return x == T(0) ? T(0) : x / y; }
};
template <typename T>
struct MulNoNan {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const { return y == T(0) ? T(0) : x * y; }
};
template <typename T>
struct Pow {
  TW_HOST_DEVICE T operator()(const T& x, const T& y) const {
    if constexpr (std::is_integral_v<T>) {
      T result = 1, base = x;
      for (T e = y; e > 0; e >>= 1) {
        if (e & 1) result = WrappingMul(result, base);
        base = WrappingMul(base, base);
      }
      return result;
    } else {
      return std::pow(x, y);
    }
  }
};

// ---- Comparisons (bool results; NaN compares unequal to everything) ----

template <typename T>
struct LogicalAnd {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x && y; }
};
template <typename T>
struct LogicalOr {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x || y; }
};
template <typename T>
struct Equal {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x == y; }
};
template <typename T>
struct NotEqual {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x != y; }
};
template <typename T>
struct Less {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x < y; }
};
template <typename T>
struct LessEqual {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x <= y; }
};
template <typename T>
struct Greater {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x > y; }
};
template <typename T>
struct GreaterEqual {
  TW_HOST_DEVICE bool operator()(const T& x, const T& y) const { return x >= y; }
};

// ---- Gradients of unary ops ----

template <typename T>
struct ReluGrad {  // (g, features): g * (features > 0), as TF: inf * 0 is NaN
  TW_HOST_DEVICE T operator()(const T& g, const T& f) const { return g * T(f > T(0) ? 1 : 0); }
};
template <typename T>
struct Relu6Grad {  // (g, features): g * (0 < features < 6), as TF
  TW_HOST_DEVICE T operator()(const T& g, const T& f) const {
    return g * T(f > T(0) && f < T(6) ? 1 : 0);
  }
};
template <typename T>
struct EluGrad {  // (g, Elu's output f): d/dx (e^x - 1) = e^x = f + 1
  TW_HOST_DEVICE T operator()(const T& g, const T& f) const {
    return f < T(0) ? g * (f + T(1)) : g;
  }
};
template <typename T>
struct SoftplusGrad {  // (g, features): g * sigmoid(features)
  TW_HOST_DEVICE T operator()(const T& g, const T& f) const { return g / (T(1) + std::exp(-f)); }
};
template <typename T>
struct SoftsignGrad {  // (g, features): g / (1 + |features|)^2
  TW_HOST_DEVICE T operator()(const T& g, const T& f) const {
    const T d = T(1) + (f < T(0) ? -f : f);
    return g / (d * d);
  }
};
template <typename T>
struct SeluGrad {  // (g, Selu's output y): g * (y + scale * alpha) where y < 0, else g * scale
  TW_HOST_DEVICE T operator()(const T& g, const T& y) const {
    return y < T(0) ? g * (y + T(kSeluScale * kSeluAlpha)) : g * T(kSeluScale);
  }
};
template <typename T>
struct TanhGrad {  // (y, dy): dy * (1 - y^2)
  TW_HOST_DEVICE T operator()(const T& y, const T& dy) const { return dy * (T(1) - y * y); }
};
template <typename T>
struct SigmoidGrad {  // (y, dy): dy * y * (1 - y)
  TW_HOST_DEVICE T operator()(const T& y, const T& dy) const { return dy * y * (T(1) - y); }
};
template <typename T>
struct SqrtGrad {  // (y, dy): dy / (2 y); 0 where dy is 0 (also at y = 0), as TF
  TW_HOST_DEVICE T operator()(const T& y, const T& dy) const {
    return dy == T(0) ? T(0) : dy * T(0.5) / y;
  }
};
template <typename T>
struct RsqrtGrad {  // (y, dy): -dy y^3 / 2
  TW_HOST_DEVICE T operator()(const T& y, const T& dy) const { return dy * T(-0.5) * y * y * y; }
};
template <typename T>
struct ReciprocalGrad {  // (y, dy): -dy y^2
  TW_HOST_DEVICE T operator()(const T& y, const T& dy) const { return -dy * y * y; }
};

// Markers for the checks integer kernels run before these functors:
// division by zero and negative exponents are errors, as in TF.
template <typename F>
struct DividesByY : std::false_type {};
template <typename T>
struct DividesByY<Div<T>> : std::true_type {};
template <typename T>
struct DividesByY<FloorDiv<T>> : std::true_type {};
template <typename T>
struct DividesByY<TruncateDiv<T>> : std::true_type {};
template <typename T>
struct DividesByY<Mod<T>> : std::true_type {};
template <typename T>
struct DividesByY<FloorMod<T>> : std::true_type {};
template <typename F>
struct NonNegativeIntY : std::false_type {};
template <typename T>
struct NonNegativeIntY<Pow<T>> : std::true_type {};

}  // namespace functor
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CWISE_FUNCTORS_H_
