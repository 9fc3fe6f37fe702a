#include "framework/gpu/nccl_status.h"

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace gpu {

absl::Status NcclStatus(ncclResult_t result, const char* expr, const char* file, int line) {
  if (result == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(expr, " failed at ", file, ":", line, ": ", ncclGetErrorString(result)));
}

std::optional<ncclDataType_t> NcclDataType(DataType dtype) {
  switch (dtype) {
    case DT_HALF:
      return ncclFloat16;
    case DT_FLOAT:
      return ncclFloat32;
    case DT_DOUBLE:
      return ncclFloat64;
    case DT_INT32:
      return ncclInt32;
    case DT_INT64:
      return ncclInt64;
    default:
      return std::nullopt;
  }
}

}  // namespace gpu
}  // namespace towerflow
