// ClientSession: runs the graph of a Scope, TensorFlow C++ style.
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root, DT_FLOAT);
//   auto y = ops::Mul(root, x, 2.0f);
//   ClientSession session(root);
//   std::vector<Tensor> out;
//   TW_RETURN_IF_ERROR(session.Run({{x, {1.0f, 2.0f}}}, {y}, &out));   // [2, 4]
//
// Each Run first sends the session the nodes added to the scope's graph since
// the last Run (Session::Extend), so a graph may keep growing between runs;
// a Run over a graph that has not grown does not export it again.
// A scope whose status is not OK makes every Run return that status.
//
// Thread-safe like Session; the scope's graph must not be modified while a
// Run is in progress, and must outlive the ClientSession.
#ifndef TOWERFLOW_RUNTIME_CLIENT_SESSION_H_
#define TOWERFLOW_RUNTIME_CLIENT_SESSION_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "runtime/session.h"

namespace towerflow {

class ClientSession {
 public:
  // A fed value: a Tensor, or a literal (converted to the fed output's
  // dtype: `{1, 2}` feeds a float placeholder as [1.0, 2.0]).
  class FeedValue {
   public:
    // NOLINTNEXTLINE(google-explicit-constructor)
    FeedValue(Tensor tensor) : tensor_(std::move(tensor)), is_tensor_(true) {}
    template <typename T,
              typename = std::enable_if_t<std::is_constructible_v<Input::Initializer, T&&> &&
                                          !std::is_same_v<std::decay_t<T>, Tensor>>>
    // NOLINTNEXTLINE(google-explicit-constructor)
    FeedValue(T&& literal) : literal_(std::forward<T>(literal)) {}
    FeedValue(std::initializer_list<Input::Initializer> literal) : literal_(literal) {}

    // The Tensor to feed for `output`.
    absl::StatusOr<Tensor> ToTensor(const Output& output) const;

   private:
    Tensor tensor_;
    Input::Initializer literal_ = Input::Initializer(0);
    bool is_tensor_ = false;
  };
  using FeedType = absl::flat_hash_map<Output, FeedValue>;

  // A session over `scope`'s graph. Errors making the session (bad options)
  // are returned by every Run.
  explicit ClientSession(const Scope& scope, const SessionOptions& options = SessionOptions());
  // Over a session made elsewhere, such as a cluster's
  // (distribute::Server::NewSession), which must have no graph yet.
  ClientSession(const Scope& scope, std::unique_ptr<Session> session);

  absl::Status Run(const std::vector<Output>& fetch_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   std::vector<Tensor>* outputs) const;
  absl::Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs) const;
  absl::Status Run(const RunOptions& run_options, const FeedType& inputs,
                   const std::vector<Output>& fetch_outputs,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) const;

  // Sends the session the nodes added to the graph since the last Run, as
  // every Run does first: for code that then runs session() by node names
  // (train::WaitForVariables).
  absl::Status ExtendGraph() const { return MaybeExtendGraph(); }

  // The underlying session (null when it could not be made).
  Session* session() const { return session_.get(); }

 private:
  // Sends the nodes and library functions the session has not seen yet.
  absl::Status MaybeExtendGraph() const;

  const Scope scope_;
  absl::Status init_status_;
  std::unique_ptr<Session> session_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_set<std::string> sent_ ABSL_GUARDED_BY(mu_);
  // Names of the library functions sent.
  mutable absl::flat_hash_set<std::string> sent_functions_ ABSL_GUARDED_BY(mu_);
  // The graph's num_node_ids() when its nodes were last sent.
  mutable int sent_node_ids_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_CLIENT_SESSION_H_
