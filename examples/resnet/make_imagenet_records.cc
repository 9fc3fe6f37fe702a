// make_imagenet_records: a small ImageNet-format data set for tests, the
// example and the pipeline's benchmark, without ImageNet: shards
// train-NNNNN-of-NNNNN and validation-NNNNN-of-NNNNN of tf.Example records
// as build_imagenet_data.py writes them (image/encoded a JPEG,
// image/class/label in 1..classes, one object box), of generated images of
// ImageNet's typical size (about 500x375): each class has its colours and
// the box holds a rectangle of the class's own, so a model can learn them.
//
//   make_imagenet_records --output_dir=/tmp/imagenet [--train_shards=4]
//       [--validation_shards=1] [--images_per_shard=32] [--classes=10]
//       [--jpeg_dir=DIR]
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/file_io.h"
#include "core/jpeg.h"
#include "core/record_io.h"
#include "core/status_macros.h"
#include "data/imagenet.h"
#include "tools/flags.h"

ABSL_FLAG(std::string, output_dir, "", "where the shards go (made if missing)");
ABSL_FLAG(int32_t, train_shards, 4, "training shards");
ABSL_FLAG(int32_t, validation_shards, 1, "validation shards");
ABSL_FLAG(int32_t, images_per_shard, 32, "records per shard");
ABSL_FLAG(int32_t, classes, 10, "labels 1..classes (ImageNet's are 1..1000)");
ABSL_FLAG(int32_t, height, 375, "image height (each image within 20% of it)");
ABSL_FLAG(int32_t, width, 500, "image width (each image within 20% of it)");
ABSL_FLAG(uint64_t, seed, 1, "random seed");
ABSL_FLAG(std::string, jpeg_dir, "",
          "also write each training image as a .jpg file here, in a folder per class (for "
          "torchvision's ImageFolder in bench/imagenet_pipeline_torch.py)");

namespace towerflow {
namespace {

// Image `index` of class `label`: the class's two colours as a gradient,
// its third in a rectangle (the object box), and noise; JPEG at quality 90.
data::ImageNetExample MakeExample(int label, std::mt19937_64* rng) {
  std::uniform_real_distribution<double> jitter(0.8, 1.2), unit(0.0, 1.0);
  const int h = static_cast<int>(absl::GetFlag(FLAGS_height) * jitter(*rng));
  const int w = static_cast<int>(absl::GetFlag(FLAGS_width) * jitter(*rng));
  std::mt19937 palette(label);  // the class's colours
  uint8_t colours[3][3];
  for (auto& c : colours) {
    for (auto& v : c) v = static_cast<uint8_t>(palette() % 256);
  }
  const double y0 = 0.5 * unit(*rng), x0 = 0.5 * unit(*rng);
  const double y1 = y0 + 0.2 + 0.3 * unit(*rng), x1 = x0 + 0.2 + 0.3 * unit(*rng);
  std::uniform_int_distribution<int> noise(-12, 12);
  std::vector<uint8_t> pixels(static_cast<size_t>(h) * w * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double fy = static_cast<double>(y) / h, fx = static_cast<double>(x) / w;
      const bool inside = fy >= y0 && fy < y1 && fx >= x0 && fx < x1;
      for (int c = 0; c < 3; ++c) {
        const double v = inside ? colours[2][c] : colours[0][c] * (1 - fx) + colours[1][c] * fx;
        pixels[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(std::clamp(v + noise(*rng), 0.0, 255.0));
      }
    }
  }
  jpeg::EncodeOptions options;
  options.quality = 90;
  data::ImageNetExample example;
  example.encoded = jpeg::Encode(pixels.data(), h, w, 3, options).value();
  example.label = label;
  example.boxes = {static_cast<float>(y0), static_cast<float>(x0), static_cast<float>(y1),
                   static_cast<float>(x1)};
  return example;
}

absl::Status WriteSplit(const std::string& dir, const std::string& split, int shards,
                        std::mt19937_64* rng) {
  const int per_shard = absl::GetFlag(FLAGS_images_per_shard);
  const int classes = absl::GetFlag(FLAGS_classes);
  for (int shard = 0; shard < shards; ++shard) {
    const std::string path = absl::StrFormat("%s/%s-%05d-of-%05d", dir, split, shard, shards);
    TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> writer, RecordWriter::Open(path));
    for (int i = 0; i < per_shard; ++i) {
      const int label = 1 + (shard * per_shard + i) % classes;
      const data::ImageNetExample example = MakeExample(label, rng);
      TW_RETURN_IF_ERROR(writer->WriteRecord(data::ImageNetExampleRecord(example)));
      const std::string jpeg_dir = absl::GetFlag(FLAGS_jpeg_dir);
      if (split == "train" && !jpeg_dir.empty()) {
        const std::string folder = absl::StrFormat("%s/n%08d", jpeg_dir, label);
        TW_RETURN_IF_ERROR(CreateDirectories(folder));
        TW_RETURN_IF_ERROR(WriteFileAtomically(
            absl::StrFormat("%s/%05d_%05d.jpg", folder, shard, i), example.encoded));
      }
    }
    TW_RETURN_IF_ERROR(writer->Close());
  }
  return absl::OkStatus();
}

absl::Status Main() {
  const std::string dir = absl::GetFlag(FLAGS_output_dir);
  if (dir.empty()) return absl::InvalidArgumentError("--output_dir is required");
  if (absl::GetFlag(FLAGS_classes) < 1 || absl::GetFlag(FLAGS_classes) > 1000) {
    return absl::InvalidArgumentError("--classes must be in [1, 1000]");
  }
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  TW_RETURN_IF_ERROR(WriteSplit(dir, "train", absl::GetFlag(FLAGS_train_shards), &rng));
  TW_RETURN_IF_ERROR(WriteSplit(dir, "validation", absl::GetFlag(FLAGS_validation_shards), &rng));
  std::cout << "wrote " << absl::GetFlag(FLAGS_train_shards) << " training and "
            << absl::GetFlag(FLAGS_validation_shards) << " validation shards of "
            << absl::GetFlag(FLAGS_images_per_shard) << " images into " << dir << "\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  towerflow::ParseCommandLine(
      argc, argv,
      "make_imagenet_records: a small ImageNet-format TFRecord set of generated images.\n\n"
      "usage: make_imagenet_records --output_dir=DIR [--train_shards=4] [--validation_shards=1] "
      "[--images_per_shard=32] [--classes=10]");
  const absl::Status s = towerflow::Main();
  if (!s.ok()) {
    std::cerr << "make_imagenet_records: " << s << "\n";
    return 1;
  }
  return 0;
}
