// QuantizeAndDequantizeV2/V3/V4 (tf.quantization.quantize_and_dequantize)
// and QuantizeAndDequantizeV4Grad (ops/fake_quant_ops.cc), TF's arithmetic:
// - the range [min, max] is the input's own (per slice of `axis`), or the
//   given scalars (range_given; TF takes no per-channel given range);
// - the scale is the largest that maps the range into the num_bits integer
//   range ([-2^(b-1) (+1 with narrow_range), 2^(b-1) - 1] signed, [0, 2^b - 1]
//   unsigned) with 0 kept at 0: the side that limits it keeps its end, the
//   other end moves to the integer range's end times 1 / scale;
// - out = round(x * scale) / scale, x first clamped to the (moved) range
//   when it was given; round half to even, or half up (V2/V4's round_mode).
// V4Grad passes the gradient where min <= x <= max (the given range) and
// gives zeros for the range's own gradients.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

// input viewed as [outer, depth, inner] for a per-channel axis (depth 1 and
// the whole tensor as inner for axis -1).
struct AxisView {
  int64_t outer = 1, depth = 1, inner = 1;
};

absl::StatusOr<AxisView> ViewOf(const TensorShape& shape, int64_t axis) {
  if (axis < -1) {
    return absl::InvalidArgumentError(absl::StrCat("Axis must be at least -1. Found ", axis));
  }
  if (axis != -1 && axis >= shape.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape must be at least rank ", axis + 1, " but is rank ", shape.dims()));
  }
  AxisView v;
  if (axis == -1) {
    v.inner = shape.num_elements();
    return v;
  }
  for (int d = 0; d < axis; ++d) v.outer *= shape.dim_size(d);
  v.depth = shape.dim_size(static_cast<int>(axis));
  for (int d = static_cast<int>(axis) + 1; d < shape.dims(); ++d) v.inner *= shape.dim_size(d);
  return v;
}

struct QuantizeAttrs {
  bool signed_input = true;
  int64_t num_bits = 8;
  bool range_given = false;
  bool narrow_range = false;
  bool half_up = false;
  int64_t axis = -1;

  absl::Status CheckBits(absl::string_view signed_name) const {
    if (num_bits <= 0 || num_bits >= (signed_input ? 62 : 63)) {
      return absl::InvalidArgumentError(absl::StrCat("num_bits is out of range: ", num_bits,
                                                     " with ", signed_name, " ",
                                                     signed_input ? 1 : 0));
    }
    return absl::OkStatus();
  }
};

// One slice's range moved to the scale, as TF's ComputeQuantizationRange.
template <typename T>
struct Scaled {
  T min, max, scale, inverse;
};
template <typename T>
Scaled<T> ScaleFor(const QuantizeAttrs& a, T min_range, T max_range) {
  const int64_t half = int64_t{1} << (a.num_bits - 1);
  const int64_t min_q = a.signed_input ? (a.narrow_range ? -half + 1 : -half) : 0;
  const int64_t max_q = a.signed_input ? half - 1 : (int64_t{1} << a.num_bits) - 1;
  const T from_min = static_cast<T>(min_q) * min_range > 0 ? static_cast<T>(min_q) / min_range
                                                           : std::numeric_limits<T>::max();
  const T from_max = static_cast<T>(max_q) * max_range > 0 ? static_cast<T>(max_q) / max_range
                                                           : std::numeric_limits<T>::max();
  Scaled<T> s{min_range, max_range, 0, 0};
  if (from_min < from_max) {
    s.scale = from_min;
    s.inverse = min_range / static_cast<T>(min_q);
    s.max = static_cast<T>(max_q) * s.inverse;
  } else {
    s.scale = from_max;
    s.inverse = max_range / static_cast<T>(max_q);
    s.min = static_cast<T>(min_q) * s.inverse;
  }
  return s;
}

template <typename T>
absl::Status QuantizeAndDequantize(KernelContext* ctx, const QuantizeAttrs& a) {
  const Tensor& input = ctx->input(0);
  TW_ASSIGN_OR_RETURN(const AxisView v, ViewOf(input.shape(), a.axis));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
  const T* x = input.data<T>();
  T* y = out->data<T>();
  std::vector<T> lo(v.depth, T(0)), hi(v.depth, T(0));
  if (a.range_given) {
    for (const auto& [i, name] : {std::pair{1, "input_min"}, std::pair{2, "input_max"}}) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar."));
      }
    }
    const T min = *ctx->input(1).data<T>(), max = *ctx->input(2).data<T>();
    if (!(min <= max)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid range: input_min ", min, " > input_max ", max));
    }
    std::fill(lo.begin(), lo.end(), min);
    std::fill(hi.begin(), hi.end(), max);
  } else if (input.NumElements() > 0) {
    // Each slice's minimum and maximum (NaNs left out).
    for (int64_t c = 0; c < v.depth; ++c) {
      bool first = true;
      for (int64_t o = 0; o < v.outer; ++o) {
        const T* row = x + (o * v.depth + c) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) {
          if (std::isnan(row[i])) continue;
          lo[c] = first ? row[i] : std::min(lo[c], row[i]);
          hi[c] = first ? row[i] : std::max(hi[c], row[i]);
          first = false;
        }
      }
    }
  }
  for (int64_t c = 0; c < v.depth; ++c) {
    const Scaled<T> s = ScaleFor<T>(a, lo[c], hi[c]);
    for (int64_t o = 0; o < v.outer; ++o) {
      const int64_t at = (o * v.depth + c) * v.inner;
      using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
      using MutableRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
      const Row in(x + at, v.inner);
      MutableRow to(y + at, v.inner);
      if (a.range_given) {
        to = in.min(s.max).max(s.min) * s.scale;
      } else {
        to = in * s.scale;
      }
      if (a.half_up) {
        to = (to + T(0.5)).floor();
      } else {
        to = to.rint();
      }
      to *= s.inverse;
    }
  }
  return absl::OkStatus();
}

// QuantizeAndDequantizeV2 and V4 (kV3: num_bits an input, half to even).
template <typename T, bool kV3>
class QuantizeAndDequantizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("signed_input", &attrs_.signed_input));
    TW_RETURN_IF_ERROR(c.GetAttr("range_given", &attrs_.range_given));
    TW_RETURN_IF_ERROR(c.GetAttr("narrow_range", &attrs_.narrow_range));
    TW_RETURN_IF_ERROR(c.GetAttr("axis", &attrs_.axis));
    if constexpr (kV3) return absl::OkStatus();
    TW_RETURN_IF_ERROR(c.GetAttr("num_bits", &attrs_.num_bits));
    std::string round_mode;
    TW_RETURN_IF_ERROR(c.GetAttr("round_mode", &round_mode));
    if (round_mode != "HALF_TO_EVEN" && round_mode != "HALF_UP") {
      return absl::InvalidArgumentError(absl::StrCat(
          "Round mode string must be 'HALF_UP' or 'HALF_TO_EVEN', receive round_mode string: ",
          round_mode));
    }
    attrs_.half_up = round_mode == "HALF_UP";
    return attrs_.CheckBits("signed_input_");
  }
  absl::Status Compute(KernelContext* ctx) override {
    QuantizeAttrs a = attrs_;
    if constexpr (kV3) {
      const Tensor& bits = ctx->input(3);
      if (bits.dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Invalid shape. The `num_bits` tensor should be a scalar. Got dimensions: ",
            bits.dims()));
      }
      a.num_bits = *bits.data<int32_t>();
      TW_RETURN_IF_ERROR(a.CheckBits("`signed_input_`"));
    }
    return QuantizeAndDequantize<T>(ctx, a);
  }

 private:
  QuantizeAttrs attrs_;
};
template <typename T>
using QdqV2Op = QuantizeAndDequantizeOp<T, false>;
template <typename T>
using QdqV3Op = QuantizeAndDequantizeOp<T, true>;

template <typename T>
class QuantizeAndDequantizeV4GradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("axis", &axis_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& input = ctx->input(1);
    const Tensor& min_t = ctx->input(2);
    const Tensor& max_t = ctx->input(3);
    if (g.shape() != input.shape()) {
      return absl::InvalidArgumentError("gradient and input must be the same size");
    }
    if (axis_ < -1) {
      return absl::InvalidArgumentError(absl::StrCat("Axis must be at least -1. Found ", axis_));
    }
    if (axis_ != -1 && axis_ >= input.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Axis should be -1 or 0 or a positive value less than ", input.dims(),
                       "but given axis value was ", axis_));
    }
    TW_ASSIGN_OR_RETURN(const AxisView v, ViewOf(input.shape(), axis_));
    if (axis_ == -1) {
      for (const auto& [t, name] :
           {std::pair{&min_t, "input_min"}, std::pair{&max_t, "input_max"}}) {
        if (t->dims() != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, " must be a scalar if axis is unspecified"));
        }
      }
    } else {
      for (const auto& [t, name] : {std::pair{&min_t, "min"}, std::pair{&max_t, "max"}}) {
        if (t->dims() != 1 || t->dim_size(0) != v.depth) {
          return absl::InvalidArgumentError(absl::StrCat(name, " has incorrect size, expected ",
                                                         v.depth, " was ", t->NumElements()));
        }
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, input.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * dmin, ctx->allocate_output(1, min_t.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * dmax, ctx->allocate_output(2, max_t.shape()));
    std::fill_n(dmin->data<T>(), dmin->NumElements(), T(0));
    std::fill_n(dmax->data<T>(), dmax->NumElements(), T(0));
    const T* gs = g.data<T>();
    const T* xs = input.data<T>();
    T* out = dx->data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t c = 0; c < v.depth; ++c) {
        const T lo = min_t.data<T>()[c], hi = max_t.data<T>()[c];
        const int64_t at = (o * v.depth + c) * v.inner;
        for (int64_t i = at; i < at + v.inner; ++i) {
          out[i] = xs[i] >= lo && xs[i] <= hi ? gs[i] : T(0);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = -1;
};

TW_REGISTER_KERNELS(quantize_and_dequantize_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<QdqV2Op, float, double>(cpu("QuantizeAndDequantizeV2"), "T");
  RegisterTypedKernels<QdqV2Op, float, double>(cpu("QuantizeAndDequantizeV4"), "T");
  RegisterTypedKernels<QdqV3Op, float, double>(
      cpu("QuantizeAndDequantizeV3").HostMemory("num_bits"), "T");
  RegisterTypedKernels<QuantizeAndDequantizeV4GradOp, float, double>(
      cpu("QuantizeAndDequantizeV4Grad"), "T");
}

}  // namespace
}  // namespace towerflow
