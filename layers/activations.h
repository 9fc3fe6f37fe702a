// Activation functions for layers, by name or as a function, as Keras and
// tf.layers take them:
//
//   layers::Dense(s, x, 64, {.activation = "relu"});
//   layers::Dense(s, x, 64, {.activation = [](const Scope& s, const Output& x) {
//                              return ops::Maximum(s, x, ops::Mul(s, x, 0.2f));
//                            }});
//
// Names (Keras's): "linear" (or empty: the identity), "relu", "relu6", "elu",
// "selu", "sigmoid", "hard_sigmoid", "tanh", "softmax" (over the last axis),
// "softplus", "softsign", "swish". An unknown name is InvalidArgument
// "Unknown activation function: <name>" in the scope when applied.
//
// A value type; copies share nothing mutable.
#ifndef TOWERFLOW_LAYERS_ACTIVATIONS_H_
#define TOWERFLOW_LAYERS_ACTIVATIONS_H_

#include <functional>
#include <string>

#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace layers {

class Activation {
 public:
  using Fn = std::function<Output(const Scope& scope, const Output& x)>;

  // The identity ("linear").
  Activation() = default;
  Activation(const char* name) : name_(name) {}             // NOLINT: by name, as Keras
  Activation(std::string name) : name_(std::move(name)) {}  // NOLINT
  Activation(Fn fn) : fn_(std::move(fn)) {}  // NOLINT: a function of the layer's output

  // True for the identity.
  bool linear() const { return !fn_ && (name_.empty() || name_ == "linear"); }
  // The name it was given ("" for a function).
  const std::string& name() const { return name_; }

  // The activation of `x`, its ops under `scope` (x itself when linear).
  Output operator()(const Scope& scope, const Output& x) const;

 private:
  std::string name_;
  Fn fn_;
};

}  // namespace layers
}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_ACTIVATIONS_H_
