#include "saved_model/builder.h"

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "proto/saved_model.pb.h"

namespace towerflow {
namespace {

// Removes a temporary export directory unless released.
class TempDir {
 public:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  void Release() { path_.clear(); }

 private:
  std::string path_;
};

// Writes the SavedModel's files into the new directory `tmp` and syncs them.
absl::Status WriteContents(
    const std::string& tmp, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets) {
  if (meta.meta_info_def().tags_size() == 0) {
    return absl::InvalidArgumentError("WriteSavedModel: the MetaGraphDef has no tags");
  }
  TW_RETURN_IF_ERROR(CreateDirectories(tmp + "/variables"));
  TW_RETURN_IF_ERROR(write_variables(tmp + "/variables/variables"));
  if (!assets.files.empty()) {
    TW_RETURN_IF_ERROR(CreateDirectories(tmp + "/assets"));
    for (const auto& [name, source] : assets.files) {
      TW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(source));
      TW_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(tmp, "/assets/", name), bytes));
    }
  }
  if (!assets.extra.empty()) {
    TW_RETURN_IF_ERROR(CreateDirectories(tmp + "/assets.extra"));
    for (const auto& [name, contents] : assets.extra) {
      TW_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(tmp, "/assets.extra/", name), contents));
    }
  }
  SavedModel model;
  model.set_saved_model_schema_version(1);
  *model.add_meta_graphs() = meta;
  TW_RETURN_IF_ERROR(WriteFileAtomically(tmp + "/saved_model.pb", SerializeDeterministic(model)));
  return SyncDirectory(tmp + "/variables");
}

// Renames the written `tmp` to `final_dir` and syncs their parent.
absl::Status MoveIntoPlace(const std::string& tmp, const std::string& final_dir) {
  std::error_code ec;
  std::filesystem::rename(tmp, final_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("Cannot rename ", tmp, " to ", final_dir, ": ", ec.message()));
  }
  const std::string parent = std::filesystem::path(final_dir).parent_path().string();
  return SyncDirectory(parent.empty() ? "." : parent);
}

}  // namespace

absl::StatusOr<std::string> WriteSavedModel(
    const std::string& export_base, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets) {
  TW_RETURN_IF_ERROR(CreateDirectories(export_base));
  int64_t stamp = static_cast<int64_t>(std::time(nullptr));
  std::error_code ec;
  while (std::filesystem::exists(absl::StrCat(export_base, "/", stamp), ec) ||
         std::filesystem::exists(absl::StrCat(export_base, "/temp-", stamp), ec)) {
    ++stamp;
  }
  const std::string final_dir = absl::StrCat(export_base, "/", stamp);
  const std::string tmp = absl::StrCat(export_base, "/temp-", stamp);
  TempDir cleanup(tmp);
  TW_RETURN_IF_ERROR(WriteContents(tmp, meta, write_variables, assets));
  TW_RETURN_IF_ERROR(MoveIntoPlace(tmp, final_dir));
  cleanup.Release();
  return final_dir;
}

absl::Status WriteSavedModelTo(
    const std::string& export_dir, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets) {
  std::string dir = export_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) return absl::InvalidArgumentError("WriteSavedModelTo: empty export directory");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("Export directory already exists, and isn't empty: ", dir));
  }
  const std::string parent = std::filesystem::path(dir).parent_path().string();
  if (!parent.empty()) TW_RETURN_IF_ERROR(CreateDirectories(parent));
  static std::atomic<int64_t> counter{0};
  const std::string tmp = absl::StrCat(dir, ".tmp-", getpid(), "-", counter++);
  TempDir cleanup(tmp);
  TW_RETURN_IF_ERROR(WriteContents(tmp, meta, write_variables, assets));
  TW_RETURN_IF_ERROR(MoveIntoPlace(tmp, dir));
  cleanup.Release();
  return absl::OkStatus();
}

}  // namespace towerflow
