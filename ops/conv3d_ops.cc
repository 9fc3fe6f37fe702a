// 3-D windowed ops: Conv3D with its backprops (V2, and the deprecated V1
// forms that take the input / filter tensor for its shape), MaxPool3D and
// AvgPool3D with their gradients.
//
// Data formats: NDHWC is batch, planes, rows, columns, channels; NCDHW puts
// channels second. Conv3D filters are [planes, rows, columns, in_channels,
// out_channels].
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/window_util.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::WindowedShape;

// Dimension indices of a 5-D tensor in a data format: batch, the three
// spatial dims, channels.
struct Layout5 {
  int n, s[3], c;
};

absl::StatusOr<Layout5> LayoutOf(InferenceContext* c) {
  std::string format = "NDHWC";
  if (c->node_def().attr().contains("data_format")) {
    TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  }
  if (format == "NDHWC") return Layout5{0, {1, 2, 3}, 4};
  if (format == "NCDHW") return Layout5{0, {2, 3, 4}, 1};
  return absl::InvalidArgumentError(
      absl::StrCat("data_format ", format, " is not supported for 5-D tensors"));
}

// A list(int) attr of 5 positive entries, 1 in the batch and depth dims.
absl::StatusOr<std::vector<int64_t>> FivePositive(InferenceContext* c, const char* attr,
                                                  const Layout5& l) {
  std::vector<int64_t> v;
  TW_RETURN_IF_ERROR(c->GetAttr(attr, &v));
  if (v.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("The ", attr, " attribute must contain 5 values, but got ", v.size()));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "The ", attr, " attribute must be positive, but ", attr, "[", i, "] is ", v[i]));
    }
  }
  if (v[l.n] != 1 || v[l.c] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The ", attr, " attribute is not supported in the batch and depth dimensions"));
  }
  return v;
}

absl::StatusOr<Padding> PaddingOf(InferenceContext* c) {
  std::string name;
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &name));
  return ParsePadding(name);
}

PartialTensorShape Make5d(const Layout5& l, int64_t n, const int64_t spatial[3], int64_t ch) {
  std::vector<int64_t> dims(5);
  dims[l.n] = n;
  for (int i = 0; i < 3; ++i) dims[l.s[i]] = spatial[i];
  dims[l.c] = ch;
  return PartialTensorShape(dims);
}

// Conv3D: input [N,D,H,W,C] (or NCDHW), filter [KD,KH,KW,C,OC] gives OC
// channels.
absl::Status Conv3DShape(InferenceContext* c) {
  PartialTensorShape input, filter;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 5, &input));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 5, &filter));
  TW_ASSIGN_OR_RETURN(Layout5 l, LayoutOf(c));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FivePositive(c, "strides", l));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, FivePositive(c, "dilations", l));
  TW_ASSIGN_OR_RETURN(Padding padding, PaddingOf(c));
  const int64_t in_depth = input.dim_size(l.c), filter_in = filter.dim_size(3);
  if (filter_in == 0) return absl::InvalidArgumentError("Depth of filter must not be 0");
  if (in_depth >= 0 && filter_in > 0 && in_depth % filter_in != 0) {
    return absl::InvalidArgumentError(absl::StrCat("Depth of input (", in_depth,
                                                   ") is not a multiple of input depth of filter (",
                                                   filter_in, ")"));
  }
  int64_t out[3];
  for (int i = 0; i < 3; ++i) {
    const int d = l.s[i];
    int64_t before = 0, after = 0;
    if (filter.dim_size(i) < 0) {  // an unknown window: only the input is checked
      TW_RETURN_IF_ERROR(GetWindowedOutputSize(input.dim_size(d), 1, dilations[d], strides[d],
                                               padding, &out[i], &before, &after));
      out[i] = -1;
      continue;
    }
    TW_RETURN_IF_ERROR(WindowedShape(input.dim_size(d), filter.dim_size(i), dilations[d],
                                     strides[d], padding, &out[i], &before, &after));
  }
  c->set_output(0, Make5d(l, input.dim_size(l.n), out, filter.dim_size(4)));
  return absl::OkStatus();
}

// The backprops: the output is shaped by input `sizes` — a 1-D shape tensor
// (V2), or the tensor itself (V1); the other inputs are 5-D.
absl::Status Conv3DBackpropShape(InferenceContext* c, int sizes, bool v2) {
  PartialTensorShape out;
  if (v2) {
    TW_ASSIGN_OR_RETURN(PartialTensorShape given, c->MakeShapeFromShapeTensor(sizes));
    TW_RETURN_IF_ERROR(c->WithRank(given, 5, &out));
  } else {
    TW_RETURN_IF_ERROR(c->WithRank(c->input(sizes), 5, &out));
  }
  for (int i = 0; i < 3; ++i) {
    if (i == sizes) continue;
    PartialTensorShape five;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 5, &five));
  }
  TW_ASSIGN_OR_RETURN(Layout5 l, LayoutOf(c));
  TW_RETURN_IF_ERROR(FivePositive(c, "strides", l).status());
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status Pool3DShape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 5, &input));
  TW_ASSIGN_OR_RETURN(Layout5 l, LayoutOf(c));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, FivePositive(c, "ksize", l));
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FivePositive(c, "strides", l));
  TW_ASSIGN_OR_RETURN(Padding padding, PaddingOf(c));
  int64_t out[3];
  for (int i = 0; i < 3; ++i) {
    const int d = l.s[i];
    int64_t before = 0, after = 0;
    TW_RETURN_IF_ERROR(WindowedShape(input.dim_size(d), ksize[d], 1, strides[d], padding, &out[i],
                                     &before, &after));
  }
  c->set_output(0, Make5d(l, input.dim_size(l.n), out, input.dim_size(l.c)));
  return absl::OkStatus();
}

// MaxPool3DGrad (shaped like orig_input, input 0) and MaxPool3DGradGrad
// (like orig_output, input 1): three 5-D inputs.
absl::Status MaxPool3DGradShape(InferenceContext* c, int like) {
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape s;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 5, &s));
  }
  TW_ASSIGN_OR_RETURN(Layout5 l, LayoutOf(c));
  TW_RETURN_IF_ERROR(FivePositive(c, "ksize", l).status());
  TW_RETURN_IF_ERROR(FivePositive(c, "strides", l).status());
  c->set_output(0, c->input(like));
  return absl::OkStatus();
}

absl::Status AvgPool3DGradShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape orig, c->MakeShapeFromShapeTensor(0));
  PartialTensorShape out, grad;
  TW_RETURN_IF_ERROR(c->WithRank(orig, 5, &out));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 5, &grad));
  TW_ASSIGN_OR_RETURN(Layout5 l, LayoutOf(c));
  TW_RETURN_IF_ERROR(FivePositive(c, "ksize", l).status());
  TW_RETURN_IF_ERROR(FivePositive(c, "strides", l).status());
  if (c->input_tensor(0) != nullptr && !out.IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("orig_input_shape must be non-negative, got ", out.DebugString()));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

// --------------------------------------------------------------- schemas

constexpr char kConvTypes[] = "T: {half, bfloat16, float, double}";
constexpr char kFormat[] = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'";
constexpr char kDilations[] = "dilations: list(int) = [1, 1, 1, 1, 1]";

// The pooling ops' attrs after their inputs, less T.
OpDefBuilder PoolAttrs(OpDefBuilder b) {
  b.Attr("ksize: list(int) >= 5")
      .Attr("strides: list(int) >= 5")
      .Attr("padding: {'SAME', 'VALID'}")
      .Attr(kFormat);
  return b;
}

// The convolutions' window attrs after their inputs and T; the
// deprecated V1 backprops have no data_format.
OpDefBuilder ConvAttrs(OpDefBuilder b, bool has_format = true) {
  b.Attr("strides: list(int) >= 5").Attr("padding: {'SAME', 'VALID'}");
  if (has_format) b.Attr(kFormat);
  b.Attr(kDilations);
  return b;
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(ConvAttrs(OpDefBuilder("Conv3D", __FILE__)
                           .Input("input: T")
                           .Input("filter: T")
                           .Output("output: T")
                           .Attr(kConvTypes))
                 .Doc("3-D convolution of an NDHWC/NCDHW input with a [KD,KH,KW,C,OC] filter.")
                 .SetShapeFn(Conv3DShape));
  RegisterOp(ConvAttrs(OpDefBuilder("Conv3DBackpropInputV2", __FILE__)
                           .Input("input_sizes: Tshape")
                           .Input("filter: T")
                           .Input("out_backprop: T")
                           .Output("output: T")
                           .Attr(kConvTypes))
                 .Attr("Tshape: {int32, int64} = DT_INT32")
                 .Doc("Gradient of Conv3D with respect to its input.")
                 .SetShapeFn([](InferenceContext* c) { return Conv3DBackpropShape(c, 0, true); }));
  RegisterOp(ConvAttrs(OpDefBuilder("Conv3DBackpropFilterV2", __FILE__)
                           .Input("input: T")
                           .Input("filter_sizes: int32")
                           .Input("out_backprop: T")
                           .Output("output: T")
                           .Attr(kConvTypes))
                 .Doc("Gradient of Conv3D with respect to its filter.")
                 .SetShapeFn([](InferenceContext* c) { return Conv3DBackpropShape(c, 1, true); }));
  for (const bool filter : {false, true}) {
    RegisterOp(
        ConvAttrs(OpDefBuilder(filter ? "Conv3DBackpropFilter" : "Conv3DBackpropInput", __FILE__)
                      .Input("input: T")
                      .Input("filter: T")
                      .Input("out_backprop: T")
                      .Output("output: T")
                      .Attr("T: {half, float, double}"),
                  /*has_format=*/false)
            .Doc(filter ? "Deprecated (TF 1.x graphs): Conv3DBackpropFilterV2 with the filter's "
                          "shape taken from `filter`."
                        : "Deprecated (TF 1.x graphs): Conv3DBackpropInputV2 with the input's "
                          "shape taken from `input`.")
            .SetShapeFn([filter](InferenceContext* c) {
              return Conv3DBackpropShape(c, filter ? 1 : 0, false);
            }));
  }
  RegisterOp(PoolAttrs(OpDefBuilder("MaxPool3D", __FILE__).Input("input: T").Output("output: T"))
                 .Attr("T: {half, bfloat16, float}")
                 .Doc("Maximum over 3-D sliding windows.")
                 .SetShapeFn(Pool3DShape));
  RegisterOp(PoolAttrs(OpDefBuilder("AvgPool3D", __FILE__).Input("input: T").Output("output: T"))
                 .Attr("T: {half, bfloat16, float, double}")
                 .Doc("Mean over 3-D sliding windows (padding not counted).")
                 .SetShapeFn(Pool3DShape));
  RegisterOp(PoolAttrs(OpDefBuilder("MaxPool3DGrad", __FILE__)
                           .Input("orig_input: TInput")
                           .Input("orig_output: TInput")
                           .Input("grad: T")
                           .Output("output: T"))
                 .Attr("T: {half, bfloat16, float} = DT_FLOAT")
                 .Attr("TInput: {half, bfloat16, float} = DT_FLOAT")
                 .Doc("Gradient of MaxPool3D: grad given to each pixel within 1e-5 of its "
                      "window's maximum.")
                 .SetShapeFn([](InferenceContext* c) { return MaxPool3DGradShape(c, 0); }));
  RegisterOp(PoolAttrs(OpDefBuilder("AvgPool3DGrad", __FILE__)
                           .Input("orig_input_shape: int32")
                           .Input("grad: T")
                           .Output("output: T"))
                 .Attr("T: {half, bfloat16, float, double}")
                 .Doc("Gradient of AvgPool3D.")
                 .SetShapeFn(AvgPool3DGradShape));
  RegisterOp(PoolAttrs(OpDefBuilder("MaxPool3DGradGrad", __FILE__)
                           .Input("orig_input: T")
                           .Input("orig_output: T")
                           .Input("grad: T")
                           .Output("output: T"))
                 .Attr("T: realnumbertype")
                 .Doc("Gradient of MaxPool3DGrad: grad (shaped like orig_input) read at each "
                      "window's first maximum.")
                 .SetShapeFn([](InferenceContext* c) { return MaxPool3DGradShape(c, 1); }));
  return true;
}();

}  // namespace
}  // namespace towerflow
