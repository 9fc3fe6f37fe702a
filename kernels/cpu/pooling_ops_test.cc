// MaxPool, AvgPool, their gradients and MaxPoolGradGrad (pooling_ops.cc).
// Backprop kernels are checked against central differences of their
// forward kernels, and max pooling's ties against TF's first-maximum rule
// computed in the test.
#include <random>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/gradient_check.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

TEST(PoolTest, MaxAndAvgPool) {
  const Tensor x = Literal<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  KernelRunner m("MaxPool");
  m.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  EXPECT_THAT(RunOk(m, {x}), TensorIs<float>({1, 2, 2, 1}, {5, 6, 8, 9}));
  KernelRunner a("AvgPool");
  a.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  EXPECT_THAT(RunOk(a, {x}), TensorIs<float>({1, 2, 2, 1}, {3, 4.5f, 7.5f, 9}));
  KernelRunner k0("MaxPool");
  k0.Attr("ksize", {1, 0, 2, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(k0.Run({x}), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                             "ksize must be positive, got [1,0,2,1]"));
}

TEST(PoolTest, GradientsMatchFiniteDifferences) {
  for (const char* padding : {"SAME", "VALID"}) {
    // Distinct values so the max is unique and the max-pool gradient defined.
    Tensor x = Random<double>({2, 5, 5, 3}, 5);
    for (int64_t i = 0; i < x.NumElements(); ++i) x.data<double>()[i] += 0.01 * i;
    const auto pool = [&](const char* op) {
      return [op, padding](const Tensor& in) {
        KernelRunner r(op);
        r.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", padding);
        return RunOk(r, {in});
      };
    };
    const double max_error = MaxGradientError<double>(
        x, pool("MaxPool"),
        [&](const Tensor& in, const Tensor& dy) {
          KernelRunner r("MaxPoolGrad");
          r.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", padding);
          return RunOk(r, {in, pool("MaxPool")(in), dy});
        },
        1e-6);
    EXPECT_LT(max_error, 1e-8) << padding;
    const double avg_error = MaxGradientError<double>(
        x, pool("AvgPool"),
        [&](const Tensor& in, const Tensor& dy) {
          KernelRunner r("AvgPoolGrad");
          r.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", padding);
          return RunOk(r, {Shape4(in.shape()), dy});
        },
        1e-6);
    EXPECT_LT(avg_error, 1e-8) << padding;
  }
}

TEST(PoolTest, GradWithInconsistentShapesIsAnError) {
  KernelRunner r("AvgPoolGrad");
  r.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(r.Run({Literal<int32_t>({4}, {1, 4, 4, 1}), Filled<float>({1, 3, 3, 1}, 1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "grad has shape [1,3,3,1] but pooling [1,4,4,1] gives [1,2,2,1]"));
  EXPECT_FALSE(r.Run({Literal<int32_t>({4}, {-536870912, -536870912, -536870912, -536870912}),
                      Filled<float>({1, 1, 1, 1}, 1)})
                   .ok());
  KernelRunner m("MaxPoolGrad");
  m.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_FALSE(m.Run({Filled<float>({1, 4, 4, 1}, 1), Filled<float>({1, 2, 2, 1}, 1),
                      Filled<float>({1, 3, 3, 1}, 1)})
                   .ok());
}

TEST(PoolTest, MaxPoolGradGradReadsGradAtEachMaximum) {
  // 1x4x4x1 input, 2x2 windows, stride 2: the maxima sit at (0,1), (1,3),
  // (2,0), (3,2); MaxPoolGradGrad reads grad (shaped like the input) there.
  const Tensor x = Literal<float>({1, 4, 4, 1}, {0, 9, 1, 2,  //
                                                 3, 4, 5, 8,  //
                                                 7, 1, 0, 2,  //
                                                 6, 3, 9, 4});
  const Tensor y = Literal<float>({1, 2, 2, 1}, {9, 8, 7, 9});
  Tensor g(DT_FLOAT, TensorShape({1, 4, 4, 1}));
  for (int i = 0; i < 16; ++i) g.data<float>()[i] = 100.0f + i;
  KernelRunner r("MaxPoolGradGrad");
  r.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(r, {x, y, g}), TensorIs<float>({1, 2, 2, 1}, {101, 107, 108, 114}));
  // grad must be shaped like orig_input.
  absl::Status st = r.Run({x, y, y}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("grad has shape [1,2,2,1] but must be [1,4,4,1]"));
  // NCHW gives the same numbers.
  KernelRunner nchw("MaxPoolGradGrad");
  nchw.Attr("ksize", {1, 1, 2, 2})
      .Attr("strides", {1, 1, 2, 2})
      .Attr("padding", "VALID")
      .Attr("data_format", "NCHW");
  EXPECT_THAT(RunOk(nchw, {Literal<float>({1, 1, 4, 4}, std::vector<float>(x.data<float>(),
                                                                           x.data<float>() + 16)),
                           Literal<float>({1, 1, 2, 2}, {9, 8, 7, 9}),
                           Literal<float>({1, 1, 4, 4}, std::vector<float>(g.data<float>(),
                                                                           g.data<float>() + 16))}),
              TensorIs<float>({1, 1, 2, 2}, {101, 107, 108, 114}));
}

// Max pooling and its gradient work channels a vector packet at a time
// (16 floats or 8 doubles with AVX-512); each window must still send its
// gradient to its first maximum in scan order, as TF, where windows hold
// ties: 20 channels (a packet and a tail) of small integers, against that
// rule computed here, for float and double.
TEST(PoolTest, VectorMaximaKeepTheFirstOnTies) {
  constexpr int64_t kN = 2, kH = 7, kC = 20, kOut = 3;  // 3x3 windows, stride 2
  std::mt19937 gen(3);
  std::uniform_int_distribution<int> pick(0, 3);
  std::vector<double> x(kN * kH * kH * kC), g(kN * kOut * kOut * kC);
  for (double& v : x) v = pick(gen);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(i + 1);
  std::vector<double> y(g.size()), dx(x.size(), 0.0);
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t oh = 0; oh < kOut; ++oh) {
      for (int64_t ow = 0; ow < kOut; ++ow) {
        for (int64_t c = 0; c < kC; ++c) {
          int64_t first = -1;
          for (int64_t h = 2 * oh; h < 2 * oh + 3; ++h) {
            for (int64_t w = 2 * ow; w < 2 * ow + 3; ++w) {
              const int64_t at = ((n * kH + h) * kH + w) * kC + c;
              if (first < 0 || x[at] > x[first]) first = at;
            }
          }
          const int64_t out = ((n * kOut + oh) * kOut + ow) * kC + c;
          y[out] = x[first];
          dx[first] += g[out];
        }
      }
    }
  }
  const auto run = [](const char* op, std::vector<Tensor> in) {
    KernelRunner r(op);
    r.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
    return RunOk(r, in);
  };
  const auto check = [&](auto zero) {
    using T = decltype(zero);
    const auto tensor = [](const std::vector<double>& v, const std::vector<int64_t>& dims) {
      return Literal<T>(TensorShape(dims), std::vector<T>(v.begin(), v.end()));
    };
    const Tensor xt = tensor(x, {kN, kH, kH, kC}), gt = tensor(g, {kN, kOut, kOut, kC});
    const Tensor yt = run("MaxPool", {xt});
    EXPECT_THAT(yt, TensorIs<T>({kN, kOut, kOut, kC}, std::vector<T>(y.begin(), y.end())));
    EXPECT_THAT(run("MaxPoolGrad", {xt, yt, gt}),
                TensorIs<T>({kN, kH, kH, kC}, std::vector<T>(dx.begin(), dx.end())));
  };
  check(0.0f);
  check(0.0);
}

// A SAME window far larger than the input is clipped to it: every output
// pixel sees the whole 2x2 image, and MaxPoolGrad sizes its per-window
// tables by the clipped window, not by ksize.
TEST(PoolTest, HugeSameWindowIsClippedToTheInput) {
  const Tensor x = Literal<float>({1, 2, 2, 1}, {1, 4, 2, 3});
  const auto attrs = [](KernelRunner& r) {
    r.Attr("ksize", {1, int64_t{1} << 30, int64_t{1} << 30, 1})
        .Attr("strides", {1, 1, 1, 1})
        .Attr("padding", "SAME");
  };
  KernelRunner pool("MaxPool"), grad("MaxPoolGrad");
  attrs(pool);
  attrs(grad);
  const Tensor y = RunOk(pool, {x});
  EXPECT_THAT(y, TensorIs<float>({1, 2, 2, 1}, {4, 4, 4, 4}));
  EXPECT_THAT(RunOk(grad, {x, y, Literal<float>({1, 2, 2, 1}, {1, 2, 3, 4})}),
              TensorIs<float>({1, 2, 2, 1}, {0, 10, 0, 0}));
}

// MaxPoolWithArgmax and its gradient against TF 2.21's values: the first
// maximum of each window, a NaN that opens a window kept, later NaNs
// skipped.
Tensor ArgmaxInput() {
  return Literal<float>({2, 3, 4, 2},
                        {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4,
                         3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8, 8, 4, 1, 9, 7, 1, 6, 9, 3, 9, 9, 3, 7});
}

// MaxPoolV2 and its gradients read the window from inputs (TF 2.21's values
// and messages).
TEST(PoolTest, MaxPoolV2WindowFromInputs) {
  const Tensor x = Literal<float>({1, 3, 3, 1}, {1, 5, 2, 4, 3, 6, 0, 8, 7});
  const Tensor k = Literal<int32_t>({4}, {1, 2, 2, 1});
  const Tensor one = Literal<int32_t>({4}, {1, 1, 1, 1});
  KernelRunner valid("MaxPoolV2");
  valid.Attr("padding", "VALID");
  const Tensor y = RunOk(valid, {x, k, one});
  EXPECT_THAT(y, TensorIs<float>({1, 2, 2, 1}, {5, 6, 8, 8}));
  KernelRunner same("MaxPoolV2");
  same.Attr("padding", "SAME");
  EXPECT_THAT(RunOk(same, {x, k, Literal<int32_t>({4}, {1, 2, 2, 1})}),
              TensorIs<float>({1, 2, 2, 1}, {5, 6, 8, 7}));
  KernelRunner grad("MaxPoolGradV2");
  grad.Attr("padding", "VALID");
  EXPECT_THAT(RunOk(grad, {x, y, Literal<float>({1, 2, 2, 1}, {1, 2, 3, 4}), k, one}),
              TensorIs<float>({1, 3, 3, 1}, {0, 1, 0, 0, 0, 2, 0, 7, 0}));
  KernelRunner grad2("MaxPoolGradGradV2");
  grad2.Attr("padding", "VALID");
  EXPECT_THAT(
      RunOk(grad2, {x, y, Literal<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), k, one}),
      TensorIs<float>({1, 2, 2, 1}, {2, 6, 8, 8}));
  const auto run = [&](const Tensor& ksize) {
    KernelRunner r("MaxPoolV2");
    r.Attr("padding", "VALID");
    return r.Run({x, ksize, one});
  };
  EXPECT_THAT(run(Literal<int32_t>({3}, {1, 2, 2})),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Sliding window ksize field must specify 4 dimensions"));
  EXPECT_THAT(run(Literal<int32_t>({4}, {2, 1, 1, 1})),
              testing::StatusIs(absl::StatusCode::kUnimplemented,
                                "Pooling is not yet supported on the batch dimension."));
  EXPECT_THAT(run(Literal<int32_t>({4}, {1, 0, 1, 1})),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Sliding window ksize must be positive."));
}

// Dilation2D and its backprops (dilation_ops.cc), TF 2.21's values.
TEST(DilationTest, MaximaOfInputPlusFilter) {
  const Tensor x = Literal<float>({1, 3, 3, 2}, {-2.5f, 1, -1, 2.5f, 0.5f, -1.5f, 2, 0, -2, 1.5f,
                                                 -0.5f, -2.5f, 1, -1, 2.5f, 0.5f, -1.5f, 2});
  const Tensor f = Literal<float>({2, 2, 2}, {0.5f, -1, 0, 2, -0.5f, 1, 1.5f, 0});
  const auto run = [&](const char* op, std::vector<Tensor> extra, std::vector<int64_t> strides,
                       std::vector<int64_t> rates, const char* padding) {
    KernelRunner r(op);
    r.Attr("strides", strides).Attr("rates", rates).Attr("padding", padding);
    std::vector<Tensor> in = {x, f};
    in.insert(in.end(), extra.begin(), extra.end());
    return RunOk(r, in);
  };
  EXPECT_THAT(run("Dilation2D", {}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"),
              TensorIs<float>({1, 3, 3, 2}, {1.5f, 4.5f, 1, 2.5f, 1, -1.5f, 4, 3.5f, 2, 2, 0, 3,
                                             2.5f, 2.5f, 3, 4, -1, 1}));
  EXPECT_THAT(run("Dilation2D", {}, {1, 2, 2, 1}, {1, 2, 1, 1}, "VALID"),
              TensorIs<float>({1, 1, 1, 2}, {4, 4.5f}));
  std::vector<float> dy(18);
  for (int i = 0; i < 18; ++i) dy[i] = static_cast<float>(i + 1);
  const Tensor g = Literal<float>({1, 3, 3, 2}, dy);
  EXPECT_THAT(
      run("Dilation2DBackpropInput", {g}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"),
      TensorIs<float>({1, 3, 3, 2}, {0, 0, 0, 2, 5, 0, 1, 0, 0, 12, 14, 6, 0, 0, 44, 14, 17, 56}));
  EXPECT_THAT(run("Dilation2DBackpropFilter", {g}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"),
              TensorIs<float>({2, 2, 2}, {48, 18, 13, 40, 10, 22, 10, 10}));
  KernelRunner depth("Dilation2D");
  depth.Attr("strides", {1, 1, 1, 1}).Attr("rates", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(depth.Run({x, Literal<float>({1, 1, 1}, {0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input and filter must have the same depth: 2 vs 1"));
  KernelRunner batch("Dilation2D");
  batch.Attr("strides", {2, 1, 1, 1}).Attr("rates", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(batch.Run({x, f}),
              testing::StatusIs(absl::StatusCode::kUnimplemented,
                                "Stride is only supported across spatial dimensions."));
}

TEST(MaxPoolWithArgmaxTest, MatchesTensorFlow) {
  KernelRunner v("MaxPoolWithArgmax");
  v.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 1, 2, 1}).Attr("padding", "VALID");
  auto out = v.Run({ArgmaxInput()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorIs<float>({2, 2, 2, 2}, {5, 8, 9, 9, 8, 8, 9, 7, 8, 8, 9, 7, 9, 8, 9, 9}));
  EXPECT_THAT((*out)[1], TensorIs<int64_t>({2, 2, 2, 2}, {8, 11, 12, 5, 18, 11, 12, 13, 2, 11, 6, 5,
                                                          18, 11, 14, 21}));
  const Tensor argmax = (*out)[1];
  KernelRunner same("MaxPoolWithArgmax");
  same.Attr("ksize", {1, 2, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  same.Attr("Targmax", DT_INT32).Attr("include_batch_in_index", true);
  out = same.Run({ArgmaxInput()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorIs<float>({2, 2, 2, 2}, {9, 9, 9, 9, 8, 4, 6, 4, 8, 8, 9, 7, 9, 9, 9, 9}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({2, 2, 2, 2}, {12, 5, 12, 5, 18, 19, 20, 23, 26, 35, 30,
                                                          29, 42, 45, 44, 45}));
  KernelRunner one("MaxPoolWithArgmax");
  one.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  for (const auto& [values, value, at] :
       {std::tuple{std::vector<float>{1, 1, 1, 1}, 1.0f, int64_t{0}},
        {std::vector<float>{1, NAN, 3, 2}, 3.0f, int64_t{2}},
        {std::vector<float>{NAN, 1, 3, 2}, NAN, int64_t{0}}}) {
    out = one.Run({Literal<float>({1, 2, 2, 1}, values)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0], TensorIs<float>({1, 1, 1, 1}, {value}));
    EXPECT_THAT((*out)[1], TensorIs<int64_t>({1, 1, 1, 1}, {at}));
  }

  // The gradient, with and without the batch in the index.
  std::vector<float> g(16);
  for (int i = 0; i < 16; ++i) g[i] = static_cast<float>(i + 1);
  const Tensor grad = Literal<float>({2, 2, 2, 2}, g);
  const std::vector<float> expected = {0, 0, 0, 0,  0, 4, 0,  0, 1, 0, 0,  8, 10, 8,  0,  0,
                                       0, 0, 5, 0,  0, 0, 0,  0, 0, 0, 9,  0, 0,  12, 11, 0,
                                       0, 0, 0, 24, 0, 0, 15, 0, 0, 0, 13, 0, 0,  16, 0,  0};
  KernelRunner back("MaxPoolGradWithArgmax");
  back.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 1, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(back, {ArgmaxInput(), grad, argmax}), TensorIs<float>({2, 3, 4, 2}, expected));
  std::vector<int64_t> global(16);
  for (int i = 0; i < 16; ++i) global[i] = argmax.data<int64_t>()[i] + (i >= 8 ? 24 : 0);
  KernelRunner batch("MaxPoolGradWithArgmax");
  batch.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 1, 2, 1}).Attr("padding", "VALID");
  batch.Attr("include_batch_in_index", true);
  EXPECT_THAT(RunOk(batch, {ArgmaxInput(), grad, Literal<int64_t>({2, 2, 2, 2}, global)}),
              TensorIs<float>({2, 3, 4, 2}, expected));
  // TF's kernel CHECK-fails on a position outside the image.
  std::vector<int64_t> far(16, 100);
  EXPECT_THAT(back.Run({ArgmaxInput(), grad, Literal<int64_t>({2, 2, 2, 2}, far)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Invalid argmax 100"));
}

}  // namespace
}  // namespace towerflow
