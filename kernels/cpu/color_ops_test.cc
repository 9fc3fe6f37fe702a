// The colour kernels against TensorFlow 2.21's values and messages
// (tf.raw_ops on these images).
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

// [2, 4, 3]: saturated and grey pixels, black, pure green.
const std::vector<float> kImage = {0.2f,  0.5f, 0.9f, 0.9f, 0.1f, 0.4f, 0.3f, 0.3f,
                                   0.3f,  0.0f, 0.0f, 0.0f, 1.0f, 0.6f, 0.2f, 0.25f,
                                   0.75f, 0.5f, 0.6f, 0.2f, 0.8f, 0.0f, 1.0f, 0.0f};
Tensor Image() { return Literal<float>({2, 4, 3}, kImage); }

Tensor Adjust(const char* op, float value) {
  KernelRunner r(op);
  return RunOk(r, {Image(), Scalar<float>(value)});
}

TEST(ColorTest, RgbToHsvAndBack) {
  KernelRunner hsv("RGBToHSV");
  const Tensor h = RunOk(hsv, {Image()});
  EXPECT_THAT(h, TensorIs<float>({2, 4, 3}, {0.5952380895614624f,
                                             0.7777777910232544f,
                                             0.8999999761581421f,
                                             0.9375f,
                                             0.8888888359069824f,
                                             0.8999999761581421f,
                                             0,
                                             0,
                                             0.30000001192092896f,
                                             0,
                                             0,
                                             0,
                                             0.0833333432674408f,
                                             0.800000011920929f,
                                             1,
                                             0.4166666865348816f,
                                             0.6666666865348816f,
                                             0.75f,
                                             0.7777777910232544f,
                                             0.75f,
                                             0.800000011920929f,
                                             0.3333333432674408f,
                                             1,
                                             1}));
  KernelRunner rgb("HSVToRGB");
  EXPECT_THAT(RunOk(rgb, {h}), TensorIs<float>({2, 4, 3}, {0.19999998807907104f,
                                                           0.5f,
                                                           0.8999999761581421f,
                                                           0.8999999761581421f,
                                                           0.1000000461935997f,
                                                           0.4000000059604645f,
                                                           0.30000001192092896f,
                                                           0.30000001192092896f,
                                                           0.30000001192092896f,
                                                           0,
                                                           0,
                                                           0,
                                                           1,
                                                           0.6000000238418579f,
                                                           0.19999998807907104f,
                                                           0.2499999850988388f,
                                                           0.75f,
                                                           0.4999999701976776f,
                                                           0.6000002026557922f,
                                                           0.20000000298023224f,
                                                           0.800000011920929f,
                                                           0,
                                                           1,
                                                           0}));
  // Hues past [0, 1] wrap.
  EXPECT_THAT(
      RunOk(rgb, {Literal<float>({5, 3}, {0.1f, 0.5f, 0.8f, 0.95f, 1, 0.5f, 0.5f, 0, 0.3f, 1.2f,
                                          0.5f, 0.5f, -0.1f, 0.5f, 0.5f})}),
      TensorIs<float>({5, 3}, {0.800000011920929f, 0.64000004529953f, 0.4000000059604645f, 0.5f, 0,
                               0.15000009536743164f, 0.30000001192092896f, 0.30000001192092896f,
                               0.30000001192092896f, 0.5f, 0.25f, 0.25f, 0.5f, 0.25f, 0.25f}));
  KernelRunner hsv64("RGBToHSV");
  std::vector<double> image64(kImage.begin(), kImage.end());
  const Tensor h64 = RunOk(hsv64, {Literal<double>({8, 3}, image64)});
  EXPECT_THAT(h64.data<double>()[0], 0.5952380932107263);
  EXPECT_THAT(h64.data<double>()[12], 0.08333333798994622);
  EXPECT_THAT(hsv.Run({Literal<float>({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0})}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "input must have 3 channels but input only has 4 channels."));
  EXPECT_THAT(hsv.Run({Scalar<float>(0)}), StatusIs(kInvalid, "input must be at least 1D[]"));
}

TEST(ColorTest, AdjustHueMatchesTensorFlow) {
  EXPECT_THAT(Adjust("AdjustHue", 0.3f), TensorIs<float>({2, 4, 3}, {0.8999999761581421f,
                                                                     0.20000000298023224f,
                                                                     0.64000004529953f,
                                                                     0.5599998235702515f,
                                                                     0.8999999761581421f,
                                                                     0.10000000149011612f,
                                                                     0.30000001192092896f,
                                                                     0.30000001192092896f,
                                                                     0.30000001192092896f,
                                                                     0,
                                                                     0,
                                                                     0,
                                                                     0.20000000298023224f,
                                                                     1,
                                                                     0.44000017642974854f,
                                                                     0.40000009536743164f,
                                                                     0.25f,
                                                                     0.75f,
                                                                     0.800000011920929f,
                                                                     0.48000001907348633f,
                                                                     0.20000000298023224f,
                                                                     0,
                                                                     0.19999980926513672f,
                                                                     1}));
  EXPECT_THAT(Adjust("AdjustHue", -0.75f), TensorIs<float>({2, 4, 3}, {0.8999999761581421f,
                                                                       0.20000000298023224f,
                                                                       0.8500001430511475f,
                                                                       0.7999999523162842f,
                                                                       0.8999999761581421f,
                                                                       0.10000000149011612f,
                                                                       0.30000001192092896f,
                                                                       0.30000001192092896f,
                                                                       0.30000001192092896f,
                                                                       0,
                                                                       0,
                                                                       0,
                                                                       0.20000000298023224f,
                                                                       1,
                                                                       0.20000000298023224f,
                                                                       0.25f,
                                                                       0.25f,
                                                                       0.75f,
                                                                       0.800000011920929f,
                                                                       0.2999999225139618f,
                                                                       0.20000000298023224f,
                                                                       0,
                                                                       0.5f,
                                                                       1}));
  KernelRunner r("AdjustHue");
  EXPECT_THAT(r.Run({Literal<float>({4, 3}, std::vector<float>(12, 0)), Scalar<float>(0.3f)}),
              StatusIs(kInvalid, "input must be at least 3-D, got shape[4,3]"));
  EXPECT_THAT(r.Run({Literal<float>({1, 4, 2}, std::vector<float>(8, 0)), Scalar<float>(0.3f)}),
              StatusIs(kInvalid, "input must have 3 channels but instead has 2 channels."));
  EXPECT_THAT(r.Run({Image(), Literal<float>({1}, {0.3f})}),
              StatusIs(kInvalid, "delta must be scalar: [1]"));
  // TF's kernel loops forever on an infinite delta.
  EXPECT_THAT(r.Run({Image(), Scalar<float>(INFINITY)}),
              StatusIs(kInvalid, "delta must be finite"));
}

TEST(ColorTest, AdjustSaturationMatchesTensorFlow) {
  EXPECT_THAT(Adjust("AdjustSaturation", 0.4f), TensorIs<float>({2, 4, 3}, {0.6200000047683716f,
                                                                            0.7400000095367432f,
                                                                            0.8999999761581421f,
                                                                            0.8999999761581421f,
                                                                            0.5800000429153442f,
                                                                            0.7000000476837158f,
                                                                            0.30000001192092896f,
                                                                            0.30000001192092896f,
                                                                            0.30000001192092896f,
                                                                            0,
                                                                            0,
                                                                            0,
                                                                            1,
                                                                            0.8399999737739563f,
                                                                            0.6799999475479126f,
                                                                            0.5499999523162842f,
                                                                            0.75f,
                                                                            0.6499999761581421f,
                                                                            0.7200000882148743f,
                                                                            0.5600000023841858f,
                                                                            0.800000011920929f,
                                                                            0.6000000238418579f,
                                                                            1,
                                                                            0.6000000238418579f}));
  EXPECT_THAT(Adjust("AdjustSaturation", 3), TensorIs<float>({2, 4, 3}, {0,
                                                                         0.3857142925262451f,
                                                                         0.8999999761581421f,
                                                                         0.8999999761581421f,
                                                                         0,
                                                                         0.3374999761581421f,
                                                                         0.30000001192092896f,
                                                                         0.30000001192092896f,
                                                                         0.30000001192092896f,
                                                                         0,
                                                                         0,
                                                                         0,
                                                                         1,
                                                                         0.5f,
                                                                         0,
                                                                         0,
                                                                         0.75f,
                                                                         0.375f,
                                                                         0.5333335995674133f,
                                                                         0,
                                                                         0.800000011920929f,
                                                                         0,
                                                                         1,
                                                                         0}));
}

TEST(ColorTest, AdjustContrastMatchesTensorFlow) {
  EXPECT_THAT(Adjust("AdjustContrastv2", 1.7f),
              TensorIs<float>({2, 4, 3}, {0.05562499165534973f,  0.5481250286102295f,
                                          1.2587499618530273f,   1.2456250190734863f,
                                          -0.13187500834465027f, 0.4087500274181366f,
                                          0.22562500834465027f,  0.2081250101327896f,
                                          0.23875002562999725f,  -0.28437501192092896f,
                                          -0.3018750250339508f,  -0.27125000953674316f,
                                          1.415624976158142f,    0.71812504529953f,
                                          0.06874999403953552f,  0.140625f,
                                          0.9731249809265137f,   0.5787500143051147f,
                                          0.7356250286102295f,   0.03812497854232788f,
                                          1.0887501239776611f,   -0.28437501192092896f,
                                          1.3981250524520874f,   -0.27125000953674316f}));
  // An odd number of pixels per image (5 x 2 = 10, folded 5, 3, 2, 1).
  std::vector<float> v(30);
  for (int i = 0; i < 30; ++i) v[i] = static_cast<float>(i) / 7;
  KernelRunner r("AdjustContrastv2");
  EXPECT_THAT(
      RunOk(r, {Literal<float>({1, 5, 2, 3}, v), Scalar<float>(-0.4f)}),
      TensorIs<float>(
          {1, 5, 2, 3},
          {2.6999998092651367f, 2.8428571224212646f, 2.9857141971588135f, 2.528571367263794f,
           2.671428680419922f,  2.8142855167388916f, 2.357142686843872f,  2.5f,
           2.642857074737549f,  2.1857142448425293f, 2.328571319580078f,  2.471428394317627f,
           2.0142855644226074f, 2.1571428775787354f, 2.299999952316284f,  1.842857003211975f,
           1.9857141971588135f, 2.1285712718963623f, 1.6714284420013428f, 1.8142857551574707f,
           1.95714271068573f,   1.4999998807907104f, 1.6428570747375488f, 1.7857141494750977f,
           1.3285713195800781f, 1.4714285135269165f, 1.6142855882644653f, 1.1571426391601562f,
           1.2999999523162842f, 1.442857027053833f}));
  EXPECT_THAT(r.Run({Image(), Literal<float>({1}, {1})}),
              StatusIs(kInvalid, "contrast_factor must be scalar: [1]"));
}

}  // namespace
}  // namespace towerflow
