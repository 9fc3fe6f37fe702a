// Losses with TensorFlow 1.x's tf.losses semantics: a loss per element,
// weighted, then reduced, and added to GraphKeys::kLosses.
//
//   Output loss = losses::SparseSoftmaxCrossEntropy(s, labels, logits);
//   Output total = losses::GetTotalLoss(s);   // + the regularization losses
//
// compute_weighted_loss (TF's): weighted = losses * weights, then by the
// reduction:
//   kNone                  weighted, elementwise
//   kSum                   sum(weighted)
//   kMean                  sum(weighted) / sum(weights broadcast to the losses)
//   kSumOverBatchSize      sum(weighted) / number of loss elements
//   kSumByNonzeroWeights   sum(weighted) / number of loss elements whose
//                          broadcast weight is not 0 (the default)
// A zero denominator gives 0 (TF's div_no_nan), never NaN. Weights are a
// scalar or a tensor of the losses' rank whose each dimension is 1 or the
// losses' (TF's assert_broadcastable), checked when the shapes are known.
// Labels and predictions of known, different shapes are InvalidArgument
// "Shapes [2,3] and [2,4] are incompatible". Errors are recorded in the scope.
//
// Ops are named as TF names them: "absolute_difference/Abs",
// "absolute_difference/weighted_loss/value".
#ifndef TOWERFLOW_LAYERS_LOSSES_H_
#define TOWERFLOW_LAYERS_LOSSES_H_

#include <string>
#include <vector>

#include "graph/collections.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace losses {

// TF's tf.losses.Reduction.
enum class Reduction {
  kNone,
  kSum,
  kMean,
  kSumOverBatchSize,
  kSumByNonzeroWeights,
  kSumOverNonzeroWeights = kSumByNonzeroWeights,  // TF's other name for it
};

struct LossOptions {
  // A literal or a tensor (cast to the losses' dtype); 1 by default.
  Input weights = 1.0f;
  Reduction reduction = Reduction::kSumByNonzeroWeights;
  // Where the loss is added; "" adds it nowhere.
  std::string loss_collection = GraphKeys::kLosses;
  // The name scope; "" for the loss's own ("absolute_difference", ...).
  std::string name;
};

// The weighted, reduced `losses` (see the file comment), added to the
// collection.
Output ComputeWeightedLoss(const Scope& scope, const Output& losses,
                           const LossOptions& options = {});

// |predictions - labels|.
Output AbsoluteDifference(const Scope& scope, const Output& labels, const Output& predictions,
                          const LossOptions& options = {});
// (predictions - labels)^2.
Output MeanSquaredError(const Scope& scope, const Output& labels, const Output& predictions,
                        const LossOptions& options = {});
// With e = |predictions - labels|: e^2 / 2 where e <= delta, else
// delta * (e - delta / 2).
Output HuberLoss(const Scope& scope, const Output& labels, const Output& predictions,
                 double delta = 1.0, const LossOptions& options = {});
// Per element: max(x, 0) - x z + log(1 + e^-|x|) for logits x and labels
// z, smoothed to z (1 - s) + s / 2 when label_smoothing s > 0.
Output SigmoidCrossEntropy(const Scope& scope, const Output& multi_class_labels,
                           const Output& logits, double label_smoothing = 0,
                           const LossOptions& options = {});
// Per example over [batch, classes]; one-hot labels smoothed to
// labels (1 - s) + s / classes when label_smoothing s > 0. The labels get
// no gradient. Weights are per example ([batch] or a scalar).
Output SoftmaxCrossEntropy(const Scope& scope, const Output& onehot_labels, const Output& logits,
                           double label_smoothing = 0, const LossOptions& options = {});
// Per example, for integer class labels [batch] and logits [batch, classes].
Output SparseSoftmaxCrossEntropy(const Scope& scope, const Output& labels, const Output& logits,
                                 const LossOptions& options = {});

// The kLosses collection.
std::vector<Output> GetLosses(const Graph& graph);
// The sum of the kLosses collection and, when asked, of
// kRegularizationLosses, named "total_loss". InvalidArgument in the scope
// when there is nothing to sum.
Output GetTotalLoss(const Scope& scope, bool add_regularization_losses = true);

}  // namespace losses
}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_LOSSES_H_
