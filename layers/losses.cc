#include "layers/losses.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/tensor_proto_util.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace losses {
namespace {

void Fail(const Scope& s, const std::string& message) {
  s.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(s.name(), ": ", message)));
}

// TF's assert_is_compatible_with on the static shapes.
bool CompatibleShapes(const Scope& s, const Output& a, const Output& b) {
  if (!a.valid() || !b.valid()) {
    Fail(s, "labels and predictions must be valid tensors");
    return false;
  }
  if (a.shape().IsCompatibleWith(b.shape())) return true;
  Fail(s, absl::StrCat("Shapes ", a.shape().DebugString(), " and ", b.shape().DebugString(),
                       " are incompatible"));
  return false;
}

// TF's assert_broadcastable(weights, values), where the shapes are known.
bool BroadcastableWeights(const Scope& s, const Output& weights, const Output& values) {
  const PartialTensorShape& w = weights.shape();
  const PartialTensorShape& v = values.shape();
  if (w.dims() <= 0 || v.dims() < 0) return true;
  bool ok = w.dims() == v.dims();
  for (int d = 0; ok && d < w.dims(); ++d) {
    const int64_t wd = w.dim_size(d), vd = v.dim_size(d);
    ok = wd == 1 || wd < 0 || vd < 0 || wd == vd;
  }
  if (!ok) {
    Fail(s, absl::StrCat("weights can not be broadcast to values. values.shape=", v.DebugString(),
                         ". weights.shape=", w.DebugString(), "."));
  }
  return ok;
}

// The sum over every axis; as TF's reduce_sum(axis=None), with constant
// axes when the rank is known, so the sum's shape ([]) is known too.
Output AllAxesSum(const Scope& s, const Output& x) {
  const int rank = x.shape().dims();
  if (rank < 0) return ops::Sum(s, x, ops::Range(s, 0, ops::Rank(s, x), 1));
  std::vector<int32_t> axes(rank);
  for (int i = 0; i < rank; ++i) axes[i] = i;
  return ops::Sum(
      s, x,
      ops::Const(s, MakeTensorProto<int32_t>(absl::MakeConstSpan(axes), TensorShape({rank}))));
}

// The loss's name scope: options.name or the loss's own.
Scope LossScope(const Scope& scope, const LossOptions& options, const std::string& name) {
  return scope.NewSubScope(options.name.empty() ? name : options.name);
}

Output Weighted(const Scope& s, const Output& losses, const LossOptions& options) {
  LossOptions inner = options;
  inner.name = "";
  return ComputeWeightedLoss(s, losses, inner);
}

}  // namespace

Output ComputeWeightedLoss(const Scope& scope, const Output& losses, const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = scope.NewSubScope(options.name.empty() ? "weighted_loss" : options.name);
  if (!losses.valid()) {
    Fail(s, "losses is not a valid tensor");
    return Output();
  }
  const DataType dtype = losses.type();
  if (!DataTypeIsFloating(dtype)) {
    Fail(s, absl::StrCat("losses must be floating-point, got ", DataTypeString(dtype)));
    return Output();
  }
  Output weights = options.weights.is_output() ? options.weights.output()
                                               : ops::Const(s, options.weights.initializer());
  if (!s.ok()) return Output();
  if (weights.type() != dtype) weights = ops::Cast(s, weights, dtype);
  if (!BroadcastableWeights(s, weights, losses)) return Output();

  Output weighted = ops::Mul(s, losses, weights);
  Output loss;
  if (options.reduction == Reduction::kNone) {
    loss = ops::Identity(s.WithOpName("value"), weighted);
  } else {
    Output sum = AllAxesSum(s, weighted);
    Output denominator;
    switch (options.reduction) {
      case Reduction::kMean:
        denominator = AllAxesSum(s, ops::Mul(s, ops::OnesLike(s, losses), weights));
        break;
      case Reduction::kSumOverBatchSize:
        denominator = ops::Cast(s, ops::Size(s, losses), dtype);
        break;
      case Reduction::kSumByNonzeroWeights: {
        // TF's _num_present: losses whose broadcast weight is not 0.
        Output present = ops::Cast(s, ops::NotEqual(s, weights, ops::ZerosLike(s, weights)), dtype);
        denominator = AllAxesSum(s, ops::Mul(s, ops::OnesLike(s, losses), present));
        break;
      }
      default:
        break;
    }
    loss = denominator.valid() ? Output(ops::DivNoNan(s.WithOpName("value"), sum, denominator))
                               : Output(ops::Identity(s.WithOpName("value"), sum));
  }
  if (s.ok() && !options.loss_collection.empty()) {
    AddToCollection(s.graph(), options.loss_collection, loss);
  }
  return s.ok() ? loss : Output();
}

Output AbsoluteDifference(const Scope& scope, const Output& labels, const Output& predictions,
                          const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "absolute_difference");
  if (!CompatibleShapes(s, predictions, labels)) return Output();
  return Weighted(s, ops::Abs(s, ops::Sub(s, predictions, labels)), options);
}

Output MeanSquaredError(const Scope& scope, const Output& labels, const Output& predictions,
                        const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "mean_squared_error");
  if (!CompatibleShapes(s, predictions, labels)) return Output();
  return Weighted(s, ops::SquaredDifference(s, predictions, labels), options);
}

Output HuberLoss(const Scope& scope, const Output& labels, const Output& predictions, double delta,
                 const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "huber_loss");
  if (!CompatibleShapes(s, predictions, labels)) return Output();
  if (!(delta > 0)) {
    Fail(s, absl::StrCat("delta must be positive, got ", delta));
    return Output();
  }
  // TF's form: q = min(e, delta), l = e - q, loss = q^2 / 2 + delta l.
  Output error = ops::Abs(s, ops::Sub(s, predictions, labels));
  Output quadratic = ops::Minimum(s, error, delta);
  Output linear = ops::Sub(s, error, quadratic);
  Output losses =
      ops::AddV2(s, ops::Mul(s, ops::Square(s, quadratic), 0.5), ops::Mul(s, linear, delta));
  return Weighted(s, losses, options);
}

Output SigmoidCrossEntropy(const Scope& scope, const Output& multi_class_labels,
                           const Output& logits, double label_smoothing,
                           const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "sigmoid_cross_entropy_loss");
  if (!CompatibleShapes(s, logits, multi_class_labels)) return Output();
  Output z = ops::Cast(s, multi_class_labels, logits.type());
  if (label_smoothing > 0) {
    z = ops::AddV2(s, ops::Mul(s, z, 1 - label_smoothing), 0.5 * label_smoothing);
  }
  // max(x, 0) - x z + log(1 + e^-|x|), stable for every x.
  const Scope x = s.NewSubScope("logistic_loss");
  Output losses = ops::AddV2(x, ops::Sub(x, ops::Relu(x, logits), ops::Mul(x, logits, z)),
                             ops::Log1p(x, ops::Exp(x, ops::Neg(x, ops::Abs(x, logits)))));
  return Weighted(s, losses, options);
}

Output SoftmaxCrossEntropy(const Scope& scope, const Output& onehot_labels, const Output& logits,
                           double label_smoothing, const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "softmax_cross_entropy_loss");
  if (!CompatibleShapes(s, logits, onehot_labels)) return Output();
  if (logits.shape().dims() != 2) {
    Fail(s, absl::StrCat("logits must be [batch, classes], got ", logits.shape().DebugString()));
    return Output();
  }
  Output labels = ops::Cast(s, onehot_labels, logits.type());
  if (label_smoothing > 0) {
    Output classes =
        ops::Cast(s, ops::Slice(s, ops::Shape(s, labels), ops::Const(s, {1}), ops::Const(s, {1})),
                  logits.type());
    labels = ops::AddV2(s, ops::Mul(s, labels, 1 - label_smoothing),
                        ops::RealDiv(s, label_smoothing, classes));
  }
  Output losses = ops::SoftmaxCrossEntropyWithLogits(s, logits, ops::StopGradient(s, labels)).loss;
  return Weighted(s, losses, options);
}

Output SparseSoftmaxCrossEntropy(const Scope& scope, const Output& labels, const Output& logits,
                                 const LossOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LossScope(scope, options, "sparse_softmax_cross_entropy_loss");
  if (!labels.valid() || !logits.valid()) {
    Fail(s, "labels and logits must be valid tensors");
    return Output();
  }
  if (logits.shape().dims() != 2 || labels.shape().dims() > 1) {
    Fail(s, absl::StrCat("expected logits [batch, classes] and labels [batch], got ",
                         logits.shape().DebugString(), " and ", labels.shape().DebugString()));
    return Output();
  }
  Output losses = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels).loss;
  return Weighted(s, losses, options);
}

std::vector<Output> GetLosses(const Graph& graph) {
  return GetCollection(graph, GraphKeys::kLosses);
}

Output GetTotalLoss(const Scope& scope, bool add_regularization_losses) {
  if (!scope.ok()) return Output();
  std::vector<Output> all = GetLosses(*scope.graph());
  if (add_regularization_losses) {
    for (const Output& r : GetCollection(*scope.graph(), GraphKeys::kRegularizationLosses)) {
      all.push_back(r);
    }
  }
  if (all.empty()) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        "GetTotalLoss: no losses to sum (the losses and regularization_losses collections are "
        "empty)"));
    return Output();
  }
  return ops::AddN(scope.WithOpName("total_loss"), all);
}

}  // namespace losses
}  // namespace towerflow
