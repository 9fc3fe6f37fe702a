#include "layers/regularizers.h"

#include <vector>

#include "graph/collections.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace regularizers {
namespace {

Output AllAxes(const Scope& s, const Output& w) { return ops::Range(s, 0, ops::Rank(s, w), 1); }

Output L1Penalty(const Scope& s, const Output& w, double l1) {
  return ops::Mul(s, ops::Sum(s, ops::Abs(s, w), AllAxes(s, w)), l1);
}

Output L2Penalty(const Scope& s, const Output& w, double l2) {
  return ops::Mul(s, ops::Sum(s, ops::Square(s, w), AllAxes(s, w)), l2);
}

}  // namespace

Regularizer L1(double l1) {
  return Regularizer([l1](const Scope& s, const Output& w) { return L1Penalty(s, w, l1); }, l1, 0);
}

Regularizer L2(double l2) {
  return Regularizer([l2](const Scope& s, const Output& w) { return L2Penalty(s, w, l2); }, 0, l2);
}

Regularizer L1L2(double l1, double l2) {
  return Regularizer(
      [l1, l2](const Scope& s, const Output& w) {
        return ops::AddV2(s, L1Penalty(s, w, l1), L2Penalty(s, w, l2));
      },
      l1, l2);
}

}  // namespace regularizers

Output GetRegularizationLoss(const Scope& scope) {
  const std::vector<Output> losses =
      GetCollection(*scope.graph(), GraphKeys::kRegularizationLosses);
  const Scope s = scope.WithOpName("total_regularization_loss");
  if (losses.empty()) return ops::Const(s, 0.0f);
  return ops::AddN(s, losses);
}

}  // namespace towerflow
