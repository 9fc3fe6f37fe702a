// The file ops of input pipelines and exporters: ReadFile (tf.io.read_file,
// before DecodeJpeg in image pipelines), WriteFile (tf.io.write_file: its
// missing directories made, the file replaced atomically) and
// MatchingFiles (tf.io.matching_files: each pattern's matches, all of them
// sorted; `*`, `?` and `[...]` within one path component, a leading dot
// matched too, as TF's glob). TF's messages ("<path>; No such file or
// directory") and codes.
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// TF's error for errno `err` on `path`: "<path>; <strerror>", its code by
// TF's errno table.
absl::Status FileError(int err, const std::string& path) {
  const std::string message = absl::StrCat(path, "; ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENAMETOOLONG:
    case EINVAL:
      return absl::InvalidArgumentError(message);
    case ENOSPC:
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(message);
    default:  // ENOTDIR, EISDIR, ELOOP, ...: the file system is not as asked
      return absl::FailedPreconditionError(message);
  }
}

absl::StatusOr<std::string> ScalarFilename(const Tensor& t) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input filename tensor must be scalar, but had shape: ", t.shape().DebugString()));
  }
  return *t.data<std::string>();
}

class ReadFileOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string path, ScalarFilename(ctx->input(0)));
    struct stat info;
    if (::stat(path.c_str(), &info) != 0) return FileError(errno, path);
    if (S_ISDIR(info.st_mode)) return FileError(EISDIR, path);
    // A FIFO or device is refused before it could block; a file past 2 GiB
    // too (a string tensor holds less).
    TW_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<std::string>() = std::move(contents);
    return absl::OkStatus();
  }
};

class WriteFileOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string path, ScalarFilename(ctx->input(0)));
    const Tensor& contents = ctx->input(1);
    if (contents.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Contents tensor must be scalar, but had shape: ", contents.shape().DebugString()));
    }
    struct stat info;
    if (::stat(path.c_str(), &info) == 0) {
      if (S_ISDIR(info.st_mode)) return FileError(EISDIR, path);
    } else if (errno != ENOENT) {
      return FileError(errno, path);  // a file where a directory should be
    }
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      TW_RETURN_IF_ERROR(CreateDirectories(path.substr(0, slash)));
    }
    return WriteFileAtomically(path, *contents.data<std::string>());
  }
};

// Whether the last component of `pattern` has a wildcard.
bool LastComponentIsPattern(absl::string_view pattern) {
  const size_t slash = pattern.rfind('/');
  const absl::string_view last =
      slash == absl::string_view::npos ? pattern : pattern.substr(slash + 1);
  return last.find_first_of("*?[") != absl::string_view::npos;
}

class MatchingFilesOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& patterns = ctx->input(0);
    if (patterns.dims() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input patterns tensor must be scalar or vector, but had shape: ",
                       patterns.shape().DebugString()));
    }
    std::vector<std::string> names;
    for (int64_t i = 0; i < patterns.NumElements(); ++i) {
      TW_RETURN_IF_ERROR(Match(patterns.data<std::string>()[i], &names));
    }
    std::sort(names.begin(), names.end());
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({static_cast<int64_t>(names.size())})));
    std::move(names.begin(), names.end(), out->data<std::string>());
    return absl::OkStatus();
  }

 private:
  static absl::Status Match(const std::string& pattern, std::vector<std::string>* names) {
    if (pattern.empty()) return absl::OkStatus();
    glob_t found;
    const int rc = ::glob(pattern.c_str(), GLOB_PERIOD | GLOB_NOSORT, nullptr, &found);
    if (rc == GLOB_NOSPACE) {
      ::globfree(&found);
      return absl::ResourceExhaustedError(
          absl::StrCat("Out of memory matching the pattern ", pattern));
    }
    // A directory that cannot be read matches nothing, as in TF.
    const bool any = rc == 0;
    const bool wild = LastComponentIsPattern(pattern);
    for (size_t i = 0; any && i < found.gl_pathc; ++i) {
      const absl::string_view name = found.gl_pathv[i];
      const size_t slash = name.rfind('/');
      const absl::string_view base =
          slash == absl::string_view::npos ? name : name.substr(slash + 1);
      // GLOB_PERIOD lets `*` meet "." and ".."; TF's glob lists neither.
      if (wild && (base == "." || base == "..")) continue;
      names->emplace_back(name);
    }
    ::globfree(&found);
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(file_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("ReadFile"), MakeFactory<ReadFileOp>());
  RegisterKernel(cpu("WriteFile"), MakeFactory<WriteFileOp>());
  RegisterKernel(cpu("MatchingFiles"), MakeFactory<MatchingFilesOp>());
}

}  // namespace
}  // namespace towerflow
