#include "data/image.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace data {
namespace image {
namespace {

using testing::StatusIs;

// A 3x3 single-channel image 1..9.
Tensor Nine() { return Literal<float>({3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(ImageTest, ToFloatKeepsValues) {
  EXPECT_THAT(*ToFloat(Literal<uint8_t>({1, 2, 1}, {0, 255})),
              TensorIs<float>({1, 2, 1}, {0, 255}));
  EXPECT_THAT(ToFloat(Literal<float>({2}, {1, 2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ToFloat: expected an image [height, width, channels], got float[2]"));
}

TEST(ImageTest, CropAndCropOrPad) {
  EXPECT_THAT(*Crop(Nine(), 1, 0, 2, 2), TensorIs<float>({2, 2, 1}, {4, 5, 7, 8}));
  EXPECT_THAT(Crop(Nine(), 2, 2, 2, 2),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Crop: window [2:4, 2:4] is outside the image [3,3,1]"));
  // Centre crop (offset (3 - 1) / 2 = 1) and zero padding around (offset
  // (5 - 3) / 2 = 1), per dimension.
  EXPECT_THAT(*CropOrPad(Nine(), 1, 1), TensorIs<float>({1, 1, 1}, {5}));
  EXPECT_THAT(*CropOrPad(Nine(), 1, 5), TensorIs<float>({1, 5, 1}, {0, 4, 5, 6, 0}));
  EXPECT_THAT(*CropOrPad(Literal<float>({1, 1, 2}, {7, 8}), 2, 2),
              TensorIs<float>({2, 2, 2}, {7, 8, 0, 0, 0, 0, 0, 0}));
}

TEST(ImageTest, FlipBrightnessContrastStandardization) {
  EXPECT_THAT(*FlipLeftRight(Literal<float>({1, 3, 2}, {1, 2, 3, 4, 5, 6})),
              TensorIs<float>({1, 3, 2}, {5, 6, 3, 4, 1, 2}));
  EXPECT_THAT(*AdjustBrightness(Literal<float>({1, 2, 1}, {1, 2}), -0.5f),
              TensorIs<float>({1, 2, 1}, {0.5f, 1.5f}));
  // Channel means 2 and 20: (x - mean) * 2 + mean.
  EXPECT_THAT(*AdjustContrast(Literal<float>({1, 2, 2}, {1, 10, 3, 30}), 2.0f),
              TensorIs<float>({1, 2, 2}, {0, 0, 4, 40}));
  // Mean 2.5, stddev sqrt(1.25).
  const float s = std::sqrt(1.25f);
  EXPECT_THAT(*PerImageStandardization(Literal<float>({2, 2, 1}, {1, 2, 3, 4})),
              TensorNear<float>({2, 2, 1}, {-1.5f / s, -0.5f / s, 0.5f / s, 1.5f / s}, 1e-6));
  // A flat image divides by 1 / sqrt(4) instead of 0.
  EXPECT_THAT(*PerImageStandardization(Literal<float>({1, 4, 1}, {5, 5, 5, 7})),
              TensorNear<float>({1, 4, 1},
                                {-0.5f / std::sqrt(0.75f), -0.5f / std::sqrt(0.75f),
                                 -0.5f / std::sqrt(0.75f), 1.5f / std::sqrt(0.75f)},
                                1e-6));
  EXPECT_THAT(*PerImageStandardization(Literal<float>({1, 4, 1}, {5, 5, 5, 5})),
              TensorIs<float>({1, 4, 1}, {0, 0, 0, 0}));
}

TEST(ImageTest, RandomFunctionsDrawFromTheirRangesAndFollowTheSeed) {
  std::set<float> corners;
  bool flipped = false, kept = false;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    std::mt19937_64 rng(seed);
    TW_ASSERT_OK_AND_ASSIGN(Tensor crop, RandomCrop(Nine(), 2, 2, &rng));
    corners.insert(crop.data<float>()[0]);
    TW_ASSERT_OK_AND_ASSIGN(Tensor flip, RandomFlipLeftRight(Nine(), &rng));
    (flip.data<float>()[0] == 3 ? flipped : kept) = true;
    TW_ASSERT_OK_AND_ASSIGN(Tensor bright, RandomBrightness(Nine(), 0.5f, &rng));
    const float delta = bright.data<float>()[0] - 1;
    EXPECT_TRUE(delta >= -0.5f && delta < 0.5f) << delta;
    TW_ASSERT_OK_AND_ASSIGN(Tensor contrast, RandomContrast(Nine(), 0.2f, 1.8f, &rng));
    const float factor = (contrast.data<float>()[0] - 5) / (1 - 5);
    EXPECT_TRUE(factor >= 0.2f - 1e-5f && factor < 1.8f + 1e-5f) << factor;
  }
  // Every 2x2 window of the 3x3 image starts at 1, 2, 4 or 5.
  EXPECT_EQ(corners, (std::set<float>{1, 2, 4, 5}));
  EXPECT_TRUE(flipped && kept);
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(RandomCrop(Nine(), 2, 2, &a)->data<float>()[0],
              RandomCrop(Nine(), 2, 2, &b)->data<float>()[0]);
  }
  EXPECT_THAT(RandomCrop(Nine(), 4, 1, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "RandomCrop: cannot take 4x1"));
  EXPECT_THAT(RandomContrast(Nine(), 2, 1, &a),
              StatusIs(absl::StatusCode::kInvalidArgument, "lower < upper"));
}

// The one-pass resize: from uint8 as from float, flipped as if flipped
// first, less the means as if subtracted after; TF's values for a 2x2 image
// resized to 3x3 (tf.compat.v1.image.resize, bilinear).
TEST(ImageTest, ResizeBilinearFlipsAndSubtractsInOnePass) {
  const Tensor floats = Literal<float>({2, 2, 1}, {1, 2, 3, 4});
  TW_ASSERT_OK_AND_ASSIGN(Tensor resized, ResizeBilinear(floats, 3, 3));
  EXPECT_THAT(resized, TensorNear<float>(
                           {3, 3, 1}, {1, 5.f / 3, 2, 7.f / 3, 3, 10.f / 3, 3, 11.f / 3, 4}, 1e-6));
  const Tensor bytes =
      Literal<uint8_t>({2, 3, 2}, {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120});
  TW_ASSERT_OK_AND_ASSIGN(Tensor as_float, ToFloat(bytes));
  TW_ASSERT_OK_AND_ASSIGN(Tensor from_bytes, ResizeBilinear(bytes, 5, 4));
  TW_ASSERT_OK_AND_ASSIGN(Tensor from_floats, ResizeBilinear(as_float, 5, 4));
  EXPECT_THAT(from_bytes, TensorEq(from_floats));
  TW_ASSERT_OK_AND_ASSIGN(Tensor flipped, FlipLeftRight(as_float));
  TW_ASSERT_OK_AND_ASSIGN(Tensor flip_first, ResizeBilinear(flipped, 5, 4));
  TW_ASSERT_OK_AND_ASSIGN(Tensor means_after, SubtractChannelMeans(flip_first, {1.5f, -2}));
  ResizeOptions options;
  options.flip_left_right = true;
  options.subtract_means = {1.5f, -2};
  TW_ASSERT_OK_AND_ASSIGN(Tensor one_pass, ResizeBilinear(bytes, 5, 4, options));
  EXPECT_THAT(one_pass, TensorEq(means_after));
  options.subtract_means = {1};
  EXPECT_THAT(ResizeBilinear(bytes, 5, 4, options).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "1 means for an image of 2"));
}

}  // namespace
}  // namespace image
}  // namespace data
}  // namespace towerflow
