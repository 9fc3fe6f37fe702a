// Simulated quantisation for quantisation-aware training (TF's
// tf.quantization.fake_quant_*): FakeQuantWithMinMaxArgs (the range as
// attrs), FakeQuantWithMinMaxVars (as scalar tensors, trainable),
// FakeQuantWithMinMaxVarsPerChannel (one range per channel of the last
// dimension), and their *Gradient ops (kernels/cpu/fake_quant_ops.cc);
// and QuantizeAndDequantizeV2/V3/V4 with V4's gradient op
// (kernels/cpu/quantize_and_dequantize_ops.cc), the range scaled so that 0
// stays 0; QuantizeV2 and Dequantize (the same file).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/window_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status VarsShape(InferenceContext* c) {
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status VarsGradientShape(InferenceContext* c) {
  PartialTensorShape scalar, input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
  TW_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &input));
  c->set_output(0, input);
  c->set_output(1, PartialTensorShape::Scalar());
  c->set_output(2, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// The channels: the last dimension of the input, merged with min's and
// max's lengths.
absl::StatusOr<int64_t> Channels(InferenceContext* c, const PartialTensorShape& input,
                                 int first_range_input) {
  PartialTensorShape in;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(input, 1, &in));
  int64_t d = in.unknown_rank() ? -1 : in.dim_size(in.dims() - 1);
  for (int i = first_range_input; i < first_range_input + 2; ++i) {
    PartialTensorShape range;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &range));
    TW_RETURN_IF_ERROR(c->MergeDim(d, range.dim_size(0), &d));
  }
  return d;
}

absl::Status PerChannelShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(int64_t d, Channels(c, c->input(0), 1));
  (void)d;
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status PerChannelGradientShape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &input));
  TW_ASSIGN_OR_RETURN(int64_t d, Channels(c, input, 2));
  c->set_output(0, input);
  c->set_output(1, PartialTensorShape({d}));
  c->set_output(2, PartialTensorShape({d}));
  return absl::OkStatus();
}

constexpr char kNumBits[] = "num_bits: int = 8";
constexpr char kNarrowRange[] = "narrow_range: bool = false";

TW_REGISTER_OP("FakeQuantWithMinMaxArgs")
    .Input("inputs: float")
    .Output("outputs: float")
    .Attr("min: float = -6")
    .Attr("max: float = 6")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("inputs clamped to [min, max] (nudged so 0 is exact) and rounded to its 2^num_bits steps.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("FakeQuantWithMinMaxArgsGradient")
    .Input("gradients: float")
    .Input("inputs: float")
    .Output("backprops: float")
    .Attr("min: float = -6")
    .Attr("max: float = 6")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("gradients where inputs lie in the nudged [min, max], else 0.")
    .SetShapeFn(shape_fns::MergeAllInputsShape);

TW_REGISTER_OP("FakeQuantWithMinMaxVars")
    .Input("inputs: float")
    .Input("min: float")
    .Input("max: float")
    .Output("outputs: float")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("FakeQuantWithMinMaxArgs with the range from scalar tensors.")
    .SetShapeFn(VarsShape);

TW_REGISTER_OP("FakeQuantWithMinMaxVarsGradient")
    .Input("gradients: float")
    .Input("inputs: float")
    .Input("min: float")
    .Input("max: float")
    .Output("backprops_wrt_input: float")
    .Output("backprop_wrt_min: float")
    .Output("backprop_wrt_max: float")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("The gradients within the nudged range, and the sums of those below and above it.")
    .SetShapeFn(VarsGradientShape);

TW_REGISTER_OP("FakeQuantWithMinMaxVarsPerChannel")
    .Input("inputs: float")
    .Input("min: float")
    .Input("max: float")
    .Output("outputs: float")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("FakeQuantWithMinMaxVars with a range per channel of the last dimension.")
    .SetShapeFn(PerChannelShape);

TW_REGISTER_OP("FakeQuantWithMinMaxVarsPerChannelGradient")
    .Input("gradients: float")
    .Input("inputs: float")
    .Input("min: float")
    .Input("max: float")
    .Output("backprops_wrt_input: float")
    .Output("backprop_wrt_min: float")
    .Output("backprop_wrt_max: float")
    .Attr(kNumBits)
    .Attr(kNarrowRange)
    .Doc("FakeQuantWithMinMaxVarsGradient per channel of the last dimension.")
    .SetShapeFn(PerChannelGradientShape);

// QuantizeAndDequantizeV2/V3/V4 and V4Grad: input_min and input_max are
// scalars, or [depth of axis] for a per-channel axis (TF's shape function).
absl::Status QdqRangeShape(InferenceContext* c, int first_range, PartialTensorShape* range) {
  int64_t axis = -1;
  TW_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1) {
    return absl::InvalidArgumentError(absl::StrCat("axis should be at least -1, got ", axis));
  }
  const int rank = axis == -1 ? 0 : 1;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(first_range), rank, range));
  TW_RETURN_IF_ERROR(c->Merge(*range, c->input(first_range + 1), range));
  const PartialTensorShape& input = c->input(first_range - 1);
  if (axis != -1 && !input.unknown_rank()) {
    // axis is compared as int64: a GraphDef's axis may not fit an int.
    if (axis >= input.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape must be at least rank ", static_cast<uint64_t>(axis) + 1,
                       " but is rank ", input.dims(), " (", input.DebugString(), ")"));
    }
    TW_RETURN_IF_ERROR(
        c->Merge(*range, PartialTensorShape({input.dim_size(static_cast<int>(axis))}), range));
  }
  return absl::OkStatus();
}

absl::Status QdqShape(InferenceContext* c) {
  PartialTensorShape range;
  TW_RETURN_IF_ERROR(QdqRangeShape(c, 1, &range));
  if (c->num_inputs() == 4) {  // V3's num_bits
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
  }
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

constexpr char kQdqTypes[] = "T: {bfloat16, half, float, double}";

[[maybe_unused]] const bool kQdqRegistered = [] {
  for (const char* name : {"QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4"}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("input: T")
                   .Input("input_min: T")
                   .Input("input_max: T")
                   .Output("output: T")
                   .Attr("signed_input: bool = true")
                   .Attr("num_bits: int = 8")
                   .Attr("range_given: bool = false")
                   .Attr(kQdqTypes)
                   .Attr("round_mode: {'HALF_TO_EVEN', 'HALF_UP'} = 'HALF_TO_EVEN'")
                   .Attr("narrow_range: bool = false")
                   .Attr("axis: int = -1")
                   .Doc("input rounded to num_bits steps of its range (per axis slice), 0 kept")
                   .SetShapeFn(QdqShape));
  }
  return true;
}();

TW_REGISTER_OP("QuantizeAndDequantizeV3")
    .Input("input: T")
    .Input("input_min: T")
    .Input("input_max: T")
    .Input("num_bits: int32")
    .Output("output: T")
    .Attr("signed_input: bool = true")
    .Attr("range_given: bool = true")
    .Attr(kQdqTypes)
    .Attr("narrow_range: bool = false")
    .Attr("axis: int = -1")
    .Doc("QuantizeAndDequantizeV2 with num_bits an input, rounding half to even.")
    .SetShapeFn(QdqShape);

TW_REGISTER_OP("QuantizeAndDequantizeV4Grad")
    .Input("gradients: T")
    .Input("input: T")
    .Input("input_min: T")
    .Input("input_max: T")
    .Output("input_backprop: T")
    .Output("input_min_backprop: T")
    .Output("input_max_backprop: T")
    .Attr(kQdqTypes)
    .Attr("axis: int = -1")
    .Doc("gradients where input lies in [input_min, input_max], else 0; zeros for the range.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape range, input;
      TW_RETURN_IF_ERROR(QdqRangeShape(c, 2, &range));
      TW_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &input));
      c->set_output(0, input);
      c->set_output(1, range);
      c->set_output(2, range);
      return absl::OkStatus();
    });

// QuantizeV2 and Dequantize (quantize_and_dequantize_ops.cc): the quantized
// integers and the float range they stand for, one range per slice of axis.
constexpr char kQuantizedTypes[] = "T: {qint8, quint8, qint32, qint16, quint16}";
constexpr char kQuantizeModes[] = "mode: {'MIN_COMBINED', 'MIN_FIRST', 'SCALED'} = 'MIN_COMBINED'";

TW_REGISTER_OP("QuantizeV2")
    .Input("input: float")
    .Input("min_range: float")
    .Input("max_range: float")
    .Output("output: T")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr(kQuantizedTypes)
    .Attr(kQuantizeModes)
    .Attr("round_mode: {'HALF_AWAY_FROM_ZERO', 'HALF_TO_EVEN'} = 'HALF_AWAY_FROM_ZERO'")
    .Attr("narrow_range: bool = false")
    .Attr("axis: int = -1")
    .Attr("ensure_minimum_range: float = 0.01")
    .Doc("input as integers of T standing for [output_min, output_max] (per axis slice)")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape range;
      TW_RETURN_IF_ERROR(QdqRangeShape(c, 1, &range));
      c->set_output(0, c->input(0));
      c->set_output(1, range);
      c->set_output(2, range);
      return absl::OkStatus();
    });

TW_REGISTER_OP("Dequantize")
    .Input("input: T")
    .Input("min_range: float")
    .Input("max_range: float")
    .Output("output: dtype")
    .Attr(kQuantizedTypes)
    .Attr(kQuantizeModes)
    .Attr("narrow_range: bool = false")
    .Attr("axis: int = -1")
    .Attr("dtype: {bfloat16, float} = DT_FLOAT")
    .Doc("the floats that QuantizeV2's integers stand for")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape range;
      TW_RETURN_IF_ERROR(QdqRangeShape(c, 1, &range));
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });

// TF 1's eight-bit inference ops. Every quantized tensor comes with the
// float range [min, max] its integers stand for, as scalar inputs, and the
// result's range is the last two outputs, scalars too.
std::string QuantizedTypeAttr(const char* name, const char* default_type = nullptr) {
  return absl::StrCat(name, ": {qint8, quint8, qint32, qint16, quint16}",
                      default_type ? absl::StrCat(" = ", default_type) : "");
}

// Inputs [first, first + count) are scalars; the last two outputs too.
absl::Status ScalarRanges(InferenceContext* c, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  c->set_output(c->num_outputs() - 2, PartialTensorShape::Scalar());
  c->set_output(c->num_outputs() - 1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// The input's shape; every other input a scalar range.
absl::Status QuantizedUnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return ScalarRanges(c, 1, c->num_inputs() - 1);
}

// [batch, out_rows, out_cols, depth] of input 0, 4-D NHWC, under a window
// of rows x cols (-1: unknown) and the strides and padding attrs.
absl::Status QuantizedWindowShape(InferenceContext* c, int64_t rows, int64_t cols, int64_t depth) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  std::vector<int64_t> strides;
  std::string padding_name;
  TW_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &padding_name));
  TW_ASSIGN_OR_RETURN(const Padding padding, ParsePadding(padding_name));
  if (strides.size() != 4) {
    return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
  }
  int64_t out[2] = {-1, -1};
  const int64_t window[2] = {rows, cols};
  for (int i = 0; i < 2; ++i) {
    const int64_t in = input.dim_size(i + 1);
    int64_t before = 0, after = 0;
    if (in < 0 || window[i] < 0) continue;
    TW_RETURN_IF_ERROR(shape_fns::WindowedShape(in, window[i], 1, strides[i + 1], padding, &out[i],
                                                &before, &after));
  }
  c->set_output(0, PartialTensorShape({input.dim_size(0), out[0], out[1], depth}));
  return absl::OkStatus();
}

TW_REGISTER_OP("QuantizedConv2D")
    .Input("input: Tinput")
    .Input("filter: Tfilter")
    .Input("min_input: float")
    .Input("max_input: float")
    .Input("min_filter: float")
    .Input("max_filter: float")
    .Output("output: out_type")
    .Output("min_output: float")
    .Output("max_output: float")
    .Attr(QuantizedTypeAttr("Tinput"))
    .Attr(QuantizedTypeAttr("Tfilter"))
    .Attr(QuantizedTypeAttr("out_type", "DT_QINT32"))
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Doc("Conv2D of the integers less their zero points, summed in 32 bits, with its range")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape filter;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &filter));
      TW_RETURN_IF_ERROR(
          QuantizedWindowShape(c, filter.dim_size(0), filter.dim_size(1), filter.dim_size(3)));
      return ScalarRanges(c, 2, 4);
    });

TW_REGISTER_OP("QuantizedMatMul")
    .Input("a: T1")
    .Input("b: T2")
    .Input("min_a: float")
    .Input("max_a: float")
    .Input("min_b: float")
    .Input("max_b: float")
    .Output("out: Toutput")
    .Output("min_out: float")
    .Output("max_out: float")
    .Attr(QuantizedTypeAttr("T1"))
    .Attr(QuantizedTypeAttr("T2"))
    .Attr(QuantizedTypeAttr("Toutput", "DT_QINT32"))
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(QuantizedTypeAttr("Tactivation", "DT_QUINT8"))
    .Doc("MatMul of the integers less their zero points, summed in 32 bits, with its range")
    .SetShapeFn([](InferenceContext* c) {
      TW_RETURN_IF_ERROR(shape_fns::MatMulShape(c));
      return ScalarRanges(c, 2, 4);
    });

TW_REGISTER_OP("QuantizedBiasAdd")
    .Input("input: T1")
    .Input("bias: T2")
    .Input("min_input: float")
    .Input("max_input: float")
    .Input("min_bias: float")
    .Input("max_bias: float")
    .Output("output: out_type")
    .Output("min_out: float")
    .Output("max_out: float")
    .Attr(QuantizedTypeAttr("T1"))
    .Attr(QuantizedTypeAttr("T2"))
    .Attr(QuantizedTypeAttr("out_type"))
    .Doc("input + bias along the last dimension, both moved into a range that holds the sum")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape input, bias;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &input));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &bias));
      c->set_output(0, input);
      return ScalarRanges(c, 2, 4);
    });

// QuantizedAdd and QuantizedMul share theirs: broadcasting x and y.
[[maybe_unused]] const bool kQuantizedBinaryOps = [] {
  for (const char* name : {"QuantizedAdd", "QuantizedMul"}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("x: T1")
        .Input("y: T2")
        .Input("min_x: float")
        .Input("max_x: float")
        .Input("min_y: float")
        .Input("max_y: float")
        .Output("z: Toutput")
        .Output("min_z: float")
        .Output("max_z: float")
        .Attr(QuantizedTypeAttr("T1"))
        .Attr(QuantizedTypeAttr("T2"))
        .Attr(QuantizedTypeAttr("Toutput", "DT_QINT32"))
        .Doc(
            "x + y or x * y of the quantized values, broadcast, as 32-bit integers and their range")
        .SetShapeFn([](InferenceContext* c) {
          TW_RETURN_IF_ERROR(shape_fns::BroadcastBinaryOpShape(c));
          return ScalarRanges(c, 2, 4);
        });
    RegisterOp(b);
  }
  return true;
}();

TW_REGISTER_OP("QuantizedBatchNormWithGlobalNormalization")
    .Input("t: Tinput")
    .Input("t_min: float")
    .Input("t_max: float")
    .Input("m: Tinput")
    .Input("m_min: float")
    .Input("m_max: float")
    .Input("v: Tinput")
    .Input("v_min: float")
    .Input("v_max: float")
    .Input("beta: Tinput")
    .Input("beta_min: float")
    .Input("beta_max: float")
    .Input("gamma: Tinput")
    .Input("gamma_min: float")
    .Input("gamma_max: float")
    .Output("result: out_type")
    .Output("result_min: float")
    .Output("result_max: float")
    .Attr(QuantizedTypeAttr("Tinput"))
    .Attr(QuantizedTypeAttr("out_type"))
    .Attr("variance_epsilon: float")
    .Attr("scale_after_normalization: bool")
    .Doc("BatchNormWithGlobalNormalization of quantized tensors, in 32-bit fixed point")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape t;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &t));
      int64_t depth = t.dim_size(3);
      for (int i = 3; i < 15; i += 3) {
        PartialTensorShape vector;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &vector));
        TW_RETURN_IF_ERROR(c->MergeDim(depth, vector.dim_size(0), &depth));
      }
      for (int i = 1; i < 15; i += 3) {
        PartialTensorShape scalar;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i + 1), 0, &scalar));
      }
      c->set_output(0, PartialTensorShape({t.dim_size(0), t.dim_size(1), t.dim_size(2), depth}));
      c->set_output(1, PartialTensorShape::Scalar());
      c->set_output(2, PartialTensorShape::Scalar());
      return absl::OkStatus();
    });

TW_REGISTER_OP("QuantizedResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Input("min: float")
    .Input("max: float")
    .Output("resized_images: T")
    .Output("out_min: float")
    .Output("out_max: float")
    .Attr("T: {quint8, qint32, float}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("ResizeBilinear of the integers in fixed point; the range unchanged")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape images;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &images));
      TW_ASSIGN_OR_RETURN(PartialTensorShape size, c->MakeShapeFromShapeTensor(1));
      if (!size.unknown_rank() && size.dims() != 2) {
        return absl::InvalidArgumentError("size must hold 2 values: the new height and width");
      }
      const int64_t h = size.unknown_rank() ? -1 : size.dim_size(0);
      const int64_t w = size.unknown_rank() ? -1 : size.dim_size(1);
      c->set_output(0, PartialTensorShape({images.dim_size(0), h, w, images.dim_size(3)}));
      return ScalarRanges(c, 2, 2);
    });

// QuantizedRelu and QuantizedRelu6 share their signature.
[[maybe_unused]] const bool kQuantizedRelus = [] {
  for (const char* name : {"QuantizedRelu", "QuantizedRelu6"}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("features: Tinput")
        .Input("min_features: float")
        .Input("max_features: float")
        .Output("activations: out_type")
        .Output("min_activations: float")
        .Output("max_activations: float")
        .Attr(QuantizedTypeAttr("Tinput"))
        .Attr(QuantizedTypeAttr("out_type", "DT_QUINT8"))
        .Doc("features clamped at the integers standing for 0 (and 6); the range unchanged")
        .SetShapeFn(QuantizedUnchangedShape);
    RegisterOp(b);
  }
  return true;
}();

// QuantizedMaxPool and QuantizedAvgPool share theirs.
[[maybe_unused]] const bool kQuantizedPools = [] {
  for (const char* name : {"QuantizedMaxPool", "QuantizedAvgPool"}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("input: T")
        .Input("min_input: float")
        .Input("max_input: float")
        .Output("output: T")
        .Output("min_output: float")
        .Output("max_output: float")
        .Attr(QuantizedTypeAttr("T"))
        .Attr("ksize: list(int)")
        .Attr("strides: list(int)")
        .Attr("padding: {'SAME', 'VALID'}")
        .Doc("MaxPool or AvgPool (rounded toward zero) of the integers; the range unchanged")
        .SetShapeFn([](InferenceContext* c) {
          std::vector<int64_t> ksize;
          TW_RETURN_IF_ERROR(c->GetAttr("ksize", &ksize));
          if (ksize.size() != 4) {
            return absl::InvalidArgumentError(
                "Sliding window ksize field must specify 4 dimensions");
          }
          const PartialTensorShape& in = c->input(0);
          const int64_t depth = in.unknown_rank() || in.dims() != 4 ? -1 : in.dim_size(3);
          TW_RETURN_IF_ERROR(QuantizedWindowShape(c, ksize[1], ksize[2], depth));
          return ScalarRanges(c, 1, 2);
        });
    RegisterOp(b);
  }
  return true;
}();

TW_REGISTER_OP("QuantizedConcat")
    .Input("concat_dim: int32")
    .Input("values: N * T")
    .Input("input_mins: N * float")
    .Input("input_maxes: N * float")
    .Output("output: T")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Doc("Concat of the values, each moved into the range that holds them all")
    .SetShapeFn([](InferenceContext* c) {
      int n = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("N", &n));
      TW_RETURN_IF_ERROR(ScalarRanges(c, 1 + n, 2 * n));
      // The values merged but along concat_dim, where their sizes add up.
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> axis, c->ConstantScalarInput(0));
      PartialTensorShape out = c->input(1);
      for (int i = 2; i <= n && !out.unknown_rank(); ++i) {
        PartialTensorShape value;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), out.dims(), &value));
      }
      if (out.unknown_rank()) return absl::OkStatus();
      if (!axis.has_value()) {
        c->set_output(0, PartialTensorShape::UnknownDims(out.dims()));
        return absl::OkStatus();
      }
      if (*axis < 0 || *axis >= out.dims()) {
        return absl::InvalidArgumentError(
            absl::StrCat("ConcatOp : Expected concatenating dimensions in the range [0, ",
                         out.dims(), "), but got ", *axis));
      }
      std::vector<int64_t> dims(out.dim_sizes().begin(), out.dim_sizes().end());
      for (int i = 2; i <= n; ++i) {
        const PartialTensorShape& value = c->input(i);
        for (int d = 0; d < out.dims(); ++d) {
          const int64_t size = value.dim_size(d);
          if (d == *axis) {
            dims[d] = dims[d] < 0 || size < 0 ? -1 : dims[d] + size;
          } else {
            TW_RETURN_IF_ERROR(c->MergeDim(dims[d], size, &dims[d]));
          }
        }
      }
      c->set_output(0, PartialTensorShape(dims));
      return absl::OkStatus();
    });

TW_REGISTER_OP("QuantizedReshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Input("input_min: float")
    .Input("input_max: float")
    .Output("output: T")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Doc("Reshape; the range unchanged")
    .SetShapeFn([](InferenceContext* c) {
      TW_RETURN_IF_ERROR(ScalarRanges(c, 2, 2));
      TW_ASSIGN_OR_RETURN(const OpRegistrationData* reshape,
                          OpRegistry::Global()->LookUp("Reshape"));
      return reshape->shape_fn(c);  // reads tensor and shape, as Reshape's
    });

TW_REGISTER_OP("RequantizationRange")
    .Input("input: Tinput")
    .Input("input_min: float")
    .Input("input_max: float")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr(QuantizedTypeAttr("Tinput"))
    .Doc("the float range of the values input holds, its minimum no higher than 0")
    .SetShapeFn([](InferenceContext* c) { return ScalarRanges(c, 1, 2); });

TW_REGISTER_OP("Requantize")
    .Input("input: Tinput")
    .Input("input_min: float")
    .Input("input_max: float")
    .Input("requested_output_min: float")
    .Input("requested_output_max: float")
    .Output("output: out_type")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr(QuantizedTypeAttr("Tinput"))
    .Attr(QuantizedTypeAttr("out_type"))
    .Doc("input's values as out_type in the requested range")
    .SetShapeFn(QuantizedUnchangedShape);

TW_REGISTER_OP("QuantizeDownAndShrinkRange")
    .Input("input: Tinput")
    .Input("input_min: float")
    .Input("input_max: float")
    .Output("output: out_type")
    .Output("output_min: float")
    .Output("output_max: float")
    .Attr(QuantizedTypeAttr("Tinput"))
    .Attr(QuantizedTypeAttr("out_type"))
    .Doc("Requantize into the range that RequantizationRange gives")
    .SetShapeFn(QuantizedUnchangedShape);

}  // namespace
}  // namespace towerflow
