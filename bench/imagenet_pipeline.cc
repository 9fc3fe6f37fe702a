// The ImageNet input pipeline alone (data/imagenet.h: shards interleaved,
// records shuffled, each image decoded inside its random crop, flipped,
// resized to 224x224, the means subtracted, batches of 32, prefetch 2):
// images per second out of the iterator on 1 and 2 threads, over shards
// make_imagenet_records wrote. bench/imagenet_pipeline_torch.py is the same
// preprocessing in torchvision + PIL on the same JPEGs.
//
//   bazel-bin/bench/imagenet_pipeline --data_dir=/tmp/imagenet [--batches=30]
#include <chrono>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "data/imagenet.h"
#include "examples/common/input.h"
#include "tools/flags.h"

ABSL_FLAG(std::string, data_dir, "", "train-*-of-* shards (make_imagenet_records)");
ABSL_FLAG(int32_t, batches, 30, "batches timed per case, after one");
ABSL_FLAG(int32_t, batch_size, 32, "images per batch");

namespace towerflow {
namespace {

absl::Status Main() {
  const std::vector<std::string> shards =
      examples::ImageNetShards(absl::GetFlag(FLAGS_data_dir), /*train=*/true);
  if (shards.empty()) return absl::NotFoundError("no train-*-of-* shards in --data_dir");
  const int batches = absl::GetFlag(FLAGS_batches);
  for (int threads : {1, 2}) {
    data::ImageNetInputOptions options;
    options.batch_size = absl::GetFlag(FLAGS_batch_size);
    options.num_parallel_calls = threads;
    options.seed = 1;
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::ImageNetDataset(shards, options));
    std::unique_ptr<data::Iterator> it = d.MakeIterator();
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> warm, it->GetNext());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batches; ++i) {
      TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, it->GetNext());
      if (!batch.has_value()) return absl::InternalError("the pipeline ended");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << absl::StrFormat("towerflow imagenet pipeline, %d thread(s): %.1f images/sec\n",
                                 threads, batches * options.batch_size / seconds);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  towerflow::ParseCommandLine(argc, argv,
                              "imagenet_pipeline: images/sec of the ImageNet input pipeline.\n\n"
                              "usage: imagenet_pipeline --data_dir=DIR [--batches=30]");
  const absl::Status status = towerflow::Main();
  if (!status.ok()) {
    std::cerr << "imagenet_pipeline: " << status << "\n";
    return 1;
  }
  return 0;
}
