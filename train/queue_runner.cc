#include "train/queue_runner.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace towerflow {
namespace train {
namespace {

// TF's GraphKeys.QUEUE_RUNNERS.
constexpr char kQueueRunners[] = "queue_runners";

}  // namespace

absl::StatusOr<std::unique_ptr<QueueRunner>> QueueRunner::FromProto(Session* session,
                                                                    const QueueRunnerDef& def) {
  if (def.enqueue_op_name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("queue runner of '", def.queue_name(), "' has no enqueue op"));
  }
  std::vector<absl::StatusCode> codes;
  for (int code : def.queue_closed_exception_types()) {
    if (code <= 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
      return absl::InvalidArgumentError(absl::StrCat("queue runner of '", def.queue_name(),
                                                     "': queue_closed_exception_types has ", code,
                                                     ", which is no error code"));
    }
    codes.push_back(static_cast<absl::StatusCode>(code));
  }
  if (codes.empty()) codes.push_back(absl::StatusCode::kOutOfRange);
  return std::unique_ptr<QueueRunner>(new QueueRunner(
      session, def.queue_name(), {def.enqueue_op_name().begin(), def.enqueue_op_name().end()},
      def.close_op_name(), def.cancel_op_name(), std::move(codes)));
}

QueueRunner::QueueRunner(Session* session, std::vector<std::string> targets)
    : QueueRunner(session, "", std::move(targets), "", "", {absl::StatusCode::kOutOfRange}) {}

QueueRunner::QueueRunner(Session* session, std::string queue_name, std::vector<std::string> targets,
                         std::string close_op, std::string cancel_op,
                         std::vector<absl::StatusCode> queue_closed_codes)
    : session_(session),
      queue_name_(std::move(queue_name)),
      targets_(std::move(targets)),
      close_op_(std::move(close_op)),
      cancel_op_(std::move(cancel_op)),
      queue_closed_codes_(std::move(queue_closed_codes)) {}

QueueRunner::~QueueRunner() {
  RequestStop();
  Join().IgnoreError();
}

void QueueRunner::Start() {
  absl::MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  running_ = static_cast<int>(targets_.size());
  for (const std::string& target : targets_) {
    threads_.emplace_back([this, &target] { Loop(target); });
  }
}

bool QueueRunner::EndsQuietly(const absl::Status& s) const {
  for (absl::StatusCode code : queue_closed_codes_) {
    if (s.code() == code) return true;
  }
  return false;
}

void QueueRunner::Loop(const std::string& target) {
  bool queue_closed = false;
  bool cancel = false;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_requested_) break;
    }
    const absl::Status s = session_->Run({}, {}, {target}, nullptr);
    absl::MutexLock lock(&mu_);
    if (s.ok()) {
      ++runs_;
      continue;
    }
    if (EndsQuietly(s)) {
      queue_closed = true;
    } else if (!stop_requested_ && !absl::IsCancelled(s) && !IsSessionClosed(s)) {
      // (Cancelled: a cancel op or Session::Close cut the run short.) A
      // failed enqueue ends the queue's supply: close it so that no consumer
      // waits for elements that will not come.
      if (error_.ok()) {
        const std::string runner =
            queue_name_.empty() ? "" : absl::StrCat("queue runner of '", queue_name_, "': ");
        error_ =
            absl::Status(s.code(), absl::StrCat(runner, "running '", target, "': ", s.message()));
      }
      cancel = ClaimCancel();
    }
    break;
  }
  if (cancel) RunQuietly(cancel_op_);
  bool last;
  {
    absl::MutexLock lock(&mu_);
    last = --running_ == 0;
  }
  // The last thread to end at a closed queue closes this runner's queue:
  // its consumers take what is left, then see the end (OutOfRange).
  if (last && queue_closed) RunQuietly(close_op_);
}

void QueueRunner::RunQuietly(const std::string& op) {
  if (!op.empty()) session_->Run({}, {}, {op}, nullptr).IgnoreError();
}

void QueueRunner::RequestStop() {
  bool cancel;
  {
    absl::MutexLock lock(&mu_);
    stop_requested_ = true;
    cancel = started_ && ClaimCancel();
  }
  if (cancel) RunQuietly(cancel_op_);
}

bool QueueRunner::ClaimCancel() {
  const bool first = !cancelled_;
  cancelled_ = true;
  return first;
}

absl::Status QueueRunner::Join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  absl::MutexLock lock(&mu_);
  return error_;
}

int64_t QueueRunner::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

absl::StatusOr<std::vector<std::unique_ptr<QueueRunner>>> QueueRunnersFromMetaGraph(
    Session* session, const MetaGraphDef& meta_graph) {
  std::vector<std::unique_ptr<QueueRunner>> runners;
  const auto it = meta_graph.collection_def().find(kQueueRunners);
  if (it == meta_graph.collection_def().end()) return runners;
  if (it->second.kind_case() != CollectionDef::kBytesList) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collection '", kQueueRunners, "' is not a bytes_list of serialized QueueRunnerDefs"));
  }
  absl::flat_hash_set<std::string> nodes;
  for (const NodeDef& node : meta_graph.graph_def().node()) nodes.insert(node.name());
  const auto& entries = it->second.bytes_list().value();
  for (int i = 0; i < entries.size(); ++i) {
    QueueRunnerDef def;
    if (!def.ParseFromString(entries[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("collection '", kQueueRunners, "' entry ", i, " is not a QueueRunnerDef"));
    }
    std::vector<std::string> ops(def.enqueue_op_name().begin(), def.enqueue_op_name().end());
    ops.push_back(def.close_op_name());
    ops.push_back(def.cancel_op_name());
    for (const std::string& op : ops) {
      if (!op.empty() && !nodes.contains(op)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "collection '", kQueueRunners, "' entry ", i, " (queue '", def.queue_name(),
            "') names op '", op, "', which the graph does not have"));
      }
    }
    absl::StatusOr<std::unique_ptr<QueueRunner>> runner = QueueRunner::FromProto(session, def);
    if (!runner.ok()) {
      return absl::Status(runner.status().code(),
                          absl::StrCat("collection '", kQueueRunners, "' entry ", i, ": ",
                                       runner.status().message()));
    }
    runners.push_back(*std::move(runner));
  }
  return runners;
}

}  // namespace train
}  // namespace towerflow
