// Complex numbers and the FFTs: Complex, Real, Imag, Angle, ComplexAbs and
// Conj (kernels/cpu/complex_ops.cc); FFT, IFFT and their 2-D and 3-D forms,
// and the real FFTs RFFT, IRFFT (and 2-D, 3-D) over the innermost
// dimensions (kernels/cpu/fft_ops.cc), as tf.signal's.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::UnchangedShape;

TW_REGISTER_OP("Complex")
    .Input("real: T")
    .Input("imag: T")
    .Output("out: Tout")
    .Attr("T: {float, double} = DT_FLOAT")
    .Attr("Tout: {complex64, complex128} = DT_COMPLEX64")
    .Doc("real + i imag, broadcasting.")
    .SetShapeFn(shape_fns::BroadcastBinaryOpShape);

// A complex tensor's real-valued part, elementwise.
void RegisterComplexPart(const char* name, const char* in, const char* out, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input(absl::StrCat(in, ": T"))
                 .Output(absl::StrCat(out, ": Tout"))
                 .Attr("T: {complex64, complex128} = DT_COMPLEX64")
                 .Attr("Tout: {float, double} = DT_FLOAT")
                 .Doc(doc)
                 .SetShapeFn(UnchangedShape));
}

TW_REGISTER_OP("Conj")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {complex64, complex128, variant} = DT_COMPLEX64")
    .Doc("The complex conjugate, elementwise.")
    .SetShapeFn(UnchangedShape);

// The shape of a complex FFT over the innermost `rank` dimensions.
OpDefBuilder ComplexFft(const char* name, int rank, const char* doc) {
  return OpDefBuilder(name, __FILE__)
      .Input("input: Tcomplex")
      .Output("output: Tcomplex")
      .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")
      .Doc(doc)
      .SetShapeFn([rank](InferenceContext* c) {
        PartialTensorShape in;
        TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), rank, &in));
        c->set_output(0, in);
        return absl::OkStatus();
      });
}

// A real FFT (forward: real in, complex out of fft_length / 2 + 1 in the
// innermost dimension) or its inverse over the innermost `rank` dimensions.
OpDefBuilder RealFft(const char* name, int rank, bool forward, const char* doc) {
  return OpDefBuilder(name, __FILE__)
      .Input(forward ? "input: Treal" : "input: Tcomplex")
      .Input("fft_length: int32")
      .Output(forward ? "output: Tcomplex" : "output: Treal")
      .Attr("Treal: {float, double} = DT_FLOAT")
      .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")
      .Doc(doc)
      .SetShapeFn([rank, forward](InferenceContext* c) {
        PartialTensorShape in, length;
        TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), rank, &in));
        TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &length));
        int64_t n = length.dims() == 1 ? length.dim_size(0) : -1;
        if (n >= 0 && n != rank) {
          return absl::InvalidArgumentError(
              absl::StrCat("fft_length must have shape [", rank, "], got ", n));
        }
        if (in.dims() < 0) {
          c->set_output(0, in);
          return absl::OkStatus();
        }
        TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> lengths, c->ConstantIntInput(1));
        std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
        for (int i = 0; i < rank; ++i) {
          const int64_t d = dims.size() - rank + i;
          if (!lengths.has_value()) {
            dims[d] = -1;
            continue;
          }
          const int64_t f = (*lengths)[i];
          dims[d] = forward && i == rank - 1 && f != 0 ? f / 2 + 1 : f;
        }
        TW_ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
        c->set_output(0, out);
        return absl::OkStatus();
      });
}

// Registered from a function: families of ops share their builders.
[[maybe_unused]] const bool kRegistered = [] {
  RegisterComplexPart("Real", "input", "output", "The real part, elementwise.");
  RegisterComplexPart("Imag", "input", "output", "The imaginary part, elementwise.");
  RegisterComplexPart("Angle", "input", "output", "The argument atan2(imag, real), elementwise.");
  RegisterComplexPart("ComplexAbs", "x", "y", "The magnitude |x|, elementwise.");
  RegisterOp(ComplexFft("FFT", 1, "The DFT of the innermost dimension."));
  RegisterOp(ComplexFft("IFFT", 1, "The inverse DFT of the innermost dimension."));
  RegisterOp(ComplexFft("FFT2D", 2, "The DFT of the 2 innermost dimensions."));
  RegisterOp(ComplexFft("IFFT2D", 2, "The inverse DFT of the 2 innermost dimensions."));
  RegisterOp(ComplexFft("FFT3D", 3, "The DFT of the 3 innermost dimensions."));
  RegisterOp(ComplexFft("IFFT3D", 3, "The inverse DFT of the 3 innermost dimensions."));
  RegisterOp(RealFft("RFFT", 1, true, "The DFT of real signals: fft_length / 2 + 1 bins."));
  RegisterOp(RealFft("IRFFT", 1, false, "The real signals of fft_length samples."));
  RegisterOp(RealFft("RFFT2D", 2, true, "RFFT over the 2 innermost dimensions."));
  RegisterOp(RealFft("IRFFT2D", 2, false, "IRFFT over the 2 innermost dimensions."));
  RegisterOp(RealFft("RFFT3D", 3, true, "RFFT over the 3 innermost dimensions."));
  RegisterOp(RealFft("IRFFT3D", 3, false, "IRFFT over the 3 innermost dimensions."));
  return true;
}();

}  // namespace
}  // namespace towerflow
