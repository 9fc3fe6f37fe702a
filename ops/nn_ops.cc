// Neural-network ops: bias, activations and their gradients, softmax and
// cross-entropy, LRN, batch norm, L2 loss and top-k. Convolution and
// pooling are in conv_ops.cc.
//
// Data formats: NHWC is batch, height, width, channels; NCHW puts channels
// second.
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::UnchangedShape;

// Channel dimension of a BiasAdd input of the given rank.
int BiasChannel(const std::string& format, int rank) {
  return (format == "NCHW" && rank >= 3) ? 1 : rank - 1;
}

absl::Status BiasAddShape(InferenceContext* c) {
  PartialTensorShape value, bias;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &value));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &bias));
  std::string format = "NHWC";
  if (c->node_def().attr().contains("data_format")) {
    TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  }
  if (value.unknown_rank()) return absl::OkStatus();
  const int ch = BiasChannel(format, value.dims());
  std::vector<int64_t> dims(value.dim_sizes().begin(), value.dim_sizes().end());
  const absl::Status merged = c->MergeDim(dims[ch], bias.dim_size(0), &dims[ch]);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Must provide as many biases as the channel dimension of the input: bias ",
                     bias.DebugString(), " for value ", value.DebugString()));
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status BiasAddGradShape(InferenceContext* c) {
  PartialTensorShape grad;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 2, &grad));
  std::string format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (grad.unknown_rank()) {
    c->set_output(0, PartialTensorShape({-1}));
  } else {
    c->set_output(0, PartialTensorShape({grad.dim_size(BiasChannel(format, grad.dims()))}));
  }
  return absl::OkStatus();
}

absl::Status SoftmaxShape(InferenceContext* c) {
  PartialTensorShape logits;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &logits));
  c->set_output(0, logits);
  return absl::OkStatus();
}

absl::Status SoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialTensorShape features, labels;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &features));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &labels));
  absl::StatusOr<PartialTensorShape> both = shape_fns::BroadcastShapes(features, labels);
  if (!both.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits and labels must be broadcastable: logits ", features.DebugString(),
                     ", labels ", labels.DebugString()));
  }
  c->set_output(0, PartialTensorShape({both->dim_size(0)}));
  c->set_output(1, *both);
  return absl::OkStatus();
}

absl::Status SparseSoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialTensorShape features, labels;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &features));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &labels));
  int64_t batch;
  const absl::Status merged = c->MergeDim(features.dim_size(0), labels.dim_size(0), &batch);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits and labels must have the same first dimension, got logits shape ",
                     features.DebugString(), " and labels shape ", labels.DebugString()));
  }
  c->set_output(0, PartialTensorShape({batch}));
  c->set_output(1, PartialTensorShape({batch, features.dim_size(1)}));
  return absl::OkStatus();
}

absl::Status LRNShape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  int64_t radius;
  TW_RETURN_IF_ERROR(c->GetAttr("depth_radius", &radius));
  if (radius < 0 || radius > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("depth_radius must be in [0, 2^30], got ", radius));
  }
  c->set_output(0, input);
  return absl::OkStatus();
}

absl::Status LRNGradShape(InferenceContext* c) {
  PartialTensorShape merged;
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape s;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 4, &s));
    TW_RETURN_IF_ERROR(c->Merge(merged, s, &merged));
  }
  c->set_output(0, merged);
  return absl::OkStatus();
}

// Channel count of batch norm's x, merged with the per-channel inputs
// [first_vec, first_vec + num_vecs) that must be vectors.
absl::StatusOr<int64_t> BatchNormChannels(InferenceContext* c, int first_vec, int num_vecs,
                                          bool allow_empty_stats) {
  std::string format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const int rank = (format == "NDHWC" || format == "NCDHW") ? 5 : 4;
  PartialTensorShape x;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), rank, &x));
  const int ch = (format == "NHWC" || format == "NDHWC") ? rank - 1 : 1;
  int64_t channels = x.dim_size(ch);
  for (int i = first_vec; i < first_vec + num_vecs; ++i) {
    PartialTensorShape v;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &v));
    if (allow_empty_stats && i >= first_vec + 2 && v.dim_size(0) == 0) continue;
    const absl::Status merged = c->MergeDim(channels, v.dim_size(0), &channels);
    if (!merged.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Input ", i, " has shape ", v.DebugString(),
                                                     " but x has ", channels, " channels"));
    }
  }
  return channels;
}

absl::Status FusedBatchNormShape(InferenceContext* c) {
  bool is_training;
  TW_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  float epsilon;
  TW_RETURN_IF_ERROR(c->GetAttr("epsilon", &epsilon));
  if (!(epsilon >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("epsilon must be >= 0, got ", epsilon));
  }
  // scale, offset, mean, variance; training may pass empty mean/variance.
  TW_ASSIGN_OR_RETURN(int64_t channels, BatchNormChannels(c, 1, 4, is_training));
  c->set_output(0, c->input(0));
  for (int i = 1; i < c->num_outputs() && i <= 4; ++i) {
    c->set_output(i, PartialTensorShape({channels}));
  }
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradShape(InferenceContext* c) {
  // y_backprop, x: same shape; scale, reserve_space_1, reserve_space_2: [C].
  PartialTensorShape y;
  TW_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &y));
  std::string format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const int rank = (format == "NDHWC" || format == "NCDHW") ? 5 : 4;
  PartialTensorShape x;
  TW_RETURN_IF_ERROR(c->WithRank(y, rank, &x));
  const int ch = (format == "NHWC" || format == "NDHWC") ? rank - 1 : 1;
  int64_t channels = x.dim_size(ch);
  for (int i = 2; i <= 4; ++i) {
    PartialTensorShape v;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &v));
    TW_RETURN_IF_ERROR(c->MergeDim(channels, v.dim_size(0), &channels));
  }
  c->set_output(0, x);
  c->set_output(1, PartialTensorShape({channels}));
  c->set_output(2, PartialTensorShape({channels}));
  for (int i = 3; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape({0}));
  return absl::OkStatus();
}

absl::Status InTopKShape(InferenceContext* c) {
  PartialTensorShape predictions, targets;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &predictions));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &targets));
  if (c->num_inputs() > 2) {
    PartialTensorShape k;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &k));
  }
  int64_t batch;
  TW_RETURN_IF_ERROR(c->MergeDim(predictions.dim_size(0), targets.dim_size(0), &batch));
  c->set_output(0, PartialTensorShape({batch}));
  return absl::OkStatus();
}

absl::Status TopKShape(InferenceContext* c) {
  PartialTensorShape input, k_shape;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &input));
  std::optional<int64_t> k;
  if (c->num_inputs() > 1) {
    TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &k_shape));
    TW_ASSIGN_OR_RETURN(k, c->ConstantScalarInput(1));
  } else {  // TopK: an attr
    int64_t attr = 0;
    TW_RETURN_IF_ERROR(c->GetAttr("k", &attr));
    k = attr;
  }
  if (k.has_value() && *k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("k must be >= 0, got ", *k));
  }
  if (input.unknown_rank()) return absl::OkStatus();
  const int64_t last = input.dim_size(input.dims() - 1);
  if (k.has_value() && last >= 0 && last < *k) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must have at least k columns. Had ", last, ", needed ", *k));
  }
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  dims.back() = k.has_value() ? *k : -1;
  c->set_output(0, PartialTensorShape(dims));
  c->set_output(1, PartialTensorShape(dims));
  return absl::OkStatus();
}

// --------------------------------------------------------------- schemas

constexpr char kFloatish[] = "{half, bfloat16, float, double}";

void RegisterActivation(const char* name, const char* types, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("features: T")
                 .Output("activations: T")
                 .Attr(absl::StrCat("T: ", types))
                 .Doc(doc)
                 .SetShapeFn(UnchangedShape));
}

void RegisterActivationGrad(const char* name, const char* second_input, const char* types,
                            const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("gradients: T")
                 .Input(absl::StrCat(second_input, ": T"))
                 .Output("backprops: T")
                 .Attr(absl::StrCat("T: ", types))
                 .Doc(doc)
                 .SetShapeFn(shape_fns::MergeAllInputsShape));
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterActivation("Relu", "{realnumbertype, qint8}", "max(features, 0)");
  RegisterActivation("Relu6", "realnumbertype", "min(max(features, 0), 6)");
  RegisterActivation("Elu", kFloatish, "features if > 0 else exp(features) - 1");
  RegisterActivationGrad("ReluGrad", "features", "realnumbertype",
                         "gradients where features > 0, else 0");
  RegisterActivationGrad("Relu6Grad", "features", "realnumbertype",
                         "gradients where 0 < features < 6, else 0");
  RegisterActivationGrad("EluGrad", "outputs", kFloatish,
                         "gradients * (outputs + 1) where outputs < 0, else gradients");
  RegisterActivation("Softplus", kFloatish, "log(exp(features) + 1)");
  RegisterActivationGrad("SoftplusGrad", "features", kFloatish, "gradients * sigmoid(features)");
  RegisterActivation("Softsign", kFloatish, "features / (1 + |features|)");
  RegisterActivationGrad("SoftsignGrad", "features", kFloatish, "gradients / (1 + |features|)^2");
  RegisterActivation("Selu", kFloatish,
                     "scale * features if > 0 else scale * alpha * (exp(features) - 1)");
  RegisterActivationGrad("SeluGrad", "outputs", kFloatish,
                         "gradients * scale where outputs > 0, else gradients * (outputs + "
                         "scale * alpha)");
  RegisterOp(OpDefBuilder("LeakyRelu", __FILE__)
                 .Input("features: T")
                 .Output("activations: T")
                 .Attr("alpha: float = 0.2")
                 .Attr(absl::StrCat("T: ", kFloatish, " = DT_FLOAT"))
                 .Doc("features if > 0 else alpha * features")
                 .SetShapeFn(UnchangedShape));
  RegisterOp(OpDefBuilder("LeakyReluGrad", __FILE__)
                 .Input("gradients: T")
                 .Input("features: T")
                 .Output("backprops: T")
                 .Attr("alpha: float = 0.2")
                 .Attr(absl::StrCat("T: ", kFloatish, " = DT_FLOAT"))
                 .Doc("gradients where features > 0, else alpha * gradients")
                 .SetShapeFn(shape_fns::MergeAllInputsShape));
  return true;
}();

TW_REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: numbertype")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Doc("Adds a per-channel bias.")
    .SetShapeFn(BiasAddShape);

TW_REGISTER_OP("BiasAddV1")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: numbertype")
    .Doc("Adds a bias to the last dimension (TF 1.0's form).")
    .SetShapeFn(BiasAddShape);

TW_REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: numbertype")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Doc("Gradient of BiasAdd: out_backprop summed over all but the channels.")
    .SetShapeFn(BiasAddGradShape);

TW_REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("exp(logits) / sum(exp(logits)) over the last dimension.")
    .SetShapeFn(SoftmaxShape);

TW_REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("logits - log(sum(exp(logits))) over the last dimension.")
    .SetShapeFn(SoftmaxShape);

TW_REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("Per-row cross entropy of softmax(features) against label distributions.")
    .SetShapeFn(SoftmaxCrossEntropyShape);

TW_REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .Doc("Per-row cross entropy of softmax(features) against class indices.")
    .SetShapeFn(SparseSoftmaxCrossEntropyShape);

TW_REGISTER_OP("LRN")
    .Input("input: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .Doc("Local response normalization across channels.")
    .SetShapeFn(LRNShape);

TW_REGISTER_OP("LRNGrad")
    .Input("input_grads: T")
    .Input("input_image: T")
    .Input("output_image: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .Doc("Gradient of LRN.")
    .SetShapeFn(LRNGradShape);

// TF's first batch norm (GraphDef versions before 9: the 2015 Inception
// graphs): inference with given moments, over the last dim of a 4-D t.
absl::Status GlobalNormalizationShape(InferenceContext* c, int vectors_from, int vectors,
                                      bool grad) {
  PartialTensorShape t;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &t));
  int64_t depth = t.dim_size(3);
  for (int i = vectors_from; i < vectors_from + vectors; ++i) {
    PartialTensorShape v;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &v));
    TW_RETURN_IF_ERROR(c->MergeDim(depth, v.dim_size(0), &depth));
  }
  std::vector<int64_t> dims(t.dim_sizes().begin(), t.dim_sizes().end());
  dims[3] = depth;
  c->set_output(0, PartialTensorShape(dims));
  if (grad) {
    for (int i = 1; i < 5; ++i) c->set_output(i, PartialTensorShape({depth}));
  }
  return absl::OkStatus();
}

TW_REGISTER_OP("BatchNormWithGlobalNormalization")
    .Input("t: T")
    .Input("m: T")
    .Input("v: T")
    .Input("beta: T")
    .Input("gamma: T")
    .Output("result: T")
    .Attr("T: numbertype")
    .Attr("variance_epsilon: float")
    .Attr("scale_after_normalization: bool")
    .Doc("(t - m) * rsqrt(v + variance_epsilon) * gamma + beta, over t's last dim.")
    .SetShapeFn([](InferenceContext* c) { return GlobalNormalizationShape(c, 1, 4, false); });

TW_REGISTER_OP("BatchNormWithGlobalNormalizationGrad")
    .Input("t: T")
    .Input("m: T")
    .Input("v: T")
    .Input("gamma: T")
    .Input("backprop: T")
    .Output("dx: T")
    .Output("dm: T")
    .Output("dv: T")
    .Output("db: T")
    .Output("dg: T")
    .Attr("T: numbertype")
    .Attr("variance_epsilon: float")
    .Attr("scale_after_normalization: bool")
    .Doc("BatchNormWithGlobalNormalization's gradients for t, m, v, beta and gamma.")
    .SetShapeFn([](InferenceContext* c) { return GlobalNormalizationShape(c, 1, 3, true); });

TW_REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .AttrAddedAfterTF1("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Batch normalization (TF 1.x's form).")
    .SetShapeFn(FusedBatchNormShape);

TW_REGISTER_OP("FusedBatchNormV2")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .AttrAddedAfterTF1("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Batch normalization with the statistics in type U (TF 1.x's tf.layers form).")
    .SetShapeFn(FusedBatchNormShape);

TW_REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {bfloat16, float}")
    .Attr("epsilon: float = 0.0001")
    .AttrAddedAfterTF1("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Batch normalization: y = scale * (x - mean) / sqrt(variance + epsilon) + offset.")
    .SetShapeFn(FusedBatchNormShape);

TW_REGISTER_OP("FusedBatchNormGrad")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: T")
    .Input("reserve_space_1: T")
    .Input("reserve_space_2: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: T")
    .Output("offset_backprop: T")
    .Output("reserve_space_3: T")
    .Output("reserve_space_4: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Gradient of FusedBatchNorm.")
    .SetShapeFn(FusedBatchNormGradShape);

TW_REGISTER_OP("FusedBatchNormGradV2")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_3: U")
    .Output("reserve_space_4: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Gradient of FusedBatchNormV2.")
    .SetShapeFn(FusedBatchNormGradShape);

TW_REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("Gradient of FusedBatchNormV3.")
    .SetShapeFn(FusedBatchNormGradShape);

// Made by the session's graph optimizer (runtime/graph_optimizer.h), not by
// builders: TF's schemas of FusedBatchNormV3 + Relu and of ReluGrad +
// FusedBatchNormGradV3 (side inputs are in the schema, not in the kernels).
TW_REGISTER_OP("_FusedBatchNormEx")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Input("side_input: num_side_inputs * T")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("num_side_inputs: int >= 0 = 0")
    .Attr("activation_mode: string = 'Identity'")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("FusedBatchNormV3, then activation_mode (Identity or Relu) on y.")
    .SetShapeFn(FusedBatchNormShape);

TW_REGISTER_OP("_FusedBatchNormGradEx")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Input("offset: float")
    .Input("y: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Output("side_input_backprop: num_side_inputs * T")
    .Attr("T: {float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("num_side_inputs: int >= 0 = 0")
    .Attr("activation_mode: string = 'Identity'")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .Doc("The gradient of _FusedBatchNormEx: y_backprop is the gradient of its output y.")
    .SetShapeFn(FusedBatchNormGradShape);

TW_REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Doc("sum(t^2) / 2")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("InTopK")
    .Input("predictions: float")
    .Input("targets: T")
    .Output("precision: bool")
    .Attr("k: int")
    .Attr("T: {int32, int64} = DT_INT32")
    .Doc("Whether each target is among the row's k largest predictions.")
    .SetShapeFn(InTopKShape);

TW_REGISTER_OP("InTopKV2")
    .Input("predictions: float")
    .Input("targets: T")
    .Input("k: T")
    .Output("precision: bool")
    .Attr("T: {int32, int64} = DT_INT32")
    .Doc("Whether each target is among the row's k largest predictions.")
    .SetShapeFn(InTopKShape);

TW_REGISTER_OP("TopKV2")
    .Input("input: T")
    .Input("k: Tk")
    .Output("values: T")
    .Output("indices: index_type")
    .Attr("sorted: bool = true")
    .Attr("T: realnumbertype")
    .AttrAddedAfterTF1("Tk: {int16, int32, int64} = DT_INT32")
    .AttrAddedAfterTF1("index_type: {int16, int32, int64} = DT_INT32")
    .Doc("The k largest entries of the last dimension and their indices.")
    .SetShapeFn(TopKShape);

TW_REGISTER_OP("TopK")
    .Input("input: T")
    .Output("values: T")
    .Output("indices: int32")
    .Attr("k: int >= 0")
    .Attr("sorted: bool = true")
    .Attr("T: realnumbertype")
    .Deprecated(7, "Use TopKV2 instead")
    .Doc("TopKV2 with k an attr (TF's first version, from GraphDefs before version 7).")
    .SetShapeFn(TopKShape);

// The layout optimizer's ops (kernels/cpu/data_format_ops.cc).
TW_REGISTER_OP("DataFormatDimMap")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .Attr("src_format: string = 'NHWC'")
    .Attr("dst_format: string = 'NCHW'")
    .Doc("Dimension indices of src_format mapped to dst_format's.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("DataFormatVecPermute")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .Attr("src_format: string = 'NHWC'")
    .Attr("dst_format: string = 'NCHW'")
    .Doc("A vector (or the rows of a matrix) in src_format's order put in dst_format's.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("NthElement")
    .Input("input: T")
    .Input("n: int32")
    .Output("values: T")
    .Attr("reverse: bool = false")
    .Attr("T: realnumbertype")
    .Doc("The n-th smallest (reverse: largest) entry of the last dimension, counting from 0.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape input, scalar;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &input));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      if (input.unknown_rank()) {
        c->set_output(0, PartialTensorShape::Unknown());
        return absl::OkStatus();
      }
      const int64_t last = input.dim_size(input.dims() - 1);
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> n, c->ConstantScalarInput(1));
      if (n.has_value() && *n < 0) {
        return absl::InvalidArgumentError(absl::StrCat("n must be non-negative but is ", *n));
      }
      if (n.has_value() && last >= 0 && last <= *n) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input must have last dimension > n = ", *n));
      }
      c->set_output(0, PartialTensorShape(input.dim_sizes().first(input.dims() - 1)));
      return absl::OkStatus();
    });

// FractionalMaxPool and FractionalAvgPool (NHWC): each dimension d of the
// output is floor(d / pooling_ratio) (in float, as TF's), the pooling
// sequences one longer than the rows and the columns.
absl::Status FractionalPoolShape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  std::vector<float> ratio;
  TW_RETURN_IF_ERROR(c->GetAttr("pooling_ratio", &ratio));
  if (ratio.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("pooling_ratio field must specify 4 dimensions; got ", ratio.size()));
  }
  std::vector<int64_t> out(4, -1);
  for (int i = 0; i < 4 && !input.unknown_rank(); ++i) {
    const int64_t d = input.dim_size(i);
    if (d < 0) continue;
    if (static_cast<float>(d) < ratio[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Pooling ratio is higher than input dimension size for dimension ", i,
                       ". Input dim size: ", d, " pooling ratio: ", ratio[i]));
    }
    out[i] = static_cast<int64_t>(std::floor(static_cast<float>(d) / ratio[i]));
  }
  c->set_output(0, PartialTensorShape(out));
  c->set_output(1, PartialTensorShape({out[1] < 0 ? -1 : out[1] + 1}));
  c->set_output(2, PartialTensorShape({out[2] < 0 ? -1 : out[2] + 1}));
  return absl::OkStatus();
}

[[maybe_unused]] const bool kFractionalPools = [] {
  for (const char* name : {"FractionalMaxPool", "FractionalAvgPool"}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("value: T")
                   .Output("output: T")
                   .Output("row_pooling_sequence: int64")
                   .Output("col_pooling_sequence: int64")
                   .Attr("pooling_ratio: list(float) >= 4")
                   .Attr("pseudo_random: bool = false")
                   .Attr("overlapping: bool = false")
                   .Attr("deterministic: bool = false")
                   .Attr("seed: int = 0")
                   .Attr("seed2: int = 0")
                   .Attr("T: {float, double, int32, int64}")
                   .Doc(absl::StrCat(name[10] == 'M' ? "Max" : "Average",
                                     " pooling over windows of random (pseudo_random: "
                                     "evenly spread) 1 or 2 rows and columns apart (for ratios "
                                     "between 1 and 2), and the windows' starts"))
                   .SetShapeFn(FractionalPoolShape));
  }
  return true;
}();

TW_REGISTER_OP("FractionalMaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("out_backprop: T")
    .Input("row_pooling_sequence: int64")
    .Input("col_pooling_sequence: int64")
    .Output("output: T")
    .Attr("overlapping: bool = false")
    .Attr("T: {float, double, int32, int64}")
    .Doc("FractionalMaxPool's gradient: each output's gradient to its window's first maximum.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape input;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
      c->set_output(0, input);
      return absl::OkStatus();
    });

TW_REGISTER_OP("FractionalAvgPoolGrad")
    .Input("orig_input_tensor_shape: int64")
    .Input("out_backprop: T")
    .Input("row_pooling_sequence: int64")
    .Input("col_pooling_sequence: int64")
    .Output("output: T")
    .Attr("overlapping: bool = false")
    .Attr("T: {float, double, int32, int64}")
    .Doc("FractionalAvgPool's gradient: each output's gradient spread evenly over its window.")
    .SetShapeFn([](InferenceContext* c) {
      TW_ASSIGN_OR_RETURN(PartialTensorShape out, c->MakeShapeFromShapeTensor(0));
      PartialTensorShape four;
      TW_RETURN_IF_ERROR(c->WithRank(out, 4, &four));
      c->set_output(0, four);
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
