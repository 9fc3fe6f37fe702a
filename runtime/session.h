// Session: runs a GraphDef on this machine's devices.
//
//   SessionOptions opts;
//   opts.device_count["CPU"] = 2;          // two virtual CPU devices
//   opts.allow_soft_placement = true;      // /gpu:1 falls back to CPU
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, NewSession(opts));
//   TW_RETURN_IF_ERROR(s->Create(graph_def));
//   TW_RETURN_IF_ERROR(s->Run({}, {}, {"init"}, nullptr));
//   std::vector<Tensor> out;
//   TW_RETURN_IF_ERROR(s->Run({{"x", x}}, {"loss", "logits:0"}, {"train"}, &out));
//
// Run places the graph's nodes (once; see runtime/placer.h), prunes it to the
// signature (runtime/step_graph.h), rewrites each device's partition
// (runtime/graph_optimizer.h), builds one Executor per device and caches
// them per (feeds, fetches, targets), then runs the partitions together with
// a fresh Rendezvous. The first failing node cancels the step; its error
// comes back with the node named.
//
// Errors: FailedPrecondition after Close or before Create; NotFound for an
// unknown feed/fetch/target; InvalidArgument for a feed of the wrong dtype or
// shape, a placement that cannot be satisfied; Unimplemented for a node
// without a kernel; DeadlineExceeded for a step past its timeout; whatever a
// kernel returns.
//
// Thread safety: Run may be called from many threads at once. Create,
// Extend and Close are also safe, and wait for nothing but the caches' lock.
#ifndef TOWERFLOW_RUNTIME_SESSION_H_
#define TOWERFLOW_RUNTIME_SESSION_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "proto/graph.pb.h"
#include "runtime/graph_optimizer.h"
#include "runtime/step_stats.h"

namespace towerflow {

// Replayed steps (runtime/step_replay.h): on a device that can record its
// work (a GPU: CUDA graphs), a step whose partitions are all on that device
// runs eagerly a few times, is recorded once, and from then on every Run of
// the same feeds, fetches, targets and feed shapes replays the recording:
// the feeds copied into fixed device buffers, one launch, the fetches copied
// out. A new feed shape records again; a variable given a new buffer
// (restored, assigned a tensor of another shape) or a resource removed
// makes the next step record again; a signature keeps at most four
// recordings (feed shapes), dropping the one replayed least recently. A
// step that cannot be recorded runs eagerly, and the log names the first
// node that prevented it (once per signature and shapes). Host checks of a
// fed int32 tensor that a kernel copies to the device (class labels) run
// only when the step is recorded; replayed, a GPU kernel gives NaN for a
// bad label, as TF's GPU kernel does. Traced steps (kFullTrace) run
// eagerly. Steps on CPU devices always run eagerly.
struct StepReplayOptions {
  bool enabled = false;
  // Eager steps of one signature and feed shapes, each leaving every
  // variable of the device in the buffer it had, before one is recorded:
  // the first steps measure algorithms and grow the allocator's cache, and
  // the recording repeats exactly what a steady step does.
  int warmup_steps = 2;
  // Log a step recorded, and why one is not (std::cerr).
  bool log = true;
};

// How one Run executed (RunMetadata::replay).
struct StepReplayReport {
  enum class Mode {
    kEager,     // the executors ran the step
    kRecorded,  // the step was recorded, then launched
    kReplayed,  // a recording was launched
  };
  Mode mode = Mode::kEager;
  // Why a step ran eagerly with replay on: "warming up", or what prevents
  // recording it ("node 'x' (Where) has no kernel on GPU declared
  // capturable ...").
  std::string why_eager;
  // Of the recording that ran: its operations, and the device memory
  // reserved for it.
  int64_t operations = 0;
  int64_t reserved_bytes = 0;
};

struct SessionOptions {
  // Devices per type: "CPU" defaults to 1, others to all present.
  std::map<std::string, int> device_count;
  bool allow_soft_placement = false;
  bool log_device_placement = false;
  // Threads running the step's expensive kernels side by side (inter-op)
  // and the threads one kernel's work is split over (intra-op). 0 picks:
  // intra-op, one per hardware thread; inter-op, one when every device is
  // a CPU (each kernel already uses every core: two at once only fight for
  // them), one per hardware thread when there is a GPU.
  int inter_op_parallelism_threads = 0;
  int intra_op_parallelism_threads = 0;
  // TF's ConfigProto.operation_timeout_in_ms: the deadline of every step
  // whose RunOptions give none. 0: none.
  int64_t operation_timeout_in_ms = 0;
  // Limits on what the session's kernels allocate (framework/allocator.h,
  // MemoryLimits): no tensor larger than max_tensor_bytes, and the process's
  // host tensors never past host_memory_budget_bytes. Past either, the node
  // fails with ResourceExhausted naming it. 0: half of the memory available
  // when the session starts (MemoryLimits::Default).
  int64_t max_tensor_bytes = 0;
  int64_t host_memory_budget_bytes = 0;
  // The rewrites each step's partitions get before they run
  // (runtime/graph_optimizer.h: fused convolutions and matrix products,
  // padding folded into convolutions). GraphOptimizerOptions::None() runs
  // the graph as written.
  GraphOptimizerOptions optimizer;
  // Replayed steps on devices that can record them. Off by default.
  StepReplayOptions replay;
  // The session keeps the executors (partitions, kernels, replay recordings)
  // of at most this many step signatures -- feeds, fetches and targets --
  // dropping the least recently run first; a dropped signature is built
  // again when it runs. Bounds what a program that fetches ever different
  // tensors holds. Must be positive (Init's InvalidArgument otherwise).
  int max_cached_steps = 64;
};

struct RunOptions {
  enum class TraceLevel { kNoTrace, kFullTrace };
  TraceLevel trace_level = TraceLevel::kNoTrace;
  // TF's timeout_in_ms: a step still running after this long is cancelled
  // (no node starts any more, waits on transfers end) and Run returns
  // DeadlineExceeded; the session stays usable. 0: the session's
  // operation_timeout_in_ms.
  int64_t timeout_in_ms = 0;
  // Copy the partition graphs that ran into RunMetadata.
  bool output_partition_graphs = false;
};

struct RunMetadata {
  StepStats step_stats;                    // filled under kFullTrace
  std::vector<GraphDef> partition_graphs;  // with output_partition_graphs
  StepReplayReport replay;                 // how the step ran
};

struct DeviceAttributes {
  std::string name;         // "/job:localhost/replica:0/task:0/device:CPU:0"
  std::string device_type;  // "CPU"
};

class Session {
 public:
  virtual ~Session() = default;

  // Sets the graph. FailedPrecondition when one is already set (use
  // Extend); the import error (naming the node) for a bad GraphDef.
  virtual absl::Status Create(const GraphDef& graph) = 0;
  // Adds nodes to the graph; existing nodes keep their placement.
  virtual absl::Status Extend(const GraphDef& graph) = 0;

  // Feeds `inputs`, runs what `output_names` and `target_names` need, and
  // fills `outputs` (may be null when there are no outputs) in the order of
  // `output_names`. A fetched tensor that is also fed returns the feed.
  virtual absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_names,
                           std::vector<Tensor>* outputs) = 0;
  virtual absl::Status Run(const RunOptions& run_options,
                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_names,
                           std::vector<Tensor>* outputs, RunMetadata* run_metadata) = 0;

  virtual std::vector<DeviceAttributes> ListDevices() const = 0;

  // Releases the executors and the devices' variables; later calls are
  // FailedPrecondition. Idempotent.
  virtual absl::Status Close() = 0;
};

// A session on this process's devices. InvalidArgument for bad options (an
// unknown device type, a negative count).
absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

// True for what Session::Close makes of a run: Cancelled for a step it cut
// short, FailedPrecondition for a run after it. For loops that a close ends
// (queue runners), to tell that end from a failure.
bool IsSessionClosed(const absl::Status& status);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_SESSION_H_
