#include "examples/common/input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "data/image.h"
#include "data/imagenet.h"
#include "data/readers.h"
#include "distribute/cluster.h"

namespace towerflow {
namespace examples {
namespace {

namespace image = data::image;

constexpr int64_t kShuffleBuffer = 10000;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Training: shuffle, repeat, augment, batch; evaluation: preprocess, batch.
InputSpec Pipeline(const data::Dataset& examples, bool train, int64_t batch_size, uint64_t seed,
                   data::RandomMapFn augment, data::MapFn preprocess,
                   const PipelineOptions& options) {
  data::Dataset d = examples;
  // Under mpirun each process reads its part (every size-th example); the
  // Estimator sums the processes' gradients, and their metrics.
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (cluster.ok() && (*cluster)->size() > 1) d = d.Shard((*cluster)->size(), (*cluster)->rank());
  if (train) {
    d = d.Shuffle(kShuffleBuffer, seed)
            .Repeat()
            .RandomMap(std::move(augment), seed + 1, options.threads)
            .Batch(batch_size, /*drop_remainder=*/true);
  } else {
    d = d.Map(std::move(preprocess), options.threads).Batch(batch_size);
  }
  if (options.prefetch > 0) d = d.Prefetch(options.prefetch);
  return InputSpec{d, {"images"}, {"labels"}};
}

// The five training batches, or the test batch.
absl::StatusOr<data::Dataset> Cifar10Examples(const std::string& data_dir, bool train) {
  std::vector<std::string> files;
  if (train) {
    for (int i = 1; i <= 5; ++i) files.push_back(absl::StrCat(data_dir, "/data_batch_", i, ".bin"));
  } else {
    files.push_back(data_dir + "/test_batch.bin");
  }
  return data::Cifar10Dataset(files);
}

// Pads to side + 2 * pad, crops back to side x side at random, flips at
// random, standardises.
absl::StatusOr<data::Element> PadCropFlip(data::Element e, int64_t side, int64_t pad,
                                          std::mt19937_64* rng) {
  TW_ASSIGN_OR_RETURN(Tensor x, image::ToFloat(e[0]));
  TW_ASSIGN_OR_RETURN(x, image::CropOrPad(x, side + 2 * pad, side + 2 * pad));
  TW_ASSIGN_OR_RETURN(x, image::RandomCrop(x, side, side, rng));
  TW_ASSIGN_OR_RETURN(x, image::RandomFlipLeftRight(x, rng));
  TW_ASSIGN_OR_RETURN(x, image::PerImageStandardization(x));
  return data::Element{x, e[1]};
}

absl::StatusOr<data::Element> Standardize(data::Element e) {
  TW_ASSIGN_OR_RETURN(Tensor x, image::ToFloat(e[0]));
  TW_ASSIGN_OR_RETURN(x, image::PerImageStandardization(x));
  return data::Element{x, e[1]};
}

}  // namespace

bool HasFashionMnist(const std::string& dir) {
  for (const char* split : {"train", "t10k"}) {
    for (const char* part : {"images-idx3", "labels-idx1"}) {
      if (!Exists(absl::StrCat(dir, "/", split, "-", part, "-ubyte.gz"))) return false;
    }
  }
  return true;
}

bool HasCifar10(const std::string& data_dir) {
  if (data_dir.empty()) return false;
  for (int i = 1; i <= 5; ++i) {
    if (!Exists(absl::StrCat(data_dir, "/data_batch_", i, ".bin"))) return false;
  }
  return Exists(data_dir + "/test_batch.bin");
}

absl::StatusOr<InputSpec> Cifar10TutorialInput(const std::string& data_dir, bool train,
                                               int64_t batch_size, uint64_t seed,
                                               const PipelineOptions& options) {
  TW_ASSIGN_OR_RETURN(data::Dataset examples, Cifar10Examples(data_dir, train));
  auto augment = [](data::Element e, std::mt19937_64* rng) -> absl::StatusOr<data::Element> {
    TW_ASSIGN_OR_RETURN(Tensor x, image::ToFloat(e[0]));
    TW_ASSIGN_OR_RETURN(x, image::RandomCrop(x, 24, 24, rng));
    TW_ASSIGN_OR_RETURN(x, image::RandomFlipLeftRight(x, rng));
    TW_ASSIGN_OR_RETURN(x, image::RandomBrightness(x, 63, rng));
    TW_ASSIGN_OR_RETURN(x, image::RandomContrast(x, 0.2f, 1.8f, rng));
    TW_ASSIGN_OR_RETURN(x, image::PerImageStandardization(x));
    return data::Element{x, e[1]};
  };
  auto preprocess = [](data::Element e) -> absl::StatusOr<data::Element> {
    TW_ASSIGN_OR_RETURN(Tensor x, image::ToFloat(e[0]));
    TW_ASSIGN_OR_RETURN(x, image::CropOrPad(x, 24, 24));
    TW_ASSIGN_OR_RETURN(x, image::PerImageStandardization(x));
    return data::Element{x, e[1]};
  };
  return Pipeline(examples, train, batch_size, seed, augment, preprocess, options);
}

absl::StatusOr<InputSpec> FashionMnistInput(const std::string& dir, bool train, int64_t batch_size,
                                            uint64_t seed, const PipelineOptions& options) {
  const std::string prefix = train ? "/train" : "/t10k";
  TW_ASSIGN_OR_RETURN(data::Dataset examples,
                      data::MnistDataset(dir + prefix + "-images-idx3-ubyte.gz",
                                         dir + prefix + "-labels-idx1-ubyte.gz"));
  auto augment = [](data::Element e, std::mt19937_64* rng) {
    return PadCropFlip(std::move(e), 28, 2, rng);
  };
  return Pipeline(examples, train, batch_size, seed, augment, Standardize, options);
}

absl::StatusOr<InputSpec> Cifar10ResNetInput(const std::string& data_dir, bool train,
                                             int64_t batch_size, uint64_t seed,
                                             const PipelineOptions& options) {
  TW_ASSIGN_OR_RETURN(data::Dataset examples, Cifar10Examples(data_dir, train));
  auto augment = [](data::Element e, std::mt19937_64* rng) {
    return PadCropFlip(std::move(e), 32, 4, rng);
  };
  return Pipeline(examples, train, batch_size, seed, augment, Standardize, options);
}

std::vector<std::string> ImageNetShards(const std::string& data_dir, bool train) {
  std::vector<std::string> shards;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, train ? "train-" : "validation-") &&
        absl::StrContains(name, "-of-")) {
      shards.push_back(entry.path().string());
    }
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

absl::StatusOr<InputSpec> ImageNetInput(const std::string& data_dir, bool train, int64_t batch_size,
                                        uint64_t seed, const PipelineOptions& options) {
  const std::vector<std::string> shards = ImageNetShards(data_dir, train);
  if (shards.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no ", train ? "train" : "validation", "-*-of-* shards in '", data_dir, "'"));
  }
  data::ImageNetInputOptions o;
  o.training = train;
  o.batch_size = batch_size;
  o.seed = seed;
  o.num_parallel_calls = std::max(options.threads, 1);
  o.prefetch = std::max<int64_t>(options.prefetch, 1);
  o.drop_remainder = train;
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (cluster.ok() && (*cluster)->size() > 1) {
    o.num_shards = (*cluster)->size();
    o.shard_index = (*cluster)->rank();
  }
  TW_ASSIGN_OR_RETURN(data::Dataset d, data::ImageNetDataset(shards, o));
  return InputSpec{d, {"images"}, {"labels"}};
}

absl::StatusOr<InputSpec> SyntheticImageInput(bool train, int64_t batch_size, int64_t side,
                                              int num_classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(127.0f, 60.0f);
  Tensor images(DT_FLOAT, TensorShape({1, batch_size, side, side, 3}));
  for (int64_t i = 0; i < images.NumElements(); ++i) {
    float v;
    do {
      v = normal(rng);
    } while (std::abs(v - 127.0f) > 120.0f);  // two deviations
    images.data<float>()[i] = v;
  }
  Tensor labels(DT_INT32, TensorShape({1, batch_size}));
  std::uniform_int_distribution<int32_t> label(0, num_classes - 1);
  for (int64_t i = 0; i < batch_size; ++i) labels.data<int32_t>()[i] = label(rng);
  TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images, labels}));
  return InputSpec{train ? d.Repeat() : d, {"images"}, {"labels"}};
}

}  // namespace examples
}  // namespace towerflow
