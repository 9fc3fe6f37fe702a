// Simulated quantisation for quantisation-aware training (TF's
// tf.quantization.fake_quant_*): FakeQuantWithMinMaxArgs (the range as
// attrs), FakeQuantWithMinMaxVars (as scalar tensors, trainable),
// FakeQuantWithMinMaxVarsPerChannel (one range per channel of the last
// dimension), and their *Gradient ops (kernels/cpu/fake_quant_ops.cc).
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

}  // namespace
}  // namespace towerflow
