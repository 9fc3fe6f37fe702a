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

namespace towerflow {
namespace {

enum class Mode { kMinCombined, kMinFirst, kScaled };

absl::StatusOr<Mode> ParseMode(const std::string& s) {
  if (s == "MIN_COMBINED") return Mode::kMinCombined;
  if (s == "MIN_FIRST") return Mode::kMinFirst;
  if (s == "SCALED") return Mode::kScaled;
  return absl::InvalidArgumentError(
      absl::StrCat("Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '", s, "'"));
}

// cvttss2si: what a float-to-int32 cast compiles to on x86 (in C++ an
// out-of-range cast is undefined).
int32_t TruncateToInt32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
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

// NaN stays NaN (Eigen's cwiseMin/cwiseMax, as TF's kernels use them).
float Clamp(float x, float lo, float hi) {
  const float below = hi < x ? hi : x;
  return below < lo ? lo : below;
}

// The per-slice view of a tensor: [outer, depth, inner] around `axis`.
struct Slices {
  int64_t outer = 1, depth = 1, inner = 1;
};
Slices SlicesOf(const TensorShape& shape, int64_t axis) {
  Slices s;
  if (axis < 0) {
    s.inner = shape.num_elements();
    return s;
  }
  for (int d = 0; d < axis; ++d) s.outer *= shape.dim_size(d);
  s.depth = shape.dim_size(static_cast<int>(axis));
  for (int d = static_cast<int>(axis) + 1; d < shape.dims(); ++d) s.inner *= shape.dim_size(d);
  return s;
}

template <typename Q>
constexpr bool kSigned = std::numeric_limits<Q>::is_signed;
template <typename Q>
constexpr int64_t kLowest = std::numeric_limits<Q>::min();
template <typename Q>
constexpr int64_t kHighest = std::numeric_limits<Q>::max();

// TF's FloatToQuantizedStruct / QuantizedToFloatStruct constants.
template <typename Q>
constexpr double kSteps = static_cast<double>(int64_t{1} << (8 * sizeof(Q)));

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
    const Slices s = SlicesOf(input.shape(), axis_);
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
    const Slices s = SlicesOf(input.shape(), axis_);
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

TW_REGISTER_KERNELS(quantize_ops) {
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
