#include "distribute/cluster_spec.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"

namespace towerflow {
namespace distribute {
namespace {

constexpr int kMaxTasksPerJob = 1 << 16;

// A job name as TF accepts it: a letter, then letters, digits and '_'.
absl::Status CheckJobName(absl::string_view job) {
  bool ok = !job.empty() && std::isalpha(static_cast<unsigned char>(job[0]));
  for (char c : job) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("bad job name '", job, "'"));
  return absl::OkStatus();
}

// The small JSON subset of a ClusterSpec: an object of string arrays.
class JsonReader {
 public:
  explicit JsonReader(absl::string_view text) : s_(text) {}

  absl::StatusOr<std::vector<std::pair<std::string, std::vector<std::string>>>> ReadSpec() {
    std::vector<std::pair<std::string, std::vector<std::string>>> jobs;
    TW_RETURN_IF_ERROR(Expect('{'));
    if (Peek() == '}') return Error("no jobs");
    while (true) {
      TW_ASSIGN_OR_RETURN(std::string job, ReadString());
      TW_RETURN_IF_ERROR(Expect(':'));
      TW_RETURN_IF_ERROR(Expect('['));
      std::vector<std::string> tasks;
      if (Peek() != ']') {
        while (true) {
          TW_ASSIGN_OR_RETURN(std::string address, ReadString());
          tasks.push_back(std::move(address));
          if (Peek() != ',') break;
          ++pos_;
        }
      }
      TW_RETURN_IF_ERROR(Expect(']'));
      jobs.emplace_back(std::move(job), std::move(tasks));
      if (Peek() != ',') break;
      ++pos_;
    }
    TW_RETURN_IF_ERROR(Expect('}'));
    if (Peek() != '\0') return Error("text after the object");
    return jobs;
  }

 private:
  char Peek() {
    while (pos_ < s_.size() && absl::ascii_isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  absl::Status Expect(char c) {
    if (Peek() != c) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ReadString() {
    TW_RETURN_IF_ERROR(Expect('"'));
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') return Error("escapes are not supported");
      out.push_back(s_[pos_++]);
    }
    if (pos_ == s_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("ClusterSpec JSON: ", what, " at offset ", pos_, " of '", s_, "'"));
  }

  absl::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string TaskId::name() const { return absl::StrCat("/job:", job, "/replica:0/task:", task); }

absl::StatusOr<ClusterSpec> ClusterSpec::Parse(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::vector<std::pair<std::string, std::vector<std::string>>> jobs;
  if (absl::StartsWith(text, "{")) {
    TW_ASSIGN_OR_RETURN(jobs, JsonReader(text).ReadSpec());
  } else {
    for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, '=');
      int count = 0;
      if (!absl::SimpleAtoi(kv.second, &count) || count < 0 || count > kMaxTasksPerJob) {
        return absl::InvalidArgumentError(
            absl::StrCat("ClusterSpec '", text, "': '", part, "' is not job=<number of tasks>"));
      }
      jobs.emplace_back(std::string(absl::StripAsciiWhitespace(kv.first)),
                        std::vector<std::string>(count));
    }
  }
  ClusterSpec spec;
  for (auto& [job, tasks] : jobs) {
    TW_RETURN_IF_ERROR(
        AddErrorContext(CheckJobName(job), absl::StrCat("ClusterSpec '", text, "'")));
    if (tasks.empty() || tasks.size() > kMaxTasksPerJob) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClusterSpec '", text, "': job '", job, "' has ", tasks.size(), " tasks"));
    }
    if (spec.num_tasks(job) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClusterSpec '", text, "': job '", job, "' is given twice"));
    }
    spec.jobs_.emplace_back(std::move(job), std::move(tasks));
  }
  if (spec.jobs_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("ClusterSpec '", text, "' has no jobs"));
  }
  return spec;
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromCounts(
    const std::vector<std::pair<std::string, int>>& jobs) {
  std::vector<std::string> parts;
  for (const auto& [job, count] : jobs) parts.push_back(absl::StrCat(job, "=", count));
  return Parse(absl::StrJoin(parts, ","));
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  for (const auto& [job, tasks] : jobs_) out.push_back(job);
  return out;
}

int ClusterSpec::num_tasks(const std::string& job) const {
  for (const auto& [name, tasks] : jobs_) {
    if (name == job) return static_cast<int>(tasks.size());
  }
  return 0;
}

int ClusterSpec::num_tasks() const {
  int n = 0;
  for (const auto& [job, tasks] : jobs_) n += static_cast<int>(tasks.size());
  return n;
}

const std::vector<std::string>& ClusterSpec::addresses(const std::string& job) const {
  static const std::vector<std::string>* const kNone = new std::vector<std::string>();
  for (const auto& [name, tasks] : jobs_) {
    if (name == job) return tasks;
  }
  return *kNone;
}

absl::StatusOr<TaskId> ClusterSpec::TaskOfRank(int rank) const {
  int first = 0;
  for (const auto& [job, tasks] : jobs_) {
    if (rank >= first && rank < first + static_cast<int>(tasks.size())) {
      return TaskId{job, rank - first};
    }
    first += static_cast<int>(tasks.size());
  }
  return absl::InvalidArgumentError(absl::StrCat("process ", rank, " has no task in ClusterSpec ",
                                                 DebugString(), " (", first, " tasks)"));
}

int ClusterSpec::RankOf(const TaskId& task) const {
  int first = 0;
  for (const auto& [job, tasks] : jobs_) {
    if (job == task.job) {
      return task.task >= 0 && task.task < static_cast<int>(tasks.size()) ? first + task.task : -1;
    }
    first += static_cast<int>(tasks.size());
  }
  return -1;
}

std::string ClusterSpec::DebugString() const {
  std::vector<std::string> parts;
  for (const auto& [job, tasks] : jobs_) parts.push_back(absl::StrCat(job, "=", tasks.size()));
  return absl::StrJoin(parts, ",");
}

}  // namespace distribute
}  // namespace towerflow
