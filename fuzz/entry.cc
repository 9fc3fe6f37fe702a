// The libFuzzer entry point of the one target linked with it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& targets = towerflow::fuzz::Targets();
  if (targets.size() != 1) {
    std::fprintf(stderr, "a fuzz program links exactly one target, this one has %zu\n",
                 targets.size());
    std::abort();
  }
  if (size > towerflow::fuzz::kMaxInputBytes) return 0;
  // Any status is a result; only crashes, sanitizer reports and hangs are
  // findings.
  targets[0].run(absl::string_view(reinterpret_cast<const char*>(data), size)).IgnoreError();
  return 0;
}
