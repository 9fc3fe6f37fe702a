// A V2 checkpoint (tensor bundle) -> BundleReader::Open -> Read every entry.
//
// Input: a 4-byte little-endian length N, then N bytes of the index file,
// then the bytes of the one data shard (PackBundle below).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/memory_limits.h"
#include "framework/tensor_bundle.h"
#include "fuzz/fuzz_target.h"

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

absl::Status RunCheckpoint(absl::string_view input) {
  if (input.size() < 4) return absl::InvalidArgumentError("no index length");
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(input[i])) << (8 * i);
  input.remove_prefix(4);
  if (n > input.size()) return absl::InvalidArgumentError("index length past the input");
  const std::string prefix = absl::StrCat(ScratchDir(), "/ckpt");
  TW_RETURN_IF_ERROR(WriteFile(absl::StrCat(prefix, ".index"), input.substr(0, n)));
  TW_RETURN_IF_ERROR(WriteFile(absl::StrCat(prefix, ".data-00000-of-00001"), input.substr(n)));
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

TW_FUZZ_TARGET(checkpoint, RunCheckpoint, CheckpointSeeds)

}  // namespace fuzz
}  // namespace towerflow
