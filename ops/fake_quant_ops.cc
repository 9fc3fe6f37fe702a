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

}  // namespace
}  // namespace towerflow
