// TF 1's eight-bit inference ops (ops/fake_quant_ops.cc), the ones TF's
// graph_transforms `quantize_nodes` puts into a graph, with TF's arithmetic
// to the bit (its quantization_utils.h, in TF's order and precision; this
// file compiles without contracted multiply-adds, kernels/BUILD). A
// quantized tensor of Q comes with the range [min, max] its integers stand
// for: q is min rounded to a whole step plus (q - lowest(Q)) steps of
// (max - min) / (2^bits - 1).
// - QuantizedConv2D and QuantizedMatMul (quint8 x quint8 -> qint32): the
//   products of the integers less their zero points (the integer standing
//   for 0, unclamped, so a range without 0 gives one outside the type),
//   summed in 32 bits, wrapping as gemmlowp's accumulators; the result's
//   range is one step of each input multiplied, times qint32's ends. Taps
//   outside the image add nothing, except that the image's padding value
//   is the quint8 of the zero point, as TF's im2col fills it (it differs
//   only when the zero point is above 255). TF places SAME's window at
//   ((out - 1) * stride + filter - in) / 2 rounded toward zero, which for a
//   stride longer than the filter starts inside the image; VALID at 0.
// - QuantizedBiasAdd (quint8 or qint8 -> qint32): both inputs moved through
//   float into qint32 over [-m, m], m = 2^17 times the largest end of
//   either range, and added (with that range's zero point, 0).
// - QuantizedAdd, QuantizedMul, QuantizedBatchNormWithGlobalNormalization
//   (quint8 -> qint32): see their kernels.
// - QuantizedResizeBilinear (quint8, qint32): TF's fixed-point taps; see
//   its kernel.
// - QuantizedRelu, QuantizedRelu6: clamped at the integers standing for 0
//   and 6; QuantizedMaxPool, QuantizedAvgPool on the integers (the average
//   in int32, rounded toward zero); the ranges pass through.
// - QuantizedConcat: every input moved into the range holding them all
//   (symmetric about 0 for qint32), or copied when its range is that one.
// - RequantizationRange: the range of the values an int32 tensor holds, its
//   minimum no higher than 0; Requantize and QuantizeDownAndShrinkRange
//   move qint32 into a requested (or that) range: into quint8 by TF's
//   fixed-point path (16 fraction bits), into qint8 through float.
// QuantizedReshape is Reshape's kernel (shape_ops.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "core/window_util.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"
#include "kernels/bcast.h"
#include "kernels/cpu/quantization_util.h"
#include "kernels/image_plans.h"

namespace towerflow {
namespace {

using quantization::Clamp;
using quantization::kHighest;
using quantization::kLowest;
using quantization::kSteps;
using quantization::TruncateToInt32;

// cvttsd2si: TruncateToInt32's double-to-int64 twin.
int64_t TruncateToInt64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(v);
}

// TF's FloatToQuantizedUnclamped: the integer standing for x, which may lie
// outside Q.
template <typename Q>
int64_t ToQuantizedUnclamped(float x, float lo, float hi) {
  if (lo == hi) return kLowest<Q>;
  const double range = static_cast<double>(hi - lo) * (kSteps<Q> / (kSteps<Q> - 1.0));
  const double scale = kSteps<Q> / range;
  const uint64_t steps =
      static_cast<uint64_t>(TruncateToInt64(std::round(x * scale) - std::round(lo * scale)));
  return static_cast<int64_t>(steps + static_cast<uint64_t>(kLowest<Q>));  // wraps, never UB
}

// TF's FloatToQuantized: the same, saturated to Q.
template <typename Q>
Q ToQuantized(float x, float lo, float hi) {
  return static_cast<Q>(std::clamp(ToQuantizedUnclamped<Q>(x, lo, hi), kLowest<Q>, kHighest<Q>));
}

// TF's QuantizedToFloat: the float q stands for.
template <typename Q>
float ToFloat(Q q, float lo, float hi) {
  if (lo == hi) return lo;
  const double range = static_cast<double>(hi - lo) * (kSteps<Q> / (kSteps<Q> - 1.0));
  const double scale = range / kSteps<Q>;
  const float scale_f = static_cast<float>(scale);
  const double min_rounded = std::round(lo / scale_f) * scale_f;  // in float, as TF
  return static_cast<float>(min_rounded + (static_cast<double>(q) - kLowest<Q>)*scale);
}

// TF's vectorised dequantisation (QuantizedToFloatStruct and
// DEQUANTIZE_WITH_EIGEN), all in float.
template <typename Q>
struct Dequantizer {
  Dequantizer(float lo, float hi)
      : scale(static_cast<float>((hi - lo) / (kSteps<Q> - 1.0))),
        min_rounded(hi == lo ? lo : std::round(lo / scale) * scale),
        offset(min_rounded - static_cast<float>(kLowest<Q>) * scale) {}
  float operator()(Q q) const { return offset + static_cast<float>(q) * scale; }
  float scale, min_rounded, offset;
};

// And its quantisation (FloatToQuantizedStruct and QUANTIZE_WITH_EIGEN):
// the bounds are those that convert back to int32.
template <typename Q>
struct Quantizer {
  Quantizer(float lo, float hi)
      : scale(hi == lo ? 0.0f : static_cast<float>((kSteps<Q> - 1.0) / (hi - lo))),
        shift(std::round(lo * scale) - static_cast<float>(kLowest<Q>)),
        lower(std::max(static_cast<float>(kLowest<Q>), -2.147483648e+09f)),
        upper(std::min(static_cast<float>(kHighest<Q>), +2.147483520e+09f)) {}
  Q operator()(float x) const {
    return static_cast<Q>(TruncateToInt32(Clamp(std::round(x * scale) - shift, lower, upper)));
  }
  float scale, shift, lower, upper;
};

// RequantizeManyInNewRangeUsingEigen: through float, or for qint32 to
// quint8 TF's fixed-point path.
template <typename In, typename Out>
void Requantize(const In* x, int64_t n, float min_in, float max_in, float min_out, float max_out,
                Out* y) {
  if constexpr (std::is_same_v<In, int32_t> && std::is_same_v<Out, uint8_t>) {
    constexpr int kShift = 16;
    const float input_range = max_in - min_in;
    const float output_range = max_out - min_out;
    const float recip_output_range = output_range == 0.0 ? 0.0 : 255.0 / output_range;
    const float input_rezero = (min_in + max_in) / 2.0;
    const int64_t range_scale_fp =
        output_range == 0.0 ? 0
                            : TruncateToInt64(255.0 * (1 << kShift) * input_range / output_range);
    const int64_t input_offset_fp =
        TruncateToInt64(input_rezero * recip_output_range * (1 << kShift));
    const int64_t output_offset_fp =
        output_range == 0.0 ? 0 : TruncateToInt64((1 << kShift) * (min_out * 255.0) / output_range);
    const uint64_t added = static_cast<uint64_t>(input_offset_fp) -
                           static_cast<uint64_t>(output_offset_fp) + (1 << (kShift - 1));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t scaled = static_cast<int64_t>(static_cast<uint64_t>(int64_t{x[i]}) *
                                                  static_cast<uint64_t>(range_scale_fp)) >>
                             32;
      const int64_t q = static_cast<int64_t>(static_cast<uint64_t>(scaled) + added) >> kShift;
      y[i] = static_cast<uint8_t>(std::clamp<int64_t>(q, 0, 255));
    }
  } else {
    const Dequantizer<In> to_float(min_in, max_in);
    const Quantizer<Out> to_out(min_out, max_out);
    for (int64_t i = 0; i < n; ++i) y[i] = to_out(to_float(x[i]));
  }
}

// TF's QuantizationRangeForMultiplication: one step of a times one of b,
// times the ends of the 32-bit result.
template <typename A, typename B>
std::pair<float, float> ProductRange(float min_a, float max_a, float min_b, float max_b) {
  const float step_a = (max_a - min_a) / static_cast<float>(kHighest<A> - kLowest<A>);
  const float step_b = (max_b - min_b) / static_cast<float>(kHighest<B> - kLowest<B>);
  const float step = step_a * step_b;
  return {step * static_cast<float>(kLowest<int32_t>),
          step * static_cast<float>(kHighest<int32_t>)};
}

template <typename Q>
const Q* Ints(const Tensor& t) {
  return static_cast<const Q*>(t.raw_data());
}
template <typename Q>
Q* MutableInts(Tensor* t) {
  return static_cast<Q*>(t->raw_data());
}

// The float range input `i`, a scalar (TF's shape functions refuse others).
absl::StatusOr<float> RangeInput(KernelContext* ctx, int i, absl::string_view name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("`", name, "` must be rank 0 but is rank ", t.dims()));
  }
  return *t.data<float>();
}

absl::Status SetRange(KernelContext* ctx, int first_output, float lo, float hi) {
  TW_ASSIGN_OR_RETURN(Tensor * min_t, ctx->allocate_output(first_output, TensorShape()));
  TW_ASSIGN_OR_RETURN(Tensor * max_t, ctx->allocate_output(first_output + 1, TensorShape()));
  *min_t->data<float>() = lo;
  *max_t->data<float>() = hi;
  return absl::OkStatus();
}

// The lowest and highest integer x holds, as floats of [lo, hi], the
// lowest no higher than 0 (an empty x gives [0, lo]).
std::pair<float, float> ActualRange(const Tensor& x, float lo, float hi) {
  const int32_t* v = Ints<int32_t>(x);
  int32_t low = std::numeric_limits<int32_t>::max(), high = std::numeric_limits<int32_t>::min();
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    low = std::min(low, v[i]);
    high = std::max(high, v[i]);
  }
  return {std::min(0.0f, ToFloat(low, lo, hi)), ToFloat(high, lo, hi)};
}

class RequantizationRangeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (const auto& [i, what] : {std::pair{1, "min"}, std::pair{2, "max"}}) {
      if (ctx->input(i).NumElements() == 0) {
        return absl::InvalidArgumentError(absl::StrCat("Input ", what, " must not be empty."));
      }
    }
    TW_ASSIGN_OR_RETURN(const float lo, RangeInput(ctx, 1, "input_min"));
    TW_ASSIGN_OR_RETURN(const float hi, RangeInput(ctx, 2, "input_max"));
    const auto [out_lo, out_hi] = ActualRange(ctx->input(0), lo, hi);
    return SetRange(ctx, 0, out_lo, out_hi);
  }
};

// Requantize (kShrink false: the requested range) and
// QuantizeDownAndShrinkRange (the range RequantizationRange gives).
template <typename Out, bool kShrink>
class RequantizeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float lo, RangeInput(ctx, 1, "input_min"));
    TW_ASSIGN_OR_RETURN(const float hi, RangeInput(ctx, 2, "input_max"));
    float out_lo, out_hi;
    if constexpr (kShrink) {
      std::tie(out_lo, out_hi) = ActualRange(x, lo, hi);
    } else {
      TW_ASSIGN_OR_RETURN(out_lo, RangeInput(ctx, 3, "requested_output_min"));
      TW_ASSIGN_OR_RETURN(out_hi, RangeInput(ctx, 4, "requested_output_max"));
      if (!(out_lo <= 0.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat("requested_output_min must be <= 0, but got ", out_lo));
      }
      if (!(out_hi >= out_lo)) {
        return absl::InvalidArgumentError(
            absl::StrCat("requested_output_max must be >= requested_output_min, but got ", out_hi,
                         " and ", out_lo));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    Requantize(Ints<int32_t>(x), x.NumElements(), lo, hi, out_lo, out_hi, MutableInts<Out>(y));
    return SetRange(ctx, 1, out_lo, out_hi);
  }
};

// QuantizedRelu (kSix false) and QuantizedRelu6.
template <typename Q, bool kSix>
class QuantizedReluOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float lo, RangeInput(ctx, 1, "min_features"));
    TW_ASSIGN_OR_RETURN(const float hi, RangeInput(ctx, 2, "max_features"));
    const Q zero = ToQuantized<Q>(0.0f, lo, hi);
    const Q top = kSix ? ToQuantized<Q>(6.0f, lo, hi) : std::numeric_limits<Q>::max();
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const Q* in = Ints<Q>(x);
    Q* out = MutableInts<Q>(y);
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = std::min(std::max(in[i], zero), top);
    return SetRange(ctx, 1, lo, hi);
  }
};

// QuantizedBiasAdd: TF's QuantizedAddUsingEigen into qint32.
template <typename Q>
class QuantizedBiasAddOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const float x_lo, RangeInput(ctx, 2, "min_input"));
    TW_ASSIGN_OR_RETURN(const float x_hi, RangeInput(ctx, 3, "max_input"));
    TW_ASSIGN_OR_RETURN(const float b_lo, RangeInput(ctx, 4, "min_bias"));
    TW_ASSIGN_OR_RETURN(const float b_hi, RangeInput(ctx, 5, "max_bias"));
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input tensor must be at least 2D: ", x.shape().DebugString()));
    }
    if (bias.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Biases must be 1D: ", bias.shape().DebugString()));
    }
    const int64_t depth = x.dim_size(x.dims() - 1);
    if (bias.dim_size(0) != depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("Must provide as many biases as the last dimension of the input tensor: ",
                       bias.shape().DebugString(), " vs. ", x.shape().DebugString()));
    }
    // GetOutputMinAndMaxForQuantizedAdd: room for the sum, symmetric.
    const float total_hi = std::max(x_hi, std::max(-x_lo, std::max(b_hi, -b_lo))) * (1 << 17);
    const float total_lo = -total_hi;
    const uint32_t zero = static_cast<uint32_t>(ToQuantized<int32_t>(0.0f, total_lo, total_hi));
    const Quantizer<int32_t> to_total(total_lo, total_hi);
    const Dequantizer<Q> x_float(x_lo, x_hi), b_float(b_lo, b_hi);
    std::vector<uint32_t> b_total(depth);
    for (int64_t c = 0; c < depth; ++c) {
      b_total[c] = static_cast<uint32_t>(to_total(b_float(Ints<Q>(bias)[c]))) + zero;
    }
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const Q* in = Ints<Q>(x);
    int32_t* out = MutableInts<int32_t>(y);
    for (int64_t i = 0; i < x.NumElements(); ++i) {  // qint32 sums wrap, as TF's
      out[i] = static_cast<int32_t>(static_cast<uint32_t>(to_total(x_float(in[i]))) +
                                    b_total[i % depth]);
    }
    return SetRange(ctx, 1, total_lo, total_hi);
  }
};

// The product of row-major int32 matrices a [m, k] (or [k, m] when ta) and
// b [k, n] (or [n, k]) into c [m, n], wrapping on overflow (computed on the
// same bits as unsigned, whose overflow is defined).
void IntProduct(const Eigen::ThreadPoolDevice& d, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                const int32_t* a, const int32_t* b, int32_t* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill_n(c, m * n, 0);
    return;
  }
  using Map = Eigen::TensorMap<Eigen::Tensor<const uint32_t, 2, Eigen::RowMajor>>;
  const Map am(reinterpret_cast<const uint32_t*>(a), ta ? k : m, ta ? m : k);
  const Map bm(reinterpret_cast<const uint32_t*>(b), tb ? n : k, tb ? k : n);
  Eigen::TensorMap<Eigen::Tensor<uint32_t, 2, Eigen::RowMajor>> cm(reinterpret_cast<uint32_t*>(c),
                                                                   m, n);
  const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims{
      Eigen::IndexPair<Eigen::DenseIndex>(ta ? 0 : 1, tb ? 1 : 0)};
  cm.device(d) = am.contract(bm, dims);
}

// q - zero in 32 bits, wrapping as TF's int32 arithmetic does on x86 (a
// zero point from extreme ranges may be far outside the type).
int32_t LessZero(uint8_t q, int32_t zero) {
  return static_cast<int32_t>(uint32_t{q} - static_cast<uint32_t>(zero));
}

// The integers of x less the zero point, as int32.
std::vector<int32_t> LessZeroPoint(const Tensor& x, int32_t zero_point) {
  std::vector<int32_t> out(x.NumElements());
  const uint8_t* v = Ints<uint8_t>(x);
  for (size_t i = 0; i < out.size(); ++i) out[i] = LessZero(v[i], zero_point);
  return out;
}

struct ProductRanges {
  float min_a, max_a, min_b, max_b;
  int32_t zero_a, zero_b;
};

// The four ranges of QuantizedMatMul and QuantizedConv2D (inputs 2 to 5)
// and the quint8 zero points they give.
absl::StatusOr<ProductRanges> ReadProductRanges(KernelContext* ctx, const char* a, const char* b) {
  ProductRanges r;
  TW_ASSIGN_OR_RETURN(r.min_a, RangeInput(ctx, 2, absl::StrCat("min_", a)));
  TW_ASSIGN_OR_RETURN(r.max_a, RangeInput(ctx, 3, absl::StrCat("max_", a)));
  TW_ASSIGN_OR_RETURN(r.min_b, RangeInput(ctx, 4, absl::StrCat("min_", b)));
  TW_ASSIGN_OR_RETURN(r.max_b, RangeInput(ctx, 5, absl::StrCat("max_", b)));
  r.zero_a = static_cast<int32_t>(ToQuantizedUnclamped<uint8_t>(0.0f, r.min_a, r.max_a));
  r.zero_b = static_cast<int32_t>(ToQuantizedUnclamped<uint8_t>(0.0f, r.min_b, r.max_b));
  return r;
}

absl::Status SetProductRange(KernelContext* ctx, const ProductRanges& r) {
  const auto [lo, hi] = ProductRange<uint8_t, uint8_t>(r.min_a, r.max_a, r.min_b, r.max_b);
  return SetRange(ctx, 1, lo, hi);
}

class QuantizedMatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("transpose_a", &ta_));
    return c.GetAttr("transpose_b", &tb_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const ProductRanges r, ReadProductRanges(ctx, "a", "b"));
    if (!(r.max_a > r.min_a)) return absl::InvalidArgumentError("max_a must be larger than min_a.");
    if (!(r.max_b > r.min_b)) return absl::InvalidArgumentError("max_b must be larger than min_b.");
    if (a.dims() != 2) return absl::InvalidArgumentError("In[0] is not a matrix");
    if (b.dims() != 2) return absl::InvalidArgumentError("In[1] is not a matrix");
    const int64_t k = a.dim_size(ta_ ? 0 : 1);
    if (k != b.dim_size(tb_ ? 1 : 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                       ", In[1]: ", b.shape().DebugString()));
    }
    const int64_t m = a.dim_size(ta_ ? 1 : 0), n = b.dim_size(tb_ ? 0 : 1);
    TW_ASSIGN_OR_RETURN(Tensor * c, ctx->allocate_output(0, TensorShape({m, n})));
    const std::vector<int32_t> a_int = LessZeroPoint(a, r.zero_a);
    const std::vector<int32_t> b_int = LessZeroPoint(b, r.zero_b);
    IntProduct(ctx->eigen_cpu_device(), ta_, tb_, m, n, k, a_int.data(), b_int.data(),
               MutableInts<int32_t>(c));
    return SetProductRange(ctx, r);
  }

 private:
  bool ta_ = false, tb_ = false;
};

class QuantizedConv2DOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::vector<int64_t> strides, dilations;
    TW_RETURN_IF_ERROR(c.GetAttr("strides", &strides));
    if (strides.size() != 4) {
      return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
    }
    if (strides[1] != strides[2]) {
      return absl::InvalidArgumentError(
          "Current implementation only supports equal length strides in the row and column "
          "dimensions.");
    }
    if (strides[0] != 1 || strides[3] != 1) {
      return absl::InvalidArgumentError(
          "Current implementation does not yet support strides in the batch and depth "
          "dimensions.");
    }
    if (strides[1] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("strides must be positive, got ", strides[1]));
    }
    stride_ = strides[1];
    TW_RETURN_IF_ERROR(c.GetAttr("dilations", &dilations));
    if (dilations.size() != 4 || dilations[1] != 1 || dilations[2] != 1) {
      return absl::InvalidArgumentError(
          "Current implementation only supports dilated rate as 1 in the row and column "
          "dimensions.");
    }
    std::string padding;
    TW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
    TW_ASSIGN_OR_RETURN(padding_, ParsePadding(padding));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be rank 4 but is rank ", input.dims()));
    }
    if (filter.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("filter must be rank 4 but is rank ", filter.dims()));
    }
    TW_ASSIGN_OR_RETURN(const ProductRanges r, ReadProductRanges(ctx, "input", "filter"));
    const int64_t batch = input.dim_size(0), in_h = input.dim_size(1), in_w = input.dim_size(2),
                  depth = input.dim_size(3);
    const int64_t f_h = filter.dim_size(0), f_w = filter.dim_size(1),
                  out_depth = filter.dim_size(3);
    if (filter.dim_size(2) != depth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input and filter must have the same depth: ", depth, " vs ", filter.dim_size(2)));
    }
    int64_t out_h = 0, out_w = 0, unused_before = 0, unused_after = 0;
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(in_h, f_h, 1, stride_, padding_, &out_h,
                                             &unused_before, &unused_after));
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(in_w, f_w, 1, stride_, padding_, &out_w,
                                             &unused_before, &unused_after));
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({batch, out_h, out_w, out_depth})));
    TW_RETURN_IF_ERROR(SetProductRange(ctx, r));
    const int64_t patches = batch * out_h * out_w;
    const int64_t k = f_h * f_w * depth;
    if (patches == 0 || out_depth == 0) return absl::OkStatus();
    if (k == 0) {  // no input channels: empty sums
      std::fill_n(MutableInts<int32_t>(out), patches * out_depth, 0);
      return absl::OkStatus();
    }

    // TF's window origins (see the file comment).
    const int64_t top = padding_ == Padding::kValid ? 0 : ((out_h - 1) * stride_ + f_h - in_h) / 2;
    const int64_t left = padding_ == Padding::kValid ? 0 : ((out_w - 1) * stride_ + f_w - in_w) / 2;
    // TF's im2col pads with the quint8 of the zero point (the zero point
    // itself when it fits), its reference path with 0 when it is negative.
    const int32_t pad = r.zero_a < 0 ? 0 : LessZero(static_cast<uint8_t>(r.zero_a), r.zero_a);
    const std::vector<int32_t> f = LessZeroPoint(filter, r.zero_b);  // [k, out_depth]
    const uint8_t* x = Ints<uint8_t>(input);
    int32_t* y = MutableInts<int32_t>(out);
    // im2col a chunk of patches at a time, each [k] a row, so the buffer
    // stays near TF's 16 MiB.
    const int64_t chunk = std::max<int64_t>(1, (int64_t{16} << 20) / (k * 4));
    std::vector<int32_t> cols(std::min(chunk, patches) * k);
    for (int64_t first = 0; first < patches; first += chunk) {
      const int64_t count = std::min(chunk, patches - first);
      for (int64_t p = 0; p < count; ++p) {
        const int64_t patch = first + p;
        const int64_t b = patch / (out_h * out_w), oy = patch / out_w % out_h, ox = patch % out_w;
        int32_t* row = cols.data() + p * k;
        for (int64_t fy = 0; fy < f_h; ++fy) {
          const int64_t iy = oy * stride_ - top + fy;
          for (int64_t fx = 0; fx < f_w; ++fx) {
            const int64_t ix = ox * stride_ - left + fx;
            int32_t* tap = row + (fy * f_w + fx) * depth;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
              std::fill_n(tap, depth, pad);
              continue;
            }
            const uint8_t* pixel = x + ((b * in_h + iy) * in_w + ix) * depth;
            for (int64_t c = 0; c < depth; ++c) tap[c] = LessZero(pixel[c], r.zero_a);
          }
        }
      }
      IntProduct(ctx->eigen_cpu_device(), false, false, count, out_depth, k, cols.data(), f.data(),
                 y + first * out_depth);
    }
    return absl::OkStatus();
  }

 private:
  int64_t stride_ = 1;
  Padding padding_ = Padding::kValid;
};

// QuantizedMaxPool (kMax) and QuantizedAvgPool on NHWC integers: the
// window over the image's taps only (SAME's padding is left out).
template <typename Q, bool kMax>
class QuantizedPoolOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::vector<int64_t> ksize, strides;
    TW_RETURN_IF_ERROR(c.GetAttr("ksize", &ksize));
    if (ksize.size() != 4) {
      return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
    }
    TW_RETURN_IF_ERROR(c.GetAttr("strides", &strides));
    if (strides.size() != 4) {
      return absl::InvalidArgumentError("Sliding window stride field must specify 4 dimensions");
    }
    if (ksize[0] != 1 || strides[0] != 1) {
      return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
    }
    if (ksize[3] != 1 || strides[3] != 1) {
      return absl::UnimplementedError("Non-spatial pooling is not yet supported.");
    }
    for (int i = 1; i < 3; ++i) {
      if (ksize[i] <= 0 || strides[i] <= 0) {
        return absl::InvalidArgumentError("Sliding window ksize and strides must be positive.");
      }
    }
    k_h_ = ksize[1];
    k_w_ = ksize[2];
    s_h_ = strides[1];
    s_w_ = strides[2];
    std::string padding;
    TW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
    TW_ASSIGN_OR_RETURN(padding_, ParsePadding(padding));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const float lo, RangeInput(ctx, 1, "min_input"));
    TW_ASSIGN_OR_RETURN(const float hi, RangeInput(ctx, 2, "max_input"));
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional (NHWC), got ", input.shape().DebugString()));
    }
    const int64_t batch = input.dim_size(0), in_h = input.dim_size(1), in_w = input.dim_size(2),
                  depth = input.dim_size(3);
    int64_t out_h = 0, out_w = 0, top = 0, left = 0, after = 0;
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(in_h, k_h_, 1, s_h_, padding_, &out_h, &top, &after));
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(in_w, k_w_, 1, s_w_, padding_, &out_w, &left, &after));
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({batch, out_h, out_w, depth})));
    const Q* x = Ints<Q>(input);
    Q* y = MutableInts<Q>(out);
    std::vector<int64_t> acc(depth);  // TF's int32 sums, which overflow past 2^31
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t oy = 0; oy < out_h; ++oy) {
        const int64_t y0 = std::max<int64_t>(oy * s_h_ - top, 0);
        const int64_t y1 = std::min(oy * s_h_ - top + k_h_, in_h);
        for (int64_t ox = 0; ox < out_w; ++ox) {
          const int64_t x0 = std::max<int64_t>(ox * s_w_ - left, 0);
          const int64_t x1 = std::min(ox * s_w_ - left + k_w_, in_w);
          std::fill(acc.begin(), acc.end(), kMax ? kLowest<Q> : 0);
          for (int64_t iy = y0; iy < y1; ++iy) {
            for (int64_t ix = x0; ix < x1; ++ix) {
              const Q* pixel = x + ((b * in_h + iy) * in_w + ix) * depth;
              for (int64_t c = 0; c < depth; ++c) {
                acc[c] = kMax ? std::max<int64_t>(acc[c], pixel[c]) : acc[c] + pixel[c];
              }
            }
          }
          const int64_t taps = (y1 - y0) * (x1 - x0);
          Q* o = y + ((b * out_h + oy) * out_w + ox) * depth;
          for (int64_t c = 0; c < depth; ++c) {
            o[c] = static_cast<Q>(kMax || taps == 0 ? acc[c] : acc[c] / taps);
          }
        }
      }
    }
    return SetRange(ctx, 1, lo, hi);
  }

 private:
  int64_t k_h_ = 1, k_w_ = 1, s_h_ = 1, s_w_ = 1;
  Padding padding_ = Padding::kValid;
};

template <typename Q>
class QuantizedConcatOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int n = (ctx->num_inputs() - 1) / 3;
    const Tensor& dim_t = ctx->input(0);
    if (dim_t.dims() != 0 || dim_t.dtype() != DT_INT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("Concat dim tensor should be a scalar integer, but got shape ",
                       dim_t.shape().DebugString()));
    }
    const int32_t axis = *dim_t.data<int32_t>();
    std::vector<std::pair<float, float>> ranges(n);
    float overall_lo = std::numeric_limits<float>::max();
    float overall_hi = std::numeric_limits<float>::lowest();
    for (int i = 0; i < n; ++i) {
      for (const auto& [offset, name] :
           {std::pair{1 + n, "input_mins"}, std::pair{1 + 2 * n, "input_maxes"}}) {
        const Tensor& t = ctx->input(offset + i);
        if (t.NumElements() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, " each tensor's num elements must be 1, given num elements ",
                           t.NumElements(), " in index ", i));
        }
      }
      ranges[i] = {*ctx->input(1 + n + i).data<float>(), *ctx->input(1 + 2 * n + i).data<float>()};
      overall_lo = std::min(overall_lo, ranges[i].first);
      overall_hi = std::max(overall_hi, ranges[i].second);
    }
    if constexpr (std::numeric_limits<Q>::is_signed) {
      overall_hi = std::max(std::abs(overall_lo), std::abs(overall_hi));
      overall_lo = -overall_hi;
    }
    const TensorShape& first = ctx->input(1).shape();
    const int rank = first.dims();
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("ConcatOp : Expected concatenating dimensions in the range [0, ", rank,
                       "), but got ", axis));
    }
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= first.dim_size(d);
    int64_t out_axis = 0;
    for (int i = 0; i < n; ++i) {
      const TensorShape& s = ctx->input(1 + i).shape();
      if (s.dims() != rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ConcatOp : Ranks of all input tensors should match: shape[0] = ", first.DebugString(),
            " vs. shape[", i, "] = ", s.DebugString()));
      }
      for (int d = 0; d < rank; ++d) {
        if (d != axis && s.dim_size(d) != first.dim_size(d)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ConcatOp : Dimensions of inputs should match: shape[0] = ", first.DebugString(),
              " vs. shape[", i, "] = ", s.DebugString()));
        }
      }
      out_axis += s.dim_size(axis);
    }
    std::vector<int64_t> out_dims(first.dim_sizes().begin(), first.dim_sizes().end());
    out_dims[axis] = out_axis;
    TW_ASSIGN_OR_RETURN(const TensorShape out_shape, TensorShape::FromDims(out_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const int64_t out_row = outer == 0 ? 0 : out_shape.num_elements() / outer;
    Q* y = MutableInts<Q>(out);
    int64_t at = 0;  // where input i's columns start in each output row
    for (int i = 0; i < n; ++i) {
      const Tensor& v = ctx->input(1 + i);
      const int64_t row = outer == 0 ? 0 : v.NumElements() / outer;
      const Q* x = Ints<Q>(v);
      const auto [lo, hi] = ranges[i];
      const bool same = lo == overall_lo && hi == overall_hi;
      const Dequantizer<Q> to_float(lo, hi);
      const Quantizer<Q> to_out(overall_lo, overall_hi);
      for (int64_t o = 0; o < outer; ++o) {
        const Q* src = x + o * row;
        Q* dst = y + o * out_row + at;
        if (same) {
          std::copy_n(src, row, dst);
        } else {
          for (int64_t j = 0; j < row; ++j) dst[j] = to_out(to_float(src[j]));
        }
      }
      at += row;
    }
    return SetRange(ctx, 1, overall_lo, overall_hi);
  }
};

// QuantizedBatchNormWithGlobalNormalization (quint8 -> qint32), TF's
// fixed-point path: the output's range is [-2^20, 2^20]; each channel's
// scale (1 / sqrt(var + epsilon), times gamma with
// scale_after_normalization) and offset (beta - mean * scale) are computed
// in float and moved into it, each input too (through float), and the
// output is input * scale / (the integer for 1) + offset in qint32's
// wrapping arithmetic.
class QuantizedBatchNormOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("variance_epsilon", &epsilon_));
    return c.GetAttr("scale_after_normalization", &scale_after_normalization_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    // t, m, v, beta, gamma at inputs 0, 3, 6, 9, 12, each with its range.
    const char* names[5] = {"t", "m", "v", "beta", "gamma"};
    float lo[5], hi[5];
    for (int i = 0; i < 5; ++i) {
      TW_ASSIGN_OR_RETURN(lo[i], RangeInput(ctx, 3 * i + 1, absl::StrCat(names[i], "_min")));
      TW_ASSIGN_OR_RETURN(hi[i], RangeInput(ctx, 3 * i + 2, absl::StrCat(names[i], "_max")));
    }
    const Tensor& input = ctx->input(0);
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", input.shape().DebugString()));
    }
    const Tensor& mean = ctx->input(3);
    const char* vectors[4] = {"mean", "var", "beta", "gamma"};
    for (int i = 1; i < 5; ++i) {
      const Tensor& t = ctx->input(3 * i);
      if (t.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(vectors[i - 1], " must be 1-dimensional", t.shape().DebugString()));
      }
      if (t.shape() != mean.shape()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Mean and ", vectors[i - 1], " tensors must have the same shape: ",
                         mean.shape().DebugString(), " vs. ", t.shape().DebugString()));
      }
    }
    const int64_t depth = mean.dim_size(0);
    if (input.dim_size(3) != depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("input's depth must be mean's length: ", input.shape().DebugString(),
                       " vs. ", mean.shape().DebugString()));
    }
    constexpr float kOutHi = 1 << 20, kOutLo = -kOutHi;
    std::vector<uint32_t> scale(depth), offset(depth);
    for (int64_t c = 0; c < depth; ++c) {
      float v[5];  // the float of each vector's channel c (v[0] unused)
      for (int i = 1; i < 5; ++i) v[i] = ToFloat(Ints<uint8_t>(ctx->input(3 * i))[c], lo[i], hi[i]);
      float scale_value = 1.0f / std::sqrt(v[2] + epsilon_);
      if (scale_after_normalization_) scale_value *= v[4];
      const float offset_value = (-v[1] * scale_value) + v[3];
      scale[c] = static_cast<uint32_t>(ToQuantized<int32_t>(scale_value, kOutLo, kOutHi));
      offset[c] = static_cast<uint32_t>(ToQuantized<int32_t>(offset_value, kOutLo, kOutHi));
    }
    const int32_t one = ToQuantized<int32_t>(1.0f, kOutLo, kOutHi);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    const uint8_t* x = Ints<uint8_t>(input);
    int32_t* y = MutableInts<int32_t>(out);
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      const int64_t c = i % depth;
      const uint32_t in =
          static_cast<uint32_t>(ToQuantized<int32_t>(ToFloat(x[i], lo[0], hi[0]), kOutLo, kOutHi));
      const int32_t product = static_cast<int32_t>(in * scale[c]);
      y[i] = static_cast<int32_t>(static_cast<uint32_t>(product / one) + offset[c]);
    }
    return SetRange(ctx, 1, kOutLo, kOutHi);
  }

 private:
  float epsilon_ = 0;
  bool scale_after_normalization_ = false;
};

// QuantizedResizeBilinear's taps in TF's fixed point: for each output
// index, the two source indices (times `step`, the elements between them)
// and the fraction between them in 2^kBits-ths, truncated.
struct FixedTaps {
  std::vector<int64_t> lower, upper, lerp;
};
template <int kBits>
FixedTaps QuantizedResizeTaps(int64_t in, int64_t out, float scale, bool half_pixel_centers,
                              int64_t step) {
  FixedTaps t;
  t.lower.resize(out);
  t.upper.resize(out);
  t.lerp.resize(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                       : static_cast<float>(i) * scale;
    const float floor = std::floor(x);
    t.upper[i] = std::min(static_cast<int64_t>(std::ceil(x)), in - 1);
    t.lower[i] = std::min(std::max(static_cast<int64_t>(floor), int64_t{0}), t.upper[i]) * step;
    t.upper[i] *= step;
    t.lerp[i] = static_cast<int64_t>((x - floor) * static_cast<float>(1 << kBits));
  }
  return t;
}

// QuantizedResizeBilinear (quint8, qint32): the four taps interpolated in
// fixed point on the integers, as TF's x86 kernels: 7 fraction bits in
// 16-bit arithmetic for quint8, 30 in 64-bit for qint32 (whose values TF
// reads through float, so each tap is its nearest float first); each row
// interpolated across, the difference of the rows truncated to whole
// units before its fraction is taken, then rounded half up. The range
// passes through. (TF's float kernel treats the floats as 32-bit
// quantized values; it is not registered here.)
template <typename Q>
class QuantizedResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("align_corners", &coords_.align_corners));
    return c.GetAttr("half_pixel_centers", &coords_.half_pixel_centers);
  }

  absl::Status Compute(KernelContext* ctx) override {
    for (const auto& [i, name] : {std::pair{2, "min"}, std::pair{3, "max"}}) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar"));
      }
    }
    const float lo = *ctx->input(2).data<float>(), hi = *ctx->input(3).data<float>();
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    TW_RETURN_IF_ERROR(SetRange(ctx, 1, lo, hi));
    const Q* x = Ints<Q>(ctx->input(0));
    Q* y = MutableInts<Q>(io.out);
    if (io.out_h == io.in_h && io.out_w == io.in_w) {
      std::copy_n(x, io.out->NumElements(), y);
      return absl::OkStatus();
    }
    constexpr bool k8 = std::is_same_v<Q, uint8_t>;
    constexpr int kBits = k8 ? 7 : 30;
    constexpr int64_t kOne = int64_t{1} << kBits;
    const FixedTaps ys = QuantizedResizeTaps<kBits>(
        io.in_h, io.out_h, coords_.Scale(io.in_h, io.out_h), coords_.half_pixel_centers, 1);
    const FixedTaps xs = QuantizedResizeTaps<kBits>(
        io.in_w, io.out_w, coords_.Scale(io.in_w, io.out_w), coords_.half_pixel_centers, io.c);
    // A tap's value as TF's kernel reads it.
    const auto value = [](Q q) -> int64_t {
      if constexpr (k8) {
        return q;
      } else {
        return static_cast<int64_t>(static_cast<float>(q));
      }
    };
    // 16-bit for quint8 (no value overflows it), 64-bit for qint32.
    using Calc = std::conditional_t<k8, int16_t, int64_t>;
    const int64_t row = io.in_w * io.c;
    for (int64_t b = 0; b < io.n; ++b) {
      const Q* image = x + b * io.in_h * row;
      for (int64_t i = 0; i < io.out_h; ++i) {
        const Q* top_row = image + ys.lower[i] * row;
        const Q* bottom_row = image + ys.upper[i] * row;
        const int64_t y_lerp = ys.lerp[i];
        for (int64_t j = 0; j < io.out_w; ++j) {
          for (int64_t c = 0; c < io.c; ++c) {
            const int64_t tl = value(top_row[xs.lower[j] + c]),
                          tr = value(top_row[xs.upper[j] + c]);
            const int64_t bl = value(bottom_row[xs.lower[j] + c]),
                          br = value(bottom_row[xs.upper[j] + c]);
            const Calc top = static_cast<Calc>(tl * kOne + (tr - tl) * xs.lerp[j]);
            const Calc bottom = static_cast<Calc>(bl * kOne + (br - bl) * xs.lerp[j]);
            const Calc out = static_cast<Calc>(top + (bottom - top) / kOne * y_lerp);
            *y++ = static_cast<Q>(static_cast<int32_t>((out + kOne / 2) / kOne));
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  ResizeCoordinates coords_;
};

// What QuantizedAdd and QuantizedMul share: x's and y's ranges, scalars,
// checked after the broadcast (TF's order and its messages for each op),
// and the output allocated.
struct BinaryInputs {
  float x_lo, x_hi, y_lo, y_hi;
  Tensor* z = nullptr;
};
absl::StatusOr<BinaryInputs> ReadBinary(KernelContext* ctx, const BCast& b, bool tf_add_messages) {
  BinaryInputs in;
  float* ends[4] = {&in.x_lo, &in.x_hi, &in.y_lo, &in.y_hi};
  const char* names[4] = {"min_x", "max_x", "min_y", "max_y"};
  for (int i = 0; i < 4; ++i) {
    if (!tf_add_messages && ctx->input(2 + i).dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(names[i], " must be a scalar"));
    }
    TW_ASSIGN_OR_RETURN(*ends[i], RangeInput(ctx, 2 + i, names[i]));
  }
  TW_RETURN_IF_ERROR(b.status());
  TW_ASSIGN_OR_RETURN(in.z, ctx->allocate_output(0, b.output_shape()));
  // TF's QuantizedMul names its ranges a and b here.
  if (!(in.x_hi > in.x_lo)) {
    return absl::InvalidArgumentError(tf_add_messages ? "max_x must be larger than min_x."
                                                      : "max_x must be larger than min_a.");
  }
  if (!(in.y_hi > in.y_lo)) {
    return absl::InvalidArgumentError(tf_add_messages ? "max_y must be larger than min_y."
                                                      : "max_x must be larger than min_b.");
  }
  return in;
}

// z[i] = f(x at i, y at i) over the broadcast of x and y.
template <typename F>
void Broadcast(const BCast& b, const uint8_t* x, const uint8_t* y, int32_t* z, F f) {
  if (b.output_shape().num_elements() == 0) return;
  const BCastRows rows(b);
  const int64_t n = rows.row_length();
  for (BCastRows::Cursor c = rows.At(0); c.row() < rows.rows(); c.Next()) {
    int32_t* out = z + c.row() * n;
    for (int64_t j = 0; j < n; ++j) {
      out[j] = f(x[c.x() + j * rows.x_step()], y[c.y() + j * rows.y_step()]);
    }
  }
}

// A quint8 of [lo, hi] as qint32 of [out_lo, out_hi] the way TF's
// QuantizedAdd moves a tensor: v0 + q * (v1 - v0), v0 and v1 the integers
// for quint8's 0 and 1, saturated.
struct Uint8ToInt32 {
  Uint8ToInt32(float lo, float hi, float out_lo, float out_hi)
      : v0(ToQuantizedUnclamped<int32_t>(ToFloat<uint8_t>(0, lo, hi), out_lo, out_hi)),
        step(static_cast<int32_t>(static_cast<uint64_t>(ToQuantizedUnclamped<int32_t>(
                                      ToFloat<uint8_t>(1, lo, hi), out_lo, out_hi)) -
                                  static_cast<uint64_t>(v0))) {}
  int32_t operator()(uint8_t q) const {
    // |q * step| < 2^40: a v0 held within +-2^62 saturates the same, and
    // cannot overflow.
    const int64_t base = std::clamp<int64_t>(v0, -(int64_t{1} << 62), int64_t{1} << 62);
    return static_cast<int32_t>(
        std::clamp<int64_t>(base + int64_t{q} * step, kLowest<int32_t>, kHighest<int32_t>));
  }
  int64_t v0;
  int32_t step;
};

// QuantizedAdd (quint8 + quint8 -> qint32): both moved into [-m, m],
// m = 2^14 times the largest end of either range, and added (wrapping). A
// one-element side is moved through float (RequantizeInNewRange), as TF's
// scalar path. TF's kernel broadcasts a scalar, equal shapes and a
// smaller tensor repeated over a larger one's elements; that repetition is
// wrong for other broadcasts (a column: TF's values differ from the
// broadcast's), and TF refuses more than two broadcast dimensions. Here
// every broadcast is NumPy's.
class QuantizedAddOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const BCast b(x.shape(), y.shape());
    TW_ASSIGN_OR_RETURN(const BinaryInputs in, ReadBinary(ctx, b, /*tf_add_messages=*/true));
    const float biggest =
        std::max(std::abs(std::min(in.x_lo, in.y_lo)), std::abs(std::max(in.x_hi, in.y_hi)));
    const float hi = biggest * (1 << 14), lo = -hi;
    const Uint8ToInt32 x_int(in.x_lo, in.x_hi, lo, hi), y_int(in.y_lo, in.y_hi, lo, hi);
    // TF's scalar path: the single element through float, saturated.
    const bool x_single = x.NumElements() == 1, y_single = !x_single && y.NumElements() == 1;
    const int32_t x_single_int =
        x_single
            ? ToQuantized<int32_t>(ToFloat<uint8_t>(Ints<uint8_t>(x)[0], in.x_lo, in.x_hi), lo, hi)
            : 0;
    const int32_t y_single_int =
        y_single
            ? ToQuantized<int32_t>(ToFloat<uint8_t>(Ints<uint8_t>(y)[0], in.y_lo, in.y_hi), lo, hi)
            : 0;
    Broadcast(b, Ints<uint8_t>(x), Ints<uint8_t>(y), MutableInts<int32_t>(in.z),
              [&](uint8_t a, uint8_t c) {
                const uint32_t sum = static_cast<uint32_t>(x_single ? x_single_int : x_int(a)) +
                                     static_cast<uint32_t>(y_single ? y_single_int : y_int(c));
                return static_cast<int32_t>(sum);
              });
    return SetRange(ctx, 1, lo, hi);
  }
};

// QuantizedMul (quint8 x quint8 -> qint32): the product of the integers
// less their zero points (wrapping), over any broadcast (TF's limits as
// QuantizedAdd's), and the product's range as QuantizedMatMul's.
class QuantizedMulOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const BCast b(x.shape(), y.shape());
    TW_ASSIGN_OR_RETURN(const BinaryInputs in, ReadBinary(ctx, b, /*tf_add_messages=*/false));
    const int32_t x_zero =
        static_cast<int32_t>(ToQuantizedUnclamped<uint8_t>(0.0f, in.x_lo, in.x_hi));
    const int32_t y_zero =
        static_cast<int32_t>(ToQuantizedUnclamped<uint8_t>(0.0f, in.y_lo, in.y_hi));
    Broadcast(b, Ints<uint8_t>(x), Ints<uint8_t>(y), MutableInts<int32_t>(in.z),
              [&](uint8_t a, uint8_t c) {
                return static_cast<int32_t>(static_cast<uint32_t>(LessZero(a, x_zero)) *
                                            static_cast<uint32_t>(LessZero(c, y_zero)));
              });
    const auto [lo, hi] = ProductRange<uint8_t, uint8_t>(in.x_lo, in.x_hi, in.y_lo, in.y_hi);
    return SetRange(ctx, 1, lo, hi);
  }
};

TW_REGISTER_KERNELS(quantized_ops) {
  // The type pairs TF registers, each a kernel.
  struct Entry {
    const char* op;
    std::vector<std::pair<const char*, DataType>> types;
    KernelFactory factory;
    const char* host_memory = nullptr;  // an argument kept on the host
  };
  const auto q = [](const char* in, DataType in_type, const char* out, DataType out_type) {
    return std::vector<std::pair<const char*, DataType>>{{in, in_type}, {out, out_type}};
  };
  const auto u8_u8_to_i32 = [](const char* a, const char* b, const char* out) {
    return std::vector<std::pair<const char*, DataType>>{
        {a, DT_QUINT8}, {b, DT_QUINT8}, {out, DT_QINT32}};
  };
  const std::vector<Entry> entries = {
      {"RequantizationRange", {{"Tinput", DT_QINT32}}, MakeFactory<RequantizationRangeOp>()},
      {"Requantize", q("Tinput", DT_QINT32, "out_type", DT_QUINT8),
       MakeFactory<RequantizeOp<uint8_t, false>>()},
      {"Requantize", q("Tinput", DT_QINT32, "out_type", DT_QINT8),
       MakeFactory<RequantizeOp<int8_t, false>>()},
      {"QuantizeDownAndShrinkRange", q("Tinput", DT_QINT32, "out_type", DT_QUINT8),
       MakeFactory<RequantizeOp<uint8_t, true>>()},
      {"QuantizedRelu", q("Tinput", DT_QUINT8, "out_type", DT_QUINT8),
       MakeFactory<QuantizedReluOp<uint8_t, false>>()},
      {"QuantizedRelu", q("Tinput", DT_QINT32, "out_type", DT_QINT32),
       MakeFactory<QuantizedReluOp<int32_t, false>>()},
      {"QuantizedRelu6", q("Tinput", DT_QUINT8, "out_type", DT_QUINT8),
       MakeFactory<QuantizedReluOp<uint8_t, true>>()},
      {"QuantizedRelu6", q("Tinput", DT_QINT32, "out_type", DT_QINT32),
       MakeFactory<QuantizedReluOp<int32_t, true>>()},
      {"QuantizedBiasAdd", u8_u8_to_i32("T1", "T2", "out_type"),
       MakeFactory<QuantizedBiasAddOp<uint8_t>>()},
      {"QuantizedBiasAdd",
       {{"T1", DT_QINT8}, {"T2", DT_QINT8}, {"out_type", DT_QINT32}},
       MakeFactory<QuantizedBiasAddOp<int8_t>>()},
      {"QuantizedAdd", u8_u8_to_i32("T1", "T2", "Toutput"), MakeFactory<QuantizedAddOp>()},
      {"QuantizedMul", u8_u8_to_i32("T1", "T2", "Toutput"), MakeFactory<QuantizedMulOp>()},
      {"QuantizedMatMul", u8_u8_to_i32("T1", "T2", "Toutput"), MakeFactory<QuantizedMatMulOp>()},
      {"QuantizedConv2D", u8_u8_to_i32("Tinput", "Tfilter", "out_type"),
       MakeFactory<QuantizedConv2DOp>()},
      {"QuantizedBatchNormWithGlobalNormalization", q("Tinput", DT_QUINT8, "out_type", DT_QINT32),
       MakeFactory<QuantizedBatchNormOp>()},
      {"QuantizedResizeBilinear",
       {{"T", DT_QUINT8}},
       MakeFactory<QuantizedResizeBilinearOp<uint8_t>>(),
       "size"},
      {"QuantizedResizeBilinear",
       {{"T", DT_QINT32}},
       MakeFactory<QuantizedResizeBilinearOp<int32_t>>(),
       "size"},
      {"QuantizedMaxPool", {{"T", DT_QUINT8}}, MakeFactory<QuantizedPoolOp<uint8_t, true>>()},
      {"QuantizedMaxPool", {{"T", DT_QINT8}}, MakeFactory<QuantizedPoolOp<int8_t, true>>()},
      {"QuantizedAvgPool", {{"T", DT_QUINT8}}, MakeFactory<QuantizedPoolOp<uint8_t, false>>()},
      {"QuantizedAvgPool", {{"T", DT_QINT8}}, MakeFactory<QuantizedPoolOp<int8_t, false>>()},
      {"QuantizedConcat",
       {{"T", DT_QUINT8}},
       MakeFactory<QuantizedConcatOp<uint8_t>>(),
       "concat_dim"},
      {"QuantizedConcat",
       {{"T", DT_QINT32}},
       MakeFactory<QuantizedConcatOp<int32_t>>(),
       "concat_dim"},
  };
  for (const Entry& e : entries) {
    KernelDefBuilder b(e.op);
    b.Device(kDeviceCpu);
    for (const auto& [attr, type] : e.types) b.TypeConstraint(attr, type);
    if (e.host_memory != nullptr) b.HostMemory(e.host_memory);
    RegisterKernel(b, e.factory);
  }
}

}  // namespace
}  // namespace towerflow
