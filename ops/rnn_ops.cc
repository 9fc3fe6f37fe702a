// Fused recurrent cells of tf.contrib.rnn (kernels/cpu/rnn_ops.cc):
// LSTMBlockCell (one LSTM step), BlockLSTM and BlockLSTMV2 (the step over
// a sequence; V2 with Keras's gate order and no forget bias) and
// GRUBlockCell (one GRU step). x is [batch, input] ([time, batch, input]
// for the sequences); the states and gates [batch, cell].
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
  RegisterOp(OpDefBuilder("GRUBlockCell", __FILE__)
                 .Input("x: T")
                 .Input("h_prev: T")
                 .Input("w_ru: T")
                 .Input("w_c: T")
                 .Input("b_ru: T")
                 .Input("b_c: T")
                 .Output("r: T")
                 .Output("u: T")
                 .Output("c: T")
                 .Output("h: T")
                 .Attr("T: {float}")
                 .Doc("One GRU step: r, u from [x, h_prev] w_ru + b_ru, c = tanh([x, r h_prev] "
                      "w_c + b_c), h = u h_prev + (1 - u) c.")
                 .SetShapeFn([](InferenceContext* c) { return StateShapes(c, 0, 1, false); }));
  return true;
}();

}  // namespace
}  // namespace towerflow
