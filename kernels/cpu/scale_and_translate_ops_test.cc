// ScaleAndTranslate and its gradient op (scale_and_translate_ops.cc) with
// TensorFlow's pixels and messages (TF 2.21, tf.raw_ops; tf.image.resize
// with antialias=True is the triangle kernel's).
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// [2, 5, 6, 2] of (i % 7) - 3.
Tensor Image() {
  Tensor t(DT_FLOAT, TensorShape({2, 5, 6, 2}));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i % 7) - 3;
  return t;
}

// Channel 0 of image 0 resampled to 3x4 by `kernel`.
std::vector<float> Down(const std::string& kernel) {
  KernelRunner r("ScaleAndTranslate");
  r.Attr("kernel_type", kernel);
  const Tensor out =
      RunOk(r, {Image(), Literal<int32_t>({2}, {3, 4}), Literal<float>({2}, {3 / 5.0f, 4 / 6.0f}),
                Literal<float>({2}, {0, 0})});
  std::vector<float> v;
  for (int64_t i = 0; i < 12; ++i) v.push_back(out.data<float>()[i * 2]);
  return v;
}

TEST(ScaleAndTranslateOpsTest, KernelsGiveTensorFlowsPixels) {
  const auto near = [](std::vector<float> want) {
    return ::testing::Pointwise(::testing::FloatNear(2e-6f), want);
  };
  EXPECT_THAT(Down("lanczos3"),
              near({-1.346842f, -0.543722f, 1.893957f, -0.788666f, 0.415024f, -1.025347f,
                    -0.664768f, 1.817967f, -0.101548f, 0.397727f, -0.937879f, -1.06643f}));
  // tf.image.resize(antialias=True) of bilinear.
  EXPECT_THAT(Down("triangle"),
              near({-1.232143f, -0.301587f, 1.253968f, -0.482143f, 0.166667f, -0.765432f,
                    -0.382716f, 1.277778f, 0.107143f, 0.079365f, -0.698413f, -0.892857f}));
  EXPECT_THAT(Down("mitchellcubic"),
              near({-1.168361f, -0.405265f, 1.299309f, -0.385881f, 0.140962f, -0.769841f,
                    -0.380943f, 1.247656f, 0.077554f, 0.101956f, -0.774768f, -0.809064f}));
  EXPECT_THAT(Down("Box"), near({-1.0f, -0.666667f, 1.5f, -0.5f, 0.666667f, -1.333333f, -0.333333f,
                                 2.333333f, 0.0f, 0.333333f, -1.0f, -0.666667f}));
  EXPECT_THAT(Down("gaussian"),
              near({-1.030738f, -0.349089f, 1.00252f, -0.16805f, 0.01888f, -0.64724f, -0.263336f,
                    0.959878f, 0.12432f, 0.001232f, -0.661799f, -0.647892f}));
}

TEST(ScaleAndTranslateOpsTest, GradientSendsBackAlongTheSpans) {
  Tensor grads(DT_FLOAT, TensorShape({2, 3, 4, 2}));
  for (int64_t i = 0; i < grads.NumElements(); ++i) grads.data<float>()[i] = i / 10.0f;
  KernelRunner r("ScaleAndTranslateGrad");
  const Tensor out = RunOk(
      r, {grads, Image(), Literal<float>({2}, {3 / 5.0f, 4 / 6.0f}), Literal<float>({2}, {0, 0})});
  ASSERT_EQ(out.shape(), TensorShape({2, 5, 6, 2}));
  std::vector<float> first;
  for (int64_t i = 0; i < 30; ++i) first.push_back(out.data<float>()[i * 2]);
  EXPECT_THAT(first, ::testing::Pointwise(
                         ::testing::FloatNear(2e-6f),
                         std::vector<float>{
                             -0.02066f, 0.00875f,  0.064284f, 0.105864f, 0.192472f, 0.183279f,
                             0.060413f, 0.117648f, 0.17059f,  0.222568f, 0.347312f, 0.315349f,
                             0.280991f, 0.385135f, 0.387733f, 0.433106f, 0.585613f, 0.503529f,
                             0.583385f, 0.764763f, 0.717773f, 0.769752f, 0.994427f, 0.838322f,
                             0.535671f, 0.697141f, 0.646369f, 0.687949f, 0.880863f, 0.739609f}));
}

// A scale so small that its reach is infinite, or a NaN translation, samples
// nothing or everything, but converts no infinity or NaN to an integer (TF
// does, which is undefined).
TEST(ScaleAndTranslateOpsTest, ExtremeScalesAndTranslationsAreDefined) {
  KernelRunner tiny("ScaleAndTranslate");
  EXPECT_THAT(RunOk(tiny, {Image(), Literal<int32_t>({2}, {2, 2}), Literal<float>({2}, {1e-45f, 1}),
                           Literal<float>({2}, {0, 0})}),
              TensorIs<float>({2, 2, 2, 2}, std::vector<float>(16, 0.0f)));
  KernelRunner nan("ScaleAndTranslate");
  const Tensor out =
      RunOk(nan, {Image(), Literal<int32_t>({2}, {2, 2}), Literal<float>({2}, {1, 1}),
                  Literal<float>({2}, {std::nanf(""), 0})});
  EXPECT_EQ(out.shape(), TensorShape({2, 2, 2, 2}));
}

TEST(ScaleAndTranslateOpsTest, RefusesWhatTensorFlowRefuses) {
  const auto run = [](const Tensor& image, const Tensor& size, const Tensor& scale,
                      const char* kernel = "lanczos3") {
    KernelRunner r("ScaleAndTranslate");
    r.Attr("kernel_type", kernel);
    return r.Run({image, size, scale, Literal<float>({2}, {0, 0})}).status();
  };
  const Tensor two = Literal<int32_t>({2}, {3, 4}), ones = Literal<float>({2}, {1, 1});
  const auto invalid = [](const char* message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(run(Tensor(DT_FLOAT, TensorShape({5, 6, 2})), two, ones),
              invalid("input must be 4-dimensional[5,6,2]"));
  EXPECT_THAT(run(Image(), Literal<int32_t>({2}, {0, 4}), ones),
              invalid("output dimensions must be positive"));
  EXPECT_THAT(run(Image(), two, Literal<float>({2}, {0, 1})),
              invalid("Scale must be greater than zero."));
  EXPECT_THAT(run(Image(), Literal<int32_t>({3}, {3, 4, 5}), ones),
              invalid("output_shape_t must have two elements[3]"));
  EXPECT_THAT(run(Image(), two, ones, "cubic"), invalid("Unrecognized kernel type: cubic"));
  EXPECT_THAT(run(Tensor(DT_FLOAT, TensorShape({1, 0, 3, 1})), two, ones),
              invalid("input image must be of non-zero size"));
  EXPECT_THAT(run(Image(), two, Literal<float>({3}, {1, 1, 1})),
              invalid("t must have two elements[3]"));
}

}  // namespace
}  // namespace towerflow
