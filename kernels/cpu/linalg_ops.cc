// Dense linear algebra over the last two dimensions of batches of matrices,
// on Eigen's decompositions, with TensorFlow's semantics (linalg_ops):
// MatrixInverse and MatrixSolve (partial-pivoting LU; a zero pivot is
// "not invertible"), MatrixDeterminant and LogMatrixDeterminant (from the
// same LU: sign and log |det|, TF's route to the determinant),
// MatrixTriangularSolve (the lower or upper triangle only), and Cholesky
// (the lower factor of the lower triangle; NaNs for a matrix that is not
// positive definite, as TF's CPU kernel gives), with TF 1's CholeskyGrad.
// `adjoint` solves with the (conjugate) transpose. Cross, the cross product
// of 3-vectors, is here too; the matrix functions are in
// matrix_function_ops.cc. Matrices are row-major Eigen maps of the tensors'
// buffers; the batch is sharded over the intra-op pool.
#include <cmath>
#include <limits>
#include <vector>

#include "Eigen/Cholesky"
#include "Eigen/Dense"
#include "Eigen/LU"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/linalg_util.h"

namespace towerflow {
namespace {

using linalg::CheckSolveShapes;
using linalg::ConstMap;
using linalg::ForEachMatrix;
using linalg::Invertible;
using linalg::Matrix;
using linalg::MutableMap;
using linalg::Square;
using linalg::SquareMatrices;

template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("adjoint", &adjoint_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int64_t n = sq.n;
    return ForEachMatrix(ctx, sq.batch, n * n * n, [&](int64_t i) -> absl::Status {
      const ConstMap<T> a(in.data<T>() + i * n * n, n, n);
      MutableMap<T> inv(out->data<T>() + i * n * n, n, n);
      const Eigen::PartialPivLU<Matrix<T>> lu = adjoint_
                                                    ? Eigen::PartialPivLU<Matrix<T>>(a.adjoint())
                                                    : Eigen::PartialPivLU<Matrix<T>>(a);
      if (!Invertible(lu)) return absl::InvalidArgumentError("Input is not invertible.");
      inv = lu.inverse();
      return absl::OkStatus();
    });
  }

 private:
  bool adjoint_ = false;
};

// sign(det) and log |det| of one matrix from its LU factors.
template <typename T>
void SignAndLogAbsDet(const ConstMap<T>& a, T* sign, T* log_abs) {
  if (a.rows() == 0) {
    *sign = T(1);
    *log_abs = T(0);
    return;
  }
  const Eigen::PartialPivLU<Matrix<T>> lu(a);
  T s = static_cast<T>(lu.permutationP().determinant());
  T sum = T(0);
  for (int64_t k = 0; k < a.rows(); ++k) {
    const T d = lu.matrixLU()(k, k);
    if (d == T(0)) {
      *sign = T(0);
      *log_abs = -std::numeric_limits<T>::infinity();
      return;
    }
    if (d < T(0)) s = -s;
    sum += std::log(std::abs(d));
  }
  *sign = s;
  *log_abs = sum;
}

// MatrixDeterminant (kLog false) and LogMatrixDeterminant (true).
template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(in, "Input tensor 0"));
    const std::vector<int64_t> dims(in.shape().dim_sizes().begin(),
                                    in.shape().dim_sizes().end() - 2);
    TW_ASSIGN_OR_RETURN(Tensor * first, ctx->allocate_output(0, TensorShape(dims)));
    Tensor* second = nullptr;
    if constexpr (kLog) {
      TW_ASSIGN_OR_RETURN(second, ctx->allocate_output(1, TensorShape(dims)));
    }
    const int64_t n = sq.n, count = first->NumElements();
    return ForEachMatrix(ctx, count, n * n * n, [&](int64_t i) -> absl::Status {
      T sign, log_abs;
      SignAndLogAbsDet<T>(ConstMap<T>(in.data<T>() + i * n * n, n, n), &sign, &log_abs);
      if constexpr (kLog) {
        first->data<T>()[i] = sign;
        second->data<T>()[i] = log_abs;
      } else {
        first->data<T>()[i] = sign * std::exp(log_abs);
      }
      return absl::OkStatus();
    });
  }
};

// MatrixSolve (kTriangular false) and MatrixTriangularSolve (true).
template <typename T, bool kTriangular>
class SolveOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if constexpr (kTriangular) TW_RETURN_IF_ERROR(c.GetAttr("lower", &lower_));
    return c.GetAttr("adjoint", &adjoint_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& matrix = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(matrix, "Input matrix"));
    TW_RETURN_IF_ERROR(CheckSolveShapes(matrix, rhs));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, rhs.shape()));
    const int64_t n = sq.n, k = rhs.dim_size(rhs.dims() - 1);
    if (out->NumElements() == 0) return absl::OkStatus();
    return ForEachMatrix(ctx, sq.batch, n * n * (n + k), [&](int64_t i) -> absl::Status {
      const ConstMap<T> a(matrix.data<T>() + i * n * n, n, n);
      const ConstMap<T> b(rhs.data<T>() + i * n * k, n, k);
      MutableMap<T> x(out->data<T>() + i * n * k, n, k);
      if constexpr (kTriangular) {
        // Only the named triangle is read; the adjoint of a lower
        // triangle is upper.
        if (lower_ && !adjoint_) {
          x = a.template triangularView<Eigen::Lower>().solve(b);
        } else if (lower_) {
          x = a.template triangularView<Eigen::Lower>().adjoint().solve(b);
        } else if (!adjoint_) {
          x = a.template triangularView<Eigen::Upper>().solve(b);
        } else {
          x = a.template triangularView<Eigen::Upper>().adjoint().solve(b);
        }
      } else {
        const Eigen::PartialPivLU<Matrix<T>> lu = adjoint_
                                                      ? Eigen::PartialPivLU<Matrix<T>>(a.adjoint())
                                                      : Eigen::PartialPivLU<Matrix<T>>(a);
        if (!Invertible(lu)) return absl::InvalidArgumentError("Input matrix is not invertible.");
        x = lu.solve(b);
      }
      return absl::OkStatus();
    });
  }

 private:
  bool lower_ = true, adjoint_ = false;
};

template <typename T>
class CholeskyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const int64_t n = sq.n;
    return ForEachMatrix(ctx, sq.batch, n * n * n, [&](int64_t i) -> absl::Status {
      const ConstMap<T> a(in.data<T>() + i * n * n, n, n);
      MutableMap<T> l(out->data<T>() + i * n * n, n, n);
      const Eigen::LLT<Matrix<T>, Eigen::Lower> llt(a);
      if (llt.info() != Eigen::Success) {
        l.setConstant(std::numeric_limits<T>::quiet_NaN());
      } else {
        l = llt.matrixL();
      }
      return absl::OkStatus();
    });
  }
};

// CholeskyGrad(l, grad): the gradient of a = l l^T given that of l (only
// its lower triangle read), symmetric, as TF's op: with P = phi(l^T tril(g))
// (the lower triangle, its diagonal halved) and S = l^-T P l^-1, da =
// (S + S^T) / 2.
template <typename T>
class CholeskyGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& l = ctx->input(0);
    const Tensor& g = ctx->input(1);
    for (int i = 0; i < 2; ++i) {
      if (ctx->input(i).dims() < 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input tensor ", i, " must have rank >= 2, got ", ctx->input(i).dims()));
      }
    }
    if (l.dims() != g.dims()) {
      return absl::InvalidArgumentError("All input tensors must have the same rank.");
    }
    if (l.shape() != g.shape()) {
      return absl::InvalidArgumentError("Inputs (L and grad) must have the same shape.");
    }
    if (l.dim_size(l.dims() - 1) != l.dim_size(l.dims() - 2)) {
      return absl::InvalidArgumentError("Inputs must be a square matrices.");
    }
    TW_ASSIGN_OR_RETURN(Square sq, SquareMatrices(l, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, l.shape()));
    const int64_t n = sq.n;
    return ForEachMatrix(ctx, sq.batch, 4 * n * n * n, [&](int64_t i) -> absl::Status {
      const ConstMap<T> factor(l.data<T>() + i * n * n, n, n);
      const ConstMap<T> grad(g.data<T>() + i * n * n, n, n);
      const auto lower = factor.template triangularView<Eigen::Lower>();
      Matrix<T> p = factor.transpose() * Matrix<T>(grad.template triangularView<Eigen::Lower>());
      p.diagonal() *= T(0.5);
      p = Matrix<T>(p.template triangularView<Eigen::Lower>());
      // S = l^-T P l^-1: solve l^T X = P, then S l = X.
      lower.transpose().solveInPlace(p);
      Matrix<T> s = p;
      lower.template solveInPlace<Eigen::OnTheRight>(s);
      MutableMap<T> da(out->data<T>() + i * n * n, n, n);
      da = (s + s.transpose()) * T(0.5);
      return absl::OkStatus();
    });
  }
};

// Cross(a, b): the cross products of the 3-vectors along the last axis.
template <typename T>
class CrossOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.shape() != b.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Both inputs must be of same shape: ", a.shape().DebugString(), " vs. ",
                       b.shape().DebugString()));
    }
    if (a.dims() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input must be at least 1D", a.shape().DebugString()));
    }
    if (a.dim_size(a.dims() - 1) != 3) {
      return absl::FailedPreconditionError(
          "Cross-products are only defined for 3-element vectors.");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, a.shape()));
    const int64_t rows = a.NumElements() / 3;
    if (rows == 0) return absl::OkStatus();
    const auto u = a.shaped<T, 2>({rows, 3});
    const auto v = b.shaped<T, 2>({rows, 3});
    auto w = out->shaped<T, 2>({rows, 3});
    const auto& d = ctx->eigen_cpu_device();
    for (int k = 0; k < 3; ++k) {
      const int i = (k + 1) % 3, j = (k + 2) % 3;
      w.chip(k, 1).device(d) = u.chip(i, 1) * v.chip(j, 1) - u.chip(j, 1) * v.chip(i, 1);
    }
    return absl::OkStatus();
  }
};

template <typename T>
using DetOp = DeterminantOp<T, false>;
template <typename T>
using LogDetOp = DeterminantOp<T, true>;
template <typename T>
using MatrixSolveOp = SolveOp<T, false>;
template <typename T>
using TriangularSolveOp = SolveOp<T, true>;

TW_REGISTER_KERNELS(linalg_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<MatrixInverseOp, float, double>(cpu("MatrixInverse"), "T");
  RegisterTypedKernels<DetOp, float, double>(cpu("MatrixDeterminant"), "T");
  RegisterTypedKernels<LogDetOp, float, double>(cpu("LogMatrixDeterminant"), "T");
  RegisterTypedKernels<MatrixSolveOp, float, double>(cpu("MatrixSolve"), "T");
  RegisterTypedKernels<TriangularSolveOp, float, double>(cpu("MatrixTriangularSolve"), "T");
  RegisterTypedKernels<CholeskyOp, float, double>(cpu("Cholesky"), "T");
  RegisterTypedKernels<CholeskyGradOp, float, double>(cpu("CholeskyGrad"), "T");
  RegisterTypedKernels<CrossOp, float, double, int32_t, int64_t>(cpu("Cross"), "T");
}

}  // namespace
}  // namespace towerflow
