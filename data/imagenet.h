// ImageNet-style TFRecord shards as the official ResNet reads them
// (imagenet_main.py and imagenet_preprocessing.py): records of tf.Example
// with "image/encoded" (a JPEG), "image/class/label" (int64, 1-1000; 0 is
// the background class of the 1,001) and the object boxes
// "image/object/bbox/{ymin,xmin,ymax,xmax}" (float lists, normalised), as
// build_imagenet_data.py writes them.
//
//   TW_ASSIGN_OR_RETURN(data::Dataset d,
//                       data::ImageNetDataset(files, {.training = true, .batch_size = 256}));
//   // elements {images float [256, 224, 224, 3], labels int32 [256]}
//
// Training: the shards shuffled, interleaved, records shuffled, each image
// decoded only inside a random crop (SampleDistortedBoundingBox's, from its
// boxes, drawn as TF draws it) with DecodeAndCropJpeg's decoder, flipped
// left-right at random, resized to 224x224 (bilinear, TF's coordinates)
// and the RGB channel means subtracted; on `num_parallel_calls` threads,
// batched and prefetched. Evaluation: the whole image, resized so its
// shorter side is 256, the central 224x224, the means subtracted. A corrupt
// record or image is InvalidArgument naming the file's record.
#ifndef TOWERFLOW_DATA_IMAGENET_H_
#define TOWERFLOW_DATA_IMAGENET_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/dataset.h"
#include "framework/tensor.h"

namespace towerflow {
namespace data {

// One record's fields.
struct ImageNetExample {
  std::string encoded;
  int32_t label = 0;
  std::vector<float> boxes;  // [n, 4]: ymin, xmin, ymax, xmax
};
absl::StatusOr<ImageNetExample> ParseImageNetExample(absl::string_view serialized);

// A tf.Example record of those fields (what build_imagenet_data.py writes,
// less the metadata Towerflow does not read).
std::string ImageNetExampleRecord(const ImageNetExample& example);

// The official models' RGB means, subtracted from every image.
inline constexpr float kImageNetChannelMeans[3] = {123.68f, 116.78f, 103.94f};

struct ImageNetPreprocessing {
  bool training = true;
  int64_t side = 224;        // the output is side x side
  int64_t resize_min = 256;  // evaluation: the shorter side before the central crop
};
// One example's image, preprocessed (float [side, side, 3]); `rng` draws
// the training crop and flip.
absl::StatusOr<Tensor> PreprocessImageNet(const ImageNetExample& example,
                                          const ImageNetPreprocessing& options,
                                          std::mt19937_64* rng);

struct ImageNetInputOptions {
  bool training = true;
  int64_t batch_size = 256;
  int64_t side = 224;
  uint64_t seed = 0;
  int num_parallel_calls = 2;
  int cycle_length = 10;           // shards read at once
  int64_t shuffle_buffer = 10000;  // records (training)
  int64_t prefetch = 2;            // batches
  // One process of a cluster: every num_shards-th shard file from index,
  // or every num_shards-th record when there are fewer files than that.
  int64_t num_shards = 1, shard_index = 0;
  bool drop_remainder = true;
};
// {images float [batch, side, side, 3], labels int32 [batch]} from the
// shards `files`, repeated forever when training.
absl::StatusOr<Dataset> ImageNetDataset(const std::vector<std::string>& files,
                                        const ImageNetInputOptions& options);

}  // namespace data
}  // namespace towerflow

#endif  // TOWERFLOW_DATA_IMAGENET_H_
