#include "train/checkpoint.h"

#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/crc32c.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

constexpr absl::string_view kMagic = "TWCKPT01";
constexpr uint32_t kMaxRank = 64;

template <typename T>
void Put(std::string* out, T value) {
  char buf[sizeof(T)];
  std::memcpy(buf, &value, sizeof(T));
  out->append(buf, sizeof(T));
}

// Reads fixed-size fields from a byte range, failing (not crashing) at the
// end.
class Reader {
 public:
  Reader(absl::string_view data, const std::string& path) : data_(data), path_(path) {}

  template <typename T>
  absl::Status Get(T* value, absl::string_view what) {
    if (data_.size() < sizeof(T)) return Truncated(what);
    std::memcpy(value, data_.data(), sizeof(T));
    data_.remove_prefix(sizeof(T));
    return absl::OkStatus();
  }
  absl::Status Bytes(uint64_t n, absl::string_view* out, absl::string_view what) {
    if (data_.size() < n) return Truncated(what);
    *out = data_.substr(0, n);
    data_.remove_prefix(n);
    return absl::OkStatus();
  }
  size_t remaining() const { return data_.size(); }
  absl::Status Loss(absl::string_view message) const {
    return absl::DataLossError(absl::StrCat(path_, ": ", message));
  }

 private:
  absl::Status Truncated(absl::string_view what) const {
    return Loss(absl::StrCat("truncated checkpoint (reading ", what, ")"));
  }
  absl::string_view data_;
  const std::string& path_;
};

absl::StatusOr<NamedTensor> ParseRecord(absl::string_view record, const std::string& path) {
  Reader r(record, path);
  uint32_t name_length = 0;
  TW_RETURN_IF_ERROR(r.Get(&name_length, "name length"));
  absl::string_view name;
  TW_RETURN_IF_ERROR(r.Bytes(name_length, &name, "name"));
  int32_t dtype_value = 0;
  uint32_t rank = 0;
  TW_RETURN_IF_ERROR(r.Get(&dtype_value, "dtype"));
  TW_RETURN_IF_ERROR(r.Get(&rank, "rank"));
  if (!IsValidDataType(dtype_value) || DataTypeSize(static_cast<DataType>(dtype_value)) == 0 ||
      IsRefType(static_cast<DataType>(dtype_value))) {
    return r.Loss(absl::StrCat("tensor '", name, "' has invalid dtype ", dtype_value));
  }
  const DataType dtype = static_cast<DataType>(dtype_value);
  if (rank > kMaxRank) return r.Loss(absl::StrCat("tensor '", name, "' has rank ", rank));
  std::vector<int64_t> dims(rank);
  for (uint32_t i = 0; i < rank; ++i) TW_RETURN_IF_ERROR(r.Get(&dims[i], "dims"));
  absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    return r.Loss(
        absl::StrCat("tensor '", name, "' has invalid shape: ", shape.status().message()));
  }
  uint64_t data_length = 0;
  TW_RETURN_IF_ERROR(r.Get(&data_length, "data length"));
  const uint64_t expected =
      static_cast<uint64_t>(shape->num_elements()) * static_cast<uint64_t>(DataTypeSize(dtype));
  if (data_length != expected || data_length != r.remaining()) {
    return r.Loss(absl::StrCat("tensor '", name, "' of shape ", shape->DebugString(), " ",
                               DataTypeString(dtype), " claims ", data_length,
                               " data bytes; the record holds ", r.remaining()));
  }
  absl::string_view data;
  TW_RETURN_IF_ERROR(r.Bytes(data_length, &data, "data"));
  TW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), dtype, *shape));
  if (data_length > 0) std::memcpy(t.raw_data(), data.data(), data_length);
  return NamedTensor{std::string(name), std::move(t)};
}

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

}  // namespace

absl::Status WriteCheckpoint(const std::string& path, const std::vector<NamedTensor>& tensors) {
  std::string out(kMagic);
  Put<uint32_t>(&out, static_cast<uint32_t>(tensors.size()));
  Put<uint32_t>(&out, crc32c::Mask(crc32c::Value(out)));
  absl::flat_hash_set<std::string> names;
  for (const NamedTensor& nt : tensors) {
    const Tensor& t = nt.tensor;
    if (!names.insert(nt.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Checkpoint ", path, ": duplicate tensor name '", nt.name, "'"));
    }
    if (DataTypeSize(t.dtype()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("Checkpoint ", path, ": tensor '", nt.name,
                                                     "' has dtype ", DataTypeString(t.dtype()),
                                                     ", which checkpoints cannot hold"));
    }
    std::string record;
    Put<uint32_t>(&record, static_cast<uint32_t>(nt.name.size()));
    record += nt.name;
    Put<int32_t>(&record, static_cast<int32_t>(t.dtype()));
    Put<uint32_t>(&record, static_cast<uint32_t>(t.dims()));
    for (int i = 0; i < t.dims(); ++i) Put<int64_t>(&record, t.shape().dim_size(i));
    Put<uint64_t>(&record, static_cast<uint64_t>(t.TotalBytes()));
    record.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
    Put<uint32_t>(&out, static_cast<uint32_t>(record.size()));
    out += record;
    Put<uint32_t>(&out, crc32c::Mask(crc32c::Value(record)));
  }
  return WriteFileAtomically(path, out);
}

absl::StatusOr<std::vector<NamedTensor>> ReadCheckpoint(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  Reader r(bytes, path);
  absl::string_view magic;
  TW_RETURN_IF_ERROR(r.Bytes(kMagic.size(), &magic, "magic"));
  if (magic != kMagic) return r.Loss("not a Towerflow checkpoint (bad magic)");
  uint32_t count = 0, header_crc = 0;
  TW_RETURN_IF_ERROR(r.Get(&count, "tensor count"));
  TW_RETURN_IF_ERROR(r.Get(&header_crc, "header checksum"));
  if (crc32c::Unmask(header_crc) != crc32c::Value(absl::string_view(bytes).substr(0, 12))) {
    return r.Loss("header checksum mismatch");
  }
  std::vector<NamedTensor> out;
  absl::flat_hash_set<std::string> names;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t length = 0, crc = 0;
    absl::string_view record;
    TW_RETURN_IF_ERROR(r.Get(&length, "record length"));
    TW_RETURN_IF_ERROR(r.Bytes(length, &record, "record"));
    TW_RETURN_IF_ERROR(r.Get(&crc, "record checksum"));
    if (crc32c::Unmask(crc) != crc32c::Value(record)) {
      return r.Loss(absl::StrCat("checksum mismatch in tensor record ", i));
    }
    TW_ASSIGN_OR_RETURN(NamedTensor nt, ParseRecord(record, path));
    if (!names.insert(nt.name).second) {
      return r.Loss(absl::StrCat("duplicate tensor name '", nt.name, "'"));
    }
    out.push_back(std::move(nt));
  }
  if (r.remaining() != 0) {
    return r.Loss(absl::StrCat(r.remaining(), " unexpected bytes after the last tensor"));
  }
  return out;
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

absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const std::string& basename,
                                           int64_t step, const std::vector<NamedTensor>& tensors,
                                           int max_to_keep) {
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  const std::string name = absl::StrCat(basename, "-", step);
  const std::string path = Join(dir, name);
  TW_RETURN_IF_ERROR(WriteCheckpoint(path, tensors));

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
  for (const std::string& d : dropped) ::unlink(Join(dir, d).c_str());
  return path;
}

}  // namespace towerflow
