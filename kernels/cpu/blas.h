// Row-major GEMM for the CPU kernels:
//   C[m,n] = alpha * op(A) op(B) + beta * C, op = optional transpose.
// Dimensions must fit BLAS's 32-bit ints; callers check with FitsBlas.
//
// Float goes to oneDNN's sgemm, double to OpenBLAS. oneDNN runs on the
// OpenMP team the convolutions use; OpenBLAS's own worker threads spin on
// sched_yield for a while after each call: in a CIFAR-10 training run
// (three dense layers) one of them had 16% of the machine's samples, in
// sched_yield and the scheduler, taken from the kernels that came next.
// oneDNN's sgemm is also faster here (1024^3: 212 GFLOP/s against 195,
// bench/kernels_bench).
#ifndef TOWERFLOW_KERNELS_CPU_BLAS_H_
#define TOWERFLOW_KERNELS_CPU_BLAS_H_

#include <cstdint>
#include <limits>

#include "oneapi/dnnl/dnnl.h"
#include "openblas-pthread/cblas.h"

namespace towerflow {

inline bool FitsBlas(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

// lda/ldb/ldc are the row strides of A, B and C as stored.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (sizeof(T) == sizeof(float)) {
    if (dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta,
                   c, ldc) == dnnl_success) {
      return;
    }
    // oneDNN refuses only arguments it checks (the same BLAS rules): OpenBLAS.
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
  }
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_BLAS_H_
