#include "runtime/step_stats.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"

namespace towerflow {
namespace {

// JSON string escaping for node and device names.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, "\\u00", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

void StepStatsCollector::Record(const std::string& device, NodeExecStats stats) {
  absl::MutexLock lock(&mu_);
  by_device_[device].push_back(std::move(stats));
}

StepStats StepStatsCollector::Finalize() {
  absl::MutexLock lock(&mu_);
  StepStats out;
  for (auto& [device, nodes] : by_device_) {
    out.dev_stats.push_back(DeviceStepStats{device, std::move(nodes)});
  }
  by_device_.clear();
  return out;
}

uint32_t CurrentThreadNumber() {
  static std::atomic<uint32_t> next{0};
  thread_local const uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

std::string ChromeTraceJson(const StepStats& stats) {
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  const auto sep = [&] {
    if (!first) out += ",";
    first = false;
  };
  for (size_t pid = 0; pid < stats.dev_stats.size(); ++pid) {
    const DeviceStepStats& dev = stats.dev_stats[pid];
    sep();
    absl::StrAppend(&out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":", pid,
                    ",\"args\":{\"name\":", JsonString(dev.device), "}}");
    for (const NodeExecStats& n : dev.node_stats) {
      sep();
      absl::StrAppend(&out, "{\"name\":", JsonString(n.node_name), ",\"cat\":\"Op\",\"ph\":\"X\"",
                      ",\"pid\":", pid, ",\"tid\":", n.thread_id, ",\"ts\":", n.start_micros,
                      ",\"dur\":", n.end_micros - n.start_micros,
                      ",\"args\":{\"name\":", JsonString(n.node_name), ",\"op\":", JsonString(n.op),
                      "}}");
    }
  }
  out += "]}\n";
  return out;
}

absl::Status WriteChromeTrace(const StepStats& stats, const std::string& path) {
  return WriteFileAtomically(path, ChromeTraceJson(stats));
}

}  // namespace towerflow
