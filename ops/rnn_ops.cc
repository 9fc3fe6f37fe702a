// Fused recurrent cells of tf.contrib.rnn (kernels/cpu/rnn_ops.cc):
// LSTMBlockCell (one LSTM step), BlockLSTM and BlockLSTMV2 (the step over
// a sequence; V2 with Keras's gate order and no forget bias) and
// GRUBlockCell (one GRU step), and the gradient ops TF's gradients of
// them call. x is [batch, input] ([time, batch, input] for the sequences);
// the states and gates [batch, cell].
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// Every output has the shape of h_prev (input `state`), or [time] + that
// for the sequences (x's first dimension).
absl::Status StateShapes(InferenceContext* c, int x, int state, bool sequence) {
  PartialTensorShape xs, hs;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(x), sequence ? 3 : 2, &xs));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(state), 2, &hs));
  int64_t batch = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(xs.dim_size(sequence ? 1 : 0), hs.dim_size(0), &batch));
  const PartialTensorShape out = sequence
                                     ? PartialTensorShape({xs.dim_size(0), batch, hs.dim_size(1)})
                                     : PartialTensorShape({batch, hs.dim_size(1)});
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// Output k has the shape of input shaped[k] (-1: the shape `other`).
absl::Status ShapesOfInputs(InferenceContext* c, std::initializer_list<int> shaped,
                            const PartialTensorShape& other = PartialTensorShape()) {
  int k = 0;
  for (int in : shaped) c->set_output(k++, in < 0 ? other : c->input(in));
  return absl::OkStatus();
}

// [batch, n * cell] from input `x`'s first dimension and input `state`'s
// last.
PartialTensorShape Gates(InferenceContext* c, int x, int state, int n) {
  const PartialTensorShape& xs = c->input(x);
  const PartialTensorShape& hs = c->input(state);
  const int64_t batch = xs.dims() == 2 ? xs.dim_size(0) : -1;
  const int64_t cell = hs.dims() == 2 ? hs.dim_size(1) : -1;
  return PartialTensorShape({batch, cell < 0 ? -1 : n * cell});
}

[[maybe_unused]] const bool kRegistered = [] {
  const char* kLstmInputs[] = {"x: T",   "cs_prev: T", "h_prev: T", "w: T",
                               "wci: T", "wcf: T",     "wco: T",    "b: T"};
  const char* kLstmOutputs[] = {"i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T", "h: T"};
  for (const char* name : {"LSTMBlockCell", "BlockLSTM", "BlockLSTMV2"}) {
    const bool sequence = name[0] == 'B';
    const bool v2 = std::string(name) == "BlockLSTMV2";
    OpDefBuilder b(name, __FILE__);
    if (sequence) b.Input("seq_len_max: int64");
    for (const char* in : kLstmInputs) b.Input(in);
    for (const char* out : kLstmOutputs) b.Output(out);
    if (!v2) b.Attr("forget_bias: float = 1");
    b.Attr(v2 ? "cell_clip: float = 0" : "cell_clip: float = 3")
        .Attr("use_peephole: bool = false")
        .Attr("T: {half, float}")
        .Doc(sequence ? "LSTMBlockCell over x [time, batch, input] for seq_len_max steps."
                      : "One LSTM step: gates i, ci, f, o from [x, h_prev] w + b (peepholes "
                        "wci, wcf, wco), the cell state cs clipped to cell_clip, h = o tanh(cs).")
        .SetShapeFn([sequence](InferenceContext* c) {
          return StateShapes(c, sequence ? 1 : 0, sequence ? 3 : 2, sequence);
        });
    RegisterOp(b);
  }
  const char* kGruInputs[] = {"x: T", "h_prev: T", "w_ru: T", "w_c: T", "b_ru: T", "b_c: T"};
  OpDefBuilder gru("GRUBlockCell", __FILE__);
  for (const char* in : kGruInputs) gru.Input(in);
  RegisterOp(gru.Output("r: T")
                 .Output("u: T")
                 .Output("c: T")
                 .Output("h: T")
                 .Attr("T: {float}")
                 .Doc("One GRU step: r, u from [x, h_prev] w_ru + b_ru, c = tanh([x, r h_prev] "
                      "w_c + b_c), h = u h_prev + (1 - u) c.")
                 .SetShapeFn([](InferenceContext* c) { return StateShapes(c, 0, 1, false); }));

  // The gradient ops take the forward's inputs, its activations (i, cs, f,
  // o, ci, co, and h for the sequences) and dL/dcs, dL/dh.
  OpDefBuilder cell_grad("LSTMBlockCellGrad", __FILE__);
  for (const char* in : kLstmInputs) cell_grad.Input(in);
  for (const char* in :
       {"i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T", "cs_grad: T", "h_grad: T"}) {
    cell_grad.Input(in);
  }
  RegisterOp(cell_grad.Output("cs_prev_grad: T")
                 .Output("dicfo: T")
                 .Output("wci_grad: T")
                 .Output("wcf_grad: T")
                 .Output("wco_grad: T")
                 .Attr("use_peephole: bool")
                 .Attr("T: {half, float}")
                 .Doc("LSTMBlockCell's backward: dL/dcs_prev, the gates' pre-activation "
                      "gradient dicfo [batch, 4 cell] (TF's gradient turns it into x's, "
                      "h_prev's, w's and b's) and the peepholes'.")
                 .SetShapeFn([](InferenceContext* c) {
                   return ShapesOfInputs(c, {1, -1, 4, 5, 6}, Gates(c, 0, 1, 4));
                 }));
  for (const char* name : {"BlockLSTMGrad", "BlockLSTMGradV2"}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("seq_len_max: int64");
    for (const char* in : kLstmInputs) b.Input(in);
    for (const char* out : kLstmOutputs) b.Input(out);
    RegisterOp(b.Input("cs_grad: T")
                   .Input("h_grad: T")
                   .Output("x_grad: T")
                   .Output("cs_prev_grad: T")
                   .Output("h_prev_grad: T")
                   .Output("w_grad: T")
                   .Output("wci_grad: T")
                   .Output("wcf_grad: T")
                   .Output("wco_grad: T")
                   .Output("b_grad: T")
                   .Attr("use_peephole: bool")
                   .Attr("T: {half, float}")
                   .Doc("The backward of BlockLSTM (V2: of BlockLSTMV2) through its "
                        "seq_len_max steps, from dL/dcs and dL/dh of every step.")
                   .SetShapeFn([](InferenceContext* c) {
                     return ShapesOfInputs(c, {1, 2, 3, 4, 5, 6, 7, 8});
                   }));
  }
  OpDefBuilder gru_grad("GRUBlockCellGrad", __FILE__);
  for (const char* in : kGruInputs) gru_grad.Input(in);
  RegisterOp(gru_grad.Input("r: T")
                 .Input("u: T")
                 .Input("c: T")
                 .Input("d_h: T")
                 .Output("d_x: T")
                 .Output("d_h_prev: T")
                 .Output("d_c_bar: T")
                 .Output("d_r_bar_u_bar: T")
                 .Attr("T: {float}")
                 .Doc("GRUBlockCell's backward: dL/dx, dL/dh_prev and the pre-activation "
                      "gradients of c and of r, u (TF's gradient turns them into the "
                      "weights' and biases').")
                 .SetShapeFn([](InferenceContext* c) {
                   c->set_output(0, c->input(0));
                   c->set_output(1, c->input(1));
                   c->set_output(2, Gates(c, 0, 1, 1));
                   c->set_output(3, Gates(c, 0, 1, 2));
                   return absl::OkStatus();
                 }));
  return true;
}();

}  // namespace
}  // namespace towerflow
