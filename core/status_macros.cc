#include "core/status_macros.h"

#include "absl/strings/str_cat.h"

namespace towerflow {

absl::Status AddErrorContext(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace towerflow
