// Gradients of the neural-network ops. g is dL/d(output).
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// Adds a `type` node on `inputs` carrying the forward op's attrs `attrs`
// (the window and layout attrs a backprop op shares with its forward op),
// and for each {to, from} of `renamed`, attr `to` set to fwd's `from`.
Output AddWithAttrsOf(const Scope& scope, const std::string& type,
                      const std::vector<Output>& inputs, const Operation& fwd,
                      const std::vector<std::string>& attrs,
                      const std::vector<std::pair<std::string, std::string>>& renamed = {}) {
  if (!scope.ok()) return Output();
  NodeDef def;
  def.set_name(scope.GetUniqueNameForOp(type));
  def.set_op(type);
  for (const Output& in : inputs) {
    if (!in.valid()) {
      scope.UpdateStatus(absl::InvalidArgumentError(
          absl::StrCat("Invalid input building the gradient of '", fwd.name(), "'")));
      return Output();
    }
    def.add_input(in.index() == 0 ? in.node()->name()
                                  : absl::StrCat(in.node()->name(), ":", in.index()));
  }
  for (const std::string& name : attrs) {
    const AttrValue* value = fwd.node()->FindAttr(name);
    if (value != nullptr) (*def.mutable_attr())[name] = *value;
  }
  for (const auto& [to, from] : renamed) {
    const AttrValue* value = fwd.node()->FindAttr(from);
    if (value != nullptr) (*def.mutable_attr())[to] = *value;
  }
  absl::StatusOr<Node*> node = scope.AddNode(std::move(def));
  return node.ok() ? Output(*node, 0) : Output();
}

const std::vector<std::string> kConvAttrs = {
    "T", "strides", "padding", "dilations", "explicit_paddings", "data_format", "use_cudnn_on_gpu"};
const std::vector<std::string> kPoolAttrs = {
    "T", "ksize", "strides", "padding", "explicit_paddings", "data_format"};

// y = x + b (b along the channel dim): dx = g, db = sum of g over the rest.
TW_GRAD_FN(BiasAddGrad) {
  grad_outputs->push_back(grad_inputs[0]);
  grad_outputs->push_back(
      AddWithAttrsOf(scope, "BiasAddGrad", {grad_inputs[0]}, op, {"T", "data_format"}));
  return scope.status();
}
// z = bias_add_grad(dy) = sum of dy over all but the channel dim, linear:
// d(dy) = g broadcast along the channel dim, i.e. bias_add(0, g).
TW_GRAD_FN(BiasAddGradGrad) {
  grad_outputs->push_back(AddWithAttrsOf(scope, "BiasAdd",
                                         {ops::ZerosLike(scope, In(op, 0)), grad_inputs[0]}, op,
                                         {"T", "data_format"}));
  return scope.status();
}
// y = relu(x): dx = g where y > 0.
// values, indices = top_k(x, k): each value is x at its index in its row,
// so dx scatters g into those positions (rows' indices are distinct; TF's
// _TopKGrad with UnsortedSegmentSum for scatter_nd).
TW_GRAD_FN(TopKV2Grad) {
  // In int64, whatever the indices' type (TopKV2's index_type).
  const Output x = In(op, 0), indices = ops::Cast(scope, op.output(1), DT_INT64);
  const auto shape = [&](const Output& t) {
    return ops::Shape(scope, t, ops::Shape::OutType(DT_INT64));
  };
  const Output in_shape = shape(x);
  const Output columns = ops::Gather(scope, in_shape, ops::Sub(scope, ops::Rank(scope, x), 1));
  const Output k =
      ops::Gather(scope, shape(indices), ops::Sub(scope, ops::Rank(scope, indices), 1));
  const Output rows_of_k =
      ops::Reshape(scope, indices, ops::Pack(scope, {ops::Const(scope, int64_t{-1}), k}));
  const Output rows = ops::Gather(scope, shape(rows_of_k), 0);
  const Output offsets = ops::ExpandDims(
      scope,
      ops::Range(scope, ops::Const(scope, int64_t{0}), ops::Mul(scope, rows, columns), columns),
      -1);
  const Output flat = ops::Reshape(scope, ops::AddV2(scope, rows_of_k, offsets), {-1});
  const Output dx = ops::UnsortedSegmentSum(scope, ops::Reshape(scope, grad_inputs[0], {-1}), flat,
                                            ops::Prod(scope, in_shape, 0));
  grad_outputs->push_back(ops::Reshape(scope, dx, in_shape));
  if (op.num_inputs() > 1) grad_outputs->push_back(NoGradient());  // TopKV2's k
  return scope.status();
}

// y = nth_element(x, n): dx = g shared evenly among the entries of the
// row equal to y (TF's _NthElementGrad).
TW_GRAD_FN(NthElementGrad) {
  const Output x = In(op, 0);
  const Output hits =
      ops::Cast(scope, ops::Equal(scope, ops::ExpandDims(scope, op.output(0), -1), x), x.type());
  const Output count = ops::Sum(scope, hits, -1, ops::Sum::KeepDims(true));
  grad_outputs->push_back(
      ops::Mul(scope, ops::Div(scope, hits, count), ops::ExpandDims(scope, grad_inputs[0], -1)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}

// (y, argmax) = max_pool_with_argmax(x): dx = g added at argmax (TF's
// _MaxPoolGradWithArgmax; argmax has no gradient).
TW_GRAD_FN(MaxPoolWithArgmaxGrad) {
  const auto attrs = ops::MaxPoolGradWithArgmax::IncludeBatchInIndex(
      grad_util::Attr<bool>(scope, op, "include_batch_in_index"));
  grad_outputs->push_back(
      ops::MaxPoolGradWithArgmax(scope, In(op, 0), grad_inputs[0], op.output(1),
                                 grad_util::Attr<std::vector<int64_t>>(scope, op, "ksize"),
                                 grad_util::Attr<std::vector<int64_t>>(scope, op, "strides"),
                                 grad_util::Attr<std::string>(scope, op, "padding"), attrs));
  return scope.status();
}

// FractionalMaxPool / FractionalAvgPool (outputs: the pooled values and
// the row and column pooling sequences): the gradient ops over the same
// windows; the sequences have none.
TW_GRAD_FN(FractionalMaxPoolGradFn) {
  grad_outputs->push_back(ops::FractionalMaxPoolGrad(
      scope, In(op, 0), op.output(0), grad_inputs[0], op.output(1), op.output(2),
      ops::FractionalMaxPoolGrad::Overlapping(grad_util::Attr<bool>(scope, op, "overlapping"))));
  return scope.status();
}
TW_GRAD_FN(FractionalAvgPoolGradFn) {
  grad_outputs->push_back(ops::FractionalAvgPoolGrad(
      scope, ops::Shape(scope, In(op, 0), ops::Shape::OutType(DT_INT64)), grad_inputs[0],
      op.output(1), op.output(2),
      ops::FractionalAvgPoolGrad::Overlapping(grad_util::Attr<bool>(scope, op, "overlapping"))));
  return scope.status();
}

// y = x / (1 + |x|): dx = g / (1 + |x|)^2.
TW_GRAD_FN(SoftsignGradient) {
  grad_outputs->push_back(ops::SoftsignGrad(scope, grad_inputs[0], In(op, 0)));
  return scope.status();
}
// y = softplus(x): dx = g * sigmoid(x).
TW_GRAD_FN(SoftplusGradient) {
  grad_outputs->push_back(ops::SoftplusGrad(scope, grad_inputs[0], In(op, 0)));
  return scope.status();
}
// z = dy * sigmoid(x): d(dy) = g * sigmoid(x), dx = g * dy * s * (1 - s).
TW_GRAD_FN(SoftplusGradGradient) {
  const Output dy = In(op, 0), x = In(op, 1), g = grad_inputs[0];
  const Output s = ops::Sigmoid(scope, x);
  grad_outputs->push_back(ops::SoftplusGrad(scope, g, x));
  grad_outputs->push_back(
      ops::Mul(scope, ops::Mul(scope, g, dy),
               ops::Mul(scope, s, ops::Sub(scope, ops::OnesLike(scope, s), s))));
  return scope.status();
}
// y = selu(x): dx = SeluGrad(g, y).
TW_GRAD_FN(SeluGradient) {
  grad_outputs->push_back(ops::SeluGrad(scope, grad_inputs[0], op.output(0)));
  return scope.status();
}
// z = SeluGrad(dy, y) = dy * scale (y > 0) or dy * (y + scale * alpha):
// d(dy) = SeluGrad(g, y), dy_out = g * dy where y <= 0, else 0.
TW_GRAD_FN(SeluGradGradient) {
  const Output dy = In(op, 0), y = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(ops::SeluGrad(scope, g, y));
  const Output gdy = ops::Mul(scope, g, dy);
  grad_outputs->push_back(ops::Select(scope, ops::Greater(scope, y, ops::ZerosLike(scope, y)),
                                      ops::ZerosLike(scope, gdy), gdy));
  return scope.status();
}
// y = leaky_relu(x): dx = g where x > 0, else alpha * g.
TW_GRAD_FN(LeakyReluGradient) {
  const float alpha = grad_util::Attr<float>(scope, op, "alpha");
  grad_outputs->push_back(
      ops::LeakyReluGrad(scope, grad_inputs[0], In(op, 0), ops::LeakyReluGrad::Alpha(alpha)));
  return scope.status();
}
// z = LeakyReluGrad(dy, x), linear in dy: d(dy) = LeakyReluGrad(g, x); x
// only picks the slope, so dx = 0.
TW_GRAD_FN(LeakyReluGradGradient) {
  const float alpha = grad_util::Attr<float>(scope, op, "alpha");
  grad_outputs->push_back(
      ops::LeakyReluGrad(scope, grad_inputs[0], In(op, 1), ops::LeakyReluGrad::Alpha(alpha)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  return scope.status();
}

TW_GRAD_FN(ReluGrad) {
  grad_outputs->push_back(ops::ReluGrad(scope, grad_inputs[0], op.output(0)));
  return scope.status();
}
// z = ReluGrad(dy, x) = dy where x > 0: d(dy) = ReluGrad(g, x), dx = 0.
TW_GRAD_FN(ReluGradGrad) {
  grad_outputs->push_back(ops::ReluGrad(scope, grad_inputs[0], In(op, 1)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  return scope.status();
}
// y = min(max(x, 0), 6): dx = g where 0 < x < 6.
TW_GRAD_FN(Relu6Grad) {
  grad_outputs->push_back(ops::Relu6Grad(scope, grad_inputs[0], In(op, 0)));
  return scope.status();
}
// z = Relu6Grad(dy, x) = dy where 0 < x < 6: d(dy) = Relu6Grad(g, x),
// dx = 0 (piecewise constant in x).
TW_GRAD_FN(Relu6GradGrad) {
  grad_outputs->push_back(ops::Relu6Grad(scope, grad_inputs[0], In(op, 1)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  return scope.status();
}
// y = elu(x): dx = g where x > 0, g (y + 1) elsewhere.
TW_GRAD_FN(EluGrad) {
  grad_outputs->push_back(ops::EluGrad(scope, grad_inputs[0], op.output(0)));
  return scope.status();
}
// z = EluGrad(dy, y) = dy where y >= 0, dy (y + 1) elsewhere:
// d(dy) = EluGrad(g, y), dy_out = g dy where y < 0, else 0.
TW_GRAD_FN(EluGradGrad) {
  const Output dy = In(op, 0), y = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(ops::EluGrad(scope, g, y));
  grad_outputs->push_back(ops::SelectV2(scope, ops::Less(scope, y, ops::ZerosLike(scope, y)),
                                        ops::Mul(scope, g, dy), ops::ZerosLike(scope, y)));
  return scope.status();
}
// y = softmax(x) over the last dim: dx = (g - sum(g y)) y.
TW_GRAD_FN(SoftmaxGrad) {
  const Output y = op.output(0), g = grad_inputs[0];
  Output dot = ops::Sum(scope, ops::Mul(scope, g, y), -1, ops::Sum::KeepDims(true));
  grad_outputs->push_back(ops::Mul(scope, ops::Sub(scope, g, dot), y));
  return scope.status();
}
// y = log_softmax(x): dx = g - exp(y) sum(g).
TW_GRAD_FN(LogSoftmaxGrad) {
  const Output g = grad_inputs[0];
  Output sum = ops::Sum(scope, g, -1, ops::Sum::KeepDims(true));
  grad_outputs->push_back(ops::Sub(scope, g, ops::Mul(scope, ops::Exp(scope, op.output(0)), sum)));
  return scope.status();
}
// The logits gradient of a cross-entropy op, whose outputs are loss_i and
// backprop = softmax(x) - labels: g_loss backprop, plus, when backprop
// itself is differentiated (g_bp), its Jacobian softmax's:
// (g_bp - sum(g_bp softmax)) softmax.
Output XentLogitsGrad(const Scope& scope, const Operation& op, const Output& g_loss,
                      const Output& g_bp) {
  Output dx = ops::Mul(scope, g_loss, op.output(1));
  if (grad_util::IsZerosFill(g_bp)) return dx;
  Output softmax = ops::Softmax(scope, In(op, 0));
  Output dot = ops::Sum(scope, ops::Mul(scope, g_bp, softmax), -1, ops::Sum::KeepDims(true));
  return ops::Add(scope, dx, ops::Mul(scope, ops::Sub(scope, g_bp, dot), softmax));
}
// loss_i = -sum_j labels_ij log softmax(x)_ij: dx as above; dlabels =
// -g_loss log_softmax(x).
TW_GRAD_FN(SoftmaxXentGrad) {
  const Output g_loss = ops::ExpandDims(scope, grad_inputs[0], -1);
  grad_outputs->push_back(XentLogitsGrad(scope, op, g_loss, grad_inputs[1]));
  grad_outputs->push_back(
      ops::Mul(scope, g_loss, ops::Neg(scope, ops::LogSoftmax(scope, In(op, 0)))));
  return scope.status();
}
// As above with integer labels (no gradient).
TW_GRAD_FN(SparseSoftmaxXentGrad) {
  grad_outputs->push_back(
      XentLogitsGrad(scope, op, ops::ExpandDims(scope, grad_inputs[0], -1), grad_inputs[1]));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// Conv2D, DepthwiseConv2dNative and Conv3D, with their backprops,
// differentiate alike; only the op names differ (AddWithAttrsOf copies the
// attrs each has).
struct ConvFamily {
  const char* forward;
  const char* input_grad;
  const char* filter_grad;
};
ConvFamily FamilyOf(const Operation& op) {
  if (absl::StartsWith(op.node()->type_string(), "Conv3D")) {
    return {"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"};
  }
  if (absl::StartsWith(op.node()->type_string(), "Depthwise")) {
    return {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
            "DepthwiseConv2dNativeBackpropFilter"};
  }
  return {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
}
// y = conv(x, w): dx = conv_backprop_input(shape(x), w, g),
// dw = conv_backprop_filter(x, shape(w), g).
TW_GRAD_FN(Conv2DGrad) {
  const ConvFamily f = FamilyOf(op);
  const Output x = In(op, 0), w = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(
      AddWithAttrsOf(scope, f.input_grad, {ops::Shape(scope, x), w, g}, op, kConvAttrs));
  grad_outputs->push_back(
      AddWithAttrsOf(scope, f.filter_grad, {x, ops::Shape(scope, w), g}, op, kConvAttrs));
  return scope.status();
}
// z = conv_backprop_input(sizes, w, dy) is linear in w and dy:
// dw = conv_backprop_filter(g, shape(w), dy), d(dy) = conv(g, w).
TW_GRAD_FN(Conv2DBackpropInputGrad) {
  const ConvFamily f = FamilyOf(op);
  const Output w = In(op, 1), dy = In(op, 2), g = grad_inputs[0];
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      AddWithAttrsOf(scope, f.filter_grad, {g, ops::Shape(scope, w), dy}, op, kConvAttrs));
  grad_outputs->push_back(AddWithAttrsOf(scope, f.forward, {g, w}, op, kConvAttrs));
  return scope.status();
}
// z = conv_backprop_filter(x, sizes, dy): dx = conv_backprop_input(shape(x),
// g, dy), d(dy) = conv(x, g).
TW_GRAD_FN(Conv2DBackpropFilterGrad) {
  const ConvFamily f = FamilyOf(op);
  const Output x = In(op, 0), dy = In(op, 2), g = grad_inputs[0];
  grad_outputs->push_back(
      AddWithAttrsOf(scope, f.input_grad, {ops::Shape(scope, x), g, dy}, op, kConvAttrs));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(AddWithAttrsOf(scope, f.forward, {x, g}, op, kConvAttrs));
  return scope.status();
}
// TF's first batch norm: its gradient op gives dt, dm, dv, dbeta, dgamma.
TW_GRAD_FN(BatchNormWithGlobalNormalizationGrad) {
  const auto out = ops::BatchNormWithGlobalNormalizationGrad(
      scope, In(op, 0), In(op, 1), In(op, 2), In(op, 4), grad_inputs[0],
      grad_util::Attr<float>(scope, op, "variance_epsilon"),
      grad_util::Attr<bool>(scope, op, "scale_after_normalization"));
  for (const Output& o : {out.dx, out.dm, out.dv, out.db, out.dg}) grad_outputs->push_back(o);
  return scope.status();
}
// y = maxpool(x): g goes to each window's maximum.
TW_GRAD_FN(MaxPoolGrad) {
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "MaxPoolGrad", {In(op, 0), op.output(0), grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
// z = maxpool_grad(x, y, dy) routes dy to the window maxima of x: linear
// in dy, d(dy) = maxpool_grad_grad(x, y, g) reads g at those maxima; x and
// y only choose the positions (zero derivative almost everywhere).
TW_GRAD_FN(MaxPoolGradGrad) {
  const std::string padding = grad_util::Attr<std::string>(scope, op, "padding");
  if (padding == "EXPLICIT") {
    return absl::UnimplementedError(
        absl::StrCat("Gradient of MaxPoolGrad node '", op.name(),
                     "' with EXPLICIT padding: MaxPoolGradGrad takes SAME or VALID"));
  }
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  grad_outputs->push_back(AddWithAttrsOf(scope, "MaxPoolGradGrad",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op,
                                         {"T", "ksize", "strides", "padding", "data_format"}));
  return scope.status();
}
// z = maxpool_grad_grad(x, y, dx) reads dx at the window maxima: its
// adjoint routes g back there, d(dx) = maxpool_grad(x, y, g).
TW_GRAD_FN(MaxPoolGradGradGrad) {
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  grad_outputs->push_back(AddWithAttrsOf(scope, "MaxPoolGrad",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op,
                                         {"T", "ksize", "strides", "padding", "data_format"}));
  return scope.status();
}
// MaxPoolV2 and MaxPoolGradV2: as MaxPool's and MaxPoolGrad's, the window
// inputs passed on (TF's _MaxPoolGradV2 and _MaxPoolGradGradV2).
TW_GRAD_FN(MaxPoolV2Grad) {
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "MaxPoolGradV2", {In(op, 0), op.output(0), grad_inputs[0], In(op, 1), In(op, 2)}, op,
      {"T", "padding", "data_format"}));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
TW_GRAD_FN(MaxPoolGradV2Grad) {
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "MaxPoolGradGradV2", {In(op, 0), In(op, 1), grad_inputs[0], In(op, 3), In(op, 4)}, op,
      {"T", "padding", "data_format"}));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// CTCLoss computes its gradient with the loss: d(inputs) = g[b] * gradient
// (broadcast over time and classes), the gradient output behind a
// PreventGradient as TF's (no second derivative of the fused op).
TW_GRAD_FN(CTCLossGrad) {
  const Output fused = ops::PreventGradient(
      scope, op.output(1),
      ops::PreventGradient::Message(
          "Currently there is no way to take the second derivative of ctc_loss due to the fused "
          "implementation's interaction with tf.gradients()"));
  grad_outputs->push_back(ops::Mul(scope, ops::ExpandDims(scope, grad_inputs[0], -1), fused));
  for (int i = 0; i < 3; ++i) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = dilation2d(x, f): g goes to each window's maximum, in x and in f.
TW_GRAD_FN(Dilation2DGrad) {
  const std::vector<std::string> attrs = {"T", "strides", "rates", "padding"};
  grad_outputs->push_back(AddWithAttrsOf(scope, "Dilation2DBackpropInput",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op, attrs));
  grad_outputs->push_back(AddWithAttrsOf(scope, "Dilation2DBackpropFilter",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op, attrs));
  return scope.status();
}
// y = avgpool(x): g spread evenly over each window.
TW_GRAD_FN(AvgPoolGrad) {
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "AvgPoolGrad", {ops::Shape(scope, In(op, 0)), grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
// z = avgpool_grad(shape, dy) is linear in dy: d(dy) = avgpool(g).
TW_GRAD_FN(AvgPoolGradGrad) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(AddWithAttrsOf(scope, "AvgPool", {grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
// The 3-D pools differentiate as the 2-D ones, through their own ops
// (MaxPool3DGrad's TInput is the pooled tensor's type).
TW_GRAD_FN(MaxPool3DGradient) {
  grad_outputs->push_back(AddWithAttrsOf(scope, "MaxPool3DGrad",
                                         {In(op, 0), op.output(0), grad_inputs[0]}, op, kPoolAttrs,
                                         {{"TInput", "T"}}));
  return scope.status();
}
TW_GRAD_FN(MaxPool3DGradGradient) {
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  grad_outputs->push_back(AddWithAttrsOf(scope, "MaxPool3DGradGrad",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
TW_GRAD_FN(MaxPool3DGradGradGradient) {
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 0)));
  grad_outputs->push_back(ops::ZerosLike(scope, In(op, 1)));
  grad_outputs->push_back(AddWithAttrsOf(scope, "MaxPool3DGrad",
                                         {In(op, 0), In(op, 1), grad_inputs[0]}, op, kPoolAttrs,
                                         {{"TInput", "T"}}));
  return scope.status();
}
TW_GRAD_FN(AvgPool3DGradient) {
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "AvgPool3DGrad", {ops::Shape(scope, In(op, 0)), grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
TW_GRAD_FN(AvgPool3DGradGradient) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(AddWithAttrsOf(scope, "AvgPool3D", {grad_inputs[0]}, op, kPoolAttrs));
  return scope.status();
}
// y = lrn(x).
TW_GRAD_FN(LRNGrad) {
  grad_outputs->push_back(AddWithAttrsOf(scope, "LRNGrad",
                                         {grad_inputs[0], In(op, 0), op.output(0)}, op,
                                         {"T", "depth_radius", "bias", "alpha", "beta"}));
  return scope.status();
}
// y = batch_norm(x, scale, offset, mean, var). Training: the batch
// statistics saved in the reserve spaces; inference: the given mean and
// variance. mean and variance get no gradient in training mode.
TW_GRAD_FN(FusedBatchNormGrad) {
  const bool v3 = op.node()->IsOp("FusedBatchNormV3");
  const bool v2 = op.node()->IsOp("FusedBatchNormV2");
  const bool training = grad_util::Attr<bool>(scope, op, "is_training", true);
  std::vector<Output> inputs = {grad_inputs[0], In(op, 0), In(op, 1)};
  if (training) {
    inputs.push_back(op.output(3));
    inputs.push_back(op.output(4));
    if (v3) inputs.push_back(op.output(5));
  } else {
    inputs.push_back(In(op, 3));
    inputs.push_back(In(op, 4));
    if (v3) inputs.push_back(op.output(5));
  }
  std::vector<std::string> attrs = {"T", "epsilon", "data_format", "is_training"};
  if (v2 || v3) attrs.push_back("U");
  const char* grad_op = v3   ? "FusedBatchNormGradV3"
                        : v2 ? "FusedBatchNormGradV2"
                             : "FusedBatchNormGrad";
  Output grad = AddWithAttrsOf(scope, grad_op, inputs, op, attrs);
  if (!scope.ok()) return scope.status();
  grad_outputs->push_back(Output(grad.node(), 0));
  grad_outputs->push_back(Output(grad.node(), 1));
  grad_outputs->push_back(Output(grad.node(), 2));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// z = FusedBatchNormGrad(dy, x, scale, mean, var) = (dx, dscale, doffset)
// with gradients A, B, C of the three. Per channel, over its N values:
// r = 1/sqrt(var + eps), xh = (x - mean) r, and in training mode the batch
// statistics of x itself, so with P(u) = u - mean(u) - xh mean(u xh):
//   dx = scale r P(dy), dscale = sum(dy xh), doffset = sum(dy).
// P is self-adjoint and x -> xh has the Jacobian r P, so
//   d(dy)    = scale r P(A) + B xh + C,
//   d(scale) = sum(A r P(dy)),
//   d(x)     = r (P(G) - mean(A dx) xh), G = B dy - scale r (A mean(dy xh)
//                                            + dy mean(A xh)),
// the last term from r's own dependence on x. Inference mode (fixed mean
// and var): d(dy) = A scale r + B xh + C, d(x) = B dy r, d(scale) =
// sum(A dy r). The mean and variance inputs get no gradient, as in TF and
// as in the first-order gradient above. Layout NHWC or NCHW.
TW_GRAD_FN(FusedBatchNormGradGrad) {
  const bool training = grad_util::Attr<bool>(scope, op, "is_training", true);
  const float epsilon = grad_util::Attr<float>(scope, op, "epsilon", 1e-4f);
  const bool nchw = grad_util::Attr<std::string>(scope, op, "data_format", "NHWC") == "NCHW";
  const Output axes = nchw ? ops::Const(scope, {0, 2, 3}) : ops::Const(scope, {0, 1, 2});
  const auto mean = [&](const Output& t) {
    return ops::Mean(scope, t, axes, ops::Mean::KeepDims(true));
  };
  const auto per_channel_sum = [&](const Output& t) {
    return ops::Reshape(scope, ops::Sum(scope, t, axes), {-1});
  };
  // A [C] vector broadcastable against x.
  const auto channel = [&](const Output& v) {
    return nchw ? ops::Reshape(scope, v, {1, -1, 1, 1}) : v;
  };
  const Output dy = In(op, 0), x = In(op, 1), scale = channel(In(op, 2));
  const Output a = grad_inputs[0], b = channel(grad_inputs[1]), c = channel(grad_inputs[2]);
  const Output eps = ops::Cast(scope, ops::Const(scope, epsilon), x.type());
  Output center = training ? mean(x) : channel(In(op, 3));
  const Output xc = ops::Sub(scope, x, center);
  Output var = training ? mean(ops::Square(scope, xc)) : channel(In(op, 4));
  const Output r = ops::Rsqrt(scope, ops::Add(scope, var, eps));
  const Output xh = ops::Mul(scope, xc, r);
  const Output scale_r = ops::Mul(scope, scale, r);
  Output grad_dy, grad_x, grad_scale;
  if (training) {
    const auto project = [&](const Output& u) {
      return ops::Sub(scope, ops::Sub(scope, u, mean(u)),
                      ops::Mul(scope, xh, mean(ops::Mul(scope, u, xh))));
    };
    const Output p_dy = project(dy);
    const Output dx = ops::Mul(scope, scale_r, p_dy);
    grad_dy = ops::AddN(scope, {ops::Mul(scope, scale_r, project(a)), ops::Mul(scope, b, xh),
                                ops::Mul(scope, c, ops::OnesLike(scope, dy))});
    grad_scale = per_channel_sum(ops::Mul(scope, a, ops::Mul(scope, r, p_dy)));
    const Output g =
        ops::Sub(scope, ops::Mul(scope, b, dy),
                 ops::Mul(scope, scale_r,
                          ops::Add(scope, ops::Mul(scope, a, mean(ops::Mul(scope, dy, xh))),
                                   ops::Mul(scope, dy, mean(ops::Mul(scope, a, xh))))));
    grad_x = ops::Mul(
        scope, r, ops::Sub(scope, project(g), ops::Mul(scope, mean(ops::Mul(scope, a, dx)), xh)));
  } else {
    grad_dy = ops::AddN(scope, {ops::Mul(scope, a, scale_r), ops::Mul(scope, b, xh),
                                ops::Mul(scope, c, ops::OnesLike(scope, dy))});
    grad_x = ops::Mul(scope, ops::Mul(scope, b, dy), r);
    grad_scale = per_channel_sum(ops::Mul(scope, ops::Mul(scope, a, dy), r));
  }
  *grad_outputs = {grad_dy, grad_x, grad_scale, NoGradient(), NoGradient()};
  if (op.node()->IsOp("FusedBatchNormGradV3")) grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = sum(x^2) / 2: dx = x g.
TW_GRAD_FN(L2LossGrad) {
  grad_outputs->push_back(ops::Mul(scope, In(op, 0), grad_inputs[0]));
  return scope.status();
}

TW_REGISTER_GRADIENT("NthElement", NthElementGrad);
TW_REGISTER_GRADIENT("MaxPoolWithArgmax", MaxPoolWithArgmaxGrad);
TW_REGISTER_GRADIENT("FractionalMaxPool", FractionalMaxPoolGradFn);
TW_REGISTER_GRADIENT("FractionalAvgPool", FractionalAvgPoolGradFn);
TW_REGISTER_GRADIENT("BiasAdd", BiasAddGrad);
TW_REGISTER_GRADIENT("BiasAddV1", BiasAddGrad);
TW_REGISTER_GRADIENT("BiasAddGrad", BiasAddGradGrad);
TW_REGISTER_GRADIENT("Relu", ReluGrad);
TW_REGISTER_GRADIENT("ReluGrad", ReluGradGrad);
TW_REGISTER_GRADIENT("Relu6", Relu6Grad);
TW_REGISTER_GRADIENT("Relu6Grad", Relu6GradGrad);
TW_REGISTER_GRADIENT("Elu", EluGrad);
TW_REGISTER_GRADIENT("EluGrad", EluGradGrad);
TW_REGISTER_GRADIENT("Softmax", SoftmaxGrad);
TW_REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGrad);
TW_REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad);
TW_REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad);
TW_REGISTER_GRADIENT("Conv2D", Conv2DGrad);
TW_REGISTER_GRADIENT("Conv2DBackpropInput", Conv2DBackpropInputGrad);
TW_REGISTER_GRADIENT("Conv2DBackpropFilter", Conv2DBackpropFilterGrad);
TW_REGISTER_GRADIENT("DepthwiseConv2dNative", Conv2DGrad);
TW_REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropInput", Conv2DBackpropInputGrad);
TW_REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropFilter", Conv2DBackpropFilterGrad);
TW_REGISTER_GRADIENT("Conv3D", Conv2DGrad);
TW_REGISTER_GRADIENT("Conv3DBackpropInputV2", Conv2DBackpropInputGrad);
TW_REGISTER_GRADIENT("Conv3DBackpropFilterV2", Conv2DBackpropFilterGrad);
TW_REGISTER_GRADIENT("MaxPool3D", MaxPool3DGradient);
TW_REGISTER_GRADIENT("MaxPool3DGrad", MaxPool3DGradGradient);
TW_REGISTER_GRADIENT("MaxPool3DGradGrad", MaxPool3DGradGradGradient);
TW_REGISTER_GRADIENT("AvgPool3D", AvgPool3DGradient);
TW_REGISTER_GRADIENT("AvgPool3DGrad", AvgPool3DGradGradient);
TW_REGISTER_GRADIENT("MaxPool", MaxPoolGrad);
TW_REGISTER_GRADIENT("CTCLoss", CTCLossGrad);
TW_REGISTER_GRADIENT("Dilation2D", Dilation2DGrad);
TW_REGISTER_NO_GRADIENT("CTCGreedyDecoder");
TW_REGISTER_NO_GRADIENT("CTCBeamSearchDecoder");
TW_REGISTER_GRADIENT("MaxPoolV2", MaxPoolV2Grad);
TW_REGISTER_GRADIENT("MaxPoolGradV2", MaxPoolGradV2Grad);
TW_REGISTER_GRADIENT("MaxPoolGrad", MaxPoolGradGrad);
TW_REGISTER_GRADIENT("MaxPoolGradGrad", MaxPoolGradGradGrad);
TW_REGISTER_GRADIENT("AvgPool", AvgPoolGrad);
TW_REGISTER_GRADIENT("AvgPoolGrad", AvgPoolGradGrad);
TW_REGISTER_GRADIENT("LRN", LRNGrad);
TW_REGISTER_GRADIENT("FusedBatchNorm", FusedBatchNormGrad);
TW_REGISTER_GRADIENT("FusedBatchNormV2", FusedBatchNormGrad);
TW_REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormGrad);
TW_REGISTER_GRADIENT("FusedBatchNormGrad", FusedBatchNormGradGrad);
TW_REGISTER_GRADIENT("FusedBatchNormGradV2", FusedBatchNormGradGrad);
TW_REGISTER_GRADIENT("BatchNormWithGlobalNormalization", BatchNormWithGlobalNormalizationGrad);
TW_REGISTER_GRADIENT("FusedBatchNormGradV3", FusedBatchNormGradGrad);
TW_REGISTER_GRADIENT("L2Loss", L2LossGrad);
TW_REGISTER_GRADIENT("TopKV2", TopKV2Grad);
TW_REGISTER_GRADIENT("TopK", TopKV2Grad);
TW_REGISTER_GRADIENT("Softplus", SoftplusGradient);
TW_REGISTER_GRADIENT("Softsign", SoftsignGradient);
TW_REGISTER_NO_GRADIENT("SoftsignGrad");  // as in TF
TW_REGISTER_GRADIENT("SoftplusGrad", SoftplusGradGradient);
TW_REGISTER_GRADIENT("Selu", SeluGradient);
TW_REGISTER_GRADIENT("SeluGrad", SeluGradGradient);
TW_REGISTER_GRADIENT("LeakyRelu", LeakyReluGradient);
TW_REGISTER_GRADIENT("LeakyReluGrad", LeakyReluGradGradient);

TW_REGISTER_NO_GRADIENT("InTopK");
TW_REGISTER_NO_GRADIENT("InTopKV2");
TW_REGISTER_NO_GRADIENT("FractionalMaxPoolGrad");  // as in TF
TW_REGISTER_NO_GRADIENT("FractionalAvgPoolGrad");
// Made by the session's graph optimizer from nodes whose gradients are
// already in the graph (runtime/graph_optimizer.h), never differentiated.
TW_REGISTER_NO_GRADIENT("_FusedConv2D");
// The deprecated 3-D backprops (TF 1.x graphs): no gradient, as in TF.
TW_REGISTER_NO_GRADIENT("Conv3DBackpropInput");
TW_REGISTER_NO_GRADIENT("Conv3DBackpropFilter");
TW_REGISTER_NO_GRADIENT("_FusedMatMul");
TW_REGISTER_NO_GRADIENT("_FusedBatchNormEx");
TW_REGISTER_NO_GRADIENT("_FusedBatchNormGradEx");

}  // namespace
}  // namespace towerflow
