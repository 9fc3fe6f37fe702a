// Gradients of the neural-network ops. g is dL/d(output).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/grad_registry.h"
#include "ops/gradients/grad_util.h"
#include "ops/ops.h"

namespace towerflow {
namespace {

using grad_util::In;

// Adds a `type` node on `inputs` carrying the forward op's attrs `attrs`
// (the window and layout attrs a backprop op shares with its forward op).
Output AddWithAttrsOf(const Scope& scope, const std::string& type,
                      const std::vector<Output>& inputs, const Operation& fwd,
                      const std::vector<std::string>& attrs) {
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
// y = relu(x): dx = g where y > 0.
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
// y = elu(x): dx = g where x > 0, g (y + 1) elsewhere.
TW_GRAD_FN(EluGrad) {
  grad_outputs->push_back(ops::EluGrad(scope, grad_inputs[0], op.output(0)));
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
// loss_i = -sum_j labels_ij log softmax(x)_ij, backprop = softmax(x) - labels.
// dx = g_loss backprop (+ the second-order term when backprop itself is
// differentiated: (g_bp - sum(g_bp softmax)) softmax); dlabels = -g_loss
// log_softmax(x).
TW_GRAD_FN(SoftmaxXentGrad) {
  const Output logits = In(op, 0), g_loss = ops::ExpandDims(scope, grad_inputs[0], -1);
  Output dx = ops::Mul(scope, g_loss, op.output(1));
  if (!grad_util::IsZerosFill(grad_inputs[1])) {
    const Output gb = grad_inputs[1];
    Output softmax = ops::Softmax(scope, logits);
    Output dot = ops::Sum(scope, ops::Mul(scope, gb, softmax), -1, ops::Sum::KeepDims(true));
    dx = ops::Add(scope, dx, ops::Mul(scope, ops::Sub(scope, gb, dot), softmax));
  }
  grad_outputs->push_back(dx);
  grad_outputs->push_back(ops::Mul(scope, g_loss, ops::Neg(scope, ops::LogSoftmax(scope, logits))));
  return scope.status();
}
// As above with integer labels: dx = g_loss backprop; labels none.
TW_GRAD_FN(SparseSoftmaxXentGrad) {
  if (!grad_util::IsZerosFill(grad_inputs[1])) {
    return absl::UnimplementedError(
        absl::StrCat("Second derivative of SparseSoftmaxCrossEntropyWithLogits node '", op.name(),
                     "' is not implemented"));
  }
  grad_outputs->push_back(
      ops::Mul(scope, ops::ExpandDims(scope, grad_inputs[0], -1), op.output(1)));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = conv(x, w): dx = conv_backprop_input(shape(x), w, g),
// dw = conv_backprop_filter(x, shape(w), g).
TW_GRAD_FN(Conv2DGrad) {
  const Output x = In(op, 0), w = In(op, 1), g = grad_inputs[0];
  grad_outputs->push_back(
      AddWithAttrsOf(scope, "Conv2DBackpropInput", {ops::Shape(scope, x), w, g}, op, kConvAttrs));
  grad_outputs->push_back(
      AddWithAttrsOf(scope, "Conv2DBackpropFilter", {x, ops::Shape(scope, w), g}, op, kConvAttrs));
  return scope.status();
}
// z = conv_backprop_input(sizes, w, dy) is linear in w and dy:
// dw = conv_backprop_filter(g, shape(w), dy), d(dy) = conv(g, w).
TW_GRAD_FN(Conv2DBackpropInputGrad) {
  const Output w = In(op, 1), dy = In(op, 2), g = grad_inputs[0];
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(
      AddWithAttrsOf(scope, "Conv2DBackpropFilter", {g, ops::Shape(scope, w), dy}, op, kConvAttrs));
  grad_outputs->push_back(AddWithAttrsOf(scope, "Conv2D", {g, w}, op, kConvAttrs));
  return scope.status();
}
// z = conv_backprop_filter(x, sizes, dy): dx = conv_backprop_input(shape(x),
// g, dy), d(dy) = conv(x, g).
TW_GRAD_FN(Conv2DBackpropFilterGrad) {
  const Output x = In(op, 0), dy = In(op, 2), g = grad_inputs[0];
  grad_outputs->push_back(
      AddWithAttrsOf(scope, "Conv2DBackpropInput", {ops::Shape(scope, x), g, dy}, op, kConvAttrs));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(AddWithAttrsOf(scope, "Conv2D", {x, g}, op, kConvAttrs));
  return scope.status();
}
// y = maxpool(x): g goes to each window's maximum.
TW_GRAD_FN(MaxPoolGrad) {
  grad_outputs->push_back(AddWithAttrsOf(
      scope, "MaxPoolGrad", {In(op, 0), op.output(0), grad_inputs[0]}, op, kPoolAttrs));
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
  if (v3) attrs.push_back("U");
  Output grad =
      AddWithAttrsOf(scope, v3 ? "FusedBatchNormGradV3" : "FusedBatchNormGrad", inputs, op, attrs);
  if (!scope.ok()) return scope.status();
  grad_outputs->push_back(Output(grad.node(), 0));
  grad_outputs->push_back(Output(grad.node(), 1));
  grad_outputs->push_back(Output(grad.node(), 2));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
// y = sum(x^2) / 2: dx = x g.
TW_GRAD_FN(L2LossGrad) {
  grad_outputs->push_back(ops::Mul(scope, In(op, 0), grad_inputs[0]));
  return scope.status();
}

TW_REGISTER_GRADIENT("BiasAdd", BiasAddGrad);
TW_REGISTER_GRADIENT("BiasAddV1", BiasAddGrad);
TW_REGISTER_GRADIENT("Relu", ReluGrad);
TW_REGISTER_GRADIENT("ReluGrad", ReluGradGrad);
TW_REGISTER_GRADIENT("Relu6", Relu6Grad);
TW_REGISTER_GRADIENT("Elu", EluGrad);
TW_REGISTER_GRADIENT("Softmax", SoftmaxGrad);
TW_REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGrad);
TW_REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad);
TW_REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad);
TW_REGISTER_GRADIENT("Conv2D", Conv2DGrad);
TW_REGISTER_GRADIENT("Conv2DBackpropInput", Conv2DBackpropInputGrad);
TW_REGISTER_GRADIENT("Conv2DBackpropFilter", Conv2DBackpropFilterGrad);
TW_REGISTER_GRADIENT("MaxPool", MaxPoolGrad);
TW_REGISTER_GRADIENT("AvgPool", AvgPoolGrad);
TW_REGISTER_GRADIENT("AvgPoolGrad", AvgPoolGradGrad);
TW_REGISTER_GRADIENT("LRN", LRNGrad);
TW_REGISTER_GRADIENT("FusedBatchNorm", FusedBatchNormGrad);
TW_REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormGrad);
TW_REGISTER_GRADIENT("L2Loss", L2LossGrad);

TW_REGISTER_NO_GRADIENT("InTopK");
TW_REGISTER_NO_GRADIENT("InTopKV2");

}  // namespace
}  // namespace towerflow
