// What every layer does: enter its variable scope, create its weights, pick
// between the training and inference graphs. Private to //layers.
#ifndef TOWERFLOW_LAYERS_LAYER_UTIL_H_
#define TOWERFLOW_LAYERS_LAYER_UTIL_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/tensor_proto_util.h"
#include "core/tensor_shape.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "layers/layers.h"
#include "layers/regularizers.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/initializers.h"
#include "ops/variables.h"

namespace towerflow {
namespace layers {
namespace internal {

// The layer's variable and name scope: `name`, or `default_name` made
// unique in the current variable scope.
Scope LayerScope(const Scope& scope, const std::string& name, const std::string& default_name);

// False after recording an error in `layer` when `x` is not a valid tensor
// (an Output of a builder that failed, say).
bool ValidInput(const Scope& layer, const Output& x);

// An InvalidArgument "<layer scope>: <message>" recorded in `layer`.
void LayerError(const Scope& layer, const std::string& message);

struct WeightSpec {
  std::string name;
  TensorShape shape;
  DataType dtype = DT_FLOAT;
  initializers::Initializer initializer;
  regularizers::Regularizer regularizer;
  bool trainable = true;
};

// GetVariable under the layer's variable scope; the regularizer's penalty
// joins kRegularizationLosses when this call created the variable.
Variable AddWeight(const Scope& layer, const WeightSpec& spec);

// "valid" / "same" in any case -> "VALID" / "SAME"; else an error in `layer`.
std::string PaddingAttr(const Scope& layer, const std::string& padding);
// "channels_last" / "channels_first" -> "NHWC" / "NCHW"; else an error.
std::string DataFormatAttr(const Scope& layer, const std::string& data_format);

// The dimension `axis` (negative from the end) of a tensor of known rank
// whose that dimension is known, or -1 after an error naming `what`.
int64_t KnownDim(const Scope& layer, const Output& x, int axis, const std::string& what);

// A 1-D constant of `values`.
template <typename T>
Output VectorConst(const Scope& scope, const std::vector<T>& values) {
  return ops::Const(scope, MakeTensorProto<T>(absl::MakeConstSpan(values),
                                              TensorShape({static_cast<int64_t>(values.size())})));
}

// The outputs of train_fn when the flag is true, else of infer_fn (TF's
// smart_cond): a constant flag builds only the one it names; a tensor flag
// builds both under ops::Cond, so a run computes only the chosen one. An
// error goes to the scope's status, and the result is then empty.
std::vector<Output> CondByTraining(const Scope& scope, const TrainingFlag& training,
                                   const ops::BranchFn& train_fn, const ops::BranchFn& infer_fn);

}  // namespace internal
}  // namespace layers
}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_LAYER_UTIL_H_
