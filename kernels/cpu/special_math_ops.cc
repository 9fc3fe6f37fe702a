// The special functions, on Eigen's implementations (unsupported/Eigen/
// SpecialFunctions), as TensorFlow's CPU kernels compute them: Lgamma,
// Digamma, Igamma, Igammac, IgammaGradA and RandomGammaGrad, Zeta,
// Polygamma, Betainc, Erfinv and Ndtri, the modified Bessel functions
// BesselI0(e), BesselI1(e), BesselK0(e) and BesselK1(e), and the Bessel
// functions BesselJ0, BesselJ1, BesselY0 and BesselY1. Outside their
// domains they give NaN or +-Inf as TF does (Lgamma at the poles is +Inf,
// Igamma of a <= 0 NaN, Erfinv(1) +Inf).
//
// The unary and binary ones are cwise UnaryOp / BinaryOp (NumPy
// broadcasting); Betainc takes a, b and x of one shape, scalars broadcast.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_ops.h"
#include "unsupported/Eigen/SpecialFunctions"

namespace towerflow {
namespace cwise {
namespace special {

namespace nx = Eigen::numext;

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
