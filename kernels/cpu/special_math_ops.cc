// The special functions, on Eigen's implementations (unsupported/Eigen/
// SpecialFunctions), as TensorFlow's CPU kernels compute them: Lgamma,
// Digamma, Igamma, Igammac, IgammaGradA and RandomGammaGrad, Zeta,
// Polygamma, Betainc, Erfinv and Ndtri, the modified Bessel functions
// BesselI0(e), BesselI1(e), BesselK0(e) and BesselK1(e), and the Bessel
// functions BesselJ0, BesselJ1, BesselY0 and BesselY1; and, on our own
// series and continued fractions, Dawsn, Expint, FresnelCos, FresnelSin
// and Spence. Outside their
// domains they give NaN or +-Inf as TF does (Lgamma at the poles is +Inf,
// Igamma of a <= 0 NaN, Erfinv(1) +Inf).
//
// The unary and binary ones are cwise UnaryOp / BinaryOp (NumPy
// broadcasting); Betainc takes a, b and x of one shape, scalars broadcast.
#include <cmath>
#include <complex>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_ops.h"
#include "unsupported/Eigen/SpecialFunctions"

namespace towerflow {
namespace cwise {
namespace special {

namespace nx = Eigen::numext;

// tf.math.special's Dawsn, Expint, FresnelCos, FresnelSin and Spence, which
// Eigen lacks, in double (float is computed in double and rounded): within
// a few units in the last place of TF's (Cephes') values, with Cephes'
// limits -- Dawsn past 3.25e8 is 1/(2|x|) for either sign and Fresnel past
// 36974 is +-1/2 as TF's, Expint of x < 0 and of +Inf and Spence of x < 0
// and of +Inf are NaN.
namespace {

// Dawson's integral F(x) = exp(-x^2) * integral_0^x exp(t^2) dt.
double Dawson(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  const double sign = x < 0 ? -1.0 : 1.0;
  if (ax > 3.25e8) return 0.5 / ax;  // TF's (Cephes') asymptote, its sign dropped
  if (ax < 0.2) {
    // Taylor: sum (-1)^n 2^n x^(2n+1) / (2n+1)!!.
    const double x2 = x * x;
    double term = x, sum = x;
    for (int n = 0; n < 30; ++n) {
      term *= -2.0 * x2 / (2 * n + 3);
      sum += term;
      if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
    }
    return sum;
  }
  if (ax >= 20) {
    // Asymptotic: 1/(2x) sum (2k-1)!! / (2x^2)^k.
    const double r = 1.0 / (2 * ax * ax);
    double term = 1, sum = 1;
    for (int k = 1; k < 12; ++k) {
      term *= (2 * k - 1) * r;
      sum += term;
    }
    return sign * sum / (2 * ax);
  }
  // Rybicki: F(x) = lim_{h->0} 1/sqrt(pi) sum_{n odd} exp(-(x - n h)^2) / n,
  // with x = n0 h + d, n0 even, |d| <= h; h = 0.2 leaves exp(-(pi/2h)^2).
  const double h = 0.2;
  const double n0 = 2 * std::nearbyint(ax / (2 * h));
  const double d = ax - n0 * h;
  double sum = 0;
  for (int k = 1; k <= 71; k += 2) {
    sum += std::exp(-(d - k * h) * (d - k * h)) / (n0 + k) +
           std::exp(-(d + k * h) * (d + k * h)) / (n0 - k);
  }
  return sign * sum / std::sqrt(M_PI);
}

// The exponential integral Ei(x).
double ExpIntegralEi(double x) {
  if (std::isnan(x) || x < 0 || std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (x <= 40) {
    // gamma + ln x + sum x^k / (k k!).
    double term = 1, sum = 0;
    for (int k = 1; k < 200; ++k) {
      term *= x / k;
      const double t = term / k;
      sum += t;
      if (t < 1e-17 * sum) break;
    }
    return 0.57721566490153286061 + std::log(x) + sum;
  }
  // e^x / x sum k! / x^k, to the smallest term.
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double next = term * k / x;
    if (next > term) break;
    term = next;
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return std::exp(x) / x * sum;
}

// Li2(z) for -1 <= z <= 0.5: the series in u = -ln(1 - z) with Bernoulli
// numbers, Li2 = u - u^2/4 + sum_k B_2k u^(2k+1) / (2k+1)!.
double DilogSmall(double z) {
  static const double kB[] = {
      1.0 / 36,
      -1.0 / 3600,
      1.0 / 211680,
      -1.0 / 10886400,
      1.0 / 526901760,
      -691.0 / (2730.0 * 6227020800.0),
      7.0 / (6.0 * 1307674368000.0),
      -3617.0 / (510.0 * 355687428096000.0),
      43867.0 / (798.0 * 121645100408832000.0),
      -174611.0 / (330.0 * 51090942171709440000.0),
  };
  const double u = -std::log1p(-z);
  const double u2 = u * u;
  double p = u;  // u^(2k+1)
  double sum = 0;
  for (double b : kB) {
    p *= u2;
    sum += b * p;
  }
  return u - u2 / 4 + sum;
}

// Spence's function as TF's: integral_1^x log t / (1 - t) dt = Li2(1 - x).
double SpenceFn(double x) {
  if (std::isnan(x) || x < 0 || std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  const double pi2_6 = M_PI * M_PI / 6;
  if (x == 0) return pi2_6;
  if (x < 0.5) {  // z = 1 - x in (0.5, 1): Li2(z) = pi^2/6 - ln z ln(1 - z) - Li2(1 - z)
    return pi2_6 - std::log1p(-x) * std::log(x) - DilogSmall(x);
  }
  if (x <= 2) return DilogSmall(1 - x);
  // z = 1 - x < -1: Li2(z) = -pi^2/6 - ln^2(-z) / 2 - Li2(1/z).
  const double l = std::log(x - 1);
  return -pi2_6 - 0.5 * l * l - DilogSmall(1 / (1 - x));
}

// The Fresnel integrals C(x) + i S(x) of cos and sin(pi t^2 / 2).
std::complex<double> FresnelIntegrals(double x) {
  if (std::isnan(x)) return {x, x};
  const double ax = std::fabs(x);
  const double sign = x < 0 ? -1.0 : 1.0;
  if (ax > 36974.0) return {sign * 0.5, sign * 0.5};  // TF's (Cephes') limit
  if (ax < 1.5) {
    // The power series in t = pi x^2 / 2: x t^k / (k! (2k + 1)) go to C and
    // S in turn, with signs + + - -.
    const double t = M_PI * ax * ax / 2;
    double term = ax;  // x t^k / k!
    double c = 0, s = 0;
    for (int k = 0; k < 100; ++k) {
      const double v = (k % 4 < 2 ? 1 : -1) * term / (2 * k + 1);
      (k % 2 == 0 ? c : s) += v;
      term *= t / (k + 1);
      if (k > 2 && term < 1e-17 * std::fabs(c)) break;
    }
    return {sign * c, sign * s};
  }
  // C + iS = (1 + i)/2 erf(z) with z = sqrt(pi)/2 (1 - i) x, erfc(z) from
  // its even continued fraction 1 / (2z^2 + 1 - 1*2 / (2z^2 + 5 - 3*4 / ...))
  // (modified Lentz), 2z^2 = -i pi x^2.
  using Complex = std::complex<double>;
  const double pix2 = M_PI * ax * ax;
  Complex b(1.0, -pix2);
  Complex c = 1.0 / 1e-300;
  Complex d = 1.0 / b;
  Complex h = d;
  for (int n = 1; n < 2000; n += 2) {
    const double a = -static_cast<double>(n) * (n + 1);
    b += 4.0;
    d = 1.0 / (a * d + b);
    c = b + a / c;
    const Complex step = c * d;
    h *= step;
    if (std::fabs(step.real() - 1) + std::fabs(step.imag()) < 1e-16) break;
  }
  // erfc(z) = 2z / sqrt(pi) e^(-z^2) h = (1 - i) x e^(i pi x^2 / 2) h.
  const Complex erfc = Complex(ax, -ax) * Complex(std::cos(0.5 * pix2), std::sin(0.5 * pix2)) * h;
  return sign * (Complex(0.5, 0.5) * (1.0 - erfc));
}

}  // namespace

#define TW_SPECIAL_UNARY(Name, expr)                  \
  template <typename T>                               \
  struct Name {                                       \
    T operator()(const T& x) const { return (expr); } \
  };
TW_SPECIAL_UNARY(Lgamma, nx::lgamma(x))
TW_SPECIAL_UNARY(Digamma, nx::digamma(x))
// NaN outside [0, 1] (Eigen 3.4 gives an infinity there; TF's Eigen NaN).
TW_SPECIAL_UNARY(Ndtri, x<T(0) || x> T(1) ? std::numeric_limits<T>::quiet_NaN() : nx::ndtri(x))
// erfinv(x) = ndtri((x + 1) / 2) / sqrt(2), TF's definition.
TW_SPECIAL_UNARY(Erfinv, Ndtri<T>()((x + T(1)) / T(2)) / T(M_SQRT2))
TW_SPECIAL_UNARY(BesselI0, nx::bessel_i0(x))
TW_SPECIAL_UNARY(BesselI1, nx::bessel_i1(x))
TW_SPECIAL_UNARY(BesselI0e, nx::bessel_i0e(x))
TW_SPECIAL_UNARY(BesselI1e, nx::bessel_i1e(x))
TW_SPECIAL_UNARY(BesselJ0, nx::bessel_j0(x))
TW_SPECIAL_UNARY(BesselJ1, nx::bessel_j1(x))
TW_SPECIAL_UNARY(BesselY0, nx::bessel_y0(x))
TW_SPECIAL_UNARY(BesselY1, nx::bessel_y1(x))
TW_SPECIAL_UNARY(BesselK0, nx::bessel_k0(x))
TW_SPECIAL_UNARY(BesselK1, nx::bessel_k1(x))
TW_SPECIAL_UNARY(BesselK0e, nx::bessel_k0e(x))
TW_SPECIAL_UNARY(BesselK1e, nx::bessel_k1e(x))
TW_SPECIAL_UNARY(Dawsn, static_cast<T>(Dawson(static_cast<double>(x))))
TW_SPECIAL_UNARY(Expint, static_cast<T>(ExpIntegralEi(static_cast<double>(x))))
TW_SPECIAL_UNARY(FresnelCos, static_cast<T>(FresnelIntegrals(static_cast<double>(x)).real()))
TW_SPECIAL_UNARY(FresnelSin, static_cast<T>(FresnelIntegrals(static_cast<double>(x)).imag()))
TW_SPECIAL_UNARY(Spence, static_cast<T>(SpenceFn(static_cast<double>(x))))
#undef TW_SPECIAL_UNARY

#define TW_SPECIAL_BINARY(Name, expr)                             \
  template <typename T>                                           \
  struct Name {                                                   \
    T operator()(const T& a, const T& x) const { return (expr); } \
  };
TW_SPECIAL_BINARY(Igamma, nx::igamma(a, x))
TW_SPECIAL_BINARY(Igammac, nx::igammac(a, x))
TW_SPECIAL_BINARY(IgammaGradA, nx::igamma_der_a(a, x))
// d sample / d alpha of a Gamma(alpha, 1) sample (tf.random.gamma's
// gradient): -(dP/dalpha) / (dP/dsample) of its CDF P = Igamma.
TW_SPECIAL_BINARY(RandomGammaGrad, nx::gamma_sample_der_alpha(a, x))
TW_SPECIAL_BINARY(Zeta, nx::zeta(a, x))  // zeta(x, q)
TW_SPECIAL_BINARY(Polygamma, nx::polygamma(a, x))
#undef TW_SPECIAL_BINARY

}  // namespace special
}  // namespace cwise
}  // namespace towerflow

// Eigen's cost model: each is a series or continued fraction of tens to
// hundreds of operations, so the pool shards even short tensors.
#define TW_SPECIAL_COST(Name)                                                  \
  template <typename T>                                                        \
  struct Eigen::internal::functor_traits<towerflow::cwise::special::Name<T>> { \
    enum { Cost = 200, PacketAccess = false };                                 \
  };
TW_SPECIAL_COST(Lgamma)
TW_SPECIAL_COST(Digamma)
TW_SPECIAL_COST(Ndtri)
TW_SPECIAL_COST(Erfinv)
TW_SPECIAL_COST(BesselI0)
TW_SPECIAL_COST(BesselI1)
TW_SPECIAL_COST(BesselI0e)
TW_SPECIAL_COST(BesselI1e)
TW_SPECIAL_COST(BesselJ0)
TW_SPECIAL_COST(BesselJ1)
TW_SPECIAL_COST(BesselY0)
TW_SPECIAL_COST(BesselY1)
TW_SPECIAL_COST(BesselK0)
TW_SPECIAL_COST(BesselK1)
TW_SPECIAL_COST(BesselK0e)
TW_SPECIAL_COST(BesselK1e)
TW_SPECIAL_COST(Dawsn)
TW_SPECIAL_COST(Expint)
TW_SPECIAL_COST(FresnelCos)
TW_SPECIAL_COST(FresnelSin)
TW_SPECIAL_COST(Spence)
TW_SPECIAL_COST(Igamma)
TW_SPECIAL_COST(Igammac)
TW_SPECIAL_COST(IgammaGradA)
TW_SPECIAL_COST(RandomGammaGrad)
TW_SPECIAL_COST(Zeta)
TW_SPECIAL_COST(Polygamma)
#undef TW_SPECIAL_COST

namespace towerflow {
namespace cwise {
namespace {

// Betainc(a, b, x): inputs of one shape, or scalars broadcast to it.
template <typename T>
class BetaincOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const char* names[] = {"a", "b", "x"};
    int shaped = -1;  // the first non-scalar input
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() == 0) continue;
      if (shaped < 0) {
        shaped = i;
      } else if (t.shape() != ctx->input(shaped).shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shapes of ", names[shaped], " and ", names[i], " are inconsistent: ",
            ctx->input(shaped).shape().DebugString(), " vs. ", t.shape().DebugString()));
      }
    }
    const TensorShape shape = shaped < 0 ? TensorShape() : ctx->input(shaped).shape();
    TW_ASSIGN_OR_RETURN(Tensor * z, ctx->allocate_output(0, shape));
    const int64_t n = shape.num_elements();
    if (n == 0) return absl::OkStatus();
    const T* in[3];
    int64_t step[3];
    for (int i = 0; i < 3; ++i) {
      in[i] = ctx->input(i).data<T>();
      step[i] = ctx->input(i).dims() == 0 ? 0 : 1;
    }
    T* out = z->data<T>();
    ctx->intra_op_pool()->ParallelFor(n, 400, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) {
        out[j] = Eigen::numext::betainc(in[0][j * step[0]], in[1][j * step[1]], in[2][j * step[2]]);
      }
    });
    return absl::OkStatus();
  }
};

template <typename T>
using LgammaOp = UnaryOp<T, special::Lgamma<T>>;
template <typename T>
using DigammaOp = UnaryOp<T, special::Digamma<T>>;
template <typename T>
using NdtriOp = UnaryOp<T, special::Ndtri<T>>;
template <typename T>
using ErfinvOp = UnaryOp<T, special::Erfinv<T>>;
template <typename T>
using BesselI0Op = UnaryOp<T, special::BesselI0<T>>;
template <typename T>
using BesselI1Op = UnaryOp<T, special::BesselI1<T>>;
template <typename T>
using BesselI0eOp = UnaryOp<T, special::BesselI0e<T>>;
template <typename T>
using BesselI1eOp = UnaryOp<T, special::BesselI1e<T>>;
template <typename T>
using BesselJ0Op = UnaryOp<T, special::BesselJ0<T>>;
template <typename T>
using BesselJ1Op = UnaryOp<T, special::BesselJ1<T>>;
template <typename T>
using BesselY0Op = UnaryOp<T, special::BesselY0<T>>;
template <typename T>
using BesselY1Op = UnaryOp<T, special::BesselY1<T>>;
template <typename T>
using BesselK0Op = UnaryOp<T, special::BesselK0<T>>;
template <typename T>
using BesselK1Op = UnaryOp<T, special::BesselK1<T>>;
template <typename T>
using BesselK0eOp = UnaryOp<T, special::BesselK0e<T>>;
template <typename T>
using BesselK1eOp = UnaryOp<T, special::BesselK1e<T>>;
template <typename T>
using DawsnOp = UnaryOp<T, special::Dawsn<T>>;
template <typename T>
using ExpintOp = UnaryOp<T, special::Expint<T>>;
template <typename T>
using FresnelCosOp = UnaryOp<T, special::FresnelCos<T>>;
template <typename T>
using FresnelSinOp = UnaryOp<T, special::FresnelSin<T>>;
template <typename T>
using SpenceOp = UnaryOp<T, special::Spence<T>>;
template <typename T>
using IgammaOp = BinaryOp<T, T, special::Igamma<T>>;
template <typename T>
using IgammacOp = BinaryOp<T, T, special::Igammac<T>>;
template <typename T>
using IgammaGradAOp = BinaryOp<T, T, special::IgammaGradA<T>>;
template <typename T>
using RandomGammaGradOp = BinaryOp<T, T, special::RandomGammaGrad<T>>;
template <typename T>
using ZetaOp = BinaryOp<T, T, special::Zeta<T>>;
template <typename T>
using PolygammaOp = BinaryOp<T, T, special::Polygamma<T>>;

TW_REGISTER_KERNELS(special_math_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<LgammaOp, float, double>(cpu("Lgamma"), "T");
  RegisterTypedKernels<DigammaOp, float, double>(cpu("Digamma"), "T");
  RegisterTypedKernels<NdtriOp, float, double>(cpu("Ndtri"), "T");
  RegisterTypedKernels<ErfinvOp, float, double>(cpu("Erfinv"), "T");
  RegisterTypedKernels<BesselI0Op, float, double>(cpu("BesselI0"), "T");
  RegisterTypedKernels<BesselI1Op, float, double>(cpu("BesselI1"), "T");
  RegisterTypedKernels<BesselI0eOp, float, double>(cpu("BesselI0e"), "T");
  RegisterTypedKernels<BesselI1eOp, float, double>(cpu("BesselI1e"), "T");
  RegisterTypedKernels<BesselJ0Op, float, double>(cpu("BesselJ0"), "T");
  RegisterTypedKernels<BesselJ1Op, float, double>(cpu("BesselJ1"), "T");
  RegisterTypedKernels<BesselY0Op, float, double>(cpu("BesselY0"), "T");
  RegisterTypedKernels<BesselY1Op, float, double>(cpu("BesselY1"), "T");
  RegisterTypedKernels<BesselK0Op, float, double>(cpu("BesselK0"), "T");
  RegisterTypedKernels<BesselK1Op, float, double>(cpu("BesselK1"), "T");
  RegisterTypedKernels<BesselK0eOp, float, double>(cpu("BesselK0e"), "T");
  RegisterTypedKernels<BesselK1eOp, float, double>(cpu("BesselK1e"), "T");
  RegisterTypedKernels<DawsnOp, float, double>(cpu("Dawsn"), "T");
  RegisterTypedKernels<ExpintOp, float, double>(cpu("Expint"), "T");
  RegisterTypedKernels<FresnelCosOp, float, double>(cpu("FresnelCos"), "T");
  RegisterTypedKernels<FresnelSinOp, float, double>(cpu("FresnelSin"), "T");
  RegisterTypedKernels<SpenceOp, float, double>(cpu("Spence"), "T");
  RegisterTypedKernels<IgammaOp, float, double>(cpu("Igamma"), "T");
  RegisterTypedKernels<IgammacOp, float, double>(cpu("Igammac"), "T");
  RegisterTypedKernels<IgammaGradAOp, float, double>(cpu("IgammaGradA"), "T");
  RegisterTypedKernels<RandomGammaGradOp, float, double>(cpu("RandomGammaGrad"), "T");
  RegisterTypedKernels<ZetaOp, float, double>(cpu("Zeta"), "T");
  RegisterTypedKernels<PolygammaOp, float, double>(cpu("Polygamma"), "T");
  RegisterTypedKernels<BetaincOp, float, double>(cpu("Betainc"), "T");
}

}  // namespace
}  // namespace cwise
}  // namespace towerflow
