// The matrix functions of batches of square matrices, on Eigen's
// MatrixFunctions (their own file: its templates take most of a minute to
// compile, which runs beside linalg_ops.cc): MatrixSquareRoot
// (tf.linalg.sqrtm) and MatrixLogarithm (tf.linalg.logm, complex), as TF's
// kernels compute them.
#include <complex>
#include <cstdint>

#include "Eigen/Dense"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/linalg_util.h"
#include "unsupported/Eigen/MatrixFunctions"

namespace towerflow {
namespace {

using linalg::ConstMap;
using linalg::ForEachMatrix;
using linalg::Matrix;
using linalg::MutableMap;
using linalg::Square;
using linalg::SquareMatrices;

// MatrixLogarithm: the principal logarithm of each complex matrix,
// Eigen's (inverse scaling and squaring on the Schur form), as TF's kernel.
template <typename T>
class MatrixLogarithmOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int64_t n = sq.n;
    return ForEachMatrix(ctx, sq.batch, 30 * n * n * n, [&](int64_t i) -> absl::Status {
      const ConstMap<T> a(in.data<T>() + i * n * n, n, n);
      MutableMap<T> log(out->data<T>() + i * n * n, n, n);
      log = Matrix<T>(a).log();
      return absl::OkStatus();
    });
  }
};

// The principal square root of each matrix: Eigen's (a real Schur
// decomposition, then the square root of the quasi-triangular factor), as
// TF's kernel computes it.
template <typename T>
class MatrixSquareRootOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int64_t n = sq.n;
    if (n == 0) return absl::OkStatus();
    return ForEachMatrix(ctx, sq.batch, 30 * n * n * n, [&](int64_t i) -> absl::Status {
      const Matrix<T> a = ConstMap<T>(in.data<T>() + i * n * n, n, n);
      MutableMap<T>(out->data<T>() + i * n * n, n, n) = a.sqrt();
      return absl::OkStatus();
    });
  }
};

TW_REGISTER_KERNELS(matrix_function_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<MatrixSquareRootOp, float, double>(cpu("MatrixSquareRoot"), "T");
  RegisterTypedKernels<MatrixLogarithmOp, complex64, complex128>(cpu("MatrixLogarithm"), "T");
}

}  // namespace
}  // namespace towerflow
