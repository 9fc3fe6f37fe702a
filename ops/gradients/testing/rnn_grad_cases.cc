// The finite-difference cases of the fused recurrent cells' gradients
// (rnn_grad.cc): see gradient_functions_test.cc. The cells are float only
// (TF registers no double kernel), so the step is 1e-2: its truncation
// error (delta^2 / 6 times a third derivative of order one) and rounding
// error (float's epsilon / delta) both stay near 1e-5. Each case
// differentiates what TF's gradients take in, cs and h; the values keep
// |cs| well under the clip.
#include "ops/const_op.h"
#include "ops/gen/rnn_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {
namespace {

GradCase Steep(GradCase c) {
  c.delta = 1e-2;
  c.max_error = 2e-4;
  return c;
}

// x, cs_prev, h_prev, w, wci, wcf, wco, b for input 3, cell 2, batch 2
// (time 3 first for the sequences).
std::vector<InputSpec> LstmInputs(bool sequence) {
  return {sequence ? S({3, 2, 3}) : S({2, 3}),
          S({2, 2}),
          S({2, 2}),
          S({5, 8}, -0.6, 0.6),
          S({2}, -0.5, 0.5),
          S({2}, -0.5, 0.5),
          S({2}, -0.5, 0.5),
          S({8}, -0.3, 0.3)};
}

GradCase LstmCell(const std::string& name, bool peephole) {
  return Steep({name, LstmInputs(false), [peephole](const Scope& s, const Outs& x) -> Outs {
                  const ops::LSTMBlockCell cell(s, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7],
                                                ops::LSTMBlockCell::UsePeephole(peephole));
                  return {cell.cs, cell.h};
                }});
}

template <typename Op>
GradCase BlockLstm(const std::string& name, int64_t steps, bool peephole) {
  return Steep({name, LstmInputs(true), [steps, peephole](const Scope& s, const Outs& x) -> Outs {
                  const Op lstm(s, ops::Const(s, steps), x[0], x[1], x[2], x[3], x[4], x[5], x[6],
                                x[7], typename Op::Attrs().UsePeephole(peephole));
                  return {lstm.cs, lstm.h};
                }});
}

}  // namespace

std::vector<GradCase> RnnCases() {
  return {
      LstmCell("LSTMBlockCell", false),
      LstmCell("LSTMBlockCell/peephole", true),
      BlockLstm<ops::BlockLSTM>("BlockLSTM/peephole", 3, true),
      BlockLstm<ops::BlockLSTM>("BlockLSTM/seq_len_max", 2, false),
      BlockLstm<ops::BlockLSTMV2>("BlockLSTMV2", 3, false),
      BlockLstm<ops::BlockLSTMV2>("BlockLSTMV2/peephole", 3, true),
      Steep({"GRUBlockCell",
             {S({2, 3}), S({2, 2}), S({5, 4}, -0.6, 0.6), S({5, 2}, -0.6, 0.6), S({4}, -0.3, 0.3),
              S({2}, -0.3, 0.3)},
             [](const Scope& s, const Outs& x) -> Outs {
               return {ops::GRUBlockCell(s, x[0], x[1], x[2], x[3], x[4], x[5]).h};
             }}),
  };
}

}  // namespace grad_cases
}  // namespace towerflow
