// Keras's layers as objects, and the symbolic tensors of its functional API:
//
//   keras::KerasTensor image = keras::Input({28, 28, 1}, {.name = "image"});
//   keras::KerasTensor meta = keras::Input({4}, {.name = "meta"});
//   keras::Layer embed = keras::Dense(8);               // one layer, its weights
//   keras::KerasTensor h = keras::Flatten()(image);
//   h = keras::Concatenate()({keras::Dense(32, {.activation = "relu"})(h), embed(meta)});
//   keras::KerasTensor digit = keras::Dense(10, {.activation = "softmax", .name = "digit"})(h);
//   keras::Model model({image, meta}, {digit});          // keras/model.h
//
// A Layer is a value whose copies are the same layer (as torch::nn module
// holders are): calling one layer on several tensors shares its weights,
// as in Keras. Calling a layer records the call; nothing is built until a
// model is (its first Fit, Evaluate, Predict or Summary), and a model's
// mistakes (a tensor from no Input, a layer given the wrong number of
// inputs) are its errors then, never crashes.
#ifndef TOWERFLOW_KERAS_LAYER_H_
#define TOWERFLOW_KERAS_LAYER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "layers/layers.h"

namespace towerflow {
namespace keras {

class Layer;

namespace internal {
struct SymbolicNode;
struct LayerMaker;
}  // namespace internal

struct InputOptions {
  // The model's name for it: its placeholder's and feature's name. None:
  // "input_1", "input_2", ... in the model's order of inputs.
  std::string name;
  DataType dtype = DT_FLOAT;
};

// A symbolic tensor of a functional model: a model input (keras::Input) or
// what a layer called on symbolic tensors gives.
class KerasTensor {
 public:
  KerasTensor() = default;
  bool valid() const { return node_ != nullptr; }
  const internal::SymbolicNode* node() const { return node_.get(); }

 private:
  friend class Layer;
  friend KerasTensor Input(std::vector<int64_t> shape, InputOptions options);
  explicit KerasTensor(std::shared_ptr<const internal::SymbolicNode> node)
      : node_(std::move(node)) {}
  std::shared_ptr<const internal::SymbolicNode> node_;
};

// A model input of `shape` without the batch dimension (-1: unknown).
KerasTensor Input(std::vector<int64_t> shape, InputOptions options = {});

// A layer: its Keras class name, the base of its default name, and how it
// builds its output under the layer's name, in training or not.
class Layer {
 public:
  using UnaryBuildFn = std::function<Output(const Scope& scope, const Output& x, bool training,
                                            const std::string& name)>;
  using BuildFn = std::function<Output(const Scope& scope, const std::vector<Output>& inputs,
                                       bool training, const std::string& name)>;
  // A layer of one input (most are).
  Layer(std::string class_name, std::string base_name, UnaryBuildFn build, std::string name = "");
  // A layer of several inputs (Concatenate, Add, ...), at least `min_inputs`.
  static Layer WithInputs(std::string class_name, std::string base_name, BuildFn build,
                          int min_inputs = 1, std::string name = "");

  const std::string& class_name() const;
  const std::string& base_name() const;
  // The name given, or "": the model then names it "<base_name>",
  // "<base_name>_1", ... the first free one.
  const std::string& name() const;
  // Whether it takes exactly one input.
  bool unary() const;
  int min_inputs() const;
  // Two layers are the same when one is a copy of the other.
  bool SameAs(const Layer& other) const { return state_ == other.state_; }

  // Keras's config: the layer's arguments by Keras's names, as text
  // ("units": "10", "activation": "relu"); what Model::Save writes and
  // LayerFromConfig reads. Initializers are not part of it (a loaded
  // model's weights come from its file). None for a layer that cannot
  // describe itself: one the user built from a function, or given an
  // activation or a regularizer as a function.
  using Config = std::map<std::string, std::string>;
  const std::optional<Config>& config() const;

  // Records a call on symbolic tensors (the functional API).
  KerasTensor operator()(const KerasTensor& x) const;
  KerasTensor operator()(std::vector<KerasTensor> inputs) const;

  // Builds the layer on `inputs` under `name`: a wrong number of inputs is
  // an InvalidArgument in `scope`.
  Output Call(const Scope& scope, const std::vector<Output>& inputs, bool training,
              const std::string& name) const;

 private:
  friend struct internal::LayerMaker;  // the factories' layers, with their configs
  struct State;
  explicit Layer(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

namespace internal {
// A node of a functional model's graph: a model input, or a layer's call.
struct SymbolicNode {
  // Input:
  bool is_input = false;
  std::string input_name;
  std::vector<int64_t> shape;
  DataType dtype = DT_FLOAT;
  // Call:
  std::optional<Layer> layer;
  std::vector<KerasTensor> inputs;
};
}  // namespace internal

// The layers, over layers:: (`training` is the model's to set). A name
// given (the options' `name`, or `name`) is kept; "" lets the model name it.
Layer Dense(int64_t units, layers::DenseOptions options = {});
Layer Conv2D(int64_t filters, layers::Size2 kernel_size, layers::Conv2DOptions options = {});
Layer MaxPooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options = {});
Layer AveragePooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options = {});
Layer GlobalAveragePooling2D(std::string data_format = "channels_last", std::string name = "");
Layer Flatten(std::string name = "");
Layer Dropout(double rate, std::optional<int64_t> seed = std::nullopt, std::string name = "");
Layer BatchNormalization(layers::BatchNormalizationOptions options = {});
Layer LayerNormalization(layers::LayerNormalizationOptions options = {});
Layer Activation(layers::Activation activation, std::string name = "");
// For integer inputs (an Input, or a Sequential, of DT_INT32 or DT_INT64).
Layer Embedding(int64_t input_dim, int64_t output_dim, layers::EmbeddingOptions options = {});

// Keras's merge layers, on two or more inputs (Subtract: exactly two):
// elementwise with broadcasting, or joined along `axis`.
Layer Concatenate(int axis = -1, std::string name = "");
Layer Add(std::string name = "");
Layer Subtract(std::string name = "");
Layer Multiply(std::string name = "");
Layer Average(std::string name = "");
Layer Maximum(std::string name = "");
Layer Minimum(std::string name = "");

// The layer of class `class_name` ("Dense", ...) that `config` describes,
// named `name`; InvalidArgument naming the layer and the argument for an
// unknown class or argument, or a value that does not parse.
absl::StatusOr<Layer> LayerFromConfig(const std::string& class_name, const std::string& name,
                                      const Layer::Config& config);

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_LAYER_H_
