// Keras's dtype policies (tf.keras.mixed_precision):
//
//   TW_RETURN_IF_ERROR(keras::mixed_precision::SetGlobalPolicy("mixed_bfloat16"));
//   keras::Model model = ...;  // compiled after the call: trains in bfloat16
//
// A model compiled under "mixed_float16" or "mixed_bfloat16" computes its
// layers' products, and what lies between them, in the 16-bit type, keeps
// float32 variables, and computes its last layer's softmax and its losses
// in float32; under "mixed_float16" its optimizer is wrapped in a dynamic
// LossScaleOptimizer, as Keras's Model.compile does. Where Keras casts in
// each layer (its AutoCastVariable), Towerflow rewrites the model's graph
// (runtime/auto_mixed_precision.h, TF's auto_mixed_precision lists), so a
// layer's symbolic output keeps its float32 dtype. The policy is read when
// a model is compiled. Thread-safe.
#ifndef TOWERFLOW_KERAS_MIXED_PRECISION_H_
#define TOWERFLOW_KERAS_MIXED_PRECISION_H_

#include <string>

#include "absl/status/status.h"
#include "core/types.h"
#include "estimator/mixed_precision.h"

namespace towerflow {
namespace keras {
namespace mixed_precision {

class Policy {
 public:
  // "float32", "mixed_float16" or "mixed_bfloat16".
  const std::string& name() const { return name_; }
  // The dtype of the layers' math: float32, float16 or bfloat16.
  DataType compute_dtype() const;
  // Always float32.
  DataType variable_dtype() const { return DT_FLOAT; }
  Precision precision() const { return precision_; }

 private:
  friend absl::Status SetGlobalPolicy(const std::string& name);
  friend Policy GlobalPolicy();
  explicit Policy(Precision precision);
  Precision precision_;
  std::string name_;
};

// InvalidArgument for a name other than the three.
absl::Status SetGlobalPolicy(const std::string& name);
// "float32" until set.
Policy GlobalPolicy();

}  // namespace mixed_precision
}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_MIXED_PRECISION_H_
