// Saver: saves a graph's variables to checkpoints and restores them, as
// TensorFlow's tf.train.Saver, in TensorFlow's V2 format (layout and crash
// safety in train/checkpoint.h).
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<train::Saver> saver, train::Saver::Create(root));
//   ClientSession session(root);
//   ...
//   TW_ASSIGN_OR_RETURN(std::string path, saver->Save(session, model_dir, step));
//   TW_RETURN_IF_ERROR(saver->Restore(session, *LatestCheckpoint(model_dir)));
//
// Create adds TF's saver subgraph under "save/", so a graph exported with it
// (a MetaGraphDef with saver_def(), a SavedModel) is restored by TensorFlow
// as by Towerflow:
//   save/Const                 the checkpoint prefix (a string; fed)
//   save/SaveV2                every variable's value (a ReadVariableOp
//                              colocated with the variable) under its name
//   save/control_dependency    save/Const after the save: what Save fetches
//   save/RestoreV2             every tensor of the checkpoint by name
//   save/AssignVariableOp*     into each variable (colocated with it)
//   save/restore_all           all of them: what Restore runs
// SaveV2 and RestoreV2 run on the CPU. Checkpoint tensors are named by
// variable name ("conv1/weights").
//
// Thread-compatible.
#ifndef TOWERFLOW_TRAIN_SAVER_H_
#define TOWERFLOW_TRAIN_SAVER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/variables.h"
#include "proto/saver.pb.h"
#include "runtime/client_session.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace train {

struct SaverOptions {
  // Empty: every variable in kGlobalVariables when Create runs.
  std::vector<Variable> var_list;
  // Instead of var_list: checkpoint tensor name -> variable (e.g.
  // ExponentialMovingAverage::VariablesToRestore, to evaluate with the
  // averages).
  std::map<std::string, Variable> var_names;
  // Checkpoints kept in the directory; <= 0 keeps all.
  int max_to_keep = 5;
  std::string basename = "model.ckpt";
};

class Saver {
 public:
  // InvalidArgument when there is nothing to save or a name repeats.
  static absl::StatusOr<std::unique_ptr<Saver>> Create(const Scope& scope,
                                                       SaverOptions options = {});

  // Writes `<dir>/<basename>-<global_step>` and updates the state file,
  // keeping max_to_keep checkpoints. Returns the path.
  absl::StatusOr<std::string> Save(const ClientSession& session, const std::string& dir,
                                   int64_t global_step) const;

  // Loads every variable from the checkpoint `path`. NotFound "Key <var> not
  // found in checkpoint <path>"; InvalidArgument naming the variable, both
  // shapes and both dtypes when they differ; DataLoss for a corrupt file.
  // Nothing is assigned unless every variable can be.
  absl::Status Restore(const ClientSession& session, const std::string& path) const;

  const std::vector<Variable>& variables() const { return vars_; }
  // The names of the saver's tensors and ops in the graph, as TF's
  // MetaGraphDef records them (version V2, not sharded).
  const SaverDef& saver_def() const { return saver_def_; }

 private:
  Saver() = default;

  SaverOptions options_;
  std::vector<Variable> vars_;
  std::vector<std::string> names_;  // checkpoint names, one per variable
  SaverDef saver_def_;
  Output filename_;
  Output save_;
  Operation restore_;
};

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_SAVER_H_
