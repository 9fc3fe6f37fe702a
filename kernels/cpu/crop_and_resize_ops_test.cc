// CropAndResize and its gradient kernels against TensorFlow 2.21's values
// and messages (tf.raw_ops on these images and boxes); the registered
// gradient against tf.GradientTape's. The image gradient is also checked
// against finite differences in ops/gradients.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// tf.reshape(tf.range(80.) / 7, [2, 4, 5, 2]).
Tensor Image() {
  std::vector<float> v(80);
  for (int i = 0; i < 80; ++i) v[i] = static_cast<float>(i) / 7;
  return Literal<float>({2, 4, 5, 2}, v);
}
// Inside, partly outside, and flipped.
Tensor Boxes() {
  return Literal<float>({3, 4},
                        {0.1f, 0.2f, 0.8f, 0.9f, 0.5f, -0.2f, 1.3f, 0.6f, 0.9f, 0.8f, 0.1f, 0.05f});
}
Tensor BoxInd() { return Literal<int32_t>({3}, {1, 0, 1}); }
// tf.reshape(tf.range(36.) / 10 - 1, [3, 3, 2, 2]).
Tensor Grads() {
  std::vector<float> v(36);
  for (int i = 0; i < 36; ++i) v[i] = static_cast<float>(i) / 10 - 1;
  return Literal<float>({3, 3, 2, 2}, v);
}

TEST(CropAndResizeTest, CropsMatchTensorFlow) {
  KernelRunner r("CropAndResize");
  EXPECT_THAT(RunOk(r, {Image(), Boxes(), BoxInd(), Literal<int32_t>({2}, {3, 2})}),
              TensorIs<float>({3, 3, 2, 2}, {6.371428489685059f,
                                             6.514286041259766f,
                                             7.171428680419922f,
                                             7.314286231994629f,
                                             7.8714280128479f,
                                             8.014286041259766f,
                                             8.671428680419922f,
                                             8.814286231994629f,
                                             9.371427536010742f,
                                             9.51428508758545f,
                                             10.171428680419922f,
                                             10.314285278320312f,
                                             0,
                                             0,
                                             2.828571319580078f,
                                             2.971428394317627f,
                                             0,
                                             0,
                                             4.542856693267822f,
                                             4.685713768005371f,
                                             0,
                                             0,
                                             0,
                                             0,
                                             10.485713958740234f,
                                             10.628571510314941f,
                                             9.628571510314941f,
                                             9.771429061889648f,
                                             8.771429061889648f,
                                             8.914285659790039f,
                                             7.914285659790039f,
                                             8.057143211364746f,
                                             7.057142734527588f,
                                             7.200000286102295f,
                                             6.199999809265137f,
                                             6.3428568840026855f}));
  EXPECT_THAT(
      RunOk(r, {Image(), Boxes(), BoxInd(), Literal<int32_t>({2}, {1, 1})}),
      TensorIs<float>({3, 1, 1, 2}, {8.271429061889648f, 8.414285659790039f, 4.085714340209961f,
                                     4.22857141494751f, 8.342857360839844f, 8.485713958740234f}));
  KernelRunner n("CropAndResize");
  n.Attr("method", "nearest").Attr("extrapolation_value", -1.0f);
  EXPECT_THAT(RunOk(n, {Image(), Boxes(), BoxInd(), Literal<int32_t>({2}, {2, 3})}),
              TensorIs<float>({3, 2, 3, 2}, {6.0f,
                                             6.142857074737549f,
                                             6.285714149475098f,
                                             6.4285712242126465f,
                                             6.857142925262451f,
                                             7.0f,
                                             8.857142448425293f,
                                             9.0f,
                                             9.142857551574707f,
                                             9.285714149475098f,
                                             9.714285850524902f,
                                             9.857142448425293f,
                                             -1,
                                             -1,
                                             3.142857074737549f,
                                             3.2857143878936768f,
                                             3.4285714626312256f,
                                             3.5714285373687744f,
                                             -1,
                                             -1,
                                             -1,
                                             -1,
                                             -1,
                                             -1,
                                             10.857142448425293f,
                                             11.0f,
                                             10.571428298950195f,
                                             10.714285850524902f,
                                             10.0f,
                                             10.142857551574707f,
                                             6.5714287757873535f,
                                             6.714285850524902f,
                                             6.285714149475098f,
                                             6.4285712242126465f,
                                             5.714285850524902f,
                                             5.857142925262451f}));
  std::vector<uint8_t> bytes(80);
  for (int i = 0; i < 80; ++i) bytes[i] = static_cast<uint8_t>(i);
  KernelRunner u("CropAndResize");
  EXPECT_THAT(
      RunOk(u, {Literal<uint8_t>({2, 4, 5, 2}, bytes),
                Literal<float>({1, 4}, {0.1f, 0.2f, 0.8f, 0.9f}), Literal<int32_t>({1}, {1}),
                Literal<int32_t>({2}, {2, 2})}),
      TensorIs<float>({1, 2, 2, 2}, {44.599998474121094f, 45.599998474121094f, 50.20000076293945f,
                                     51.20000076293945f, 65.5999984741211f, 66.5999984741211f,
                                     71.19999694824219f, 72.19999694824219f}));
}

TEST(CropAndResizeTest, BadInputsAreTensorFlowsErrors) {
  KernelRunner r("CropAndResize");
  const Tensor size = Literal<int32_t>({2}, {3, 2});
  EXPECT_THAT(
      r.Run({Image(), Boxes(), Literal<int32_t>({3}, {1, 0, 2}), size}),
      StatusIs(absl::StatusCode::kOutOfRange, "box_index has values outside [0, batch_size)"));
  EXPECT_THAT(r.Run({Image(), Boxes(), BoxInd(), Literal<int32_t>({2}, {0, 2})}),
              StatusIs(kInvalid, "crop dimensions must be positive"));
  EXPECT_THAT(r.Run({Image(), Literal<float>({1, 4}, {0.1f, NAN, 0.5f, 0.5f}),
                     Literal<int32_t>({1}, {0}), size}),
              StatusIs(kInvalid, "Boxes contains at least one element that is not finite"));
  EXPECT_THAT(r.Run({Image(), Literal<float>({3, 3}, std::vector<float>(9, 0.5f)), BoxInd(), size}),
              StatusIs(kInvalid, "boxes must have 4 columns"));
  EXPECT_THAT(r.Run({Image(), Boxes(), Literal<int32_t>({2}, {1, 0}), size}),
              StatusIs(kInvalid, "box_index has incompatible shape"));
  EXPECT_THAT(r.Run({Image(), Boxes(), BoxInd(), Literal<int32_t>({3}, {3, 2, 1})}),
              StatusIs(kInvalid, "crop_size must have two elements[3]"));
  EXPECT_THAT(r.Run({Literal<float>({2, 0, 5, 2}, {}), Boxes(), BoxInd(), size}),
              StatusIs(kInvalid, "image dimensions must be positive"));
  KernelRunner g("CropAndResizeGradImage");
  g.Attr("T", DT_FLOAT);
  EXPECT_THAT(g.Run({Grads(), Boxes(), BoxInd(), Literal<int32_t>({4}, {2, 4, 5, 3})}),
              StatusIs(kInvalid, "image_size and grads are incompatible"));
}

TEST(CropAndResizeTest, GradientKernelsMatchTensorFlow) {
  KernelRunner image("CropAndResizeGradImage");
  image.Attr("T", DT_FLOAT);
  const Tensor gi = RunOk(image, {Grads(), Boxes(), BoxInd(), Literal<int32_t>({4}, {2, 4, 5, 2})});
  EXPECT_EQ(gi.shape(), TensorShape({2, 4, 5, 2}));
  const std::vector<float> image1 = {1.2040001153945923f,
                                     1.2739999294281006f,
                                     -0.22399988770484924f,
                                     -0.15399989485740662f,
                                     0,
                                     0,
                                     1.0079998970031738f,
                                     1.0920000076293945f,
                                     -0.027999848127365112f,
                                     0.028000175952911377f,
                                     1.2380000352859497f,
                                     1.3209998607635498f,
                                     -0.20799991488456726f,
                                     -0.1159999668598175f,
                                     0,
                                     0,
                                     1.0479999780654907f,
                                     1.149999976158142f,
                                     0.01200014352798462f,
                                     0.08500011265277863f,
                                     1.1180000305175781f,
                                     1.2009999752044678f,
                                     0.03200007975101471f,
                                     0.12400009483098984f,
                                     0,
                                     0,
                                     0.9999999403953552f,
                                     1.1019999980926514f,
                                     0.18000009655952454f,
                                     0.2530001401901245f,
                                     0.8799996972084045f,
                                     0.943999707698822f,
                                     0.1599999964237213f,
                                     0.20600000023841858f,
                                     0,
                                     0,
                                     0.7839998006820679f,
                                     0.8559997081756592f,
                                     0.19600000977516174f,
                                     0.23399998247623444f};
  for (int i = 0; i < 40; ++i) EXPECT_EQ(gi.data<float>()[40 + i], image1[i]) << i;
  EXPECT_EQ(gi.data<float>()[14], 0.1199999749660492f);
  EXPECT_EQ(gi.data<float>()[34], 0.33599984645843506f);

  KernelRunner boxes("CropAndResizeGradBoxes");
  EXPECT_THAT(
      RunOk(boxes, {Grads(), Image(), Boxes(), BoxInd()}),
      TensorIs<float>({3, 4}, {-18.428571701049805f, -3.771428346633911f, -4.714285373687744f,
                               -2.399998903274536f, 7.499999523162842f, 0, 3.6428568363189697f,
                               2.9714279174804688f, 43.28571319580078f, 12.685712814331055f, 57.0f,
                               14.057140350341797f}));
  std::vector<float> g1(6);
  for (int i = 0; i < 6; ++i) g1[i] = static_cast<float>(i) / 10 - 1;
  EXPECT_THAT(
      RunOk(boxes, {Literal<float>({3, 1, 1, 2}, g1), Image(), Boxes(), BoxInd()}),
      TensorIs<float>({3, 4}, {-4.0714287757873535f, -1.085714340209961f, -4.0714287757873535f,
                               -1.085714340209961f, -3.2142858505249023f, -0.8571435213088989f,
                               -3.2142858505249023f, -0.8571435213088989f, -2.357142925262451f,
                               -0.6285719871520996f, -2.357142925262451f, -0.6285719871520996f}));
}

// d/dboxes of sum(w * crop_and_resize(image, boxes)), w = range(36), as
// tf.GradientTape gives it (the first six values).
TEST(CropAndResizeTest, BoxGradientIsTensorFlows) {
  Scope s = Scope::NewRootScope();
  const Output image = ops::Const(s, Image().AsProto());
  const Output boxes = ops::Const(s, Boxes().AsProto());
  std::vector<float> w(36);
  for (int i = 0; i < 36; ++i) w[i] = static_cast<float>(i);
  const Output crops =
      ops::CropAndResize(s, image, boxes, ops::Const(s, BoxInd().AsProto()), {3, 2});
  const Output loss =
      ops::Sum(s, ops::Mul(s, crops, ops::Const(s, Literal<float>({3, 3, 2, 2}, w).AsProto())),
               {0, 1, 2, 3});
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(s, {loss}, {boxes}, &grads).ok());
  ClientSession session(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run(grads, &out).ok());
  const float* g = out[0].data<float>();
  const std::vector<float> tf = {72.85713195800781f, 30.857133865356445f, 210.00001525878906f,
                                 44.5714225769043f,  203.5714111328125f,  0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(g[i], tf[i]) << i;
}

}  // namespace
}  // namespace towerflow
