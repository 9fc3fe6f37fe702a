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
//
// QuantizeV2 and Dequantize (tf.quantization.quantize / dequantize; the
// Dequantize nodes that TF's quantize_weights transform puts after weights
// stored as quint8), with TF's arithmetic to the bit. The quantized types
// are stored as their integers (qint8 int8_t, quint8 uint8_t, qint16,
// quint16, qint32 int32_t). A range is one scalar pair, or one pair per
// slice of `axis`. The modes:
// - MIN_COMBINED: [min, max] spread over the type's whole range (signed
//   types shifted by half of it); QuantizeV2 first widens the range to hold
//   0 and to span at least ensure_minimum_range;
// - MIN_FIRST: the same spread with min rounded to a whole step, as TF's
//   quantization_utils.h (no per-axis form, as TF);
// - SCALED: 0 stays 0, one scale for both sides (the side that limits it
//   keeps its end), round half away from zero or half to even.
// Every float operation is TF's, in TF's order and precision (this file
// compiles without contracted multiply-adds, kernels/BUILD), and a float
// becomes the integer type as TF's x86 build converts it: truncated through
// int32, INT32_MIN where it does not fit (TruncateToInt32), then wrapped;
// a NaN that TF rounded first becomes 0 (RoundedToQuantized).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"
#include "kernels/cpu/quantization_util.h"

namespace towerflow {
namespace {

using quantization::Clamp;
using quantization::kHighest;
using quantization::kLowest;
using quantization::kSteps;
using quantization::TruncateToInt32;

// A tensor viewed as [outer, depth, inner] around `axis`: depth 1 and the
// whole tensor as inner for a negative axis. REQUIRES: axis < rank.
struct AxisView {
  int64_t outer = 1, depth = 1, inner = 1;
};
AxisView SlicesAlong(const TensorShape& shape, int64_t axis) {
  AxisView v;
  if (axis < 0) {
    v.inner = shape.num_elements();
    return v;
  }
  for (int d = 0; d < axis; ++d) v.outer *= shape.dim_size(d);
  v.depth = shape.dim_size(static_cast<int>(axis));
  for (int d = static_cast<int>(axis) + 1; d < shape.dims(); ++d) v.inner *= shape.dim_size(d);
  return v;
}

// QuantizeAndDequantize's view, its axis checked.
absl::StatusOr<AxisView> ViewOf(const TensorShape& shape, int64_t axis) {
  if (axis < -1) {
    return absl::InvalidArgumentError(absl::StrCat("Axis must be at least -1. Found ", axis));
  }
  if (axis != -1 && axis >= shape.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("Shape must be at least rank ",
                                                   static_cast<uint64_t>(axis) + 1, " but is rank ",
                                                   shape.dims()));
  }
  return SlicesAlong(shape, axis);
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

enum class Mode { kMinCombined, kMinFirst, kScaled };

absl::StatusOr<Mode> ParseMode(const std::string& s) {
  if (s == "MIN_COMBINED") return Mode::kMinCombined;
  if (s == "MIN_FIRST") return Mode::kMinFirst;
  if (s == "SCALED") return Mode::kScaled;
  return absl::InvalidArgumentError(
      absl::StrCat("Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '", s, "'"));
}

template <typename Q>
Q ToQuantized(float v) {
  return static_cast<Q>(TruncateToInt32(v));  // wraps, as TF's cast to the narrow types
}
// A value TF rounded before the cast (lrint's long, whose NaN wraps to 0).
template <typename Q>
Q RoundedToQuantized(float v) {
  return std::isnan(v) ? Q(0) : ToQuantized<Q>(v);
}

template <typename Q>
constexpr bool kSigned = std::numeric_limits<Q>::is_signed;
class QuantizeV2Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string mode, round_mode;
    TW_RETURN_IF_ERROR(c.GetAttr("mode", &mode));
    TW_ASSIGN_OR_RETURN(mode_, ParseMode(mode));
    TW_RETURN_IF_ERROR(c.GetAttr("round_mode", &round_mode));
    if (round_mode != "HALF_AWAY_FROM_ZERO" && round_mode != "HALF_TO_EVEN") {
      return absl::InvalidArgumentError(
          absl::StrCat("Round mode string must be 'HALF_AWAY_FROM_ZERO' or 'HALF_TO_EVEN', is '",
                       round_mode, "'"));
    }
    half_to_even_ = round_mode == "HALF_TO_EVEN";
    if (half_to_even_ && mode_ != Mode::kScaled) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode is '", mode, "'."));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("narrow_range", &narrow_range_));
    TW_RETURN_IF_ERROR(c.GetAttr("axis", &axis_));
    TW_RETURN_IF_ERROR(c.GetAttr("ensure_minimum_range", &ensure_minimum_range_));
    out_type_ = c.output_type(0);
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& min_t = ctx->input(1);
    const Tensor& max_t = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckRanges(input, min_t, max_t));
    const AxisView s = SlicesAlong(input.shape(), axis_);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    const bool per_slice = s.depth != 1;
    if (per_slice && mode_ == Mode::kMinFirst) {
      return absl::UnimplementedError(
          "MIN_FIRST mode is not implemented for Quantize with axis != -1.");
    }
    const TensorShape range_shape = per_slice ? min_t.shape() : TensorShape();
    TW_ASSIGN_OR_RETURN(Tensor * out_min, ctx->allocate_output(1, range_shape));
    TW_ASSIGN_OR_RETURN(Tensor * out_max, ctx->allocate_output(2, range_shape));
    absl::Status status;
    VisitQuantizedType(out_type_, [&](auto zero) {
      using Q = decltype(zero);
      Q* y = static_cast<Q*>(out->raw_data());
      for (int64_t c = 0; c < s.depth && status.ok(); ++c) {
        const absl::StatusOr<Range> r = RangeOf<Q>(min_t.data<float>()[c], max_t.data<float>()[c]);
        status = r.status();
        if (!r.ok()) break;
        out_min->data<float>()[c] = r->lo;
        out_max->data<float>()[c] = r->hi;
        for (int64_t o = 0; o < s.outer; ++o) {
          const int64_t at = (o * s.depth + c) * s.inner;
          Quantize<Q>(input.data<float>() + at, s.inner, *r, y + at);
        }
      }
    });
    return status;
  }

 private:
  // TF 2's checks of the ranges' shapes.
  absl::Status CheckRanges(const Tensor& input, const Tensor& min_t, const Tensor& max_t) const {
    if (axis_ < 0) {
      for (const auto& [t, name] :
           {std::pair{&min_t, "min_range"}, std::pair{&max_t, "max_range"}}) {
        if (t->NumElements() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("If axis is not specified, ", name,
                           " must contain a single float element, but it contains ",
                           t->NumElements(), " elements"));
        }
      }
      return absl::OkStatus();
    }
    if (axis_ >= input.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Axis is on a zero-based index, so its value must always be less than number of "
          "input's dims, but given axis value was ",
          axis_, " and input's dims was ", input.dims()));
    }
    const int64_t depth = input.dim_size(static_cast<int>(axis_));
    for (const auto& [t, name] : {std::pair{&min_t, "min_range"}, std::pair{&max_t, "max_range"}}) {
      const std::string what =
          absl::StrCat("If axis is specified, ", name,
                       " must be a 1-D tensor whose size matches the axis dimension of the input "
                       "and output tensors, but ",
                       name);
      if (t->dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(what, " dims are ", t->dims()));
      }
      if (t->dim_size(0) != depth) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " is a 1-D tensor of size ", t->dim_size(0),
                         " and input's axis dimension is of size ", depth));
      }
    }
    return absl::OkStatus();
  }

  // One slice's range as TF moves it: [lo, hi] is what the integers stand
  // for (QuantizeV2's output_min and output_max); SCALED's scale.
  struct Range {
    float lo, hi, scale;
  };
  template <typename Q>
  absl::StatusOr<Range> RangeOf(float in_min, float in_max) const {
    if (in_max < in_min) {
      return absl::InvalidArgumentError("input_max_range must be larger than input_min_range.");
    }
    // Widened to hold 0 and to span at least ensure_minimum_range.
    float min_range = std::min(0.0f, in_min);
    const float epsilon =
        std::max(1.0f, std::max(std::fabs(in_min), std::fabs(in_max))) * ensure_minimum_range_;
    float max_range = std::max(0.0f, std::max(in_max, min_range + epsilon));
    float scale = 0;
    if (mode_ == Mode::kScaled) {
      const int min_output = static_cast<int>(kLowest<Q>) + (narrow_range_ ? 1 : 0);
      const int max_output = static_cast<int>(kHighest<Q>);
      const float from_min = static_cast<float>(min_output) * min_range > 0
                                 ? static_cast<float>(min_output) / min_range
                                 : std::numeric_limits<float>::max();
      const float from_max = static_cast<float>(max_output) * max_range > 0
                                 ? static_cast<float>(max_output) / max_range
                                 : std::numeric_limits<float>::max();
      scale = std::min(from_min, from_max);
      min_range = static_cast<float>(min_output) / scale;
      max_range = static_cast<float>(max_output) / scale;
    }
    return Range{min_range, max_range, scale};
  }

  template <typename Q>
  void Quantize(const float* x, int64_t n, const Range& r, Q* y) const {
    const float lo = r.lo, hi = r.hi;
    switch (mode_) {
      case Mode::kMinCombined: {
        const float scale = static_cast<float>(
            (static_cast<double>(kHighest<Q>) - static_cast<double>(kLowest<Q>)) /
            static_cast<double>(hi - lo));
        if constexpr (kSigned<Q>) {
          const float half_range = static_cast<float>(
              (static_cast<double>(kHighest<Q>) - static_cast<double>(kLowest<Q>) + 1) / 2.0);
          for (int64_t i = 0; i < n; ++i) {
            y[i] =
                RoundedToQuantized<Q>(std::round((Clamp(x[i], lo, hi) - lo) * scale - half_range));
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            y[i] = ToQuantized<Q>((Clamp(x[i], lo, hi) - lo) * scale + 0.5f);
          }
        }
        return;
      }
      case Mode::kMinFirst: {
        const float scale =
            lo == hi ? 0.0f : static_cast<float>((kSteps<Q> - 1.0) / static_cast<double>(hi - lo));
        const float lowest = static_cast<float>(kLowest<Q>);
        const float offset = std::round(lo * scale) - lowest;
        const float lower = std::max(lowest, -2.147483648e+09f);
        const float upper = std::min(static_cast<float>(kHighest<Q>), +2.147483520e+09f);
        for (int64_t i = 0; i < n; ++i) {
          float v = std::round(x[i] * scale) - offset;
          v = v < lower ? lower : v;  // NaN stays NaN
          v = upper < v ? upper : v;
          y[i] = ToQuantized<Q>(v);
        }
        return;
      }
      case Mode::kScaled: {
        for (int64_t i = 0; i < n; ++i) {
          const float v = Clamp(x[i], lo, hi) * r.scale;
          y[i] = RoundedToQuantized<Q>(half_to_even_ ? std::nearbyint(v) : std::round(v));
        }
        return;
      }
    }
  }

  Mode mode_ = Mode::kMinCombined;
  bool half_to_even_ = false;
  bool narrow_range_ = false;
  int64_t axis_ = -1;
  float ensure_minimum_range_ = 0.01f;
  DataType out_type_ = DT_QUINT8;
};

class DequantizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string mode;
    TW_RETURN_IF_ERROR(c.GetAttr("mode", &mode));
    TW_ASSIGN_OR_RETURN(mode_, ParseMode(mode));
    out_type_ = c.output_type(0);
    if (out_type_ == DT_BFLOAT16 && mode_ != Mode::kMinCombined) {
      return absl::InvalidArgumentError(absl::StrCat(
          "When output type is bfloat16, Mode string must be 'MIN_COMBINED', is '", mode, "'"));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("narrow_range", &narrow_range_));
    TW_RETURN_IF_ERROR(c.GetAttr("axis", &axis_));
    in_type_ = c.input_type(0);
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& min_t = ctx->input(1);
    const Tensor& max_t = ctx->input(2);
    if (axis_ >= input.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Axis must be less than input dimension(", input.dims(), "), got ", axis_));
    }
    const AxisView s = SlicesAlong(input.shape(), axis_);
    for (const auto& [t, name] :
         {std::pair{&min_t, "input_min_tensor"}, std::pair{&max_t, "input_max_tensor"}}) {
      if (t->NumElements() != s.depth) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must have as many elements as input on the dequantization axis (",
                         axis_, "), got ", t->NumElements(), ", expected ", s.depth));
      }
    }
    if (s.depth != 1 && mode_ == Mode::kMinFirst) {
      return absl::UnimplementedError(
          "MIN_FIRST mode is not implemented for Dequantize with axis != -1.");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    std::vector<float> row;
    VisitQuantizedType(in_type_, [&](auto zero) {
      using Q = decltype(zero);
      const Q* x = static_cast<const Q*>(input.raw_data());
      for (int64_t c = 0; c < s.depth; ++c) {
        const float lo = min_t.data<float>()[c], hi = max_t.data<float>()[c];
        for (int64_t o = 0; o < s.outer; ++o) {
          const int64_t at = (o * s.depth + c) * s.inner;
          if (out_type_ == DT_FLOAT) {
            Dequantize<Q>(x + at, s.inner, lo, hi, out->data<float>() + at);
          } else {  // TF's float values, each rounded to bfloat16
            row.resize(s.inner);
            Dequantize<Q>(x + at, s.inner, lo, hi, row.data());
            bfloat16* y = out->data<bfloat16>() + at;
            for (int64_t i = 0; i < s.inner; ++i) y[i] = bfloat16(row[i]);
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  template <typename Q>
  void Dequantize(const Q* x, int64_t n, float lo, float hi, float* y) const {
    switch (mode_) {
      case Mode::kMinCombined: {
        // TF's float arithmetic: the type's limits as floats, int32's
        // rounded to 2^31.
        const float span = static_cast<float>(kHighest<Q>) - static_cast<float>(kLowest<Q>);
        const float half_range = kSigned<Q> ? (span + 1.0f) / 2.0f : 0.0f;
        const float scale = (hi - lo) / span;
        for (int64_t i = 0; i < n; ++i) {
          y[i] = (static_cast<float>(x[i]) + half_range) * scale + lo;
        }
        return;
      }
      case Mode::kMinFirst: {
        const float scale = static_cast<float>(static_cast<double>(hi - lo) / (kSteps<Q> - 1.0));
        const float min_rounded = hi == lo ? lo : std::round(lo / scale) * scale;
        const float offset = min_rounded - static_cast<float>(kLowest<Q>) * scale;
        for (int64_t i = 0; i < n; ++i) y[i] = offset + static_cast<float>(x[i]) * scale;
        return;
      }
      case Mode::kScaled: {
        const int min_output = static_cast<int>(kLowest<Q>) + (narrow_range_ ? 1 : 0);
        const float from_max = hi / static_cast<float>(kHighest<Q>);
        const float scale =
            kLowest<Q> == 0 ? from_max : std::max(lo / static_cast<float>(min_output), from_max);
        // Through float and back to int32, as TF's cast of qint32 does.
        for (int64_t i = 0; i < n; ++i) {
          y[i] = static_cast<float>(TruncateToInt32(static_cast<float>(x[i]))) * scale;
        }
        return;
      }
    }
  }

  Mode mode_ = Mode::kMinCombined;
  bool narrow_range_ = false;
  int64_t axis_ = -1;
  DataType in_type_ = DT_QUINT8;
  DataType out_type_ = DT_FLOAT;
};

TW_REGISTER_KERNELS(quantize_and_dequantize_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<QdqV2Op, float, double>(cpu("QuantizeAndDequantizeV2"), "T");
  RegisterTypedKernels<QdqV2Op, float, double>(cpu("QuantizeAndDequantizeV4"), "T");
  RegisterTypedKernels<QdqV3Op, float, double>(
      cpu("QuantizeAndDequantizeV3").HostMemory("num_bits"), "T");
  RegisterTypedKernels<QuantizeAndDequantizeV4GradOp, float, double>(
      cpu("QuantizeAndDequantizeV4Grad"), "T");
  for (DataType t : QuantizedTypes()) {
    RegisterKernel(KernelDefBuilder("QuantizeV2").Device(kDeviceCpu).TypeConstraint("T", t),
                   MakeFactory<QuantizeV2Op>());
    for (DataType out : {DT_FLOAT, DT_BFLOAT16}) {
      RegisterKernel(KernelDefBuilder("Dequantize")
                         .Device(kDeviceCpu)
                         .TypeConstraint("T", t)
                         .TypeConstraint("dtype", out),
                     MakeFactory<DequantizeOp>());
    }
  }
}

}  // namespace
}  // namespace towerflow
