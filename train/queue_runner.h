// Threads that keep a queue filled: TF 1's tf.train.QueueRunner, and the
// runners a MetaGraphDef's "queue_runners" collection describes (TF 1 input
// pipelines: string_input_producer, tf.train.batch, shuffle_batch).
//
//   TW_ASSIGN_OR_RETURN(auto runners, train::QueueRunnersFromMetaGraph(session, meta));
//   for (auto& r : runners) r->Start();
//   ... session->Run(...) dequeues what the runners enqueue ...
//   for (auto& r : runners) r->RequestStop();
//   for (auto& r : runners) TW_RETURN_IF_ERROR(r->Join());
//
// As TF's: one thread per enqueue op, each running its op over and over.
// A thread that meets a closed queue (OutOfRange, or the codes the
// QueueRunnerDef lists) ends quietly, and the last of them to end runs the
// close op, so the queue's consumers see the end of the data. A thread that
// fails otherwise keeps the error (Join returns the first) and runs the
// cancel op, so no consumer waits forever for elements that will not come.
// RequestStop ends the threads after their current run and runs the cancel
// op, which ends the runs waiting in an enqueue. Errors after a stop was
// requested, and runs ended by Session::Close, are not errors.
//
// RequestStop and runs() may be called from any thread; Start and Join from
// the owner's. Join (or the destructor) before the session goes away.
#ifndef TOWERFLOW_TRAIN_QUEUE_RUNNER_H_
#define TOWERFLOW_TRAIN_QUEUE_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/meta_graph.pb.h"
#include "proto/queue_runner.pb.h"
#include "runtime/session.h"

namespace towerflow {
namespace train {

class QueueRunner {
 public:
  // The runner a QueueRunnerDef describes. InvalidArgument when it names no
  // enqueue op, or a queue_closed_exception_types entry is no status code.
  static absl::StatusOr<std::unique_ptr<QueueRunner>> FromProto(Session* session,
                                                                const QueueRunnerDef& def);
  // Runs each of `targets` over and over, in a thread of its own, with no
  // close or cancel op (the chief's sync loop of SyncReplicasOptimizer).
  QueueRunner(Session* session, std::vector<std::string> targets);
  // RequestStop, then Join.
  ~QueueRunner();
  QueueRunner(const QueueRunner&) = delete;
  QueueRunner& operator=(const QueueRunner&) = delete;

  // Starts the threads; once.
  void Start();
  // Ends the threads after their current run, and runs the cancel op (once).
  void RequestStop();
  // Waits for the threads: the first error that was not a closed queue, a
  // stop or a closed session, or OK. The error names the op whose run failed.
  absl::Status Join();
  // The runs that completed, over all threads.
  int64_t runs() const;
  const std::string& queue_name() const { return queue_name_; }

 private:
  QueueRunner(Session* session, std::string queue_name, std::vector<std::string> targets,
              std::string close_op, std::string cancel_op,
              std::vector<absl::StatusCode> queue_closed_codes);
  void Loop(const std::string& target);
  // Runs `op` (the close or the cancel op) when set; its error is ignored, as
  // TF's runner ignores it (the queue may be closed already).
  void RunQuietly(const std::string& op);
  bool EndsQuietly(const absl::Status& s) const;
  // True the first time: the caller runs the cancel op (once per runner).
  bool ClaimCancel() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Session* const session_;
  const std::string queue_name_;
  const std::vector<std::string> targets_;
  const std::string close_op_;
  const std::string cancel_op_;
  const std::vector<absl::StatusCode> queue_closed_codes_;
  std::vector<std::thread> threads_;

  mutable absl::Mutex mu_;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// The runners of `meta_graph`'s "queue_runners" collection (TF's
// GraphKeys.QUEUE_RUNNERS: serialized QueueRunnerDefs in a bytes_list), not
// started; none when there is no such collection. InvalidArgument naming
// the collection and the entry when it is not a bytes_list, an entry does
// not parse, or an entry names an op that the meta graph's GraphDef lacks.
absl::StatusOr<std::vector<std::unique_ptr<QueueRunner>>> QueueRunnersFromMetaGraph(
    Session* session, const MetaGraphDef& meta_graph);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_QUEUE_RUNNER_H_
