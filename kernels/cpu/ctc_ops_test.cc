// CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder against TensorFlow 2.21's values and
// messages (tf.raw_ops on these inputs). The loss's gradient is checked
// against finite differences in ops/gradients.
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

// numpy's RandomState(0).randn(5, 2, 4): time-major logits, 4 classes (3 the
// blank).
Tensor Logits() {
  return Literal<float>(
      {5, 2, 4}, {1.7640524f,  0.4001572f,   0.978738f,    2.2408931f,   1.867558f,    -0.9772779f,
                  0.95008844f, -0.1513572f,  -0.10321885f, 0.41059852f,  0.14404356f,  1.4542735f,
                  0.7610377f,  0.121675014f, 0.44386324f,  0.33367434f,  1.4940791f,   -0.20515826f,
                  0.3130677f,  -0.85409576f, -2.5529897f,  0.6536186f,   0.8644362f,   -0.742165f,
                  2.2697546f,  -1.4543657f,  0.045758516f, -0.18718386f, 1.5327792f,   1.4693588f,
                  0.15494743f, 0.37816253f,  -0.88778573f, -1.9807965f,  -0.34791216f, 0.15634897f,
                  1.2302907f,  1.2023798f,   -0.3873268f,  -0.30230275f});
}

// Labels [[1, 1], [2, 0]] as a sparse tensor, with `values`.
absl::StatusOr<std::vector<Tensor>> Loss(std::vector<int32_t> values, std::vector<int32_t> lengths,
                                         bool merge = true, bool ignore_longer = false) {
  KernelRunner r("CTCLoss");
  r.Attr("ctc_merge_repeated", merge).Attr("ignore_longer_outputs_than_inputs", ignore_longer);
  return r.Run({Logits(), Literal<int64_t>({4, 2}, {0, 0, 0, 1, 1, 0, 1, 1}),
                Literal<int32_t>({4}, values), Literal<int32_t>({2}, lengths)});
}

TEST(CtcLossTest, LossAndGradientMatchTensorFlow) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Loss({1, 1, 2, 0}, {5, 3}));
  EXPECT_THAT(out[0], TensorNear<float>({2}, {7.560427188873291f, 4.413294792175293f}, 2e-6));
  // The second entry's gradient: 3 steps, then zeros.
  std::vector<float> second;
  for (int t = 0; t < 5; ++t) {
    for (int k = 0; k < 4; ++k) second.push_back(out[1].data<float>()[(t * 2 + 1) * 4 + k]);
  }
  EXPECT_THAT(Literal<float>({5, 4}, second), TensorNear<float>({5, 4},
                                                                {0.6287442f,
                                                                 0.036557585f,
                                                                 -0.72109807f,
                                                                 0.05579616f,
                                                                 -0.47044685f,
                                                                 0.1814367f,
                                                                 0.1393702f,
                                                                 0.14963956f,
                                                                 -0.28407365f,
                                                                 0.39638186f,
                                                                 0.4894076f,
                                                                 -0.60171616f,
                                                                 0,
                                                                 0,
                                                                 0,
                                                                 0,
                                                                 0,
                                                                 0,
                                                                 0,
                                                                 0},
                                                                1e-6));
  TW_ASSERT_OK_AND_ASSIGN(out, Loss({1, 1, 2, 0}, {5, 3}, /*merge=*/false));
  EXPECT_THAT(out[0], TensorNear<float>({2}, {6.811488628387451f, 4.633667469024658f}, 2e-6));
  // Too short for [2, 0], ignored: zero loss and gradient.
  TW_ASSERT_OK_AND_ASSIGN(out, Loss({1, 1, 2, 0}, {5, 1}, true, /*ignore_longer=*/true));
  EXPECT_FLOAT_EQ(out[0].data<float>()[1], 0);
}

TEST(CtcLossTest, TensorFlowsMessages) {
  EXPECT_THAT(Loss({1, 1, 2, 0}, {5, 1}),
              StatusIs(kInvalid,
                       "Not enough time for target transition sequence (required: 2, available: "
                       "1)1You can turn this error into a warning by using the flag "
                       "ignore_longer_outputs_than_inputs"));
  EXPECT_THAT(Loss({3, 1, 2, 0}, {5, 3}),
              StatusIs(kInvalid,
                       "Saw a non-null label (index >= num_classes - 1) following a null label, "
                       "batch: 0 num_classes: 4 labels: 3,1 labels seen so far: "));
  EXPECT_THAT(Loss({-1, 1, 2, 0}, {5, 3}),
              StatusIs(kInvalid, "All labels must be nonnegative integers, batch: 0 labels: -1,1"));
  EXPECT_THAT(Loss({1, 1, 2, 0}, {6, 3}), StatusIs(kInvalid, "sequence_length(0) <= 5"));
  KernelRunner unsorted("CTCLoss");
  EXPECT_THAT(unsorted.Run({Logits(), Literal<int64_t>({2, 2}, {0, 1, 0, 0}),
                            Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {5, 3})}),
              StatusIs(kInvalid,
                       "label SparseTensor is not valid: indices[1] = [0,0] is out of order. Many "
                       "sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create "
                       "a correctly ordered copy.\n\n"));
  KernelRunner empty("CTCLoss");
  EXPECT_THAT(empty.Run({Logits(), Literal<int64_t>({1, 2}, {0, 0}), Literal<int32_t>({1}, {1}),
                         Literal<int32_t>({2}, {5, 3})}),
              StatusIs(kInvalid, "Labels length is zero in batch 1"));
}

TEST(CtcGreedyDecoderTest, MatchesTensorFlow) {
  const auto decode = [](bool merge, int64_t blank) {
    KernelRunner r("CTCGreedyDecoder");
    r.Attr("merge_repeated", merge).Attr("blank_index", blank);
    return r.Run({Logits(), Literal<int32_t>({2}, {5, 3})});
  };
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, decode(false, -1));
  EXPECT_THAT(out[0], TensorIs<int64_t>({5, 2}, {0, 0, 0, 1, 1, 0, 1, 1, 1, 2}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({5}, {0, 0, 0, 0, 2}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 3}));
  EXPECT_THAT(out[3], TensorNear<float>({2, 1}, {-7.615349769592285f, -3.4930319786071777f}, 1e-6));
  TW_ASSERT_OK_AND_ASSIGN(out, decode(true, -1));
  EXPECT_THAT(out[1], TensorIs<int64_t>({3}, {0, 0, 2}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({2}, {2, 2}));
  TW_ASSERT_OK_AND_ASSIGN(out, decode(false, -2));
  EXPECT_THAT(out[1], TensorIs<int64_t>({7}, {3, 3, 0, 0, 3, 0, 0}));
  EXPECT_THAT(decode(false, 4),
              StatusIs(kInvalid, "blank_index expected to be between -4 and 3 but was 4"));
  KernelRunner long_sequence("CTCGreedyDecoder");
  EXPECT_THAT(long_sequence.Run({Logits(), Literal<int32_t>({2}, {6, 3})}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "sequence_length(0) <= 5"));
}

TEST(CtcBeamSearchDecoderTest, MatchesTensorFlow) {
  const auto decode = [](int64_t width, int64_t paths, bool merge, std::vector<int32_t> lengths) {
    KernelRunner r("CTCBeamSearchDecoder");
    r.Attr("beam_width", width).Attr("top_paths", paths).Attr("merge_repeated", merge);
    return r.Run({Logits(), Literal<int32_t>({2}, lengths)});
  };
  // Outputs: indices, values, shapes (top_paths each), then log probabilities.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, decode(3, 2, true, {5, 3}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {0, 0, 1, 0, 1, 1}));
  EXPECT_THAT(out[2], TensorIs<int64_t>({3}, {0, 0, 2}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({3}, {0, 0, 1}));
  EXPECT_THAT(out[5], TensorIs<int64_t>({2}, {2, 2}));
  EXPECT_THAT(out[6], TensorNear<float>({2, 2},
                                        {-2.056243896484375f, -2.658865451812744f,
                                         -1.268019199371338f, -1.8774607181549072f},
                                        2e-6));
  // The second path of the first entry is "0 blank 0": two labels unmerged.
  TW_ASSERT_OK_AND_ASSIGN(out, decode(3, 2, false, {5, 3}));
  EXPECT_THAT(out[3], TensorIs<int64_t>({4}, {0, 0, 0, 1}));
  TW_ASSERT_OK_AND_ASSIGN(out, decode(1, 1, true, {5, 3}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({3}, {0, 0, 2}));
  EXPECT_THAT(out[3], TensorNear<float>({2, 1}, {-2.354057550430298f, -1.7439522743225098f}, 2e-6));
  EXPECT_THAT(decode(2, 3, true, {5, 3}),
              StatusIs(kInvalid, "requested more paths than the beam width."));
  EXPECT_THAT(decode(3, 2, true, {0, 3}),
              StatusIs(kInvalid, "Less leaves in the beam search than requested."));
  EXPECT_THAT(decode(3, 2, true, {6, 3}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "sequence_length(0) <= 5"));
}

}  // namespace
}  // namespace towerflow
