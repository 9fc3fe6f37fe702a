// Layers for model_fn writers: TensorFlow 1.x's tf.layers as functions over
// a Scope.
//
//   Output x = features.at("images");
//   x = layers::Conv2D(s, x, 32, 3, {.padding = "same", .activation = "relu"});
//   x = layers::MaxPooling2D(s, x, 2);
//   x = layers::BatchNormalization(s, x, {.training = mode == ModeKeys::kTrain});
//   x = layers::Dense(s, layers::Flatten(s, x), 10);
//
// Naming (tf.layers'): each call enters a variable scope named after the
// layer, uniquified in the current variable scope (Scope::
// WithUniqueVariableScope): the first Dense is "dense" with variables
// "dense/kernel" and "dense/bias", the next "dense_1"; `name` overrides. Its
// ops are under the name scope of the same name. A tower that re-enters the
// variable scope with reuse (ReplicateModelFn's towers) counts afresh, so its
// layers find the first tower's variables: towers share weights. Variables
// are created with GetVariable, so device setters place them and
// checkpoints use TensorFlow's names.
//
// Weights take the dtype of the layer's input. A regularizer's penalty is
// added to GraphKeys::kRegularizationLosses when the layer creates the
// weight (not when it reuses one), under "<layer>/<weight>/Regularizer/".
//
// Errors (an input of the wrong rank or with an unknown dimension the layer
// needs, a bad option) are InvalidArgument naming the layer, recorded in the
// scope; the layer then returns an invalid Output.
#ifndef TOWERFLOW_LAYERS_LAYERS_H_
#define TOWERFLOW_LAYERS_LAYERS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "graph/output.h"
#include "graph/scope.h"
#include "layers/activations.h"
#include "layers/regularizers.h"
#include "ops/initializers.h"

namespace towerflow {
namespace layers {

// A layer's training mode: a constant, or a scalar bool tensor chosen per
// run (e.g. a PlaceholderWithDefault). With a tensor both modes are built
// under an ops::Cond (TF's smart_cond): a run computes only the one chosen.
class TrainingFlag {
 public:
  TrainingFlag(bool value) : value_(value) {}       // NOLINT: a constant mode
  TrainingFlag(Output tensor) : tensor_(tensor) {}  // NOLINT: a bool tensor
  bool is_tensor() const { return tensor_.valid(); }
  // The constant. REQUIRES: !is_tensor().
  bool value() const { return value_; }
  // The tensor. REQUIRES: is_tensor().
  const Output& tensor() const { return tensor_; }

 private:
  bool value_ = false;
  Output tensor_;
};

// Two sizes (height, width): Size2(3) is 3 x 3.
struct Size2 {
  Size2(int64_t size) : h(size), w(size) {}  // NOLINT: one size for both
  Size2(int64_t height, int64_t width) : h(height), w(width) {}
  int64_t h;
  int64_t w;
};

// ---- Core -----------------------------------------------------------------

struct DenseOptions {
  Activation activation;
  bool use_bias = true;
  initializers::Initializer kernel_initializer;  // none: GlorotUniform
  initializers::Initializer bias_initializer;    // none: Zeros
  regularizers::Regularizer kernel_regularizer;
  regularizers::Regularizer bias_regularizer;
  bool trainable = true;
  std::string name;  // none: "dense", uniquified
};

// activation(inputs . kernel + bias) with kernel [in, units]. The inputs'
// last dimension must be known; inputs of rank > 2 are multiplied along
// their last axis.
Output Dense(const Scope& scope, const Output& inputs, int64_t units,
             const DenseOptions& options = {});

struct DropoutOptions {
  TrainingFlag training = false;  // tf.layers' default: no dropout
  std::optional<int64_t> seed;    // the op seed (see graph/random_seed.h)
  std::string name;               // none: "dropout"
};

// In training, each element is kept with probability 1 - rate and scaled
// by 1 / (1 - rate), else zeroed; otherwise the identity. 0 <= rate < 1.
Output Dropout(const Scope& scope, const Output& inputs, double rate,
               const DropoutOptions& options = {});

// [batch, d1, d2, ...] -> [batch, d1 * d2 * ...]. "flatten".
Output Flatten(const Scope& scope, const Output& inputs, const std::string& name = "");

// ---- Convolution and pooling ----------------------------------------------

struct Conv2DOptions {
  Size2 strides = 1;
  std::string padding = "valid";              // "valid" or "same"
  std::string data_format = "channels_last";  // or "channels_first"
  Size2 dilation_rate = 1;                    // > 1 needs strides of 1
  Activation activation;
  bool use_bias = true;
  initializers::Initializer kernel_initializer;  // none: GlorotUniform
  initializers::Initializer bias_initializer;    // none: Zeros
  regularizers::Regularizer kernel_regularizer;
  regularizers::Regularizer bias_regularizer;
  bool trainable = true;
  std::string name;  // none: "conv2d"
};

// A 2-D convolution with kernel [kh, kw, in, filters] (and bias [filters]).
// Inputs are 4-D with known channels.
Output Conv2D(const Scope& scope, const Output& inputs, int64_t filters, Size2 kernel_size,
              const Conv2DOptions& options = {});

struct Pooling2DOptions {
  std::optional<Size2> strides;               // none: the pool size
  std::string padding = "valid";              // "valid" or "same"
  std::string data_format = "channels_last";  // or "channels_first"
  std::string name;                           // none: "max_pooling2d" / "average_pooling2d"
};

Output MaxPooling2D(const Scope& scope, const Output& inputs, Size2 pool_size,
                    const Pooling2DOptions& options = {});
Output AveragePooling2D(const Scope& scope, const Output& inputs, Size2 pool_size,
                        const Pooling2DOptions& options = {});

// The mean over height and width: [batch, channels]. "global_average_pooling2d".
Output GlobalAveragePooling2D(const Scope& scope, const Output& inputs,
                              const std::string& data_format = "channels_last",
                              const std::string& name = "");

// ---- Normalization --------------------------------------------------------

struct BatchNormalizationOptions {
  int axis = -1;  // the feature axis: -1 (channels_last) or 1 (channels_first)
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;                                     // beta
  bool scale = true;                                      // gamma
  initializers::Initializer beta_initializer;             // none: Zeros
  initializers::Initializer gamma_initializer;            // none: Ones
  initializers::Initializer moving_mean_initializer;      // none: Zeros
  initializers::Initializer moving_variance_initializer;  // none: Ones
  regularizers::Regularizer beta_regularizer;
  regularizers::Regularizer gamma_regularizer;
  TrainingFlag training = false;
  bool trainable = true;
  // FusedBatchNormV3; none: wherever it applies (4-D float input, axis 1 or
  // 3). The fused kernel's moving variance follows the unbiased batch
  // variance, the unfused one's the biased one, as in TensorFlow.
  std::optional<bool> fused;
  std::string name;  // none: "batch_normalization"
  // Synchronised batch norm (PyTorch's SyncBatchNorm, TF's
  // SyncBatchNormalization): in training, the per-channel sum, sum of
  // squares and count of every tower's batch are summed (NcclAllReduce over
  // the towers of the process, each calling the layer on its device, then
  // MpiAllReduce over the processes of an mpirun cluster), so every tower
  // normalises with the global batch's mean and variance, a tower's batch
  // weighing by its rows; the gradient is the global computation's (the
  // sums' gradients are summed the same way). Tower 0 alone updates the
  // moving averages, once per step. Unfused only.
  bool synchronized = false;
  // The towers of this process and this call's: none, the replica context's
  // (graph/replica_context.h), which ReplicateModelFn sets for each tower.
  std::optional<int> num_towers;
  std::optional<int> tower_index;
  // Also over the processes of an mpirun cluster (an identity in one
  // process); false in a parameter-server job, whose ps tasks take part in
  // no collective.
  bool across_processes = true;
};

// Variables gamma, beta (trainable) and moving_mean, moving_variance (not).
// In training the batch's statistics normalise, and the moving averages
// follow them: m -= (m - batch) * (1 - momentum), as ops added to
// GraphKeys::kUpdateOps ("AssignMovingAvg", "AssignMovingAvg_1") that the
// train op must run (ReplicateModelFn and the examples do). Otherwise the
// moving averages normalise.
Output BatchNormalization(const Scope& scope, const Output& inputs,
                          const BatchNormalizationOptions& options = {});

struct LayerNormalizationOptions {
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  initializers::Initializer beta_initializer;   // none: Zeros
  initializers::Initializer gamma_initializer;  // none: Ones
  regularizers::Regularizer beta_regularizer;
  regularizers::Regularizer gamma_regularizer;
  bool trainable = true;
  std::string name;  // none: "layer_normalization"
};

// Normalises each example over its last axis (Keras's default), then
// gamma * x + beta with gamma, beta of the last axis's size.
Output LayerNormalization(const Scope& scope, const Output& inputs,
                          const LayerNormalizationOptions& options = {});

// ---- Embedding ------------------------------------------------------------

struct EmbeddingOptions {
  initializers::Initializer embeddings_initializer;  // none: RandomUniform(-0.05, 0.05)
  regularizers::Regularizer embeddings_regularizer;
  bool trainable = true;
  DataType dtype = DT_FLOAT;
  std::string name;  // none: "embedding"
};

// Rows of "embedding/embeddings" [input_dim, output_dim] for integer ids:
// shape ids.shape + [output_dim]. Read with ResourceGather, so the gradient
// is IndexedSlices of the rows used.
Output Embedding(const Scope& scope, const Output& ids, int64_t input_dim, int64_t output_dim,
                 const EmbeddingOptions& options = {});

}  // namespace layers
}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_LAYERS_H_
