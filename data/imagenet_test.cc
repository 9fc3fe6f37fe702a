// ImageNet-style shards and the official preprocessing (data/imagenet.h):
// the evaluation pixels are TensorFlow's (imagenet_preprocessing.py run by
// TF 2.21 on the same JPEG bytes); training crops stay inside the image,
// follow the seed and their boxes; the dataset batches, shards and names a
// corrupt record's file and index.
#include "data/imagenet.h"

#include <random>
#include <string>
#include <vector>

#include "core/jpeg.h"
#include "core/record_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace data {
namespace {

using ::towerflow::testing::StatusIs;

// A 150x200 gradient: R = 255x/200, G = 255y/150, B = 3(x + y) mod 256, as
// TF's encode_jpeg wrote it (Towerflow's encoder gives the same bytes).
std::string GradientJpeg() {
  const int h = 150, w = 200;
  std::vector<uint8_t> pixels(h * w * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &pixels[(y * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 255 / w);
      p[1] = static_cast<uint8_t>(y * 255 / h);
      p[2] = static_cast<uint8_t>((x + y) * 3 % 256);
    }
  }
  return jpeg::Encode(pixels.data(), h, w, 3, jpeg::EncodeOptions()).value();
}

TEST(ImageNetTest, RecordsRoundTrip) {
  const ImageNetExample example{"jpeg bytes", 417, {0.1f, 0.2f, 0.7f, 0.9f, 0, 0, 1, 1}};
  TW_ASSERT_OK_AND_ASSIGN(const ImageNetExample back,
                          ParseImageNetExample(ImageNetExampleRecord(example)));
  EXPECT_EQ(back.encoded, "jpeg bytes");
  EXPECT_EQ(back.label, 417);
  EXPECT_EQ(back.boxes, example.boxes);
  EXPECT_THAT(ParseImageNetExample("not a proto \xff\xff"),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a tf.Example"));
  const ImageNetExample bad_label{"x", 1001, {}};
  EXPECT_THAT(ParseImageNetExample(ImageNetExampleRecord(bad_label)),
              StatusIs(absl::StatusCode::kInvalidArgument, "1001 is not in [0, 1000]"));
}

// Evaluation: the shorter side resized to 256 (256x341), the central
// 224x224 (from row 16, column 58), the channel means subtracted; TF's
// values at four pixels.
TEST(ImageNetTest, EvaluationPixelsAreTensorFlows) {
  const ImageNetExample example{GradientJpeg(), 1, {}};
  std::mt19937_64 rng(1);
  TW_ASSERT_OK_AND_ASSIGN(const Tensor image,
                          PreprocessImageNet(example, {.training = false}, &rng));
  ASSERT_EQ(image.shape(), TensorShape({224, 224, 3}));
  const auto at = [&](int y, int x) {
    const float* p = image.data<float>() + (y * 224 + x) * 3;
    return std::vector<float>(p, p + 3);
  };
  EXPECT_THAT(at(0, 0), ::testing::Pointwise(
                            ::testing::FloatNear(2e-4),
                            {-80.68000030517578f, -101.4159927368164f, 24.470184326171875f}));
  EXPECT_THAT(at(100, 37), ::testing::Pointwise(
                               ::testing::FloatNear(2e-4),
                               {-54.68879699707031f, -1.8200454711914062f, 10.090408325195312f}));
  EXPECT_THAT(at(223, 223),
              ::testing::Pointwise(::testing::FloatNear(2e-4),
                                   {84.9312973022461f, 121.26651000976562f, 41.788482666015625f}));
  EXPECT_THAT(at(12, 200),
              ::testing::Pointwise(::testing::FloatNear(2e-4),
                                   {68.8281478881836f, -88.23077392578125f, 132.66770935058594f}));
}

// Training: a 224x224 image from a crop the seed decides; a box that is
// the image's left half makes every crop cover a tenth of it.
TEST(ImageNetTest, TrainingCropsFollowTheSeed) {
  const ImageNetExample example{GradientJpeg(), 1, {0, 0, 1, 0.5f}};
  std::mt19937_64 a(7), b(7), c(8);
  TW_ASSERT_OK_AND_ASSIGN(const Tensor first, PreprocessImageNet(example, {}, &a));
  TW_ASSERT_OK_AND_ASSIGN(const Tensor again, PreprocessImageNet(example, {}, &b));
  TW_ASSERT_OK_AND_ASSIGN(const Tensor other, PreprocessImageNet(example, {}, &c));
  ASSERT_EQ(first.shape(), TensorShape({224, 224, 3}));
  EXPECT_THAT(again, TensorEq(first));
  EXPECT_THAT(other, ::testing::Not(TensorEq(first)));
  const ImageNetExample corrupt{"\xff\xd8\xff garbage", 1, {}};
  EXPECT_THAT(PreprocessImageNet(corrupt, {}, &a).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "JPEG"));
}

TEST(ImageNetTest, DatasetBatchesShardsAndNamesBadRecords) {
  const std::string dir = testing::MakeTempDir("imagenet");
  const std::string jpeg = GradientJpeg();
  std::vector<std::string> files;
  for (int shard = 0; shard < 2; ++shard) {
    files.push_back(absl::StrCat(dir, "/train-0000", shard, "-of-00002"));
    TW_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(files.back()));
    for (int i = 0; i < 3; ++i) {
      const std::string encoded = shard == 1 && i == 2 ? std::string("\xff\xd8\xff bad") : jpeg;
      TW_ASSERT_OK(writer->WriteRecord(ImageNetExampleRecord({encoded, 10 * shard + i, {}})));
    }
    TW_ASSERT_OK(writer->Close());
  }
  ImageNetInputOptions options;
  options.training = false;
  options.batch_size = 2;
  options.side = 32;
  options.num_parallel_calls = 2;
  TW_ASSERT_OK_AND_ASSIGN(Dataset d, ImageNetDataset(files, options));
  auto it = d.MakeIterator();
  // The two shards interleaved: labels 0, 10, 1, 11, 2, then the bad one.
  TW_ASSERT_OK_AND_ASSIGN(std::optional<Element> batch, it->GetNext());
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ((*batch)[0].shape(), TensorShape({2, 32, 32, 3}));
  EXPECT_THAT((*batch)[1], TensorIs<int32_t>({2}, {0, 10}));
  TW_ASSERT_OK_AND_ASSIGN(batch, it->GetNext());
  EXPECT_THAT((*batch)[1], TensorIs<int32_t>({2}, {1, 11}));
  EXPECT_THAT(it->GetNext().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "train-00001-of-00002, record 2"));
  // One process of two over one shard file: every other record.
  options.num_shards = 2;
  options.shard_index = 1;
  options.batch_size = 1;
  TW_ASSERT_OK_AND_ASSIGN(Dataset half, ImageNetDataset({files[0]}, options));
  auto half_it = half.MakeIterator();
  TW_ASSERT_OK_AND_ASSIGN(batch, half_it->GetNext());
  EXPECT_THAT((*batch)[1], TensorIs<int32_t>({1}, {1}));
  TW_ASSERT_OK_AND_ASSIGN(batch, half_it->GetNext());
  EXPECT_FALSE(batch.has_value());
  // With a shard file each, the second process reads the second file.
  options.batch_size = 2;
  TW_ASSERT_OK_AND_ASSIGN(Dataset second, ImageNetDataset(files, options));
  auto second_it = second.MakeIterator();
  TW_ASSERT_OK_AND_ASSIGN(batch, second_it->GetNext());
  EXPECT_THAT((*batch)[1], TensorIs<int32_t>({2}, {10, 11}));
}

}  // namespace
}  // namespace data
}  // namespace towerflow
