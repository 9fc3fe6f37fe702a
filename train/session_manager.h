// Waiting for the chief: TF's SessionManager.wait_for_session.
//
// In a cluster the chief worker initializes (or restores) the variables on
// the ps tasks; the other workers must not train before it has. They build
// a ready op beside the model and wait on it:
//
//   TW_ASSIGN_OR_RETURN(train::ReadyOp ready, train::ReportUninitializedVariables(root));
//   ... session over the cluster ...
//   if (server->is_chief()) TW_RETURN_IF_ERROR(session->Run({}, {}, {"init"}, nullptr));
//   else TW_RETURN_IF_ERROR(train::WaitForVariables(session.get(), ready, absl::Minutes(5)));
#ifndef TOWERFLOW_TRAIN_SESSION_MANAGER_H_
#define TOWERFLOW_TRAIN_SESSION_MANAGER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "runtime/session.h"

namespace towerflow {
namespace train {

// Whether each global variable is initialized: the name of a bool vector,
// one element per variable (each VarIsInitializedOp runs where its variable
// lives). Names only, so it outlives the Scope that built it.
struct ReadyOp {
  std::string is_initialized;
  std::vector<std::string> names;
};

// The ready op of the global variables GetVariable has made in `scope`'s
// graph so far. FailedPrecondition when there are none.
absl::StatusOr<ReadyOp> ReportUninitializedVariables(const Scope& scope);

// The names of the variables `ready` finds uninitialized.
absl::StatusOr<std::vector<std::string>> UninitializedVariables(Session* session,
                                                                const ReadyOp& ready);

// Returns once every variable of `ready` is initialized, asking again after
// 10 ms, 20 ms, ... up to a second between tries (TF asks every 30 s).
// DeadlineExceeded naming the variables still uninitialized after `timeout`;
// a Run error at once.
absl::Status WaitForVariables(Session* session, const ReadyOp& ready, absl::Duration timeout);

}  // namespace train
}  // namespace towerflow

#endif  // TOWERFLOW_TRAIN_SESSION_MANAGER_H_
