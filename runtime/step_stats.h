// Step statistics: when and where each node ran, and a Chrome trace of it.
//
// Session::Run with RunOptions::trace_level = kFullTrace fills
// RunMetadata::step_stats: one NodeExecStats per node run, grouped by device.
// WriteChromeTrace turns them into the JSON that chrome://tracing and
// Perfetto open (one row per device and thread).
//
// StepStatsCollector is thread-safe; the structs are plain values.
#ifndef TOWERFLOW_RUNTIME_STEP_STATS_H_
#define TOWERFLOW_RUNTIME_STEP_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace towerflow {

struct NodeExecStats {
  std::string node_name;
  std::string op;
  int64_t start_micros = 0;  // since the Unix epoch
  int64_t end_micros = 0;
  uint32_t thread_id = 0;  // a small per-process number for the running thread
};

struct DeviceStepStats {
  std::string device;
  std::vector<NodeExecStats> node_stats;
};

struct StepStats {
  std::vector<DeviceStepStats> dev_stats;  // sorted by device name
};

class StepStatsCollector {
 public:
  void Record(const std::string& device, NodeExecStats stats);
  // The collected stats; the collector is left empty.
  StepStats Finalize();

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<NodeExecStats>> by_device_ ABSL_GUARDED_BY(mu_);
};

// A small stable number for the calling thread (for traces).
uint32_t CurrentThreadNumber();

// The Chrome trace-event JSON ("traceEvents" of complete "X" events; one
// process per device, one track per thread).
std::string ChromeTraceJson(const StepStats& stats);
// Writes ChromeTraceJson atomically to `path`.
absl::Status WriteChromeTrace(const StepStats& stats, const std::string& path);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_STEP_STATS_H_
