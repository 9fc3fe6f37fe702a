// Gradients of the complex-number ops and the FFTs, as TF's math_grad.py and
// spectral_grad.py write them. A complex tensor's gradient is TF's: for a
// real loss L of z = x + iy, dL/dx + i dL/dy, so Complex's gradient splits
// it back into the real and imaginary parts. TF defines none for RFFT3D and
// IRFFT3D.
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/spectral_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

DataType RealOf(DataType complex) { return complex == DT_COMPLEX128 ? DT_DOUBLE : DT_FLOAT; }
DataType ComplexOf(DataType real) { return real == DT_DOUBLE ? DT_COMPLEX128 : DT_COMPLEX64; }

Output MakeComplex(const Scope& scope, const Output& re, const Output& im) {
  return ops::Complex(scope, re, im, ops::Complex::Tout(ComplexOf(re.type())));
}

// z = Complex(x, y): dx = Real(g), dy = Imag(g), summed to their shapes.
TW_GRAD_FN(ComplexGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), y = In(op, 1);
  const Output gx = ops::Real(scope, g, ops::Real::Tout(x.type()));
  const Output gy = ops::Imag(scope, g, ops::Imag::Tout(x.type()));
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, gx, x, y));
  grad_outputs->push_back(grad_util::SumToShapeOf(scope, gy, y, x));
  return scope.status();
}
TW_GRAD_FN(RealGrad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(MakeComplex(scope, g, ops::ZerosLike(scope, g)));
  return scope.status();
}
TW_GRAD_FN(ImagGrad) {
  const Output g = grad_inputs[0];
  grad_outputs->push_back(MakeComplex(scope, ops::ZerosLike(scope, g), g));
  return scope.status();
}
// angle(z) = atan2(y, x): dz = -g / (y + ix).
TW_GRAD_FN(AngleGrad) {
  const Output g = grad_inputs[0], z = In(op, 0);
  const DataType real = RealOf(z.type());
  const Output swapped = MakeComplex(scope, ops::Imag(scope, z, ops::Imag::Tout(real)),
                                     ops::Real(scope, z, ops::Real::Tout(real)));
  grad_outputs->push_back(
      ops::Neg(scope, ops::Mul(scope, MakeComplex(scope, g, ops::ZerosLike(scope, g)),
                               ops::Reciprocal(scope, swapped))));
  return scope.status();
}
// |z|: dz = g z / |z|, 0 where z is 0.
TW_GRAD_FN(ComplexAbsGrad) {
  const Output g = grad_inputs[0], z = In(op, 0), r = op.output(0);
  grad_outputs->push_back(
      ops::DivNoNan(scope, ops::Mul(scope, MakeComplex(scope, g, ops::ZerosLike(scope, g)), z),
                    MakeComplex(scope, r, ops::ZerosLike(scope, r))));
  return scope.status();
}
TW_GRAD_FN(ConjGrad) {
  grad_outputs->push_back(ops::Conj(scope, grad_inputs[0]));
  return scope.status();
}

// The element count of t's innermost `rank` dimensions, as a `dtype` scalar.
Output FftSize(const Scope& scope, const Output& t, int rank, DataType dtype) {
  const Output inner = ops::StridedSlice(scope, ops::Shape(scope, t), {-rank}, {0}, {1},
                                         ops::StridedSlice::EndMask(1));
  return ops::Cast(scope, ops::Prod(scope, inner, 0), dtype);
}

Output Fft(const Scope& scope, const Output& x, int rank, bool inverse) {
  switch (rank) {
    case 1:
      return inverse ? Output(ops::IFFT(scope, x)) : Output(ops::FFT(scope, x));
    case 2:
      return inverse ? Output(ops::IFFT2D(scope, x)) : Output(ops::FFT2D(scope, x));
    default:
      return inverse ? Output(ops::IFFT3D(scope, x)) : Output(ops::FFT3D(scope, x));
  }
}

// y = FFT(x): dx = IFFT(g) * N; y = IFFT(x): dx = FFT(g) / N.
template <int kRank, bool kInverse>
TW_GRAD_FN(FftGrad) {
  const Output g = grad_inputs[0];
  const Output n = FftSize(scope, g, kRank, g.type());
  const Output back = Fft(scope, g, kRank, !kInverse);
  grad_outputs->push_back(kInverse ? ops::Mul(scope, back, ops::Reciprocal(scope, n))
                                   : ops::Mul(scope, back, n));
  return scope.status();
}

// t[..., -1] of an int32 vector, as a scalar.
Output Last(const Scope& scope, const Output& t) {
  return ops::StridedSlice(scope, t, {-1}, {0}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
}

// [1, -1, 1, -1, ...] of length n, complex.
Output AlternatingSigns(const Scope& scope, const Output& n, DataType complex) {
  const Output k = ops::Range(scope, 0, n, 1);
  return ops::Cast(scope, ops::Sub(scope, 1, ops::Mul(scope, 2, ops::FloorMod(scope, k, 2))),
                   complex);
}

// t[..., begin:end] of the innermost dimension (end 0: to the end).
Output Inner(const Scope& scope, const Output& t, int begin, int end) {
  auto attrs = ops::StridedSlice::EllipsisMask(1);
  if (end == 0) attrs = attrs.EndMask(2);
  return ops::StridedSlice(scope, t, {0, begin}, {0, end}, {1, 1}, attrs);
}

// The DFT along the second innermost dimension of t[..., L, 1] (TF's
// matmul by the DFT matrix, written as the FFT it is).
Output DftOfColumn(const Scope& scope, const Output& t) {
  return ops::ExpandDims(
      scope, ops::FFT(scope, ops::Squeeze(scope, t, ops::Squeeze::SqueezeDims({-1}))), -1);
}

// y = RFFT(x) (rank 1 or 2): dx = (IRFFT(g) * N + Re(extra)) / 2, where the
// extra terms restore the bins Hermitian symmetry left out (TF's
// _rfft_grad_helper).
template <int kRank>
TW_GRAD_FN(RfftGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), fft_length = In(op, 1);
  const DataType complex = g.type(), real = RealOf(complex);
  const Output shape = ops::Shape(scope, x);
  const Output is_even = ops::Cast(
      scope, ops::Sub(scope, 1, ops::FloorMod(scope, Last(scope, fft_length), 2)), complex);
  const Output y0 = Inner(scope, g, 0, 1), ym = Inner(scope, g, -1, 0);
  const Output inner = Last(scope, shape);
  Output extra;
  if constexpr (kRank == 1) {
    extra = ops::Add(
        scope, y0,
        ops::Mul(scope, ops::Mul(scope, is_even, ym), AlternatingSigns(scope, inner, complex)));
  } else {
    const Output y0_term = DftOfColumn(scope, ops::Conj(scope, y0));
    const Output ym_term = ops::Mul(scope, DftOfColumn(scope, ops::Conj(scope, ym)),
                                    AlternatingSigns(scope, inner, complex));
    extra = ops::Add(scope, y0_term, ops::Mul(scope, is_even, ym_term));
  }
  const Output n = FftSize(scope, x, kRank, real);
  const Output inverse =
      kRank == 1 ? Output(ops::IRFFT(scope, g, fft_length, ops::IRFFT::Treal(real)))
                 : Output(ops::IRFFT2D(scope, g, fft_length, ops::IRFFT2D::Treal(real)));
  const Output sum =
      ops::Add(scope, ops::Mul(scope, inverse, n), ops::Real(scope, extra, ops::Real::Tout(real)));
  grad_outputs->push_back(ops::Mul(scope, sum, ops::Cast(scope, 0.5, real)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// y = IRFFT(x) (rank 1 or 2): dx = RFFT(g) / N, the bins that stand for two
// (all but the first, and the last when fft_length is even) doubled.
template <int kRank>
TW_GRAD_FN(IrfftGrad) {
  const Output g = grad_inputs[0], x = In(op, 0), fft_length = In(op, 1);
  const DataType real = g.type(), complex = ComplexOf(real);
  const Output is_odd = ops::FloorMod(scope, Last(scope, fft_length), 2);
  const Output bins = Last(scope, ops::Shape(scope, x));
  const auto ones = [&](const Input& count) {
    return ops::Fill(scope, ops::Reshape(scope, count, {1}), ops::Cast(scope, 1, real));
  };
  const Output doubled = ops::Mul(scope, ones(ops::Add(scope, ops::Sub(scope, bins, 2), is_odd)),
                                  ops::Cast(scope, 2, real));
  const Output mask =
      ops::ConcatV2(scope, {ones(Input(1)), doubled, ones(ops::Sub(scope, 1, is_odd))}, 0);
  const Output rsize = ops::Reciprocal(scope, FftSize(scope, g, kRank, real));
  const Output forward =
      kRank == 1 ? Output(ops::RFFT(scope, g, fft_length, ops::RFFT::Tcomplex(complex)))
                 : Output(ops::RFFT2D(scope, g, fft_length, ops::RFFT2D::Tcomplex(complex)));
  grad_outputs->push_back(
      ops::Mul(scope, forward, ops::Cast(scope, ops::Mul(scope, rsize, mask), complex)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

}  // namespace

TW_REGISTER_GRADIENT("Complex", ComplexGrad);
TW_REGISTER_GRADIENT("Real", RealGrad);
TW_REGISTER_GRADIENT("Imag", ImagGrad);
TW_REGISTER_GRADIENT("Angle", AngleGrad);
TW_REGISTER_GRADIENT("ComplexAbs", ComplexAbsGrad);
TW_REGISTER_GRADIENT("Conj", ConjGrad);
TW_REGISTER_GRADIENT("FFT", (FftGrad<1, false>));
TW_REGISTER_GRADIENT("IFFT", (FftGrad<1, true>));
TW_REGISTER_GRADIENT("FFT2D", (FftGrad<2, false>));
TW_REGISTER_GRADIENT("IFFT2D", (FftGrad<2, true>));
TW_REGISTER_GRADIENT("FFT3D", (FftGrad<3, false>));
TW_REGISTER_GRADIENT("IFFT3D", (FftGrad<3, true>));
TW_REGISTER_GRADIENT("RFFT", RfftGrad<1>);
TW_REGISTER_GRADIENT("RFFT2D", RfftGrad<2>);
TW_REGISTER_GRADIENT("IRFFT", IrfftGrad<1>);
TW_REGISTER_GRADIENT("IRFFT2D", IrfftGrad<2>);
TW_REGISTER_NO_GRADIENT("RFFT3D");
TW_REGISTER_NO_GRADIENT("IRFFT3D");

}  // namespace towerflow
