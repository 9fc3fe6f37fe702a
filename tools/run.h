// `towerflow run`: feed JSON values into a GraphDef, run it, print fetches.
//
//   towerflow run g.pbtxt --feed x=[[1,2],[3,4]] --feed k=3:int64 --feed img=@image.json
//       --target init --fetch y --fetch z:1 [--device_count CPU=2] [--json] [--trace t.json]
//   (one command line)
//
// Feeds are JSON numbers, booleans or strings in nested lists, inline or in
// a file ("@path"), or NumPy arrays ("@path.npy"); the dtype comes from the
// fed node's output unless given as a ":dtype" suffix.
// Targets run one by one, in order, before one run that fetches.
//
// A MetaGraphDef (a ".meta" file, as tf.compat.v1.train.export_meta_graph
// writes) runs its graph; with --queue_runners, the queue runners of its
// "queue_runners" collection (TF 1 input pipelines) start after the targets
// and fill their queues while the fetches run, as
// tf.compat.v1.train.start_queue_runners does, and stop before the values
// are printed.
#ifndef TOWERFLOW_TOOLS_RUN_H_
#define TOWERFLOW_TOOLS_RUN_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/allocator.h"
#include "framework/tensor.h"

namespace towerflow {
namespace tools {

struct RunCommand {
  std::string graph_path;
  std::vector<std::string> feeds;  // "NAME=JSON" or "NAME=JSON:dtype"
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  // Start the MetaGraphDef's queue runners before the fetching run.
  bool queue_runners = false;
  std::map<std::string, int> device_count;
  bool json = false;
  std::string trace_path;  // Chrome trace of the fetch run, when set
  // A fetch of more elements is refused (ResourceExhausted naming it and
  // --max_output_elements) instead of printed: its text takes tens of bytes
  // an element.
  int64_t max_output_elements = 10'000'000;
  // Where the values are written as they are formatted (the CLI: stdout);
  // null: RunGraph returns them.
  std::ostream* out = nullptr;
};

// --device_count's values ("CPU=2", "GPU=0") as SessionOptions::device_count.
// InvalidArgument naming a value that is not TYPE=N with N >= 0.
absl::StatusOr<std::map<std::string, int>> ParseDeviceCount(const std::vector<std::string>& specs);

// Runs the command and returns what it prints, or writes it to
// command.out as it goes and returns "". InvalidArgument when it has neither
// fetches nor targets, or queue_runners without a MetaGraphDef that has
// them. A queue runner's failure is the command's error (it names the
// queue and the op), even when the fetches ended first.
absl::StatusOr<std::string> RunGraph(const RunCommand& command);

// A tensor of `dtype` from JSON nested lists: InvalidArgument naming the
// problem (ragged lists, a value that does not fit the dtype);
// ResourceExhausted when the values, or they with the text, would not fit
// `limits` (Note [Feeds parsed as a stream] in run.cc).
absl::StatusOr<Tensor> TensorFromJson(const std::string& json, DataType dtype,
                                      const MemoryLimits& limits = MemoryLimits::Default());

// A tensor from the bytes of a NumPy .npy file (format 1-3, C order,
// little-endian float/double/int8-64/uint8/uint16/bool). InvalidArgument
// for a malformed file or another dtype than `dtype` (no casting);
// ResourceExhausted when the tensor would not fit `limits`.
absl::StatusOr<Tensor> TensorFromNpy(absl::string_view bytes, DataType dtype,
                                     const MemoryLimits& limits = MemoryLimits::Default());

// TensorFromJson of `value`, or of the file it names as "@path" (for feeds
// too large for a command line): a .npy file by its extension, else JSON.
// A file is refused unread when it is larger than the host budget leaves
// room for. Errors name the file.
absl::StatusOr<Tensor> TensorFromJsonOrFile(const std::string& value, DataType dtype,
                                            const MemoryLimits& limits = MemoryLimits::Default());

// True for a MetaGraphDef's file name: "x.meta", "x.meta.pbtxt".
bool IsMetaGraphPath(absl::string_view path);

// {"dtype":"float","shape":[2],"values":[1,2]}
std::string TensorToJson(const Tensor& t);

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_RUN_H_
