// The finite-difference cases of the TensorList gradients (list_grad.cc):
// see gradient_functions_test.cc. Each builds lists from its input and reads
// them back, so the list's gradient passes through the mirror ops.
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/list_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {
namespace {

Output Rows(const Scope& s, const Output& x) { return ops::TensorListFromTensor(s, x, {3}); }
Output Stack(const Scope& s, const Output& list) {
  return ops::TensorListStack(s, list, {3}, DT_FLOAT);
}

}  // namespace

std::vector<GradCase> ListCases() {
  return {
      Unary(
          "TensorListFromTensor",
          [](const Scope& s, Output x) { return ops::Square(s, Stack(s, Rows(s, x))); }, S({2, 3})),
      Unary(
          "TensorListStack",
          [](const Scope& s, Output x) {
            return ops::Square(s, ops::TensorListStack(s, Rows(s, x), -1, DT_FLOAT,
                                                       ops::TensorListStack::NumElements(2)));
          },
          S({2, 3})),
      // Element 1 is never read: its gradient is zeros.
      Unary(
          "TensorListGetItem",
          [](const Scope& s, Output x) {
            return ops::Square(s, ops::TensorListGetItem(s, Rows(s, x), 0, {3}, DT_FLOAT));
          },
          S({2, 3})),
      Unary(
          "TensorListSetItem",
          [](const Scope& s, Output x) {
            const Output row = ops::Squeeze(s, ops::Slice(s, x, {1, 0}, {1, 3}));
            return ops::Square(s, Stack(s, ops::TensorListSetItem(s, Rows(s, x), 0, row)));
          },
          S({2, 3})),
      Unary(
          "TensorListSetItem/resize",
          [](const Scope& s, Output x) {
            const Output row = ops::Squeeze(s, ops::Slice(s, x, {1, 0}, {1, 3}));
            const Output grown = ops::TensorListSetItem(
                s, Rows(s, x), 3, row, ops::TensorListSetItem::ResizeIfIndexOutOfBounds(true));
            return ops::Square(s, Stack(s, grown));
          },
          S({2, 3})),
      Unary(
          "TensorListPushBack",
          [](const Scope& s, Output x) {
            const Output row = ops::Squeeze(s, ops::Slice(s, x, {0, 0}, {1, 3}));
            const Output pushed = ops::TensorListPushBack(s, Rows(s, x), ops::Square(s, row));
            return Stack(s, pushed);
          },
          S({2, 3})),
      {"TensorListPopBack",
       {S({3, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         const ops::TensorListPopBack pop(s, Rows(s, x[0]), {3}, DT_FLOAT);
         return {ops::Square(s, pop.tensor), Stack(s, pop.output_handle)};
       }},
      Unary(
          "TensorListGather",
          [](const Scope& s, Output x) {
            return ops::Square(s, ops::TensorListGather(s, Rows(s, x), {2, 0}, {3}, DT_FLOAT));
          },
          S({3, 3})),
      Unary(
          "TensorListScatter",
          [](const Scope& s, Output x) {
            return ops::Square(s, Stack(s, ops::TensorListScatter(s, x, {2, 0}, {3})));
          },
          S({2, 3})),
      Unary(
          "TensorListScatterV2",
          [](const Scope& s, Output x) {
            return ops::Square(s, Stack(s, ops::TensorListScatterV2(s, x, {2, 0}, {3}, 4)));
          },
          S({2, 3})),
      Unary(
          "TensorListScatterIntoExistingList",
          [](const Scope& s, Output x) {
            const Output first = ops::Slice(s, x, {0, 0}, {1, 3});
            const Output out = ops::TensorListScatterIntoExistingList(
                s, Rows(s, x), ops::Mul(s, first, first), {1});
            return Stack(s, out);
          },
          S({2, 3})),
      Unary(
          "TensorListResize",
          [](const Scope& s, Output x) {
            return ops::Square(s, Stack(s, ops::TensorListResize(s, Rows(s, x), 1)));
          },
          S({3, 3})),
      Unary(
          "TensorListSplit",
          [](const Scope& s, Output x) {
            const Output list =
                ops::TensorListSplit(s, x, {-1, 2}, ops::Const(s, {int64_t{1}, int64_t{3}}));
            return ops::Square(s, ops::TensorListGetItem(s, list, 1, {-1, 2}, DT_FLOAT));
          },
          S({4, 2})),
      Unary(
          "TensorListConcatV2",
          [](const Scope& s, Output x) {
            const Output list =
                ops::TensorListSplit(s, x, {-1, 2}, ops::Const(s, {int64_t{3}, int64_t{1}}));
            return ops::Square(
                s, ops::TensorListConcatV2(s, list, {-1, 2},
                                           ops::Const(s, {int64_t{3}, int64_t{1}}), DT_FLOAT)
                       .tensor);
          },
          S({4, 2})),
      Unary(
          "TensorListConcat",
          [](const Scope& s, Output x) {
            const Output list =
                ops::TensorListSplit(s, x, {-1, 2}, ops::Const(s, {int64_t{2}, int64_t{2}}));
            return ops::Square(s, ops::TensorListConcat(s, list, DT_FLOAT).tensor);
          },
          S({4, 2})),
  };
}

}  // namespace grad_cases
}  // namespace towerflow
