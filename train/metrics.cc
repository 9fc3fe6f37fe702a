#include "train/metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace train {
namespace {

// A zero-initialised local metric variable "<scope>/<name>".
Variable Counter(const Scope& s, const std::string& name, const TensorShape& shape = {}) {
  VariableOptions options;
  options.trainable = false;
  options.collections = {GraphKeys::kLocalVariables, GraphKeys::kMetricVariables};
  return GetVariableByFullName(s.WithNoControlDependencies(), absl::StrCat(s.name(), "/", name),
                               VariableReuse::kNoReuse, shape, DT_FLOAT, initializers::Zeros(),
                               options);
}

Output Float(const Scope& s, const Output& x) {
  return x.valid() && x.type() == DT_FLOAT ? x : Output(ops::Cast(s, x, DT_FLOAT));
}

// x / y, 0 where y == 0 (TensorFlow's div_no_nan).
Output DivNoNan(const Scope& s, const Output& x, const Output& y) {
  Output zero = ops::ZerosLike(s, y);
  Output safe = ops::SelectV2(s, ops::Equal(s, y, zero), ops::OnesLike(s, y), y);
  return ops::SelectV2(s, ops::Equal(s, y, zero), zero, ops::RealDiv(s, x, safe));
}

Output AllAxes(const Scope& s, const Output& x) { return ops::Range(s, 0, ops::Rank(s, x), 1); }

Output IsTrue(const Scope& s, const Output& x) {
  if (x.valid() && x.type() == DT_BOOL) return x;
  return ops::NotEqual(s, x, ops::ZerosLike(s, x));
}

// tp / (tp + other), with tp and other counting labels/predictions pairs.
Metric Ratio(const Scope& s, const Output& tp_mask, const Output& other_mask,
             const std::string& other_name) {
  Variable tp = Counter(s, "true_positives");
  Variable other = Counter(s, other_name);
  Metric m;
  m.variables = {tp, other};
  Output tp_batch = ops::Sum(s, ops::Cast(s, tp_mask, DT_FLOAT), AllAxes(s, tp_mask));
  Output other_batch = ops::Sum(s, ops::Cast(s, other_mask, DT_FLOAT), AllAxes(s, other_mask));
  Operation u1 = ops::AssignAddVariableOp(s, tp.handle(), tp_batch);
  Operation u2 = ops::AssignAddVariableOp(s, other.handle(), other_batch);
  m.update = ops::NoOp(s.WithOpName("update_op").WithControlDependencies({u1, u2}));
  Output t = tp.value(s);
  m.value = DivNoNan(s.WithOpName("value"), t, ops::Add(s, t, other.value(s)));
  return m;
}

// The weighted mean, its variables directly under `s`.
Metric MeanIn(const Scope& s, const Output& values, const Output& weights) {
  Variable total = Counter(s, "total");
  Variable count = Counter(s, "count");
  Output v = Float(s, values);
  Output w = weights.valid() ? Output(ops::BroadcastTo(s, Float(s, weights), ops::Shape(s, v)))
                             : Output(ops::OnesLike(s, v));
  Operation u1 =
      ops::AssignAddVariableOp(s, total.handle(), ops::Sum(s, ops::Mul(s, v, w), AllAxes(s, v)));
  Operation u2 = ops::AssignAddVariableOp(s, count.handle(), ops::Sum(s, w, AllAxes(s, w)));
  Metric m;
  m.variables = {total, count};
  m.update = ops::NoOp(s.WithOpName("update_op").WithControlDependencies({u1, u2}));
  m.value = DivNoNan(s.WithOpName("value"), total.value(s), count.value(s));
  return m;
}

}  // namespace

Metric Mean(const Scope& scope, const Output& values, const Output& weights) {
  return MeanIn(scope.NewSubScope("mean"), values, weights);
}

Metric Accuracy(const Scope& scope, const Output& labels, const Output& predictions,
                const Output& weights) {
  const Scope s = scope.NewSubScope("accuracy");
  Output correct = ops::Cast(s, ops::Equal(s, predictions, labels), DT_FLOAT);
  return MeanIn(s, correct, weights);
}

Metric Precision(const Scope& scope, const Output& labels, const Output& predictions) {
  const Scope s = scope.NewSubScope("precision");
  Output l = IsTrue(s, labels), p = IsTrue(s, predictions);
  return Ratio(s, ops::LogicalAnd(s, l, p), ops::LogicalAnd(s, ops::LogicalNot(s, l), p),
               "false_positives");
}

Metric Recall(const Scope& scope, const Output& labels, const Output& predictions) {
  const Scope s = scope.NewSubScope("recall");
  Output l = IsTrue(s, labels), p = IsTrue(s, predictions);
  return Ratio(s, ops::LogicalAnd(s, l, p), ops::LogicalAnd(s, l, ops::LogicalNot(s, p)),
               "false_negatives");
}

Metric AUC(const Scope& scope, const Output& labels, const Output& predictions,
           int num_thresholds) {
  const Scope s = scope.NewSubScope("auc");
  if (num_thresholds < 2) {
    s.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("AUC needs at least 2 thresholds, got ", num_thresholds)));
    return Metric();
  }
  constexpr float kEpsilon = 1e-7f;
  std::vector<float> thresholds(num_thresholds);
  thresholds[0] = -kEpsilon;
  for (int i = 1; i < num_thresholds - 1; ++i) {
    thresholds[i] = static_cast<float>(i) / static_cast<float>(num_thresholds - 1);
  }
  thresholds[num_thresholds - 1] = 1.0f + kEpsilon;
  const int64_t n = num_thresholds;
  Output t =
      ops::Const(s, MakeTensorProto<float>(absl::MakeConstSpan(thresholds), TensorShape({n, 1})));
  // [n, batch]: prediction above threshold i; label true.
  Output pred = ops::Reshape(s, Float(s, predictions), {1, -1});
  Output above = ops::Greater(s, pred, t);
  Output label = ops::Reshape(s, IsTrue(s, labels), {1, -1});
  Output not_label = ops::LogicalNot(s, label);
  Output below = ops::LogicalNot(s, above);
  auto count = [&](const Output& a, const Output& b) {
    return ops::Sum(s, ops::Cast(s, ops::LogicalAnd(s, a, b), DT_FLOAT), 1);
  };
  Variable tp = Counter(s, "true_positives", TensorShape({n}));
  Variable fn = Counter(s, "false_negatives", TensorShape({n}));
  Variable tn = Counter(s, "true_negatives", TensorShape({n}));
  Variable fp = Counter(s, "false_positives", TensorShape({n}));
  std::vector<Operation> updates = {
      ops::AssignAddVariableOp(s, tp.handle(), count(above, label)),
      ops::AssignAddVariableOp(s, fn.handle(), count(below, label)),
      ops::AssignAddVariableOp(s, tn.handle(), count(below, not_label)),
      ops::AssignAddVariableOp(s, fp.handle(), count(above, not_label))};
  Metric m;
  m.variables = {tp, fn, tn, fp};
  m.update = ops::NoOp(s.WithOpName("update_op").WithControlDependencies(updates));
  // tpr = (tp + eps) / (tp + fn + eps), fpr = fp / (fp + tn + eps);
  // auc = sum_i (fpr[i] - fpr[i+1]) (tpr[i] + tpr[i+1]) / 2.
  Output tpv = tp.value(s), fnv = fn.value(s), tnv = tn.value(s), fpv = fp.value(s);
  Output tpr =
      ops::RealDiv(s, ops::Add(s, tpv, kEpsilon), ops::Add(s, ops::Add(s, tpv, fnv), kEpsilon));
  Output fpr = ops::RealDiv(s, fpv, ops::Add(s, ops::Add(s, fpv, tnv), kEpsilon));
  auto head = [&](const Output& x) { return ops::Slice(s, x, {0}, {num_thresholds - 1}); };
  auto tail = [&](const Output& x) { return ops::Slice(s, x, {1}, {num_thresholds - 1}); };
  Output widths = ops::Sub(s, head(fpr), tail(fpr));
  Output heights = ops::Mul(s, ops::Add(s, head(tpr), tail(tpr)), 0.5f);
  m.value = ops::Sum(s.WithOpName("value"), ops::Mul(s, widths, heights), 0);
  return m;
}

Metric InTopK(const Scope& scope, const Output& predictions, const Output& targets, int k) {
  const Scope s = scope.NewSubScope("in_top_k");
  Output hits =
      ops::InTopKV2(s, Float(s, predictions), targets,
                    ops::Cast(s, ops::Const(s, k), targets.valid() ? targets.type() : DT_INT32));
  return MeanIn(s, ops::Cast(s, hits, DT_FLOAT), Output());
}

Operation ResetMetrics(const Scope& scope) {
  std::vector<Operation> inits;
  for (const Variable& v : GetVariables(*scope.graph(), GraphKeys::kMetricVariables)) {
    inits.push_back(v.initializer());
  }
  return ops::NoOp(scope.WithOpName("reset_metrics").WithControlDependencies(inits));
}

}  // namespace train
}  // namespace towerflow
