// The finite-difference cases of the SparseTensor gradients (sparse_grad.cc):
// see gradient_functions_test.cc. The indices and shapes are constants, the
// values (and the dense operands) the inputs; in double, SparseMatMul (float
// or bfloat16 only) in float.
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/sparse_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {
namespace {

// Entries [0,0] [0,3] [1,1] [1,4] [2,2] [3,0] [3,4] of a [4, 5] tensor.
Output Indices(const Scope& s) {
  return ops::Const(s, {{int64_t{0}, int64_t{0}}, {0, 3}, {1, 1}, {1, 4}, {2, 2}, {3, 0}, {3, 4}});
}
Output Shape(const Scope& s) { return ops::Const(s, {int64_t{4}, int64_t{5}}); }

}  // namespace

std::vector<GradCase> SparseCases() {
  return {
      Double({"SparseReorder",
              {S({4})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output unsorted =
                    ops::Const(s, {{int64_t{2}, int64_t{2}}, {0, 3}, {0, 0}, {3, 1}});
                return {
                    ops::Square(s, ops::SparseReorder(s, unsorted, x[0], Shape(s)).output_values)};
              }}),
      // [1,1] in both operands; the rest in one.
      Double({"SparseAdd",
              {S({7}), S({3})},
              [](const Scope& s, const Outs& x) -> Outs {
                const Output b = ops::Const(s, {{int64_t{0}, int64_t{1}}, {1, 1}, {3, 4}});
                return {ops::Square(s, ops::SparseAdd(s, Indices(s), x[0], Shape(s), b, x[1],
                                                      Shape(s), ops::Const(s, 0.0))
                                           .sum_values)};
              }}),
      Double({"SparseSlice",
              {S({7})},
              [](const Scope& s, const Outs& x) -> Outs {
                return {ops::Square(s, ops::SparseSlice(s, Indices(s), x[0], Shape(s),
                                                        ops::Const(s, {int64_t{1}, int64_t{1}}),
                                                        ops::Const(s, {int64_t{3}, int64_t{3}}))
                                           .output_values)};
              }}),
      // Steep enough that central differences need a finer step.
      Precise({"SparseSoftmax",
               {S({7})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const Output y = ops::SparseSoftmax(s, Indices(s), x[0], Shape(s));
                 return {ops::Mul(s, y, ops::Const(s, {1.0, -2.0, 3.0, 0.5, 2.0, -1.0, 4.0}))};
               }},
              1e-5, 1e-7),
      Double({"SparseDenseCwiseMul",
              {S({7}), S({5})},
              [](const Scope& s, const Outs& x) -> Outs {
                return {ops::SparseDenseCwiseMul(s, Indices(s), x[0], Shape(s), x[1])};
              }}),
      Double({"SparseDenseCwiseMul/column",
              {S({7}), S({4, 1})},
              [](const Scope& s, const Outs& x) -> Outs {
                return {ops::SparseDenseCwiseMul(s, Indices(s), x[0], Shape(s), x[1])};
              }}),
      Precise({"SparseDenseCwiseDiv",
               {S({7}), NonZero({4, 5})},
               [](const Scope& s, const Outs& x) -> Outs {
                 return {ops::SparseDenseCwiseDiv(s, Indices(s), x[0], Shape(s), x[1])};
               }},
              1e-5, 1e-7),
      Binary(
          "SparseMatMul",
          [](const Scope& s, Output a, Output b) { return ops::SparseMatMul(s, a, b); }, S({2, 3}),
          S({3, 4})),
      Binary(
          "SparseMatMul/transposed",
          [](const Scope& s, Output a, Output b) {
            return ops::SparseMatMul(
                s, a, b, ops::SparseMatMul::TransposeA(true).TransposeB(true).AIsSparse(true));
          },
          S({3, 2}), S({4, 3})),
      Binary(
          "SparseMatMul/transpose_b",
          [](const Scope& s, Output a, Output b) {
            return ops::SparseMatMul(s, a, b, ops::SparseMatMul::TransposeB(true));
          },
          S({2, 3}), S({4, 3})),
  };
}

}  // namespace grad_cases
}  // namespace towerflow
