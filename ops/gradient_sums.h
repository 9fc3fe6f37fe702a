// Gradients summed over the paths between an x and a y, and sparse ones
// made dense: what the gradient builder (ops/gradients.h) and the while
// loops' backward pass (ops/while_gradients.h) both do with gradients.
#ifndef TOWERFLOW_OPS_GRADIENT_SUMS_H_
#define TOWERFLOW_OPS_GRADIENT_SUMS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/grad_registry.h"

namespace towerflow {

// The dense tensor `slices` stands for: UnsortedSegmentSum of the values
// over the indices. Dense and none gradients are returned as they are.
Output Densify(const Scope& scope, const Gradient& gradient);

// The sum of `gradients`, as paths are summed: none ones left out (all none
// gives none), IndexedSlices concatenated when all are, else densified and
// added with AddN.
absl::StatusOr<Gradient> AddGradients(const Scope& scope, const std::vector<Gradient>& gradients);

}  // namespace towerflow

#endif  // TOWERFLOW_OPS_GRADIENT_SUMS_H_
