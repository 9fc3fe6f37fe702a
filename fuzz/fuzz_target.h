// Fuzz targets: what reads bytes Towerflow does not trust (GraphDefs,
// TensorProtos, checkpoints, SavedModels, TFRecord and event files, the
// command line's feeds), each behind one entry point that must turn any
// input into an absl::Status quickly: errors are expected, a crash, a
// sanitizer report or a hang is a bug.
//
// A target registers itself (TW_FUZZ_TARGET) with its run function and its
// seeds, and optionally a structure-aware mutation
// (TW_FUZZ_TARGET_WITH_MUTATOR, fuzz/mutator.h). Linked with fuzz/entry.cc it is a libFuzzer target
// (LLVMFuzzerTestOneInput); with fuzz/driver.cc as well it is a plain
// program that replays a corpus and fuzzes by mutation (driver.cc's usage);
// //fuzz:replay_test runs every target's seeds and corpus as a test.
//
//   absl::Status RunTensorProto(absl::string_view input) { ... }
//   std::vector<std::string> TensorProtoSeeds() { ... }
//   TW_FUZZ_TARGET(tensor_proto, RunTensorProto, TensorProtoSeeds)
#ifndef TOWERFLOW_FUZZ_FUZZ_TARGET_H_
#define TOWERFLOW_FUZZ_FUZZ_TARGET_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/mutator.h"
#include "runtime/session.h"

namespace towerflow {
namespace fuzz {

// Inputs longer than this are refused before any parsing (libFuzzer's
// -max_len; the seeds are shorter).
inline constexpr size_t kMaxInputBytes = 1 << 20;

struct Target {
  const char* name;
  // What the target does with one input.
  absl::Status (*run)(absl::string_view input);
  // Inputs to start from: TensorFlow's files of ../shared/reference (none
  // when it is absent) and files Towerflow itself writes.
  std::vector<std::string> (*seeds)();
  // Structure-aware mutation (fuzz/mutator.h), or nullptr: a mutant of
  // `input` with its framing intact, or nullopt when `input` does not have
  // the structure (the driver then mutates bytes).
  std::optional<std::string> (*mutate)(const std::string& input, MutationContext& ctx) = nullptr;
};

// Registers `target`; returns true (for static initialisers).
bool RegisterTarget(const Target& target);
// Every target linked into this program, in registration order.
const std::vector<Target>& Targets();

#define TW_FUZZ_TARGET(name, run, seeds)                        \
  [[maybe_unused]] static const bool tw_fuzz_target_##name##_ = \
      ::towerflow::fuzz::RegisterTarget({#name, run, seeds});
// A target with a structure-aware mutation (Target::mutate).
#define TW_FUZZ_TARGET_WITH_MUTATOR(name, run, seeds, mutate)   \
  [[maybe_unused]] static const bool tw_fuzz_target_##name##_ = \
      ::towerflow::fuzz::RegisterTarget({#name, run, seeds, mutate});

// The session options every target's sessions run under: one CPU device,
// small thread pools, a step deadline, and memory limits that keep a fuzzing
// process small (no tensor over 64 MiB, at most 512 MiB of host tensors
// beyond what the process holds when the session is made).
SessionOptions FuzzSessionOptions();

// A directory of this process for targets that read their input from files
// (made on first use, removed at exit).
const std::string& ScratchDir();
// Writes `bytes` to `path`.
absl::Status WriteFile(const std::string& path, absl::string_view bytes);
// The bytes of `path`, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);

// The contents of the files of ../shared/reference that exist among
// `relative` (tests/reference_files.h says where it is looked for).
std::vector<std::string> ReferenceFiles(const std::vector<std::string>& relative);

// The paths of fuzz/corpus/<target>/'s files in a test's runfiles, sorted;
// none outside a test.
std::vector<std::string> CorpusFiles(const std::string& target);

}  // namespace fuzz
}  // namespace towerflow

#endif  // TOWERFLOW_FUZZ_FUZZ_TARGET_H_
