// ImageProjectiveTransformV2/V3 (projective_transform_ops.cc) with
// TensorFlow's pixels (TF 2.21, tf.raw_ops) for every interpolation and fill
// mode, and TF's messages.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

struct Expected {
  std::string interpolation, fill_mode;
  std::vector<float> values;
};

// Two 4x5x2 images (i / 10) warped to 3x6: a perspective transform for the
// first, a translation by (1.5, -0.7) for the second; fill_value -1.
TEST(ProjectiveTransformTest, EveryModeAsTensorFlow) {
  Tensor images(DT_FLOAT, TensorShape({2, 4, 5, 2}));
  for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = i / 10.0f;
  const Tensor transforms = Literal<float>(
      {2, 8}, {0.9f, 0.2f, 0.5f, -0.1f, 1.1f, -0.3f, 0.02f, -0.01f, 1, 0, -1.5f, 0, 1, 0.7f, 0, 0});
  const std::vector<Expected> expected = {
      {"NEAREST",
       "CONSTANT",
       {0.2f, 0.3f, 0.2f, 0.3f, 0.4f, 0.5f, -1,   -1,   -1,   -1,   -1,   -1,   1.2f, 1.3f, 1.4f,
        1.5f, 1.4f, 1.5f, 0.6f, 0.7f, 0.8f, 0.9f, -1,   -1,   2.2f, 2.3f, 2.4f, 2.5f, 2.6f, 2.7f,
        2.6f, 2.7f, 1.8f, 1.9f, -1,   -1,   -1,   -1,   -1,   -1,   5.2f, 5.3f, 5.4f, 5.5f, 5.6f,
        5.7f, 5.8f, 5.9f, -1,   -1,   -1,   -1,   6.2f, 6.3f, 6.4f, 6.5f, 6.6f, 6.7f, 6.8f, 6.9f,
        -1,   -1,   -1,   -1,   7.2f, 7.3f, 7.4f, 7.5f, 7.6f, 7.7f, 7.8f, 7.9f}},
      {"NEAREST",
       "NEAREST",
       {0.2f, 0.3f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.8f, 0.9f, 1.2f, 1.3f, 1.4f,
        1.5f, 1.4f, 1.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.8f, 0.9f, 2.2f, 2.3f, 2.4f, 2.5f, 2.6f, 2.7f,
        2.6f, 2.7f, 1.8f, 1.9f, 1.8f, 1.9f, 5,    5.1f, 5,    5.1f, 5.2f, 5.3f, 5.4f, 5.5f, 5.6f,
        5.7f, 5.8f, 5.9f, 6,    6.1f, 6,    6.1f, 6.2f, 6.3f, 6.4f, 6.5f, 6.6f, 6.7f, 6.8f, 6.9f,
        7,    7.1f, 7,    7.1f, 7.2f, 7.3f, 7.4f, 7.5f, 7.6f, 7.7f, 7.8f, 7.9f}},
      {"NEAREST",
       "REFLECT",
       {0.2f, 0.3f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.8f, 0.9f, 1.2f, 1.3f, 1.4f,
        1.5f, 1.4f, 1.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.8f, 0.9f, 2.2f, 2.3f, 2.4f, 2.5f, 2.6f, 2.7f,
        2.6f, 2.7f, 1.8f, 1.9f, 1.8f, 1.9f, 5.2f, 5.3f, 5,    5.1f, 5.2f, 5.3f, 5.4f, 5.5f, 5.6f,
        5.7f, 5.8f, 5.9f, 6.2f, 6.3f, 6,    6.1f, 6.2f, 6.3f, 6.4f, 6.5f, 6.6f, 6.7f, 6.8f, 6.9f,
        7.2f, 7.3f, 7,    7.1f, 7.2f, 7.3f, 7.4f, 7.5f, 7.6f, 7.7f, 7.8f, 7.9f}},
      {"NEAREST", "WRAP", {3.2f, 3.3f, 3.2f, 3.3f, 3.4f, 3.5f, 3.6f, 3.7f, 3.8f, 3.9f, 3,    3.1f,
                           1.2f, 1.3f, 1.4f, 1.5f, 1.4f, 1.5f, 0.6f, 0.7f, 0,    0.1f, 0,    0.1f,
                           2.2f, 2.3f, 2.4f, 2.5f, 2.6f, 2.7f, 2.6f, 2.7f, 1,    1.1f, 1,    1.1f,
                           5.8f, 5.9f, 5.8f, 5.9f, 5.2f, 5.3f, 5.4f, 5.5f, 5.6f, 5.7f, 5.8f, 5.9f,
                           6.8f, 6.9f, 6.8f, 6.9f, 6.2f, 6.3f, 6.4f, 6.5f, 6.6f, 6.7f, 6.8f, 6.9f,
                           7.8f, 7.9f, 7.8f, 7.9f, 7.2f, 7.3f, 7.4f, 7.5f, 7.6f, 7.7f, 7.8f, 7.9f}},
      {"BILINEAR",
       "CONSTANT",
       {-0.23f,      -0.16f,      -0.225298f,  -0.1645136f, -0.2511095f, -0.1991864f, -0.3040228f,
        -0.2606266f, -0.3810014f, -0.3458163f, -0.7768595f, -0.7644628f, 0.949495f,   1.049495f,
        1.009901f,   1.109901f,   1.067961f,   1.167961f,   1.12381f,    1.223809f,   1.133199f,
        1.23133f,    -0.5240291f, -0.5010933f, 2.122449f,   2.222449f,   2.16f,       2.26f,
        2.196079f,   2.296078f,   2.230769f,   2.33077f,    1.426486f,   1.501958f,   -1,
        -1,          -1,          -1,          1.85f,       1.9f,        4.8f,        4.9f,
        5,           5.1f,        5.2f,        5.3f,        5.4f,        5.5f,        -1,
        -1,          2.35f,       2.4f,        5.8f,        5.9f,        6,           6.1f,
        6.2f,        6.3f,        6.4f,        6.5f,        -1,          -1,          2.85f,
        2.9f,        6.8f,        6.9f,        7,           7.1f,        7.2f,        7.3f,
        7.4f,        7.5f}},
      {"BILINEAR",
       "NEAREST",
       {0.1f,       0.2f,       0.2745098f, 0.3745098f, 0.4423077f, 0.5423077f, 0.6037737f,
        0.7037736f, 0.7592592f, 0.8592592f, 0.8f,       0.9f,       0.949495f,  1.049495f,
        1.009901f,  1.109901f,  1.067961f,  1.167961f,  1.12381f,   1.223809f,  1.173832f,
        1.273832f,  1.075229f,  1.175229f,  2.122449f,  2.222449f,  2.16f,      2.26f,
        2.196079f,  2.296078f,  2.230769f,  2.33077f,   2.215094f,  2.315094f,  2.096296f,
        2.196296f,  4.7f,       4.8f,       4.7f,       4.8f,       4.8f,       4.9f,
        5,          5.1f,       5.2f,       5.3f,       5.4f,       5.5f,       5.7f,
        5.8f,       5.7f,       5.8f,       5.8f,       5.9f,       6,          6.1f,
        6.2f,       6.3f,       6.4f,       6.5f,       6.7f,       6.8f,       6.7f,
        6.8f,       6.8f,       6.9f,       7,          7.1f,       7.2f,       7.3f,
        7.4f,       7.5f}},
      {"BILINEAR",
       "REFLECT",
       {0.1f,       0.2f,       0.2745098f, 0.3745098f, 0.4423077f, 0.5423077f, 0.6037737f,
        0.7037736f, 0.7592592f, 0.8592592f, 0.8f,       0.9f,       0.949495f,  1.049495f,
        1.009901f,  1.109901f,  1.067961f,  1.167961f,  1.12381f,   1.223809f,  1.173832f,
        1.273832f,  1.075229f,  1.175229f,  2.122449f,  2.222449f,  2.16f,      2.26f,
        2.196079f,  2.296078f,  2.230769f,  2.33077f,   2.215094f,  2.315094f,  2.096296f,
        2.196296f,  4.8f,       4.9f,       4.7f,       4.8f,       4.8f,       4.9f,
        5,          5.1f,       5.2f,       5.3f,       5.4f,       5.5f,       5.8f,
        5.9f,       5.7f,       5.8f,       5.8f,       5.9f,       6,          6.1f,
        6.2f,       6.3f,       6.4f,       6.5f,       6.8f,       6.9f,       6.7f,
        6.8f,       6.8f,       6.9f,       7,          7.1f,       7.2f,       7.3f,
        7.4f,       7.5f}},
      {"BILINEAR",
       "WRAP",
       {3.1f,      3.2f,      3.27451f,  3.37451f,  3.442308f,  3.542308f,  3.603773f,  3.703773f,
        3.759259f, 3.859259f, 3,         3.1f,      0.949495f,  1.049495f,  1.009901f,  1.109901f,
        1.067961f, 1.167961f, 1.12381f,  1.223809f, 0.3738318f, 0.4738318f, 0.2752294f, 0.3752294f,
        2.122449f, 2.222449f, 2.16f,     2.26f,     2.196079f,  2.296078f,  2.230769f,  2.33077f,
        1.415094f, 1.515094f, 1.296296f, 1.396296f, 5.4f,       5.5f,       5.5f,       5.6f,
        4.8f,      4.9f,      5,         5.1f,      5.2f,       5.3f,       5.4f,       5.5f,
        6.4f,      6.5f,      6.5f,      6.6f,      5.8f,       5.9f,       6,          6.1f,
        6.2f,      6.3f,      6.4f,      6.5f,      7.4f,       7.5f,       7.5f,       7.6f,
        6.8f,      6.9f,      7,         7.1f,      7.2f,       7.3f,       7.4f,       7.5f}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.interpolation + " " + e.fill_mode);
    KernelRunner r("ImageProjectiveTransformV3");
    r.Attr("interpolation", e.interpolation).Attr("fill_mode", e.fill_mode);
    EXPECT_THAT(RunOk(r, {images, transforms, Literal<int32_t>({2}, {3, 6}), Scalar<float>(-1)}),
                TensorNear(Literal<float>({2, 3, 6, 2}, e.values), 1e-5, 1e-5));
  }
}

TEST(ProjectiveTransformTest, IntegerPixelsTruncateAsTensorFlow) {
  Tensor images(DT_UINT8, TensorShape({1, 3, 3, 1}));
  for (int i = 0; i < 9; ++i) images.data<uint8_t>()[i] = static_cast<uint8_t>(30 * i);
  KernelRunner r("ImageProjectiveTransformV2");
  r.Attr("interpolation", "BILINEAR");
  EXPECT_THAT(
      RunOk(r,
            {images, Literal<float>({1, 8}, {0.9f, 0.2f, 0.5f, -0.1f, 1.1f, -0.3f, 0.02f, -0.01f}),
             Literal<int32_t>({2}, {3, 3})}),
      TensorIs<uint8_t>({1, 3, 3, 1}, {10, 25, 24, 93, 109, 64, 202, 216, 74}));
}

TEST(ProjectiveTransformTest, BadInputsGetTensorFlowsMessages) {
  const Tensor images(DT_FLOAT, TensorShape({2, 4, 5, 2}));
  const Tensor one = Literal<float>({1, 8}, {1, 0, 0, 0, 1, 0, 0, 0});
  const Tensor size = Literal<int32_t>({2}, {3, 6});
  KernelRunner r("ImageProjectiveTransformV2");
  r.Attr("interpolation", "NEAREST");
  EXPECT_THAT(r.Run({Tensor(DT_FLOAT, TensorShape({4, 5, 2})), one, size}).status().message(),
              HasSubstr("Input images must have rank 4"));
  EXPECT_THAT(r.Run({images, Tensor(DT_FLOAT, TensorShape({2, 7})), size}).status().message(),
              HasSubstr("Input transform should be num_images x 8 or 1 x 8"));
  EXPECT_THAT(r.Run({images, one, Literal<int32_t>({2}, {3, 0})}).status().message(),
              HasSubstr("output dimensions must be positive"));
  KernelRunner cubic("ImageProjectiveTransformV2");
  cubic.Attr("interpolation", "CUBIC");
  EXPECT_THAT(cubic.Run({images, one, size}).status().message(),
              HasSubstr("Invalid interpolation CUBIC"));
}

}  // namespace
}  // namespace towerflow
