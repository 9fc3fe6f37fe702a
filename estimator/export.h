// A model_fn's serving graph as a SavedModel's MetaGraphDef: what
// Estimator::ExportSavedModel and keras::Model::Save write, for whoever
// exports values from elsewhere than a checkpoint.
//
//   TW_ASSIGN_OR_RETURN(ServingMetaGraph serving, BuildServingMetaGraph(model_fn, receiver_fn));
//   // serving.variables: what variables/variables must hold, and whence.
#ifndef TOWERFLOW_ESTIMATOR_EXPORT_H_
#define TOWERFLOW_ESTIMATOR_EXPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/model_fn.h"
#include "estimator/serving_input_receiver.h"
#include "proto/meta_graph.pb.h"

namespace towerflow {

struct ServingMetaGraph {
  // Tag "serve"; the PREDICT graph over the receiver with TF's saver
  // subgraph (SaverDef), local variables initialized by the main op, and a
  // SignatureDef per export output (see BuildServingMetaGraph).
  MetaGraphDef meta_graph_def;
  struct SavedVariable {
    std::string name;    // as the SaverDef saves and restores it
    std::string source;  // the name its value comes from (a moving average...)
  };
  std::vector<SavedVariable> variables;
  // Assets (GraphKeys::kAssetFilepaths): file name in assets/ -> the file
  // to copy there; meta_graph_def's asset_file_def maps each tensor to it.
  std::map<std::string, std::string> assets;
  // Signatures left out, key -> why (TF's export logs them and goes on): a
  // classification or regression output with a receiver that is not one
  // string tensor.
  std::map<std::string, std::string> excluded_signatures;
};

struct ServingGraphOptions {
  Params params;                // model_fn's
  std::optional<int64_t> seed;  // the graph-level random seed
  // The Estimator's graphs hold the global step (a Keras model's do not).
  bool global_step = true;
};

// Builds model_fn's PREDICT graph over `receiver_fn`'s receiver. Signatures, from
// EstimatorSpec::export_outputs as TF's Estimator makes them:
// - none: "serving_default" is a predict signature of the predictions;
// - one under another key: also served as "serving_default"; several: one
//   must be "serving_default" (TF's error otherwise);
// - predict signatures take every receiver tensor by its key; classify and
//   regress ones take the single string receiver tensor as "inputs";
// - each output is an Identity named "outputs/<name>" for serving_default,
//   "outputs/<key>/<name>" for others.
// Each string constant in GraphKeys::kAssetFilepaths (TF's ASSET_FILEPATHS)
// becomes an asset: its file is copied into assets/ under its base name, and
// the loader feeds the constant the copy's path when it runs the main op
// (initializing, say, a local variable from it).
// InvalidArgument for an export output that fails ExportOutput::Validate,
// no predictions and no outputs, no signature left, or an asset that is not
// a scalar string constant or whose base name another asset has; the
// graph's errors.
absl::StatusOr<ServingMetaGraph> BuildServingMetaGraph(const ModelFn& model_fn,
                                                       const ServingInputReceiverFn& receiver_fn,
                                                       const ServingGraphOptions& options = {});

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_EXPORT_H_
