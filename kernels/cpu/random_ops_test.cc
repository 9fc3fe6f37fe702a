// The seeded random ops (RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt, RandomShuffle) against TensorFlow
// 2.21's numbers for the same seed and seed2 (tf.compat.v1 graphs, two runs
// of one session): bit for bit for the uniforms, integers and shuffles, to
// float rounding for the normals (Box-Muller through logf and sincosf).
#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// A kernel of `op` with TF's seeds 7 and 3, drawing [n] values a run.
struct Seeded {
  Seeded(const char* op, DataType dtype) : runner(op) {
    runner.Attr("dtype", dtype).Attr("seed", int64_t{7}).Attr("seed2", int64_t{3});
  }
  Tensor Run(int32_t n) { return RunOk(runner, {Literal<int32_t>({1}, {n})}); }
  KernelRunner runner;
};

TEST(RandomOpsTest, UniformsAreTensorFlowsRunAfterRun) {
  Seeded f("RandomUniform", DT_FLOAT);
  EXPECT_THAT(f.Run(6), TensorIs<float>({6}, {0.4010878801345825f, 0.37683892250061035f,
                                              0.3092927932739258f, 0.08807563781738281f,
                                              0.7460572719573975f, 0.45470714569091797f}));
  EXPECT_THAT(f.Run(6), TensorIs<float>(
                            {6}, {0.5875189304351807f, 0.5976852178573608f, 0.7719814777374268f,
                                  0.9998090267181396f, 0.3745899200439453f, 0.8586015701293945f}));
  Seeded d("RandomUniform", DT_DOUBLE);
  EXPECT_THAT(d.Run(6), TensorIs<double>(
                            {6}, {0.20870315912522175, 0.4743429181875207, 0.9684586142277478,
                                  0.014147302814984108, 0.3769711665674116, 0.7548736035948285}));
  EXPECT_THAT(d.Run(6),
              TensorIs<double>({6}, {0.7001519326077499, 0.17585236392879677, 0.9967199281949579,
                                     0.10638749002866477, 0.9377387126429302, 0.3441016367148355}));
  // 16-bit: the low 10 (7) bits of each word as the mantissa, as TF's.
  Seeded h("RandomUniform", DT_HALF);
  EXPECT_THAT(h.Run(6),
              TensorIs<half>({6}, {half(0.7119140625f), half(0.064453125f), half(0.7265625f),
                                   half(0.515625f), half(0.701171875f), half(0.9609375f)}));
  EXPECT_THAT(h.Run(6),
              TensorIs<half>({6}, {half(0.955078125f), half(0.2373046875f), half(0.072265625f),
                                   half(0.435546875f), half(0.640625f), half(0.6640625f)}));
  Seeded b("RandomUniform", DT_BFLOAT16);
  EXPECT_THAT(b.Run(6),
              TensorIs<bfloat16>({6}, {bfloat16(0.6953125f), bfloat16(0.515625f), bfloat16(0.8125f),
                                       bfloat16(0.125f), bfloat16(0.609375f), bfloat16(0.6875f)}));
  EXPECT_THAT(b.Run(6), TensorIs<bfloat16>(
                            {6}, {bfloat16(0.640625f), bfloat16(0.8984375f), bfloat16(0.578125f),
                                  bfloat16(0.484375f), bfloat16(0.125f), bfloat16(0.3125f)}));
}

TEST(RandomOpsTest, NormalsAreTensorFlowsRunAfterRun) {
  Seeded f("RandomStandardNormal", DT_FLOAT);
  EXPECT_THAT(f.Run(6),
              TensorNear<float>({6},
                                {0.9447038173675537f, -0.9667906761169434f, 0.8051716685295105f,
                                 1.3033159971237183f, 0.2149045467376709f, -0.7346575856208801f},
                                1e-6));
  EXPECT_THAT(f.Run(6), TensorNear<float>(
                            {6},
                            {-0.5940163731575012f, -0.8431122899055481f, -0.0008633415563963354f,
                             0.7194363474845886f, -1.0875834226608276f, 0.8837471604347229f},
                            1e-6));
  Seeded d("RandomStandardNormal", DT_DOUBLE);
  EXPECT_THAT(d.Run(6),
              TensorNear<double>({6},
                                 {0.2841397934847126, -1.7472690787243486, 0.022475391397604266,
                                  0.2521783387351514, -1.3961891433687852, 0.042767129482479266},
                                 1e-12));
  EXPECT_THAT(d.Run(6),
              TensorNear<double>({6},
                                 {0.7543576277735746, 0.37928935027850913, 0.050239503198001044,
                                  0.06361539423879332, 0.2976938798511818, -0.19986547315595746},
                                 1e-12));
  // 16-bit: the float normals rounded.
  Seeded h("RandomStandardNormal", DT_HALF);
  EXPECT_THAT(h.Run(6),
              TensorIs<half>({6}, {half(0.94482421875f), half(-0.966796875f), half(0.80517578125f),
                                   half(1.3037109375f), half(0.21484375f), half(-0.73486328125f)}));
  Seeded b("RandomStandardNormal", DT_BFLOAT16);
  EXPECT_THAT(b.Run(6), TensorIs<bfloat16>({6}, {bfloat16(0.9453125f), bfloat16(-0.96484375f),
                                                 bfloat16(0.8046875f), bfloat16(1.3046875f),
                                                 bfloat16(0.21484375f), bfloat16(-0.734375f)}));
}

TEST(RandomOpsTest, TruncatedNormalsAreTensorFlowsRunAfterRun) {
  // Groups of 4 floats (2 doubles) each from its own 256 blocks.
  Seeded f("TruncatedNormal", DT_FLOAT);
  EXPECT_THAT(f.Run(6),
              TensorNear<float>({6},
                                {0.9447038173675537f, -0.9667906761169434f, 0.8051716685295105f,
                                 1.3033159971237183f, -0.21878036856651306f, -0.8048995137214661f},
                                1e-6));
  EXPECT_THAT(f.Run(6), TensorNear<float>(
                            {6},
                            {-0.5940163731575012f, -0.8431122899055481f, -0.0008633415563963354f,
                             0.7194363474845886f, -0.5379212498664856f, 1.534187912940979f},
                            1e-6));
  Seeded d("TruncatedNormal", DT_DOUBLE);
  EXPECT_THAT(d.Run(6),
              TensorNear<double>({6},
                                 {0.2841397934847126, -1.7472690787243486, -0.8324516698354941,
                                  1.1555486766159675, -0.7045877862978654, 0.6053747576806723},
                                 1e-12));
  EXPECT_THAT(d.Run(6),
              TensorNear<double>({6},
                                 {0.7543576277735746, 0.37928935027850913, -0.7798437253173056,
                                  1.3803191350572661, 0.9771796342587652, 1.7516295122334433},
                                 1e-12));
  Seeded h("TruncatedNormal", DT_HALF);
  EXPECT_THAT(h.Run(6),
              TensorIs<half>({6}, {half(0.94482421875f), half(-0.966796875f), half(0.80517578125f),
                                   half(1.3037109375f), half(-0.21875f), half(-0.8046875f)}));
  EXPECT_THAT(h.Run(6), TensorIs<half>({6}, {half(-0.59423828125f), half(-0.84326171875f),
                                             half(-0.0008635520935058594f), half(0.71923828125f),
                                             half(-0.5380859375f), half(1.5341796875f)}));
  Seeded b("TruncatedNormal", DT_BFLOAT16);
  EXPECT_THAT(b.Run(6), TensorIs<bfloat16>({6}, {bfloat16(0.9453125f), bfloat16(-0.96484375f),
                                                 bfloat16(0.8046875f), bfloat16(1.3046875f),
                                                 bfloat16(-0.21875f), bfloat16(-0.8046875f)}));
}

TEST(RandomOpsTest, IntegersAndShufflesAreTensorFlowsRunAfterRun) {
  KernelRunner i32("RandomUniformInt");
  i32.Attr("seed", int64_t{7}).Attr("seed2", int64_t{3});
  const std::vector<Tensor> small = {Literal<int32_t>({1}, {5}), Scalar<int32_t>(-3),
                                     Scalar<int32_t>(1000)};
  EXPECT_THAT(RunOk(i32, small), TensorIs<int32_t>({5}, {290, 296, 723, 477, 897}));
  EXPECT_THAT(RunOk(i32, small), TensorIs<int32_t>({5}, {690, 460, 85, 20, 730}));
  KernelRunner i64("RandomUniformInt");
  i64.Attr("seed", int64_t{7}).Attr("seed2", int64_t{3});
  const std::vector<Tensor> wide = {Literal<int32_t>({1}, {3}), Scalar<int64_t>(-3),
                                    Scalar<int64_t>(1000000000000)};
  EXPECT_THAT(RunOk(i64, wide), TensorIs<int64_t>({3}, {267780612185, 944764833406, 853409094372}));
  EXPECT_THAT(RunOk(i64, wide), TensorIs<int64_t>({3}, {293616982807, 980472244556, 701100947706}));
  KernelRunner shuffle("RandomShuffle");
  shuffle.Attr("seed", int64_t{7}).Attr("seed2", int64_t{3});
  const Tensor ten = Literal<int32_t>({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_THAT(RunOk(shuffle, {ten}), TensorIs<int32_t>({10}, {3, 4, 2, 9, 8, 5, 1, 6, 7, 0}));
  EXPECT_THAT(RunOk(shuffle, {ten}), TensorIs<int32_t>({10}, {2, 9, 6, 7, 1, 0, 8, 5, 3, 4}));
  // Rows move whole; seed 1 alone.
  KernelRunner rows("RandomShuffle");
  rows.Attr("seed", int64_t{1}).Attr("seed2", int64_t{0});
  const Tensor six = Literal<int32_t>({6, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_THAT(RunOk(rows, {six}),
              TensorIs<int32_t>({6, 2}, {8, 9, 4, 5, 2, 3, 0, 1, 10, 11, 6, 7}));
  EXPECT_THAT(RunOk(rows, {six}),
              TensorIs<int32_t>({6, 2}, {0, 1, 4, 5, 8, 9, 10, 11, 6, 7, 2, 3}));
}

// tf.random.experimental.stateless_shuffle's op: TF's permutations for a
// key and counter, the same on every call; rows move whole, strings too.
TEST(RandomOpsTest, StatelessShuffleIsTensorFlows) {
  std::vector<int32_t> values(20);
  for (int i = 0; i < 20; ++i) values[i] = i;
  const Tensor rows = Literal<int32_t>({10, 2}, values);
  const auto shuffle = [](const Tensor& value, uint64_t key, uint64_t c0, uint64_t c1,
                          int32_t alg) {
    KernelRunner r("StatelessShuffle");
    return r.Run({value, Literal<uint64_t>({1}, {key}), Literal<uint64_t>({2}, {c0, c1}),
                  Scalar<int32_t>(alg)});
  };
  const auto first = [](const absl::StatusOr<std::vector<Tensor>>& out) {
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  // The rows whose first elements are `firsts`, in that order.
  const auto rows_of = [](const std::vector<int32_t>& firsts) {
    std::vector<int32_t> out;
    for (int32_t r : firsts) {
      out.push_back(r);
      out.push_back(r + 1);
    }
    return out;
  };
  for (int32_t alg : {1, 3}) {  // Philox, and auto-select (Philox)
    for (int call = 0; call < 2; ++call) {
      EXPECT_THAT(first(shuffle(rows, 1, 2, 3, alg)),
                  TensorIs<int32_t>({10, 2}, rows_of({8, 14, 2, 16, 18, 12, 10, 4, 6, 0})));
    }
  }
  EXPECT_THAT(first(shuffle(rows, 7, 0, 0, 1)),
              TensorIs<int32_t>({10, 2}, rows_of({14, 10, 8, 0, 6, 12, 18, 4, 16, 2})));
  EXPECT_THAT(first(shuffle(Literal<std::string>({4}, {"a", "b", "c", "d"}), 5, 1, 1, 1)),
              TensorIs<std::string>({4}, {"a", "c", "d", "b"}));
  EXPECT_THAT(first(shuffle(Scalar<int32_t>(5), 1, 2, 3, 1)), TensorIs<int32_t>({}, {5}));
  EXPECT_THAT(shuffle(rows, 1, 2, 3, 2).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Unsupported algorithm id: 2"));
}

Tensor Random(const char* op, DataType dtype, int64_t seed, int64_t seed2) {
  KernelRunner r(op);
  r.Attr("dtype", dtype).Attr("seed", seed).Attr("seed2", seed2);
  return RunOk(r, {Literal<int32_t>({1}, {20000})});
}

TEST(RandomOpsTest, SeededStreamsAreReproducibleAndDistributed) {
  const Tensor a = Random("RandomUniform", DT_FLOAT, 1, 2);
  const Tensor b = Random("RandomUniform", DT_FLOAT, 1, 2);
  const Tensor c = Random("RandomUniform", DT_FLOAT, 1, 3);
  EXPECT_EQ(Values<float>(a), Values<float>(b));
  EXPECT_NE(Values<float>(a), Values<float>(c));
  double mean = 0;
  for (float v : Values<float>(a)) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
    mean += v / 20000;
  }
  EXPECT_NEAR(mean, 0.5, 0.01);
  const Tensor n = Random("RandomStandardNormal", DT_DOUBLE, 7, 0);
  double m = 0, sq = 0;
  for (double v : Values<double>(n)) {
    m += v / 20000;
    sq += v * v / 20000;
  }
  EXPECT_NEAR(m, 0, 0.03);
  EXPECT_NEAR(sq, 1, 0.05);
  const Tensor t = Random("TruncatedNormal", DT_FLOAT, 7, 0);
  for (float v : Values<float>(t)) ASSERT_LE(std::abs(v), 2.0f);
}

TEST(RandomOpsTest, EachRunContinuesTheKernelsStream) {
  KernelRunner r("RandomUniform"), replay("RandomUniform");
  r.Attr("dtype", DT_FLOAT).Attr("seed", int64_t{5});
  replay.Attr("dtype", DT_FLOAT).Attr("seed", int64_t{5});
  const std::vector<float> first = Values<float>(RunOk(r, {Literal<int32_t>({1}, {4})}));
  const std::vector<float> second = Values<float>(RunOk(r, {Literal<int32_t>({1}, {4})}));
  EXPECT_NE(first, second);
  // A new kernel with the same seeds replays the stream from its start.
  EXPECT_EQ(Values<float>(RunOk(replay, {Literal<int32_t>({1}, {4})})), first);
}

TEST(RandomOpsTest, UniformIntAndShuffle) {
  KernelRunner r("RandomUniformInt");
  r.Attr("seed", int64_t{3});
  const Tensor v =
      RunOk(r, {Literal<int32_t>({1}, {1000}), Scalar<int32_t>(-2), Scalar<int32_t>(3)});
  std::set<int32_t> seen;
  for (int32_t x : Values<int32_t>(v)) {
    ASSERT_GE(x, -2);
    ASSERT_LT(x, 3);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_THAT(
      r.Run({Literal<int32_t>({1}, {3}), Scalar<int32_t>(3), Scalar<int32_t>(3)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Need minval < maxval, got 3 >= 3"));
  KernelRunner s("RandomShuffle");
  s.Attr("seed", int64_t{9});
  std::vector<int64_t> rows(50);
  for (int i = 0; i < 50; ++i) rows[i] = i;
  std::vector<int64_t> got = Values<int64_t>(RunOk(s, {Literal<int64_t>({50}, rows)}));
  EXPECT_NE(got, rows);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, rows);
}

}  // namespace
}  // namespace towerflow
