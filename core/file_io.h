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
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

// Refuses files larger than this: protobuf messages cannot exceed 2 GiB.
inline constexpr int64_t kMaxReadFileBytes = int64_t{2} << 30;

// Opens `path` for reading when it is a regular file; the caller owns (and
// closes) the descriptor. FailedPrecondition for a directory, a FIFO, a
// device or a socket — found before anything can block on them or read
// without end — and ErrnoStatus's codes otherwise; messages name the path.
absl::StatusOr<int> OpenRegularFile(const std::string& path);

// OpenRegularFile as a stdio stream for reading; the caller fcloses it.
absl::StatusOr<std::FILE*> OpenRegularFileStream(const std::string& path);

// The contents of the regular file `path` (OpenRegularFile's errors),
// ResourceExhausted past `max_bytes` (at most kMaxReadFileBytes), found
// before anything is read, Internal for other I/O errors; the message names
// the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             int64_t max_bytes = kMaxReadFileBytes);

// "<what> '<path>': <strerror(err)>" as NotFound (ENOENT), PermissionDenied
// (EACCES, EPERM), ResourceExhausted (ENOSPC) or Internal.
absl::Status ErrnoStatus(int err, const std::string& what, const std::string& path);

// Creates `dir` and its missing parents (nothing when it exists).
// Internal naming the directory on failure.
absl::Status CreateDirectories(const std::string& dir);

// fsyncs directory `dir`, making renames into it durable. Internal naming
// it on failure.
absl::Status SyncDirectory(const std::string& dir);

// See the file comment. Errors name the path.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// Removes `path` when it is an AtomicFileWriter's temporary file that no
// live writer holds (a killed process's: its flock died with it); returns
// whether it did. A file being written, or one that cannot be locked, stays.
bool RemoveAbandonedTempFile(const std::string& path);

// WriteFileAtomically for contents written piece by piece (a checkpoint's
// data file): appends go to a temporary file beside `path`, and Commit
// fsyncs it, renames it over `path` and fsyncs the directory. Destroyed
// uncommitted, it deletes the temporary file, so a failed save leaves
// nothing behind.
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> out, AtomicFileWriter::Open(path));
//   TW_RETURN_IF_ERROR(out->Append(bytes));
//   TW_RETURN_IF_ERROR(out->Commit());
//
// The temporary file is "<path>.tmp.XXXXXX", held under an exclusive
// flock until it is renamed or removed, so RemoveAbandonedTempFile can tell
// one a killed process left from one being written.
//
// Thread-compatible.
class AtomicFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view data);
  // Bytes appended so far.
  int64_t size() const { return size_; }
  // After Commit (successful or not) the writer takes no more appends.
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}

  std::string path_;
  std::string tmp_;
  int fd_;
  int64_t size_ = 0;
  bool done_ = false;
};

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_FILE_IO_H_
