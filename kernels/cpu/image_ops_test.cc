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

// ResizeBicubic and ResizeArea against TF 2.21 (tf.raw_ops on a 1x3x4x2
// image): upscaling and downscaling, align_corners, half_pixel_centers
// (Keys' kernel, outside taps renormalised), uint8 input.
TEST(ResizeTest, BicubicAndAreaAreTensorFlows) {
  const Tensor image = Literal<float>({1, 3, 4, 2}, {-3.0f,
                                                     -1.2999999523162842f,
                                                     0.40000009536743164f,
                                                     2.1000003814697266f,
                                                     3.8000001907348633f,
                                                     5.5f,
                                                     7.200000762939453f,
                                                     -2.09999942779541f,
                                                     -0.39999961853027344f,
                                                     1.3000001907348633f,
                                                     3.0f,
                                                     4.700000762939453f,
                                                     6.400001525878906f,
                                                     -2.8999996185302734f,
                                                     -1.1999988555908203f,
                                                     0.5f,
                                                     2.200000762939453f,
                                                     3.9000015258789062f,
                                                     5.600000381469727f,
                                                     7.299999237060547f,
                                                     -2.0f,
                                                     -0.2999992370605469f,
                                                     1.4000015258789062f,
                                                     3.1000022888183594f});
  const auto resize = [](const char* op, const Tensor& in, int h, int w, bool align, bool half) {
    KernelRunner r(op);
    r.Attr("align_corners", align);
    if (std::string(op) == "ResizeBicubic") r.Attr("half_pixel_centers", half);
    return RunOk(r, {in, Literal<int32_t>({2}, {h, w})});
  };
  EXPECT_THAT(resize("ResizeBicubic", image, 5, 7, false, false),
              TensorNear<float>({1, 5, 7, 2},
                                {-3.0f,
                                 -1.2999999523162842f,
                                 -1.3847284317016602f,
                                 0.31527185440063477f,
                                 1.033327579498291f,
                                 2.877126455307007f,
                                 2.6786205768585205f,
                                 5.581594944000244f,
                                 5.070416450500488f,
                                 3.8632211685180664f,
                                 6.833962917327881f,
                                 -1.1379987001419067f,
                                 7.556794166564941f,
                                 -2.8975372314453125f,
                                 -1.6906356811523438f,
                                 0.00936424732208252f,
                                 -0.19999122619628906f,
                                 2.3305859565734863f,
                                 2.589540958404541f,
                                 3.286364793777466f,
                                 5.727300643920898f,
                                 1.2059736251831055f,
                                 5.605454921722412f,
                                 -0.51240074634552f,
                                 2.3871872425079346f,
                                 -0.7287609577178955f,
                                 1.3083510398864746f,
                                 -0.8822234869003296f,
                                 0.3078250288963318f,
                                 2.0078248977661133f,
                                 2.126481533050537f,
                                 4.888297080993652f,
                                 4.239434242248535f,
                                 4.57174825668335f,
                                 5.667107582092285f,
                                 -1.299189567565918f,
                                 3.5539650917053223f,
                                 -3.017563581466675f,
                                 -0.7184624671936035f,
                                 0.5566232800483704f,
                                 -2.253711462020874f,
                                 1.6754878759384155f,
                                 1.804404616355896f,
                                 3.5044050216674805f,
                                 4.370621681213379f,
                                 6.301757335662842f,
                                 4.7724785804748535f,
                                 6.174307346343994f,
                                 1.056995153427124f,
                                 0.8667396306991577f,
                                 -0.7601912021636963f,
                                 -0.851633608341217f,
                                 0.5213729739189148f,
                                 2.159184694290161f,
                                 0.8656107187271118f,
                                 3.0889501571655273f,
                                 2.4807090759277344f,
                                 4.1807098388671875f,
                                 5.374938488006592f,
                                 6.950311183929443f,
                                 5.027090549468994f,
                                 6.8859968185424805f,
                                 -0.9370927214622498f,
                                 1.766523838043213f,
                                 -2.6554665565490723f,
                                 0.0481511652469635f,
                                 1.0119669437408447f,
                                 2.8708739280700684f,
                                 2.16213059425354f,
                                 3.73750376701355f},
                                2e-5));
  EXPECT_THAT(resize("ResizeBicubic", image, 5, 7, true, false),
              TensorNear<float>({1, 5, 7, 2},
                                {-3.0f,
                                 -1.2999999523162842f,
                                 -1.618749976158142f,
                                 0.08125030994415283f,
                                 0.40000009536743164f,
                                 2.1000003814697266f,
                                 2.0999999046325684f,
                                 4.8312506675720215f,
                                 3.8000001907348633f,
                                 5.5f,
                                 5.818750381469727f,
                                 2.0187501907348633f,
                                 7.200000762939453f,
                                 -2.09999942779541f,
                                 -1.9437497854232788f,
                                 -0.2437499761581421f,
                                 -0.6591797471046448f,
                                 1.6531256437301636f,
                                 1.4562499523162842f,
                                 3.1562509536743164f,
                                 4.284180164337158f,
                                 2.621875762939453f,
                                 5.887500762939453f,
                                 1.0562502145767212f,
                                 4.737305641174316f,
                                 -0.19062493741512299f,
                                 2.7562508583068848f,
                                 -1.0437499284744263f,
                                 -0.39999961853027344f,
                                 1.3000001907348633f,
                                 0.9812500476837158f,
                                 3.71250057220459f,
                                 3.0f,
                                 4.700000762939453f,
                                 5.731250286102295f,
                                 0.900000810623169f,
                                 6.400001525878906f,
                                 -2.8999996185302734f,
                                 2.9187514781951904f,
                                 -1.9124999046325684f,
                                 -1.1999988555908203f,
                                 0.5f,
                                 1.143750548362732f,
                                 2.8437509536743164f,
                                 3.0406253337860107f,
                                 5.352929592132568f,
                                 4.543750286102295f,
                                 6.243750095367432f,
                                 4.10605525970459f,
                                 1.831445574760437f,
                                 2.4437508583068848f,
                                 -2.3874993324279785f,
                                 0.6812512874603271f,
                                 -0.9810536503791809f,
                                 -0.6874985694885254f,
                                 2.0437512397766113f,
                                 2.200000762939453f,
                                 3.9000015258789062f,
                                 4.6125006675720215f,
                                 6.3125f,
                                 5.600000381469727f,
                                 7.299999237060547f,
                                 1.7999999523162842f,
                                 3.499999523162842f,
                                 -2.0f,
                                 -0.2999992370605469f,
                                 -1.0124993324279785f,
                                 0.6875016689300537f,
                                 1.4000015258789062f,
                                 3.1000022888183594f},
                                2e-5));
  EXPECT_THAT(
      resize("ResizeBicubic", image, 5, 7, false, true),
      TensorNear<float>({1, 5, 7, 2},
                        {-3.4657020568847656f,   -1.7657021284103394f,  -2.298290967941284f,
                         -0.6300469040870667f,   -0.05418817698955536f, 1.620331048965454f,
                         1.8517096042633057f,    4.758448123931885f,    3.8989720344543457f,
                         5.883453369140625f,     6.685141563415527f,    0.41451704502105713f,
                         8.169561386108398f,     -2.964221954345703f,   -2.4727914333343506f,
                         -0.7727915048599243f,   -1.3242321014404297f,  0.5422868728637695f,
                         0.9235957264900208f,    2.757211446762085f,    3.415412425994873f,
                         3.1110036373138428f,    5.165953636169434f,    2.250403642654419f,
                         4.571348190307617f,     -0.19128167629241943f, 4.057600498199463f,
                         -1.5994725227355957f,   -0.6693353652954102f,  1.0306644439697266f,
                         0.49807560443878174f,   2.618541955947876f,    2.742178201675415f,
                         4.779561996459961f,     5.387500762939453f,    0.9000006914138794f,
                         6.161076545715332f,     -2.979560375213623f,   1.2279300689697266f,
                         -0.8185415863990784f,   -1.8020434379577637f,  0.7693356871604919f,
                         1.1341205835342407f,    2.834120988845825f,    2.5743308067321777f,
                         4.440849781036377f,     4.764528274536133f,    6.598143100738525f,
                         3.2073214054107666f,    2.4260363578796387f,   0.9088394641876221f,
                         -1.6621484756469727f,   0.25660380721092224f,  0.8169410228729248f,
                         0.034507475793361664f,  2.6118617057800293f,   2.1270315647125244f,
                         3.8270318508148193f,    3.7466650009155273f,   5.4149088859558105f,
                         5.901409149169922f,     7.575927257537842f,    1.5290521383285522f,
                         3.696366548538208f,     -2.701939582824707f,   -0.1831936538219452f,
                         -0.005128383636474609f, 1.977826714515686f,    1.9315154552459717f,
                         3.565704345703125f},
                        2e-5));
  EXPECT_THAT(resize("ResizeBicubic", image, 2, 3, false, true),
              TensorNear<float>({1, 2, 3, 2},
                                {-2.215670108795166f, -0.49010664224624634f, 2.802464008331299f,
                                 3.7497267723083496f, 5.466658115386963f, -1.020346999168396f,
                                 2.2118287086486816f, 3.9373927116394043f, 2.5528290271759033f,
                                 2.928010940551758f, 0.5398905277252197f, 2.1621429920196533f},
                                2e-5));
  EXPECT_THAT(resize("ResizeArea", image, 5, 7, false, false),
              TensorNear<float>({1, 5, 7, 2},
                                {-3.0f,
                                 -1.2999999523162842f,
                                 -2.1499996185302734f,
                                 -0.44999954104423523f,
                                 0.40000006556510925f,
                                 2.1000003814697266f,
                                 2.1000003814697266f,
                                 3.8000001907348633f,
                                 3.799999952316284f,
                                 5.499999523162842f,
                                 6.350002765655518f,
                                 -0.20000122487545013f,
                                 7.199995994567871f,
                                 -2.0999982357025146f,
                                 -2.1333329677581787f,
                                 -0.43333300948143005f,
                                 -1.2833327054977417f,
                                 0.4166673719882965f,
                                 1.2666667699813843f,
                                 2.966667413711548f,
                                 2.966667413711548f,
                                 2.8333330154418945f,
                                 4.6666669845581055f,
                                 2.6999995708465576f,
                                 4.466668128967285f,
                                 -0.25000056624412537f,
                                 4.399997711181641f,
                                 -1.2333320379257202f,
                                 -0.39999958872795105f,
                                 1.3000000715255737f,
                                 0.4500005543231964f,
                                 2.15000057220459f,
                                 3.0f,
                                 4.700000762939453f,
                                 4.700000762939453f,
                                 0.8999989032745361f,
                                 6.400001049041748f,
                                 -2.8999996185302734f,
                                 0.6999998092651367f,
                                 -0.3499992787837982f,
                                 -1.199998140335083f,
                                 0.4999997317790985f,
                                 1.33333420753479f,
                                 3.033334493637085f,
                                 2.1833343505859375f,
                                 3.8833348751068115f,
                                 4.733333587646484f,
                                 6.433332920074463f,
                                 2.76666522026062f,
                                 2.6333320140838623f,
                                 0.7999993562698364f,
                                 -1.1666656732559204f,
                                 0.6000012159347534f,
                                 1.3833359479904175f,
                                 0.5333347320556641f,
                                 2.2333338260650635f,
                                 2.200000286102295f,
                                 3.9000003337860107f,
                                 3.0500001907348633f,
                                 4.75f,
                                 5.599998950958252f,
                                 7.299997329711914f,
                                 1.7999978065490723f,
                                 3.499997138977051f,
                                 -1.9999994039535522f,
                                 -0.2999991476535797f,
                                 0.5500019192695618f,
                                 2.25000262260437f,
                                 1.4000004529953003f,
                                 3.0999999046325684f},
                                2e-5));
  EXPECT_THAT(resize("ResizeArea", image, 2, 3, false, false),
              TensorNear<float>({1, 2, 3, 2},
                                {-1.2833331823349f, 0.4166669547557831f, 2.9666671752929688f,
                                 2.833333730697632f, 4.466667175292969f, -0.24999983608722687f,
                                 2.1833338737487793f, 3.883334159851074f, 2.766666889190674f,
                                 2.633333444595337f, 0.6000011563301086f, 1.383334755897522f},
                                2e-5));
  EXPECT_THAT(resize("ResizeArea", image, 2, 3, true, false),
              TensorNear<float>({1, 2, 3, 2},
                                {-0.5666665434837341f, 1.133333683013916f, 3.9666671752929688f,
                                 2.000000476837158f, 3.0000009536743164f, -0.7999997138977051f,
                                 3.333333969116211f, 5.033334255218506f, 0.5333334803581238f,
                                 2.2333335876464844f, 1.4000015258789062f, 3.1000022888183594f},
                                2e-5));
  std::vector<uint8_t> bytes(24);
  for (int i = 0; i < 24; ++i) bytes[i] = static_cast<uint8_t>(i * 37 % 256);
  const Tensor u8 = Literal<uint8_t>({1, 3, 4, 2}, bytes);
  EXPECT_THAT(resize("ResizeArea", u8, 2, 3, false, false),
              TensorNear<float>({1, 2, 3, 2},
                                {31.833335876464844f, 68.83333587646484f, 124.33334350585938f,
                                 161.33334350585938f, 152.83331298828125f, 61.83332443237305f,
                                 85.16667175292969f, 122.16667175292969f, 177.66668701171875f,
                                 129.33334350585938f, 78.16665649414062f, 72.5f},
                                1e-4));
  EXPECT_THAT(
      resize("ResizeBicubic", u8, 4, 5, false, true),
      TensorNear<float>(
          {1, 4, 5, 2},
          {-5.280712604522705f,  31.719289779663086f, 45.88658142089844f,  82.88658142089844f,
           108.07462310791016f,  161.9104461669922f,  175.68443298339844f, 137.14605712890625f,
           237.0514678955078f,   -6.93808126449585f,  19.07263946533203f,  56.0726432800293f,
           70.23992919921875f,   105.960205078125f,   143.29185485839844f, 196.36668395996094f,
           151.29408264160156f,  175.7032470703125f,  80.08677673339844f,  16.640735626220703f,
           54.545040130615234f,  91.54505157470703f,  105.71233367919922f, 149.52044677734375f,
           185.85874938964844f,  167.98878479003906f, 154.9352264404297f,  121.40739440917969f,
           -2.8475704193115234f, 57.00819396972656f,  78.89839935302734f,  115.89839935302734f,
           130.06568908691406f,  186.2587890625f,     209.0895538330078f,  94.5671615600586f,
           184.32518005371094f,  8.297301292419434f,  40.241024017333984f, 88.857421875f},
          1e-4));
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

// ExtractImagePatches against TF 2.21: VALID, SAME with rates (zeros in
// the padding), an integer image, a window past the input (no patches) and
// TF's errors.
TEST(ExtractImagePatchesTest, MatchesTensorFlow) {
  std::vector<float> v(60);
  for (int i = 0; i < 60; ++i) v[i] = static_cast<float>(i);
  const Tensor x = Literal<float>({1, 5, 6, 2}, v);
  const auto run = [&](const Tensor& in, std::vector<int64_t> k, std::vector<int64_t> st,
                       std::vector<int64_t> r, const char* padding) {
    KernelRunner p("ExtractImagePatches");
    p.Attr("ksizes", k).Attr("strides", st).Attr("rates", r).Attr("padding", padding);
    return p.Run({in});
  };
  auto out = run(x, {1, 2, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorIs<float>({1, 2, 2, 12},
                              {0,  1,  2,  3,  4,  5,  12, 13, 14, 15, 16, 17, 4,  5,  6,  7,
                               8,  9,  16, 17, 18, 19, 20, 21, 24, 25, 26, 27, 28, 29, 36, 37,
                               38, 39, 40, 41, 28, 29, 30, 31, 32, 33, 40, 41, 42, 43, 44, 45}));
  out = run(x, {1, 2, 2, 1}, {1, 3, 2, 1}, {1, 2, 2, 1}, "SAME");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorIs<float>({1, 2, 3, 8},
                              {0,  1,  4,  5,  24, 25, 28, 29, 4,  5,  8,  9,  28, 29, 32, 33,
                               8,  9,  0,  0,  32, 33, 0,  0,  36, 37, 40, 41, 0,  0,  0,  0,
                               40, 41, 44, 45, 0,  0,  0,  0,  44, 45, 0,  0,  0,  0,  0,  0}));
  std::vector<uint8_t> bytes(60);
  for (int i = 0; i < 60; ++i) bytes[i] = static_cast<uint8_t>(i);
  out =
      run(Literal<uint8_t>({1, 5, 6, 2}, bytes), {1, 2, 2, 1}, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorIs<uint8_t>({1, 2, 2, 8},
                                {0,  1,  2,  3,  12, 13, 14, 15, 6,  7,  8,  9,  18, 19, 20, 21,
                                 36, 37, 38, 39, 48, 49, 50, 51, 42, 43, 44, 45, 54, 55, 56, 57}));
  out = run(x, {1, 6, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 0, 2, 36}));
  EXPECT_THAT(run(x, {1, 2, 3, 2}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"),
              StatusIs(absl::StatusCode::kUnimplemented, "Only support ksizes across space."));
  EXPECT_THAT(run(x, {1, 2, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 2}, "VALID"),
              StatusIs(absl::StatusCode::kUnimplemented, "Only support rates across space."));
  EXPECT_THAT(run(x, {1, 0, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"),
              StatusIs(absl::StatusCode::kOutOfRange, "ksizes is out of range."));
  EXPECT_THAT(run(Literal<float>({5, 6, 2}, v), {1, 2, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"),
              StatusIs(absl::StatusCode::kInvalidArgument, "input must be 4-dimensional[5,6,2]"));
}

// ExtractVolumePatches against TF 2.21: VALID, SAME (the smaller half of the
// padding before, zeros in it), a window past the input and TF's errors.
TEST(ExtractVolumePatchesTest, MatchesTensorFlow) {
  const auto run = [](const Tensor& in, std::vector<int64_t> k, std::vector<int64_t> st,
                      const char* padding) {
    KernelRunner p("ExtractVolumePatches");
    p.Attr("ksizes", k).Attr("strides", st).Attr("padding", padding);
    return p.Run({in});
  };
  std::vector<float> small(18);
  for (int i = 0; i < 18; ++i) small[i] = static_cast<float>(i);
  auto out = run(Literal<float>({1, 2, 3, 3, 1}, small), {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}, "VALID");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<float>({1, 1, 2, 2, 8},
                                         {0, 1, 3, 4, 9,  10, 12, 13, 1, 2, 4, 5, 10, 11, 13, 14,
                                          3, 4, 6, 7, 12, 13, 15, 16, 4, 5, 7, 8, 13, 14, 16, 17}));
  std::vector<float> odd(60);
  for (int i = 0; i < 60; ++i) odd[i] = static_cast<float>(1 + 2 * i);
  const Tensor volume = Literal<float>({1, 3, 4, 5, 1}, odd);
  out = run(volume, {1, 2, 3, 2, 1}, {1, 2, 2, 3, 1}, "SAME");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      (*out)[0],
      TensorIs<float>(
          {1, 2, 2, 2, 12},
          {1,  3,  11, 13, 21,  23,  41,  43,  51, 53, 61, 63, 7,   9,   17,  19,  27, 29, 47, 49,
           57, 59, 67, 69, 21,  23,  31,  33,  0,  0,  61, 63, 71,  73,  0,   0,   27, 29, 37, 39,
           0,  0,  67, 69, 77,  79,  0,   0,   81, 83, 91, 93, 101, 103, 0,   0,   0,  0,  0,  0,
           87, 89, 97, 99, 107, 109, 0,   0,   0,  0,  0,  0,  101, 103, 111, 113, 0,  0,  0,  0,
           0,  0,  0,  0,  107, 109, 117, 119, 0,  0,  0,  0,  0,   0,   0,   0}));
  out = run(Tensor(DT_FLOAT, TensorShape({2, 3, 4, 5, 2})), {1, 4, 2, 2, 1}, {1, 1, 2, 2, 1},
            "VALID");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 0, 2, 2, 32}));
  EXPECT_THAT(run(volume, {2, 2, 2, 2, 1}, {1, 1, 2, 2, 1}, "VALID"),
              StatusIs(absl::StatusCode::kUnimplemented, "Only support ksizes across space."));
  EXPECT_THAT(run(volume, {1, 0, 2, 2, 1}, {1, 1, 2, 2, 1}, "VALID"),
              StatusIs(absl::StatusCode::kOutOfRange, "ksizes is out of range."));
  EXPECT_THAT(run(Literal<float>({3, 4, 5}, odd), {1, 2, 2, 2, 1}, {1, 1, 2, 2, 1}, "VALID"),
              StatusIs(absl::StatusCode::kInvalidArgument, "input must be 5-dimensional[3,4,5]"));
}

}  // namespace
}  // namespace towerflow
