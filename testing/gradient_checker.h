// Checks symbolic gradients against central finite differences, as
// TensorFlow's ComputeGradientError.
//
//   Scope s = Scope::NewRootScope();
//   Output x = ops::Placeholder(s, DT_FLOAT);
//   Output y = ops::Tanh(s, x);
//   absl::StatusOr<double> err =
//       ComputeGradientError<float>(s, {x}, {Literal<float>({2}, {0.3f, -0.7f})}, {y});
//   EXPECT_LT(*err, 1e-4);
//
// For each x element e and y element k it compares
//   theoretical J[e, k]: the gradient of x at e when dy is one-hot at k;
//   numeric     J[e, k]: (y_k(x + delta e) - y_k(x - delta e)) / (2 delta);
// and returns the largest absolute difference. Every run goes through a
// ClientSession on `scope`'s graph, which the check extends with the
// gradient ops and their dy placeholders.
#ifndef TOWERFLOW_TESTING_GRADIENT_CHECKER_H_
#define TOWERFLOW_TESTING_GRADIENT_CHECKER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "framework/tensor.h"

namespace towerflow {

// T is the element type of the xs and ys (float or double). xs must be
// feedable (Placeholders); x_values are their values. Errors: those of
// building the gradients or running the graph; InvalidArgument when the
// sizes disagree or a dtype is not T.
template <typename T>
absl::StatusOr<double> ComputeGradientError(const Scope& scope, const std::vector<Output>& xs,
                                            const std::vector<Tensor>& x_values,
                                            const std::vector<Output>& ys, double delta = 1e-3);

}  // namespace towerflow

#endif  // TOWERFLOW_TESTING_GRADIENT_CHECKER_H_
