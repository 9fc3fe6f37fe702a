// The examples' Fashion-MNIST training pipeline alone: examples per second
// out of the iterator (shuffle, pad-crop-flip-standardise augmentation,
// batches of 256, prefetch), with the augmentation on 1 and 2 threads and
// with and without Prefetch. Compare with a training step's rate (the step
// log's examples/sec) to see whether the input keeps up.
//
//   bazel build //bench:input_pipeline && bazel-bin/bench/input_pipeline
#include <chrono>
#include <iostream>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "examples/common/input.h"

namespace towerflow {
namespace {

constexpr int64_t kBatch = 256;
constexpr int kBatches = 60;

absl::Status Main() {
  const std::string dir = examples::kFashionMnistDir;
  if (!examples::HasFashionMnist(dir)) {
    return absl::NotFoundError(dir + " has no Fashion-MNIST (tools/bootstrap.sh installs it)");
  }
  struct Case {
    const char* name;
    examples::PipelineOptions options;
  };
  const Case cases[] = {
      {"1 thread, no prefetch", {1, 0}},
      {"1 thread, prefetch 2 (the examples')", {1, 2}},
      {"2 threads, no prefetch", {2, 0}},
      {"2 threads, prefetch 2", {2, 2}},
  };
  std::cout << "batches of " << kBatch << ", " << kBatches << " batches per case\n";
  for (const Case& c : cases) {
    TW_ASSIGN_OR_RETURN(InputSpec spec,
                        examples::FashionMnistInput(dir, true, kBatch, 1, c.options));
    std::unique_ptr<data::Iterator> it = spec.dataset.MakeIterator();
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> warm, it->GetNext());  // fills buffers
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatches; ++i) {
      TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, it->GetNext());
      if (!batch.has_value()) return absl::InternalError("the pipeline ended");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << absl::StrFormat("%-45s %8.0f examples/sec\n", c.name, kBatches * kBatch / seconds);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main() {
  const absl::Status status = towerflow::Main();
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
