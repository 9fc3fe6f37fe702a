// Dense, Dropout and Flatten (tf.layers core.py).
#include "absl/strings/str_cat.h"
#include "graph/random_seed.h"
#include "layers/layer_util.h"
#include "layers/layers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace layers {

using internal::AddWeight;
using internal::LayerError;
using internal::LayerScope;

Output Dense(const Scope& scope, const Output& inputs, int64_t units, const DenseOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "dense");
  if (!internal::ValidInput(s, inputs)) return Output();
  if (units <= 0) {
    LayerError(s, absl::StrCat("units must be positive, got ", units));
    return Output();
  }
  const int64_t in = internal::KnownDim(s, inputs, -1, "last dimension");
  if (in < 0) return Output();
  const int rank = inputs.shape().dims();
  if (rank < 2) {
    LayerError(s, absl::StrCat("Dense needs inputs of rank 2 or more, got shape ",
                               inputs.shape().DebugString()));
    return Output();
  }
  const DataType dtype = inputs.type();
  Variable kernel =
      AddWeight(s, {"kernel", TensorShape({in, units}), dtype,
                    options.kernel_initializer.valid() ? options.kernel_initializer
                                                       : initializers::GlorotUniform(),
                    options.kernel_regularizer, options.trainable});
  if (!s.ok()) return Output();

  Output x = inputs;
  if (rank > 2) {
    // Multiply along the last axis: [..., in] -> [-1, in] -> [..., units].
    x = ops::Reshape(s, x, ops::Const(s, {int64_t{-1}, in}));
  }
  Output y = ops::MatMul(s, x, kernel.value());
  if (rank > 2) {
    Output outer = ops::Slice(s, ops::Shape(s, inputs, ops::Shape::OutType(DT_INT64)),
                              ops::Const(s, {int64_t{0}}), ops::Const(s, {int64_t{rank - 1}}));
    y = ops::Reshape(s.WithOpName("Tensordot"), y,
                     ops::ConcatV2(s, {outer, ops::Const(s, {units})}, 0));
  }
  if (options.use_bias) {
    Variable bias = AddWeight(
        s, {"bias", TensorShape({units}), dtype,
            options.bias_initializer.valid() ? options.bias_initializer : initializers::Zeros(),
            options.bias_regularizer, options.trainable});
    if (!s.ok()) return Output();
    y = ops::BiasAdd(s, y, bias.value());
  }
  return options.activation(s, y);
}

Output Dropout(const Scope& scope, const Output& inputs, double rate,
               const DropoutOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "dropout");
  if (!internal::ValidInput(s, inputs)) return Output();
  if (!(rate >= 0 && rate < 1)) {
    LayerError(
        s, absl::StrCat("rate must be a scalar tensor or a float in the range [0, 1), got ", rate));
    return Output();
  }
  if (rate == 0 || (!options.training.is_tensor() && !options.training.value())) {
    return ops::Identity(s, inputs);
  }
  // TF's nn.dropout: keep = floor(keep_prob + U[0, 1)), y = x / keep_prob * keep.
  const double keep_prob = 1 - rate;
  const auto [seed, seed2] = GetSeeds(*s.graph(), options.seed);
  const auto drop = [&](const Scope& t) -> absl::StatusOr<std::vector<Output>> {
    const Scope d = t.NewSubScope("dropout");
    Output uniform = ops::RandomUniform(d, ops::Shape(d, inputs), inputs.type(),
                                        ops::RandomUniform::Seed(seed).Seed2(seed2));
    Output keep = ops::Floor(d, ops::AddV2(d, uniform, keep_prob));
    return std::vector<Output>{ops::Mul(d, ops::RealDiv(d, inputs, keep_prob), keep)};
  };
  const auto keep_all = [&](const Scope& t) -> absl::StatusOr<std::vector<Output>> {
    return std::vector<Output>{ops::Identity(t, inputs)};
  };
  const std::vector<Output> y = internal::CondByTraining(s, options.training, drop, keep_all);
  return y.empty() ? Output() : y[0];
}

Output Flatten(const Scope& scope, const Output& inputs, const std::string& name) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, name, "flatten");
  if (!internal::ValidInput(s, inputs)) return Output();
  const PartialTensorShape& shape = inputs.shape();
  if (shape.dims() < 1) {
    LayerError(s, absl::StrCat("Flatten needs inputs of known rank 1 or more, got shape ",
                               shape.DebugString()));
    return Output();
  }
  int64_t inner = 1;
  for (int d = 1; d < shape.dims(); ++d) {
    if (shape.dim_size(d) < 0) {
      inner = -1;
      break;
    }
    inner *= shape.dim_size(d);
  }
  if (inner >= 0) return ops::Reshape(s, inputs, ops::Const(s, {int64_t{-1}, inner}));
  // Inner dimensions unknown: [batch, -1] from the runtime shape.
  Output batch = ops::Slice(s, ops::Shape(s, inputs, ops::Shape::OutType(DT_INT64)),
                            ops::Const(s, {int64_t{0}}), ops::Const(s, {int64_t{1}}));
  return ops::Reshape(s, inputs, ops::ConcatV2(s, {batch, ops::Const(s, {int64_t{-1}})}, 0));
}

Output Embedding(const Scope& scope, const Output& ids, int64_t input_dim, int64_t output_dim,
                 const EmbeddingOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "embedding");
  if (!internal::ValidInput(s, ids)) return Output();
  if (input_dim <= 0 || output_dim <= 0) {
    LayerError(s, absl::StrCat("input_dim and output_dim must be positive, got ", input_dim,
                               " and ", output_dim));
    return Output();
  }
  if (ids.type() != DT_INT32 && ids.type() != DT_INT64) {
    LayerError(s, absl::StrCat("ids must be int32 or int64, got ", DataTypeString(ids.type())));
    return Output();
  }
  Variable embeddings = AddWeight(
      s, {"embeddings", TensorShape({input_dim, output_dim}), options.dtype,
          options.embeddings_initializer.valid() ? options.embeddings_initializer
                                                 : initializers::RandomUniform(-0.05, 0.05),
          options.embeddings_regularizer, options.trainable});
  if (!s.ok()) return Output();
  return ops::ResourceGather(s.WithOpName("embedding_lookup"), embeddings.handle(), ids,
                             options.dtype);
}

}  // namespace layers
}  // namespace towerflow
