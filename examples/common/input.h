// Input pipelines of the examples: CIFAR-10 binaries the tutorial's way
// (cifar10_input.py) and the official ResNet's way, and Fashion-MNIST.
//
// Training: shuffled (buffer 10000 per pass), repeated forever, augmented,
// batched with drop_remainder, prefetched. Evaluation: one
// pass in order, the last batch smaller.
#ifndef TOWERFLOW_EXAMPLES_COMMON_INPUT_H_
#define TOWERFLOW_EXAMPLES_COMMON_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/estimator.h"

namespace towerflow {
namespace examples {

// How a pipeline runs: threads for the per-image work, and batches
// prefetched (0: no Prefetch stage). One thread is the default: an image
// takes microseconds, and handing each to a pool costs more than it saves
// (bench/README.md, input_pipeline).
struct PipelineOptions {
  int threads = 1;
  int64_t prefetch = 2;
};

// Debian's dataset-fashion-mnist.
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// True when `dir` has the four Fashion-MNIST files.
bool HasFashionMnist(const std::string& dir);

// True when `data_dir` has data_batch_1.bin ... data_batch_5.bin and
// test_batch.bin.
bool HasCifar10(const std::string& data_dir);

// The tutorial's: training images are random 24x24 crops, flipped at
// random, with random brightness (max delta 63) and contrast (0.2 - 1.8),
// standardised per image; evaluation takes the central 24x24 crop,
// standardised. Features {"images"}, labels {"labels"}.
absl::StatusOr<InputSpec> Cifar10TutorialInput(const std::string& data_dir, bool train,
                                               int64_t batch_size, uint64_t seed,
                                               const PipelineOptions& options = {});

// The official ResNet's (cifar10_main.py): training images are padded to
// 40x40, cropped back to 32x32 at random and flipped at random; every image
// is standardised.
absl::StatusOr<InputSpec> Cifar10ResNetInput(const std::string& data_dir, bool train,
                                             int64_t batch_size, uint64_t seed,
                                             const PipelineOptions& options = {});

// Fashion-MNIST 28x28x1 (IDX, gzip): training images are padded to 32x32,
// cropped back to 28x28 at random and flipped at random; every image is
// standardised. Features {"images"}, labels {"labels"}.
absl::StatusOr<InputSpec> FashionMnistInput(const std::string& dir, bool train, int64_t batch_size,
                                            uint64_t seed, const PipelineOptions& options = {});

// ImageNet-style TFRecord shards in `data_dir` (train-*-of-* and
// validation-*-of-*, as build_imagenet_data.py or
// examples/resnet/make_imagenet_records write them), preprocessed as the
// official ResNet does (data/imagenet.h) into 224x224 images; under mpirun
// each process reads its share of the records. NotFound when there are no
// shards.
absl::StatusOr<InputSpec> ImageNetInput(const std::string& data_dir, bool train, int64_t batch_size,
                                        uint64_t seed, const PipelineOptions& options = {});
// The shards of one split in `data_dir`, sorted.
std::vector<std::string> ImageNetShards(const std::string& data_dir, bool train);

// The official models' --use_synthetic_data: one batch of images drawn
// once (normal around 127, deviation 60, truncated at two deviations, as
// their truncated_normal) and labels uniform in [0, num_classes), repeated
// forever for training (evaluation sees it once); throughput without a
// data set.
absl::StatusOr<InputSpec> SyntheticImageInput(bool train, int64_t batch_size, int64_t side,
                                              int num_classes, uint64_t seed);

}  // namespace examples
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_COMMON_INPUT_H_
