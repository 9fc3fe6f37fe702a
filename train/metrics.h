// Streaming metrics as TensorFlow's tf.metrics: each returns a value tensor
// and an update op over local variables (collections kLocalVariables and
// kMetricVariables, not trainable), so that running the update once per
// batch accumulates over an evaluation and the value reads the result.
// ResetMetrics (or LocalVariablesInitializer) starts over.
//
//   train::Metric acc = train::Accuracy(root, labels, predictions);
//   for each batch: session.Run(feeds, {}, {acc.update}, ...);
//   session.Run({acc.value}, &out);
//
// Variables are named "<metric>/<counter>" under the scope's name scope
// ("accuracy/total", "accuracy/count"); a second metric of the same kind
// gets "accuracy_1/...".
#ifndef TOWERFLOW_TRAIN_METRICS_H_
#define TOWERFLOW_TRAIN_METRICS_H_

#include <vector>

#include "graph/output.h"
#include "graph/scope.h"
#include "ops/variables.h"

namespace towerflow {
namespace train {

struct Metric {
  Output value;      // float scalar
  Operation update;  // accumulates one batch; its output is not needed
  std::vector<Variable> variables;
};

// Weighted mean of `values` (weights broadcast to values; empty: 1).
// 0 before any weight was seen.
Metric Mean(const Scope& scope, const Output& values, const Output& weights = Output());
// Fraction of positions where labels == predictions (any matching dtype).
Metric Accuracy(const Scope& scope, const Output& labels, const Output& predictions,
                const Output& weights = Output());
// tp / (tp + fp) and tp / (tp + fn) over boolean-like labels and predictions
// (non-zero is true).
Metric Precision(const Scope& scope, const Output& labels, const Output& predictions);
Metric Recall(const Scope& scope, const Output& labels, const Output& predictions);
// Area under the ROC curve, TensorFlow's trapezoidal sum over
// `num_thresholds` thresholds (0 - 1e-7, i / (n - 1), 1 + 1e-7); a
// prediction counts as positive above a threshold. predictions in [0, 1].
Metric AUC(const Scope& scope, const Output& labels, const Output& predictions,
           int num_thresholds = 200);
// Fraction of rows whose target is among the k largest predictions
// (InTopKV2); predictions [batch, classes] float, targets [batch] int.
Metric InTopK(const Scope& scope, const Output& predictions, const Output& targets, int k);

// Re-initialises every metric variable of the graph.
Operation ResetMetrics(const Scope& scope);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_METRICS_H_
