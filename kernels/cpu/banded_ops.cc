// TF 2's banded and tridiagonal systems on the CPU: BandedTriangularSolve
// (tf.linalg.banded_triangular_solve), TridiagonalSolve
// (tf.linalg.tridiagonal_solve, its compact form) and TridiagonalMatMul.
// Each walks a band in O(M K) per right-hand side, where a dense solve would
// take O(M^2); the batch runs on the intra-op pool. TridiagonalSolve is
// LAPACK's: Gaussian elimination with partial pivoting as xGTSV, its
// perturbation of tiny pivots as xLAGTF/xLAGTS, or the Thomas algorithm
// without pivoting; like TF's it gives NaN for a singular system, which
// BandedTriangularSolve refuses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cpu/linalg_util.h"

namespace towerflow {
namespace {

using linalg::ConstMap;
using linalg::Matrix;
using linalg::MutableMap;

// LinearAlgebraOp's checks: every input of rank >= 2, all of one rank and
// with the same batch dimensions. The number of matrices.
absl::StatusOr<int64_t> SameBatches(KernelContext* ctx) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    if (ctx->input(i).dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input tensor ", i, " must have rank >= 2, got ", ctx->input(i).dims()));
    }
  }
  const Tensor& first = ctx->input(0);
  for (int i = 1; i < ctx->num_inputs(); ++i) {
    if (ctx->input(i).dims() != first.dims()) {
      return absl::InvalidArgumentError("All input tensors must have the same rank.");
    }
  }
  for (int i = 1; i < ctx->num_inputs(); ++i) {
    const Tensor& t = ctx->input(i);
    bool same = true;
    for (int d = 0; same && d < first.dims() - 2; ++d) same = t.dim_size(d) == first.dim_size(d);
    if (!same) {
      return absl::InvalidArgumentError("All input tensors must have the same outer dimensions.");
    }
  }
  int64_t batch = 1;
  for (int d = 0; d < first.dims() - 2; ++d) batch *= first.dim_size(d);
  return batch;
}

// A [rows, cols] matrix of a batch as a row-major Eigen map.
template <typename T>
ConstMap<T> MatrixOf(const Tensor& t, int64_t i) {
  const int64_t rows = t.dim_size(t.dims() - 2), cols = t.dim_size(t.dims() - 1);
  return ConstMap<T>(t.data<T>() + i * rows * cols, rows, cols);
}

// The solvers of one tridiagonal system: x [M, K] from the diagonals
// (rows super, main, sub of [3, M]) and rhs [M, K]; NaN when singular.
template <typename T>
class Tridiagonal {
 public:
  using Real = typename Eigen::NumTraits<T>::Real;
  using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;

  Tridiagonal(ConstMap<T> diagonals, ConstMap<T> rhs, MutableMap<T> x)
      : diagonals_(diagonals), rhs_(rhs), x_(x) {}

  // xGTSV: elimination with a row exchange whenever the subdiagonal
  // element is the larger; u holds U's diagonal and two superdiagonals.
  void SolveWithPivoting() {
    const int64_t n = diagonals_.cols();
    if (n == 1) return SolveScalar();
    Eigen::Array<T, Eigen::Dynamic, 3> u(n, 3);
    u.setZero();
    u(0, 0) = diag(0);
    u(0, 1) = sup(0);
    x_.row(0) = rhs_.row(0);
    for (int64_t i = 0; i + 1 < n; ++i) {
      if (std::abs(u(i, 0)) >= std::abs(sub(i + 1))) {
        if (u(i, 0) == T(0)) return Singular();
        const T factor = sub(i + 1) / u(i, 0);
        u(i + 1, 0) = diag(i + 1) - factor * u(i, 1);
        x_.row(i + 1) = rhs_.row(i + 1) - factor * x_.row(i);
        if (i + 2 < n) {
          u(i + 1, 1) = sup(i + 1);
          u(i, 2) = T(0);
        }
      } else {
        const T factor = u(i, 0) / sub(i + 1);
        u(i, 0) = sub(i + 1);
        u(i + 1, 0) = u(i, 1) - factor * diag(i + 1);
        u(i, 1) = diag(i + 1);
        x_.row(i + 1) = x_.row(i) - factor * rhs_.row(i + 1);
        x_.row(i) = rhs_.row(i + 1);
        if (i + 2 < n) {
          u(i, 2) = sup(i + 1);
          u(i + 1, 1) = -factor * sup(i + 1);
        }
      }
    }
    if (u(n - 1, 0) == T(0)) return Singular();
    x_.row(n - 1) /= u(n - 1, 0);
    x_.row(n - 2) = (x_.row(n - 2) - u(n - 2, 1) * x_.row(n - 1)) / u(n - 2, 0);
    for (int64_t i = n - 3; i >= 0; --i) {
      x_.row(i) = (x_.row(i) - u(i, 1) * x_.row(i + 1) - u(i, 2) * x_.row(i + 2)) / u(i, 0);
    }
  }

  // The Thomas algorithm: elimination without row exchanges.
  void SolveWithoutPivoting() {
    const int64_t n = diagonals_.cols();
    if (n == 1) return SolveScalar();
    Eigen::Matrix<T, Eigen::Dynamic, 1> u(n);
    if (diag(0) == T(0)) return Singular();
    u(0) = sup(0) / diag(0);
    x_.row(0) = rhs_.row(0) / diag(0);
    for (int64_t i = 1; i < n; ++i) {
      const T denominator = diag(i) - sub(i) * u(i - 1);
      if (denominator == T(0)) return Singular();
      u(i) = sup(i) / denominator;
      x_.row(i) = (rhs_.row(i) - sub(i) * x_.row(i - 1)) / denominator;
    }
    for (int64_t i = n - 2; i >= 0; --i) x_.row(i) -= u(i) * x_.row(i + 1);
  }

  // xLAGTF + xLAGTS: the pivot of each row chosen by its size relative to
  // its row's (scaled partial pivoting), and tiny pivots of U perturbed by
  // about eps * max |U| in the back substitution, so a singular system
  // (inverse iteration's) gives a large finite solution.
  void SolveWithPerturbation() {
    const int64_t n = diagonals_.cols();
    const Real eps = std::numeric_limits<Real>::epsilon();
    if (n == 1) {
      T pivot = diag(0);
      Row row = rhs_.row(0);
      PerturbPivot(eps * std::abs(pivot), &pivot, &row);
      x_.row(0) = row * (T(1) / pivot);
      return;
    }
    Eigen::Array<T, Eigen::Dynamic, 3> u(n, 3);
    u.setZero();
    u(0, 0) = diag(0);
    u(0, 1) = sup(0);
    Real max_u = std::max(std::abs(u(0, 0)), std::abs(u(0, 1)));
    Real scale = std::abs(u(0, 0)) + std::abs(u(0, 1));
    x_.row(0) = rhs_.row(0);
    for (int64_t k = 0; k + 1 < n; ++k) {
      u(k + 1, 0) = diag(k + 1);
      Real next_scale = std::abs(sub(k + 1)) + std::abs(u(k + 1, 0));
      if (k + 2 < n) next_scale += std::abs(sup(k + 1));
      if (sub(k + 1) == T(0)) {
        scale = next_scale;
        u(k + 1, 1) = sup(k + 1);
        u(k, 2) = T(0);
        x_.row(k + 1) = rhs_.row(k + 1);
      } else {
        const Real keep = u(k, 0) == T(0) ? Real(0) : std::abs(u(k, 0)) / scale;
        const Real exchange = std::abs(sub(k + 1)) / next_scale;
        if (exchange <= keep) {
          scale = next_scale;
          const T factor = sub(k + 1) / u(k, 0);
          u(k + 1, 0) = diag(k + 1) - factor * u(k, 1);
          u(k + 1, 1) = sup(k + 1);
          u(k, 2) = T(0);
          x_.row(k + 1) = rhs_.row(k + 1) - factor * x_.row(k);
        } else {
          const T factor = u(k, 0) / sub(k + 1);
          u(k, 0) = sub(k + 1);
          u(k + 1, 0) = u(k, 1) - factor * diag(k + 1);
          u(k, 1) = diag(k + 1);
          if (k + 2 < n) {
            u(k, 2) = sup(k + 1);
            u(k + 1, 1) = -factor * sup(k + 1);
          }
          x_.row(k + 1) = x_.row(k) - factor * rhs_.row(k + 1);
          x_.row(k) = rhs_.row(k + 1);
        }
      }
      if (k + 2 < n) {
        for (int c = 0; c < 3; ++c) max_u = std::max(max_u, std::abs(u(k, c)));
      }
    }
    max_u = std::max(max_u, std::abs(u(n - 1, 0)));
    const Real tol = eps * max_u;
    const auto solve_row = [&](int64_t k, Row row, Real perturb) {
      T pivot = u(k, 0);
      PerturbPivot(perturb, &pivot, &row);
      x_.row(k) = row * (T(1) / pivot);
    };
    solve_row(n - 1, x_.row(n - 1), tol);
    solve_row(n - 2, x_.row(n - 2) - u(n - 2, 1) * x_.row(n - 1),
              std::copysign(tol, std::real(u(n - 2, 0))));
    for (int64_t k = n - 3; k >= 0; --k) {
      solve_row(k, x_.row(k) - u(k, 1) * x_.row(k + 1) - u(k, 2) * x_.row(k + 2),
                std::copysign(tol, std::real(u(k, 0))));
    }
  }

 private:
  void SolveScalar() {
    if (diag(0) == T(0)) return Singular();
    x_.row(0) = rhs_.row(0) / diag(0);
  }
  void Singular() { x_.setConstant(std::numeric_limits<Real>::quiet_NaN()); }

  // xLAGTS's guard: grows a pivot below 1 by `perturb` (doubling) until
  // neither 1 / pivot nor row / pivot overflows, or scales both up when
  // the pivot is tiny but the row is tinier.
  static void PerturbPivot(Real perturb, T* pivot, Row* row) {
    const Real tiny = std::numeric_limits<Real>::min();
    const Real small = Real(1) / std::numeric_limits<Real>::max();
    const Real safe_min =
        small < tiny ? tiny : small * (Real(1) + std::numeric_limits<Real>::epsilon());
    const Real big = Real(1) / safe_min;
    Real size = std::abs(*pivot);
    if (size >= Real(1)) return;
    perturb = std::copysign(std::max(std::abs(perturb), safe_min), std::real(*pivot));
    const Real largest = row->size() == 0 ? Real(0) : row->array().abs().maxCoeff();
    for (bool done = false; size < Real(1) && !done; size = std::abs(*pivot)) {
      if (size < safe_min) {
        if (size == Real(0) || largest * safe_min > size) {
          *pivot += perturb;
          perturb *= 2;
        } else {
          *pivot *= big;
          *row *= big;
          done = true;
        }
      } else if (largest > size * big) {
        *pivot += perturb;
        perturb *= 2;
      } else {
        done = true;
      }
    }
  }

  T sup(int64_t i) const { return diagonals_(0, i); }
  T diag(int64_t i) const { return diagonals_(1, i); }
  T sub(int64_t i) const { return diagonals_(2, i); }

  const ConstMap<T> diagonals_;  // rows: superdiagonal, diagonal, subdiagonal
  const ConstMap<T> rhs_;
  MutableMap<T> x_;
};

template <typename T>
class TridiagonalSolveOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("partial_pivoting", &pivoting_));
    TW_RETURN_IF_ERROR(c.GetAttr("perturb_singular", &perturb_));
    if (perturb_ && !pivoting_) {
      return absl::InvalidArgumentError(
          "Setting perturb_singular requires also setting partial_pivoting.");
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const int64_t batch, SameBatches(ctx));
    const Tensor& diagonals = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    const int64_t rows = diagonals.dim_size(diagonals.dims() - 2);
    if (rows != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected diagonals to be provided as a matrix with 3 rows, got ", rows, " rows."));
    }
    const int64_t n = diagonals.dim_size(diagonals.dims() - 1);
    const int64_t equations = rhs.dim_size(rhs.dims() - 2);
    if (n != equations) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected the same number of left-hand sides and right-hand sides, got ", n,
                       " and ", equations, "."));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, rhs.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t k = rhs.dim_size(rhs.dims() - 1);
    return linalg::ForEachMatrix(ctx, batch, 20 * n * (k + 1), [&](int64_t i) {
      MutableMap<T> x(out->data<T>() + i * n * k, n, k);
      Tridiagonal<T> system(MatrixOf<T>(diagonals, i), MatrixOf<T>(rhs, i), x);
      if (perturb_) {
        system.SolveWithPerturbation();
      } else if (pivoting_) {
        system.SolveWithPivoting();
      } else {
        system.SolveWithoutPivoting();
      }
      return absl::OkStatus();
    });
  }

 private:
  bool pivoting_ = true;
  bool perturb_ = false;
};

template <typename T>
class TridiagonalMatMulOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const int64_t batch, SameBatches(ctx));
    const Tensor& rhs = ctx->input(3);
    const int64_t m = rhs.dim_size(rhs.dims() - 2), n = rhs.dim_size(rhs.dims() - 1);
    const char* names[] = {"superdiagonal", "main diagonal", "subdiagonal"};
    for (int d = 0; d < 3; ++d) {
      const Tensor& t = ctx->input(d);
      if (t.dim_size(t.dims() - 2) != 1 || t.dim_size(t.dims() - 1) != m) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid ", names[d], " shape."));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, rhs.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    return linalg::ForEachMatrix(ctx, batch, 6 * m * n, [&](int64_t i) {
      const T* sup = ctx->input(0).data<T>() + i * m;
      const T* diagonal = ctx->input(1).data<T>() + i * m;
      const T* sub = ctx->input(2).data<T>() + i * m;
      const ConstMap<T> b = MatrixOf<T>(rhs, i);
      MutableMap<T> y(out->data<T>() + i * m * n, m, n);
      for (int64_t r = 0; r < m; ++r) {
        y.row(r) = diagonal[r] * b.row(r);
        if (r > 0) y.row(r) += sub[r] * b.row(r - 1);
        if (r + 1 < m) y.row(r) += sup[r] * b.row(r + 1);
      }
      return absl::OkStatus();
    });
  }
};

template <typename T>
class BandedTriangularSolveOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("lower", &lower_));
    return c.GetAttr("adjoint", &adjoint_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& bands = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    for (int i = 0; i < 2; ++i) {
      if (ctx->input(i).dims() < 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("In[", i, "] ndims must be >= 2: ", ctx->input(i).dims()));
      }
    }
    const auto band_batch = bands.shape().dim_sizes().subspan(0, bands.dims() - 2);
    const auto rhs_batch = rhs.shape().dim_sizes().subspan(0, rhs.dims() - 2);
    const BCast batch(band_batch, rhs_batch);
    if (!batch.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "In[0] and In[1] must have compatible batch dimensions: ", bands.shape().DebugString(),
          " vs. ", rhs.shape().DebugString()));
    }
    const int64_t k = bands.dim_size(bands.dims() - 2), m = bands.dim_size(bands.dims() - 1);
    const int64_t rows = rhs.dim_size(rhs.dims() - 2), n = rhs.dim_size(rhs.dims() - 1);
    if (m != rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("In[0] mismatch In[1] shape: the matrix has order ", m, ", rhs ", rows,
                       " rows: ", bands.shape().DebugString(), " ", rhs.shape().DebugString()));
    }
    if (bands.NumElements() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("In[0] must not be an empty tensor: ", bands.shape().DebugString()));
    }
    TensorShape out_shape = batch.output_shape();
    TW_RETURN_IF_ERROR(out_shape.AddDim(m));
    TW_RETURN_IF_ERROR(out_shape.AddDim(n));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // The bands and rhs each output matrix reads (BatchMatMulV2's broadcast).
    const std::vector<int64_t> band_of = BroadcastIndices(band_batch, batch.output_shape());
    const std::vector<int64_t> rhs_of = BroadcastIndices(rhs_batch, batch.output_shape());
    const int64_t count = static_cast<int64_t>(band_of.size());
    return linalg::ForEachMatrix(ctx, count, 4 * m * k * (n + 1), [&](int64_t i) {
      const ConstMap<T> a(bands.data<T>() + band_of[i] * k * m, k, m);
      const ConstMap<T> b(rhs.data<T>() + rhs_of[i] * m * n, m, n);
      MutableMap<T> x(out->data<T>() + i * m * n, m, n);
      return Solve(a, b, &x);
    });
  }

 private:
  // Element (row, col) of the triangular matrix the bands describe, 0 off
  // the band: lower, band d holds subdiagonal d right-aligned (entry j is
  // A[j, j - d]); upper, band K-1-d holds superdiagonal d left-aligned
  // (entry j is A[j, j + d]).
  T At(const ConstMap<T>& a, int64_t row, int64_t col) const {
    const int64_t k = a.rows();
    const int64_t d = lower_ ? row - col : col - row;
    if (d < 0 || d >= k) return T(0);
    return lower_ ? a(d, row) : a(k - 1 - d, row);
  }

  // Substitution down (lower, or upper adjoint) or up the rows.
  absl::Status Solve(const ConstMap<T>& a, const ConstMap<T>& b, MutableMap<T>* x) const {
    const int64_t k = a.rows(), m = a.cols();
    const bool forward = lower_ != adjoint_;
    for (int64_t step = 0; step < m; ++step) {
      const int64_t i = forward ? step : m - 1 - step;
      T pivot = At(a, i, i);
      if (adjoint_) pivot = Eigen::numext::conj(pivot);
      if (pivot == T(0)) return absl::InvalidArgumentError("Input matrix is not invertible.");
      auto row = x->row(i);
      row = b.row(i);
      for (int64_t d = 1; d < k; ++d) {
        const int64_t j = forward ? i - d : i + d;
        if (j < 0 || j >= m) break;
        // The coefficient of x[j] in equation i: A[i, j], or conj(A[j, i]).
        const T c = adjoint_ ? Eigen::numext::conj(At(a, j, i)) : At(a, i, j);
        row -= c * x->row(j);
      }
      row /= pivot;
    }
    return absl::OkStatus();
  }

  bool lower_ = true;
  bool adjoint_ = false;
};

TW_REGISTER_KERNELS(banded_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<TridiagonalSolveOp, float, double>(cpu("TridiagonalSolve"), "T");
  RegisterTypedKernels<TridiagonalMatMulOp, float, double>(cpu("TridiagonalMatMul"), "T");
  RegisterTypedKernels<BandedTriangularSolveOp, float, double>(cpu("BandedTriangularSolve"), "T");
}

}  // namespace
}  // namespace towerflow
