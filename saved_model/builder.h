// Writing SavedModels (TF's SavedModelBuilder with the Estimator's
// timestamped export directories).
//
//   TW_ASSIGN_OR_RETURN(std::string dir,
//       WriteSavedModel(export_base, meta_graph_def,
//                       [&](const std::string& prefix) { return WriteCheckpoint(prefix, vars); }));
//   // dir == export_base + "/1700000000"
//
// The export is built in `<export_base>/temp-<timestamp>/`: saved_model.pb
// (one MetaGraphDef), `variables/variables.{index,data-00000-of-00001}`
// (whatever `write_variables` writes at the prefix it is given: a TF V2
// checkpoint the SaverDef restores) and `assets/` (each AssetFileDef's file
// copied in), fsynced, then renamed to `<export_base>/<timestamp>` — so a
// server watching export_base never sees a half-written model, as TF's
// export_savedmodel promises. The timestamp is the time in seconds, or the
// next free number when that directory exists already.
//
// Thread-compatible.
#ifndef TOWERFLOW_SAVED_MODEL_BUILDER_H_
#define TOWERFLOW_SAVED_MODEL_BUILDER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "proto/meta_graph.pb.h"

namespace towerflow {

struct SavedModelAssets {
  // AssetFileDef filename -> the file to copy into assets/.
  std::map<std::string, std::string> files;
  // File name -> contents, written to assets.extra/: TF's place for what
  // the graph does not read (a Keras model's config).
  std::map<std::string, std::string> extra;
};

// Returns the export directory. `meta` must have its tags; its
// asset_file_def names the files of `assets`. Errors name the directory or
// file; nothing is left in export_base on failure.
absl::StatusOr<std::string> WriteSavedModel(
    const std::string& export_base, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets = {});

// The same SavedModel in `export_dir` itself (TF's SavedModelBuilder), which
// must not exist or be an empty directory: AlreadyExists otherwise, as TF's
// "Export directory already exists, and isn't empty". Built in a sibling
// `<export_dir>.tmp-<pid>-<n>` and renamed into place.
absl::Status WriteSavedModelTo(
    const std::string& export_dir, const MetaGraphDef& meta,
    const std::function<absl::Status(const std::string& variables_prefix)>& write_variables,
    const SavedModelAssets& assets = {});

}  // namespace towerflow

#endif  // TOWERFLOW_SAVED_MODEL_BUILDER_H_
