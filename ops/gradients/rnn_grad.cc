// Gradients of the fused recurrent cells (ops/rnn_ops.cc), as TF registers
// them: BlockLSTM's in rnn_grad.py, LSTMBlockCell's and GRUBlockCell's in
// tf.contrib.rnn's lstm_ops.py and gru_ops.py (TF 1.x; TF 2 dropped them
// with contrib). Only dL/dcs and dL/dh reach the gradient ops, as in TF: the
// gates' own outputs (i, f, o, ci, co; GRU's r, u, c) are activations the
// backward reads, not values a loss is expected to use.
//
// One difference from TF: its BlockLSTMV2 gradient calls BlockLSTMGrad,
// whose gates are in BlockLSTM's order (i, ci, f, o), not V2's (i, f, ci,
// o), so TF's gradients of w, b, x and h_prev for V2 are wrong (checked
// against finite differences with TF 2.21); here V2's gradient calls
// BlockLSTMGradV2, the gradient op TF has for it.
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/rnn_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// [x, h]'s gradient split back into x's and h's: xh_grad [batch, input +
// cell] at x's width.
void SplitXh(const Scope& scope, const Output& xh_grad, const Output& x, Output* x_grad,
             Output* h_grad) {
  const Output input =
      ops::Slice(scope, ops::Shape(scope, x), ops::Const(scope, {1}), ops::Const(scope, {1}));
  const Output sizes = ops::ConcatV2(scope, {input, ops::Const(scope, {-1})}, 0);
  const ops::SplitV split(scope, xh_grad, sizes, ops::Const(scope, 1), 2);
  *x_grad = split.output[0];
  *h_grad = split.output[1];
}

// The gradient of a weight w that multiplied [a, b] (concatenated along
// the columns) into the pre-activations whose gradient is d: [a, b]^T d.
Output WeightGrad(const Scope& scope, const Output& a, const Output& b, const Output& d) {
  return ops::MatMul(scope, ops::ConcatV2(scope, {a, b}, 1), d, ops::MatMul::TransposeA(true));
}

TW_GRAD_FN(LstmBlockCellGrad) {
  const Output x = In(op, 0), cs_prev = In(op, 1), h_prev = In(op, 2), w = In(op, 3);
  const ops::LSTMBlockCellGrad g(scope, x, cs_prev, h_prev, w, In(op, 4), In(op, 5), In(op, 6),
                                 In(op, 7), op.output(0), op.output(1), op.output(2), op.output(3),
                                 op.output(4), op.output(5), grad_inputs[1], grad_inputs[6],
                                 grad_util::Attr<bool>(scope, op, "use_peephole"));
  Output x_grad, h_prev_grad;
  SplitXh(scope, ops::MatMul(scope, g.dicfo, w, ops::MatMul::TransposeB(true)), x, &x_grad,
          &h_prev_grad);
  *grad_outputs = {x_grad,     g.cs_prev_grad, h_prev_grad, WeightGrad(scope, x, h_prev, g.dicfo),
                   g.wci_grad, g.wcf_grad,     g.wco_grad,  ops::BiasAddGrad(scope, g.dicfo)};
  return scope.status();
}
TW_REGISTER_GRADIENT("LSTMBlockCell", LstmBlockCellGrad);

template <typename GradOp>
TW_GRAD_FN(BlockLstmGrad) {
  const GradOp g(scope, In(op, 0), In(op, 1), In(op, 2), In(op, 3), In(op, 4), In(op, 5), In(op, 6),
                 In(op, 7), In(op, 8), op.output(0), op.output(1), op.output(2), op.output(3),
                 op.output(4), op.output(5), op.output(6), grad_inputs[1], grad_inputs[6],
                 grad_util::Attr<bool>(scope, op, "use_peephole"));
  *grad_outputs = {NoGradient(), g.x_grad,   g.cs_prev_grad, g.h_prev_grad, g.w_grad,
                   g.wci_grad,   g.wcf_grad, g.wco_grad,     g.b_grad};
  return scope.status();
}
TW_REGISTER_GRADIENT("BlockLSTM", BlockLstmGrad<ops::BlockLSTMGrad>);
TW_REGISTER_GRADIENT("BlockLSTMV2", BlockLstmGrad<ops::BlockLSTMGradV2>);

TW_GRAD_FN(GruBlockCellGrad) {
  const Output x = In(op, 0), h_prev = In(op, 1), r = op.output(0);
  const ops::GRUBlockCellGrad g(scope, x, h_prev, In(op, 2), In(op, 3), In(op, 4), In(op, 5), r,
                                op.output(1), op.output(2), grad_inputs[3]);
  *grad_outputs = {g.d_x,
                   g.d_h_prev,
                   WeightGrad(scope, x, h_prev, g.d_r_bar_u_bar),
                   WeightGrad(scope, x, ops::Mul(scope, h_prev, r), g.d_c_bar),
                   ops::BiasAddGrad(scope, g.d_r_bar_u_bar),
                   ops::BiasAddGrad(scope, g.d_c_bar)};
  return scope.status();
}
TW_REGISTER_GRADIENT("GRUBlockCell", GruBlockCellGrad);

}  // namespace
}  // namespace towerflow
