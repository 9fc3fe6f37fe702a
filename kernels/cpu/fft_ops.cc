// The FFT kernels (ops/spectral_ops.cc) on Eigen's tensor FFT (radix 2,
// Bluestein's algorithm for other lengths), over the innermost 1, 2 or 3
// dimensions of a batch, with TF's shapes and messages:
// - FFT / IFFT (and 2D, 3D): complex to complex; the inverse is scaled by
//   1 / N, as TF's.
// - RFFT: real to complex; each transformed dimension of the input must be
//   at least fft_length long (longer ones are cropped, as TF's kernel: the
//   Python wrapper pads) and the innermost output has fft_length / 2 + 1
//   bins.
// - IRFFT: the inverse of RFFT. The outer dimensions are transformed as
//   complex ones; along the innermost, the fft_length / 2 + 1 bins given
//   are extended by Hermitian symmetry and only the real part of the
//   inverse is kept, so the imaginary parts of the 0 (and fft_length / 2)
//   bins are ignored, as TF's (DUCC's c2r) ignores them.
// An empty input gives zeros in whatever output its fft_length makes.
#include <array>
#include <complex>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// [batch, d_1, ..., d_R] of a shape whose innermost R dims are transformed.
template <int R>
std::array<Eigen::DenseIndex, R + 1> BatchDims(const TensorShape& shape) {
  std::array<Eigen::DenseIndex, R + 1> dims;
  dims[0] = 1;
  for (int i = 0; i < shape.dims() - R; ++i) dims[0] *= shape.dim_size(i);
  for (int i = 0; i < R; ++i) dims[i + 1] = shape.dim_size(shape.dims() - R + i);
  return dims;
}

// (Eigen's FFT takes non-const scalars only; inputs are only read.)
template <typename T, int N>
TensorMap<T, N> Map(const Tensor& t, const std::array<Eigen::DenseIndex, N>& dims) {
  return TensorMap<T, N>(static_cast<T*>(t.raw_data()), dims);
}

template <int R>
class FftOp : public OpKernel {
 public:
  FftOp(bool forward, bool real) : forward_(forward), real_(real) {}

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() < R) {
      return absl::InvalidArgumentError(absl::StrCat("Input must have rank of at least ", R,
                                                     " but got: ", in.shape().DebugString()));
    }
    TensorShape out_shape = in.shape();
    std::array<int64_t, R> lengths;
    for (int i = 0; i < R; ++i) lengths[i] = in.dim_size(in.dims() - R + i);
    if (real_) TW_RETURN_IF_ERROR(RealLengths(in.shape(), ctx->input(1), &lengths, &out_shape));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (in.NumElements() == 0) {
      std::memset(out->raw_data(), 0, out->TotalBytes());
      return absl::OkStatus();
    }
    const DataType complex_type = real_ && forward_ ? out->dtype() : in.dtype();
    if (complex_type == DT_COMPLEX64) return Run<float>(ctx, in, lengths, out);
    return Run<double>(ctx, in, lengths, out);
  }

 private:
  using Axes = std::array<int, R>;

  // The transform lengths of a real FFT from its fft_length input, checked
  // against the input's dimensions as TF checks them; the output's shape.
  absl::Status RealLengths(const TensorShape& in, const Tensor& fft_length,
                           std::array<int64_t, R>* lengths, TensorShape* out) const {
    std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
    if (fft_length.dims() != 1 || fft_length.dim_size(0) != R) {
      return absl::InvalidArgumentError(absl::StrCat("fft_length must have shape [", R, "]"));
    }
    for (int i = 0; i < R; ++i) {
      const int64_t f = fft_length.data<int32_t>()[i];
      if (f < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("fft_length[", i, "] must >= 0, but got: ", f));
      }
      const bool innermost = i == R - 1;
      const int64_t least = !forward_ && innermost ? f / 2 + 1 : f;
      const int index = in.dims() - R + i;
      if (in.dim_size(index) != 0 && in.dim_size(index) < least) {
        return absl::InvalidArgumentError(absl::StrCat("Input dimension ", index,
                                                       " must have length of at least ", least,
                                                       " but got: ", in.dim_size(index)));
      }
      (*lengths)[i] = f;
      dims[index] = forward_ && innermost && f != 0 ? f / 2 + 1 : f;
    }
    TW_ASSIGN_OR_RETURN(*out, TensorShape::FromDims(dims));
    return absl::OkStatus();
  }

  static Axes AllAxes() {
    Axes axes;
    for (int i = 0; i < R; ++i) axes[i] = i + 1;
    return axes;
  }

  template <typename Real>
  absl::Status Run(KernelContext* ctx, const Tensor& in, const std::array<int64_t, R>& lengths,
                   Tensor* out) const {
    using C = std::complex<Real>;
    const auto& d = ctx->eigen_cpu_device();
    const auto in_dims = BatchDims<R>(in.shape());
    const auto out_dims = BatchDims<R>(out->shape());
    if (!real_) {
      auto x = Map<C, R + 1>(in, in_dims);
      auto y = Map<C, R + 1>(*out, out_dims);
      if (forward_) {
        y.device(d) = x.template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(AllAxes());
      } else {
        y.device(d) = x.template fft<Eigen::BothParts, Eigen::FFT_REVERSE>(AllAxes());
      }
      return absl::OkStatus();
    }
    // The input cropped to the transform's lengths (the innermost to its
    // bins, for the inverse).
    std::array<Eigen::DenseIndex, R + 1> start{}, full = in_dims;
    for (int i = 0; i < R; ++i) full[i + 1] = lengths[i];
    if (forward_) {
      TW_ASSIGN_OR_RETURN(Tensor spectrum, ctx->allocate_temp(out->dtype(), TensorShape(full)));
      auto s = Map<C, R + 1>(spectrum, full);
      s.device(d) = Map<Real, R + 1>(in, in_dims)
                        .slice(start, full)
                        .template fft<Eigen::BothParts, Eigen::FFT_FORWARD>(AllAxes());
      Map<C, R + 1>(*out, out_dims).device(d) = s.slice(start, out_dims);
      return absl::OkStatus();
    }
    std::array<Eigen::DenseIndex, R + 1> half = full;
    const int64_t n = lengths[R - 1], bins = n / 2 + 1;
    half[R] = bins;
    TW_ASSIGN_OR_RETURN(Tensor outer, ctx->allocate_temp(in.dtype(), TensorShape(half)));
    auto h = Map<C, R + 1>(outer, half);
    if constexpr (R > 1) {
      std::array<int, R - 1> axes;
      for (int i = 0; i < R - 1; ++i) axes[i] = i + 1;
      h.device(d) = Map<C, R + 1>(in, in_dims)
                        .slice(start, half)
                        .template fft<Eigen::BothParts, Eigen::FFT_REVERSE>(axes);
    } else {
      h.device(d) = Map<C, R + 1>(in, in_dims).slice(start, half);
    }
    // Each row's bins extended by Hermitian symmetry to n.
    TW_ASSIGN_OR_RETURN(Tensor whole, ctx->allocate_temp(in.dtype(), TensorShape(full)));
    const C* src = outer.data<C>();
    C* dst = whole.data<C>();
    const int64_t rows = whole.NumElements() / n;
    ctx->intra_op_pool()->ParallelFor(rows, 4 * n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const C* b = src + r * bins;
        C* row = dst + r * n;
        for (int64_t k = 0; k < n; ++k) row[k] = k < bins ? b[k] : std::conj(b[n - k]);
      }
    });
    const std::array<int, 1> inner = {R};
    Map<Real, R + 1>(*out, out_dims).device(d) =
        Map<C, R + 1>(whole, full).template fft<Eigen::RealPart, Eigen::FFT_REVERSE>(inner);
    return absl::OkStatus();
  }

  const bool forward_, real_;
};

template <int R>
KernelFactory Factory(bool forward, bool real) {
  return [forward, real] { return std::make_unique<FftOp<R>>(forward, real); };
}

template <int R>
void RegisterRank(const char* fft, const char* ifft, const char* rfft, const char* irfft) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const DataType c : {DT_COMPLEX64, DT_COMPLEX128}) {
    const DataType r = c == DT_COMPLEX64 ? DT_FLOAT : DT_DOUBLE;
    RegisterKernel(cpu(fft).TypeConstraint("Tcomplex", c), Factory<R>(true, false));
    RegisterKernel(cpu(ifft).TypeConstraint("Tcomplex", c), Factory<R>(false, false));
    for (const char* op : {rfft, irfft}) {
      RegisterKernel(cpu(op).TypeConstraint("Tcomplex", c).TypeConstraint("Treal", r),
                     Factory<R>(op == rfft, true));
    }
  }
}

}  // namespace

TW_REGISTER_KERNELS(fft_ops) {
  RegisterRank<1>("FFT", "IFFT", "RFFT", "IRFFT");
  RegisterRank<2>("FFT2D", "IFFT2D", "RFFT2D", "IRFFT2D");
  RegisterRank<3>("FFT3D", "IFFT3D", "RFFT3D", "IRFFT3D");
}

}  // namespace towerflow
