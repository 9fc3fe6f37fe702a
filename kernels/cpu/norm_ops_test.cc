// TF's first batch norm, BatchNormWithGlobalNormalization, and its gradient
// op (kernels/cpu/norm_ops.cc) against TF 2.21's values.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// TF 2.21's values, from a GraphDef of producer version 8 (TF refuses the op
// in later graphs; the 2015 Inception graphs have it).
TEST(NormOpsTest, BatchNormWithGlobalNormalizationMatchesTensorFlow) {
  std::vector<float> t(24), dy(24);
  for (int i = 0; i < 24; ++i) {
    t[i] = static_cast<float>(i) / 5 - 2;
    dy[i] = static_cast<float>(i % 7 - 3) / 4;
  }
  const Tensor x = Literal<float>({1, 2, 3, 4}, t), backprop = Literal<float>({1, 2, 3, 4}, dy);
  const Tensor m = Literal<float>({4}, {0.1f, -0.2f, 0.3f, 0}),
               v = Literal<float>({4}, {1, 0.5f, 2, 0.25f}),
               beta = Literal<float>({4}, {0.5f, 0, -1, 2}),
               gamma = Literal<float>({4}, {2, -1, 0.5f, 1});
  const std::vector<float> want_result[2] = {
      {-3.6979012489318848f, 2.2604823112487793f,   -1.671583652496338f,  -0.7944169044494629f,
       -2.098701238632202f,  1.1302412748336792f,   -1.3888115882873535f, 0.8023927211761475f,
       -0.4995003342628479f, 6.31571452913704e-08f, -1.1060395240783691f, 2.399202585220337f,
       1.0997004508972168f,  -1.1302410364151f,     -0.8232674598693848f, 3.9960122108459473f,
       2.6989009380340576f,  -2.2604825496673584f,  -0.5404954552650452f, 5.5928215980529785f,
       4.298101425170898f,   -3.390723466873169f,   -0.257723331451416f,  7.189631462097168f},
      {-1.5989506244659424f,   -2.2604823112487793f,   -2.343167304992676f,   -0.7944169044494629f,
       -0.7993506193161011f,   -1.1302412748336792f,   -1.7776230573654175f,  0.8023927211761475f,
       0.0002498328685760498f, -6.31571452913704e-08f, -1.2120790481567383f,  2.399202585220337f,
       0.7998502254486084f,    1.1302410364151f,       -0.6465349793434143f,  3.9960122108459473f,
       1.5994504690170288f,    2.2604825496673584f,    -0.08099091053009033f, 5.5928215980529785f,
       2.399050712585449f,     3.390723466873169f,     0.48455333709716797f,  7.189631462097168f}};
  const std::vector<float> want_grads[2][5] = {
      {{-1.4992506504058838f,
        0.7064007520675659f,
        -0.08836626261472702f,
        0.0f,
        0.49975019693374634f,
        -0.7064007520675659f,
        0.26509878039360046f,
        -1.497009038925171f,
        -0.9995003938674927f,
        0.35320037603378296f,
        0.0f,
        0.49900302290916443f,
        0.9995003938674927f,
        -1.059601068496704f,
        -0.26509878039360046f,
        -0.9980060458183289f,
        -0.49975019693374634f,
        -0.0f,
        0.08836626261472702f,
        0.9980060458183289f,
        1.4992506504058838f,
        1.059601068496704f,
        -0.17673252522945404f,
        -0.49900302290916443f},
       {-0.0f, -0.35320037603378296f, 0.17673252522945404f, 1.497009038925171f},
       {-2.7958052158355713f, -1.1279853582382202f, 0.1280670464038849f, -0.9940299987792969f},
       {0.0f, -0.25f, -0.5f, -0.75f},
       {2.7986011505126953f, -1.1302412748336792f, -1.0250486135482788f, 0.49900302290916443f}},
      {{-0.7496253252029419f,
        -0.7064007520675659f,
        -0.17673252522945404f,
        0.0f,
        0.24987509846687317f,
        0.7064007520675659f,
        0.5301975607872009f,
        -1.497009038925171f,
        -0.49975019693374634f,
        -0.35320037603378296f,
        0.0f,
        0.49900302290916443f,
        0.49975019693374634f,
        1.059601068496704f,
        -0.5301975607872009f,
        -0.9980060458183289f,
        -0.24987509846687317f,
        0.0f,
        0.17673252522945404f,
        0.9980060458183289f,
        0.7496253252029419f,
        -1.059601068496704f,
        -0.3534650504589081f,
        -0.49900302290916443f},
       {-0.0f, 0.35320037603378296f, 0.3534650504589081f, 1.497009038925171f},
       {-1.3979026079177856f, 1.1279853582382202f, 0.2561340928077698f, -0.9940299987792969f},
       {0.0f, -0.25f, -0.5f, -0.75f},
       {0.0f, 0.0f, 0.0f, 0.0f}}};
  for (const bool scale : {true, false}) {
    KernelRunner bn("BatchNormWithGlobalNormalization");
    bn.Attr("variance_epsilon", 0.001f).Attr("scale_after_normalization", scale);
    EXPECT_THAT(RunOk(bn, {x, m, v, beta, gamma}),
                TensorNear<float>({1, 2, 3, 4}, want_result[scale ? 0 : 1], 1e-6))
        << scale;
    KernelRunner grad("BatchNormWithGlobalNormalizationGrad");
    grad.Attr("variance_epsilon", 0.001f).Attr("scale_after_normalization", scale);
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, grad.Run({x, m, v, gamma, backprop}));
    EXPECT_THAT(out[0], TensorNear<float>({1, 2, 3, 4}, want_grads[scale ? 0 : 1][0], 1e-6));
    for (int i = 1; i < 5; ++i) {
      EXPECT_THAT(out[i], TensorNear<float>({4}, want_grads[scale ? 0 : 1][i], 1e-6)) << i;
    }
  }
  KernelRunner bn("BatchNormWithGlobalNormalization");
  bn.Attr("variance_epsilon", 0.001f).Attr("scale_after_normalization", true);
  EXPECT_THAT(bn.Run({Literal<float>({6, 4}, t), m, v, beta, gamma}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(bn.Run({x, Literal<float>({2}, {0, 0}), v, beta, gamma}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace towerflow
