// Whole-file reads and crash-safe writes.
//
//   TW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
//   TW_RETURN_IF_ERROR(WriteFileAtomically(path, bytes));
//
// WriteFileAtomically writes a temporary file beside `path`, fsyncs it,
// renames it over `path` and fsyncs the directory, so a crash leaves either
// the old file or the new one, never a torn mix.
//
// Thread-safe (no shared state); concurrent writers of one path race as
// rename(2) does: one of them wins whole.
#ifndef TOWERFLOW_CORE_FILE_IO_H_
#define TOWERFLOW_CORE_FILE_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

// Refuses files larger than this: protobuf messages cannot exceed 2 GiB.
inline constexpr int64_t kMaxReadFileBytes = int64_t{2} << 30;

// NotFound when `path` does not exist, PermissionDenied, FailedPrecondition
// for a directory, ResourceExhausted past kMaxReadFileBytes, Internal for
// other I/O errors; the message names the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// "<what> '<path>': <strerror(err)>" as NotFound (ENOENT), PermissionDenied
// (EACCES, EPERM), ResourceExhausted (ENOSPC) or Internal.
absl::Status ErrnoStatus(int err, const std::string& what, const std::string& path);

// Creates `dir` and its missing parents (nothing when it exists).
// Internal naming the directory on failure.
absl::Status CreateDirectories(const std::string& dir);

// See the file comment. Errors name the path.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_FILE_IO_H_
