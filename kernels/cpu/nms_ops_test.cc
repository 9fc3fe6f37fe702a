// NonMaxSuppression V1-V5 and WithOverlaps against TensorFlow 2.21's
// selections, scores and messages (tf.raw_ops on these boxes).
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// Three overlapping boxes near 0, two near 10, one alone at 100.
Tensor Boxes() {
  return Literal<float>({6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
}
Tensor Scores() { return Literal<float>({6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

TEST(NonMaxSuppressionTest, HardSuppressionMatchesTensorFlow) {
  KernelRunner v1("NonMaxSuppression");
  v1.Attr("iou_threshold", 0.5f);
  EXPECT_THAT(RunOk(v1, {Boxes(), Scores(), Scalar<int32_t>(3)}),
              TensorIs<int32_t>({3}, {3, 0, 5}));
  KernelRunner v2("NonMaxSuppressionV2");
  EXPECT_THAT(RunOk(v2, {Boxes(), Scores(), Scalar<int32_t>(10), Scalar<float>(0.5f)}),
              TensorIs<int32_t>({3}, {3, 0, 5}));
  KernelRunner v3("NonMaxSuppressionV3");
  EXPECT_THAT(
      RunOk(v3, {Boxes(), Scores(), Scalar<int32_t>(10), Scalar<float>(0.5f), Scalar<float>(0.4f)}),
      TensorIs<int32_t>({2}, {3, 0}));
  // Equal scores go by index; identical boxes suppress each other.
  EXPECT_THAT(RunOk(v3, {Literal<float>({3, 4}, {0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1}),
                         Literal<float>({3}, {0.5f, 0.5f, 0.5f}), Scalar<int32_t>(3),
                         Scalar<float>(0.5f), Scalar<float>(-1)}),
              TensorIs<int32_t>({2}, {0, 1}));
  // Corners in either order.
  EXPECT_THAT(
      RunOk(v2, {Literal<float>({2, 4}, {1, 1, 0, 0, 0, 0, 1, 1}),
                 Literal<float>({2}, {0.5f, 0.6f}), Scalar<int32_t>(3), Scalar<float>(0.5f)}),
      TensorIs<int32_t>({1}, {1}));
  KernelRunner v4("NonMaxSuppressionV4");
  v4.Attr("pad_to_max_output_size", true);
  auto out =
      v4.Run({Boxes(), Scores(), Scalar<int32_t>(5), Scalar<float>(0.5f), Scalar<float>(0.4f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({5}, {3, 0, 0, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({}, {2}));
}

TEST(NonMaxSuppressionTest, SoftNmsMatchesTensorFlow) {
  KernelRunner v5("NonMaxSuppressionV5");
  auto out = v5.Run({Boxes(), Scores(), Scalar<int32_t>(6), Scalar<float>(1), Scalar<float>(0),
                     Scalar<float>(0.5f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({6}, {3, 0, 1, 5, 4, 2}));
  EXPECT_THAT((*out)[1], TensorIs<float>({6}, {0.949999988079071f, 0.8999999761581421f,
                                               0.38400354981422424f, 0.30000001192092896f,
                                               0.25600260496139526f, 0.19697244465351105f}));
  EXPECT_THAT((*out)[2], TensorIs<int32_t>({}, {6}));
  KernelRunner hard("NonMaxSuppressionV5");
  hard.Attr("pad_to_max_output_size", true);
  out = hard.Run({Boxes(), Scores(), Scalar<int32_t>(6), Scalar<float>(0.5f), Scalar<float>(0),
                  Scalar<float>(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({6}, {3, 0, 5, 0, 0, 0}));
  EXPECT_THAT((*out)[1], TensorIs<float>({6}, {0.949999988079071f, 0.8999999761581421f,
                                               0.30000001192092896f, 0, 0, 0}));
  EXPECT_THAT((*out)[2], TensorIs<int32_t>({}, {3}));
  EXPECT_THAT(v5.Run({Boxes(), Scores(), Scalar<int32_t>(3), Scalar<float>(0.5f), Scalar<float>(0),
                      Scalar<float>(-1)}),
              StatusIs(kInvalid, "soft_nms_sigma_val must be >= 0"));
}

TEST(NonMaxSuppressionTest, BadInputsAreTensorFlowsErrors) {
  KernelRunner v2("NonMaxSuppressionV2");
  EXPECT_THAT(v2.Run({Boxes(), Scores(), Scalar<int32_t>(3), Scalar<float>(1.5f)}),
              StatusIs(kInvalid, "iou_threshold must be in [0, 1]"));
  EXPECT_THAT(v2.Run({Boxes(), Scores(), Scalar<int32_t>(-1), Scalar<float>(0.5f)}),
              StatusIs(kInvalid, "output size must be non-negative"));
  EXPECT_THAT(v2.Run({Literal<float>({2, 3}, {0, 0, 1, 0, 0, 1}), Literal<float>({2}, {1, 2}),
                      Scalar<int32_t>(3), Scalar<float>(0.5f)}),
              StatusIs(kInvalid, "boxes must have 4 columns (Dimension must be 4 but is 3)"));
  EXPECT_THAT(v2.Run({Boxes(), Literal<float>({5}, {1, 2, 3, 4, 5}), Scalar<int32_t>(3),
                      Scalar<float>(0.5f)}),
              StatusIs(kInvalid,
                       "scores has incompatible shape (Dimensions must be equal, but "
                       "are 6 and 5)"));
  EXPECT_THAT(v2.Run({Boxes(), Scores(), Literal<int32_t>({1}, {3}), Scalar<float>(0.5f)}),
              StatusIs(kInvalid, "max_output_size must be 0-D, got shape [1]"));
  EXPECT_THAT(v2.Run({Literal<float>({6}, {0, 0, 0, 0, 0, 0}), Scores(), Scalar<int32_t>(3),
                      Scalar<float>(0.5f)}),
              StatusIs(kInvalid, "boxes must be 2-D[6] (Shape must be rank 2 but is rank 1)"));
  KernelRunner v1("NonMaxSuppression");
  v1.Attr("iou_threshold", 2.0f);
  EXPECT_THAT(v1.Run({Boxes(), Scores(), Scalar<int32_t>(3)}),
              StatusIs(kInvalid, "iou_threshold must be in [0, 1]"));
}

// One image, three boxes, two classes (TF 2.21's outputs): class 0 keeps
// boxes 0 and 2 (box 1 overlaps box 0 by 0.9), class 1 boxes 1 and 2; the
// four picks by score, padded to max_total_size.
// tf.image.non_max_suppression_overlaps: the similarities given.
TEST(NonMaxSuppressionTest, WithOverlapsMatchesTensorFlow) {
  const Tensor overlaps = Literal<float>(
      {4, 4}, {1, .7f, .2f, .4f, .7f, 1, .1f, .6f, .2f, .1f, 1, .3f, .4f, .6f, .3f, 1});
  const Tensor scores = Literal<float>({4}, {.9f, .8f, .7f, .95f});
  const auto select = [&](int32_t max, float threshold, float score_threshold) {
    KernelRunner r("NonMaxSuppressionWithOverlaps");
    return RunOk(r, {overlaps, scores, Scalar<int32_t>(max), Scalar<float>(threshold),
                     Scalar<float>(score_threshold)});
  };
  EXPECT_THAT(select(4, .5f, -1), TensorIs<int32_t>({3}, {3, 0, 2}));
  EXPECT_THAT(select(2, .5f, -1), TensorIs<int32_t>({2}, {3, 0}));
  EXPECT_THAT(select(4, .35f, .75f), TensorIs<int32_t>({1}, {3}));
  EXPECT_THAT(select(4, 1.5f, 0), TensorIs<int32_t>({4}, {3, 0, 1, 2}));
  KernelRunner r("NonMaxSuppressionWithOverlaps");
  const auto run = [&](const Tensor& o, const Tensor& s, int32_t max) {
    return r.Run({o, s, Scalar<int32_t>(max), Scalar<float>(.5f), Scalar<float>(0)}).status();
  };
  EXPECT_THAT(run(Literal<float>({4}, {1, 1, 1, 1}), scores, 2),
              StatusIs(kInvalid, "overlaps must be 2-D[4]"));
  EXPECT_THAT(run(Literal<float>({4, 3}, std::vector<float>(12, 1.0f)), scores, 2),
              StatusIs(kInvalid, "overlaps must be square[4,3]"));
  EXPECT_THAT(run(overlaps, Literal<float>({3}, {1, 1, 1}), 2),
              StatusIs(kInvalid, "(Dimensions must be equal, but are 4 and 3)"));
  EXPECT_THAT(run(overlaps, scores, -1), StatusIs(kInvalid, "output size must be non-negative"));
}

TEST(NmsOpsTest, CombinedNonMaxSuppressionMatchesTensorFlow) {
  const Tensor boxes =
      Literal<float>({1, 3, 1, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0.5f, 0.5f, 0.9f, 0.9f});
  const Tensor scores = Literal<float>({1, 3, 2}, {0.9f, 0.1f, 0.8f, 0.7f, 0.3f, 0.6f});
  const auto run = [&](bool pad_per_class, bool clip) {
    KernelRunner r("CombinedNonMaxSuppression");
    r.Attr("pad_per_class", pad_per_class).Attr("clip_boxes", clip);
    auto out = r.Run({boxes, scores, Scalar<int32_t>(2), Scalar<int32_t>(5), Scalar<float>(0.5f),
                      Scalar<float>(0.2f)});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<Tensor>(4);
  };
  std::vector<Tensor> out = run(false, true);
  EXPECT_THAT(out[0],
              TensorIs<float>({1, 5, 4}, {0,    0,    1,    1,    0,    0.1f, 1, 1, 0.5f, 0.5f,
                                          0.9f, 0.9f, 0.5f, 0.5f, 0.9f, 0.9f, 0, 0, 0,    0}));
  EXPECT_THAT(out[1], TensorIs<float>({1, 5}, {0.9f, 0.7f, 0.6f, 0.3f, 0}));
  EXPECT_THAT(out[2], TensorIs<float>({1, 5}, {0, 1, 1, 0, 0}));
  EXPECT_THAT(out[3], TensorIs<int32_t>({1}, {4}));
  // Padded to min(5, 2 per class * 2 classes); unclipped corners.
  out = run(true, false);
  EXPECT_THAT(out[0], TensorIs<float>({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0.5f, 0.5f, 0.9f,
                                                  0.9f, 0.5f, 0.5f, 0.9f, 0.9f}));
  EXPECT_THAT(out[3], TensorIs<int32_t>({1}, {4}));

  const auto fails = [&](int32_t per_class, int32_t total, float iou) {
    KernelRunner r("CombinedNonMaxSuppression");
    return r
        .Run({boxes, scores, Scalar<int32_t>(per_class), Scalar<int32_t>(total), Scalar<float>(iou),
              Scalar<float>(0.2f)})
        .status();
  };
  EXPECT_THAT(fails(0, 5, 0.5f), StatusIs(kInvalid, "max_size_per_class must be positive"));
  EXPECT_THAT(fails(2, 0, 0.5f), StatusIs(kInvalid, "max_total_size must be > 0"));
  EXPECT_THAT(fails(2, 5, 1.5f), StatusIs(kInvalid, "iou_threshold must be in [0, 1]"));
  KernelRunner bad("CombinedNonMaxSuppression");
  EXPECT_THAT(
      bad.Run({Literal<float>({1, 3, 4}, std::vector<float>(12)), scores, Scalar<int32_t>(2),
               Scalar<int32_t>(5), Scalar<float>(0.5f), Scalar<float>(0.2f)})
          .status(),
      StatusIs(kInvalid, "boxes must be 4-D[1,3,4]"));
}

}  // namespace
}  // namespace towerflow
