// Training hooks: TensorFlow's SessionRunHook, called around every step by
// the one training loop (training/loop.h) that Estimator::Train and
// keras::Model::Fit both run.
//
//   class LogAccuracy : public SessionRunHook {
//     std::vector<Output> BeforeRun() override { return {accuracy_}; }
//     absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
//                           bool* request_stop) override { ... }
//   };
//   estimator.Train(input_fn, {.max_steps = 1000, .hooks = {std::make_shared<LogAccuracy>()}});
//   model.Fit(x, y, {.epochs = 5, .hooks = {std::make_shared<LogAccuracy>()}});
//
// Every step the loop fetches the loss and the global step after the step
// (a Keras model, which has no global step variable, counts its steps);
// hooks read them from StepResult and may ask for more tensors in
// BeforeRun. Hooks run in order; an error from any of them ends training at
// once with that error: no later hook runs and no final checkpoint is
// written (so the NaN guard, which the Estimator puts first, keeps a
// diverged model out of model_dir).
//
// Hooks are used by one training loop at a time.
#ifndef TOWERFLOW_TRAINING_HOOKS_H_
#define TOWERFLOW_TRAINING_HOOKS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "proto/graph.pb.h"
#include "runtime/client_session.h"
#include "runtime/session.h"
#include "train/event_writer.h"
#include "train/saver.h"

namespace towerflow {

struct StepResult {
  int64_t global_step = 0;  // after the step
  double loss = 0;
  int64_t batch_size = 0;  // examples in the step's batch (of every process in a cluster)
  double seconds = 0;      // the step's wall time
  // The front end's further values of the step (a Keras model's metrics, in
  // the order of its logs); empty for the Estimator.
  std::vector<double> logs;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  // The graph is complete and the session not made yet: add ops here.
  virtual absl::Status Begin(const Scope& root) { return absl::OkStatus(); }
  // Variables are initialised or restored; `global_step` is where training
  // starts.
  virtual absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) {
    return absl::OkStatus();
  }
  // Tensors to fetch with the next step.
  virtual std::vector<Output> BeforeRun() { return {}; }
  // Whether the next step, the one ending at global step `next_step`, runs
  // traced (RunOptions::kFullTrace); its RunMetadata then reaches
  // AfterTracedRun, just before AfterRun.
  virtual bool TraceStep(int64_t next_step) { return false; }
  virtual absl::Status AfterTracedRun(const StepResult& step, const RunMetadata& metadata) {
    return absl::OkStatus();
  }
  // After a step: `values` are BeforeRun's tensors. Set *request_stop to
  // end training after this step (cleanly: End runs, a checkpoint is kept).
  virtual absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                                bool* request_stop) {
    return absl::OkStatus();
  }
  // Training ended without error (steps done, data exhausted, or a stop
  // request).
  virtual absl::Status End(const ClientSession& session, int64_t global_step) {
    return absl::OkStatus();
  }
};

using HookList = std::vector<std::shared_ptr<SessionRunHook>>;

// Stops at global step `last_step`, or `num_steps` after where training
// starts (exactly one of them).
class StopAtStepHook : public SessionRunHook {
 public:
  static StopAtStepHook NumSteps(int64_t num_steps) { return StopAtStepHook(num_steps, {}); }
  static StopAtStepHook LastStep(int64_t last_step) { return StopAtStepHook({}, last_step); }

  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
  // The step training stops at (after AfterCreateSession).
  int64_t last_step() const { return *last_step_; }

 private:
  StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step)
      : num_steps_(num_steps), last_step_(last_step) {}
  std::optional<int64_t> num_steps_;
  std::optional<int64_t> last_step_;
};

// The CIFAR-10 tutorial's log line every `every_n_steps` steps:
//   "2026-11-22 10:41:07.123: step 10, loss = 2.30 (412.0 examples/sec; 0.311 sec/batch)"
// with the rates measured over the steps since the last line.
// `clear_line` first clears a progress bar's line.
class LoggingHook : public SessionRunHook {
 public:
  LoggingHook(int64_t every_n_steps, std::ostream* out, bool clear_line = false)
      : every_n_steps_(every_n_steps), out_(out), clear_line_(clear_line) {}
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;

 private:
  const int64_t every_n_steps_;
  std::ostream* const out_;
  const bool clear_line_;
  int64_t steps_ = 0, examples_ = 0;
  std::chrono::steady_clock::time_point since_;
};

// Keeps every step's result, in order (for loss curves in-process and for
// tests).
class StepHistoryHook : public SessionRunHook {
 public:
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override {
    steps_.push_back(step);
    return absl::OkStatus();
  }
  const std::vector<StepResult>& steps() const { return steps_; }
  std::vector<double> losses() const {
    std::vector<double> out;
    for (const StepResult& s : steps_) out.push_back(s.loss);
    return out;
  }

 private:
  std::vector<StepResult> steps_;
};

// TensorFlow's StepCounterHook: "global_step/sec: 3.21" every
// `every_n_steps` steps.
class StepCounterHook : public SessionRunHook {
 public:
  StepCounterHook(int64_t every_n_steps, std::ostream* out, bool clear_line = false)
      : every_n_steps_(every_n_steps), out_(out), clear_line_(clear_line) {}
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
  // The last rate logged (0 before the first line).
  double steps_per_sec() const { return steps_per_sec_; }

 private:
  const int64_t every_n_steps_;
  std::ostream* const out_;
  const bool clear_line_;
  int64_t last_step_ = 0;
  double steps_per_sec_ = 0;
  std::chrono::steady_clock::time_point since_;
};

// Ends training with InvalidArgument "Model diverged with loss = NaN ..."
// when the loss is NaN (or infinite), before any checkpoint of that step.
class NanGuardHook : public SessionRunHook {
 public:
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
};

// Saves a checkpoint when training starts (unless model_dir has one of that
// step), every `every_steps` steps or `every_secs` seconds (whichever is
// set; 0 turns one off), and at the end. Beside each, as TF's hook does,
// the training graph as a MetaGraphDef (`model.ckpt-200.meta`,
// train/meta_graph.h), made when the first is saved: TensorFlow's
// import_meta_graph and saver.restore take up the run.
class CheckpointSaverHook : public SessionRunHook {
 public:
  CheckpointSaverHook(const train::Saver* saver, std::string model_dir, int64_t every_steps,
                      double every_secs, std::ostream* out)
      : saver_(saver),
        model_dir_(std::move(model_dir)),
        every_steps_(every_steps),
        every_secs_(every_secs),
        out_(out) {}
  absl::Status Begin(const Scope& root) override;
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
  absl::Status End(const ClientSession& session, int64_t global_step) override;

 private:
  absl::Status Save(int64_t global_step);

  const train::Saver* const saver_;
  std::optional<Scope> root_;
  std::string meta_graph_;  // serialized, once the graph is complete
  const std::string model_dir_;
  const int64_t every_steps_;
  const double every_secs_;
  std::ostream* const out_;
  const ClientSession* session_ = nullptr;
  int64_t last_saved_step_ = -1;
  std::chrono::steady_clock::time_point last_saved_time_;
};

// TensorBoard's data, as TF's SummarySaverHook and Estimator write it: an
// event file in `dir` holding the graph, then every `every_n_steps` steps
// "loss", "global_step/sec" and the graph's summaries (collection
// GraphKeys::kSummaries, e.g. ScalarSummary ops, merged).
class SummarySaverHook : public SessionRunHook {
 public:
  SummarySaverHook(std::string dir, int64_t every_n_steps)
      : dir_(std::move(dir)), every_n_steps_(every_n_steps) {}
  absl::Status Begin(const Scope& root) override;
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  std::vector<Output> BeforeRun() override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
  absl::Status End(const ClientSession& session, int64_t global_step) override;

  // The event file (after AfterCreateSession).
  std::string path() const { return writer_ == nullptr ? "" : writer_->path(); }

 private:
  bool Due(int64_t global_step) const {
    return every_n_steps_ > 0 && global_step % every_n_steps_ == 0;
  }

  const std::string dir_;
  const int64_t every_n_steps_;
  Output merged_;  // invalid when the graph has no summaries
  GraphDef graph_def_;
  std::unique_ptr<train::EventWriter> writer_;
  int64_t last_step_ = 0, last_written_step_ = 0;
  std::chrono::steady_clock::time_point last_written_;
};

// TensorFlow's ProfilerHook: every `every_n_steps` steps (the steps ending
// at a multiple of it) runs traced and writes the step's Chrome trace,
// "timeline-<global step>.json" in `dir` (chrome://tracing, Perfetto): when
// each node ran, per device and thread. On a GPU a kernel's span is its
// launch; a copy to the host spans the wait for the kernels before it.
// When training ends it writes "op_times.txt" in `dir` (and to `log` unless
// null): the traced steps' time per op type, most first.
class ProfilerHook : public SessionRunHook {
 public:
  ProfilerHook(std::string dir, int64_t every_n_steps, std::ostream* log = nullptr)
      : dir_(std::move(dir)), every_n_steps_(every_n_steps), log_(log) {}
  bool TraceStep(int64_t next_step) override {
    return every_n_steps_ > 0 && next_step % every_n_steps_ == 0;
  }
  absl::Status AfterTracedRun(const StepResult& step, const RunMetadata& metadata) override;
  absl::Status End(const ClientSession& session, int64_t global_step) override;

  // The table of End so far: per op type, the nodes run, their total time
  // and its share of all the nodes' time (summed over threads and devices),
  // and the time per traced step.
  std::string OpTimeTable() const;

 private:
  struct OpTime {
    int64_t count = 0;
    int64_t micros = 0;
  };
  const std::string dir_;
  const int64_t every_n_steps_;
  std::ostream* const log_;
  std::map<std::string, OpTime> op_times_;
  int64_t traced_steps_ = 0;
};

// A one-line progress bar redrawn in place ("\r"), for a terminal:
//   [===========>          ] 550/1000 steps  loss 0.412  18.3 steps/s
class ProgressBarHook : public SessionRunHook {
 public:
  // `last_step`: the global step training ends at.
  ProgressBarHook(int64_t last_step, std::ostream* out) : last_step_(last_step), out_(out) {}
  // Ends where `stop` stops, read when the session starts (so `stop` comes
  // before this hook in the list).
  ProgressBarHook(std::shared_ptr<const StopAtStepHook> stop, std::ostream* out)
      : stop_(std::move(stop)), out_(out) {}
  absl::Status AfterCreateSession(const ClientSession& session, int64_t global_step) override;
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override;
  absl::Status End(const ClientSession& session, int64_t global_step) override;

 private:
  void Draw(const StepResult& step);

  int64_t last_step_ = 0;
  std::shared_ptr<const StopAtStepHook> stop_;
  std::ostream* const out_;
  std::optional<StepResult> last_;
  int64_t first_step_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// The tutorial's "%Y-%m-%d %H:%M:%E3S" local time stamp of now.
std::string LogTimestamp();

// What erases a progress bar's line before a log line ("\r\033[K"), or "".
const char* ClearLine(bool clear);

}  // namespace towerflow

#endif  // TOWERFLOW_TRAINING_HOOKS_H_
