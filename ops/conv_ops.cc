// Windowed ops: 2-D convolution (Conv2D, DepthwiseConv2dNative) with their
// backprops, pooling (MaxPool, AvgPool) with their gradients, and the
// grayscale morphological dilation Dilation2D with its backprops
// (kernels/cpu/dilation_ops.cc).
//
// Data formats: NHWC is batch, height, width, channels; NCHW puts channels
// second. Conv2D filters are HWIO: [height, width, in_channels,
// out_channels]; depthwise filters [height, width, in_channels,
// channel_multiplier].
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/window_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// Dimension indices of a 4-D tensor in a data format.
struct Layout {
  int n, h, w, c;
};

absl::StatusOr<Layout> LayoutOf(InferenceContext* c) {
  std::string format = "NHWC";  // ops without the attr (MaxPoolWithArgmax) are NHWC
  if (c->node_def().attr().contains("data_format")) {
    TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  }
  if (format == "NHWC") return Layout{0, 1, 2, 3};
  if (format == "NCHW") return Layout{0, 2, 3, 1};
  return absl::InvalidArgumentError(
      absl::StrCat("data_format ", format, " is not supported for 4-D tensors"));
}

// Reads a list(int) attr that must have 4 positive entries.
// `v` (the attr or input `attr`), checked: 4 positive values.
absl::StatusOr<std::vector<int64_t>> FourPositiveValues(std::vector<int64_t> v, const char* attr) {
  if (v.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("The ", attr, " attribute must contain 4 values, but got ", v.size()));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "The ", attr, " attribute must be positive, but ", attr, "[", i, "] is ", v[i]));
    }
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> FourPositive(InferenceContext* c, const char* attr) {
  std::vector<int64_t> v;
  TW_RETURN_IF_ERROR(c->GetAttr(attr, &v));
  return FourPositiveValues(std::move(v), attr);
}

// Explicit paddings as (before, after) for the two spatial dims.
absl::Status ReadExplicitPaddings(InferenceContext* c, Padding padding, const Layout& l,
                                  int64_t pads[2][2]) {
  std::vector<int64_t> p;
  TW_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &p));
  if (padding != Padding::kExplicit) {
    if (!p.empty()) {
      return absl::InvalidArgumentError("explicit_paddings is only used with EXPLICIT padding");
    }
    return absl::OkStatus();
  }
  if (p.size() != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("explicit_paddings must have 8 entries, got ", p.size()));
  }
  if (p[2 * l.n] != 0 || p[2 * l.n + 1] != 0 || p[2 * l.c] != 0 || p[2 * l.c + 1] != 0) {
    return absl::InvalidArgumentError(
        "explicit_paddings must be 0 in the batch and depth dimensions");
  }
  pads[0][0] = p[2 * l.h];
  pads[0][1] = p[2 * l.h + 1];
  pads[1][0] = p[2 * l.w];
  pads[1][1] = p[2 * l.w + 1];
  return absl::OkStatus();
}

PartialTensorShape MakeNd(const Layout& l, int64_t n, int64_t h, int64_t w, int64_t ch) {
  std::vector<int64_t> dims(4);
  dims[l.n] = n;
  dims[l.h] = h;
  dims[l.w] = w;
  dims[l.c] = ch;
  return PartialTensorShape(dims);
}

using shape_fns::WindowedShape;

// Conv2D: filter [KH,KW,C,OC] gives OC channels. Depthwise: filter
// [KH,KW,C,M] gives C*M, channel c's M filters for output channels
// [c*M, (c+1)*M).
absl::Status ConvShape(InferenceContext* c, bool depthwise) {
  PartialTensorShape input, filter;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &filter));
  TW_ASSIGN_OR_RETURN(Layout l, LayoutOf(c));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FourPositive(c, "strides"));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, FourPositive(c, "dilations"));
  if (strides[l.n] != 1 || strides[l.c] != 1) {
    return absl::InvalidArgumentError(
        "Strides in the batch and depth dimensions are not supported");
  }
  if (dilations[l.n] != 1 || dilations[l.c] != 1) {
    return absl::InvalidArgumentError(
        "Dilations in the batch and depth dimensions are not supported");
  }
  std::string padding_name;
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &padding_name));
  TW_ASSIGN_OR_RETURN(Padding padding, ParsePadding(padding_name));
  int64_t pads[2][2] = {{0, 0}, {0, 0}};
  TW_RETURN_IF_ERROR(ReadExplicitPaddings(c, padding, l, pads));

  const int64_t in_depth = input.dim_size(l.c);
  const int64_t filter_in = filter.dim_size(2);
  if (filter_in == 0) return absl::InvalidArgumentError("Depth of filter must not be 0");
  if (in_depth >= 0 && filter_in > 0 && in_depth % filter_in != 0) {
    return absl::InvalidArgumentError(absl::StrCat("Depth of input (", in_depth,
                                                   ") is not a multiple of input depth of filter (",
                                                   filter_in, ")"));
  }
  if (depthwise && in_depth >= 0 && filter_in > 0 && in_depth != filter_in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Depth of input (", in_depth, ") must equal the filter's in_channels (", filter_in, ")"));
  }
  int64_t out[2];
  const int spatial[2] = {l.h, l.w};
  for (int i = 0; i < 2; ++i) {
    int64_t before = pads[i][0], after = pads[i][1];
    if (filter.dim_size(i) < 0) {  // an unknown window: only the input is checked
      TW_RETURN_IF_ERROR(GetWindowedOutputSize(input.dim_size(spatial[i]), 1, dilations[spatial[i]],
                                               strides[spatial[i]], padding, &out[i], &before,
                                               &after));
      out[i] = -1;
      continue;
    }
    TW_RETURN_IF_ERROR(WindowedShape(input.dim_size(spatial[i]), filter.dim_size(i),
                                     dilations[spatial[i]], strides[spatial[i]], padding, &out[i],
                                     &before, &after));
  }
  int64_t out_depth = filter.dim_size(3);
  if (depthwise) {
    const int64_t m = filter.dim_size(3);
    out_depth = filter_in < 0 || m < 0 ? -1 : filter_in * m;
  }
  c->set_output(0, MakeNd(l, input.dim_size(l.n), out[0], out[1], out_depth));
  return absl::OkStatus();
}

// Conv2D's and DepthwiseConv2dNative's backprops: the output shape is given by the 1-D shape tensor
// at input `sizes`; the other two inputs are 4-D.
absl::Status ConvBackpropShape(InferenceContext* c, int sizes) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape given, c->MakeShapeFromShapeTensor(sizes));
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(c->WithRank(given, 4, &out));
  for (int i = 0; i < 3; ++i) {
    if (i == sizes) continue;
    PartialTensorShape four;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 4, &four));
  }
  TW_RETURN_IF_ERROR(FourPositive(c, "strides").status());
  c->set_output(0, out);
  return absl::OkStatus();
}

// A pooling op's output for `ksize` and `strides` (attrs, or MaxPoolV2's
// inputs).
absl::Status PoolShapeOf(InferenceContext* c, const std::vector<int64_t>& ksize,
                         const std::vector<int64_t>& strides) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  TW_ASSIGN_OR_RETURN(Layout l, LayoutOf(c));
  if (ksize[l.n] != 1 || strides[l.n] != 1) {
    return absl::InvalidArgumentError("Pooling is not supported on the batch dimension");
  }
  if (ksize[l.c] != 1 || strides[l.c] != 1) {
    return absl::InvalidArgumentError("Pooling is not supported on the depth dimension");
  }
  std::string padding_name;
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &padding_name));
  TW_ASSIGN_OR_RETURN(Padding padding, ParsePadding(padding_name));
  int64_t pads[2][2] = {{0, 0}, {0, 0}};
  if (c->node_def().attr().contains("explicit_paddings")) {
    TW_RETURN_IF_ERROR(ReadExplicitPaddings(c, padding, l, pads));
  } else if (padding == Padding::kExplicit) {
    return absl::InvalidArgumentError("This pooling op does not support EXPLICIT padding");
  }
  int64_t out[2];
  const int spatial[2] = {l.h, l.w};
  for (int i = 0; i < 2; ++i) {
    int64_t before = pads[i][0], after = pads[i][1];
    TW_RETURN_IF_ERROR(WindowedShape(input.dim_size(spatial[i]), ksize[spatial[i]], 1,
                                     strides[spatial[i]], padding, &out[i], &before, &after));
  }
  c->set_output(0, MakeNd(l, input.dim_size(l.n), out[0], out[1], input.dim_size(l.c)));
  return absl::OkStatus();
}

absl::Status PoolShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, FourPositive(c, "ksize"));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FourPositive(c, "strides"));
  return PoolShapeOf(c, ksize, strides);
}

// MaxPoolV2: PoolShape when ksize and strides (inputs 1, 2) are constants;
// else 4-D of unknown size.
absl::Status MaxPoolV2Shape(InferenceContext* c) {
  PartialTensorShape input, window;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  for (int i : {1, 2}) TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &window));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ksize, c->ConstantIntInput(1));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> strides, c->ConstantIntInput(2));
  if (!ksize.has_value() || !strides.has_value()) {
    c->set_output(0, PartialTensorShape::UnknownDims(4));
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> k, FourPositiveValues(*ksize, "ksize"));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> s, FourPositiveValues(*strides, "strides"));
  // A window across images or channels: the kernel's Unimplemented, as TF's.
  TW_ASSIGN_OR_RETURN(Layout l, LayoutOf(c));
  if (k[l.n] != 1 || s[l.n] != 1 || k[l.c] != 1 || s[l.c] != 1) {
    c->set_output(0, PartialTensorShape::UnknownDims(4));
    return absl::OkStatus();
  }
  return PoolShapeOf(c, k, s);
}

// MaxPoolGradV2 (`input` 0) and MaxPoolGradGradV2 (`input` 1): 4-D inputs,
// the output shaped like that input.
template <int kShapedLike>
absl::Status MaxPoolGradV2Shape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape s;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 4, &s));
  }
  PartialTensorShape window;
  for (int i : {3, 4}) TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &window));
  c->set_output(0, c->input(kShapedLike));
  return absl::OkStatus();
}

absl::Status MaxPoolGradShape(InferenceContext* c) {
  PartialTensorShape orig;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &orig));
  for (int i = 1; i < 3; ++i) {
    PartialTensorShape s;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 4, &s));
  }
  TW_RETURN_IF_ERROR(FourPositive(c, "ksize").status());
  TW_RETURN_IF_ERROR(FourPositive(c, "strides").status());
  c->set_output(0, orig);
  return absl::OkStatus();
}

// MaxPoolGradGrad's output is shaped like orig_output.
absl::Status MaxPoolGradGradShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(MaxPoolGradShape(c));
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status AvgPoolGradShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape orig, c->MakeShapeFromShapeTensor(0));
  PartialTensorShape out, grad;
  TW_RETURN_IF_ERROR(c->WithRank(orig, 4, &out));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &grad));
  TW_RETURN_IF_ERROR(FourPositive(c, "ksize").status());
  TW_RETURN_IF_ERROR(FourPositive(c, "strides").status());
  // A constant orig_input_shape must be a real shape (TF advisory 2022-100).
  if (c->input_tensor(0) != nullptr && !out.IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("orig_input_shape must be non-negative, got ", out.DebugString()));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

// --------------------------------------------------------------- schemas

// Conv2D and its two backprops share everything but their inputs.
OpDefBuilder ConvAttrs(OpDefBuilder b, const char* types) {
  b.Attr(absl::StrCat("T: ", types))
      .Attr("strides: list(int)")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .AttrAddedAfterTF1("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return b;
}

// DepthwiseConv2dNative and its backprops: Conv2D's attrs less
// use_cudnn_on_gpu.
OpDefBuilder DepthwiseAttrs(OpDefBuilder b) {
  b.Attr("T: {half, bfloat16, float, double}")
      .Attr("strides: list(int)")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .AttrAddedAfterTF1("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
  return b;
}

constexpr char kFloatish[] = "{half, bfloat16, float, double}";

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(
      ConvAttrs(
          OpDefBuilder("Conv2D", __FILE__).Input("input: T").Input("filter: T").Output("output: T"),
          "{half, bfloat16, float, double, int32}")
          .Doc("2-D convolution of an NHWC/NCHW input with an HWIO filter.")
          .SetShapeFn([](InferenceContext* c) { return ConvShape(c, false); }));
  RegisterOp(ConvAttrs(OpDefBuilder("Conv2DBackpropInput", __FILE__)
                           .Input("input_sizes: int32")
                           .Input("filter: T")
                           .Input("out_backprop: T")
                           .Output("output: T"),
                       "{half, bfloat16, float, double, int32}")
                 .Doc("Gradient of Conv2D with respect to its input.")
                 .SetShapeFn([](InferenceContext* c) { return ConvBackpropShape(c, 0); }));
  RegisterOp(ConvAttrs(OpDefBuilder("Conv2DBackpropFilter", __FILE__)
                           .Input("input: T")
                           .Input("filter_sizes: int32")
                           .Input("out_backprop: T")
                           .Output("output: T"),
                       kFloatish)
                 .Doc("Gradient of Conv2D with respect to its filter.")
                 .SetShapeFn([](InferenceContext* c) { return ConvBackpropShape(c, 1); }));
  // Made by the session's remapper (runtime/graph_optimizer.h), not by
  // builders: TF's schema of Conv2D + fused_ops on `args`.
  RegisterOp(ConvAttrs(OpDefBuilder("_FusedConv2D", __FILE__)
                           .Input("input: T")
                           .Input("filter: T")
                           .Input("args: num_args * T")
                           .Output("output: T"),
                       "{float, double}")
                 .Attr("num_args: int >= 0")
                 .Attr("fused_ops: list(string) = []")
                 .Attr("epsilon: float = 0.0001")
                 .Doc("Conv2D followed by fused_ops: BiasAdd or FusedBatchNorm (inference), then "
                      "optionally Relu or Relu6, on args.")
                 .SetShapeFn([](InferenceContext* c) { return ConvShape(c, false); }));
  RegisterOp(DepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNative", __FILE__)
                                .Input("input: T")
                                .Input("filter: T")
                                .Output("output: T"))
                 .Doc("Convolution of each input channel with its own channel_multiplier filters.")
                 .SetShapeFn([](InferenceContext* c) { return ConvShape(c, true); }));
  RegisterOp(DepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropInput", __FILE__)
                                .Input("input_sizes: int32")
                                .Input("filter: T")
                                .Input("out_backprop: T")
                                .Output("output: T"))
                 .Doc("Gradient of DepthwiseConv2dNative with respect to its input.")
                 .SetShapeFn([](InferenceContext* c) { return ConvBackpropShape(c, 0); }));
  RegisterOp(DepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropFilter", __FILE__)
                                .Input("input: T")
                                .Input("filter_sizes: int32")
                                .Input("out_backprop: T")
                                .Output("output: T"))
                 .Doc("Gradient of DepthwiseConv2dNative with respect to its filter.")
                 .SetShapeFn([](InferenceContext* c) { return ConvBackpropShape(c, 1); }));
  return true;
}();

TW_REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr(
        "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, "
        "qint8} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .AttrAddedAfterTF1("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Doc("Maximum over sliding windows.")
    .SetShapeFn(PoolShape);

TW_REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .AttrAddedAfterTF1("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: realnumbertype = DT_FLOAT")
    .Doc("Gradient of MaxPool: grad routed to each window's maximum.")
    .SetShapeFn(MaxPoolGradShape);

TW_REGISTER_OP("MaxPoolGradGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: realnumbertype")
    .Doc("Gradient of MaxPoolGrad: grad (shaped like orig_input) read at each window's maximum.")
    .SetShapeFn(MaxPoolGradGradShape);

TW_REGISTER_OP("MaxPoolV2")
    .Input("input: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr(
        "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, "
        "qint8} = DT_FLOAT")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Doc("MaxPool with the window (ksize, strides) as inputs.")
    .SetShapeFn(MaxPoolV2Shape);

// MaxPoolGradV2 and MaxPoolGradGradV2: MaxPoolGrad's and MaxPoolGradGrad's
// inputs and the window; the first's output is shaped like orig_input, the
// second's like orig_output.
[[maybe_unused]] const bool kMaxPoolGradV2Registered = [] {
  const struct {
    const char* name;
    const char* types;
    absl::Status (*shape)(InferenceContext*);
    const char* doc;
  } ops[] = {{"MaxPoolGradV2", "T: realnumbertype = DT_FLOAT", MaxPoolGradV2Shape<0>,
              "MaxPoolGrad with the window as inputs."},
             {"MaxPoolGradGradV2", "T: realnumbertype", MaxPoolGradV2Shape<1>,
              "MaxPoolGradGrad with the window as inputs."}};
  for (const auto& op : ops) {
    RegisterOp(OpDefBuilder(op.name, __FILE__)
                   .Input("orig_input: T")
                   .Input("orig_output: T")
                   .Input("grad: T")
                   .Input("ksize: int32")
                   .Input("strides: int32")
                   .Output("output: T")
                   .Attr("padding: {'SAME', 'VALID'}")
                   .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                   .Attr(op.types)
                   .Doc(op.doc)
                   .SetShapeFn(op.shape));
  }
  return true;
}();

TW_REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("Mean over sliding windows (padding not counted).")
    .SetShapeFn(PoolShape);

TW_REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("Gradient of AvgPool.")
    .SetShapeFn(AvgPoolGradShape);

TW_REGISTER_OP("MaxPoolWithArgmax")
    .Input("input: T")
    .Output("output: T")
    .Output("argmax: Targmax")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("Targmax: {int32, int64} = DT_INT64")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("include_batch_in_index: bool = false")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64}")
    .Doc(
        "MaxPool (NHWC) and where each maximum was: ((b * H + y) * W + x) * C + c, b counted "
        "only with include_batch_in_index.")
    .SetShapeFn([](InferenceContext* c) {
      TW_RETURN_IF_ERROR(PoolShape(c));
      c->set_output(1, c->output(0));
      return absl::OkStatus();
    });

TW_REGISTER_OP("MaxPoolGradWithArgmax")
    .Input("input: T")
    .Input("grad: T")
    .Input("argmax: Targmax")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("include_batch_in_index: bool = false")
    .Attr("Targmax: {int32, int64}")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64}")
    .Doc("MaxPoolWithArgmax's gradient: grad added at the argmax positions of input's shape.")
    .SetShapeFn(MaxPoolGradShape);

// Dilation2D: input [batch, rows, cols, depth], filter [rows, cols, depth];
// the window the filter's rows and cols spread by `rates`.
absl::Status Dilation2DShapeOf(InferenceContext* c, PartialTensorShape* out) {
  PartialTensorShape input, filter;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 3, &filter));
  int64_t depth = -1;
  TW_RETURN_IF_ERROR(c->MergeDim(input.dim_size(3), filter.dim_size(2), &depth));
  std::vector<int64_t> strides, rates;
  std::string padding_name;
  TW_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  TW_RETURN_IF_ERROR(c->GetAttr("rates", &rates));
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &padding_name));
  TW_ASSIGN_OR_RETURN(Padding padding, ParsePadding(padding_name));
  if (strides.size() != 4 || rates.size() != 4) {
    return absl::InvalidArgumentError(
        "Dilation2D requires the strides and rates attributes to "
        "contain 4 values");
  }
  int64_t dims[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    int64_t before = 0, after = 0;
    if (input.dim_size(1 + i) >= 0 && filter.dim_size(i) >= 0) {
      TW_RETURN_IF_ERROR(GetWindowedOutputSize(input.dim_size(1 + i), filter.dim_size(i),
                                               rates[1 + i], strides[1 + i], padding, &dims[i],
                                               &before, &after));
    }
  }
  *out = PartialTensorShape({input.dim_size(0), dims[0], dims[1], depth});
  return absl::OkStatus();
}

OpDefBuilder DilationAttrs(OpDefBuilder b) {
  return b
      .Attr(
          "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
          "uint64}")
      .Attr("strides: list(int) >= 4")
      .Attr("rates: list(int) >= 4")
      .Attr("padding: {'SAME', 'VALID'}");
}

[[maybe_unused]] const bool kDilationRegistered = [] {
  RegisterOp(DilationAttrs(OpDefBuilder("Dilation2D", __FILE__)
                               .Input("input: T")
                               .Input("filter: T")
                               .Output("output: T"))
                 .Doc("max over the window of input + filter (grayscale dilation), per channel")
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape out;
                   TW_RETURN_IF_ERROR(Dilation2DShapeOf(c, &out));
                   c->set_output(0, out);
                   return absl::OkStatus();
                 }));
  for (const auto& [name, output, shaped_like] :
       {std::tuple{"Dilation2DBackpropInput", "in_backprop: T", 0},
        std::tuple{"Dilation2DBackpropFilter", "filter_backprop: T", 1}}) {
    RegisterOp(DilationAttrs(OpDefBuilder(name, __FILE__)
                                 .Input("input: T")
                                 .Input("filter: T")
                                 .Input("out_backprop: T")
                                 .Output(output))
                   .Doc("Dilation2D's gradient: out_backprop routed to each window's maximum")
                   .SetShapeFn([shaped_like = shaped_like](InferenceContext* c) {
                     PartialTensorShape out, backprop;
                     TW_RETURN_IF_ERROR(Dilation2DShapeOf(c, &out));
                     TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 4, &backprop));
                     c->set_output(0, c->input(shaped_like));
                     return absl::OkStatus();
                   }));
  }
  return true;
}();

}  // namespace
}  // namespace towerflow
