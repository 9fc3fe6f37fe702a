// Parsing serialized tf.Example protos into dense features, as TF 1.x's
// tf.parse_example with tf.FixedLenFeature.
//
//   Tensor unknown(DT_INT64, TensorShape({}));
//   unknown.data<int64_t>()[0] = -1;
//   FeatureSpec spec = {{"x", {DT_FLOAT, TensorShape({1})}},      // required
//                       {"age", {DT_INT64, TensorShape({}), unknown}}};
//   std::map<std::string, Output> features = ParseExampleFeatures(s, serialized, spec);
//   // features["x"]: float [batch, 1]; features["age"]: int64 [batch]
//
// One ParseExample node ("ParseExample" in the scope) over the string
// vector `serialized`. At run time a feature missing from an example takes
// its default, or fails the step (InvalidArgument naming the feature and
// the example) when it has none; a feature of another type or size than
// the spec says fails too.
#ifndef TOWERFLOW_OPS_PARSING_H_
#define TOWERFLOW_OPS_PARSING_H_

#include <map>
#include <optional>
#include <string>

#include "core/tensor_shape.h"
#include "core/types.h"
#include "framework/tensor.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {

// TF's tf.FixedLenFeature: a feature of `shape` per example (the values
// laid out row-major in the Example's list), of DT_FLOAT, DT_INT64 or
// DT_STRING.
struct FixedLenFeature {
  DataType dtype = DT_FLOAT;
  TensorShape shape;
  // Used when an example lacks the feature; nullopt makes it required.
  // Must have `shape`'s number of elements and `dtype`.
  std::optional<Tensor> default_value;
};
using FeatureSpec = std::map<std::string, FixedLenFeature>;

// See the file comment. An unsupported dtype or a default that does not
// fit its feature is a (sticky) scope error naming the feature.
std::map<std::string, Output> ParseExampleFeatures(const Scope& scope, Input serialized,
                                                   const FeatureSpec& spec);

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_PARSING_H_
