// Checkpoint files and the `checkpoint` state file of a model directory.
//
//   TW_ASSIGN_OR_RETURN(std::string path,
//                       SaveCheckpoint(model_dir, "model.ckpt", step, tensors, /*max_to_keep=*/5));
//   // path == model_dir + "/model.ckpt-<step>"
//   TW_ASSIGN_OR_RETURN(std::string latest, LatestCheckpoint(model_dir));
//   TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> back, ReadCheckpoint(latest));
//
// Note [Checkpoint format]
// A checkpoint is TensorFlow's V2 format: `<path>.index` and
// `<path>.data-00000-of-00001` (framework/tensor_bundle.h has the layout and
// its checks), so TensorFlow reads what Towerflow writes and the other way
// round. A flipped bit, a truncated file or a lying entry is DataLoss naming
// the file (and the tensor), never a crash or an allocation larger than the
// file. Tensor names are unique. The single-file format of Towerflow before
// it is no longer read: ReadCheckpoint says so (FailedPrecondition) rather
// than misreading it.
//
// Crash safety: the data file and then the index are each written to a
// temporary file, fsynced and renamed into place (core/file_io.h), and only
// then is the state file rewritten the same way; old checkpoints are deleted
// last, index first. A kill at any moment leaves the state file naming a
// complete checkpoint.
//
// The state file is TensorFlow's CheckpointState in text format, paths
// relative to the directory:
//   model_checkpoint_path: "model.ckpt-200"
//   all_model_checkpoint_paths: "model.ckpt-100"
//   all_model_checkpoint_paths: "model.ckpt-200"
//
// Thread-compatible; two writers of one directory race on the state file.
#ifndef TOWERFLOW_TRAIN_CHECKPOINT_H_
#define TOWERFLOW_TRAIN_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "proto/checkpoint_state.pb.h"

namespace towerflow {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Writes the checkpoint `path` (its .index and .data files). InvalidArgument
// for duplicate names or tensors a checkpoint cannot hold (resources); I/O
// errors name the path.
absl::Status WriteCheckpoint(const std::string& path, const std::vector<NamedTensor>& tensors);
// Every tensor of the checkpoint `path`, sorted by name. NotFound when there
// is no `<path>.index`; DataLoss "<file>: ..." for anything malformed.
absl::StatusOr<std::vector<NamedTensor>> ReadCheckpoint(const std::string& path);

// Deletes the files of checkpoint `path` (index first, then its data files
// and a `.meta` beside them), ignoring those already gone.
void DeleteCheckpoint(const std::string& path);

// The state file of `dir`; NotFound when there is none, DataLoss when it
// does not parse.
absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);
absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);

// The path of the latest checkpoint of `dir` ("<dir>/model.ckpt-200");
// NotFound when the directory has no state file or it names none.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);

// Makes the written checkpoint `<dir>/<name>` the latest in the state file
// and deletes the oldest checkpoints beyond `max_to_keep` (<= 0 keeps all).
// Then it removes what killed saves left behind: abandoned temporary files
// of the state file and of checkpoints named like `name`
// (RemoveAbandonedTempFile), and, with max_to_keep > 0, complete
// checkpoints of that basename the state file does not list.
absl::Status RecordCheckpoint(const std::string& dir, const std::string& name, int max_to_keep);

// Writes `<dir>/<basename>-<step>` (creating `dir` and its parents) and
// records it (RecordCheckpoint). Returns the path written.
absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const std::string& basename,
                                           int64_t step, const std::vector<NamedTensor>& tensors,
                                           int max_to_keep);

}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_CHECKPOINT_H_
