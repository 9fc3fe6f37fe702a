// Shared by the dense linear algebra kernels (linalg_ops.cc,
// decomposition_ops.cc): row-major Eigen maps of a batch's matrices, the
// shape checks of TF's LinearAlgebraOp, and a loop over the batch on the
// intra-op pool.
#ifndef TOWERFLOW_KERNELS_CPU_LINALG_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_LINALG_UTIL_H_

#include <cstdint>
#include <utility>

#include "Eigen/Dense"
#include "Eigen/LU"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/kernel_context.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace linalg {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const Matrix<T>>;
template <typename T>
using MutableMap = Eigen::Map<Matrix<T>>;

// A rank >= 2 input of square matrices: their order and how many.
struct Square {
  int64_t n = 0, batch = 0;
};
inline absl::StatusOr<Square> SquareMatrices(const Tensor& t, const char* what) {
  if (t.dims() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must have rank >= 2, got ", t.dims()));
  }
  const int64_t rows = t.dim_size(t.dims() - 2), cols = t.dim_size(t.dims() - 1);
  if (rows != cols) return absl::InvalidArgumentError("Input matrix must be square.");
  return Square{rows, rows == 0 ? 0 : t.NumElements() / (rows * rows)};
}

// Runs fn(i) for each matrix i of the batch on the intra-op pool; the first
// error wins.
template <typename Fn>
absl::Status ForEachMatrix(KernelContext* ctx, int64_t batch, int64_t cost, Fn&& fn) {
  absl::Mutex mu;
  absl::Status status;
  ctx->intra_op_pool()->ParallelFor(batch, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      absl::Status s = fn(i);
      if (!s.ok()) {
        absl::MutexLock lock(&mu);
        if (status.ok()) status = std::move(s);
        return;
      }
    }
  });
  return status;
}

// Whether an LU factorisation has no zero pivot (an empty matrix has none).
template <typename T>
inline bool Invertible(const Eigen::PartialPivLU<Matrix<T>>& lu) {
  return lu.matrixLU().rows() == 0 || lu.matrixLU().diagonal().cwiseAbs().minCoeff() > T(0);
}

// The batch dimensions of matrix and rhs must agree, and rhs have as many
// rows as the matrix has columns (solving a square system) or, with
// `least_squares`, rows.
inline absl::Status CheckSolveShapes(const Tensor& matrix, const Tensor& rhs,
                                     bool least_squares = false) {
  if (rhs.dims() != matrix.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input matrix and rhs must have the same rank, got ", matrix.dims(), " and ", rhs.dims()));
  }
  for (int d = 0; d < matrix.dims() - 2; ++d) {
    if (matrix.dim_size(d) != rhs.dim_size(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input matrix and rhs must have the same batch dimensions, got ",
                       matrix.shape().DebugString(), " and ", rhs.shape().DebugString()));
    }
  }
  if (rhs.dim_size(rhs.dims() - 2) != matrix.dim_size(matrix.dims() - (least_squares ? 2 : 1))) {
    return absl::InvalidArgumentError("Input matrix and rhs are incompatible.");
  }
  return absl::OkStatus();
}

}  // namespace linalg
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_LINALG_UTIL_H_
