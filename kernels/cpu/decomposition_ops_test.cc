// The decompositions against TensorFlow 2.21's factors (tf.raw_ops on these
// matrices; both run Eigen's algorithms, so the signs agree), to 1e-12 in
// double and 1e-6 in float, and TF's messages.
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

const std::vector<double> kA = {2, -1, 0.5, 1, 3, -2, 0, 1, 4, 1, -1, 1};  // 4 x 3
const std::vector<double> kS = {4, 1, -2, 1, 3, 0.5, -2, 0.5, 5};          // symmetric

std::vector<Tensor> Factors(KernelRunner& r, const std::vector<Tensor>& in) {
  auto out = r.Run(in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>(3);
}

TEST(DecompositionTest, QrMatchesTensorFlow) {
  KernelRunner r("Qr");
  auto out = Factors(r, {Literal<double>({4, 3}, kA)});
  EXPECT_THAT(out[0],
              TensorNear<double>({4, 3},
                                 {-0.816496580927726, 0.2886751345948128, -0.046320129655041654,
                                  -0.408248290463863, -0.8660254037844386, 0.25012870013722494, 0.0,
                                  -0.2886751345948129, -0.9541946708938581, -0.408248290463863,
                                  0.28867513459481287, -0.1574884408271416},
                                 1e-12));
  EXPECT_THAT(out[1], TensorNear<double>({3, 3},
                                         {-2.449489742783178, 0, 0, 0, -3.4641016151377544,
                                          1.010362971081845, 0, 0, -4.497684589504545},
                                         1e-12));
  KernelRunner full("Qr");
  full.Attr("full_matrices", true);
  out = Factors(full, {Literal<double>({4, 3}, kA)});
  EXPECT_EQ(out[0].shape(), TensorShape({4, 4}));
  EXPECT_THAT(out[0].data<double>()[3], ::testing::DoubleNear(-0.4978498223247048, 1e-12));
  EXPECT_THAT(out[0].data<double>()[15], ::testing::DoubleNear(0.8515852223975213, 1e-12));
  EXPECT_EQ(out[1].shape(), TensorShape({4, 3}));
  // Wider than tall: q [3, 3], r [3, 4].
  std::vector<double> at(12);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) at[j * 4 + i] = kA[i * 3 + j];
  }
  out = Factors(r, {Literal<double>({3, 4}, at)});
  EXPECT_THAT(out[1],
              TensorNear<double>({3, 4},
                                 {-2.29128784747792, 0.8728715609439697, -0.4364357804719848,
                                  -1.5275252316519468, 0, -3.638419332360584, 1.2695204145286931,
                                  0.7329190022021317, 0, 0, 3.8984409353764367, 0.3598560863424404},
                                 1e-12));
  out = Factors(r, {Literal<double>({0, 3}, {})});
  EXPECT_EQ(out[0].shape(), TensorShape({0, 0}));
  EXPECT_EQ(out[1].shape(), TensorShape({0, 3}));
}

TEST(DecompositionTest, SvdMatchesTensorFlow) {
  KernelRunner r("Svd");
  auto out = Factors(r, {Literal<double>({4, 3}, kA)});
  EXPECT_THAT(out[0], TensorNear<double>(
                          {3}, {4.73550988585813, 3.290128587295625, 2.4494897427831788}, 1e-12));
  EXPECT_THAT(out[1],
              TensorNear<double>({4, 3},
                                 {0.16730434518775528, -0.23976685305915368, 0.8164965809277264,
                                  -0.6020078085773787, 0.6709329065146526, 0.4082482904638632,
                                  0.7335486119392647, 0.6750757270244203, 0, 0.26739911820186846,
                                  -0.19139920039634595, 0.4082482904638629},
                                 1e-12));
  EXPECT_THAT(out[2], TensorNear<double>({3, 3},
                                         {0, 0, 1, -0.3182715934525764, 0.9479995742621184, 0,
                                          0.9479995742621184, 0.3182715934525764, 0},
                                         1e-12));
  KernelRunner values("Svd");
  values.Attr("compute_uv", false);
  out = Factors(values, {Literal<double>({4, 3}, kA)});
  EXPECT_THAT(out[0], TensorNear<double>(
                          {3}, {4.73550988585813, 3.290128587295625, 2.4494897427831788}, 1e-12));
  EXPECT_EQ(out[1].shape(), TensorShape({}));
  // Empty matrices: no values, identity factors.
  out = Factors(r, {Literal<double>({2, 0, 3}, {})});
  EXPECT_EQ(out[0].shape(), TensorShape({2, 0}));
  EXPECT_EQ(out[2].shape(), TensorShape({2, 3, 0}));
}

TEST(DecompositionTest, SelfAdjointEigMatchesTensorFlow) {
  KernelRunner r("SelfAdjointEigV2");
  auto out = Factors(r, {Literal<double>({3, 3}, kS)});
  EXPECT_THAT(out[0], TensorNear<double>(
                          {3}, {1.584206693092626, 3.8393364524664833, 6.576456854440901}, 1e-12));
  EXPECT_THAT(out[1],
              TensorNear<double>({3, 3},
                                 {-0.6382426181957056, -0.4453394849537658, 0.6279483286543613,
                                  0.6145469400410332, -0.7860144038136985, 0.06718195802147754,
                                  -0.4636576525895961, -0.42878211266156036, -0.7753499087873779},
                                 1e-12));
  std::vector<float> sf(kS.begin(), kS.end());
  KernelRunner f("SelfAdjointEigV2");
  out = Factors(f, {Literal<float>({3, 3}, sf)});
  EXPECT_THAT(
      out[0],
      TensorNear<float>({3}, {1.5842056274414062f, 3.8393359184265137f, 6.576455116271973f}, 1e-5));
  EXPECT_THAT(r.Run({Literal<double>({4, 3}, kA)}),
              StatusIs(kInvalid, "Input matrix must be square."));
}

TEST(DecompositionTest, LuMatchesTensorFlow) {
  KernelRunner r("Lu");
  auto out = Factors(r, {Literal<double>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 10})});
  EXPECT_THAT(out[0], TensorNear<double>(
                          {3, 3},
                          {7, 8, 10, 0.14285714285714285, 0.8571428571428572, 1.5714285714285716,
                           0.5714285714285714, 0.5000000000000002, -0.49999999999999967},
                          1e-12));
  EXPECT_THAT(out[1], TensorIs<int32_t>({3}, {2, 0, 1}));
  KernelRunner wide("Lu");
  wide.Attr("output_idx_type", DT_INT64);
  out = Factors(wide, {Literal<float>({2, 2}, {0, 1, 1, 0})});
  EXPECT_THAT(out[0], TensorIs<float>({2, 2}, {1, 0, 0, 1}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({2}, {1, 0}));
  EXPECT_THAT(r.Run({Literal<double>({2, 2}, {1, 2, 2, 4})}),
              StatusIs(kInvalid, "Input is not invertible."));
  EXPECT_THAT(r.Run({Literal<double>({4, 3}, kA)}),
              StatusIs(kInvalid, "Input matrix must be square."));
}

TEST(DecompositionTest, MatrixSolveLsMatchesTensorFlow) {
  const Tensor a = Literal<double>({4, 3}, kA);
  const Tensor b = Literal<double>({4, 2}, {1, 0, 2, 1, -1, 3, 0.5, 0.5});
  KernelRunner r("MatrixSolveLs");
  EXPECT_THAT(RunOk(r, {a, b, Scalar<double>(0)}),
              TensorNear<double>({3, 2},
                                 {0.7500000000000002, 0.25000000000000006, 0.20545829042224517,
                                  0.6328527291452112, -0.29557157569515957, 0.5983522142121523},
                                 1e-12));
  EXPECT_THAT(RunOk(r, {a, b, Scalar<double>(0.5)}),
              TensorNear<double>({3, 2},
                                 {0.6923076923076924, 0.2307692307692308, 0.19884448724121329,
                                  0.6023110255175734, -0.2898411169956668, 0.5796822339913336},
                                 1e-12));
  // Fewer rows than columns: the minimum-norm solution.
  std::vector<double> at(12);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) at[j * 4 + i] = kA[i * 3 + j];
  }
  EXPECT_THAT(RunOk(r, {Literal<double>({3, 4}, at), Literal<double>({3, 2}, {1, 0, 2, 1, -1, 3}),
                        Scalar<double>(0.1)}),
              TensorNear<double>({4, 2},
                                 {0.1582120265655243, -0.04856045675274806, 0.6832671771082697,
                                  0.06481500294613657, 0.07639636710892586, 0.7763577625617166,
                                  -0.01608467286226905, 0.03230591055935955},
                                 1e-12));
  KernelRunner slow("MatrixSolveLs");
  slow.Attr("fast", false);
  EXPECT_THAT(RunOk(slow, {a, b, Scalar<double>(0)}),
              TensorNear<double>({3, 2},
                                 {0.7499999999999998, 0.2500000000000004, 0.20545829042224506,
                                  0.632852729145211, -0.2955715756951597, 0.5983522142121526},
                                 1e-12));
  EXPECT_THAT(r.Run({a, Literal<double>({3, 2}, {1, 0, 2, 1, -1, 3}), Scalar<double>(0)}),
              StatusIs(kInvalid, "Input matrix and rhs are incompatible."));
  EXPECT_THAT(r.Run({a, b, Literal<double>({1}, {0})}),
              StatusIs(kInvalid, "l2_regularizer must be scalar, got shape [1]"));
  EXPECT_THAT(r.Run({a, b, Scalar<double>(-1)}),
              StatusIs(kInvalid, "l2_regularizer must be >= 0."));
}

}  // namespace
}  // namespace towerflow
