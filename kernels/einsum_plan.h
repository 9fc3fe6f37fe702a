// Einsum as one batched GEMM (TensorFlow's own strategy), planned on the
// host and shared by the CPU kernel and its GPU twin.
//
// Note [Einsum as GEMM]
// With the equation resolved (core/einsum.h), every label of inputs A and B
// is one of:
//   batch:    in A, B and the output    -> the GEMM's batch
//   free A:   in A and the output only  -> its rows (M)
//   free B:   in B and the output only  -> its columns (N)
//   contract: not in the output         -> its inner dimension (K)
// A label summed away in one input only is a contract label that the other
// input broadcasts (sum_k a_k * b = b * sum_k a_k), and one-input Einsum is
// A against a B of ones, so every equation is C[bt] = A'[bt] B'[bt] with
// A' = [batch, freeA, contract], B' = [batch, contract, freeB], each
// gathered from its input by strides (0 where it broadcasts) unless it is
// already laid out so, and C written into the output's label order.
//
// Repeated labels are diagonals, as in TF: a label an input repeats ("ii->i",
// "bii,bj->bij") reads the diagonal, its stride being the sum of those dims'
// strides; a label the output repeats ("i->ii", what the gradient of a
// diagonal needs) writes C onto the diagonal of a zeroed output.
#ifndef TOWERFLOW_KERNELS_EINSUM_PLAN_H_
#define TOWERFLOW_KERNELS_EINSUM_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/einsum.h"
#include "core/tensor_shape.h"
#include "framework/kernel.h"

namespace towerflow {

// One GEMM operand laid out row-major over `sizes`: element (c_0..c_r) is
// the input's element sum c_d * strides[d].
struct EinsumOperand {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  bool direct = false;  // the input already is that layout: no copy
};

struct EinsumPlan {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  EinsumOperand a, b;  // b of a one-input Einsum: ones (all strides 0)
  // C = [batch, m, n] row-major over c_sizes; its element (c_0..c_r) goes
  // to the output's element sum c_d * out_strides[d].
  std::vector<int64_t> c_sizes, out_strides;
  bool out_direct = false;  // C is the output itself
  bool inflate = false;     // the output repeats a label: zeros off the diagonal
  TensorShape shape;        // the output's
};

// The plan for `eq` on inputs of `dims` (known sizes). InvalidArgument for
// inputs that do not fit the equation or a GEMM past 32-bit BLAS sizes.
absl::StatusOr<EinsumPlan> PlanEinsum(const EinsumEquation& eq,
                                      const std::vector<std::vector<int64_t>>& dims);

// What every device's Einsum kernel shares: the equation, parsed once from
// the node's `equation` and `N`, and each call's plan.
class EinsumOpBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override;

 protected:
  // The plan for this call's inputs, with the output allocated to its shape
  // in `*out`.
  absl::StatusOr<EinsumPlan> PlanCall(KernelContext* ctx, Tensor** out) const;

 private:
  EinsumEquation eq_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_EINSUM_PLAN_H_
