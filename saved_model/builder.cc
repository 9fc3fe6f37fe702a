#include "saved_model/builder.h"

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

}  // namespace

absl::StatusOr<std::string> WriteSavedModel(
    const std::string& export_base, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets) {
  if (meta.meta_info_def().tags_size() == 0) {
    return absl::InvalidArgumentError("WriteSavedModel: the MetaGraphDef has no tags");
  }
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
  TW_RETURN_IF_ERROR(CreateDirectories(tmp + "/variables"));
  TW_RETURN_IF_ERROR(write_variables(tmp + "/variables/variables"));
  if (!assets.files.empty()) {
    TW_RETURN_IF_ERROR(CreateDirectories(tmp + "/assets"));
    for (const auto& [name, source] : assets.files) {
      TW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(source));
      TW_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(tmp, "/assets/", name), bytes));
    }
  }
  SavedModel model;
  model.set_saved_model_schema_version(1);
  *model.add_meta_graphs() = meta;
  TW_RETURN_IF_ERROR(WriteFileAtomically(tmp + "/saved_model.pb", SerializeDeterministic(model)));
  TW_RETURN_IF_ERROR(SyncDirectory(tmp + "/variables"));
  std::filesystem::rename(tmp, final_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("Cannot rename ", tmp, " to ", final_dir, ": ", ec.message()));
  }
  cleanup.Release();
  TW_RETURN_IF_ERROR(SyncDirectory(export_base));
  return final_dir;
}

}  // namespace towerflow
