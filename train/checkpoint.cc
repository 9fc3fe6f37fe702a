#include "train/checkpoint.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "framework/tensor_bundle.h"

namespace towerflow {
namespace {

// The first bytes of the single-file format Towerflow wrote before it wrote
// TensorFlow's.
constexpr absl::string_view kOldMagic = "TWCKPT01";

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty() || absl::StartsWith(name, "/")) return name;
  return absl::EndsWith(dir, "/") ? absl::StrCat(dir, name) : absl::StrCat(dir, "/", name);
}

// `path` relative to `dir` when it lies directly in it.
std::string Relative(const std::string& dir, const std::string& path) {
  const std::string prefix = absl::EndsWith(dir, "/") ? dir : absl::StrCat(dir, "/");
  if (absl::StartsWith(path, prefix) && path.find('/', prefix.size()) == std::string::npos) {
    return path.substr(prefix.size());
  }
  return path;
}

// What killed saves leave in `dir` beside the checkpoint `name`
// ("<basename>-<step>"): temporary files of the state file and of
// checkpoints of basename that no live writer holds, and, when only the
// listed checkpoints are kept (max_to_keep), complete checkpoints of
// basename that `state` does not list.
void RemoveLeftovers(const std::string& dir, const std::string& name, const CheckpointState& state,
                     bool only_listed) {
  const size_t dash = name.rfind('-');
  const std::string basename = dash == std::string::npos ? "" : name.substr(0, dash);
  absl::flat_hash_set<std::string> listed = {Relative(dir, state.model_checkpoint_path())};
  for (const std::string& p : state.all_model_checkpoint_paths()) listed.insert(Relative(dir, p));
  std::set<std::string> unlisted;  // checkpoint names, deleted after the scan
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    const std::string path = entry.path().string();
    const bool ours = !basename.empty() && absl::StartsWith(file, basename + "-");
    if (absl::StartsWith(file, "checkpoint.tmp.") || (ours && absl::StrContains(file, ".tmp."))) {
      RemoveAbandonedTempFile(path);
      continue;
    }
    if (!only_listed || !ours) continue;
    // "<basename>-<digits>.index" or "<basename>-<digits>.data-...".
    const std::string rest = file.substr(basename.size() + 1);
    const size_t digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string::npos) continue;
    const std::string suffix = rest.substr(digits);
    if (suffix != ".index" && !absl::StartsWith(suffix, ".data-")) continue;
    const std::string checkpoint = file.substr(0, basename.size() + 1 + digits);
    if (!listed.contains(checkpoint)) unlisted.insert(checkpoint);
  }
  // As max_to_keep deletes: the index first.
  for (const std::string& checkpoint : unlisted) DeleteCheckpoint(Join(dir, checkpoint));
}

}  // namespace

absl::Status WriteCheckpoint(const std::string& path, const std::vector<NamedTensor>& tensors) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleWriter> writer, BundleWriter::Create(path));
  for (const NamedTensor& nt : tensors) TW_RETURN_IF_ERROR(writer->Add(nt.name, nt.tensor));
  return writer->Finish();
}

absl::StatusOr<std::vector<NamedTensor>> ReadCheckpoint(const std::string& path) {
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(path);
  if (absl::IsNotFound(reader.status())) {
    char magic[8] = {};
    absl::StatusOr<int> fd = OpenRegularFile(path);
    const bool read = fd.ok() && ::read(*fd, magic, sizeof(magic)) == sizeof(magic);
    if (fd.ok()) ::close(*fd);
    if (read && absl::string_view(magic, sizeof(magic)) == kOldMagic) {
      return absl::FailedPreconditionError(absl::StrCat(
          path,
          " is a checkpoint in the format of Towerflow before 2026-11, which is no longer "
          "read; checkpoints are now TensorFlow's V2 format (<path>.index and "
          "<path>.data-*). Retrain, or restore it with an older Towerflow and save again."));
    }
  }
  if (!reader.ok()) return reader.status();
  std::vector<NamedTensor> out;
  for (const auto& [name, entry] : (*reader)->entries()) {
    TW_ASSIGN_OR_RETURN(Tensor t, (*reader)->Read(name));
    out.push_back({name, std::move(t)});
  }
  return out;
}

void DeleteCheckpoint(const std::string& path) {
  // The index first: without it the rest is no checkpoint.
  ::unlink(BundleIndexPath(path).c_str());
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string data_prefix =
      absl::StrCat(slash == std::string::npos ? path : path.substr(slash + 1), ".data-");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (absl::StartsWith(file, data_prefix)) ::unlink(entry.path().c_str());
  }
  ::unlink(absl::StrCat(path, ".meta").c_str());
}

absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string path = Join(dir, "checkpoint");
  TW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  CheckpointState state;
  absl::Status s = ParseTextProto(text, &state);
  if (!s.ok()) return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
  return state;
}

absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  return WriteFileAtomically(Join(dir, "checkpoint"), PrintTextProto(state));
}

absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir) {
  absl::StatusOr<CheckpointState> state = ReadCheckpointState(dir);
  if (!state.ok()) return state.status();
  if (state->model_checkpoint_path().empty()) {
    return absl::NotFoundError(absl::StrCat("No checkpoint recorded in ", Join(dir, "checkpoint")));
  }
  return Join(dir, state->model_checkpoint_path());
}

absl::Status RecordCheckpoint(const std::string& dir, const std::string& name, int max_to_keep) {
  CheckpointState state;
  absl::StatusOr<CheckpointState> old = ReadCheckpointState(dir);
  if (old.ok()) state = *std::move(old);
  // The new checkpoint goes last; an earlier entry of the same name (a
  // re-save of a step) is dropped.
  CheckpointState next;
  for (int i = 0; i < state.all_model_checkpoint_paths_size(); ++i) {
    if (Relative(dir, state.all_model_checkpoint_paths(i)) == name) continue;
    next.add_all_model_checkpoint_paths(state.all_model_checkpoint_paths(i));
    if (i < state.all_model_checkpoint_timestamps_size()) {
      next.add_all_model_checkpoint_timestamps(state.all_model_checkpoint_timestamps(i));
    }
  }
  next.add_all_model_checkpoint_paths(name);
  next.add_all_model_checkpoint_timestamps(static_cast<double>(std::time(nullptr)));
  std::vector<std::string> dropped;
  if (max_to_keep > 0) {
    CheckpointState kept;
    const int n = next.all_model_checkpoint_paths_size();
    for (int i = 0; i < n; ++i) {
      if (i < n - max_to_keep) {
        dropped.push_back(next.all_model_checkpoint_paths(i));
        continue;
      }
      kept.add_all_model_checkpoint_paths(next.all_model_checkpoint_paths(i));
      if (i < next.all_model_checkpoint_timestamps_size()) {
        kept.add_all_model_checkpoint_timestamps(next.all_model_checkpoint_timestamps(i));
      }
    }
    next = std::move(kept);
  }
  next.set_model_checkpoint_path(name);
  next.set_last_preserved_timestamp(state.last_preserved_timestamp());
  TW_RETURN_IF_ERROR(WriteCheckpointState(dir, next));
  // Only once the state file no longer names them.
  for (const std::string& d : dropped) DeleteCheckpoint(Join(dir, d));
  RemoveLeftovers(dir, name, next, /*only_listed=*/max_to_keep > 0);
  return absl::OkStatus();
}

absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const std::string& basename,
                                           int64_t step, const std::vector<NamedTensor>& tensors,
                                           int max_to_keep) {
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  const std::string name = absl::StrCat(basename, "-", step);
  const std::string path = Join(dir, name);
  TW_RETURN_IF_ERROR(WriteCheckpoint(path, tensors));
  TW_RETURN_IF_ERROR(RecordCheckpoint(dir, name, max_to_keep));
  return path;
}

}  // namespace towerflow
