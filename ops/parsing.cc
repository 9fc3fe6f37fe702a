#include "ops/parsing.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/const_op.h"
#include "ops/gen/parsing_ops.h"

namespace towerflow {

std::map<std::string, Output> ParseExampleFeatures(const Scope& scope, Input serialized,
                                                   const FeatureSpec& spec) {
  std::map<std::string, Output> features;
  if (!scope.ok()) return features;
  const Scope s = scope.NewSubScope("ParseExample");
  std::vector<Input> keys, defaults;
  std::vector<PartialTensorShape> shapes;
  for (const auto& [name, feature] : spec) {
    if (feature.dtype != DT_FLOAT && feature.dtype != DT_INT64 && feature.dtype != DT_STRING) {
      scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
          "ParseExampleFeatures: feature '", name, "' has dtype ", DataTypeString(feature.dtype),
          "; tf.Example holds float, int64 or string")));
      return features;
    }
    // A required feature's default is an empty tensor of its dtype.
    Tensor value(feature.dtype, TensorShape({0}));
    if (feature.default_value.has_value()) {
      value = *feature.default_value;
      if (value.dtype() != feature.dtype || value.NumElements() != feature.shape.num_elements()) {
        scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
            "ParseExampleFeatures: the default of feature '", name, "' is ",
            DataTypeString(value.dtype()), " ", value.shape().DebugString(), "; expected ",
            DataTypeString(feature.dtype), " with the ", feature.shape.num_elements(),
            " elements of shape ", feature.shape.DebugString())));
        return features;
      }
    }
    keys.push_back(ops::Const(s.WithOpName(absl::StrCat("key_", name)), name));
    defaults.push_back(ops::Const(s.WithOpName(absl::StrCat("default_", name)), value.AsProto()));
    shapes.push_back(PartialTensorShape(feature.shape));
  }
  const Output names = ops::Const(
      s.WithOpName("names"), Input::Initializer(Tensor(DT_STRING, TensorShape({0})).AsProto()));
  ops::ParseExample parse(scope.WithOpName("ParseExample"), serialized, names, InputList{},
                          InputList(keys), InputList(defaults), {}, shapes);
  if (!scope.ok()) return features;
  size_t i = 0;
  for (const auto& [name, feature] : spec) features[name] = parse.dense_values[i++];
  return features;
}

}  // namespace towerflow
