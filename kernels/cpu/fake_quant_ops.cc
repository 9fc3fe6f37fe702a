// The fake-quantisation kernels (ops/fake_quant_ops.cc), with TF's
// arithmetic to the bit: the range is nudged so that 0 falls on a step,
// inputs are clamped to it and rounded to the nearest of its
// quant_max - quant_min steps (quant_min 1 with narrow_range, else 0;
// quant_max 2^num_bits - 1). Gradients pass where the input lies in the
// nudged range; for the *Vars forms, the gradients below (above) it are
// the range's min (max) gradient. A tensor range of [0, 0] gives zeros and
// passes every gradient (TF's special case).
//
// Built without FMA contraction (kernels/BUILD): TF rounds the product
// before the sum.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

using Rows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRows = Eigen::Map<const Rows>;
using MutableRows = Eigen::Map<Rows>;

struct Steps {
  int quant_min = 0, quant_max = 255;

  absl::Status Init(const KernelConstruction& c) {
    int64_t num_bits = 8;
    bool narrow_range = false;
    TW_RETURN_IF_ERROR(c.GetAttr("num_bits", &num_bits));
    TW_RETURN_IF_ERROR(c.GetAttr("narrow_range", &narrow_range));
    if (num_bits < 2 || num_bits > 16) {
      return absl::InvalidArgumentError("num_bits must be between 2 and 16, inclusive");
    }
    quant_min = narrow_range ? 1 : 0;
    quant_max = (1 << num_bits) - 1;
    return absl::OkStatus();
  }
};

// The range [min, max] moved so that 0 is one of its steps (TF's Nudge),
// with the step (scale), its inverse computed from the range (not as
// 1 / scale) and the number of steps from min to 0 (zero).
struct Nudged {
  float min = 0, max = 0, scale = 0, inv = 0, zero = 0;
  bool off = false;  // min == max == 0: outputs 0, gradients pass whole
};
Nudged Nudge(float min, float max, const Steps& steps) {
  Nudged r;
  if (min == 0.0f && max == 0.0f) {
    r.off = true;
    return r;
  }
  const float qmin = static_cast<float>(steps.quant_min);
  const float qmax = static_cast<float>(steps.quant_max);
  r.scale = (max - min) / (qmax - qmin);
  r.inv = (qmax - qmin) / (max - min);
  const float zero_from_min = qmin - min / r.scale;
  uint16_t zero = 0;
  if (zero_from_min < qmin) {
    zero = static_cast<uint16_t>(steps.quant_min);
  } else if (zero_from_min > qmax) {
    zero = static_cast<uint16_t>(steps.quant_max);
  } else {
    zero = static_cast<uint16_t>(std::round(zero_from_min));
  }
  r.min = (qmin - zero) * r.scale;
  r.max = (qmax - zero) * r.scale;
  r.zero = std::floor(-r.min * r.inv + 0.5f);
  return r;
}

// out = the rows x [rows, d] quantised with range r[c] for column c:
// floor((clamp(x) - min) * inv - zero + 0.5) * scale, as TF computes it;
// `divide` by the scale instead of multiplying by its inverse (TF's Vars
// form does).
void Quantize(ThreadPool* pool, const float* x, int64_t rows, const std::vector<Nudged>& ranges,
              bool divide, float* out) {
  const int64_t d = static_cast<int64_t>(ranges.size());
  Eigen::Array<float, 1, Eigen::Dynamic> lo(d), hi(d), scale(d), inv(d), zero(d), on(d);
  for (int64_t c = 0; c < d; ++c) {
    const Nudged& r = ranges[c];
    lo(c) = r.min;
    hi(c) = r.max;
    scale(c) = r.scale;
    inv(c) = r.inv;
    zero(c) = r.zero;
    on(c) = r.off ? 0.0f : 1.0f;
  }
  const bool any_off = d > 0 && on.minCoeff() == 0.0f;
  pool->ParallelFor(rows, 8 * d, [&](int64_t begin, int64_t end) {
    const int64_t n = end - begin;
    const ConstRows in(x + begin * d, n, d);
    MutableRows o(out + begin * d, n, d);
    const auto l = lo.replicate(n, 1);
    const auto shifted = in.min(hi.replicate(n, 1)).max(l) - l;
    if (divide) {
      o = (shifted / scale.replicate(n, 1) - zero.replicate(n, 1) + 0.5f).floor() *
          scale.replicate(n, 1);
    } else {
      o = (shifted * inv.replicate(n, 1) - zero.replicate(n, 1) + 0.5f).floor() *
          scale.replicate(n, 1);
    }
    // A range of [0, 0] gives zeros (its scale is 0 and its inverse NaN).
    if (any_off) {
      o = (on.replicate(n, 1) > 0.0f).select(o, 0.0f);
    }
  });
}

class FakeQuantArgsOp : public OpKernel {
 public:
  explicit FakeQuantArgsOp(bool gradient) : gradient_(gradient) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(steps_.Init(c));
    float min = 0, max = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("min", &min));
    TW_RETURN_IF_ERROR(c.GetAttr("max", &max));
    if (!(min < max)) {
      return absl::InvalidArgumentError(
          absl::StrCat("min has to be smaller than max, was: ", min, " >= ", max));
    }
    range_ = Nudge(min, max, steps_);
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(gradient_ ? 1 : 0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    if (!gradient_) {
      Quantize(ctx->intra_op_pool(), x.data<float>(), x.NumElements(), {range_}, false,
               out->data<float>());
      return absl::OkStatus();
    }
    const Tensor& g = ctx->input(0);
    if (g.shape() != x.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Inputs to operation ", ctx->name(), " of type ", ctx->op(),
                       " must have the same size and shape.  Input 0: ", g.shape().DebugString(),
                       " != input 1: ", x.shape().DebugString()));
    }
    const auto in = x.flat<float>();
    out->flat<float>().device(ctx->eigen_cpu_device()) =
        (in >= range_.min && in <= range_.max).select(g.flat<float>(), in.constant(0.0f));
    return absl::OkStatus();
  }

 private:
  const bool gradient_;
  Steps steps_;
  Nudged range_{};
};

// The per-range checks of the Vars forms: min and max scalars (Vars) or
// vectors as long as the last dimension (PerChannel).
absl::StatusOr<std::vector<Nudged>> Ranges(const Tensor& x, const Tensor& min, const Tensor& max,
                                           bool per_channel, const Steps& steps) {
  int64_t d = 1;
  if (per_channel) {
    if (x.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs need a channel dimension (rank >= 1), got shape ", x.shape().DebugString()));
    }
    d = x.shape().dim_size(x.dims() - 1);
  }
  for (const auto& [name, t] : {std::pair{"min", &min}, {"max", &max}}) {
    if (!per_channel && t->dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("`", name, "` must be rank 0 but is rank ", t->dims()));
    }
    if (per_channel && (t->dims() != 1 || t->NumElements() != d)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " has incorrect size, expected ", d, " was ", t->NumElements()));
    }
  }
  std::vector<Nudged> ranges(d);
  for (int64_t c = 0; c < d; ++c) {
    ranges[c] = Nudge(min.data<float>()[c], max.data<float>()[c], steps);
  }
  return ranges;
}

class FakeQuantVarsOp : public OpKernel {
 public:
  explicit FakeQuantVarsOp(bool per_channel) : per_channel_(per_channel) {}
  absl::Status Init(const KernelConstruction& c) override { return steps_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const std::vector<Nudged> ranges,
                        Ranges(x, ctx->input(1), ctx->input(2), per_channel_, steps_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const int64_t d = static_cast<int64_t>(ranges.size());
    if (x.NumElements() == 0) return absl::OkStatus();
    // TF divides by the scale for one range and multiplies by its inverse
    // per channel.
    Quantize(ctx->intra_op_pool(), x.data<float>(), x.NumElements() / d, ranges, !per_channel_,
             out->data<float>());
    return absl::OkStatus();
  }

 private:
  const bool per_channel_;
  Steps steps_;
};

class FakeQuantVarsGradientOp : public OpKernel {
 public:
  explicit FakeQuantVarsGradientOp(bool per_channel) : per_channel_(per_channel) {}
  absl::Status Init(const KernelConstruction& c) override { return steps_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (g.shape() != x.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradients and inputs must have one shape, got ", g.shape().DebugString(),
                       " and ", x.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(const std::vector<Nudged> ranges,
                        Ranges(x, ctx->input(2), ctx->input(3), per_channel_, steps_));
    const int64_t d = static_cast<int64_t>(ranges.size());
    const TensorShape range_shape = per_channel_ ? TensorShape({d}) : TensorShape();
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, x.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * dmin, ctx->allocate_output(1, range_shape));
    TW_ASSIGN_OR_RETURN(Tensor * dmax, ctx->allocate_output(2, range_shape));
    const int64_t rows = d == 0 ? 0 : x.NumElements() / d;
    const ConstRows in(x.data<float>(), rows, d), grad(g.data<float>(), rows, d);
    MutableRows out(dx->data<float>(), rows, d);
    float* lo_sum = dmin->data<float>();
    float* hi_sum = dmax->data<float>();
    for (int64_t c = 0; c < d; ++c) {
      const Nudged& r = ranges[c];
      const auto col = in.col(c);
      if (r.off) {  // [0, 0]: every gradient passes to the input
        out.col(c) = grad.col(c);
        lo_sum[c] = hi_sum[c] = 0.0f;
        continue;
      }
      out.col(c) = (col >= r.min && col <= r.max).select(grad.col(c), 0.0f);
      lo_sum[c] = (col < r.min).select(grad.col(c), 0.0f).sum();
      hi_sum[c] = (col > r.max).select(grad.col(c), 0.0f).sum();
    }
    return absl::OkStatus();
  }

 private:
  const bool per_channel_;
  Steps steps_;
};

TW_REGISTER_KERNELS(fake_quant_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("FakeQuantWithMinMaxArgs"),
                 [] { return std::make_unique<FakeQuantArgsOp>(false); });
  RegisterKernel(cpu("FakeQuantWithMinMaxArgsGradient"),
                 [] { return std::make_unique<FakeQuantArgsOp>(true); });
  RegisterKernel(cpu("FakeQuantWithMinMaxVars"),
                 [] { return std::make_unique<FakeQuantVarsOp>(false); });
  RegisterKernel(cpu("FakeQuantWithMinMaxVarsPerChannel"),
                 [] { return std::make_unique<FakeQuantVarsOp>(true); });
  RegisterKernel(cpu("FakeQuantWithMinMaxVarsGradient"),
                 [] { return std::make_unique<FakeQuantVarsGradientOp>(false); });
  RegisterKernel(cpu("FakeQuantWithMinMaxVarsPerChannelGradient"),
                 [] { return std::make_unique<FakeQuantVarsGradientOp>(true); });
}

}  // namespace
}  // namespace towerflow
