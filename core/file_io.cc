#include "core/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {

absl::Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  const std::string msg = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

namespace {

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "Cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> OpenRegularFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer would wait for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus(errno, "Cannot open", path);
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "Cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is a directory"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is not a regular file (a FIFO, a device or a socket)"));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return ErrnoStatus(errno, "Cannot set up", path);
  }
  return closer.release();
}

absl::StatusOr<std::FILE*> OpenRegularFileStream(const std::string& path) {
  TW_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "Cannot open", path);
  }
  return file;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, int64_t max_bytes) {
  max_bytes = std::min(max_bytes, kMaxReadFileBytes);
  TW_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "Cannot stat", path);
  if (st.st_size > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("'", path, "' has ", st.st_size, " bytes, more than the ", max_bytes,
                     max_bytes == kMaxReadFileBytes ? " Towerflow reads" : " its reader may hold"));
  }
  std::string contents;
  contents.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "Cannot read", path);
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(contents.size()) > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("'", path, "' grew past ", max_bytes, " bytes while reading"));
    }
  }
  return contents;
}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(const std::string& path) {
  std::string tmp = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return ErrnoStatus(errno, "Cannot create a temporary file for", path);
  // Held until the file is renamed or removed: RemoveAbandonedTempFile
  // leaves it alone. (A file system without flock only loses that.)
  ::flock(fd, LOCK_EX | LOCK_NB);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(tmp), fd));
}

bool RemoveAbandonedTempFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return false;
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  // A writer locks its file from creation to rename: a lock taken here
  // means none holds it.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
  return ::unlink(path.c_str()) == 0;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!done_) ::unlink(tmp_.c_str());
}

absl::Status AtomicFileWriter::Append(absl::string_view data) {
  if (done_) return absl::FailedPreconditionError(absl::StrCat(path_, " is already committed"));
  absl::Status status = WriteAll(fd_, data, tmp_);
  if (status.ok()) size_ += static_cast<int64_t>(data.size());
  return status;
}

absl::Status AtomicFileWriter::Commit() {
  if (done_) return absl::FailedPreconditionError(absl::StrCat(path_, " is already committed"));
  done_ = true;
  absl::Status status;
  if (::fchmod(fd_, 0644) != 0) status = ErrnoStatus(errno, "Cannot chmod", tmp_);
  if (status.ok() && ::fsync(fd_) != 0) status = ErrnoStatus(errno, "Cannot fsync", tmp_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus(errno, "Cannot close", tmp_);
  if (status.ok() && ::rename(tmp_.c_str(), path_.c_str()) != 0) {
    status = ErrnoStatus(errno, "Cannot rename a temporary file to", path_);
  }
  if (!status.ok()) {
    ::unlink(tmp_.c_str());
    return status;
  }
  // Make the rename itself durable.
  const size_t slash = path_.rfind('/');
  return SyncDirectory(slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash));
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "Cannot open directory", dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(err, "Cannot fsync directory", dir);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> out = AtomicFileWriter::Open(path);
  if (!out.ok()) return out.status();
  absl::Status status = (*out)->Append(contents);
  if (!status.ok()) return status;
  return (*out)->Commit();
}

absl::Status CreateDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("Cannot create directory ", dir, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace towerflow
