// Keras's losses and metrics as graph builders, for keras::Model. Private
// to //keras.
#ifndef TOWERFLOW_KERAS_COMPILE_INTERNAL_H_
#define TOWERFLOW_KERAS_COMPILE_INTERNAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace keras {
namespace internal {

enum class LossKind { kSparseCategorical, kCategorical, kBinary, kMse, kMae, kHuber };

// "sparse_categorical_crossentropy", "mse", ...; InvalidArgument
// "Unknown loss function: <name>" otherwise.
absl::StatusOr<LossKind> ParseLoss(const std::string& loss);

// InvalidArgument "Unknown metric function: <name>" unless Keras's
// "accuracy" ("acc"), "mse" or "mae" (or their long names).
absl::Status CheckMetric(const std::string& metric);

// A model output as the loss sees it: the output, and the logits when its
// last op was a softmax or sigmoid (Keras's TF backend takes those to
// compute cross-entropies).
struct Outputs {
  Output output;
  Output logits;  // may be invalid
};
Outputs SplitLogits(const Output& output);

// The batch's mean loss (no regularization).
Output BatchLoss(const Scope& s, LossKind kind, const Output& y, const Outputs& out);

// A metric's batch mean, under `s`/<metric>.
absl::StatusOr<Output> BatchMetric(const Scope& s, const std::string& metric, LossKind kind,
                                   const Output& y, const Output& out);

}  // namespace internal
}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_COMPILE_INTERNAL_H_
