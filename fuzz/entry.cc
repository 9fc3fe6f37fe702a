// The libFuzzer entry points of the one target linked with it: the input
// runner, and the custom mutator that gives libFuzzer the target's
// structure-aware mutation (fuzz/mutator.h) for half of its mutants.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/mutator.h"

// libFuzzer's own mutation (absent when libFuzzer is not linked).
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size)
    __attribute__((weak));

namespace {

const towerflow::fuzz::Target& TheTarget() {
  const auto& targets = towerflow::fuzz::Targets();
  if (targets.size() != 1) {
    std::fprintf(stderr, "a fuzz program links exactly one target, this one has %zu\n",
                 targets.size());
    std::abort();
  }
  return targets[0];
}

// Randomness from libFuzzer's seed; bytes mutated by libFuzzer when it is
// linked, else by the driver's mutator.
class LibFuzzerContext : public towerflow::fuzz::MutationContext {
 public:
  explicit LibFuzzerContext(unsigned seed) : rng_(seed), bytes_(seed) {}
  uint64_t Below(uint64_t n) override { return n == 0 ? 0 : rng_() % n; }
  std::string MutateBytes(const std::string& piece) override {
    if (LLVMFuzzerMutate == nullptr) return bytes_.MutateBytes(piece);
    std::string buffer = piece;
    buffer.resize(piece.size() + 64);
    const size_t n =
        LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(buffer.data()), piece.size(), buffer.size());
    buffer.resize(n);
    return buffer;
  }

 private:
  std::mt19937_64 rng_;
  towerflow::fuzz::ByteMutator bytes_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const towerflow::fuzz::Target& target = TheTarget();
  if (size > towerflow::fuzz::kMaxInputBytes) return 0;
  // Any status is a result; only crashes, sanitizer reports and hangs are
  // findings.
  target.run(absl::string_view(reinterpret_cast<const char*>(data), size)).IgnoreError();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  const towerflow::fuzz::Target& target = TheTarget();
  LibFuzzerContext ctx(seed);
  std::string mutant;
  std::optional<std::string> structured;
  if (target.mutate != nullptr && ctx.Below(2) == 0) {
    structured = target.mutate(std::string(reinterpret_cast<const char*>(data), size), ctx);
  }
  if (structured) {
    mutant = *std::move(structured);
  } else if (LLVMFuzzerMutate != nullptr) {
    return LLVMFuzzerMutate(data, size, max_size);
  } else {
    mutant = ctx.MutateBytes(std::string(reinterpret_cast<const char*>(data), size));
  }
  const size_t n = std::min(mutant.size(), max_size);
  std::memcpy(data, mutant.data(), n);
  return n;
}
