// The fused recurrent cells (ops/rnn_ops.cc), with TF's gate arithmetic
// (lstm_ops.h, gru_ops.h): the gate pre-activations are one GEMM of the
// concatenated [x, h_prev] (Eigen's), the rest elementwise over [batch,
// cell]. BlockLSTM's steps past seq_len_max are zero (TF leaves them
// uninitialized); a seq_len_max past the sequence is InvalidArgument (TF's
// kernel CHECK-fails).
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
      const Tensor& len = ctx->input(0);
      if (len.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("seq_len_max must be a scalar, got ", len.shape().DebugString()));
      }
      steps = *len.data<int64_t>();
      if (steps < 0 || steps > time) {
        return absl::InvalidArgumentError(
            absl::StrCat("seq_len_max ", steps, " must be in [0, ", time, "]"));
      }
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

class GruOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& h_prev = ctx->input(1);
    const Tensor& w_ru = ctx->input(2);
    const Tensor& w_c = ctx->input(3);
    const Tensor& b_ru = ctx->input(4);
    const Tensor& b_c = ctx->input(5);
    if (x.dims() != 2 || h_prev.dims() != 2) {
      return absl::InvalidArgumentError("x and h_prev must be 2-D");
    }
    const int64_t batch = x.dim_size(0), input = x.dim_size(1), cell = h_prev.dim_size(1);
    if (h_prev.dim_size(0) != batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("h_prev.dims(0) != batch_size: ", h_prev.dim_size(0), " vs. ", batch));
    }
    const auto check = [](const Tensor& t, std::initializer_list<int64_t> dims, const char* name) {
      if (t.shape() != TensorShape(dims)) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, " must be ", TensorShape(dims).DebugString(), ", got ", t.shape().DebugString()));
      }
      return absl::OkStatus();
    };
    TW_RETURN_IF_ERROR(check(w_ru, {input + cell, 2 * cell}, "w_ru"));
    TW_RETURN_IF_ERROR(check(w_c, {input + cell, cell}, "w_c"));
    TW_RETURN_IF_ERROR(check(b_ru, {2 * cell}, "b_ru"));
    TW_RETURN_IF_ERROR(check(b_c, {cell}, "b_c"));
    float* out[4];
    for (int k = 0; k < 4; ++k) {
      TW_ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(k, TensorShape({batch, cell})));
      out[k] = t->data<float>();
    }
    if (batch == 0 || cell == 0) return absl::OkStatus();
    const ConstMat h(h_prev.data<float>(), batch, cell);
    Mat xh(batch, input + cell);
    xh.leftCols(input) = ConstMat(x.data<float>(), batch, input);
    xh.rightCols(cell) = h;
    Rows ru = (xh * ConstMat(w_ru.data<float>(), input + cell, 2 * cell)).array();
    ru.rowwise() += Vec(b_ru.data<float>(), 2 * cell);
    ru = Sigmoid(ru);
    const Rows r = ru.leftCols(cell), u = ru.rightCols(cell);
    xh.rightCols(cell) = (h.array() * r).matrix();
    Rows cbar = (xh * ConstMat(w_c.data<float>(), input + cell, cell)).array();
    cbar.rowwise() += Vec(b_c.data<float>(), cell);
    const Rows c = cbar.tanh();
    const Rows hn = u * h.array() + (1.0f - u) * c;
    const Rows* values[4] = {&r, &u, &c, &hn};
    for (int k = 0; k < 4; ++k) Eigen::Map<Rows>(out[k], batch, cell) = *values[k];
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
}

}  // namespace
}  // namespace towerflow
