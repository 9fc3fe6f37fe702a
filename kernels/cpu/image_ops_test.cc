// Resizing, space/batch moves, depthwise convolution (image_ops.cc,
// depthwise_conv_ops.cc) and N-d gather and scatter (scatter_nd_ops.cc).
// Expected values are TF's documented examples or worked out by hand from
// TF's definitions (the coordinates in image_ops.cc's note).

#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/dnnl_conv.h"
#include "kernels/testing/gradient_check.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

const Tensor kImage = Literal<float>({1, 2, 2, 1}, {1, 2, 3, 4});

Tensor Resize(const char* op, const Tensor& images, int h, int w, bool align, bool half) {
  KernelRunner r(op);
  r.Attr("align_corners", align).Attr("half_pixel_centers", half);
  return RunOk(r, {images, Literal<int32_t>({2}, {h, w})});
}

TEST(ResizeTest, BilinearMatchesTensorFlowsCoordinates) {
  EXPECT_THAT(
      Resize("ResizeBilinear", kImage, 3, 3, false, false),
      TensorNear<float>({1, 3, 3, 1}, {1, 5.f / 3, 2, 7.f / 3, 3, 10.f / 3, 3, 11.f / 3, 4}, 1e-5));
  EXPECT_THAT(Resize("ResizeBilinear", kImage, 3, 3, true, false),
              TensorNear<float>({1, 3, 3, 1}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, 1e-6));
  EXPECT_THAT(
      Resize("ResizeBilinear", kImage, 4, 4, false, true),
      TensorNear<float>(
          {1, 4, 4, 1},
          {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6));
  // Integer images give float; channels interpolate independently.
  EXPECT_THAT(
      Resize("ResizeBilinear", Literal<int32_t>({1, 1, 2, 2}, {0, 10, 4, 20}), 1, 4, true, false),
      TensorNear<float>({1, 1, 4, 2},
                        {0, 10, 4.f / 3, 10 + 10.f / 3, 8.f / 3, 10 + 20.f / 3, 4, 20}, 1e-5));
}

TEST(ResizeTest, NearestNeighborMatchesTensorFlowsCoordinates) {
  EXPECT_THAT(Resize("ResizeNearestNeighbor", kImage, 3, 3, false, false),
              TensorIs<float>({1, 3, 3, 1}, {1, 1, 2, 1, 1, 2, 3, 3, 4}));
  EXPECT_THAT(Resize("ResizeNearestNeighbor", kImage, 3, 3, true, false),
              TensorIs<float>({1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4}));
  EXPECT_THAT(Resize("ResizeNearestNeighbor", kImage, 3, 3, false, true),
              TensorIs<float>({1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4}));
  // Any element type: a downscale of uint8.
  EXPECT_THAT(Resize("ResizeNearestNeighbor",
                     Literal<uint8_t>({1, 2, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8}), 1, 2, false, false),
              TensorIs<uint8_t>({1, 1, 2, 1}, {1, 3}));
}

TEST(ResizeTest, GradientsAreTheAdjointsOfTheResizes) {
  const Tensor ones = Filled<float>({1, 3, 3, 1}, 1);
  // Bilinear 2 -> 3 along each dim: the column weights sum to 4/3 and 5/3.
  KernelRunner bilinear("ResizeBilinearGrad");
  bilinear.Attr("align_corners", false).Attr("half_pixel_centers", false);
  EXPECT_THAT(RunOk(bilinear, {ones, kImage}),
              TensorNear<float>({1, 2, 2, 1}, {16.f / 9, 20.f / 9, 20.f / 9, 25.f / 9}, 1e-5));
  // Nearest 2 -> 3 reads rows and columns 0, 0, 1.
  EXPECT_THAT(Resize("ResizeNearestNeighborGrad", ones, 2, 2, false, false),
              TensorIs<float>({1, 2, 2, 1}, {4, 2, 2, 1}));
}

TEST(ResizeTest, BadInputsAreInvalidArgument) {
  KernelRunner both("ResizeBilinear");
  both.Attr("align_corners", true).Attr("half_pixel_centers", true);
  EXPECT_THAT(both.Run({kImage, Literal<int32_t>({2}, {3, 3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "align_corners must be False"));
  KernelRunner r("ResizeBilinear");
  EXPECT_THAT(r.Run({kImage, Literal<int32_t>({2}, {0, 3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be positive"));
  EXPECT_THAT(r.Run({kImage, Literal<int32_t>({3}, {1, 2, 3})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "2 elements"));
  EXPECT_THAT(r.Run({Filled<float>({1, 0, 2, 1}, 1), Literal<int32_t>({2}, {2, 2})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "non-zero size"));
  EXPECT_THAT(r.Run({Filled<float>({2, 2, 1}, 1), Literal<int32_t>({2}, {2, 2})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "4-dimensional"));
}

// TF's SpaceToBatchND documentation, example (4).
const Tensor kSpace =
    Literal<float>({2, 2, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
const Tensor kBatch = Literal<float>(
    {8, 1, 3, 1}, {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16});

TEST(SpaceBatchTest, SpaceToBatchAndBackAsTensorFlowDocumentsThem) {
  KernelRunner to_batch("SpaceToBatchND");
  EXPECT_THAT(RunOk(to_batch, {kSpace, Literal<int32_t>({2}, {2, 2}),
                               Literal<int32_t>({2, 2}, {0, 0, 2, 0})}),
              TensorIs<float>({8, 1, 3, 1}, Values<float>(kBatch)));
  KernelRunner to_space("BatchToSpaceND");
  EXPECT_THAT(RunOk(to_space, {kBatch, Literal<int64_t>({2}, {2, 2}),
                               Literal<int64_t>({2, 2}, {0, 0, 2, 0})}),
              TensorIs<float>({2, 2, 4, 1}, Values<float>(kSpace)));
  // Example (1): one 2x2 image into four 1x1 ones, any element type.
  KernelRunner ints("SpaceToBatchND");
  EXPECT_THAT(RunOk(ints, {Literal<int64_t>({1, 2, 2, 1}, {1, 2, 3, 4}),
                           Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})}),
              TensorIs<int64_t>({4, 1, 1, 1}, {1, 2, 3, 4}));
}

TEST(SpaceBatchTest, BadBlocksAndPaddingsAreInvalidArgument) {
  KernelRunner r("SpaceToBatchND");
  EXPECT_THAT(r.Run({kSpace, Literal<int32_t>({2}, {3, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "divisible by block_shape"));
  EXPECT_THAT(r.Run({kSpace, Literal<int32_t>({2}, {0, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "must be positive"));
  EXPECT_THAT(
      r.Run({kSpace, Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2, 2}, {0, -2, 0, 0})})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "non-negative"));
  EXPECT_THAT(
      r.Run({kSpace, Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({1, 2}, {0, 0})}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "[M, 2]"));
  KernelRunner b("BatchToSpaceND");
  EXPECT_THAT(b.Run({kSpace, Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "divisible by the product"));
  EXPECT_THAT(b.Run({kBatch, Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2, 2}, {0, 3, 0, 0})})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "exceed"));
}

TEST(DepthwiseConvTest, LiteralTaps) {
  // Channel 0 of x is 1..4, channel 1 is 5..8; channel 0's filter sums the
  // window, channel 1's takes its top-left minus its bottom-right.
  const Tensor x = Literal<float>({1, 2, 2, 2}, {1, 5, 2, 6, 3, 7, 4, 8});
  const Tensor f = Literal<float>({2, 2, 2, 1}, {1, 1, 1, 0, 1, 0, 1, -1});
  for (bool dnnl : {true, false}) {
    UseDnnlConvolutions() = dnnl;
    KernelRunner r("DepthwiseConv2dNative");
    r.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
    EXPECT_THAT(RunOk(r, {x, f}), TensorIs<float>({1, 1, 1, 2}, {10, -3})) << dnnl;
    // Channel multiplier 2 on a 1x1 filter: output channel c * 2 + m.
    EXPECT_THAT(
        RunOk(r, {x, Literal<float>({1, 1, 2, 2}, {1, 2, 3, 4})}),
        TensorIs<float>({1, 2, 2, 4}, {1, 2, 15, 20, 2, 4, 18, 24, 3, 6, 21, 28, 4, 8, 24, 32}))
        << dnnl;
  }
  UseDnnlConvolutions() = true;
}

// A depthwise convolution is Conv2D with a block-diagonal filter: channel c
// feeds only output channels [c * M, (c + 1) * M). The three depthwise ops
// must agree with the Conv2D ones on that filter, on oneDNN and on the
// loops, with strides, SAME padding, dilation and NCHW.
struct DepthwiseCase {
  const char* padding;
  int stride, dilation;
  const char* format;
};

class DepthwiseAsConvTest : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(DepthwiseAsConvTest, AgreesWithConv2DOnABlockDiagonalFilter) {
  const DepthwiseCase& p = GetParam();
  const bool nchw = std::string(p.format) == "NCHW";
  const int64_t n = 2, h = 7, w = 6, c = 3, m = 2, k = 3;
  const Tensor x_nhwc = Random<double>({n, h, w, c}, 1);
  const Tensor f = Random<double>({k, k, c, m}, 2);
  Tensor full(DT_DOUBLE, TensorShape({k, k, c, c * m}));
  full.flat<double>().setZero();
  for (int64_t t = 0; t < k * k; ++t) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t j = 0; j < m; ++j) {
        full.data<double>()[(t * c + ch) * c * m + ch * m + j] =
            f.data<double>()[(t * c + ch) * m + j];
      }
    }
  }
  const auto attrs = [&](KernelRunner& r) {
    const int64_t s = p.stride, d = p.dilation;
    r.Attr("padding", p.padding).Attr("data_format", p.format);
    r.Attr("strides", nchw ? std::vector<int64_t>{1, 1, s, s} : std::vector<int64_t>{1, s, s, 1});
    r.Attr("dilations", nchw ? std::vector<int64_t>{1, 1, d, d} : std::vector<int64_t>{1, d, d, 1});
  };
  Tensor x = x_nhwc;
  if (nchw) {
    KernelRunner t("Transpose");
    x = RunOk(t, {x_nhwc, Literal<int32_t>({4}, {0, 3, 1, 2})});
  }
  KernelRunner conv("Conv2D");
  attrs(conv);
  const Tensor y = RunOk(conv, {x, full});
  const Tensor dy = Random<double>(y.shape(), 3);
  KernelRunner conv_dx("Conv2DBackpropInput");
  attrs(conv_dx);
  const Tensor dx = RunOk(conv_dx, {Shape4(x.shape()), full, dy});
  KernelRunner conv_df("Conv2DBackpropFilter");
  attrs(conv_df);
  const Tensor df_full = RunOk(conv_df, {x, Shape4(full.shape()), dy});
  std::vector<double> df(k * k * c * m);
  for (int64_t t = 0; t < k * k; ++t) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t j = 0; j < m; ++j) {
        df[(t * c + ch) * m + j] = df_full.data<double>()[(t * c + ch) * c * m + ch * m + j];
      }
    }
  }
  for (const bool as_float : {false, true}) {
    const auto cast = [&](const Tensor& t) {
      if (!as_float) return t;
      KernelRunner r("Cast");
      r.Attr("SrcT", DT_DOUBLE).Attr("DstT", DT_FLOAT);
      return RunOk(r, {t});
    };
    const double tol = as_float ? 1e-4 : 1e-10;
    const auto near = [&](const Tensor& got, const Tensor& want) {
      KernelRunner r("Cast");
      r.Attr("SrcT", got.dtype()).Attr("DstT", DT_DOUBLE);
      const Tensor g = RunOk(r, {got});
      EXPECT_EQ(g.shape(), want.shape());
      EXPECT_THAT(Values<double>(g),
                  ::testing::Pointwise(::testing::DoubleNear(tol), Values<double>(want)));
    };
    KernelRunner dw("DepthwiseConv2dNative");
    attrs(dw);
    near(RunOk(dw, {cast(x), cast(f)}), y);
    KernelRunner dw_dx("DepthwiseConv2dNativeBackpropInput");
    attrs(dw_dx);
    near(RunOk(dw_dx, {Shape4(x.shape()), cast(f), cast(dy)}), dx);
    KernelRunner dw_df("DepthwiseConv2dNativeBackpropFilter");
    attrs(dw_df);
    near(RunOk(dw_df, {cast(x), Shape4(f.shape()), cast(dy)}), Literal<double>({k, k, c, m}, df));
  }
}

INSTANTIATE_TEST_SUITE_P(All, DepthwiseAsConvTest,
                         ::testing::Values(DepthwiseCase{"VALID", 1, 1, "NHWC"},
                                           DepthwiseCase{"SAME", 2, 1, "NHWC"},
                                           DepthwiseCase{"SAME", 1, 2, "NHWC"},
                                           DepthwiseCase{"SAME", 2, 1, "NCHW"}));

TEST(DepthwiseConvTest, BadShapesAreInvalidArgument) {
  KernelRunner r("DepthwiseConv2dNative");
  r.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(r.Run({Filled<float>({1, 3, 3, 2}, 1), Filled<float>({2, 2, 3, 1}, 1)}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "depth"));
  KernelRunner dx("DepthwiseConv2dNativeBackpropInput");
  dx.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  // out_backprop must have C * M = 4 channels.
  EXPECT_THAT(dx.Run({Literal<int32_t>({4}, {1, 3, 3, 2}), Filled<float>({2, 2, 2, 2}, 1),
                      Filled<float>({1, 2, 2, 2}, 1)})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "out_backprop has shape"));
}

TEST(FusedBatchNormV2Test, GivesWhatV3Gives) {
  const Tensor x = Literal<float>({1, 2, 1, 2}, {1, 10, 3, 30});
  const Tensor scale = Literal<float>({2}, {1, 2});
  const Tensor offset = Literal<float>({2}, {0, 1});
  const Tensor empty = Literal<float>({0}, {});
  KernelRunner v2("FusedBatchNormV2");
  v2.Attr("epsilon", 0.f);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, v2.Run({x, scale, offset, empty, empty}));
  ASSERT_EQ(out.size(), 5u);
  // Per channel: mean 2 and 20, variance 1 and 100 (batch), 2 and 200
  // (the running estimate, Bessel-corrected).
  EXPECT_THAT(out[0], TensorNear<float>({1, 2, 1, 2}, {-1, -1, 1, 3}, 1e-5));
  EXPECT_THAT(out[1], TensorNear<float>({2}, {2, 20}, 1e-5));
  EXPECT_THAT(out[2], TensorNear<float>({2}, {2, 200}, 1e-4));
  KernelRunner grad("FusedBatchNormGradV2");
  grad.Attr("epsilon", 0.f);
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> g,
      grad.Run({Literal<float>({1, 2, 1, 2}, {1, 0, 0, 1}), x, scale, out[3], out[4]}));
  // doffset = sum(dy), dscale = sum(dy * xhat) with xhat = -1, 1 per channel.
  EXPECT_THAT(g[1], TensorNear<float>({2}, {-1, 1}, 1e-5));
  EXPECT_THAT(g[2], TensorNear<float>({2}, {1, 1}, 1e-5));
}

}  // namespace
}  // namespace towerflow
