// The fused recurrent cells (ops/rnn_ops.cc), with TF's gate arithmetic
// (lstm_ops.h, gru_ops.h): the gate pre-activations are one GEMM of the
// concatenated [x, h_prev] (Eigen's), the rest elementwise over [batch,
// cell]. BlockLSTM's steps past seq_len_max are zero (TF leaves them
// uninitialized); a seq_len_max past the sequence is InvalidArgument (TF's
// kernel CHECK-fails). The gradient ops are TF's LSTMBlockCellBprop,
// BlockLSTMBprop and GRUBlockCellBprop: the clip is taken as the identity
// and only dL/dcs and dL/dh enter, as in TF; their activation inputs are
// checked against the forward's shapes (TF's BlockLSTMGrad checks only
// their ranks).
#include <algorithm>
#include <cstdint>
#include <string>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

using Rows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMat = Eigen::Map<const Mat>;
using Vec = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;

Rows Sigmoid(const Rows& x) { return (1.0f + (-x).exp()).inverse(); }

// Where each gate's block of columns lies in the pre-activations.
struct GateLayout {
  int i, ci, f, o;
};
constexpr GateLayout kIcfo = {0, 1, 2, 3};  // LSTMBlockCell, BlockLSTM
constexpr GateLayout kIfco = {0, 2, 1, 3};  // BlockLSTMV2 (Keras's order)

struct LstmAttrs {
  float forget_bias = 0, cell_clip = 0;
  bool peephole = false;
  GateLayout layout = kIcfo;
};

struct LstmShapes {
  int64_t batch, input, cell;
};

// Checks the weights against x [batch, input] and the states [batch, cell].
absl::StatusOr<LstmShapes> CheckLstm(KernelContext* ctx, int first, int64_t batch, int64_t input) {
  const Tensor& cs_prev = ctx->input(first + 1);
  const Tensor& h_prev = ctx->input(first + 2);
  const Tensor& w = ctx->input(first + 3);
  const Tensor& b = ctx->input(first + 7);
  for (const auto& [name, t] : {std::pair{"cs_prev", &cs_prev}, {"h_prev", &h_prev}}) {
    if (t->dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be 2-D, got ", t->shape().DebugString()));
    }
    if (t->dim_size(0) != batch) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ".dims(0) != batch_size: ", t->dim_size(0), " vs. ", batch));
    }
  }
  const int64_t cell = cs_prev.dim_size(1);
  if (h_prev.dim_size(1) != cell) {
    return absl::InvalidArgumentError(
        absl::StrCat("h_prev.dims(1) != cell_size: ", h_prev.dim_size(1), " vs. ", cell));
  }
  if (w.dims() != 2 || w.dim_size(0) != input + cell) {
    return absl::InvalidArgumentError(absl::StrCat(
        "w.dim_size(0) != input_size + cell_size: ", w.dims() == 2 ? w.dim_size(0) : -1, " vs. ",
        input + cell));
  }
  if (w.dim_size(1) != 4 * cell) {
    return absl::InvalidArgumentError(
        absl::StrCat("w.dim_size(1) != cell_size * 4: ", w.dim_size(1), " vs. ", 4 * cell));
  }
  if (b.dims() != 1 || b.dim_size(0) != 4 * cell) {
    return absl::InvalidArgumentError(
        absl::StrCat("b.dim_size(0) != cell_size * 4: ", b.NumElements(), " vs. ", 4 * cell));
  }
  for (int k = 4; k < 7; ++k) {
    const Tensor& peep = ctx->input(first + k);
    if (peep.dims() != 1 || peep.dim_size(0) != cell) {
      return absl::InvalidArgumentError(absl::StrCat("the peephole weights must be [cell_size] = [",
                                                     cell, "], got ", peep.shape().DebugString()));
    }
  }
  return LstmShapes{batch, input, cell};
}

// The number of steps to run: seq_len_max, a scalar in [0, time].
absl::StatusOr<int64_t> SeqLenMax(const Tensor& len, int64_t time) {
  if (len.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("seq_len_max must be a scalar, got ", len.shape().DebugString()));
  }
  const int64_t steps = *len.data<int64_t>();
  if (steps < 0 || steps > time) {
    return absl::InvalidArgumentError(
        absl::StrCat("seq_len_max ", steps, " must be in [0, ", time, "]"));
  }
  return steps;
}

// Inputs first.. of `names` must all have `shape`, [batch, cell] or [time,
// batch, cell] (the forward's activations and the gradients coming in);
// TF's messages name the dimension that differs.
absl::Status CheckShapes(KernelContext* ctx, int first, std::initializer_list<const char*> names,
                         const TensorShape& shape) {
  const bool sequence = shape.dims() == 3;
  int k = first;
  for (const char* name : names) {
    const Tensor& t = ctx->input(k++);
    if (t.dims() != shape.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be rank ", shape.dims(), ", got ", t.shape().DebugString()));
    }
    for (int d = 0; d < shape.dims(); ++d) {
      if (t.dim_size(d) == shape.dim_size(d)) continue;
      const char* what = d == shape.dims() - 1 ? "cell_size"
                         : d == 0 && sequence  ? "time_len"
                                               : "batch_size";
      return absl::InvalidArgumentError(absl::StrCat(name, ".dims(", d, ") != ", what, ": ",
                                                     t.dim_size(d), " vs. ", shape.dim_size(d)));
    }
  }
  return absl::OkStatus();
}

// One step from x [batch, input] and the states into the seven outputs.
void LstmStep(const LstmAttrs& a, const LstmShapes& s, const float* x, const float* cs_prev,
              const float* h_prev, const Tensor& w, const Tensor& wci, const Tensor& wcf,
              const Tensor& wco, const Tensor& b, float* const out[7]) {
  const int64_t n = s.batch, c = s.cell;
  Mat xh(n, s.input + c);
  xh.leftCols(s.input) = ConstMat(x, n, s.input);
  xh.rightCols(c) = ConstMat(h_prev, n, c);
  Rows gates = (xh * ConstMat(w.data<float>(), s.input + c, 4 * c)).array();
  gates.rowwise() += Vec(b.data<float>(), 4 * c);
  const Eigen::Map<const Rows> cs_in(cs_prev, n, c);
  const auto block = [&](int k) { return gates.middleCols(k * c, c); };
  const auto row = [&](const Tensor& t) { return Vec(t.data<float>(), c).replicate(n, 1); };
  const Rows i =
      Sigmoid(a.peephole ? Rows(block(a.layout.i) + cs_in * row(wci)) : Rows(block(a.layout.i)));
  const Rows ci = block(a.layout.ci).tanh();
  const Rows f = Sigmoid(a.peephole ? Rows(block(a.layout.f) + a.forget_bias + cs_in * row(wcf))
                                    : Rows(block(a.layout.f) + a.forget_bias));
  Rows cs = i * ci + f * cs_in;
  if (a.cell_clip > 0) cs = cs.min(a.cell_clip).max(-a.cell_clip);
  const Rows co = cs.tanh();
  const Rows o =
      Sigmoid(a.peephole ? Rows(block(a.layout.o) + cs * row(wco)) : Rows(block(a.layout.o)));
  const Rows* values[7] = {&i, &cs, &f, &o, &ci, &co, nullptr};
  const Rows h = o * co;
  values[6] = &h;
  for (int k = 0; k < 7; ++k) Eigen::Map<Rows>(out[k], n, c) = *values[k];
}

class LstmOp : public OpKernel {
 public:
  LstmOp(bool sequence, GateLayout layout) : sequence_(sequence) { attrs_.layout = layout; }
  absl::Status Init(const KernelConstruction& c) override {
    if (c.def().attr().count("forget_bias")) {
      TW_RETURN_IF_ERROR(c.GetAttr("forget_bias", &attrs_.forget_bias));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("cell_clip", &attrs_.cell_clip));
    return c.GetAttr("use_peephole", &attrs_.peephole);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const int first = sequence_ ? 1 : 0;
    const Tensor& x = ctx->input(first);
    if (x.dims() != (sequence_ ? 3 : 2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("x must be ", sequence_ ? 3 : 2, "-D, got ", x.shape().DebugString()));
    }
    const int64_t time = sequence_ ? x.dim_size(0) : 1;
    const int64_t batch = x.dim_size(sequence_ ? 1 : 0), input = x.dim_size(sequence_ ? 2 : 1);
    TW_ASSIGN_OR_RETURN(const LstmShapes s, CheckLstm(ctx, first, batch, input));
    int64_t steps = 1;
    if (sequence_) {
      TW_ASSIGN_OR_RETURN(steps, SeqLenMax(ctx->input(0), time));
    }
    const TensorShape shape =
        sequence_ ? TensorShape({time, batch, s.cell}) : TensorShape({batch, s.cell});
    float* out[7];
    for (int k = 0; k < 7; ++k) {
      TW_ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, shape));
      out[k] = t->data<float>();
      std::fill_n(out[k], t->NumElements(), 0.0f);
    }
    const int64_t state = batch * s.cell;
    for (int64_t t = 0; t < steps && state > 0; ++t) {
      const float* cs_prev =
          t == 0 ? ctx->input(first + 1).data<float>() : out[1] + (t - 1) * state;
      const float* h_prev = t == 0 ? ctx->input(first + 2).data<float>() : out[6] + (t - 1) * state;
      float* step[7];
      for (int k = 0; k < 7; ++k) step[k] = out[k] + t * state;
      LstmStep(attrs_, s, x.data<float>() + t * batch * input, cs_prev, h_prev,
               ctx->input(first + 3), ctx->input(first + 4), ctx->input(first + 5),
               ctx->input(first + 6), ctx->input(first + 7), step);
    }
    return absl::OkStatus();
  }

 private:
  const bool sequence_;
  LstmAttrs attrs_;
};

// The activations of one step, each [batch, cell].
struct LstmActs {
  const float *i, *cs, *f, *o, *ci, *co;
};

// One step back (TF's LSTMBlockCellBprop): from the step's activations and
// the gradients reaching cs and h (the later steps' included) to dgates,
// the gate pre-activations' gradient [batch, 4 cell] in a's layout, and
// dL/dcs_prev; the peephole gradients add into peep_grads (when a.peephole).
void LstmBackStep(const LstmAttrs& a, int64_t n, int64_t c, const float* cs_prev,
                  const LstmActs& act, const float* cs_grad, const float* h_grad,
                  const Tensor* const peeps[3], float* dgates, float* cs_prev_grad,
                  float* const peep_grads[3]) {
  using Map = Eigen::Map<const Rows>;
  const Map i(act.i, n, c), cs(act.cs, n, c), f(act.f, n, c), o(act.o, n, c), ci(act.ci, n, c),
      co(act.co, n, c), csp(cs_prev, n, c), dh(h_grad, n, c);
  const auto row = [&](int k) { return Vec(peeps[k]->data<float>(), c).replicate(n, 1); };
  const Rows d_o = o * (1.0f - o) * dh * co;
  Rows dcs = (1.0f - co * co) * dh * o + Map(cs_grad, n, c);
  if (a.peephole) dcs += d_o * row(2);
  const Rows dci = (1.0f - ci * ci) * dcs * i;
  const Rows df = f * (1.0f - f) * dcs * csp;
  const Rows di = i * (1.0f - i) * dcs * ci;
  Eigen::Map<Rows> g(dgates, n, 4 * c);
  g.middleCols(a.layout.i * c, c) = di;
  g.middleCols(a.layout.ci * c, c) = dci;
  g.middleCols(a.layout.f * c, c) = df;
  g.middleCols(a.layout.o * c, c) = d_o;
  Eigen::Map<Rows> cpg(cs_prev_grad, n, c);
  cpg = dcs * f;
  if (!a.peephole) return;
  cpg += di * row(0) + df * row(1);
  using Sums = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;
  Sums(peep_grads[0], c) += (di * csp).colwise().sum();
  Sums(peep_grads[1], c) += (df * csp).colwise().sum();
  Sums(peep_grads[2], c) += (d_o * cs).colwise().sum();
}

// Allocates outputs [first, first + count) shaped as inputs `like`.., zeroed.
absl::Status ZeroOutputs(KernelContext* ctx, int first, std::initializer_list<int> like,
                         float** out) {
  int k = first;
  for (int in : like) {
    TW_ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, ctx->input(in).shape()));
    out[k++] = t->data<float>();
    std::fill_n(t->data<float>(), t->NumElements(), 0.0f);
  }
  return absl::OkStatus();
}

// LSTMBlockCellGrad: inputs x, cs_prev, h_prev, w, wci, wcf, wco, b, then
// i, cs, f, o, ci, co, cs_grad, h_grad.
class LstmCellGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_peephole", &attrs_.peephole);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("x must be 2-D, got ", x.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(const LstmShapes s, CheckLstm(ctx, 0, x.dim_size(0), x.dim_size(1)));
    const int64_t n = s.batch, c = s.cell;
    TW_RETURN_IF_ERROR(CheckShapes(ctx, 8, {"i", "cs", "f", "o", "ci", "co", "cs_grad", "h_grad"},
                                   TensorShape({n, c})));
    float* out[5];
    TW_ASSIGN_OR_RETURN(Tensor * cs_prev_grad, ctx->allocate_output(0, TensorShape({n, c})));
    TW_ASSIGN_OR_RETURN(Tensor * dicfo, ctx->allocate_output(1, TensorShape({n, 4 * c})));
    out[0] = cs_prev_grad->data<float>();
    out[1] = dicfo->data<float>();
    TW_RETURN_IF_ERROR(ZeroOutputs(ctx, 2, {4, 5, 6}, out));
    if (n == 0 || c == 0) return absl::OkStatus();
    const auto in = [&](int k) { return ctx->input(k).data<float>(); };
    const Tensor* peeps[3] = {&ctx->input(4), &ctx->input(5), &ctx->input(6)};
    LstmBackStep(attrs_, n, c, in(1), {in(8), in(9), in(10), in(11), in(12), in(13)}, in(14),
                 in(15), peeps, out[1], out[0], out + 2);
    return absl::OkStatus();
  }

 private:
  LstmAttrs attrs_;
};

// BlockLSTMGrad and V2: inputs seq_len_max, x, cs_prev, h_prev, w, wci,
// wcf, wco, b, then i, cs, f, o, ci, co, h, cs_grad, h_grad, each [time,
// batch, cell]. Steps from seq_len_max - 1 down to 0; dL/dcs_prev and
// dL/dh_prev of one step join the next one's incoming gradients, the
// weights' gradients add up over the steps.
class BlockLstmGradOp : public OpKernel {
 public:
  explicit BlockLstmGradOp(GateLayout layout) { attrs_.layout = layout; }
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_peephole", &attrs_.peephole);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(1);
    if (x.dims() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("x must be 3-D, got ", x.shape().DebugString()));
    }
    const int64_t time = x.dim_size(0), n = x.dim_size(1), input = x.dim_size(2);
    TW_ASSIGN_OR_RETURN(const LstmShapes s, CheckLstm(ctx, 1, n, input));
    const int64_t c = s.cell;
    TW_RETURN_IF_ERROR(CheckShapes(ctx, 9,
                                   {"i", "cs", "f", "o", "ci", "co", "h", "cs_grad", "h_grad"},
                                   TensorShape({time, n, c})));
    TW_ASSIGN_OR_RETURN(const int64_t steps, SeqLenMax(ctx->input(0), time));
    float* out[8];
    TW_RETURN_IF_ERROR(ZeroOutputs(ctx, 0, {1, 2, 3, 4, 5, 6, 7, 8}, out));
    const int64_t state = n * c;
    if (state == 0) return absl::OkStatus();
    const auto in = [&](int k, int64_t t) { return ctx->input(k).data<float>() + t * state; };
    const Tensor* peeps[3] = {&ctx->input(5), &ctx->input(6), &ctx->input(7)};
    const ConstMat w(ctx->input(4).data<float>(), input + c, 4 * c);
    Eigen::Map<Mat> w_grad(out[3], input + c, 4 * c);
    Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> b_grad(out[7], 4 * c);
    Eigen::Map<Rows> cs_prev_grad(out[1], n, c), h_prev_grad(out[2], n, c);
    Rows cs_g(n, c), h_g(n, c);
    Mat dgates(n, 4 * c), xh(n, input + c), xh_grad(n, input + c);
    for (int64_t t = steps - 1; t >= 0; --t) {
      cs_g = cs_prev_grad + Eigen::Map<const Rows>(in(16, t), n, c);
      h_g = h_prev_grad + Eigen::Map<const Rows>(in(17, t), n, c);
      const float* cs_prev = t == 0 ? ctx->input(2).data<float>() : in(10, t - 1);
      const float* h_prev = t == 0 ? ctx->input(3).data<float>() : in(15, t - 1);
      LstmBackStep(attrs_, n, c, cs_prev,
                   {in(9, t), in(10, t), in(11, t), in(12, t), in(13, t), in(14, t)}, cs_g.data(),
                   h_g.data(), peeps, dgates.data(), out[1], out + 4);
      xh_grad.noalias() = dgates * w.transpose();
      Eigen::Map<Mat>(out[0] + t * n * input, n, input) = xh_grad.leftCols(input);
      h_prev_grad = xh_grad.rightCols(c).array();
      xh.leftCols(input) = ConstMat(x.data<float>() + t * n * input, n, input);
      xh.rightCols(c) = ConstMat(h_prev, n, c);
      w_grad.noalias() += xh.transpose() * dgates;
      b_grad += dgates.array().colwise().sum();
    }
    return absl::OkStatus();
  }

 private:
  LstmAttrs attrs_;
};

struct GruShapes {
  int64_t batch, input, cell;
};

// Checks GRUBlockCell's inputs x, h_prev, w_ru, w_c, b_ru, b_c (the
// gradient's first six).
absl::StatusOr<GruShapes> CheckGru(KernelContext* ctx) {
  const Tensor& x = ctx->input(0);
  const Tensor& h_prev = ctx->input(1);
  if (x.dims() != 2 || h_prev.dims() != 2) {
    return absl::InvalidArgumentError("x and h_prev must be 2-D");
  }
  const int64_t batch = x.dim_size(0), input = x.dim_size(1), cell = h_prev.dim_size(1);
  if (h_prev.dim_size(0) != batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("h_prev.dims(0) != batch_size: ", h_prev.dim_size(0), " vs. ", batch));
  }
  const TensorShape shapes[4] = {TensorShape({input + cell, 2 * cell}),
                                 TensorShape({input + cell, cell}), TensorShape({2 * cell}),
                                 TensorShape({cell})};
  const char* names[4] = {"w_ru", "w_c", "b_ru", "b_c"};
  for (int k = 0; k < 4; ++k) {
    const Tensor& t = ctx->input(2 + k);
    if (t.shape() != shapes[k]) {
      return absl::InvalidArgumentError(absl::StrCat(names[k], " must be ", shapes[k].DebugString(),
                                                     ", got ", t.shape().DebugString()));
    }
  }
  return GruShapes{batch, input, cell};
}

// Allocates outputs 0, 1, .. as [batch, widths[k]].
absl::Status AllocateRows(KernelContext* ctx, int64_t batch, std::initializer_list<int64_t> widths,
                          float** out) {
  int k = 0;
  for (int64_t width : widths) {
    TW_ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, TensorShape({batch, width})));
    out[k++] = t->data<float>();
  }
  return absl::OkStatus();
}

class GruOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const GruShapes s, CheckGru(ctx));
    const int64_t batch = s.batch, input = s.input, cell = s.cell;
    float* out[4];
    TW_RETURN_IF_ERROR(AllocateRows(ctx, batch, {cell, cell, cell, cell}, out));
    if (batch == 0 || cell == 0) return absl::OkStatus();
    const ConstMat h(ctx->input(1).data<float>(), batch, cell);
    Mat xh(batch, input + cell);
    xh.leftCols(input) = ConstMat(ctx->input(0).data<float>(), batch, input);
    xh.rightCols(cell) = h;
    Rows ru = (xh * ConstMat(ctx->input(2).data<float>(), input + cell, 2 * cell)).array();
    ru.rowwise() += Vec(ctx->input(4).data<float>(), 2 * cell);
    ru = Sigmoid(ru);
    const Rows r = ru.leftCols(cell), u = ru.rightCols(cell);
    xh.rightCols(cell) = (h.array() * r).matrix();
    Rows cbar = (xh * ConstMat(ctx->input(3).data<float>(), input + cell, cell)).array();
    cbar.rowwise() += Vec(ctx->input(5).data<float>(), cell);
    const Rows c = cbar.tanh();
    const Rows hn = u * h.array() + (1.0f - u) * c;
    const Rows* values[4] = {&r, &u, &c, &hn};
    for (int k = 0; k < 4; ++k) Eigen::Map<Rows>(out[k], batch, cell) = *values[k];
    return absl::OkStatus();
  }
};

// GRUBlockCellGrad (TF's GRUBlockCellBprop): inputs x, h_prev, w_ru, w_c,
// b_ru, b_c, r, u, c, d_h; outputs d_x, d_h_prev, d_c_bar, d_r_bar_u_bar.
class GruGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const GruShapes s, CheckGru(ctx));
    const int64_t n = s.batch, input = s.input, c = s.cell;
    TW_RETURN_IF_ERROR(CheckShapes(ctx, 6, {"r", "u", "c", "d_h"}, TensorShape({n, c})));
    float* out[4];
    TW_RETURN_IF_ERROR(AllocateRows(ctx, n, {input, c, c, 2 * c}, out));
    if (n == 0) return absl::OkStatus();
    using Map = Eigen::Map<const Rows>;
    const auto in = [&](int k) { return ctx->input(k).data<float>(); };
    const Map h(in(1), n, c), r(in(6), n, c), u(in(7), n, c), cc(in(8), n, c), dh(in(9), n, c);
    Eigen::Map<Rows> d_c_bar(out[2], n, c), d_ru(out[3], n, 2 * c);
    d_c_bar = dh * (1.0f - u) * (1.0f - cc * cc);
    d_ru.rightCols(c) = dh * (h - cc) * u * (1.0f - u);
    // [dL/dx from c, dL/d(r h_prev)] and [dL/dx, dL/dh_prev] from r and u.
    const Mat from_c = d_c_bar.matrix() * ConstMat(in(3), input + c, c).transpose();
    const Rows d_hr = from_c.rightCols(c).array();
    d_ru.leftCols(c) = d_hr * h * r * (1.0f - r);
    const Mat from_ru = d_ru.matrix() * ConstMat(in(2), input + c, 2 * c).transpose();
    Eigen::Map<Mat>(out[0], n, input) = from_ru.leftCols(input) + from_c.leftCols(input);
    Eigen::Map<Rows>(out[1], n, c) = from_ru.rightCols(c).array() + d_hr * r + dh * u;
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(rnn_ops) {
  const auto cpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceCpu).TypeConstraint<float>("T");
  };
  RegisterKernel(cpu("LSTMBlockCell"), [] { return std::make_unique<LstmOp>(false, kIcfo); });
  RegisterKernel(cpu("BlockLSTM"), [] { return std::make_unique<LstmOp>(true, kIcfo); });
  RegisterKernel(cpu("BlockLSTMV2"), [] { return std::make_unique<LstmOp>(true, kIfco); });
  RegisterKernel(cpu("GRUBlockCell"), MakeFactory<GruOp>());
  RegisterKernel(cpu("LSTMBlockCellGrad"), MakeFactory<LstmCellGradOp>());
  RegisterKernel(cpu("BlockLSTMGrad"), [] { return std::make_unique<BlockLstmGradOp>(kIcfo); });
  RegisterKernel(cpu("BlockLSTMGradV2"), [] { return std::make_unique<BlockLstmGradOp>(kIfco); });
  RegisterKernel(cpu("GRUBlockCellGrad"), MakeFactory<GruGradOp>());
}

}  // namespace
}  // namespace towerflow
