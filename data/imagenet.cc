#include "data/imagenet.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/image_geometry.h"
#include "core/jpeg.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "data/image.h"
#include "data/readers.h"
#include "proto/example.pb.h"

namespace towerflow {
namespace data {
namespace {

constexpr char kEncoded[] = "image/encoded";
constexpr char kLabel[] = "image/class/label";
constexpr const char* kBoxKeys[4] = {"image/object/bbox/ymin", "image/object/bbox/xmin",
                                     "image/object/bbox/ymax", "image/object/bbox/xmax"};

// Decodes `encoded` (3 channels, uint8), only `crop` of it when given.
absl::StatusOr<Tensor> DecodeRgb(const std::string& encoded,
                                 const std::optional<jpeg::Window>& crop) {
  jpeg::DecodeOptions options;
  options.channels = 3;
  options.crop = crop;
  Tensor bytes;
  TW_RETURN_IF_ERROR(
      jpeg::Decode(encoded, options, [&](int64_t h, int64_t w, int c) -> absl::StatusOr<uint8_t*> {
        bytes = Tensor(DT_UINT8, TensorShape({h, w, c}));
        return bytes.data<uint8_t>();
      }));
  return bytes;
}

std::vector<float> Means() {
  return std::vector<float>(std::begin(kImageNetChannelMeans), std::end(kImageNetChannelMeans));
}

// imagenet_preprocessing.py's _decode_crop_and_flip and _resize_image: the
// crop sample_distorted_bounding_box draws (min_object_covered 0.1, aspect
// ratios [0.75, 1.33], areas [0.05, 1], 100 attempts, the whole image when
// there is no box) on a Philox stream seeded from `rng`, decoded alone,
// flipped at random, resized and the means subtracted (one pass over the
// crop's bytes).
absl::StatusOr<Tensor> DecodeCropFlipResize(const ImageNetExample& example, int64_t side,
                                            std::mt19937_64* rng) {
  TW_ASSIGN_OR_RETURN(const jpeg::Shape shape, jpeg::ReadShape(example.encoded));
  const uint64_t seed = (*rng)(), seed2 = (*rng)();
  PhiloxStream stream(seed, seed2);
  PhiloxWords words(&stream);
  DistortedCropOptions options;
  options.use_image_if_no_bounding_boxes = true;
  TW_ASSIGN_OR_RETURN(
      const PixelBox crop,
      SampleDistortedCrop(static_cast<int>(shape.height), static_cast<int>(shape.width),
                          example.boxes.data(), static_cast<int64_t>(example.boxes.size() / 4),
                          options, &words));
  TW_ASSIGN_OR_RETURN(
      Tensor image,
      DecodeRgb(example.encoded, jpeg::Window{crop.min_y, crop.min_x, crop.max_y - crop.min_y,
                                              crop.max_x - crop.min_x}));
  image::ResizeOptions resize;
  resize.flip_left_right = std::bernoulli_distribution(0.5)(*rng);
  resize.subtract_means = Means();
  return image::ResizeBilinear(image, side, side, resize);
}

// _aspect_preserving_resize then _central_crop, less the means.
absl::StatusOr<Tensor> ResizeAndCentralCrop(const Tensor& image, int64_t resize_min, int64_t side) {
  const float h = static_cast<float>(image.dim_size(0)), w = static_cast<float>(image.dim_size(1));
  const float scale = static_cast<float>(resize_min) / std::min(h, w);
  const int64_t new_h = static_cast<int64_t>(h * scale), new_w = static_cast<int64_t>(w * scale);
  TW_ASSIGN_OR_RETURN(Tensor resized, image::ResizeBilinear(image, new_h, new_w));
  TW_ASSIGN_OR_RETURN(Tensor crop,
                      image::Crop(resized, (new_h - side) / 2, (new_w - side) / 2, side, side));
  return image::SubtractChannelMeans(crop, Means());
}

}  // namespace

absl::StatusOr<ImageNetExample> ParseImageNetExample(absl::string_view serialized) {
  Example example;
  if (!example.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
    return absl::InvalidArgumentError("the record is not a tf.Example");
  }
  const auto& features = example.features().feature();
  ImageNetExample out;
  auto encoded = features.find(kEncoded);
  if (encoded == features.end() || encoded->second.bytes_list().value_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("the example has no single ", kEncoded));
  }
  out.encoded = encoded->second.bytes_list().value(0);
  auto label = features.find(kLabel);
  if (label == features.end() || label->second.int64_list().value_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("the example has no single ", kLabel));
  }
  const int64_t l = label->second.int64_list().value(0);
  if (l < 0 || l > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, " ", l, " is not in [0, 1000]"));
  }
  out.label = static_cast<int32_t>(l);
  // Boxes: the four lists, of one length (none is no box).
  int n = -1;
  const google::protobuf::RepeatedField<float>* coords[4] = {};
  for (int k = 0; k < 4; ++k) {
    auto it = features.find(kBoxKeys[k]);
    coords[k] = it == features.end() ? nullptr : &it->second.float_list().value();
    const int size = coords[k] == nullptr ? 0 : coords[k]->size();
    if (n >= 0 && size != n) {
      return absl::InvalidArgumentError("the example's box coordinate lists differ in length");
    }
    n = size;
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) out.boxes.push_back(coords[k]->Get(i));
  }
  return out;
}

std::string ImageNetExampleRecord(const ImageNetExample& example) {
  Example e;
  auto& features = *e.mutable_features()->mutable_feature();
  features[kEncoded].mutable_bytes_list()->add_value(example.encoded);
  features[kLabel].mutable_int64_list()->add_value(example.label);
  for (int k = 0; k < 4; ++k) {
    FloatList* list = features[kBoxKeys[k]].mutable_float_list();
    for (size_t i = k; i < example.boxes.size(); i += 4) list->add_value(example.boxes[i]);
  }
  return e.SerializeAsString();
}

absl::StatusOr<Tensor> PreprocessImageNet(const ImageNetExample& example,
                                          const ImageNetPreprocessing& options,
                                          std::mt19937_64* rng) {
  if (options.training) return DecodeCropFlipResize(example, options.side, rng);
  TW_ASSIGN_OR_RETURN(Tensor whole, DecodeRgb(example.encoded, std::nullopt));
  return ResizeAndCentralCrop(whole, options.resize_min, options.side);
}

absl::StatusOr<Dataset> ImageNetDataset(const std::vector<std::string>& files,
                                        const ImageNetInputOptions& options) {
  if (files.empty()) return absl::InvalidArgumentError("ImageNetDataset: no files");
  if (options.batch_size < 1 || options.side < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ImageNetDataset: batch_size ",
                                                   options.batch_size, " and side ", options.side,
                                                   " must be positive"));
  }
  Tensor names(DT_STRING, TensorShape({static_cast<int64_t>(files.size())}));
  std::copy(files.begin(), files.end(), names.data<std::string>());
  TW_ASSIGN_OR_RETURN(Dataset d, Dataset::FromTensorSlices({names}));
  // A process of several reads its share of the shards (as the official
  // input_fn shards the file names), or of the records when there are
  // fewer shards than processes.
  const bool shard_files =
      options.num_shards > 1 && static_cast<int64_t>(files.size()) >= options.num_shards;
  if (shard_files) d = d.Shard(options.num_shards, options.shard_index);
  if (options.training) d = d.Shuffle(static_cast<int64_t>(files.size()), options.seed);
  // Each shard's records, with "<file>, record <i>" for the errors.
  d = d.Interleave(
      [](const Element& e) -> absl::StatusOr<Dataset> {
        const std::string path = *e[0].data<std::string>();
        TW_ASSIGN_OR_RETURN(Dataset records, TFRecordDataset({path}));
        auto next = std::make_shared<int64_t>(0);
        return records.Map([path, next](Element r) -> absl::StatusOr<Element> {
          Tensor where(DT_STRING, TensorShape());
          *where.data<std::string>() = absl::StrCat(path, ", record ", (*next)++);
          r.push_back(std::move(where));
          return r;
        });
      },
      options.cycle_length);
  if (options.num_shards > 1 && !shard_files) d = d.Shard(options.num_shards, options.shard_index);
  if (options.training) d = d.Shuffle(options.shuffle_buffer, options.seed + 1).Repeat();
  const ImageNetPreprocessing preprocessing{options.training, options.side};
  d = d.RandomMap(
      [preprocessing](Element e, std::mt19937_64* rng) -> absl::StatusOr<Element> {
        const std::string& where = *e[1].data<std::string>();
        absl::StatusOr<ImageNetExample> example = ParseImageNetExample(*e[0].data<std::string>());
        absl::StatusOr<Tensor> image = example.ok()
                                           ? PreprocessImageNet(*example, preprocessing, rng)
                                           : absl::StatusOr<Tensor>(example.status());
        if (!image.ok()) {
          return absl::Status(image.status().code(),
                              absl::StrCat(where, ": ", image.status().message()));
        }
        Tensor label(DT_INT32, TensorShape());
        *label.data<int32_t>() = example->label;
        return Element{*std::move(image), std::move(label)};
      },
      options.seed + 2, options.num_parallel_calls);
  return d.Batch(options.batch_size, options.drop_remainder).Prefetch(options.prefetch);
}

}  // namespace data
}  // namespace towerflow
