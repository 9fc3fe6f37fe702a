// ExtractGlimpse and ExtractGlimpseV2 (glimpse_ops.cc) against TensorFlow
// 2.21's windows and messages (tf.raw_ops on these inputs; zero noise, as
// TF's other noise is not seeded).
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// [2, 5, 6, 2], values 0..119.
Tensor Images() {
  std::vector<float> v(120);
  for (int i = 0; i < 120; ++i) v[i] = static_cast<float>(i);
  return Literal<float>({2, 5, 6, 2}, v);
}

absl::StatusOr<std::vector<Tensor>> Glimpse(const std::string& op, const Tensor& offsets,
                                            std::vector<int32_t> size, bool centered,
                                            bool normalized, const std::string& noise = "zero",
                                            const Tensor& images = Images()) {
  KernelRunner k(op);
  k.Attr("centered", centered).Attr("normalized", normalized).Attr("noise", noise);
  k.Attr("uniform_noise", noise.empty() || noise == "uniform");
  return k.Run({images, Literal<int32_t>({static_cast<int64_t>(size.size())}, size), offsets});
}

Tensor GlimpseOk(const std::string& op, const Tensor& offsets, std::vector<int32_t> size,
                 bool centered, bool normalized) {
  absl::StatusOr<std::vector<Tensor>> out = Glimpse(op, offsets, size, centered, normalized);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Each placement of V1 and V2 (normalized offsets (0, 0) and (0.5, -0.25),
// pixel offsets (1, 2) and (2.5, 1.5)), a 3 x 2 window.
TEST(ExtractGlimpseTest, PlacesTheWindowAsTensorFlow) {
  const Tensor normalized = Literal<float>({2, 2}, {0, 0, 0.5f, -0.25f});
  const Tensor pixels = Literal<float>({2, 2}, {1, 2, 2.5f, 1.5f});
  const std::vector<float> middle = {16, 17, 18, 19, 28, 29, 30,  31,  40,  41,  42,  43,
                                     86, 87, 88, 89, 98, 99, 100, 101, 110, 111, 112, 113};
  for (const char* op : {"ExtractGlimpse", "ExtractGlimpseV2"}) {
    EXPECT_THAT(GlimpseOk(op, normalized, {3, 2}, true, true),
                TensorIs<float>({2, 3, 2, 2}, middle))
        << op;
  }
  EXPECT_THAT(
      GlimpseOk("ExtractGlimpse", pixels, {3, 2}, true, false),
      TensorIs<float>({2, 3, 2, 2}, {18, 19, 20, 21, 30,  31,  32,  33,  42,  43,  44,  45,
                                     88, 89, 90, 91, 100, 101, 102, 103, 112, 113, 114, 115}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpse", normalized, {3, 2}, false, true),
              TensorIs<float>({2, 3, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 12, 13,
                                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpse", pixels, {3, 2}, false, false),
              TensorIs<float>({2, 3, 2, 2}, {2,  3,  4,  5,  14, 15, 16, 17, 26, 27, 28, 29,
                                             72, 73, 74, 75, 84, 85, 86, 87, 96, 97, 98, 99}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpseV2", pixels, {3, 2}, true, false),
              TensorIs<float>({2, 3, 2, 2}, {46, 47, 0, 0, 58, 59, 0, 0, 0, 0, 0, 0,
                                             0,  0,  0, 0, 0,  0,  0, 0, 0, 0, 0, 0}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpseV2", normalized, {3, 2}, false, true),
              TensorIs<float>({2, 3, 2, 2}, {0, 1, 2,  3,  12, 13, 14, 15, 24, 25, 26,  27,
                                             0, 0, 84, 85, 0,  0,  96, 97, 0,  0,  108, 109}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpseV2", pixels, {3, 2}, false, false),
              TensorIs<float>({2, 3, 2, 2}, middle));
  // A 3 x 4 window near the corners (V2) and inside (V1).
  EXPECT_THAT(
      GlimpseOk("ExtractGlimpseV2", Literal<float>({2, 2}, {0.9f, 0.9f, -1, 1}), {3, 4}, true,
                true),
      TensorIs<float>({2, 3, 4, 2}, {42, 43, 44, 45, 46, 47, 0, 0, 54, 55, 56, 57, 58, 59, 0, 0,
                                     0,  0,  0,  0,  0,  0,  0, 0, 0,  0,  0,  0,  0,  0,  0, 0,
                                     68, 69, 70, 71, 0,  0,  0, 0, 80, 81, 82, 83, 0,  0,  0, 0}));
  EXPECT_THAT(GlimpseOk("ExtractGlimpse", Literal<float>({2, 2}, {0.3f, 0.1f, -0.2f, 0.7f}), {3, 4},
                        true, true),
              TensorIs<float>({2, 3, 4, 2},
                              {14, 15, 16, 17, 18, 19, 20, 21, 26, 27, 28, 29, 30, 31, 32, 33,
                               38, 39, 40, 41, 42, 43, 44, 45, 66, 67, 68, 69, 70, 71, 0,  0,
                               78, 79, 80, 81, 82, 83, 0,  0,  90, 91, 92, 93, 94, 95, 0,  0}));
  // Offsets that are not finite or far away put the window outside.
  EXPECT_THAT(
      GlimpseOk("ExtractGlimpse", Literal<float>({2, 2}, {std::nanf(""), 0.1f, 1e10f, 0.7f}),
                {3, 2}, true, true),
      TensorIs<float>({2, 3, 2, 2}, std::vector<float>(24, 0)));
  EXPECT_EQ(GlimpseOk("ExtractGlimpse", normalized, {0, 2}, true, true).shape(),
            TensorShape({2, 0, 2, 2}));
}

// Noise lies in the image's range (uniform: over all channels; gaussian:
// each channel's); the window's pixels are the image's.
TEST(ExtractGlimpseTest, NoiseStaysInTheImagesRange) {
  const Tensor offsets = Literal<float>({2, 2}, {0.9f, 0.9f, -1, 1});
  for (const std::string noise : {"uniform", "gaussian"}) {
    absl::StatusOr<std::vector<Tensor>> out =
        Glimpse("ExtractGlimpseV2", offsets, {3, 4}, true, true, noise);
    ASSERT_TRUE(out.ok()) << out.status();
    const float* g = (*out)[0].data<float>();
    EXPECT_EQ(g[0], 42);
    EXPECT_EQ(g[11], 57);
    for (int b = 0; b < 2; ++b) {
      for (int i = 0; i < 24; ++i) {
        const float v = g[b * 24 + i];
        const int ch = i % 2;
        const float lo = noise == "uniform" ? 60 * b : 60 * b + ch;
        const float hi = noise == "uniform" ? 60 * b + 59 : 60 * b + 58 + ch;
        EXPECT_GE(v, lo) << noise << " " << b << " " << i;
        EXPECT_LE(v, hi) << noise << " " << b << " " << i;
      }
    }
  }
}

TEST(ExtractGlimpseTest, RefusesAsTensorFlow) {
  const Tensor offsets = Literal<float>({2, 2}, {0, 0, 0, 0});
  KernelRunner both("ExtractGlimpseV2");
  both.Attr("noise", "zero");
  EXPECT_THAT(both.Run({Images(), Literal<int32_t>({2}, {3, 2}), offsets}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "The uniform_noise and noise could not be specified at the same time"));
  KernelRunner bad("ExtractGlimpse");
  bad.Attr("noise", "bad").Attr("uniform_noise", false);
  EXPECT_THAT(bad.Run({Images(), Literal<int32_t>({2}, {3, 2}), offsets}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "The noise could only be uniform, gaussian, or zero, gotbad"));
  EXPECT_THAT(Glimpse("ExtractGlimpse", Literal<float>({1, 2}, {0, 0}), {3, 2}, true, true),
              StatusIs(absl::StatusCode::kInvalidArgument, "first dimension should be batch[1,2]"));
  EXPECT_THAT(Glimpse("ExtractGlimpse", offsets, {3}, true, true),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "input must be a vector of size 2 (height, width)[1]"));
  EXPECT_THAT(
      Glimpse("ExtractGlimpse", Literal<float>({2, 3}, {0, 0, 0, 0, 0, 0}), {3, 2}, true, true),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "second dimension should be of size 2 (y,x)[2,3]"));
  EXPECT_THAT(Glimpse("ExtractGlimpse", offsets, {3, 2}, true, true, "zero",
                      Tensor(DT_FLOAT, TensorShape({5, 6, 2}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "input must be 4-dimensional (batch_size, height, width, depth)[5,6,2]"));
  EXPECT_THAT(Glimpse("ExtractGlimpse", offsets, {-1, 2}, true, true),
              StatusIs(absl::StatusCode::kInvalidArgument, "glimpse size must not be negative"));
}

}  // namespace
}  // namespace towerflow
