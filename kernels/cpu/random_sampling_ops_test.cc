// RandomGamma, RandomPoisson(V2) and RandomGammaGrad against TensorFlow
// 2.21's numbers for the same seeds (tf.compat.v1 graphs); RandomGammaGrad
// against finite differences of the gamma CDF too, and tf.random.gamma's
// gradient through a session against TF's.
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

void Seed(KernelRunner& r, int64_t seed, int64_t seed2) {
  r.Attr("seed", seed).Attr("seed2", seed2);
}

TEST(RandomGammaTest, SamplesAreTensorFlowsRunAfterRun) {
  // [samples..., alphas...]; alpha 1 is an exponential, alpha < 1 boosted.
  KernelRunner d("RandomGamma");
  Seed(d, 7, 3);
  const std::vector<Tensor> in = {Literal<int32_t>({1}, {3}),
                                  Literal<double>({4}, {0.5, 1.0, 2.5, 9.0})};
  EXPECT_THAT(RunOk(d, in),
              TensorNear<double>({3, 4},
                                 {0.10705150295344915, 0.16779643064591207, 2.774291885689916,
                                  7.5614142147480745, 1.1853370201270377, 1.497909123708968,
                                  5.902958912478471, 7.474500187986435, 0.0056053286823865706,
                                  0.13885358805246972, 1.4103116252874681, 6.793618130019877},
                                 1e-13));
  EXPECT_THAT(RunOk(d, in),
              TensorNear<double>(
                  {3, 4},
                  {0.0007256231591607109, 0.10159658903980781, 2.896368916227205, 3.855468447120028,
                   0.6353585034744454, 0.15249522848095198, 2.7228402862172443, 12.282362762187475,
                   0.014520935239559548, 1.2945109827504675, 5.485078336762045, 9.067893287267358},
                  1e-13));
  KernelRunner f("RandomGamma");
  Seed(f, 7, 3);
  EXPECT_THAT(RunOk(f, {Literal<int64_t>({2}, {2, 1}), Literal<float>({3}, {0.3f, 1.0f, 4.0f})}),
              TensorNear<float>({2, 1, 3},
                                {0.05883662402629852f, 0.2789480984210968f, 4.047623157501221f,
                                 0.7380083203315735f, 0.16779643297195435f, 4.748008728027344f},
                                1e-6));
  KernelRunner h("RandomGamma");
  Seed(h, 5, 0);
  EXPECT_THAT(RunOk(h, {Literal<int32_t>({1}, {2}), Literal<half>({2}, {half(0.7f), half(3.0f)})}),
              TensorIs<half>({2, 2}, {half(0.06109619140625f), half(5.11328125f),
                                      half(0.1107177734375f), half(0.513671875f)}));
}

TEST(RandomGammaTest, RefusesWhatTensorFlowRefuses) {
  KernelRunner r("RandomGamma");
  Seed(r, 1, 2);
  // No alphas: an empty output (TF 2's; TF 1 refused it).
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({2}, {1, 2}), Literal<float>({0}, {})}),
              TensorIs<float>({1, 2, 0}, {}));
  EXPECT_THAT(
      r.Run({Scalar<int32_t>(3), Literal<float>({1}, {2.0f})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "shape must be a vector of {int32,int64}"));
  EXPECT_THAT(r.Run({Literal<int32_t>({1}, {-2}), Literal<float>({1}, {2.0f})}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // No samples: an empty output, no error.
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({1}, {0}), Literal<float>({2}, {1.0f, 2.0f})}),
              TensorIs<float>({0, 2}, {}));
}

TEST(RandomPoissonTest, SamplesAreTensorFlows) {
  // Knuth's below 10, Hormann's from 10 on.
  KernelRunner d("RandomPoissonV2");
  Seed(d, 7, 3);
  d.Attr("dtype", DT_INT64);
  EXPECT_THAT(RunOk(d, {Literal<int32_t>({1}, {3}), Literal<double>({4}, {0.5, 4, 12, 150})}),
              TensorIs<int64_t>({3, 4}, {0, 2, 8, 149, 1, 4, 6, 150, 0, 4, 12, 143}));
  KernelRunner i("RandomPoissonV2");
  Seed(i, 7, 3);
  i.Attr("dtype", DT_INT32);
  EXPECT_THAT(RunOk(i, {Literal<int32_t>({1}, {2}), Literal<int32_t>({2}, {3, 30})}),
              TensorIs<int32_t>({2, 2}, {2, 25, 2, 23}));
  KernelRunner f("RandomPoissonV2");
  Seed(f, 7, 3);
  f.Attr("dtype", DT_FLOAT);
  EXPECT_THAT(RunOk(f, {Literal<int32_t>({1}, {2}), Literal<float>({2}, {2.5f, 20.0f})}),
              TensorIs<float>({2, 2}, {2, 16, 2, 15}));
  KernelRunner h("RandomPoissonV2");
  Seed(h, 7, 3);
  h.Attr("dtype", DT_HALF);
  EXPECT_THAT(RunOk(h, {Literal<int32_t>({1}, {2}), Literal<half>({2}, {half(2.5f), half(20.0f)})}),
              TensorIs<half>({2, 2}, {half(2), half(16), half(2), half(15)}));
  // TF 1's RandomPoisson: V2 with the rate's type out.
  KernelRunner v1("RandomPoisson");
  Seed(v1, 7, 3);
  EXPECT_THAT(RunOk(v1, {Literal<int32_t>({1}, {2}), Literal<float>({2}, {2.5f, 20.0f})}),
              TensorIs<float>({2, 2}, {2, 16, 2, 15}));
}

TEST(RandomGammaGradTest, IsTensorFlowsAndTheCdfsImplicitDerivative) {
  KernelRunner d("RandomGammaGrad");
  EXPECT_THAT(
      RunOk(d, {Literal<double>({4}, {0.5, 1.0, 2.5, 9.0}),
                Literal<double>({4}, {0.2, 1.5, 3.0, 7.0})}),
      TensorNear<double>(
          {4}, {0.7940505663308433, 1.4309374423012804, 1.1692620067376698, 0.8959993080767175},
          1e-12));
  KernelRunner f("RandomGammaGrad");
  EXPECT_THAT(
      RunOk(f, {Literal<float>({2, 1}, {0.5f, 3.0f}), Literal<float>({3}, {0.2f, 1.5f, 3.0f})}),
      TensorNear<float>({2, 3},
                        {0.7940504550933838f, 2.239532709121704f, 2.9129440784454346f,
                         0.20188023149967194f, 0.7315327525138855f, 1.057026982307434f},
                        1e-5));
  // The sample x of a fixed CDF value P(alpha, x) moves with alpha by
  // -(dP/dalpha) / (dP/dx): central differences of Igamma.
  const auto igamma = [](double a, double x) {
    KernelRunner r("Igamma");
    return Values<double>(RunOk(r, {Scalar<double>(a), Scalar<double>(x)}))[0];
  };
  const double h = 1e-5;
  for (const auto& [a, x] : {std::pair{0.5, 0.2}, std::pair{2.5, 3.0}, std::pair{9.0, 7.0}}) {
    const double dp_da = (igamma(a + h, x) - igamma(a - h, x)) / (2 * h);
    const double dp_dx = (igamma(a, x + h) - igamma(a, x - h)) / (2 * h);
    KernelRunner r("RandomGammaGrad");
    EXPECT_NEAR(Values<double>(RunOk(r, {Scalar<double>(a), Scalar<double>(x)}))[0], -dp_da / dp_dx,
                1e-7)
        << a << " " << x;
  }
}

// d sum(sample * [1, 2]) / d alpha for a gamma sample [3, 2] drawn by
// `draw` from alpha = [0.5, 2.0]: the sample and the gradient.
template <typename Draw>
std::vector<Tensor> GammaGradient(Draw draw) {
  Scope s = Scope::NewRootScope();
  const Output alpha = ops::Const(s, Literal<double>({2}, {0.5, 2.0}).AsProto());
  const Output sample = draw(s, alpha);
  const Output loss = ops::Sum(
      s, ops::Mul(s, sample, ops::Const(s, Literal<double>({1, 2}, {1, 2}).AsProto())), {0, 1});
  std::vector<Output> grads;
  EXPECT_TRUE(AddSymbolicGradients(s, {loss}, {alpha}, &grads).ok());
  ClientSession session(s);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({sample, grads[0]}, &out).ok());
  return out;
}

// tf.random.gamma([3], [0.5, 2.0], seed=1) in a graph of seed None (op
// seeds 87654321 and 1): d sum(sample * [1, 2]) / d alpha, TF's.
TEST(RandomGammaTest, GradientIsTensorFlows) {
  const std::vector<Tensor> out = GammaGradient([](const Scope& s, const Output& alpha) {
    return ops::RandomGamma(s, ops::Const(s, Literal<int32_t>({1}, {3}).AsProto()), alpha,
                            ops::RandomGamma::Seed(87654321).Seed2(1));
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0],
              TensorNear<double>({3, 2},
                                 {0.38637650447568944, 1.1270176691682572, 0.37036918224548204,
                                  1.1973407035331, 0.2671894950728356, 2.5568243669381365},
                                 1e-13));
  EXPECT_THAT(out[1], TensorNear<double>({2}, {3.2457953764655283, 5.71567835808689}, 1e-12));
}

const Tensor kSeed = Literal<int64_t>({2}, {1, 2});

// The stateless forms: the shape ends with the parameter's; the same seed,
// the same numbers.
TEST(StatelessRandomGammaTest, SamplesAreTensorFlows) {
  const std::vector<double> tf = {0.06695361383821083, 1.89350913788573,   3.7823471441973386,
                                  9.129641610710998,   0.62823544551181,   0.22994833614986177,
                                  2.4927736473765263,  8.0836113586478,    0.18136731678689116,
                                  1.1978731947487329,  3.4828940981823315, 5.6374605148726795};
  const Tensor alpha = Literal<double>({4}, {0.5, 1.0, 2.5, 9.0});
  KernelRunner v2("StatelessRandomGammaV2");
  EXPECT_THAT(RunOk(v2, {Literal<int32_t>({2}, {3, 4}), kSeed, alpha}),
              TensorNear<double>({3, 4}, tf, 1e-13));
  EXPECT_THAT(RunOk(v2, {Literal<int32_t>({2}, {3, 4}), kSeed, alpha}),
              TensorNear<double>({3, 4}, tf, 1e-13));
  // V3 from the seed's key and counter.
  KernelRunner v3("StatelessRandomGammaV3");
  EXPECT_THAT(
      RunOk(v3, {Literal<int32_t>({2}, {3, 4}), Literal<uint64_t>({1}, {10413732777507651514u}),
                 Literal<uint64_t>({2}, {0, 17830669156045600267u}), Scalar<int32_t>(1), alpha}),
      TensorNear<double>({3, 4}, tf, 1e-13));
  KernelRunner f("StatelessRandomGammaV2");
  EXPECT_THAT(RunOk(f, {Literal<int64_t>({2}, {2, 3}), Literal<int32_t>({2}, {-7, 123456}),
                        Literal<float>({3}, {0.3f, 1.0f, 4.0f})}),
              TensorNear<float>({2, 3},
                                {0.22820954024791718f, 0.1925419718027115f, 1.8884563446044922f,
                                 0.5006407499313354f, 1.414359450340271f, 4.0746235847473145f},
                                1e-6));
  KernelRunner h("StatelessRandomGammaV2");
  EXPECT_THAT(RunOk(h, {Literal<int32_t>({2}, {2, 2}), kSeed,
                        Literal<half>({2}, {half(0.7f), half(3.0f)})}),
              TensorIs<half>({2, 2}, {half(0.2030029296875f), half(4.67578125f),
                                      half(0.9111328125f), half(3.349609375f)}));
  EXPECT_THAT(v2.Run({Literal<int32_t>({2}, {3, 2}), kSeed, Literal<double>({3}, {1, 2, 3})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Shape passed in must end with broadcasted shape."));
}

TEST(StatelessRandomPoissonTest, SamplesAreTensorFlows) {
  KernelRunner d("StatelessRandomPoisson");
  d.Attr("dtype", DT_INT64);
  EXPECT_THAT(
      RunOk(d, {Literal<int32_t>({2}, {3, 4}), kSeed, Literal<double>({4}, {0.5, 4, 12, 150})}),
      TensorIs<int64_t>({3, 4}, {3, 6, 12, 156, 2, 4, 12, 148, 1, 7, 8, 144}));
  KernelRunner i("StatelessRandomPoisson");
  i.Attr("dtype", DT_INT32);
  EXPECT_THAT(RunOk(i, {Literal<int32_t>({2}, {2, 2}), kSeed, Literal<int32_t>({2}, {3, 30})}),
              TensorIs<int32_t>({2, 2}, {5, 38, 5, 45}));
  KernelRunner f("StatelessRandomPoisson");
  f.Attr("dtype", DT_FLOAT);
  EXPECT_THAT(RunOk(f, {Literal<int32_t>({2}, {2, 2}), kSeed, Literal<float>({2}, {2.5f, 20.0f})}),
              TensorIs<float>({2, 2}, {4, 27, 4, 25}));
  EXPECT_THAT(f.Run({Literal<int32_t>({2}, {3, 2}), kSeed, Literal<float>({3}, {1, 2, 3})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Shape passed in must end with broadcasted shape."));
  // TF's kernel never returns on these.
  EXPECT_THAT(f.Run({Literal<int32_t>({1}, {1}), kSeed, Literal<float>({1}, {NAN})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "rate nan"));
  EXPECT_THAT(i.Run({Literal<int32_t>({1}, {1}), kSeed, Literal<int32_t>({1}, {0})}).status(),
              absl::OkStatus());
  KernelRunner narrow("StatelessRandomPoisson");
  narrow.Attr("dtype", DT_INT32);
  EXPECT_THAT(narrow.Run({Literal<int32_t>({1}, {1}), kSeed, Literal<double>({1}, {1e12})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "beyond int32's range"));
}

// tf.random.stateless_gamma([3, 2], [1, 2], alpha=[0.5, 2.0]) under a
// GradientTape: d sum(sample * [1, 2]) / d alpha, TF's.
TEST(StatelessRandomGammaTest, GradientIsTensorFlows) {
  const std::vector<Tensor> out = GammaGradient([](const Scope& s, const Output& alpha) {
    return ops::StatelessRandomGammaV2(s, ops::Const(s, Literal<int32_t>({2}, {3, 2}).AsProto()),
                                       ops::Const(s, kSeed.AsProto()), alpha);
  });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0],
              TensorNear<double>({3, 2},
                                 {0.06695361383821083, 2.218280489673604, 0.62823544551181,
                                  2.2619924202884416, 0.18136731678689116, 1.4950694623057916},
                                 1e-13));
  EXPECT_THAT(out[1], TensorNear<double>({2}, {2.6393623989798742, 6.4667394910185285}, 1e-12));
}

// counts and probs broadcast to the shape's last dimensions; BTRS for
// count p >= 10, the inversion below, mirrored past p = 0.5.
TEST(StatelessRandomBinomialTest, SamplesAreTensorFlows) {
  KernelRunner d("StatelessRandomBinomial");
  d.Attr("dtype", DT_INT64);
  const Tensor counts = Literal<double>({2, 1}, {5, 100});
  const Tensor probs = Literal<double>({4}, {0.3, 0.5, 0.8, 0.97});
  EXPECT_THAT(RunOk(d, {Literal<int32_t>({3}, {3, 2, 4}), kSeed, counts, probs}),
              TensorIs<int64_t>({3, 2, 4}, {3,  3,  3,  5,  22, 50, 66, 99, 2,  4,  5,  5,
                                            35, 55, 84, 97, 2,  2,  4,  5,  32, 55, 77, 97}));
  KernelRunner f("StatelessRandomBinomial");
  f.Attr("dtype", DT_FLOAT);
  EXPECT_THAT(RunOk(f, {Literal<int32_t>({2}, {2, 3}), Literal<int32_t>({2}, {3, 4}),
                        Literal<float>({3}, {10, 1000, 7}), Literal<float>({3}, {0.1f, 0.25f, 0})}),
              TensorIs<float>({2, 3}, {3, 226, 0, 1, 252, 0}));
  KernelRunner h("StatelessRandomBinomial");
  h.Attr("dtype", DT_INT32);
  EXPECT_THAT(
      RunOk(h, {Literal<int32_t>({2}, {2, 2}), kSeed, Literal<half>({2}, {half(40.0f), half(3.0f)}),
                Literal<half>({2}, {half(0.6f), half(1.0f)})}),
      TensorIs<int32_t>({2, 2}, {20, 3, 22, 3}));
  KernelRunner nan("StatelessRandomBinomial");
  nan.Attr("dtype", DT_DOUBLE);
  EXPECT_THAT(RunOk(nan, {Literal<int32_t>({1}, {2}), kSeed, Literal<double>({2}, {4, 4}),
                          Literal<double>({2}, {NAN, 0.5})}),
              TensorIs<double>({2}, {NAN, 2}));
  EXPECT_THAT(d.Run({Literal<int32_t>({2}, {3, 2}), kSeed, Literal<double>({3}, {1, 2, 3}),
                     Literal<double>({1}, {0.5})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Shape passed in must end with broadcasted shape."));
  EXPECT_THAT(d.Run({Literal<int32_t>({1}, {3}), kSeed, Literal<double>({2}, {1, 2}),
                     Literal<double>({3}, {0.5, 0.5, 0.5})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "counts and probs must have compatible batch dimensions: [2] vs. [3]"));
}

// tf.random.Generator's binomial on state [5, 0, 42]: TF's samples and
// state after.
TEST(StatefulRandomBinomialTest, SamplesAndStateAreTensorFlows) {
  Scope s = Scope::NewRootScope();
  auto v = ops::VarHandleOp(s.WithOpName("rng"), DT_INT64, PartialTensorShape());
  auto assign =
      ops::AssignVariableOp(s, v, ops::Const(s, Literal<int64_t>({3}, {5, 0, 42}).AsProto()));
  const Output draw = ops::StatefulRandomBinomial(
      s, v, ops::Const(s, int64_t{1}), ops::Const(s, Literal<int32_t>({2}, {3, 2}).AsProto()),
      ops::Const(s, Literal<double>({2}, {20, 50}).AsProto()),
      ops::Const(s, Literal<double>({2}, {0.4, 0.9}).AsProto()));
  ClientSession session(s);
  ASSERT_TRUE(session.Run({}, {}, {assign.operation}, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({draw}, &out).ok());
  EXPECT_THAT(out[0], TensorIs<int64_t>({3, 2}, {8, 46, 9, 47, 9, 47}));
  ASSERT_TRUE(session.Run({ops::ReadVariableOp(s, v, DT_INT64)}, &out).ok());
  EXPECT_THAT(out[0], TensorIs<int64_t>({3}, {153605, 0, 42}));  // 5 + 256 * 2 * 50 * (3 + 3)
  // Philox alone (TF's binomial refuses auto-select, 3, too).
  const Output auto_select = ops::StatefulRandomBinomial(
      s, v, ops::Const(s, int64_t{3}), ops::Const(s, Literal<int32_t>({2}, {2, 1}).AsProto()),
      ops::Const(s, Literal<double>({1}, {20}).AsProto()),
      ops::Const(s, Literal<double>({1}, {0.4}).AsProto()));
  EXPECT_THAT(session.Run({auto_select}, &out),
              StatusIs(absl::StatusCode::kInvalidArgument, "Unsupported algorithm id: 3"));
}

}  // namespace
}  // namespace towerflow
