#include "ops/gradient_sums.h"

#include "core/status_macros.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"

namespace towerflow {

absl::StatusOr<Gradient> AddGradients(const Scope& scope, const std::vector<Gradient>& gradients) {
  std::vector<Gradient> grads;
  for (const Gradient& g : gradients) {
    if (!g.is_none()) grads.push_back(g);
  }
  if (grads.empty()) return Gradient();
  if (grads.size() == 1) return grads[0];
  bool all_sparse = true;
  for (const Gradient& g : grads) all_sparse &= g.is_sparse();
  if (all_sparse) {
    std::vector<Output> values, indices;
    for (const Gradient& g : grads) {
      values.push_back(g.slices().values);
      indices.push_back(g.slices().indices);
    }
    IndexedSlices sum{ops::ConcatV2(scope, values, 0), ops::ConcatV2(scope, indices, 0),
                      grads[0].slices().dense_shape};
    TW_RETURN_IF_ERROR(scope.status());
    return Gradient(sum);
  }
  std::vector<Output> dense;
  for (const Gradient& g : grads) dense.push_back(Densify(scope, g));
  Output sum = ops::AddN(scope, dense);
  TW_RETURN_IF_ERROR(scope.status());
  return Gradient(sum);
}

Output Densify(const Scope& scope, const Gradient& gradient) {
  if (!gradient.is_sparse()) return gradient.dense();
  const IndexedSlices& s = gradient.slices();
  Scope sub = scope.NewSubScope("densify");
  Output rows =
      ops::StridedSlice(sub, s.dense_shape, {0}, {1}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
  return ops::UnsortedSegmentSum(sub, s.values, s.indices, rows);
}

}  // namespace towerflow
