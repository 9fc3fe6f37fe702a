#include "training/hooks.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "ops/gen/logging_ops.h"
#include "ops/variables.h"
#include "runtime/step_stats.h"
#include "train/meta_graph.h"

namespace towerflow {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

const char* ClearLine(bool clear) { return clear ? "\r\033[K" : ""; }

std::string LogTimestamp() {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::Now(), absl::LocalTimeZone());
}

// ------------------------------------------------------------ stop at step

absl::Status StopAtStepHook::AfterCreateSession(const ClientSession&, int64_t global_step) {
  if (num_steps_.has_value() == last_step_.has_value()) {
    return absl::InvalidArgumentError("StopAtStepHook: give exactly one of num_steps, last_step");
  }
  if (num_steps_.has_value()) last_step_ = global_step + *num_steps_;
  return absl::OkStatus();
}

absl::Status StopAtStepHook::AfterRun(const StepResult& step, const std::vector<Tensor>&,
                                      bool* request_stop) {
  if (step.global_step >= *last_step_) *request_stop = true;
  return absl::OkStatus();
}

// ------------------------------------------------------------ logging

absl::Status LoggingHook::AfterCreateSession(const ClientSession&, int64_t) {
  since_ = Clock::now();
  return absl::OkStatus();
}

absl::Status LoggingHook::AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) {
  ++steps_;
  examples_ += step.batch_size;
  if (every_n_steps_ <= 0 || step.global_step % every_n_steps_ != 0) return absl::OkStatus();
  const double elapsed = SecondsSince(since_);
  *out_ << ClearLine(clear_line_)
        << absl::StreamFormat("%s: step %d, loss = %.2f (%.1f examples/sec; %.3f sec/batch)\n",
                              LogTimestamp(), step.global_step, step.loss,
                              elapsed > 0 ? examples_ / elapsed : 0.0, elapsed / steps_)
        << std::flush;
  steps_ = examples_ = 0;
  since_ = Clock::now();
  return absl::OkStatus();
}

// ------------------------------------------------------------ step counter

absl::Status StepCounterHook::AfterCreateSession(const ClientSession&, int64_t global_step) {
  last_step_ = global_step;
  since_ = Clock::now();
  return absl::OkStatus();
}

absl::Status StepCounterHook::AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) {
  if (every_n_steps_ <= 0 || step.global_step - last_step_ < every_n_steps_) {
    return absl::OkStatus();
  }
  const double elapsed = SecondsSince(since_);
  steps_per_sec_ = elapsed > 0 ? (step.global_step - last_step_) / elapsed : 0;
  *out_ << ClearLine(clear_line_)
        << absl::StreamFormat("%s: global_step/sec: %.4g\n", LogTimestamp(), steps_per_sec_)
        << std::flush;
  last_step_ = step.global_step;
  since_ = Clock::now();
  return absl::OkStatus();
}

// ------------------------------------------------------------ NaN guard

absl::Status NanGuardHook::AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) {
  if (std::isfinite(step.loss)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Model diverged with loss = ", std::isnan(step.loss) ? "NaN" : "Inf",
                   " at global step ", step.global_step, "; no checkpoint was written for it"));
}

// ------------------------------------------------------------ checkpoints

absl::Status CheckpointSaverHook::Begin(const Scope& root) {
  root_ = root;
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::AfterCreateSession(const ClientSession& session,
                                                     int64_t global_step) {
  session_ = &session;
  // Restored from a checkpoint of this very step: nothing new to save.
  absl::StatusOr<std::string> latest = LatestCheckpoint(model_dir_);
  if (latest.ok() && absl::EndsWith(*latest, absl::StrCat("-", global_step))) {
    last_saved_step_ = global_step;
    last_saved_time_ = Clock::now();
    return absl::OkStatus();
  }
  return Save(global_step);
}

absl::Status CheckpointSaverHook::AfterRun(const StepResult& step, const std::vector<Tensor>&,
                                           bool*) {
  const bool by_steps = every_steps_ > 0 && step.global_step - last_saved_step_ >= every_steps_;
  const bool by_time = every_secs_ > 0 && SecondsSince(last_saved_time_) >= every_secs_;
  if (by_steps || by_time) return Save(step.global_step);
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::End(const ClientSession&, int64_t global_step) {
  if (global_step != last_saved_step_) return Save(global_step);
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::Save(int64_t global_step) {
  absl::StatusOr<std::string> path = saver_->Save(*session_, model_dir_, global_step);
  if (!path.ok()) return path.status();
  if (root_.has_value()) {
    // The hooks have all begun (added their ops) by the first save.
    if (meta_graph_.empty()) {
      TW_ASSIGN_OR_RETURN(const MetaGraphDef meta, train::ExportMetaGraph(*root_, saver_));
      meta_graph_ = SerializeDeterministic(meta);
    }
    TW_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(*path, ".meta"), meta_graph_));
  }
  *out_ << LogTimestamp() << ": Saving checkpoints for " << global_step << " into " << *path
        << ".\n"
        << std::flush;
  last_saved_step_ = global_step;
  last_saved_time_ = Clock::now();
  return absl::OkStatus();
}

// ------------------------------------------------------------ summaries

absl::Status SummarySaverHook::Begin(const Scope& root) {
  const std::vector<Output> summaries = GetCollection(*root.graph(), GraphKeys::kSummaries);
  if (!summaries.empty()) {
    merged_ = ops::MergeSummary(root.NewSubScope("summaries"), summaries);
  }
  TW_RETURN_IF_ERROR(root.status());
  TW_ASSIGN_OR_RETURN(graph_def_, root.ToGraphDef());
  return absl::OkStatus();
}

absl::Status SummarySaverHook::AfterCreateSession(const ClientSession&, int64_t global_step) {
  TW_ASSIGN_OR_RETURN(writer_, train::EventWriter::Open(dir_));
  TW_RETURN_IF_ERROR(writer_->WriteGraph(graph_def_));
  last_step_ = last_written_step_ = global_step;
  last_written_ = Clock::now();
  return writer_->Flush();
}

std::vector<Output> SummarySaverHook::BeforeRun() {
  // The step about to run is the one after the last (one increment a step).
  if (merged_.valid() && Due(last_step_ + 1)) return {merged_};
  return {};
}

absl::Status SummarySaverHook::AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                                        bool*) {
  last_step_ = step.global_step;
  if (!Due(step.global_step)) return absl::OkStatus();
  TW_RETURN_IF_ERROR(writer_->WriteScalar(step.global_step, "loss", step.loss));
  const double elapsed = SecondsSince(last_written_);
  if (elapsed > 0 && step.global_step > last_written_step_) {
    TW_RETURN_IF_ERROR(writer_->WriteScalar(step.global_step, "global_step/sec",
                                            (step.global_step - last_written_step_) / elapsed));
  }
  if (!values.empty()) {
    TW_RETURN_IF_ERROR(writer_->WriteSummary(step.global_step, values[0].data<std::string>()[0]));
  }
  last_written_step_ = step.global_step;
  last_written_ = Clock::now();
  return writer_->Flush();
}

absl::Status SummarySaverHook::End(const ClientSession&, int64_t) {
  return writer_ == nullptr ? absl::OkStatus() : writer_->Close();
}

// ------------------------------------------------------------ progress bar

absl::Status ProfilerHook::AfterTracedRun(const StepResult& step, const RunMetadata& metadata) {
  ++traced_steps_;
  for (const DeviceStepStats& device : metadata.step_stats.dev_stats) {
    for (const NodeExecStats& node : device.node_stats) {
      OpTime& time = op_times_[node.op];
      ++time.count;
      time.micros += std::max<int64_t>(0, node.end_micros - node.start_micros);
    }
  }
  return WriteChromeTrace(metadata.step_stats,
                          absl::StrCat(dir_, "/timeline-", step.global_step, ".json"));
}

std::string ProfilerHook::OpTimeTable() const {
  int64_t total = 0;
  std::vector<std::pair<std::string, OpTime>> rows(op_times_.begin(), op_times_.end());
  for (const auto& [op, time] : rows) total += time.micros;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.micros > b.second.micros; });
  std::string table = absl::StrFormat(
      "Time per op type over %d traced step(s) (node time summed over threads):\n"
      "%-32s %8s %12s %12s %7s\n",
      traced_steps_, "op", "count", "total ms", "ms/step", "share");
  const double steps = std::max<int64_t>(1, traced_steps_);
  for (const auto& [op, time] : rows) {
    absl::StrAppendFormat(&table, "%-32s %8d %12.3f %12.3f %6.1f%%\n", op, time.count,
                          time.micros / 1e3, time.micros / 1e3 / steps,
                          total > 0 ? 100.0 * time.micros / total : 0.0);
  }
  absl::StrAppendFormat(&table, "%-32s %8s %12.3f %12.3f %6.1f%%\n", "all", "", total / 1e3,
                        total / 1e3 / steps, total > 0 ? 100.0 : 0.0);
  return table;
}

absl::Status ProfilerHook::End(const ClientSession&, int64_t) {
  if (traced_steps_ == 0) return absl::OkStatus();
  const std::string table = OpTimeTable();
  if (log_ != nullptr) *log_ << table;
  return WriteFileAtomically(dir_ + "/op_times.txt", table);
}

absl::Status ProgressBarHook::AfterCreateSession(const ClientSession&, int64_t global_step) {
  if (stop_ != nullptr) last_step_ = stop_->last_step();
  first_step_ = global_step;
  start_ = Clock::now();
  last_draw_ = start_ - std::chrono::seconds(1);
  return absl::OkStatus();
}

absl::Status ProgressBarHook::AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) {
  last_ = step;
  // Redraw at most ten times a second, and at the last step.
  if (step.global_step < last_step_ && SecondsSince(last_draw_) < 0.1) return absl::OkStatus();
  Draw(step);
  return absl::OkStatus();
}

void ProgressBarHook::Draw(const StepResult& step) {
  last_draw_ = Clock::now();
  constexpr int kWidth = 30;
  const int64_t total = std::max<int64_t>(1, last_step_ - first_step_);
  const int64_t done = std::clamp<int64_t>(step.global_step - first_step_, 0, total);
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>';
  bar.resize(kWidth, ' ');
  const double elapsed = SecondsSince(start_);
  *out_ << ClearLine(true)
        << absl::StreamFormat("[%s] %d/%d steps  loss %.3f  %.1f steps/s", bar, step.global_step,
                              last_step_, step.loss, elapsed > 0 ? done / elapsed : 0.0)
        << std::flush;
}

absl::Status ProgressBarHook::End(const ClientSession&, int64_t) {
  if (last_.has_value()) Draw(*last_);  // where training stopped
  *out_ << "\n" << std::flush;
  return absl::OkStatus();
}

}  // namespace towerflow
