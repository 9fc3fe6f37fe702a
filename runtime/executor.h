// Executor: runs one partition graph (all nodes on one device) per step.
//
// Made once per (session graph, feeds, fetches, targets) signature and
// partition: the kernels are created up front, so a missing kernel or a bad
// attr fails at Create, naming the node. RunAsync then runs a step as
// dataflow — a node runs when all its data and control inputs are done —
// cheap kernels inline on the current thread, expensive ones on the inter-op
// pool. See Note [Executor scheduling] in executor.cc.
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex, Executor::Create(std::move(g), device));
//   ex->RunAsync(args, [](absl::Status s) { ... });
//
// The first failing node stops the step: its error, with the node's name and
// op attached, goes to Args::on_error and to `done`; nodes not yet started
// are skipped, and `done` runs once every started node has finished.
//
// TensorFlow 1.x control flow runs here: dead tensors from a Switch's
// untaken side, Merge, and while loops as frames of iterations (Enter, Exit,
// NextIteration), up to each loop's parallel_iterations at once. See Note
// [Control flow] in executor.cc.
//
// Thread-safe: one Executor may run many steps at once.
#ifndef TOWERFLOW_RUNTIME_EXECUTOR_H_
#define TOWERFLOW_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "framework/device.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/rendezvous.h"
#include "framework/threadpool.h"
#include "graph/graph.h"
#include "runtime/step_stats.h"

namespace towerflow {

// The kernels of a session's stateful nodes on its devices, shared by every
// executor the session makes, as TF's OpSegment shares them: a node keeps
// its state from one run signature to the next (a seeded random op draws
// on where the last step of any signature left off, as in TF, instead of
// starting its stream again). A step's own plumbing (_Arg, _Retval, _Send,
// _Recv) is not shared. Thread-safe.
class StatefulKernels {
 public:
  using Make = std::function<absl::StatusOr<std::unique_ptr<OpKernel>>()>;
  // The kernel of stateful node `def` on `device` that an executor made
  // before from the same op and attrs; else `make()`'s, kept for later ones.
  absl::StatusOr<std::shared_ptr<OpKernel>> FindOrMake(const Device* device, const NodeDef& def,
                                                       const Make& make);

 private:
  struct Entry {
    NodeDef def;
    std::shared_ptr<OpKernel> kernel;
  };
  absl::Mutex mu_;
  absl::flat_hash_map<std::pair<const Device*, std::string>, Entry> kernels_ ABSL_GUARDED_BY(mu_);
};

// DeadlineExceeded for a step that ran past its timeout (RunOptions's
// timeout_in_ms, or the session's operation_timeout_in_ms).
absl::Status StepTimeoutError(int64_t timeout_ms);

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;     // shared by the step's partitions
    CallFrame* call_frame = nullptr;      // feeds and fetches
    StepStatsCollector* stats = nullptr;  // null: no timing
    ThreadPool* inter_op_pool = nullptr;  // REQUIRED
    // Called once with the first error of this partition, before `done`, so
    // the caller can cancel the other partitions of the step.
    std::function<void(const absl::Status&)> on_error;
    // Set by the caller to end the step early (a deadline): no node starts
    // after the executor sees it, and the step ends with Cancelled. Nodes
    // already running finish; a wait on the rendezvous ends only when the
    // caller aborts the rendezvous too.
    const std::atomic<bool>* cancelled = nullptr;
    // The step's deadline: past it no node starts and the step ends with
    // StepTimeoutError(timeout_ms), also when the executor runs the whole
    // step on the caller's thread (a loop that never ends) and the caller
    // cannot set `cancelled`. InfiniteFuture: none.
    absl::Time deadline = absl::InfiniteFuture();
    int64_t timeout_ms = 0;
  };
  using DoneCallback = std::function<void(absl::Status)>;

  // Takes `graph`, whose nodes must all be assigned to `device` (borrowed;
  // must outlive the executor). Unimplemented when a node has no kernel for
  // the device; a kernel's Init error otherwise, with the node named;
  // InvalidArgument for malformed control flow (graph/control_flow.h) or a
  // fetch, feed or transfer inside a while loop.
  //
  // With `kernels_from` (an executor on the same device; it need not
  // outlive this one), a node of the same name, op and attrs there lends
  // this executor its kernel object instead of a new one, with the state a
  // kernel keeps from step to step: a random op's stream, a convolution's
  // measured algorithms. A replayed step's executor (runtime/step_replay.h)
  // so continues where the session's steps left off.
  //
  // With `stateful` (the session's), the stateful nodes' kernels come from
  // and go to it.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<Graph> graph,
                                                          Device* device,
                                                          const Executor* kernels_from = nullptr,
                                                          StatefulKernels* stateful = nullptr);
  ~Executor();

  // Runs one step. Everything in `args` must outlive `done`. The calling
  // thread runs the first ready nodes itself.
  void RunAsync(const Args& args, DoneCallback done);

  const Graph& graph() const { return *graph_; }
  Device* device() const { return device_; }

 private:
  struct NodeItem;
  struct FrameInfo;
  class StepState;

  Executor(std::unique_ptr<Graph> graph, Device* device);
  absl::Status Initialize(const Executor* kernels_from, StatefulKernels* stateful);

  std::unique_ptr<Graph> graph_;
  Device* const device_;
  std::vector<NodeItem> items_;    // by dense index
  std::vector<FrameInfo> frames_;  // frames_[0] is the root frame
  std::vector<int> roots_;         // items with no inputs
  // Whether propagation takes the frames' locks: a Merge's arrival logic and
  // loops need them; without either the counts' atomics suffice.
  bool locked_ = false;
};

// "message [[node add (AddV2) on /job:localhost/.../CPU:0]]": how the
// executor names the failing node in an error, keeping its code. A node the
// graph optimizer fused names the nodes it replaced:
// "[[node conv/Relu (_FusedConv2D, fused from conv/Conv2D, conv/BiasAdd,
// conv/Relu) on ...]]".
absl::Status AttachNodeContext(const absl::Status& status, const Node& node,
                               const std::string& device);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_EXECUTOR_H_
