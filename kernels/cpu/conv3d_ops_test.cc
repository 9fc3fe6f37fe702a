// Conv3D, its backprops, and the 3-D pools (conv3d_ops.cc,
// pooling3d_ops.cc): TensorFlow 2.21's values (tf.raw_ops on the inputs
// below), backprops against central differences, dilations against a
// zero-dilated filter, NCDHW against NDHWC transposed.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/gradient_check.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// The inputs the reference values were computed on: (((i * mul) % n) / 8 -
// 2 for an n-element tensor, and ((i * 5) % 11 - 5) / 4 for filters.
Tensor Ramp(const std::vector<int64_t>& dims, int64_t mul = 37) {
  const TensorShape shape(dims);
  const int64_t n = shape.num_elements();
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * mul) % n) / 8 - 2;
  return Literal<float>(shape, v);
}
Tensor FilterPattern(const std::vector<int64_t>& dims) {
  const TensorShape shape(dims);
  std::vector<float> v(shape.num_elements());
  for (int64_t i = 0; i < shape.num_elements(); ++i)
    v[i] = static_cast<float>((i * 5) % 11 - 5) / 4;
  return Literal<float>(shape, v);
}
Tensor Shape5(const TensorShape& s) {
  std::vector<int32_t> d;
  for (int64_t x : s.dim_sizes()) d.push_back(static_cast<int32_t>(x));
  return Literal<int32_t>({5}, d);
}

void Window(KernelRunner& r, std::initializer_list<int64_t> strides, const char* padding) {
  r.Attr("strides", strides).Attr("padding", padding);
}

Tensor Conv(const Tensor& x, const Tensor& f, std::initializer_list<int64_t> strides,
            const char* padding, std::vector<int64_t> dilations = {1, 1, 1, 1, 1},
            const char* format = "NDHWC") {
  KernelRunner r("Conv3D");
  Window(r, strides, padding);
  r.Attr("dilations", dilations).Attr("data_format", format);
  return RunOk(r, {x, f});
}

TEST(Conv3DTest, MatchesTensorFlow) {
  const Tensor x = Ramp({1, 2, 3, 3, 2}), f = FilterPattern({2, 2, 2, 2, 2});
  EXPECT_THAT(Conv(x, f, {1, 1, 1, 1, 1}, "VALID"),
              TensorNear<float>(
                  {1, 1, 2, 2, 2},
                  {-1.1875, 0.46875, -0.625, -0.15625, 0.5, -1.40625, 1.0625, -2.03125}, 1e-5));
  EXPECT_THAT(
      Conv(x, f, {1, 2, 2, 2, 1}, "SAME"),
      TensorNear<float>({1, 1, 2, 2, 2},
                        {-1.1875, 0.46875, 2.09375, 1.6875, -7.125, 3.0625, -2.75, 2.84375}, 1e-5));
  // The VALID convolution's backprops for dy = Ramp(y's shape, 7).
  const Tensor dy = Ramp({1, 1, 2, 2, 2}, 7);
  KernelRunner in("Conv3DBackpropInputV2");
  Window(in, {1, 1, 1, 1, 1}, "VALID");
  EXPECT_THAT(
      RunOk(in, {Shape5(x.shape()), f, dy}),
      TensorNear<float>(
          {1, 2, 3, 3, 2},
          {2.5,      -2.21875, 0.125,    -1.875,   -0.5625, 0.09375,  2.0,     -0.5625,  0.84375,
           -0.84375, -2.53125, -0.96875, 0.875,    1.65625, -1.03125, 0.65625, -2.34375, -1.4375,
           0.15625,  0.9375,   1.3125,   2.75,     0.90625, 1.5625,   -2.6875, -1.125,   -1.3125,
           1.8125,   1.375,    2.9375,   -1.46875, -0.6875, -1.625,   0.0625,  0.09375,  1.0},
          1e-5));
  KernelRunner filter("Conv3DBackpropFilterV2");
  Window(filter, {1, 1, 1, 1, 1}, "VALID");
  EXPECT_THAT(
      RunOk(filter, {x, Shape5(f.shape()), dy}),
      TensorNear<float>({2, 2, 2, 2, 2},
                        {9.8125,  8.5625,  9.0,    7.8125,   8.1875,   7.0625,   7.375,   6.3125,
                         4.9375,  4.0625,  4.125,  3.3125,   3.3125,   2.5625,   2.5,     1.8125,
                         -4.8125, -4.9375, -5.625, -5.6875,  -6.4375,  -6.4375,  -7.25,   -7.1875,
                         -9.6875, -9.4375, -10.5,  -10.1875, -11.3125, -10.9375, -12.125, -11.6875},
                        1e-5));
}

TEST(Conv3DTest, BackpropsMatchFiniteDifferences) {
  struct Config {
    std::initializer_list<int64_t> strides;
    const char* padding;
    std::vector<int64_t> dilations;
  };
  for (const Config& c : {Config{{1, 1, 1, 1, 1}, "SAME", {1, 1, 1, 1, 1}},
                          Config{{1, 2, 1, 2, 1}, "SAME", {1, 1, 1, 1, 1}},
                          Config{{1, 1, 2, 1, 1}, "VALID", {1, 1, 1, 1, 1}},
                          Config{{1, 1, 1, 1, 1}, "SAME", {1, 2, 1, 2, 1}}}) {
    const Tensor x = Random<double>({2, 4, 3, 5, 2}, 3), f = Random<double>({2, 3, 2, 2, 3}, 4);
    const auto conv = [&](const Tensor& a, const Tensor& b) {
      KernelRunner r("Conv3D");
      Window(r, c.strides, c.padding);
      r.Attr("dilations", c.dilations);
      return RunOk(r, {a, b});
    };
    const double dx_error = MaxGradientError<double>(
        x, [&](const Tensor& in) { return conv(in, f); },
        [&](const Tensor& in, const Tensor& dy) {
          KernelRunner r("Conv3DBackpropInputV2");
          Window(r, c.strides, c.padding);
          r.Attr("dilations", c.dilations);
          return RunOk(r, {Shape5(in.shape()), f, dy});
        },
        1e-6);
    EXPECT_LT(dx_error, 1e-8) << c.padding;
    const double df_error = MaxGradientError<double>(
        f, [&](const Tensor& w) { return conv(x, w); },
        [&](const Tensor& w, const Tensor& dy) {
          KernelRunner r("Conv3DBackpropFilterV2");
          Window(r, c.strides, c.padding);
          r.Attr("dilations", c.dilations);
          return RunOk(r, {x, Shape5(w.shape()), dy});
        },
        1e-6);
    EXPECT_LT(df_error, 1e-8) << c.padding;
  }
}

TEST(Conv3DTest, DilationIsAZeroDilatedFilter) {
  const Tensor x = Ramp({1, 5, 4, 5, 2}), f = FilterPattern({2, 2, 3, 2, 3});
  // Rate 2 along planes and columns: taps 0 and 2 (planes), 0, 2, 4 (cols).
  std::vector<float> wide(3 * 2 * 5 * 2 * 3, 0.0f);
  for (int64_t kd = 0; kd < 2; ++kd)
    for (int64_t kh = 0; kh < 2; ++kh)
      for (int64_t kw = 0; kw < 3; ++kw)
        for (int64_t i = 0; i < 6; ++i) {
          wide[(((kd * 2) * 2 + kh) * 5 + kw * 2) * 6 + i] =
              f.data<float>()[((kd * 2 + kh) * 3 + kw) * 6 + i];
        }
  const Tensor wide_filter = Literal<float>({3, 2, 5, 2, 3}, wide);
  for (const char* padding : {"SAME", "VALID"}) {
    EXPECT_THAT(Conv(x, f, {1, 1, 1, 1, 1}, padding, {1, 2, 1, 2, 1}),
                TensorNear(Conv(x, wide_filter, {1, 1, 1, 1, 1}, padding), 1e-5, 1e-5))
        << padding;
  }
}

// An NDHWC tensor's NCDHW copy.
Tensor ToNcdhw(const Tensor& t) {
  const auto d = t.shape().dim_sizes();
  std::vector<float> v(t.NumElements());
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t p = 0; p < d[1] * d[2] * d[3]; ++p)
      for (int64_t c = 0; c < d[4]; ++c) {
        v[(n * d[4] + c) * d[1] * d[2] * d[3] + p] =
            t.data<float>()[(n * d[1] * d[2] * d[3] + p) * d[4] + c];
      }
  return Literal<float>({d[0], d[4], d[1], d[2], d[3]}, v);
}

TEST(Conv3DTest, NcdhwIsNdhwcTransposed) {
  const Tensor x = Ramp({2, 3, 4, 3, 2}), f = FilterPattern({2, 3, 2, 2, 3});
  const Tensor y = Conv(x, f, {1, 2, 1, 1, 1}, "SAME");
  EXPECT_THAT(Conv(ToNcdhw(x), f, {1, 1, 2, 1, 1}, "SAME", {1, 1, 1, 1, 1}, "NCDHW"),
              TensorNear(ToNcdhw(y), 1e-5, 1e-5));
  const Tensor dy =
      Ramp(std::vector<int64_t>(y.shape().dim_sizes().begin(), y.shape().dim_sizes().end()), 7);
  const auto backprop = [&](const char* op, const Tensor& a, const Tensor& b, const Tensor& g,
                            const char* format) {
    KernelRunner r(op);
    r.Attr("strides", format[1] == 'D' ? std::vector<int64_t>{1, 2, 1, 1, 1}
                                       : std::vector<int64_t>{1, 1, 2, 1, 1})
        .Attr("padding", "SAME")
        .Attr("data_format", format);
    return RunOk(r, {a, b, g});
  };
  EXPECT_THAT(
      backprop("Conv3DBackpropInputV2", Shape5(ToNcdhw(x).shape()), f, ToNcdhw(dy), "NCDHW"),
      TensorNear(ToNcdhw(backprop("Conv3DBackpropInputV2", Shape5(x.shape()), f, dy, "NDHWC")),
                 1e-5, 1e-5));
  EXPECT_THAT(
      backprop("Conv3DBackpropFilterV2", ToNcdhw(x), Shape5(f.shape()), ToNcdhw(dy), "NCDHW"),
      TensorNear(backprop("Conv3DBackpropFilterV2", x, Shape5(f.shape()), dy, "NDHWC"), 1e-5,
                 1e-5));
}

TEST(Conv3DTest, DeprecatedBackpropsTakeShapesFromTensors) {
  const Tensor x = Ramp({1, 2, 3, 3, 2}), f = FilterPattern({2, 2, 2, 2, 2});
  const Tensor dy = Ramp({1, 2, 3, 3, 2}, 7);
  const auto run = [&](const char* op, const Tensor& a, const Tensor& b) {
    KernelRunner r(op);
    Window(r, {1, 1, 1, 1, 1}, "SAME");
    return RunOk(r, {a, b, dy});
  };
  EXPECT_THAT(run("Conv3DBackpropInput", x, f),
              TensorNear(run("Conv3DBackpropInputV2", Shape5(x.shape()), f), 0, 0));
  EXPECT_THAT(run("Conv3DBackpropFilter", x, f),
              TensorNear(run("Conv3DBackpropFilterV2", x, Shape5(f.shape())), 0, 0));
}

TEST(Conv3DTest, BadInputsAreErrors) {
  const Tensor x = Ramp({1, 2, 3, 3, 2});
  KernelRunner r("Conv3D");
  Window(r, {1, 1, 1, 1, 1}, "VALID");
  EXPECT_THAT(r.Run({x, FilterPattern({2, 2, 2, 3, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input and filter must have the same depth: 2 vs 3"));
  EXPECT_THAT(r.Run({Ramp({2, 3, 3, 2}), FilterPattern({2, 2, 2, 2, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "input must be 5-dimensional"));
  KernelRunner s("Conv3D");
  Window(s, {2, 1, 1, 1, 1}, "VALID");
  EXPECT_THAT(s.Run({x, FilterPattern({2, 2, 2, 2, 2})}),
              testing::StatusIs(absl::StatusCode::kUnimplemented,
                                "strides in the batch and depth dimensions"));
  KernelRunner b("Conv3DBackpropInputV2");
  Window(b, {1, 1, 1, 1, 1}, "VALID");
  EXPECT_THAT(b.Run({Shape5(x.shape()), FilterPattern({2, 2, 2, 2, 2}), Ramp({1, 1, 2, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "out_backprop has shape [1,1,2,2,3] but the convolution "
                                "of [1,2,3,3,2] by [2,2,2,2,2] gives [1,1,2,2,2]"));
}

Tensor Pool(const char* op, const Tensor& x, std::initializer_list<int64_t> ksize,
            std::initializer_list<int64_t> strides, const char* padding) {
  KernelRunner r(op);
  r.Attr("ksize", ksize).Attr("strides", strides).Attr("padding", padding);
  return RunOk(r, {x});
}

TEST(Pool3DTest, MatchesTensorFlow) {
  const Tensor x = Ramp({1, 2, 3, 3, 2});
  EXPECT_THAT(
      Pool("MaxPool3D", x, {1, 3, 3, 3, 1}, {1, 1, 2, 1, 1}, "SAME"),
      TensorIs<float>({1, 2, 2, 3, 2},
                      {1.25, 1.375, 1.5, 1.625, 1.5, 1.625, 2.0, 2.125, 2.25, 2.375, 2.25, 2.375,
                       1.25, 1.375, 1.5, 1.625, 1.5, 1.625, 2.0, 2.125, 2.25, 2.375, 2.25, 2.375}));
  EXPECT_THAT(Pool("AvgPool3D", x, {1, 3, 3, 3, 1}, {1, 1, 2, 1, 1}, "SAME"),
              TensorNear<float>(
                  {1, 2, 2, 3, 2},
                  {-0.375, -0.25, -0.25, -0.125, -0.125, 0.0, 0.375, 0.5, 0.5, 0.625, 0.625, 0.75,
                   -0.375, -0.25, -0.25, -0.125, -0.125, 0.0, 0.375, 0.5, 0.5, 0.625, 0.625, 0.75},
                  1e-6));
  EXPECT_THAT(Pool("AvgPool3D", x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "SAME"),
              TensorNear<float>({1, 1, 2, 2, 2},
                                {-0.375, -0.25, 0.0, 0.125, 0.75, 0.875, 1.125, 1.25}, 1e-6));
  // The gradients of the VALID 2x2x2 stride-1 pools for g = Ramp(8, 7).
  const Tensor g = Ramp({1, 1, 2, 2, 2}, 7);
  const Tensor y = Pool("MaxPool3D", x, {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}, "VALID");
  KernelRunner max_grad("MaxPool3DGrad");
  max_grad.Attr("ksize", {1, 2, 2, 2, 1}).Attr("strides", {1, 1, 1, 1, 1}).Attr("padding", "VALID");
  std::vector<float> expected(36, 0.0f);
  const float tail[] = {-2.0, -1.125, -1.25, -1.375, 0.0, 0.0, -1.5, -1.625, -1.75, -1.875};
  std::copy(std::begin(tail), std::end(tail), expected.begin() + 26);
  EXPECT_THAT(RunOk(max_grad, {x, y, g}), TensorIs<float>({1, 2, 3, 3, 2}, expected));
  KernelRunner avg_grad("AvgPool3DGrad");
  avg_grad.Attr("ksize", {1, 2, 2, 2, 1}).Attr("strides", {1, 1, 1, 1, 1}).Attr("padding", "VALID");
  const std::vector<float> half = {-0.25,   -0.140625, -0.40625, -0.3125, -0.15625, -0.171875,
                                   -0.4375, -0.34375,  -0.8125,  -0.75,   -0.375,   -0.40625,
                                   -0.1875, -0.203125, -0.40625, -0.4375, -0.21875, -0.234375};
  std::vector<float> both = half;
  both.insert(both.end(), half.begin(), half.end());
  EXPECT_THAT(RunOk(avg_grad, {Shape5(x.shape()), g}),
              TensorNear<float>({1, 2, 3, 3, 2}, both, 1e-6));
  KernelRunner grad_grad("MaxPool3DGradGrad");
  grad_grad.Attr("ksize", {1, 2, 2, 2, 1})
      .Attr("strides", {1, 1, 1, 1, 1})
      .Attr("padding", "VALID");
  EXPECT_THAT(
      RunOk(grad_grad, {x, y, Ramp({1, 2, 3, 3, 2}, 5)}),
      TensorIs<float>({1, 1, 2, 2, 2}, {0.75, 1.375, 2.0, -1.875, 0.0, 0.625, 1.25, 1.875}));
}

TEST(Pool3DTest, TiesAsTensorFlow) {
  // MaxPool3DGrad gives every maximum the gradient; MaxPool3DGradGrad reads
  // the first.
  const Tensor x = Literal<float>({1, 2, 2, 2, 1}, {1, 1, 0.5, 1, 0, 1, 1, 0.2});
  const Tensor y = Pool("MaxPool3D", x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "VALID");
  KernelRunner r("MaxPool3DGrad");
  r.Attr("ksize", {1, 2, 2, 2, 1}).Attr("strides", {1, 2, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(r, {x, y, Literal<float>({1, 1, 1, 1, 1}, {3})}),
              TensorIs<float>({1, 2, 2, 2, 1}, {3, 3, 0, 3, 0, 3, 3, 0}));
  KernelRunner gg("MaxPool3DGradGrad");
  gg.Attr("ksize", {1, 2, 2, 2, 1}).Attr("strides", {1, 2, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_THAT(RunOk(gg, {x, y, Literal<float>({1, 2, 2, 2, 1}, {7, 1, 2, 3, 4, 5, 6, 7})}),
              TensorIs<float>({1, 1, 1, 1, 1}, {7}));
}

TEST(Pool3DTest, GradientsMatchFiniteDifferences) {
  for (const char* padding : {"SAME", "VALID"}) {
    const auto attrs = [padding](KernelRunner& r) {
      r.Attr("ksize", {1, 2, 3, 2, 1}).Attr("strides", {1, 2, 1, 2, 1}).Attr("padding", padding);
    };
    const Tensor xd = Random<double>({2, 4, 5, 3, 2}, 8);
    const double avg_error = MaxGradientError<double>(
        xd,
        [&](const Tensor& in) {
          KernelRunner r("AvgPool3D");
          attrs(r);
          return RunOk(r, {in});
        },
        [&](const Tensor& in, const Tensor& dy) {
          KernelRunner r("AvgPool3DGrad");
          attrs(r);
          return RunOk(r, {Shape5(in.shape()), dy});
        },
        1e-6);
    EXPECT_LT(avg_error, 1e-8) << padding;
    // MaxPool3D is float only: distinct values 0.01 apart, a step of 1e-3.
    Tensor xf = Ramp({2, 4, 5, 3, 2});
    for (int64_t i = 0; i < xf.NumElements(); ++i) xf.data<float>()[i] *= 0.08f;
    const auto max_pool = [&](const Tensor& in) {
      KernelRunner r("MaxPool3D");
      attrs(r);
      return RunOk(r, {in});
    };
    const double max_error = MaxGradientError<float>(
        xf, max_pool,
        [&](const Tensor& in, const Tensor& dy) {
          KernelRunner r("MaxPool3DGrad");
          attrs(r);
          return RunOk(r, {in, max_pool(in), dy});
        },
        1e-3);
    EXPECT_LT(max_error, 1e-3) << padding;
  }
}

TEST(Pool3DTest, NcdhwIsNdhwcTransposed) {
  const Tensor x = Ramp({2, 3, 4, 3, 2});
  for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
    KernelRunner r(op);
    r.Attr("ksize", {1, 1, 2, 2, 2}).Attr("strides", {1, 1, 1, 2, 1}).Attr("padding", "SAME");
    r.Attr("data_format", "NCDHW");
    EXPECT_THAT(RunOk(r, {ToNcdhw(x)}),
                TensorNear(ToNcdhw(Pool(op, x, {1, 2, 2, 2, 1}, {1, 1, 2, 1, 1}, "SAME")), 0, 0))
        << op;
  }
}

TEST(Pool3DTest, BadInputsAreErrors) {
  const Tensor x = Ramp({1, 2, 3, 3, 2});
  KernelRunner depth("MaxPool3D");
  depth.Attr("ksize", {1, 2, 2, 2, 2}).Attr("strides", {1, 1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(depth.Run({x}),
              testing::StatusIs(absl::StatusCode::kUnimplemented, "ksize in the batch and depth"));
  KernelRunner grad("AvgPool3DGrad");
  grad.Attr("ksize", {1, 2, 2, 2, 1}).Attr("strides", {1, 1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(grad.Run({Literal<int32_t>({4}, {1, 2, 3, 3}), Ramp({1, 1, 2, 2, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "orig_input_shape must have 5 elements, got 4"));
  EXPECT_THAT(grad.Run({Shape5(x.shape()), Ramp({1, 1, 2, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "grad has shape [1,1,2,2,3] but the pooling gives "
                                "[1,1,2,2,2]"));
  EXPECT_FALSE(grad.Run({Literal<int32_t>({5}, {-1, 2, 3, 3, 2}), Ramp({1, 1, 2, 2, 2})}).ok());
}

}  // namespace
}  // namespace towerflow
