// What Estimator's calls share: building one call's graph. Internal to
// estimator/.
#ifndef TOWERFLOW_ESTIMATOR_ESTIMATOR_INTERNAL_H_
#define TOWERFLOW_ESTIMATOR_ESTIMATOR_INTERNAL_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "estimator/estimator.h"
#include "graph/scope.h"
#include "ops/variables.h"
#include "train/saver.h"

namespace towerflow {

struct ServingGraphOptions;  // estimator/export.h

namespace estimator_internal {

// One call's graph: a placeholder per input (or the serving input
// receiver), the global step, then what model_fn built.
struct ModelGraph {
  Scope root = Scope::NewRootScope();
  FeatureMap features, labels;
  std::map<std::string, Output> placeholders;      // features and labels by name
  std::map<std::string, Output> receiver_tensors;  // export: the signatures' inputs
  Variable global_step;
  EstimatorSpec spec;
};

// A graph with the inputs `add_inputs` makes, the global step (unless
// `global_step` is false), then what model_fn built; checks the spec (TF's
// "Missing loss." / "Missing train_op.").
absl::StatusOr<std::unique_ptr<ModelGraph>> BuildGraph(
    const ModelFn& model_fn, std::optional<int64_t> seed, const Params& params, ModeKeys mode,
    const std::function<void(ModelGraph*)>& add_inputs, bool global_step = true);

// Builds the graph and checks the spec (TF's "Missing loss." /
// "Missing train_op.").
absl::StatusOr<std::unique_ptr<ModelGraph>> BuildModelGraph(const ModelFn& model_fn,
                                                            const RunConfig& config,
                                                            const Params& params, ModeKeys mode,
                                                            const Signature& features,
                                                            const Signature& labels);

// The PREDICT graph over the receiver `receiver_fn` builds (export.cc).
absl::StatusOr<std::unique_ptr<ModelGraph>> BuildServingModelGraph(
    const ModelFn& model_fn, const ServingGraphOptions& options,
    const ServingInputReceiverFn& receiver_fn);

// InvalidArgument for an empty model_dir or a null log.
absl::Status CheckConfig(const RunConfig& config);

// The Saver of EVAL / PREDICT / export: spec.restore_var_names, and every
// other global variable by its name.
absl::StatusOr<std::unique_ptr<train::Saver>> RestoringSaver(const ModelGraph& g);

}  // namespace estimator_internal
}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_ESTIMATOR_INTERNAL_H_
