#include "train/session_manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace train {

absl::StatusOr<ReadyOp> ReportUninitializedVariables(const Scope& scope) {
  const std::vector<Variable> variables = GetVariables(*scope.graph());
  if (variables.empty()) {
    return absl::FailedPreconditionError(
        "ReportUninitializedVariables: the graph has no variables");
  }
  const Scope s = scope.NewSubScope("report_uninitialized_variables");
  ReadyOp ready;
  std::vector<Output> flags;
  for (const Variable& v : variables) {
    // Asked where the variable lives, whatever the scope's device function says.
    flags.push_back(ops::VarIsInitializedOp(s.ColocateWith(v.handle()), v.handle()));
    ready.names.push_back(v.name());
  }
  const Output all = ops::Pack(s, flags);
  TW_RETURN_IF_ERROR(s.status());
  ready.is_initialized = all.name();
  return ready;
}

absl::StatusOr<std::vector<std::string>> UninitializedVariables(Session* session,
                                                                const ReadyOp& ready) {
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session->Run({}, {ready.is_initialized}, {}, &out));
  if (out[0].dtype() != DT_BOOL ||
      out[0].NumElements() != static_cast<int64_t>(ready.names.size())) {
    return absl::InternalError(
        absl::StrCat("ready op ", ready.is_initialized, " returned ", out[0].DebugString()));
  }
  std::vector<std::string> missing;
  const auto flags = out[0].flat<bool>();
  for (size_t i = 0; i < ready.names.size(); ++i) {
    if (!flags(i)) missing.push_back(ready.names[i]);
  }
  return missing;
}

absl::Status WaitForVariables(Session* session, const ReadyOp& ready, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration pause = absl::Milliseconds(10);
  while (true) {
    TW_ASSIGN_OR_RETURN(const std::vector<std::string> missing,
                        UninitializedVariables(session, ready));
    if (missing.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "The variables are still not initialized after ", absl::FormatDuration(timeout),
          " (is the chief running?): ", absl::StrJoin(missing, ", ")));
    }
    absl::SleepFor(std::min(pause, deadline - absl::Now()));
    pause = std::min(pause * 2, absl::Seconds(1));
  }
}

}  // namespace train
}  // namespace towerflow
