// Matrix decompositions over batches of matrices (the last two dimensions),
// on the Eigen decompositions TF's kernels use, so the factors (and their
// signs) are TF's: Qr (Householder), Svd (divide and conquer), the
// eigen-decomposition of self-adjoint matrices (the lower triangle is
// read), Lu (partial pivoting) and MatrixSolveLs (the normal equations by
// Cholesky when fast, else a complete orthogonal decomposition).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "Eigen/Cholesky"
#include "Eigen/Dense"
#include "Eigen/Eigenvalues"
#include "Eigen/QR"
#include "Eigen/SVD"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/linalg_util.h"

namespace towerflow {
namespace {

using linalg::ConstMap;
using linalg::ForEachMatrix;
using linalg::Matrix;
using linalg::MutableMap;
using linalg::Square;
using linalg::SquareMatrices;

// [..., m, n]: the batch's dimensions, m, n and the number of matrices.
struct Batch {
  std::vector<int64_t> dims;
  int64_t m = 0, n = 0, count = 0;
  TensorShape With(std::initializer_list<int64_t> inner) const {
    std::vector<int64_t> d = dims;
    d.insert(d.end(), inner);
    return TensorShape(d);
  }
};
absl::StatusOr<Batch> Matrices(const Tensor& t) {
  if (t.dims() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input tensor 0 must have rank >= 2, got ", t.dims()));
  }
  Batch b;
  b.dims.assign(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end() - 2);
  b.m = t.dim_size(t.dims() - 2);
  b.n = t.dim_size(t.dims() - 1);
  b.count = 1;
  for (int64_t d : b.dims) b.count *= d;
  return b;
}

// Qr(input) = (q, r), input = q r: q [m, p] with orthonormal columns and r
// [p, n] upper triangular, p = min(m, n); full_matrices: q [m, m], r [m, n].
template <typename T>
class QrOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("full_matrices", &full_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const Batch b, Matrices(in));
    const int64_t m = b.m, n = b.n, p = std::min(m, n), cols = full_ ? m : p;
    TW_ASSIGN_OR_RETURN(Tensor * q, ctx->allocate_output(0, b.With({m, cols})));
    TW_ASSIGN_OR_RETURN(Tensor * r, ctx->allocate_output(1, b.With({cols, n})));
    if (q->NumElements() == 0 && r->NumElements() == 0) return absl::OkStatus();
    return ForEachMatrix(ctx, b.count, m * n * p, [&](int64_t i) -> absl::Status {
      const Eigen::HouseholderQR<Matrix<T>> qr(ConstMap<T>(in.data<T>() + i * m * n, m, n));
      MutableMap<T>(q->data<T>() + i * m * cols, m, cols) =
          qr.householderQ() * Matrix<T>::Identity(m, cols);
      MutableMap<T> rr(r->data<T>() + i * cols * n, cols, n);
      rr = qr.matrixQR().topRows(cols).template triangularView<Eigen::Upper>();
      return absl::OkStatus();
    });
  }

 private:
  bool full_ = false;
};

// Svd(input) = (s, u, v), input = u diag(s) v^T, s descending; without
// compute_uv, u and v are empty placeholders (as TF's, one value per
// matrix of the batch).
template <typename T>
class SvdOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("compute_uv", &compute_uv_));
    return c.GetAttr("full_matrices", &full_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const Batch b, Matrices(in));
    const int64_t m = b.m, n = b.n, p = std::min(m, n);
    const int64_t u_cols = full_ ? m : p, v_cols = full_ ? n : p;
    TW_ASSIGN_OR_RETURN(Tensor * s, ctx->allocate_output(0, b.With({p})));
    Tensor *u, *v;
    if (compute_uv_) {
      TW_ASSIGN_OR_RETURN(u, ctx->allocate_output(1, b.With({m, u_cols})));
      TW_ASSIGN_OR_RETURN(v, ctx->allocate_output(2, b.With({n, v_cols})));
    } else {
      TW_ASSIGN_OR_RETURN(u, ctx->allocate_output(1, b.With({})));
      TW_ASSIGN_OR_RETURN(v, ctx->allocate_output(2, b.With({})));
      std::fill_n(u->data<T>(), u->NumElements(), T(0));
      std::fill_n(v->data<T>(), v->NumElements(), T(0));
    }
    if (m == 0 || n == 0) {
      if (compute_uv_) {
        // The empty factor's partner is the identity, as TF's.
        for (Tensor* t : {u, v}) {
          const int64_t rows = t == u ? m : n, cols = t == u ? u_cols : v_cols;
          for (int64_t i = 0; i < b.count; ++i) {
            MutableMap<T>(t->data<T>() + i * rows * cols, rows, cols) =
                Matrix<T>::Identity(rows, cols);
          }
        }
      }
      return absl::OkStatus();
    }
    const int options = !compute_uv_ ? 0
                        : full_      ? Eigen::ComputeFullU | Eigen::ComputeFullV
                                     : Eigen::ComputeThinU | Eigen::ComputeThinV;
    return ForEachMatrix(ctx, b.count, m * n * p, [&](int64_t i) -> absl::Status {
      const Eigen::BDCSVD<Matrix<T>> svd(ConstMap<T>(in.data<T>() + i * m * n, m, n), options);
      Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(s->data<T>() + i * p, p) =
          svd.singularValues();
      if (compute_uv_) {
        MutableMap<T>(u->data<T>() + i * m * u_cols, m, u_cols) = svd.matrixU();
        MutableMap<T>(v->data<T>() + i * n * v_cols, n, v_cols) = svd.matrixV();
      }
      return absl::OkStatus();
    });
  }

 private:
  bool compute_uv_ = true, full_ = false;
};

// SelfAdjointEigV2(input) = (e, v): ascending eigenvalues and the
// eigenvectors as columns, from the lower triangle.
template <typename T>
class SelfAdjointEigOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("compute_v", &compute_v_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(const Batch b, Matrices(in));
    const int64_t n = sq.n;
    TW_ASSIGN_OR_RETURN(Tensor * e, ctx->allocate_output(0, b.With({n})));
    TW_ASSIGN_OR_RETURN(Tensor * v,
                        ctx->allocate_output(1, compute_v_ ? b.With({n, n}) : b.With({})));
    if (!compute_v_) std::fill_n(v->data<T>(), v->NumElements(), T(0));
    if (n == 0) return absl::OkStatus();
    return ForEachMatrix(ctx, b.count, n * n * n, [&](int64_t i) -> absl::Status {
      const Eigen::SelfAdjointEigenSolver<Matrix<T>> eig(
          Matrix<T>(ConstMap<T>(in.data<T>() + i * n * n, n, n)),
          compute_v_ ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
      if (eig.info() != Eigen::Success) {
        return absl::InvalidArgumentError(
            "Self-adjoint eigen decomposition was not successful. The input might not be valid.");
      }
      Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(e->data<T>() + i * n, n) = eig.eigenvalues();
      if (compute_v_) MutableMap<T>(v->data<T>() + i * n * n, n, n) = eig.eigenvectors();
      return absl::OkStatus();
    });
  }

 private:
  bool compute_v_ = true;
};

// Lu(input) = (lu, p): L (unit lower, below the diagonal) and U in one
// matrix, and p with input[p] = L U (row i of L U is row p[i] of input).
template <typename T, typename Index>
class LuOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const Square sq, SquareMatrices(in, "Input tensor 0"));
    TW_ASSIGN_OR_RETURN(const Batch b, Matrices(in));
    const int64_t n = sq.n;
    TW_ASSIGN_OR_RETURN(Tensor * lu, ctx->allocate_output(0, in.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * perm, ctx->allocate_output(1, b.With({n})));
    if (n == 0) return absl::OkStatus();
    return ForEachMatrix(ctx, b.count, n * n * n, [&](int64_t i) -> absl::Status {
      const Eigen::PartialPivLU<Matrix<T>> f(ConstMap<T>(in.data<T>() + i * n * n, n, n));
      if (!linalg::Invertible(f)) {
        return absl::InvalidArgumentError("Input is not invertible.");
      }
      MutableMap<T>(lu->data<T>() + i * n * n, n, n) = f.matrixLU();
      const auto& rows = f.permutationP().indices();  // row k of input goes to rows(k)
      Index* p = perm->data<Index>() + i * n;
      for (int64_t k = 0; k < n; ++k) p[rows(k)] = static_cast<Index>(k);
      return absl::OkStatus();
    });
  }
};

// MatrixSolveLs(matrix [m, n], rhs [m, k], l2_regularizer) = x [n, k]
// minimising ||matrix x - rhs||^2 + l2 ||x||^2 (the minimum-norm solution
// when m < n).
template <typename T>
class MatrixSolveLsOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("fast", &fast_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& matrix = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    const Tensor& l2 = ctx->input(2);
    TW_ASSIGN_OR_RETURN(const Batch b, Matrices(matrix));
    TW_RETURN_IF_ERROR(linalg::CheckSolveShapes(matrix, rhs, /*least_squares=*/true));
    if (l2.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("l2_regularizer must be scalar, got shape ", l2.shape().DebugString()));
    }
    const double lambda = *l2.data<double>();
    if (!(lambda >= 0)) return absl::InvalidArgumentError("l2_regularizer must be >= 0.");
    const int64_t m = b.m, n = b.n, k = rhs.dim_size(rhs.dims() - 1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, b.With({n, k})));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (m == 0) {
      std::fill_n(out->data<T>(), out->NumElements(), T(0));
      return absl::OkStatus();
    }
    return ForEachMatrix(
        ctx, b.count, std::max(m, n) * std::min(m, n) * (std::min(m, n) + k),
        [&](int64_t i) -> absl::Status {
          const ConstMap<T> a(matrix.data<T>() + i * m * n, m, n);
          const ConstMap<T> y(rhs.data<T>() + i * m * k, m, k);
          MutableMap<T> x(out->data<T>() + i * n * k, n, k);
          if (!fast_) {
            x = a.completeOrthogonalDecomposition().solve(y);
            return absl::OkStatus();
          }
          // The normal equations (A^T A + l2 I) x = A^T y, or, with fewer rows
          // than columns, x = A^T z for (A A^T + l2 I) z = y.
          const int64_t g = std::min(m, n);
          Matrix<T> gramian(g, g);
          if (m >= n) {
            gramian.template triangularView<Eigen::Lower>() = a.adjoint() * a;
          } else {
            gramian.template triangularView<Eigen::Lower>() = a * a.adjoint();
          }
          if (lambda > 0) gramian.diagonal().array() += static_cast<T>(lambda);
          const Eigen::LLT<Matrix<T>, Eigen::Lower> llt(gramian);
          if (llt.info() != Eigen::Success) {
            return absl::InvalidArgumentError(absl::StrCat(
                "Input matrix was rank deficient or ill-conditioned. Try setting fast=False or "
                "provide ",
                m >= n ? "a larger l2_regularizer > 0." : "an l2_regularizer > 0."));
          }
          if (m >= n) {
            x = llt.solve(a.adjoint() * y);
          } else {
            x = a.adjoint() * llt.solve(y);
          }
          return absl::OkStatus();
        });
  }

 private:
  bool fast_ = true;
};

template <typename T>
void RegisterLu() {
  const auto def = [] { return KernelDefBuilder("Lu").Device(kDeviceCpu).TypeConstraint<T>("T"); };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>("output_idx_type"),
                 MakeFactory<LuOp<T, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>("output_idx_type"),
                 MakeFactory<LuOp<T, int64_t>>());
}

TW_REGISTER_KERNELS(decomposition_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<QrOp, float, double>(cpu("Qr"), "T");
  RegisterTypedKernels<SvdOp, float, double>(cpu("Svd"), "T");
  RegisterTypedKernels<SelfAdjointEigOp, float, double>(cpu("SelfAdjointEigV2"), "T");
  RegisterTypedKernels<MatrixSolveLsOp, float, double>(cpu("MatrixSolveLs"), "T");
  RegisterLu<float>();
  RegisterLu<double>();
}

}  // namespace
}  // namespace towerflow
