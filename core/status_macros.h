// Status propagation macros.
//
// Debian's Abseil (20220623) has no ABSL_RETURN_IF_ERROR / ASSIGN_OR_RETURN,
// so Towerflow defines its own, once, here:
//
//   TW_RETURN_IF_ERROR(DoThing());
//   TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(path));
//
// Both evaluate their argument exactly once and return the error unchanged.
#ifndef TOWERFLOW_CORE_STATUS_MACROS_H_
#define TOWERFLOW_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TW_STATUS_CONCAT_INNER_(a, b) a##b
#define TW_STATUS_CONCAT_(a, b) TW_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define TW_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status tw_status_ = (expr);      \
    if (!tw_status_.ok()) return tw_status_; \
  } while (0)

// `lhs` is a declaration or an lvalue; `rexpr` yields an absl::StatusOr<T>.
#define TW_ASSIGN_OR_RETURN(lhs, rexpr) \
  TW_ASSIGN_OR_RETURN_IMPL_(TW_STATUS_CONCAT_(tw_statusor_, __LINE__), lhs, rexpr)

#define TW_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr)    \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

namespace towerflow {

// Returns `status` with `prefix` and ": " put before its message; OK stays OK.
absl::Status AddErrorContext(const absl::Status& status, absl::string_view prefix);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_STATUS_MACROS_H_
