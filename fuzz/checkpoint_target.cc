// A V2 checkpoint (tensor bundle) -> BundleReader::Open -> Read every entry.
//
// Input: a 4-byte little-endian length N, then N bytes of the index file,
// then the bytes of the one data shard (PackBundle below).
#include <cstring>
#include <iterator>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/crc32c.h"
#include "core/status_macros.h"
#include "framework/memory_limits.h"
#include "framework/tensor_bundle.h"
#include "framework/tensor_views.h"
#include "fuzz/fuzz_target.h"
#include "proto/tensor_bundle.pb.h"

namespace towerflow {
namespace fuzz {
namespace {

constexpr int kMaxEntries = 1000;

std::string PackBundle(absl::string_view index, absl::string_view data) {
  std::string out(4, '\0');
  const uint32_t n = static_cast<uint32_t>(index.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  absl::StrAppend(&out, index, data);
  return out;
}

// The index and data of an input (PackBundle's inverse).
absl::Status UnpackBundle(absl::string_view input, absl::string_view* index,
                          absl::string_view* data) {
  if (input.size() < 4) return absl::InvalidArgumentError("no index length");
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(input[i])) << (8 * i);
  input.remove_prefix(4);
  if (n > input.size()) return absl::InvalidArgumentError("index length past the input");
  *index = input.substr(0, n);
  *data = input.substr(n);
  return absl::OkStatus();
}

absl::Status RunCheckpoint(absl::string_view input) {
  absl::string_view index, data;
  TW_RETURN_IF_ERROR(UnpackBundle(input, &index, &data));
  const std::string prefix = absl::StrCat(ScratchDir(), "/ckpt");
  TW_RETURN_IF_ERROR(WriteFile(absl::StrCat(prefix, ".index"), index));
  TW_RETURN_IF_ERROR(WriteFile(absl::StrCat(prefix, ".data-00000-of-00001"), data));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  const SessionOptions options = FuzzSessionOptions();
  TW_ASSIGN_OR_RETURN(
      const MemoryLimits limits,
      MemoryLimits::FromOptions(options.max_tensor_bytes, options.host_memory_budget_bytes));
  absl::Status first = absl::OkStatus();
  int read = 0;
  for (const auto& [name, entry] : reader->entries()) {
    if (++read > kMaxEntries) break;
    absl::Status s = CheckTensorBytes(entry.dtype(), BundleReader::ShapeOf(entry), limits);
    if (s.ok()) s = reader->Read(name).status();
    first.Update(s);
  }
  return first;
}

// A bundle whose index still is a valid table: a header or entry proto
// changed (an entry's CRC then made right for its new byte range half the
// time), an entry dropped or copied under a new name, or the bytes of one
// tensor mutated -- the entries after it moved, its size and CRC made right
// -- so that mutants reach the tensor decoders behind the checksums.
std::optional<std::string> MutateCheckpoint(const std::string& input, MutationContext& ctx) {
  absl::string_view index_bytes, data_bytes;
  if (!UnpackBundle(input, &index_bytes, &data_bytes).ok()) return std::nullopt;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> table =
      ReadBundleIndexTable(std::string(index_bytes), "index");
  if (!table.ok() || table->empty()) return std::nullopt;
  std::string data(data_bytes);
  std::map<std::string, std::string> kvs(table->begin(), table->end());
  auto nth = [&](size_t i) { return std::next(kvs.begin(), static_cast<std::ptrdiff_t>(i)); };
  const auto fix_crc = [&data](BundleEntryProto* entry) {
    if (entry->offset() >= 0 && entry->size() >= 0 &&
        static_cast<uint64_t>(entry->offset()) <= data.size() &&
        static_cast<uint64_t>(entry->size()) <= data.size() - entry->offset()) {
      entry->set_crc32c(crc32c::Mask(
          crc32c::Value(absl::string_view(data).substr(entry->offset(), entry->size()))));
    }
  };
  auto it = nth(ctx.Below(kvs.size()));
  switch (ctx.Below(4)) {
    case 0: {  // a proto changed
      if (it->first.empty()) {
        BundleHeaderProto header;
        if (!header.ParseFromString(it->second)) return std::nullopt;
        MutateMessage(&header, ctx);
        it->second = header.SerializeAsString();
      } else {
        BundleEntryProto entry;
        if (!entry.ParseFromString(it->second)) return std::nullopt;
        MutateMessage(&entry, ctx);
        if (ctx.Below(2) == 0) fix_crc(&entry);
        it->second = entry.SerializeAsString();
      }
      break;
    }
    case 1:  // an entry dropped (the header too, sometimes)
      kvs.erase(it);
      break;
    case 2:  // an entry copied under another name
      if (!it->first.empty()) kvs[it->first + "_"] = it->second;
      break;
    default: {  // a tensor's bytes mutated
      BundleEntryProto entry;
      if (it->first.empty() || !entry.ParseFromString(it->second) || entry.offset() < 0 ||
          entry.size() < 0 || static_cast<uint64_t>(entry.offset()) > data.size() ||
          static_cast<uint64_t>(entry.size()) > data.size() - entry.offset()) {
        return std::nullopt;
      }
      const std::string mutated = ctx.MutateBytes(data.substr(entry.offset(), entry.size()));
      data.replace(entry.offset(), entry.size(), mutated);
      const int64_t moved = static_cast<int64_t>(mutated.size()) - entry.size();
      for (auto& [name, value] : kvs) {
        BundleEntryProto other;
        if (name.empty() || name == it->first || !other.ParseFromString(value) ||
            other.offset() <= entry.offset()) {
          continue;
        }
        // Wraps (defined) where a mutated offset is near 2^63.
        other.set_offset(static_cast<int64_t>(static_cast<uint64_t>(other.offset()) +
                                              static_cast<uint64_t>(moved)));
        value = other.SerializeAsString();
      }
      entry.set_size(static_cast<int64_t>(mutated.size()));
      fix_crc(&entry);
      it->second = entry.SerializeAsString();
      break;
    }
  }
  return PackBundle(BuildBundleIndexTable(
                        std::vector<std::pair<std::string, std::string>>(kvs.begin(), kvs.end())),
                    data);
}

std::vector<std::string> CheckpointSeeds() {
  std::vector<std::string> seeds;
  for (const char* model : {"half_plus_two_cpu", "counter", "half_plus_two_tf2_cpu"}) {
    const std::string dir = absl::StrCat("tf/saved_models/", model, "/00000123/variables/");
    std::vector<std::string> files =
        ReferenceFiles({dir + "variables.index", dir + "variables.data-00000-of-00001"});
    if (files.size() == 2) seeds.push_back(PackBundle(files[0], files[1]));
  }
  // A bundle Towerflow writes: float, int64 and string tensors.
  const std::string prefix = absl::StrCat(ScratchDir(), "/seed");
  absl::StatusOr<std::unique_ptr<BundleWriter>> writer = BundleWriter::Create(prefix);
  if (writer.ok()) {
    Tensor f(DT_FLOAT, {2, 2});
    for (int i = 0; i < 4; ++i) f.flat<float>()(i) = 1.5f * i;
    Tensor step(DT_INT64, {});
    step.scalar<int64_t>()() = 42;
    Tensor s(DT_STRING, {2});
    s.flat<std::string>()(0) = "a";
    s.flat<std::string>()(1) = std::string(200, 'b');
    if ((*writer)->Add("global_step", step).ok() && (*writer)->Add("s", s).ok() &&
        (*writer)->Add("w", f).ok() && (*writer)->Finish().ok()) {
      std::optional<std::string> index = ReadFile(prefix + ".index");
      std::optional<std::string> data = ReadFile(prefix + ".data-00000-of-00001");
      if (index && data) seeds.push_back(PackBundle(*index, *data));
    }
  }
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(checkpoint, RunCheckpoint, CheckpointSeeds, MutateCheckpoint)

}  // namespace fuzz
}  // namespace towerflow
