#include "keras/compile_internal.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "layers/losses.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"

namespace towerflow {
namespace keras {
namespace internal {

absl::StatusOr<LossKind> ParseLoss(const std::string& loss) {
  static const auto* kinds = new absl::flat_hash_map<std::string, LossKind>{
      {"sparse_categorical_crossentropy", LossKind::kSparseCategorical},
      {"categorical_crossentropy", LossKind::kCategorical},
      {"binary_crossentropy", LossKind::kBinary},
      {"mean_squared_error", LossKind::kMse},
      {"mse", LossKind::kMse},
      {"mean_absolute_error", LossKind::kMae},
      {"mae", LossKind::kMae},
      {"huber", LossKind::kHuber},
  };
  auto it = kinds->find(loss);
  if (it == kinds->end())
    return absl::InvalidArgumentError(absl::StrCat("Unknown loss function: ", loss));
  return it->second;
}

Outputs SplitLogits(const Output& output) {
  const std::string& type = output.node()->type_string();
  if (type != "Softmax" && type != "Sigmoid") return {output, Output()};
  for (const Edge* e : output.node()->in_edges()) {
    if (e->dst_input() == 0) return {output, Output(e->src(), e->src_output())};
  }
  return {output, Output()};
}

constexpr double kEpsilon = 1e-7;  // Keras's backend.epsilon()

Output BatchLoss(const Scope& s, LossKind kind, const Output& y, const Outputs& out) {
  const losses::LossOptions mean{.reduction = losses::Reduction::kSumOverBatchSize,
                                 .loss_collection = ""};
  const auto logits_or_log = [&](bool binary) {
    if (out.logits.valid()) return out.logits;
    Output p = ops::Minimum(s, ops::Maximum(s, out.output, kEpsilon), 1 - kEpsilon);
    if (!binary) return Output(ops::Log(s, p));
    return Output(ops::Log(s, ops::RealDiv(s, p, ops::Sub(s, 1.0, p))));
  };
  switch (kind) {
    case LossKind::kSparseCategorical:
      return losses::SparseSoftmaxCrossEntropy(
          s, ops::Reshape(s, ops::Cast(s, y, DT_INT64), ops::Const(s, {int64_t{-1}})),
          logits_or_log(false), mean);
    case LossKind::kCategorical:
      return losses::SoftmaxCrossEntropy(s, y, logits_or_log(false), 0, mean);
    case LossKind::kBinary:
      return losses::SigmoidCrossEntropy(s, y, logits_or_log(true), 0, mean);
    case LossKind::kMse:
      return losses::MeanSquaredError(s, ops::Cast(s, y, out.output.type()), out.output, mean);
    case LossKind::kMae:
      return losses::AbsoluteDifference(s, ops::Cast(s, y, out.output.type()), out.output, mean);
    case LossKind::kHuber:
      return losses::HuberLoss(s, ops::Cast(s, y, out.output.type()), out.output, 1.0, mean);
  }
  return Output();
}

absl::StatusOr<Output> BatchMetric(const Scope& scope, const std::string& name, LossKind kind,
                                   const Output& y, const Output& out) {
  const Scope s = scope.NewSubScope(name);
  const auto mean = [&s](const Output& v) {
    return Output(ops::Mean(s, v, ops::Range(s, 0, ops::Rank(s, v), 1)));
  };
  const DataType dt = out.type();
  if (name == "accuracy" || name == "acc") {
    Output correct;
    if (kind == LossKind::kSparseCategorical) {
      correct =
          ops::Equal(s, ops::ArgMax(s, out, -1),
                     ops::Reshape(s, ops::Cast(s, y, DT_INT64), ops::Const(s, {int64_t{-1}})));
    } else if (kind == LossKind::kCategorical) {
      correct = ops::Equal(s, ops::ArgMax(s, out, -1), ops::ArgMax(s, y, -1));
    } else {
      correct = ops::Equal(s, ops::Cast(s, y, dt), ops::Round(s, out));
    }
    return mean(ops::Cast(s, correct, dt));
  }
  if (name == "mse" || name == "mean_squared_error") {
    return mean(ops::SquaredDifference(s, out, ops::Cast(s, y, dt)));
  }
  if (name == "mae" || name == "mean_absolute_error") {
    return mean(ops::Abs(s, ops::Sub(s, out, ops::Cast(s, y, dt))));
  }
  return absl::InvalidArgumentError(absl::StrCat("Unknown metric function: ", name));
}

absl::Status CheckMetric(const std::string& m) {
  if (m != "accuracy" && m != "acc" && m != "mse" && m != "mean_squared_error" && m != "mae" &&
      m != "mean_absolute_error") {
    return absl::InvalidArgumentError(absl::StrCat("Unknown metric function: ", m));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace keras
}  // namespace towerflow
