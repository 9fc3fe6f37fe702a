// SampleDistortedBoundingBox(V2) against TensorFlow 2.21: the same seeds
// give TF's crops, call after call (a tf.compat.v1 Session running the op
// repeatedly; a call that fails still moves TF's stream on), and TF's
// errors.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

const Tensor kSize = Literal<int32_t>({3}, {375, 500, 3});
const Tensor kSquare = Literal<int32_t>({3}, {224, 224, 3});
const Tensor kOneBox = Literal<float>({1, 1, 4}, {0.1f, 0.2f, 0.8f, 0.9f});
const Tensor kNoBox = Tensor(DT_FLOAT, TensorShape({1, 0, 4}));
const Tensor kTwoBoxes = Literal<float>({1, 2, 4}, {0, 0, 1, 1, 0.3f, 0.3f, 0.5f, 0.6f});

struct Crop {
  std::vector<int32_t> begin, size;
  std::vector<float> box;
};

void ExpectCrop(KernelRunner& r, const std::vector<Tensor>& inputs, const Crop& want) {
  absl::StatusOr<std::vector<Tensor>> out = r.Run(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({3}, want.begin));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({3}, want.size));
  EXPECT_THAT((*out)[2], TensorNear<float>({1, 1, 4}, want.box, 1e-7));
}

TEST(SampleDistortedBoundingBoxTest, SeedsGiveTensorFlowsCrops) {
  KernelRunner r("SampleDistortedBoundingBoxV2");
  r.Attr("seed", int64_t{1}).Attr("seed2", int64_t{2});
  const Tensor covered = Scalar<float>(0.1f);
  ExpectCrop(r, {kSize, kOneBox, covered},
             {{32, 89, 0}, {233, 230, -1}, {0.08533333f, 0.178f, 0.70666665f, 0.638f}});
  ExpectCrop(r, {kSize, kOneBox, covered},
             {{71, 182, 0}, {236, 232, -1}, {0.18933333f, 0.364f, 0.81866664f, 0.828f}});
  // No box and use_image_if_no_bounding_boxes false: an error, twice; the
  // stream still moves on.
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(r.Run({kSize, kNoBox, covered}).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, "No bounding boxes provided"));
  }
  const Tensor most = Scalar<float>(0.9f);
  ExpectCrop(r, {kSquare, kTwoBoxes, most},
             {{37, 25, 0}, {106, 111, -1}, {0.16517857f, 0.11160714f, 0.63839287f, 0.60714287f}});
  ExpectCrop(r, {kSquare, kTwoBoxes, most},
             {{26, 18, 0}, {184, 153, -1}, {0.116071425f, 0.08035714f, 0.9375f, 0.76339287f}});
}

TEST(SampleDistortedBoundingBoxTest, RangesAndTheWholeImageAreTensorFlows) {
  KernelRunner r("SampleDistortedBoundingBoxV2");
  r.Attr("seed", int64_t{7})
      .Attr("seed2", int64_t{0})
      .Attr("aspect_ratio_range", std::vector<float>{0.5f, 2.0f})
      .Attr("area_range", std::vector<float>{0.08f, 1.0f})
      .Attr("max_attempts", int64_t{10})
      .Attr("use_image_if_no_bounding_boxes", true);
  const Tensor covered = Scalar<float>(0.1f);
  ExpectCrop(r, {kSize, kOneBox, covered},
             {{6, 2, 0}, {297, 484, -1}, {0.016f, 0.004f, 0.808f, 0.972f}});
  ExpectCrop(r, {kSize, kOneBox, covered},
             {{80, 341, 0}, {257, 153, -1}, {0.21333334f, 0.682f, 0.8986667f, 0.988f}});
  ExpectCrop(r, {kSize, kNoBox, covered},
             {{113, 285, 0}, {212, 129, -1}, {0.30133334f, 0.57f, 0.8666667f, 0.828f}});
  ExpectCrop(r, {kSize, kNoBox, covered},
             {{64, 4, 0}, {244, 482, -1}, {0.17066666f, 0.008f, 0.82133335f, 0.972f}});
  ExpectCrop(r, {kSquare, kTwoBoxes, Scalar<float>(0.9f)},
             {{56, 46, 0}, {116, 145, -1}, {0.25f, 0.20535715f, 0.76785713f, 0.8526786f}});
}

// tf.image.stateless_sample_distorted_bounding_box: TF's crops for the
// seeds, the same on every call.
TEST(SampleDistortedBoundingBoxTest, StatelessSeedsGiveTensorFlowsCrops) {
  KernelRunner r("StatelessSampleDistortedBoundingBox");
  const Tensor size = Literal<int32_t>({3}, {40, 60, 3});
  const Tensor box = Literal<float>({1, 1, 4}, {0.1f, 0.2f, 0.6f, 0.7f});
  const Tensor covered = Scalar<float>(0.1f);
  for (int call = 0; call < 2; ++call) {
    ExpectCrop(r, {size, box, covered, Literal<int32_t>({2}, {1, 2})},
               {{0, 3, 0}, {39, 48, -1}, {0.0f, 0.05f, 0.975f, 0.85f}});
  }
  ExpectCrop(r, {size, box, covered, Literal<int32_t>({2}, {7, 11})},
             {{2, 13, 0}, {28, 33, -1}, {0.05f, 0.21666667f, 0.75f, 0.76666665f}});
  KernelRunner whole("StatelessSampleDistortedBoundingBox");
  whole.Attr("aspect_ratio_range", std::vector<float>{0.5f, 2.0f})
      .Attr("area_range", std::vector<float>{0.3f, 0.9f})
      .Attr("max_attempts", int64_t{5})
      .Attr("use_image_if_no_bounding_boxes", true);
  absl::StatusOr<std::vector<Tensor>> out =
      whole.Run({Literal<int64_t>({3}, {40, 60, 3}), Tensor(DT_FLOAT, TensorShape({1, 0, 4})),
                 Scalar<float>(0.5f), Literal<int64_t>({2}, {3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({3}, {2, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<int64_t>({3}, {36, 60, -1}));
  EXPECT_THAT((*out)[2], TensorNear<float>({1, 1, 4}, {0.05f, 0.0f, 0.95f, 1.0f}, 1e-7));
  EXPECT_THAT(r.Run({size, box, covered, Literal<int32_t>({3}, {1, 2, 3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "seed must have shape [2], not [3]"));
}

TEST(SampleDistortedBoundingBoxTest, VersionOneTakesCoverageAsAnAttr) {
  KernelRunner r("SampleDistortedBoundingBox");
  r.Attr("seed", int64_t{3}).Attr("seed2", int64_t{4}).Attr("min_object_covered", 0.5f);
  ExpectCrop(r, {kSize, kOneBox},
             {{39, 74, 0}, {284, 365, -1}, {0.104f, 0.148f, 0.8613333f, 0.878f}});
  ExpectCrop(r, {kSize, kOneBox},
             {{2, 75, 0}, {367, 416, -1}, {0.0053333333f, 0.15f, 0.984f, 0.982f}});
}

TEST(SampleDistortedBoundingBoxTest, BadInputsAndAttrsAreErrors) {
  const Tensor covered = Scalar<float>(0.1f);
  KernelRunner outside("SampleDistortedBoundingBoxV2");
  EXPECT_THAT(outside.Run({kSize, Literal<float>({1, 1, 4}, {0, 0, 1.5f, 1}), covered}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "All bounding box coordinates must be in [0.0, 1.0]: 1.5"));
  KernelRunner size("SampleDistortedBoundingBoxV2");
  EXPECT_THAT(size.Run({Literal<int32_t>({2}, {3, 4}), kOneBox, covered}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "image_size"));
  KernelRunner negative("SampleDistortedBoundingBoxV2");
  EXPECT_THAT(
      negative.Run({kSize, kOneBox, Scalar<float>(-1)}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "Min object covered must be non-negative"));
  KernelRunner area("SampleDistortedBoundingBoxV2");
  area.Attr("area_range", std::vector<float>{0.5f, 1.5f});
  EXPECT_THAT(
      area.Run({kSize, kOneBox, covered}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "Area range must be less then or equal"));
  KernelRunner attempts("SampleDistortedBoundingBoxV2");
  attempts.Attr("max_attempts", int64_t{0});
  EXPECT_THAT(attempts.Run({kSize, kOneBox, covered}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Max attempts"));
}

// DrawBoundingBoxes and V2 against TF 2.21: a box inside, one across the
// top and right edges, an inverted one and one outside (both skipped), in
// TF's colours and in given ones.
Tensor DrawBoxes() {
  return Literal<float>({1, 4, 4}, {0.2f, 0.1f, 0.8f, 0.7f, -0.5f, 0.5f, 0.5f, 1.5f, 0.9f, 0.9f,
                                    0.1f, 0.1f, 2, 2, 3, 3});
}

TEST(DrawBoundingBoxesTest, MatchesTensorFlow) {
  const Tensor image = Literal<float>({1, 5, 6, 3}, std::vector<float>(90, 0));
  KernelRunner v1("DrawBoundingBoxes");
  EXPECT_THAT(RunOk(v1, {image, DrawBoxes()}),
              TensorIs<float>({1, 5, 6, 3},
                              {1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0,
                               0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0,
                               0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  KernelRunner v2("DrawBoundingBoxesV2");
  const float a = 0.25f, b = 0.5f, c = 0.75f;
  EXPECT_THAT(RunOk(v2, {image, DrawBoxes(), Literal<float>({2, 4}, {a, b, c, 1, 1, 0, 0, 0})}),
              TensorIs<float>({1, 5, 6, 3},
                              {a, b, c, a, b, c, 1, 0, 0, a, b, c, 0, 0, 0, 0, 0, 0, a, b, c, 0, 0,
                               0, 1, 0, 0, a, b, c, 0, 0, 0, 0, 0, 0, a, b, c, 0, 0, 0, 1, 0, 0, 1,
                               0, 0, 1, 0, 0, 1, 0, 0, a, b, c, a, b, c, a, b, c, a, b, c, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // Grey images draw in 1; no colours given means TF's.
  const Tensor whole = Literal<float>({1, 1, 4}, {0, 0, 1, 1});
  EXPECT_THAT(RunOk(v1, {Literal<float>({1, 4, 4, 1}, std::vector<float>(16, 0)), whole}),
              TensorIs<float>({1, 4, 4, 1}, {1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1}));
  EXPECT_THAT(RunOk(v2, {Literal<float>({1, 3, 3, 1}, std::vector<float>(9, 0)), whole,
                         Literal<float>({0, 4}, {})}),
              TensorIs<float>({1, 3, 3, 1}, {1, 1, 1, 1, 0, 1, 1, 1, 1}));
  EXPECT_THAT(v1.Run({Literal<float>({1, 4, 4, 2}, std::vector<float>(32, 0)), whole}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"));
  EXPECT_THAT(v2.Run({image, DrawBoxes(), Literal<float>({1, 2}, {1, 0})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "colors must have equal or more channels than the image provided: [1,2]"));
  EXPECT_THAT(v1.Run({image, Literal<float>({2, 1, 4}, std::vector<float>(8, 0))}),
              StatusIs(absl::StatusCode::kInvalidArgument, "The batch sizes should be the same"));
  EXPECT_THAT(v1.Run({image, Literal<float>({1, 1, 4}, {0, NAN, 1, 1})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "boxes must be finite"));
}

}  // namespace
}  // namespace towerflow
