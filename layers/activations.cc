#include "layers/activations.h"

#include "absl/strings/str_cat.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"

namespace towerflow {
namespace layers {
namespace {

// log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
Output Softplus(const Scope& s, const Output& x) {
  return ops::AddV2(s, ops::Relu(s, x), ops::Log1p(s, ops::Exp(s, ops::Neg(s, ops::Abs(s, x)))));
}

}  // namespace

Output Activation::operator()(const Scope& scope, const Output& x) const {
  if (!scope.ok()) return Output();
  if (!x.valid()) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat(scope.name(), ": the activation's input is not a valid tensor")));
    return Output();
  }
  if (fn_) return fn_(scope, x);
  if (linear()) return x;
  if (name_ == "relu") return ops::Relu(scope, x);
  if (name_ == "relu6") return ops::Relu6(scope, x);
  if (name_ == "elu") return ops::Elu(scope, x);
  if (name_ == "sigmoid") return ops::Sigmoid(scope, x);
  if (name_ == "tanh") return ops::Tanh(scope, x);
  if (name_ == "softmax") return ops::Softmax(scope, x);
  const Scope n = scope.NewSubScope(name_);
  if (name_ == "softplus") return Softplus(n, x);
  if (name_ == "softsign") {
    return ops::RealDiv(n, x, ops::AddV2(n, ops::Abs(n, x), ops::OnesLike(n, x)));
  }
  if (name_ == "swish") return ops::Mul(n, x, ops::Sigmoid(n, x));
  if (name_ == "selu") {
    // Keras's constants: scale * elu(x, alpha) with alpha, scale below.
    constexpr double kAlpha = 1.6732632423543772848170429916717;
    constexpr double kScale = 1.0507009873554804934193349852946;
    Output elu = ops::Elu(n, x);
    Output positive = ops::Relu(n, x);
    // elu(x) is x above 0 and e^x - 1 below; alpha scales the part below.
    Output negative = ops::Sub(n, elu, positive);
    return ops::Mul(n, ops::AddV2(n, positive, ops::Mul(n, negative, kAlpha)), kScale);
  }
  if (name_ == "hard_sigmoid") {
    // Keras: clip(0.2 x + 0.5, 0, 1).
    Output y = ops::AddV2(n, ops::Mul(n, x, 0.2), 0.5);
    return ops::Minimum(n, ops::Maximum(n, y, ops::ZerosLike(n, y)), ops::OnesLike(n, y));
  }
  scope.UpdateStatus(
      absl::InvalidArgumentError(absl::StrCat("Unknown activation function: ", name_)));
  return Output();
}

}  // namespace layers
}  // namespace towerflow
