#include "tools/checkpoint.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "framework/tensor_bundle.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace tools {

absl::StatusOr<std::string> ResolveCheckpointPrefix(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return LatestCheckpoint(path);
  if (absl::EndsWith(path, ".index")) return path.substr(0, path.size() - 6);
  return path;
}

absl::StatusOr<std::string> DescribeCheckpoint(const std::string& path, const std::string& tensor,
                                               int max_values) {
  TW_ASSIGN_OR_RETURN(std::string prefix, ResolveCheckpointPrefix(path));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  const auto& entries = reader->entries();
  std::string out;
  if (!tensor.empty()) {
    TW_ASSIGN_OR_RETURN(Tensor t, reader->Read(tensor));
    absl::StrAppend(&out, tensor, ": ", DataTypeString(t.dtype()), " ", t.shape().DebugString(),
                    "\n", t.SummarizeValue(max_values), "\n");
    return out;
  }
  size_t width = 4;
  int64_t bytes = 0;
  for (const auto& [name, entry] : entries) {
    width = std::max(width, name.size());
    bytes += entry.size();
  }
  absl::StrAppend(&out, "Checkpoint ", prefix, ": ", entries.size(), " tensors, ",
                  reader->header().num_shards(),
                  reader->header().num_shards() == 1 ? " shard, " : " shards, ", bytes,
                  " bytes of data\n");
  absl::StrAppend(
      &out, absl::StrFormat("  %-*s  %-8s  %-16s  %s\n", width, "name", "dtype", "shape", "bytes"));
  for (const auto& [name, entry] : entries) {
    absl::StrAppend(&out, absl::StrFormat("  %-*s  %-8s  %-16s  %d%s\n", width, name,
                                          DataTypeString(entry.dtype()),
                                          BundleReader::ShapeOf(entry).DebugString(), entry.size(),
                                          entry.slices_size() > 0 ? "  (in slices)" : ""));
  }
  return out;
}

}  // namespace tools
}  // namespace towerflow
