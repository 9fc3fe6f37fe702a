// Checkpoint files and the `checkpoint` state file of a model directory.
//
//   TW_ASSIGN_OR_RETURN(std::string path,
//                       SaveCheckpoint(model_dir, "model.ckpt", step, tensors, /*max_to_keep=*/5));
//   // path == model_dir + "/model.ckpt-<step>"
//   TW_ASSIGN_OR_RETURN(std::string latest, LatestCheckpoint(model_dir));
//   TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> back, ReadCheckpoint(latest));
//
// Note [Checkpoint format]
// One file per checkpoint, little-endian:
//   "TWCKPT01"  u32 tensor_count  u32 masked_crc32c(magic and count)
//   per tensor: u32 record_length, record, u32 masked_crc32c(record)
//     record = u32 name_length, name, i32 dtype, u32 rank, i64 dims[rank],
//              u64 data_length, data (row-major elements)
//   and nothing after the last tensor.
// Every length is checked against what is left of the file and the dims
// against data_length before anything is allocated, so a flipped bit, a
// truncated file or a lying header is DataLoss naming the file, and never a
// crash or a huge allocation. Tensor names are unique.
//
// Crash safety: a checkpoint is written to a temporary file, fsynced and
// renamed into place (core/file_io.h), and only then is the state file
// rewritten the same way; old checkpoints are deleted last. A kill at any
// moment leaves the state file naming a complete checkpoint.
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
#include "proto/checkpoint_state.pb.h"
#include "framework/tensor.h"

namespace towerflow {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// InvalidArgument for duplicate names or tensors without a fixed-size dtype
// (strings, resources); I/O errors name the path.
absl::Status WriteCheckpoint(const std::string& path, const std::vector<NamedTensor>& tensors);
// NotFound when `path` does not exist; DataLoss "<path>: ..." for anything
// malformed.
absl::StatusOr<std::vector<NamedTensor>> ReadCheckpoint(const std::string& path);

// The state file of `dir`; NotFound when there is none, DataLoss when it
// does not parse.
absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);
absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);

// The path of the latest checkpoint of `dir` ("<dir>/model.ckpt-200");
// NotFound when the directory has no state file or it names none.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);

// Writes `<dir>/<basename>-<step>` (creating `dir` and its parents),
// makes it the latest in the state file
// and deletes the oldest checkpoints beyond `max_to_keep` (<= 0 keeps all).
// Returns the path written.
absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const std::string& basename,
                                           int64_t step, const std::vector<NamedTensor>& tensors,
                                           int max_to_keep);

}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_CHECKPOINT_H_
