// Warm start: variables that begin from a checkpoint, TensorFlow's
// tf.train.init_from_checkpoint.
//
//   // Every variable under "tf/name/" in the checkpoint initializes the
//   // variable of the same suffix under "my/name/".
//   TW_RETURN_IF_ERROR(train::InitFromCheckpoint(root, "/models/tf/model.ckpt-100000",
//                                                {{"tf/name/", "my/name/"}}));
//   ... GlobalVariablesInitializer(root) now loads them.
//
// The assignment map's entries are TF's:
//   "ckpt/scope/" -> "graph/scope/"   every variable under graph/scope/ from
//                                     the tensor of the same suffix under
//                                     ckpt/scope/ (a "/" on either side is the
//                                     root: {"/", "/"} maps every variable to
//                                     the tensor of its own name)
//   "ckpt/name"   -> "graph/name"     one variable from one tensor
// Each chosen variable's initializer is rewired to assign the checkpoint's
// tensor (read by a RestoreV2 on the CPU) instead of its initial value, so
// initialization — and only initialization, as in TF: a model directory's
// own checkpoint still wins — loads it. The checkpoint is checked here:
// NotFound for a tensor it lacks ("Key <name> not found in checkpoint
// <prefix>"), InvalidArgument naming both when a dtype or shape differs or a
// scope entry matches no variable. A directory stands for its latest
// checkpoint.
//
// Not thread-safe (graph building).
#ifndef TOWERFLOW_TRAIN_WARM_START_H_
#define TOWERFLOW_TRAIN_WARM_START_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "graph/scope.h"

namespace towerflow {
namespace train {

absl::Status InitFromCheckpoint(const Scope& scope, const std::string& checkpoint,
                                const std::map<std::string, std::string>& assignment_map);

// TF's tf.estimator.WarmStartSettings: which variables start from which
// checkpoint (RunConfig::warm_start_from).
struct WarmStartSettings {
  // A checkpoint prefix, or a model directory (its latest checkpoint).
  std::string ckpt_to_initialize_from;
  // A regular expression (ECMAScript) matched at the start of the names of
  // the trainable variables to warm-start, as TF's default ".*": all.
  std::string vars_to_warm_start = ".*";
  // Variable name -> its name in the checkpoint, where they differ.
  std::map<std::string, std::string> var_name_to_prev_var_name;
};

// TF's warm_starting_util.warm_start: InitFromCheckpoint for every
// trainable variable `settings` chooses. InvalidArgument for a bad regular
// expression or one that chooses no variable; InitFromCheckpoint's errors.
absl::Status WarmStart(const Scope& scope, const WarmStartSettings& settings);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_WARM_START_H_
