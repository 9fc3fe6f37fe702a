// What an exported model takes: TF's tf.estimator.export.ServingInputReceiver
// and the two receivers TF builds (build_raw_serving_input_receiver_fn,
// build_parsing_serving_input_receiver_fn).
//
//   // Signatures fed raw tensors: "x" -> placeholder "x" -> features["x"].
//   estimator.ExportSavedModel(base, BuildRawServingInputReceiverFn({{"x", {DT_FLOAT, {-1, 1}}}}));
//   // Signatures fed serialized tf.Examples, as TF Serving's classify and regress send:
//   estimator.ExportSavedModel(base, BuildParsingServingInputReceiverFn(
//                                        {{"x", FixedLenFeature{DT_FLOAT, TensorShape({1})}}}));
#ifndef TOWERFLOW_ESTIMATOR_SERVING_INPUT_RECEIVER_H_
#define TOWERFLOW_ESTIMATOR_SERVING_INPUT_RECEIVER_H_

#include <functional>
#include <map>
#include <string>

#include "core/tensor_shape.h"
#include "core/types.h"
#include "estimator/model_fn.h"
#include "graph/scope.h"
#include "ops/parsing.h"

namespace towerflow {

// The dtype and shape of an input, for graphs built without data (Export).
struct TensorSpec {
  DataType dtype = DT_FLOAT;
  PartialTensorShape shape;
};
using Signature = std::map<std::string, TensorSpec>;

struct ServingInputReceiver {
  // What model_fn gets as its features.
  FeatureMap features;
  // What the signatures take, by input key. A classify or regress
  // signature needs exactly one, a string vector of serialized tf.Examples.
  std::map<std::string, Output> receiver_tensors;
};

// Builds the receiver in the export graph; errors go to the scope's status.
using ServingInputReceiverFn = std::function<ServingInputReceiver(const Scope& scope)>;

// A placeholder per feature, named after it, fed directly: receiver
// tensors and features are the same.
ServingInputReceiverFn BuildRawServingInputReceiverFn(const Signature& features);

// One placeholder "input_example_tensor" (string, [batch]) of serialized
// tf.Examples, the receiver tensor "examples", parsed into `spec`'s features
// (ops/parsing.h) for model_fn.
ServingInputReceiverFn BuildParsingServingInputReceiverFn(const FeatureSpec& spec);

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_SERVING_INPUT_RECEIVER_H_
