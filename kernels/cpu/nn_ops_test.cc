// MatMul, convolution, LRN, batch norm, activations and losses (pooling:
// pooling_ops_test.cc).
// Backprop kernels are checked against central differences of their
// forward kernels.
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

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

using ::testing::HasSubstr;

TEST(MatMulTest, TransposesAndErrors) {
  const Tensor a = Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Literal<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  KernelRunner m("MatMul");
  EXPECT_THAT(RunOk(m, {a, b}), TensorIs<float>({2, 2}, {58, 64, 139, 154}));
  KernelRunner ta("MatMul");
  ta.Attr("transpose_a", true).Attr("transpose_b", true);
  EXPECT_THAT(RunOk(ta, {b, a}), TensorIs<float>({2, 2}, {58, 139, 64, 154}));
  KernelRunner i("MatMul");
  EXPECT_THAT(RunOk(i, {Literal<int32_t>({1, 2}, {1, 2}), Literal<int32_t>({2, 1}, {3, 4})}),
              TensorIs<int32_t>({1, 1}, {11}));
  EXPECT_THAT(RunOk(m, {Literal<float>({2, 0}, {}), Literal<float>({0, 3}, {})}),
              TensorIs<float>({2, 3}, {0, 0, 0, 0, 0, 0}));
  EXPECT_THAT(m.Run({a, a}).status().message(), HasSubstr("Matrix size-incompatible"));
  EXPECT_THAT(m.Run({Literal<float>({3}, {1, 2, 3}), b}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "In[0] and In[1] must be matrices: [3] [3,2]"));
}

// Float GEMMs go to oneDNN's sgemm (kernels/cpu/blas.h): shapes large and
// odd enough for its blocked, threaded kernels and their edge blocks, in
// every transpose form, against the products summed in double here.
TEST(MatMulTest, LargeFloatProductsMatchDoubleSums) {
  constexpr int64_t kM = 67, kK = 301, kN = 45;
  const Tensor a = Random<float>(TensorShape({kM, kK}), 1);
  const Tensor b = Random<float>(TensorShape({kK, kN}), 2);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  // The transposed operands, stored as their transpose's layout.
  Tensor at(DT_FLOAT, TensorShape({kK, kM})), bt(DT_FLOAT, TensorShape({kN, kK}));
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t k = 0; k < kK; ++k) at.data<float>()[k * kM + i] = pa[i * kK + k];
  }
  for (int64_t k = 0; k < kK; ++k) {
    for (int64_t j = 0; j < kN; ++j) bt.data<float>()[j * kK + k] = pb[k * kN + j];
  }
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "transpose_a " << ta << " transpose_b " << tb);
      KernelRunner r("MatMul");
      r.Attr("transpose_a", ta).Attr("transpose_b", tb);
      const Tensor c = RunOk(r, {ta ? at : a, tb ? bt : b});
      ASSERT_EQ(c.shape(), TensorShape({kM, kN}));
      double worst = 0;
      for (int64_t i = 0; i < kM; ++i) {
        for (int64_t j = 0; j < kN; ++j) {
          double sum = 0;
          for (int64_t k = 0; k < kK; ++k) sum += double{pa[i * kK + k]} * pb[k * kN + j];
          worst = std::max(worst, std::abs(sum - c.data<float>()[i * kN + j]));
        }
      }
      // Sums of 301 products of magnitude below 1, rounded to float.
      EXPECT_LT(worst, 2e-5);
    }
  }
}

// int32 products and sums wrap around (TF's results), without undefined
// behaviour (the sanitizer step of CI runs this test under UBSan).
TEST(MatMulTest, Int32WrapsAroundOnOverflow) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  KernelRunner r("MatMul");
  // [1,2]·[2,2]: kMax·2 + 1·1 = -1 and kMax + kMax = -2 (mod 2^32);
  // 65536·65536 = 0 and kMin·(-1) = kMin.
  EXPECT_THAT(
      RunOk(r, {Literal<int32_t>({1, 2}, {kMax, 1}), Literal<int32_t>({2, 2}, {2, 1, 1, kMax})}),
      TensorIs<int32_t>({1, 2}, {-1, -2}));
  EXPECT_THAT(
      RunOk(r, {Literal<int32_t>({2, 1}, {65536, kMin}), Literal<int32_t>({1, 2}, {65536, -1})}),
      TensorIs<int32_t>({2, 2}, {0, -65536, 0, kMin}));
}

TEST(MatMulTest, BatchMatMulBroadcastsBatches) {
  // x [2,1,2] . y [2,1] (batch broadcast) -> [2,1,1].
  KernelRunner r("BatchMatMulV2");
  EXPECT_THAT(
      RunOk(r, {Literal<double>({2, 1, 2}, {1, 2, 3, 4}), Literal<double>({2, 1}, {10, 1})}),
      TensorIs<double>({2, 1, 1}, {12, 34}));
  KernelRunner adj("BatchMatMulV2");
  adj.Attr("adj_x", true);
  EXPECT_THAT(RunOk(adj, {Literal<float>({1, 2, 1}, {1, 2}), Literal<float>({1, 2, 1}, {3, 4})}),
              TensorIs<float>({1, 1, 1}, {11}));
  EXPECT_FALSE(r.Run({Literal<float>({2, 1, 2}, {1, 2, 3, 4}),
                      Literal<float>({3, 2, 1}, {1, 2, 3, 4, 5, 6})})
                   .ok());
}

TEST(ConvTest, Conv2DValidAndSame) {
  // 1x3x3x1 input 1..9, 2x2 filter of ones.
  const Tensor x = Literal<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor f = Filled<float>({2, 2, 1, 1}, 1);
  KernelRunner valid("Conv2D");
  valid.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(valid, {x, f}), TensorIs<float>({1, 2, 2, 1}, {12, 16, 24, 28}));
  KernelRunner same("Conv2D");
  same.Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  EXPECT_THAT(RunOk(same, {x, f}), TensorIs<float>({1, 2, 2, 1}, {12, 9, 15, 9}));
  KernelRunner nchw("Conv2D");
  nchw.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID").Attr("data_format", "NCHW");
  EXPECT_THAT(RunOk(nchw, {Literal<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f}),
              TensorIs<float>({1, 1, 2, 2}, {12, 16, 24, 28}));
  KernelRunner dilated("Conv2D");
  dilated.Attr("strides", {1, 1, 1, 1}).Attr("dilations", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(dilated, {x, f}), TensorIs<float>({1, 1, 1, 1}, {20}));
}

TEST(ConvTest, Conv2DMatchesDirectSum) {
  const Tensor x = Random<double>({2, 5, 6, 3}, 1);
  const Tensor f = Random<double>({3, 2, 3, 4}, 2);
  KernelRunner r("Conv2D");
  r.Attr("strides", {1, 2, 1, 1}).Attr("padding", "SAME");
  const Tensor y = RunOk(r, {x, f});
  ASSERT_EQ(y.shape(), TensorShape({2, 3, 6, 4}));
  // SAME: pad_top = 1 (rows: (3-1)*2+3-5 = 2 -> 1 before), pad_left = 0.
  const auto X = x.tensor<double, 4>();
  const auto F = f.tensor<double, 4>();
  const auto Y = y.tensor<double, 4>();
  for (int n = 0; n < 2; ++n)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 6; ++ow)
        for (int o = 0; o < 4; ++o) {
          double want = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 2; ++kw)
              for (int c = 0; c < 3; ++c) {
                const int ih = oh * 2 - 1 + kh, iw = ow + kw;
                if (ih >= 0 && ih < 5 && iw < 6) want += X(n, ih, iw, c) * F(kh, kw, c, o);
              }
          ASSERT_NEAR(Y(n, oh, ow, o), want, 1e-12);
        }
}

class ConvGradTest : public ::testing::TestWithParam<std::tuple<std::string, int, std::string>> {};

TEST_P(ConvGradTest, BackpropsMatchFiniteDifferences) {
  const auto& [padding, stride, format] = GetParam();
  const bool nchw = format == "NCHW";
  const TensorShape xs = nchw ? TensorShape({2, 2, 5, 4}) : TensorShape({2, 5, 4, 2});
  const Tensor x = Random<double>(xs, 3);
  const Tensor f = Random<double>({3, 2, 2, 3}, 4);
  const std::vector<int64_t> strides = nchw ? std::vector<int64_t>{1, 1, stride, stride}
                                            : std::vector<int64_t>{1, stride, stride, 1};
  const auto conv = [&](const Tensor& in, const Tensor& filter) {
    KernelRunner r("Conv2D");
    r.Attr("strides", strides).Attr("padding", padding).Attr("data_format", format);
    return RunOk(r, {in, filter});
  };
  const double input_error = MaxGradientError<double>(
      x, [&](const Tensor& in) { return conv(in, f); },
      [&](const Tensor& in, const Tensor& dy) {
        KernelRunner r("Conv2DBackpropInput");
        r.Attr("strides", strides).Attr("padding", padding).Attr("data_format", format);
        return RunOk(r, {Shape4(in.shape()), f, dy});
      },
      1e-4);
  EXPECT_LT(input_error, 1e-8);
  const double filter_error = MaxGradientError<double>(
      f, [&](const Tensor& filter) { return conv(x, filter); },
      [&](const Tensor& filter, const Tensor& dy) {
        KernelRunner r("Conv2DBackpropFilter");
        r.Attr("strides", strides).Attr("padding", padding).Attr("data_format", format);
        return RunOk(r, {x, Shape4(filter.shape()), dy});
      },
      1e-4);
  EXPECT_LT(filter_error, 1e-8);
}

INSTANTIATE_TEST_SUITE_P(All, ConvGradTest,
                         ::testing::Combine(::testing::Values("SAME", "VALID"),
                                            ::testing::Values(1, 2),
                                            ::testing::Values("NHWC", "NCHW")));

// The float kernels run on oneDNN; the im2col + OpenBLAS path (used for
// double) must agree with them on the CIFAR-10 model's conv2 geometry.
TEST(ConvTest, OneDnnAndIm2ColAgree) {
  const Tensor x = Random<float>({4, 12, 12, 16}, 11);
  const Tensor f = Random<float>({5, 5, 16, 8}, 12);
  const Tensor dy = Random<float>({4, 6, 6, 8}, 13);
  const auto run = [&](bool dnnl) {
    UseDnnlConvolutions() = dnnl;
    std::vector<Tensor> out;
    for (const char* op : {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"}) {
      KernelRunner r(op);
      r.Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
      if (std::string(op) == "Conv2D") out.push_back(RunOk(r, {x, f}));
      if (std::string(op) == "Conv2DBackpropInput")
        out.push_back(RunOk(r, {Shape4(x.shape()), f, dy}));
      if (std::string(op) == "Conv2DBackpropFilter")
        out.push_back(RunOk(r, {x, Shape4(f.shape()), dy}));
    }
    UseDnnlConvolutions() = true;
    return out;
  };
  const std::vector<Tensor> a = run(true), b = run(false);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape()) << i;
    EXPECT_THAT(Values<float>(a[i]),
                ::testing::Pointwise(::testing::FloatNear(1e-3), Values<float>(b[i])))
        << i;
  }
}

// 3x3 stride-1 convolutions of 32 channels and more run as Winograd
// (Note [Winograd convolutions]): all three passes, and the forward pass
// with a bias and a Relu, must agree with the direct convolution and with
// im2col, at a size that is not a multiple of
// Winograd's 4x4 tiles, padded and not.
TEST(ConvTest, WinogradAgreesWithDirectAndIm2Col) {
  const Tensor x = Random<float>({2, 10, 9, 32}, 21);
  const Tensor f = Random<float>({3, 3, 32, 48}, 22);
  const Tensor bias = Random<float>({48}, 24);
  for (const char* padding : {"SAME", "VALID"}) {
    const int64_t out_h = std::string(padding) == "SAME" ? 10 : 8;
    const int64_t out_w = std::string(padding) == "SAME" ? 9 : 7;
    const Tensor dy = Random<float>({2, out_h, out_w, 48}, 23);
    const auto run = [&](bool dnnl, bool winograd) {
      UseDnnlConvolutions() = dnnl;
      UseWinogradConvolutions() = winograd;
      std::vector<Tensor> out;
      KernelRunner conv("Conv2D"), input("Conv2DBackpropInput"), filter("Conv2DBackpropFilter"),
          fused("_FusedConv2D");
      for (KernelRunner* r : {&conv, &input, &filter, &fused}) {
        r->Attr("strides", {1, 1, 1, 1}).Attr("padding", padding);
      }
      fused.Attr("fused_ops", std::vector<std::string>{"BiasAdd", "Relu"})
          .Attr("num_args", int64_t{1})
          .Attr("epsilon", 0.0f);
      out.push_back(RunOk(conv, {x, f}));
      out.push_back(RunOk(fused, {x, f, bias}));
      out.push_back(RunOk(input, {Shape4(x.shape()), f, dy}));
      out.push_back(RunOk(filter, {x, Shape4(f.shape()), dy}));
      UseDnnlConvolutions() = true;
      UseWinogradConvolutions() = true;
      return out;
    };
    const int64_t before = WinogradPassesRun();
    const std::vector<Tensor> winograd = run(true, true);
    if (__builtin_cpu_supports("avx512f")) {
      EXPECT_EQ(WinogradPassesRun() - before, 4) << padding;
    } else {
      std::cerr << "no AVX-512: oneDNN has no Winograd kernel, the direct one ran\n";
    }
    const int64_t after = WinogradPassesRun();
    const std::vector<Tensor> direct = run(true, false), im2col = run(false, false);
    EXPECT_EQ(WinogradPassesRun(), after) << "Winograd ran while turned off";
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(winograd[i].shape(), direct[i].shape()) << padding << " " << i;
      EXPECT_THAT(Values<float>(winograd[i]),
                  ::testing::Pointwise(::testing::FloatNear(1e-4), Values<float>(direct[i])))
          << padding << " pass " << i;
      EXPECT_THAT(Values<float>(winograd[i]),
                  ::testing::Pointwise(::testing::FloatNear(1e-4), Values<float>(im2col[i])))
          << padding << " pass " << i;
    }
  }
}

TEST(ConvTest, BadGeometryIsInvalidArgument) {
  KernelRunner r("Conv2D");
  r.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  // TF's rule: VALID 3x3 over 2x2 is an empty output, over 1x1 an error.
  EXPECT_THAT(RunOk(r, {Filled<float>({1, 2, 2, 1}, 1), Filled<float>({3, 3, 1, 1}, 1)}),
              TensorIs<float>({1, 0, 0, 1}, {}));
  EXPECT_THAT(
      r.Run({Filled<float>({1, 1, 1, 1}, 1), Filled<float>({3, 3, 1, 1}, 1)}).status().message(),
      HasSubstr("Computed output size would be negative"));
  EXPECT_THAT(
      r.Run({Filled<float>({1, 2, 2, 2}, 1), Filled<float>({1, 1, 1, 1}, 1)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "input depth must equal filter depth (grouped convolutions are not"));
  KernelRunner s("Conv2D");
  s.Attr("strides", {1, 0, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(s.Run({Filled<float>({1, 2, 2, 1}, 1), Filled<float>({1, 1, 1, 1}, 1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "strides must be positive, got [1,0,1,1]"));
  KernelRunner b("Conv2DBackpropInput");
  b.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(b.Run({Literal<int32_t>({4}, {1, 3, 3, 1}), Filled<float>({2, 2, 1, 1}, 1),
                     Filled<float>({1, 3, 3, 1}, 1)})
                  .status()
                  .message(),
              HasSubstr("out_backprop has shape [1,3,3,1]"));
  // Empty batch: [0,3,3,1] input.
  EXPECT_THAT(RunOk(r, {Literal<float>({0, 3, 3, 1}, {}), Filled<float>({2, 2, 1, 1}, 1)}),
              TensorIs<float>({0, 2, 2, 1}, {}));
}

// Gives an LRN or LRNGrad kernel its attributes.
KernelRunner& LrnAttrs(KernelRunner& k, int64_t radius, float bias, float alpha, float beta) {
  return k.Attr("depth_radius", radius).Attr("bias", bias).Attr("alpha", alpha).Attr("beta", beta);
}

// The largest error of LRNGrad against finite differences of LRN at x.
double LrnGradientError(const Tensor& x, int64_t radius, float bias, float alpha, float beta) {
  const auto lrn = [&](const Tensor& in) {
    KernelRunner k("LRN");
    return RunOk(LrnAttrs(k, radius, bias, alpha, beta), {in});
  };
  return MaxGradientError<float>(
      x, lrn,
      [&](const Tensor& in, const Tensor& dy) {
        KernelRunner g("LRNGrad");
        return RunOk(LrnAttrs(g, radius, bias, alpha, beta), {dy, in, lrn(in)});
      },
      1e-2);
}

TEST(LrnTest, ForwardValuesAndGradient) {
  // One pixel, 3 channels, radius 1, bias 1, alpha 1, beta 0.5:
  // y[c] = x[c] / sqrt(1 + sum of squares of neighbours).
  KernelRunner r("LRN");
  EXPECT_THAT(
      RunOk(LrnAttrs(r, 1, 1.0f, 1.0f, 0.5f), {Literal<float>({1, 1, 1, 3}, {1, 2, 3})}),
      TensorNear<float>({1, 1, 1, 3},
                        {1 / std::sqrt(6.0f), 2 / std::sqrt(15.0f), 3 / std::sqrt(14.0f)}, 1e-6));
  const Tensor x = Random<float>({2, 2, 2, 12}, 6, -3, 3);
  // The CIFAR-10 tutorial's parameters: radius 4, bias 1, alpha 0.001/9, beta 0.75.
  EXPECT_LT(LrnGradientError(x, 4, 1.0f, 0.001f / 9, 0.75f), 1e-3);
  // Larger alpha so the normaliser matters.
  EXPECT_LT(LrnGradientError(x, 2, 2.0f, 0.5f, 0.6f), 2e-3);
}

// LRN by its definition, in double: x * (bias + alpha * window sum of x^2)^-beta
// over the last dimension.
std::vector<float> LrnByDefinition(const Tensor& x, int64_t radius, double bias, double alpha,
                                   double beta) {
  const std::vector<float> v = Values<float>(x);
  const int64_t c = x.dim_size(3);
  std::vector<float> y(v.size());
  for (size_t px = 0; px < v.size() / c; ++px) {
    for (int64_t i = 0; i < c; ++i) {
      double sum = 0;
      for (int64_t k = std::max<int64_t>(0, i - radius); k <= std::min(c - 1, i + radius); ++k) {
        sum += double{v[px * c + k]} * v[px * c + k];
      }
      y[px * c + i] = static_cast<float>(v[px * c + i] * std::pow(bias + alpha * sum, -beta));
    }
  }
  return y;
}

// The CIFAR-10 model's 64 channels, where the kernels work in whole vector
// packets, and a radius of 9 over 20 channels (all but two windows clipped
// at an end): the forward pass against the definition, the gradient
// against finite differences.
TEST(LrnTest, VectorPacketsAndWideWindows) {
  const Tensor x = Random<float>({1, 2, 1, 64}, 7, -3, 3);
  KernelRunner r("LRN");
  EXPECT_THAT(RunOk(LrnAttrs(r, 4, 1.0f, 0.1f, 0.75f), {x}),
              TensorNear<float>({1, 2, 1, 64}, LrnByDefinition(x, 4, 1, 0.1, 0.75), 1e-5));
  EXPECT_LT(LrnGradientError(x, 4, 1.0f, 0.1f, 0.75f), 2e-3);
  const Tensor wide = Random<float>({1, 2, 1, 20}, 8, -3, 3);
  KernelRunner w("LRN");
  EXPECT_THAT(RunOk(LrnAttrs(w, 9, 1.0f, 0.1f, 0.75f), {wide}),
              TensorNear<float>({1, 2, 1, 20}, LrnByDefinition(wide, 9, 1, 0.1, 0.75), 1e-5));
  EXPECT_LT(LrnGradientError(wide, 9, 1.0f, 0.1f, 0.75f), 2e-3);
}

TEST(BatchNormTest, TrainingForwardAndGradient) {
  const Tensor x = Literal<float>({2, 1, 1, 2}, {1, 10, 3, 30});
  const Tensor scale = Literal<float>({2}, {1, 2}), offset = Literal<float>({2}, {0, 1});
  KernelRunner r("FusedBatchNormV3");
  r.Attr("epsilon", 0.0f);
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({x, scale, offset, Literal<float>({0}, {}), Literal<float>({0}, {})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Channel 0: mean 2, var 1 -> [-1, 1]; channel 1: mean 20, var 100 -> 2*[-1,1]+1.
  EXPECT_THAT((*out)[0], TensorNear<float>({2, 1, 1, 2}, {-1, -1, 1, 3}, 1e-6));
  EXPECT_THAT((*out)[1], TensorNear<float>({2}, {2, 20}, 1e-6));
  EXPECT_THAT((*out)[2], TensorNear<float>({2}, {2, 200}, 1e-4));  // unbiased
  const Tensor xr = Random<float>({3, 2, 2, 3}, 7, -2, 2);
  const Tensor s3 = Literal<float>({3}, {0.5f, 1, 2}), o3 = Literal<float>({3}, {0, 1, -1});
  const auto bn = [&](const Tensor& in) {
    KernelRunner k("FusedBatchNormV3");
    return RunOk(k, {in, s3, o3, Literal<float>({0}, {}), Literal<float>({0}, {})});
  };
  const double error = MaxGradientError<float>(
      xr, bn,
      [&](const Tensor& in, const Tensor& dy) {
        KernelRunner k("FusedBatchNormV3");
        absl::StatusOr<std::vector<Tensor>> fwd =
            k.Run({in, s3, o3, Literal<float>({0}, {}), Literal<float>({0}, {})});
        KernelRunner g("FusedBatchNormGradV3");
        return RunOk(g, {dy, in, s3, (*fwd)[3], (*fwd)[4], (*fwd)[5]});
      },
      1e-2);
  EXPECT_LT(error, 2e-3);
  KernelRunner bad("FusedBatchNormV3");
  EXPECT_FALSE(bad.Run({x, Literal<float>({3}, {1, 1, 1}), offset, Literal<float>({0}, {}),
                        Literal<float>({0}, {})})
                   .ok());
}

// Rows over several of the kernels' blocks (and a partial one), and a
// channel whose mean dwarfs its spread (1e4 +- 1: a sum of squares minus the
// squared mean would lose the variance in float), against the formulas in
// double.
TEST(BatchNormTest, ManyBlocksAndLargeMeansMatchDoubleReference) {
  constexpr int64_t kRows = 3 * 4096 + 5, kC = 2;
  Tensor x(DT_FLOAT, TensorShape({kRows, 1, 1, kC})), dy(DT_FLOAT, x.shape());
  for (int64_t r = 0; r < kRows; ++r) {
    x.data<float>()[r * kC] = 1e4f + std::sin(0.1f * r);
    x.data<float>()[r * kC + 1] = -3 + 0.5f * std::cos(0.37f * r);
    dy.data<float>()[r * kC] = std::cos(0.05f * r);
    dy.data<float>()[r * kC + 1] = 0.25f + std::sin(0.011f * r);
  }
  const std::vector<float> scale = {1.5f, -0.5f}, offset = {0.25f, 2};
  constexpr float kEpsilon = 1e-3f;
  std::vector<double> mean(kC, 0), var(kC, 0), sum_dy(kC, 0), sum_dy_xhat(kC, 0);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int ch = 0; ch < kC; ++ch) mean[ch] += x.data<float>()[r * kC + ch] / double(kRows);
  }
  for (int64_t r = 0; r < kRows; ++r) {
    for (int ch = 0; ch < kC; ++ch) {
      const double d = x.data<float>()[r * kC + ch] - mean[ch];
      var[ch] += d * d / kRows;
    }
  }
  KernelRunner fwd("FusedBatchNormV3");
  fwd.Attr("epsilon", kEpsilon);
  const Tensor scale_t = Literal<float>({kC}, scale), offset_t = Literal<float>({kC}, offset);
  absl::StatusOr<std::vector<Tensor>> out =
      fwd.Run({x, scale_t, offset_t, Literal<float>({0}, {}), Literal<float>({0}, {})});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int ch = 0; ch < kC; ++ch) {
    EXPECT_NEAR((*out)[3].data<float>()[ch], mean[ch], 1e-6 * std::abs(mean[ch]) + 1e-6);
    EXPECT_NEAR((*out)[4].data<float>()[ch], var[ch], 1e-4 * var[ch]);
  }
  // The normalisation and the gradient against the statistics the kernel
  // returned (a float mean of 1e4 is itself off by up to 5e-4).
  for (int ch = 0; ch < kC; ++ch) {
    mean[ch] = (*out)[3].data<float>()[ch];
    var[ch] = (*out)[4].data<float>()[ch];
  }
  for (int64_t r = 0; r < kRows; ++r) {
    for (int ch = 0; ch < kC; ++ch) {
      const double xhat = (x.data<float>()[r * kC + ch] - mean[ch]) / std::sqrt(var[ch] + kEpsilon);
      sum_dy[ch] += dy.data<float>()[r * kC + ch];
      sum_dy_xhat[ch] += dy.data<float>()[r * kC + ch] * xhat;
    }
  }
  KernelRunner grad("FusedBatchNormGradV3");
  grad.Attr("epsilon", kEpsilon);
  absl::StatusOr<std::vector<Tensor>> back =
      grad.Run({dy, x, scale_t, (*out)[3], (*out)[4], (*out)[5]});
  ASSERT_TRUE(back.ok()) << back.status();
  double worst_y = 0, worst_dx = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int ch = 0; ch < kC; ++ch) {
      const double rstd = 1 / std::sqrt(var[ch] + kEpsilon);
      const double xhat = (x.data<float>()[r * kC + ch] - mean[ch]) * rstd;
      const double y = scale[ch] * xhat + offset[ch];
      const double dx =
          scale[ch] * rstd *
          (dy.data<float>()[r * kC + ch] - sum_dy[ch] / kRows - xhat * sum_dy_xhat[ch] / kRows);
      worst_y = std::max(worst_y, std::abs((*out)[0].data<float>()[r * kC + ch] - y));
      worst_dx = std::max(worst_dx, std::abs((*back)[0].data<float>()[r * kC + ch] - dx));
    }
  }
  EXPECT_LT(worst_y, 2e-4);
  EXPECT_LT(worst_dx, 2e-4);
  for (int ch = 0; ch < kC; ++ch) {
    EXPECT_NEAR((*back)[1].data<float>()[ch], sum_dy_xhat[ch],
                1e-3 * std::abs(sum_dy_xhat[ch]) + 1e-2);
    EXPECT_NEAR((*back)[2].data<float>()[ch], sum_dy[ch], 1e-4 * std::abs(sum_dy[ch]) + 1e-2);
  }
}

// Inference mode: the given statistics, dx = scale * rsqrt(var + eps) * dy,
// and the scale and offset gradients as in training.
TEST(BatchNormTest, InferenceGradientUsesTheGivenStatistics) {
  const Tensor x = Literal<float>({2, 1, 1, 2}, {1, 10, 3, 30});
  const Tensor dy = Literal<float>({2, 1, 1, 2}, {1, 2, -1, 4});
  KernelRunner g("FusedBatchNormGradV3");
  g.Attr("epsilon", 0.0f).Attr("is_training", false);
  absl::StatusOr<std::vector<Tensor>> back =
      g.Run({dy, x, Literal<float>({2}, {2, 3}), Literal<float>({2}, {2, 20}),
             Literal<float>({2}, {4, 25}), Literal<float>({0}, {})});
  ASSERT_TRUE(back.ok()) << back.status();
  // rstd 1/2 and 1/5: dx = dy * scale * rstd.
  EXPECT_THAT((*back)[0], TensorNear<float>({2, 1, 1, 2}, {1, 1.2f, -1, 2.4f}, 1e-6));
  // x^ = (x - mean) * rstd: channel 0 {-0.5, 0.5}, channel 1 {-2, 2}.
  EXPECT_THAT((*back)[1], TensorNear<float>({2}, {-1, 4}, 1e-6));  // sum dy x^
  EXPECT_THAT((*back)[2], TensorNear<float>({2}, {0, 6}, 1e-6));   // sum dy
}

TEST(NnTest, BiasAddAndGrad) {
  KernelRunner b("BiasAdd");
  EXPECT_THAT(RunOk(b, {Literal<float>({2, 2}, {1, 2, 3, 4}), Literal<float>({2}, {10, 20})}),
              TensorIs<float>({2, 2}, {11, 22, 13, 24}));
  KernelRunner nchw("BiasAdd");
  nchw.Attr("data_format", "NCHW");
  EXPECT_THAT(RunOk(nchw, {Literal<float>({1, 2, 2}, {1, 2, 3, 4}), Literal<float>({2}, {10, 20})}),
              TensorIs<float>({1, 2, 2}, {11, 12, 23, 24}));
  EXPECT_THAT(
      b.Run({Literal<float>({2, 2}, {1, 2, 3, 4}), Literal<float>({3}, {1, 2, 3})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "Must provide as many biases as the channel dimension of the input"));
  KernelRunner g("BiasAddGrad");
  EXPECT_THAT(RunOk(g, {Literal<float>({2, 2}, {1, 2, 3, 4})}), TensorIs<float>({2}, {4, 6}));
  // int32, as TensorFlow's CPU kernels.
  KernelRunner ints("BiasAdd");
  EXPECT_THAT(RunOk(ints, {Literal<int32_t>({2, 2}, {1, 2, 3, 4}), Literal<int32_t>({2}, {-1, 5})}),
              TensorIs<int32_t>({2, 2}, {0, 7, 2, 9}));
  KernelRunner int_grad("BiasAddGrad");
  EXPECT_THAT(RunOk(int_grad, {Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6})}),
              TensorIs<int32_t>({2}, {9, 12}));
}

TEST(NnTest, SoftplusSeluLeakyReluAndErf) {
  KernelRunner softplus("Softplus");
  EXPECT_THAT(RunOk(softplus, {Literal<float>({4}, {0, 2, -2, 100})}),
              TensorNear<float>({4}, {0.6931472f, 2.126928f, 0.126928f, 100}, 1e-6));
  KernelRunner selu("Selu");
  EXPECT_THAT(RunOk(selu, {Literal<float>({3}, {1, -1, 0})}),
              TensorNear<float>({3}, {1.0507010f, -1.1113307f, 0}, 1e-6));
  KernelRunner leaky("LeakyRelu");
  EXPECT_THAT(RunOk(leaky, {Literal<float>({3}, {-2, 3, 0})}), TensorIs<float>({3}, {-0.4f, 3, 0}));
  KernelRunner leaky_grad("LeakyReluGrad");
  leaky_grad.Attr("alpha", 0.5f);
  EXPECT_THAT(RunOk(leaky_grad, {Literal<float>({2}, {4, 4}), Literal<float>({2}, {-1, 1})}),
              TensorIs<float>({2}, {2, 4}));
  KernelRunner softplus_grad("SoftplusGrad");
  EXPECT_THAT(RunOk(softplus_grad, {Literal<float>({2}, {2, 2}), Literal<float>({2}, {0, 1})}),
              TensorNear<float>({2}, {1, 1.4621172f}, 1e-6));
  KernelRunner selu_grad("SeluGrad");
  EXPECT_THAT(RunOk(selu_grad, {Literal<float>({2}, {1, 1}), Literal<float>({2}, {2, -1})}),
              TensorNear<float>({2}, {1.0507010f, 1.7580993f - 1}, 1e-6));
  // TF 2.21's values.
  KernelRunner softsign("Softsign");
  EXPECT_THAT(RunOk(softsign, {Literal<float>({5}, {-3, -1, 0, 0.5f, 2})}),
              TensorNear<float>({5}, {-0.75f, -0.5f, 0, 0.33333334f, 0.6666667f}, 1e-7));
  KernelRunner softsign_grad("SoftsignGrad");
  EXPECT_THAT(RunOk(softsign_grad, {Literal<float>({5}, {1, 2, 3, 4, 5}),
                                    Literal<float>({5}, {-3, -1, 0, 0.5f, 2})}),
              TensorNear<float>({5}, {0.0625f, 0.5f, 3, 1.7777778f, 0.5555556f}, 1e-6));
  KernelRunner rint("Rint");
  EXPECT_THAT(
      RunOk(rint, {Literal<float>({8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.4f, -1.7f})}),
      TensorIs<float>({8}, {-2, -2, -0.0f, 0, 2, 2, 0, -2}));
  KernelRunner erf("Erf");
  EXPECT_THAT(RunOk(erf, {Literal<float>({3}, {0.5f, -1, 0})}),
              TensorNear<float>({3}, {0.5204999f, -0.8427008f, 0}, 1e-6));
}

TEST(NnTest, TopKLargestFirstTiesInIndexOrder) {
  KernelRunner k("TopKV2");
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      k.Run({Literal<float>({2, 4}, {1, 3, 3, 2, 5, -1, 0, 7}), Scalar<int32_t>(2)}));
  EXPECT_THAT(out[0], TensorIs<float>({2, 2}, {3, 3, 7, 5}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({2, 2}, {1, 2, 3, 0}));
  // NaN ranks first.
  TW_ASSERT_OK_AND_ASSIGN(out, k.Run({Literal<float>({3}, {NAN, 1, 2}), Scalar<int32_t>(2)}));
  EXPECT_TRUE(std::isnan(out[0].data<float>()[0]));
  EXPECT_EQ(out[0].data<float>()[1], 2);
  EXPECT_THAT(out[1], TensorIs<int32_t>({2}, {0, 2}));
  KernelRunner ints("TopKV2");
  EXPECT_THAT(RunOk(ints, {Literal<int32_t>({3}, {4, 9, -2}), Scalar<int32_t>(3)}),
              TensorIs<int32_t>({3}, {9, 4, -2}));
  EXPECT_THAT(k.Run({Literal<float>({2, 4}, {1, 3, 3, 2, 5, -1, 0, 7}), Scalar<int32_t>(5)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input must have at least k columns. Had 4, needed 5"));
  EXPECT_THAT(k.Run({Literal<float>({2}, {1, 2}), Scalar<int32_t>(-1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Need k >= 0, got -1"));
}

// TF 2.21's TopKV2 with int64 k and indices, and the first TopK (k an
// attr).
TEST(NnTest, TopKIndexTypesAndTheFirstVersion) {
  KernelRunner wide("TopKV2");
  wide.Attr("index_type", DT_INT64);
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      wide.Run({Literal<float>({2, 3}, {1, 5, 3, 9, -1, 9}), Scalar<int64_t>(2)}));
  EXPECT_THAT(out[0], TensorIs<float>({2, 2}, {5, 3, 9, 9}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({2, 2}, {1, 2, 0, 2}));
  KernelRunner v1("TopK");
  v1.Attr("k", int64_t{1});
  TW_ASSERT_OK_AND_ASSIGN(out, v1.Run({Literal<float>({2, 3}, {1, 5, 3, 9, -1, 9})}));
  EXPECT_THAT(out[0], TensorIs<float>({2, 1}, {5, 9}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({2, 1}, {1, 0}));
  KernelRunner too_many("TopK");
  too_many.Attr("k", int64_t{4});
  EXPECT_THAT(too_many.Run({Literal<float>({3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input must have at least k columns. Had 3, needed 4"));
}

// TF 2.21's values and messages.
TEST(NnTest, DataFormatOpsAsTensorFlow) {
  const auto run = [](const char* op, const Tensor& x, const char* src, const char* dst) {
    KernelRunner r(op);
    r.Attr("src_format", std::string(src)).Attr("dst_format", std::string(dst));
    return r.Run({x});
  };
  const auto first = [](absl::StatusOr<std::vector<Tensor>> out) {
    return out.ok() ? (*out)[0] : Tensor();
  };
  EXPECT_THAT(
      first(run("DataFormatDimMap", Literal<int32_t>({6}, {0, 1, 2, 3, -1, -4}), "NHWC", "NCHW")),
      TensorIs<int32_t>({6}, {0, 2, 3, 1, 1, 0}));
  EXPECT_THAT(first(run("DataFormatDimMap", Literal<int32_t>({3}, {1, 2, 3}), "NCHW", "NHWC")),
              TensorIs<int32_t>({3}, {3, 1, 2}));
  EXPECT_THAT(first(run("DataFormatDimMap", Literal<int64_t>({4}, {1, 2, 3, 4}), "NDHWC", "NCDHW")),
              TensorIs<int64_t>({4}, {2, 3, 4, 1}));
  EXPECT_THAT(first(run("DataFormatDimMap", Literal<int32_t>({1}, {5}), "NHWC", "NCHW")),
              TensorIs<int32_t>({1}, {2}));
  EXPECT_THAT(run("DataFormatDimMap", Literal<int32_t>({1}, {1}), "NHWC", "NCHWX"),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Destination and source format must determine a permutation, "
                                "got NHWC and NCHWX"));
  EXPECT_THAT(
      first(run("DataFormatVecPermute", Literal<int32_t>({4}, {10, 20, 30, 40}), "NHWC", "NCHW")),
      TensorIs<int32_t>({4}, {10, 40, 20, 30}));
  EXPECT_THAT(
      first(run("DataFormatVecPermute", Literal<int64_t>({4}, {10, 20, 30, 40}), "NCHW", "NHWC")),
      TensorIs<int64_t>({4}, {10, 30, 40, 20}));
  EXPECT_THAT(first(run("DataFormatVecPermute", Literal<int32_t>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                        "NHWC", "NCHW")),
              TensorIs<int32_t>({4, 2}, {1, 2, 7, 8, 3, 4, 5, 6}));
  EXPECT_THAT(first(run("DataFormatVecPermute", Literal<int32_t>({2}, {20, 30}), "NHWC", "NCHW")),
              TensorIs<int32_t>({2}, {20, 30}));
  EXPECT_THAT(
      first(run("DataFormatVecPermute", Literal<int32_t>({5}, {1, 2, 3, 4, 5}), "NDHWC", "NCDHW")),
      TensorIs<int32_t>({5}, {1, 5, 2, 3, 4}));
  EXPECT_THAT(run("DataFormatVecPermute", Literal<int32_t>({3}, {1, 2, 3}), "NHWC", "NCHW"),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "1D input must be of size 2 or 4, but got shape [3]"));
}

TEST(NnTest, Activations) {
  const Tensor x = Literal<float>({4}, {-2, 0.5f, 3, 7});
  KernelRunner relu("Relu"), relu6("Relu6"), elu("Elu");
  EXPECT_THAT(RunOk(relu, {x}), TensorIs<float>({4}, {0, 0.5f, 3, 7}));
  EXPECT_THAT(RunOk(relu6, {x}), TensorIs<float>({4}, {0, 0.5f, 3, 6}));
  EXPECT_THAT(RunOk(elu, {x}), TensorNear<float>({4}, {std::expm1(-2.0f), 0.5f, 3, 7}, 1e-6));
  KernelRunner rg("ReluGrad"), r6g("Relu6Grad");
  const Tensor g = Filled<float>({4}, 1);
  EXPECT_THAT(RunOk(rg, {g, x}), TensorIs<float>({4}, {0, 1, 1, 1}));
  EXPECT_THAT(RunOk(r6g, {g, x}), TensorIs<float>({4}, {0, 1, 1, 0}));
}

// TF 2.21's numbers for the edge values (tools/tf_interop/op_cases.py):
// Relu is max(x, 0), so NaN and -0 pass; the gradients multiply by the
// mask, so inf * 0 is NaN; SeluGrad takes the scale at y = 0.
TEST(NnTest, ActivationsAtEdgeValuesAsTensorFlow) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Literal<float>({6}, {NAN, inf, -inf, -0.0f, 0.0f, 1e30f});
  const Tensor f = Literal<float>({6}, {1, NAN, inf, 0.0f, -0.0f, -1e30f});
  KernelRunner relu("Relu"), relu6("Relu6"), rg("ReluGrad"), r6g("Relu6Grad");
  const auto expect = [](const Tensor& t, std::vector<float> want) {
    ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const float got = t.data<float>()[i];
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got)) << i << ": " << got;
      } else {
        EXPECT_EQ(got, want[i]) << i;
        EXPECT_EQ(std::signbit(got), std::signbit(want[i])) << i;
      }
    }
  };
  expect(RunOk(relu, {x}), {NAN, inf, 0, -0.0f, 0, 1e30f});
  expect(RunOk(relu6, {x}), {NAN, 6, 0, -0.0f, 0, 6});
  expect(RunOk(rg, {x, f}), {NAN, NAN, -inf, -0.0f, 0, 0});
  expect(RunOk(r6g, {x, f}), {NAN, NAN, NAN, -0.0f, 0, 0});
  KernelRunner selu_grad("SeluGrad");
  expect(RunOk(selu_grad, {Literal<float>({2}, {1, inf}), Literal<float>({2}, {0, NAN})}),
         {1.0507010f, inf});
  KernelRunner int_rg("ReluGrad");
  EXPECT_THAT(RunOk(int_rg, {Literal<int32_t>({3}, {3, -2, 7}), Literal<int32_t>({3}, {1, -1, 0})}),
              TensorIs<int32_t>({3}, {3, 0, 0}));
}

TEST(NnTest, SoftmaxFamily) {
  KernelRunner s("Softmax"), ls("LogSoftmax");
  const Tensor logits = Literal<float>({2, 2}, {1, 1, 0, 1000});
  EXPECT_THAT(RunOk(s, {logits}), TensorNear<float>({2, 2}, {0.5f, 0.5f, 0, 1}, 1e-6));
  EXPECT_THAT(RunOk(ls, {logits}),
              TensorNear<float>({2, 2}, {-0.6931472f, -0.6931472f, -1000, 0}, 1e-4));
  // Two one-hot rows over two equal logits: loss ln 2 each.
  KernelRunner x("SoftmaxCrossEntropyWithLogits");
  absl::StatusOr<std::vector<Tensor>> out =
      x.Run({Filled<float>({2, 2}, 0), Literal<float>({2, 2}, {1, 0, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorNear<float>({2}, {0.6931472f, 0.6931472f}, 1e-6));
  EXPECT_THAT((*out)[1], TensorNear<float>({2, 2}, {-0.5f, 0.5f, 0.5f, -0.5f}, 1e-6));
  KernelRunner sp("SparseSoftmaxCrossEntropyWithLogits");
  out = sp.Run({Literal<float>({1, 3}, {1, 2, 3}), Literal<int64_t>({1}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorNear<float>({1}, {0.40760596f}, 1e-6));
  EXPECT_THAT(
      sp.Run({Literal<float>({1, 3}, {1, 2, 3}), Literal<int32_t>({1}, {3})}).status().message(),
      HasSubstr("Received a label value of 3 which is outside the valid range of [0, 3)"));
}

TEST(NnTest, L2LossAndInTopK) {
  KernelRunner l("L2Loss");
  EXPECT_THAT(RunOk(l, {Literal<float>({3}, {1, 2, 3})}), TensorIs<float>({}, {7}));
  KernelRunner k("InTopKV2");
  const Tensor pred = Literal<float>({3, 3}, {0.1f, 0.8f, 0.1f, 0.3f, 0.3f, 0.4f, NAN, 1, 0});
  EXPECT_THAT(RunOk(k, {pred, Literal<int32_t>({3}, {1, 0, 0}), Scalar<int32_t>(1)}),
              TensorIs<bool>({3}, {true, false, false}));
  EXPECT_THAT(RunOk(k, {pred, Literal<int32_t>({3}, {2, 0, 7}), Scalar<int32_t>(2)}),
              TensorIs<bool>({3}, {true, true, false}));  // ties are not greater
}

}  // namespace
}  // namespace towerflow

namespace towerflow {
namespace {

TEST(NnTest, V1VariantsAndEluGrad) {
  KernelRunner b("BiasAddV1");
  EXPECT_THAT(RunOk(b, {Literal<float>({1, 2}, {1, 2}), Literal<float>({2}, {10, 20})}),
              TensorIs<float>({1, 2}, {11, 22}));
  // EluGrad(g, y): g where y >= 0, g (y + 1) where y < 0.
  KernelRunner e("EluGrad");
  EXPECT_THAT(RunOk(e, {Literal<float>({2}, {2, 2}), Literal<float>({2}, {-0.5f, 3})}),
              TensorIs<float>({2}, {1, 2}));
  KernelRunner k("InTopK");
  k.Attr("k", int64_t{1});
  EXPECT_THAT(
      RunOk(k, {Literal<float>({2, 2}, {0.1f, 0.9f, 0.8f, 0.2f}), Literal<int32_t>({2}, {1, 1})}),
      TensorIs<bool>({2}, {true, false}));
  KernelRunner bm("BatchMatMul");
  EXPECT_THAT(RunOk(bm, {Literal<float>({2, 1, 1}, {2, 3}), Literal<float>({2, 1, 1}, {4, 5})}),
              TensorIs<float>({2, 1, 1}, {8, 15}));
  // FusedBatchNorm (V1) in inference mode uses the given statistics.
  KernelRunner bn("FusedBatchNorm");
  bn.Attr("is_training", false).Attr("epsilon", 0.0f);
  EXPECT_THAT(RunOk(bn, {Literal<float>({1, 1, 1, 2}, {3, 5}), Literal<float>({2}, {2, 1}),
                         Literal<float>({2}, {0, 1}), Literal<float>({2}, {1, 1}),
                         Literal<float>({2}, {4, 16})}),
              TensorIs<float>({1, 1, 1, 2}, {2, 2}));
}

}  // namespace
}  // namespace towerflow
