#include "layers/layer_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/collections.h"

namespace towerflow {
namespace layers {
namespace internal {

Scope LayerScope(const Scope& scope, const std::string& name, const std::string& default_name) {
  return name.empty() ? scope.WithUniqueVariableScope(default_name) : scope.WithVariableScope(name);
}

bool ValidInput(const Scope& layer, const Output& x) {
  if (x.valid()) return true;
  LayerError(layer, "the inputs are not a valid tensor");
  return false;
}

void LayerError(const Scope& layer, const std::string& message) {
  layer.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(layer.name(), ": ", message)));
}

Variable AddWeight(const Scope& layer, const WeightSpec& spec) {
  const std::string full_name = absl::StrCat(layer.variable_scope().name(), "/", spec.name);
  const bool existed = layer.graph()->FindNode(full_name) != nullptr;
  VariableOptions options;
  options.trainable = spec.trainable;
  Variable v = GetVariable(layer, spec.name, spec.shape, spec.dtype, spec.initializer, options);
  if (v.valid() && !existed && spec.regularizer.valid()) {
    const Scope r = layer.NewSubScope(absl::StrCat(spec.name, "/Regularizer"));
    Output penalty = spec.regularizer(r, v.value(r));
    if (r.ok()) AddToCollection(layer.graph(), GraphKeys::kRegularizationLosses, penalty);
  }
  return v;
}

std::string PaddingAttr(const Scope& layer, const std::string& padding) {
  const std::string p = absl::AsciiStrToLower(padding);
  if (p == "valid" || p == "same") return absl::AsciiStrToUpper(p);
  LayerError(layer, absl::StrCat("The padding argument must be one of \"valid\", \"same\". "
                                 "Received: ",
                                 padding));
  return "";
}

std::string DataFormatAttr(const Scope& layer, const std::string& data_format) {
  const std::string f = absl::AsciiStrToLower(data_format);
  if (f == "channels_last") return "NHWC";
  if (f == "channels_first") return "NCHW";
  LayerError(layer, absl::StrCat("The `data_format` argument must be one of \"channels_first\", "
                                 "\"channels_last\". Received: ",
                                 data_format));
  return "";
}

int64_t KnownDim(const Scope& layer, const Output& x, int axis, const std::string& what) {
  const PartialTensorShape& shape = x.shape();
  const int rank = shape.dims();
  const int a = axis < 0 ? rank + axis : axis;
  if (rank < 0 || a < 0 || a >= rank || shape.dim_size(a) < 0) {
    LayerError(layer, absl::StrCat("the ", what, " of the inputs must be known, got shape ",
                                   shape.DebugString()));
    return -1;
  }
  return shape.dim_size(a);
}

std::vector<Output> CondByTraining(const Scope& scope, const TrainingFlag& training,
                                   const ops::BranchFn& train_fn, const ops::BranchFn& infer_fn) {
  absl::StatusOr<std::vector<Output>> out =
      training.is_tensor() ? ops::Cond(scope, training.tensor(), train_fn, infer_fn)
                           : (training.value() ? train_fn : infer_fn)(scope);
  if (!out.ok()) {
    scope.UpdateStatus(out.status());
    return {};
  }
  return *std::move(out);
}

}  // namespace internal
}  // namespace layers
}  // namespace towerflow
