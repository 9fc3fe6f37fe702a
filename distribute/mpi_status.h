// MPI results as absl::Status, for the files of distribute/ that call MPI.
#ifndef TOWERFLOW_DISTRIBUTE_MPI_STATUS_H_
#define TOWERFLOW_DISTRIBUTE_MPI_STATUS_H_

#include <mpi.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace distribute {

// An MPI call's result as a Status naming the call.
inline absl::Status MpiStatus(int code, const char* call) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrCat(call, " failed: ", std::string(text, length)));
}

#define TW_MPI_RETURN_IF_ERROR(call) \
  TW_RETURN_IF_ERROR(::towerflow::distribute::MpiStatus((call), #call))

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_MPI_STATUS_H_
