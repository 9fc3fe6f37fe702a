// What a model function is: TensorFlow 1.x's model_fn contract.
//
//   EstimatorSpec MyModel(const Scope& s, const FeatureMap& features,
//                         const FeatureMap& labels, ModeKeys mode,
//                         const Params& params) {
//     Output logits = ...;                       // built through `s`
//     EstimatorSpec spec(mode);
//     spec.predictions["classes"] = ops::ArgMax(s, logits, 1);
//     if (mode == ModeKeys::kPredict) return spec;
//     spec.loss = ...;
//     if (mode == ModeKeys::kTrain) { ... spec.train_op = opt.Minimize(...); }
//     if (mode == ModeKeys::kEval) spec.eval_metric_ops["accuracy"] = ...;
//     return spec;
//   }
//
// Errors while building go to the scope's sticky status, as everywhere in
// the graph DSL; whoever calls the model_fn checks `s.status()`.
#ifndef TOWERFLOW_ESTIMATOR_MODEL_FN_H_
#define TOWERFLOW_ESTIMATOR_MODEL_FN_H_

#include <functional>
#include <map>
#include <string>

#include "estimator/export_output.h"
#include "training/hooks.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/variables.h"
#include "train/metrics.h"

namespace towerflow {

enum class ModeKeys { kTrain, kEval, kPredict };

// TF's spelling: "train", "eval", "infer".
const char* ModeKeyName(ModeKeys mode);

// Named input tensors (features, labels). Labels may be empty (PREDICT).
using FeatureMap = std::map<std::string, Output>;

// Hyper-parameters, plus where the call sits among the towers of
// ReplicateModelFn (TF users asked for the tower index; one tower when not
// replicated).
struct Params {
  std::map<std::string, double> values;
  int tower_index = 0;
  int num_towers = 1;

  // values[name], or `fallback` when absent.
  double Get(const std::string& name, double fallback = 0) const;
};

struct EstimatorSpec {
  EstimatorSpec() = default;
  explicit EstimatorSpec(ModeKeys m) : mode(m) {}

  ModeKeys mode = ModeKeys::kTrain;
  // Scalar; required in TRAIN and EVAL.
  Output loss;
  // Required in TRAIN.
  Operation train_op;
  // EVAL: name -> (value, update op) over metric variables.
  std::map<std::string, train::Metric> eval_metric_ops;
  // PREDICT: name -> tensor whose first dimension is the batch.
  std::map<std::string, Output> predictions;
  // PREDICT, for export: signature key -> typed output
  // (estimator/export_output.h). Empty means one "serving_default"
  // PredictOutput of `predictions`; a single entry is also served as
  // "serving_default"; several need one under that key (TF's rules).
  std::map<std::string, ExportOutput> export_outputs;
  // TRAIN: hooks Estimator::Train runs besides its own.
  HookList training_hooks;
  // EVAL, PREDICT and export: checkpoint name -> variable, for variables
  // restored from another entry than their own, e.g.
  // ExponentialMovingAverage::VariablesToRestore to evaluate with the
  // averages (TF's Scaffold with its own Saver). Other variables restore by
  // their name.
  std::map<std::string, Variable> restore_var_names;
  // Variables that copy others, as the mirrors of an all-reduce replication
  // (ReplicateOptions::aggregation): mirror name -> the variable it copies.
  // Mirrors are local variables, set from theirs after a restore; export
  // freezes a mirror with its variable's value.
  std::map<std::string, Variable> mirrored_from;
};

using ModelFn =
    std::function<EstimatorSpec(const Scope& scope, const FeatureMap& features,
                                const FeatureMap& labels, ModeKeys mode, const Params& params)>;

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_MODEL_FN_H_
