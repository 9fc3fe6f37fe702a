#include "estimator/serving_input_receiver.h"

#include "ops/gen/array_ops.h"

namespace towerflow {

ServingInputReceiverFn BuildRawServingInputReceiverFn(const Signature& features) {
  return [features](const Scope& scope) {
    ServingInputReceiver receiver;
    for (const auto& [name, spec] : features) {
      const Output p =
          ops::Placeholder(scope.WithOpName(name), spec.dtype, ops::Placeholder::Shape(spec.shape));
      receiver.features[name] = p;
      receiver.receiver_tensors[name] = p;
    }
    return receiver;
  };
}

ServingInputReceiverFn BuildParsingServingInputReceiverFn(const FeatureSpec& spec) {
  return [spec](const Scope& scope) {
    ServingInputReceiver receiver;
    const Output serialized = ops::Placeholder(scope.WithOpName("input_example_tensor"), DT_STRING,
                                               ops::Placeholder::Shape(PartialTensorShape({-1})));
    receiver.receiver_tensors["examples"] = serialized;
    receiver.features = ParseExampleFeatures(scope, serialized, spec);
    return receiver;
  };
}

}  // namespace towerflow
