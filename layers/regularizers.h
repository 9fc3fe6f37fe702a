// Weight regularizers: a penalty on a layer's weights, added to the
// kRegularizationLosses collection when the layer creates the weight.
//
//   layers::Dense(s, x, 10, {.kernel_regularizer = regularizers::L2(1e-4)});
//   Output loss = ops::AddV2(s, data_loss, GetRegularizationLoss(s));
//
// Keras's definitions: L2(l) is l * sum(w^2) (TF 1.x's
// tf.contrib.layers.l2_regularizer(scale) is scale * sum(w^2) / 2, which is
// L2(scale / 2)); L1(l) is l * sum(|w|); L1L2 both.
//
// A value type; copies share nothing mutable.
#ifndef TOWERFLOW_LAYERS_REGULARIZERS_H_
#define TOWERFLOW_LAYERS_REGULARIZERS_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace regularizers {

class Regularizer {
 public:
  using Fn = std::function<Output(const Scope& scope, const Output& weights)>;

  // None: no penalty.
  Regularizer() = default;
  explicit Regularizer(Fn fn) : fn_(std::move(fn)) {}
  // Keras's L1L2 penalty l1 sum |w| + l2 sum w^2, which it can describe.
  Regularizer(Fn fn, double l1, double l2) : fn_(std::move(fn)), l1_l2_(std::make_pair(l1, l2)) {}

  bool valid() const { return static_cast<bool>(fn_); }
  // The scalar penalty of `weights`, its ops under `scope`. REQUIRES: valid().
  Output operator()(const Scope& scope, const Output& weights) const { return fn_(scope, weights); }
  // (l1, l2) for one of L1, L2 and L1L2 (Keras's config); none for a function.
  const std::optional<std::pair<double, double>>& l1_l2() const { return l1_l2_; }

 private:
  Fn fn_;
  std::optional<std::pair<double, double>> l1_l2_;
};

Regularizer L1(double l1);
Regularizer L2(double l2);
Regularizer L1L2(double l1, double l2);

}  // namespace regularizers

// The sum of the kRegularizationLosses collection, named
// "total_regularization_loss" (TF's tf.losses.get_regularization_loss), or a
// float 0 when it is empty.
Output GetRegularizationLoss(const Scope& scope);

}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_REGULARIZERS_H_
