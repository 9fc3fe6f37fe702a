// Replayed steps: one Session::Run signature's steps, recorded once on a
// device that can (framework/step_capture.h) and replayed with one launch.
// Internal to the runtime; SessionOptions::replay (runtime/session.h) turns
// it on. See Note [Replayed steps] in step_replay.cc.
//
// The session makes one StepReplay per signature whose partitions are all
// on one capture-capable device, and hands it every Run of that signature:
//
//   StepReplayReport report;
//   std::vector<Tensor> retvals;   // by _Retval index
//   bool replayed = false;
//   TW_RETURN_IF_ERROR(replay->Run(feeds, deadline, timeout_ms, run_eagerly, &retvals,
//                                  &replayed, &report));
//   if (!replayed) { ... the fetches are in the session's call frame ... }
//
// Thread-safe. Steps of one signature and feed shapes replay one at a time;
// a recording waits for no step: it happens only when it can hold every
// other step of the session back (`steps_mu` free), else that step runs
// eagerly.
#ifndef TOWERFLOW_RUNTIME_STEP_REPLAY_H_
#define TOWERFLOW_RUNTIME_STEP_REPLAY_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "framework/device.h"
#include "framework/threadpool.h"
#include "proto/graph.pb.h"
#include "runtime/executor.h"
#include "runtime/session.h"

namespace towerflow {

class StepReplay {
 public:
  // The signature's one partition `partition` (as its executor runs it,
  // after the graph optimizer) on `device`, which has a step_capture();
  // `eager` is the executor the session runs it with (borrowed; must
  // outlive this): the recording shares its kernels. `signature` names the
  // step in logs. `steps_mu` (borrowed) is the session's: every step holds
  // it shared, a recording exclusively. `host` (borrowed), a CPU device,
  // folds the partition's constant shape arithmetic.
  StepReplay(std::string signature, GraphDef partition, Device* device, Device* host,
             const Executor* eager, int num_fetches, ThreadPool* inter_op_pool,
             absl::Mutex* steps_mu, const StepReplayOptions& options);
  ~StepReplay();
  StepReplay(const StepReplay&) = delete;
  StepReplay& operator=(const StepReplay&) = delete;

  // Runs one step with `feeds` (in _Arg index order). When it replays or
  // records, the fetches come back in `retvals` (by _Retval index) and
  // `replayed` is set; otherwise it calls `run_eagerly`, which runs the
  // step as the session does without replay and whose status it returns.
  // `report` says which happened. A step past `deadline` before its launch
  // is DeadlineExceeded (StepTimeoutError(timeout_ms)).
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds, absl::Time deadline,
                   int64_t timeout_ms, const std::function<absl::Status()>& run_eagerly,
                   std::vector<Tensor>* retvals, bool* replayed, StepReplayReport* report);

 private:
  struct Recording;
  struct Entry;
  struct VarState;

  // The entry of `feeds`' shapes.
  Entry* FindOrAddEntry(const std::vector<std::pair<std::string, Tensor>>& feeds);
  // Runs eagerly, counting a warm-up step when no variable got a new buffer.
  absl::Status RunEagerly(Entry* entry, const std::function<absl::Status()>& run_eagerly,
                          StepReplayReport* report);
  // Records the step and launches the recording: true. False when the
  // step cannot be recorded (the entry is refused, saying why once): run it
  // eagerly. REQUIRES: entry->mu and steps_mu_ (exclusively) held.
  absl::StatusOr<bool> Record(Entry* entry,
                              const std::vector<std::pair<std::string, Tensor>>& feeds,
                              std::vector<Tensor>* retvals, StepReplayReport* report);
  absl::Status Replay(Entry* entry, const std::vector<std::pair<std::string, Tensor>>& feeds,
                      std::vector<Tensor>* retvals, StepReplayReport* report);
  // Copies `feeds` into the recording's slots, launches it, copies the
  // fetches out.
  absl::Status Launch(Recording* recording,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      std::vector<Tensor>* retvals);
  void Refuse(Entry* entry, const std::string& why);
  // Drops the recording of the entry (not `keep`) replayed least recently
  // when the signature keeps kMaxLiveRecordings of them.
  void DropLeastRecentlyUsed(Entry* keep);

  const std::string signature_;
  const GraphDef partition_;
  Device* const device_;
  Device* const host_;
  const Executor* const eager_;
  const int num_fetches_;
  ThreadPool* const inter_op_pool_;
  absl::Mutex* const steps_mu_;
  const StepReplayOptions options_;
  // Why no step of the signature can be recorded, whatever its shapes (a
  // stateful node without a capturable kernel, control flow); else empty.
  std::string refused_;

  std::atomic<int64_t> clock_{0};  // counts recordings made and replayed
  absl::Mutex mu_;
  // By the feeds' shapes.
  absl::flat_hash_map<std::string, std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_STEP_REPLAY_H_
