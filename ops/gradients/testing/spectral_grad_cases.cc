// The finite-difference cases of the complex-number and FFT gradients
// (spectral_grad.cc, and the complex forms of math_grad.cc's): see
// gradient_functions_test.cc. Each builds complex tensors from real inputs
// with Complex and ends in real parts, imaginary parts or magnitudes, so
// the real losses the checker differentiates pass through every complex
// gradient on the way, in TF's convention. In double: the FFTs' sums leave
// float central differences too little precision.
#include "ops/gen/math_ops.h"
#include "ops/gen/spectral_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {
namespace {

// (An output a failed build left invalid counts as double: the scope holds
// the error, which the checker reports.)
bool IsDouble(const Output& t) {
  return !t.valid() || t.type() == DT_DOUBLE || t.type() == DT_COMPLEX128;
}

Output C(const Scope& s, const Output& re, const Output& im) {
  return ops::Complex(s, re, im, ops::Complex::Tout(IsDouble(re) ? DT_COMPLEX128 : DT_COMPLEX64));
}
Output Re(const Scope& s, const Output& z) {
  return ops::Real(s, z, ops::Real::Tout(IsDouble(z) ? DT_DOUBLE : DT_FLOAT));
}
Output Im(const Scope& s, const Output& z) {
  return ops::Imag(s, z, ops::Imag::Tout(IsDouble(z) ? DT_DOUBLE : DT_FLOAT));
}
// Both parts of z, as the losses' two outputs.
Outs Parts(const Scope& s, const Output& z) { return {Re(s, z), Im(s, z)}; }

// A case on z = Complex(x, y) with x, y of `shape` (y of `y_shape`).
GradCase OnComplex(const std::string& name, std::function<Outs(const Scope&, Output)> f,
                   InputSpec x = S({2, 3}), InputSpec y = S({2, 3})) {
  GradCase c{
      name, {x, y}, [f](const Scope& s, const Outs& in) { return f(s, C(s, in[0], in[1])); }};
  return Double(c);
}

// Two complex tensors from four real inputs.
GradCase OnTwoComplex(const std::string& name, std::function<Outs(const Scope&, Output, Output)> f,
                      InputSpec b = S({2, 3})) {
  GradCase c{name, {S({2, 3}), S({2, 3}), b, b}, [f](const Scope& s, const Outs& in) {
               return f(s, C(s, in[0], in[1]), C(s, in[2], in[3]));
             }};
  return Double(c);
}

GradCase OnReal(const std::string& name, std::function<Outs(const Scope&, Output)> f, InputSpec x) {
  return Double(GradCase{name, {x}, [f](const Scope& s, const Outs& in) { return f(s, in[0]); }});
}

}  // namespace

std::vector<GradCase> SpectralCases() {
  const auto unary = [](const std::string& name, std::function<Output(const Scope&, Output)> f,
                        InputSpec x = S({2, 3})) {
    return OnComplex(
        name, [f](const Scope& s, Output z) { return Parts(s, f(s, z)); }, x, x);
  };
  std::vector<GradCase> cases = {
      OnComplex("Complex", [](const Scope& s, Output z) { return Parts(s, z); }),
      OnComplex(
          "Complex/broadcast", [](const Scope& s, Output z) { return Parts(s, z); }, S({2, 3}),
          S({3})),
      OnComplex("Real", [](const Scope& s, Output z) { return Outs{Re(s, ops::Square(s, z))}; }),
      OnComplex("Imag", [](const Scope& s, Output z) { return Outs{Im(s, ops::Square(s, z))}; }),
      OnComplex(
          "Angle",
          [](const Scope& s, Output z) {
            return Outs{ops::Angle(s, z, ops::Angle::Tout(DT_DOUBLE))};
          },
          NonZero({2, 3}), NonZero({2, 3})),
      OnComplex(
          "ComplexAbs",
          [](const Scope& s, Output z) {
            return Outs{ops::ComplexAbs(s, z, ops::ComplexAbs::Tout(DT_DOUBLE))};
          },
          NonZero({2, 3}), NonZero({2, 3})),
      unary("Conj", [](const Scope& s, Output z) { return ops::Square(s, ops::Conj(s, z)); }),
      unary("Square/complex", [](const Scope& s, Output z) { return ops::Square(s, z); }),
      unary("Exp/complex", [](const Scope& s, Output z) { return ops::Exp(s, z); }),
      unary(
          "Log/complex", [](const Scope& s, Output z) { return ops::Log(s, z); },
          S({2, 3}, 0.2, 1)),
      unary("Sin/complex", [](const Scope& s, Output z) { return ops::Sin(s, z); }),
      unary("Cos/complex", [](const Scope& s, Output z) { return ops::Cos(s, z); }),
      OnTwoComplex("Mul/complex",
                   [](const Scope& s, Output a, Output b) { return Parts(s, ops::Mul(s, a, b)); }),
      OnTwoComplex(
          "Mul/complex_broadcast",
          [](const Scope& s, Output a, Output b) { return Parts(s, ops::Mul(s, a, b)); }, S({3})),
      OnTwoComplex(
          "Div/complex",
          [](const Scope& s, Output a, Output b) { return Parts(s, ops::Div(s, a, b)); },
          NonZero({2, 3})),
      unary(
          "FFT", [](const Scope& s, Output z) { return ops::FFT(s, z); }, S({2, 5})),
      unary(
          "IFFT", [](const Scope& s, Output z) { return ops::IFFT(s, z); }, S({2, 4})),
      unary(
          "FFT2D", [](const Scope& s, Output z) { return ops::FFT2D(s, z); }, S({2, 3, 4})),
      unary(
          "IFFT2D", [](const Scope& s, Output z) { return ops::IFFT2D(s, z); }, S({3, 4})),
      unary(
          "FFT3D", [](const Scope& s, Output z) { return ops::FFT3D(s, z); }, S({2, 2, 3})),
      unary(
          "IFFT3D", [](const Scope& s, Output z) { return ops::IFFT3D(s, z); }, S({2, 3, 2})),
      OnReal(
          "RFFT",
          [](const Scope& s, Output x) {
            return Parts(s, ops::RFFT(s, x, {6}, ops::RFFT::Tcomplex(DT_COMPLEX128)));
          },
          S({2, 6})),
      OnReal(
          "RFFT/odd",
          [](const Scope& s, Output x) {
            return Parts(s, ops::RFFT(s, x, {5}, ops::RFFT::Tcomplex(DT_COMPLEX128)));
          },
          S({2, 5})),
      OnReal(
          "RFFT2D",
          [](const Scope& s, Output x) {
            return Parts(s, ops::RFFT2D(s, x, {3, 4}, ops::RFFT2D::Tcomplex(DT_COMPLEX128)));
          },
          S({2, 3, 4})),
      OnReal(
          "RFFT2D/odd",
          [](const Scope& s, Output x) {
            return Parts(s, ops::RFFT2D(s, x, {4, 5}, ops::RFFT2D::Tcomplex(DT_COMPLEX128)));
          },
          S({4, 5})),
      OnComplex(
          "IRFFT",
          [](const Scope& s, Output z) {
            return Outs{ops::IRFFT(s, z, {6}, ops::IRFFT::Treal(DT_DOUBLE))};
          },
          S({2, 4}), S({2, 4})),
      OnComplex(
          "IRFFT/odd",
          [](const Scope& s, Output z) {
            return Outs{ops::IRFFT(s, z, {7}, ops::IRFFT::Treal(DT_DOUBLE))};
          },
          S({2, 4}), S({2, 4})),
      OnComplex(
          "IRFFT2D",
          [](const Scope& s, Output z) {
            return Outs{ops::IRFFT2D(s, z, {3, 6}, ops::IRFFT2D::Treal(DT_DOUBLE))};
          },
          S({2, 3, 4}), S({2, 3, 4})),
  };
  // The nonlinear ones with a smaller step: central differences at 1e-3
  // are off by delta^2 / 6 times the third derivative.
  for (GradCase& c : cases) {
    const std::string op = c.name.substr(0, c.name.find('/'));
    for (const char* nonlinear : {"Angle", "ComplexAbs", "Exp", "Log", "Sin", "Cos", "Div"}) {
      if (op == nonlinear) {
        c.delta = 1e-6;
        c.max_error = 1e-7;
      }
    }
  }
  return cases;
}

}  // namespace grad_cases
}  // namespace towerflow
