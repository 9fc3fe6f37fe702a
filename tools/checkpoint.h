// `towerflow checkpoint`: what a checkpoint holds, as TF's
// inspect_checkpoint prints it.
//
//   towerflow checkpoint model_dir                    the latest checkpoint
//   towerflow checkpoint model_dir/model.ckpt-200     a given one
//   towerflow checkpoint PREFIX --tensor conv1/weights
//
// Reads TensorFlow's V2 checkpoints, Towerflow's and TensorFlow's alike.
#ifndef TOWERFLOW_TOOLS_CHECKPOINT_H_
#define TOWERFLOW_TOOLS_CHECKPOINT_H_

#include <string>

#include "absl/status/statusor.h"

namespace towerflow {
namespace tools {

// The prefix `path` names: itself, without a trailing ".index", or the
// latest checkpoint of a model directory (its `checkpoint` state file).
absl::StatusOr<std::string> ResolveCheckpointPrefix(const std::string& path);

// Every tensor's name, dtype, shape and size; with `tensor`, that tensor's
// values too (up to `max_values`).
absl::StatusOr<std::string> DescribeCheckpoint(const std::string& path, const std::string& tensor,
                                               int max_values = 1000);

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_CHECKPOINT_H_
