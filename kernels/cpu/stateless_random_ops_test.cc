// The stateless random ops against TensorFlow 2.21's numbers for the same
// seeds (tf.raw_ops): bit for bit for the uniforms and integers, to float
// rounding for the normals (Box-Muller through logf and sincosf), in
// half, bfloat16, float and double.
#include <vector>

#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

const Tensor kSeed = Literal<int64_t>({2}, {1, 2});

Tensor Shape(int64_t n) { return Literal<int32_t>({1}, {static_cast<int32_t>(n)}); }

absl::StatusOr<Tensor> Draw(const char* op, DataType dtype, int64_t n, const Tensor& seed = kSeed) {
  KernelRunner r(op);
  r.Attr("dtype", dtype);
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, r.Run({Shape(n), seed}));
  return out[0];
}

TEST(StatelessRandomTest, UniformsAreTensorFlows) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor f, Draw("StatelessRandomUniform", DT_FLOAT, 7));
  EXPECT_THAT(f,
              TensorIs<float>({7}, {0.8440604209899902f, 0.19204533100128174f, 0.9962232112884521f,
                                    0.16038739681243896f, 0.27199018001556396f, 0.6493459939956665f,
                                    0.10694444179534912f}));
  TW_ASSERT_OK_AND_ASSIGN(
      f, Draw("StatelessRandomUniform", DT_FLOAT, 5, Literal<int64_t>({2}, {0x123456789, -7})));
  EXPECT_THAT(f,
              TensorIs<float>({5}, {0.14089453220367432f, 0.8892067670822144f, 0.724797248840332f,
                                    0.32026517391204834f, 0.3449667692184448f}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor d, Draw("StatelessRandomUniform", DT_DOUBLE, 5));
  EXPECT_THAT(d, TensorIs<double>({5}, {0.7524837538451801, 0.9697857725627486, 0.17592233912897481,
                                        0.8555556648693279, 0.514811871731222}));
  KernelRunner ints("StatelessRandomUniformInt");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          ints.Run({Shape(7), kSeed, Scalar<int32_t>(-5), Scalar<int32_t>(9)}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({7}, {7, -4, 7, 2, -4, 8, 8}));
  KernelRunner wide("StatelessRandomUniformInt");
  TW_ASSERT_OK_AND_ASSIGN(
      out, wide.Run({Shape(5), kSeed, Scalar<int64_t>(-5), Scalar<int64_t>(int64_t{1} << 40)}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({5}, {1036159160131, 635312348566, 846040150269,
                                              267342743203, 753202267753}));
  EXPECT_THAT(ints.Run({Shape(3), kSeed, Scalar<int32_t>(5), Scalar<int32_t>(5)}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Need minval < maxval, got 5 >= 5"));
  EXPECT_THAT(Draw("StatelessRandomUniform", DT_FLOAT, 3, Literal<int64_t>({3}, {1, 2, 3})),
              StatusIs(absl::StatusCode::kInvalidArgument, "seed must have shape [2], not [3]"));
}

TEST(StatelessRandomTest, NormalsAreTensorFlows) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor f, Draw("StatelessRandomNormal", DT_FLOAT, 6));
  EXPECT_THAT(f,
              TensorNear<float>({6},
                                {0.544110119342804f, 0.20738030970096588f, 0.0735643208026886f,
                                 0.04643455147743225f, -1.301589846611023f, -0.9538565278053284f},
                                2e-7));
  TW_ASSERT_OK_AND_ASSIGN(Tensor d, Draw("StatelessRandomNormal", DT_DOUBLE, 5));
  EXPECT_THAT(d, TensorNear<double>({5},
                                    {-0.1423118100189212, 0.7406072461585091, -1.469047669443883,
                                     1.147747453689489, -0.7218813856153005},
                                    1e-15));
  // Nine floats: three groups, each from its own stretch of the stream.
  TW_ASSERT_OK_AND_ASSIGN(f, Draw("StatelessTruncatedNormal", DT_FLOAT, 9));
  EXPECT_THAT(f,
              TensorNear<float>({9},
                                {0.544110119342804f, 0.20738030970096588f, 0.0735643208026886f,
                                 0.04643455147743225f, 0.16820591688156128f, -1.6850333213806152f,
                                 0.24202857911586761f, 1.703450322151184f, 1.1060677766799927f},
                                3e-7));
  TW_ASSERT_OK_AND_ASSIGN(d, Draw("StatelessTruncatedNormal", DT_DOUBLE, 5));
  EXPECT_THAT(d, TensorNear<double>({5},
                                    {-0.1423118100189212, 0.7406072461585091, -0.552387756244845,
                                     -0.734450092480207, -0.39842023956588357},
                                    1e-15));
}

// The V2 forms from GetKeyCounter's key and counter give V1's numbers.
// TF's 16-bit forms: uniforms from a word's 10 (half) or 7 (bfloat16) low
// bits, normals the float ones rounded.
TEST(StatelessRandomTest, HalfAndBfloat16AreTensorFlows) {
  TW_ASSERT_OK_AND_ASSIGN(Tensor h, Draw("StatelessRandomUniform", DT_HALF, 6));
  EXPECT_THAT(h,
              TensorIs<half>({6}, {half(0.54296875f), half(0.2353515625f), half(0.060546875f),
                                   half(0.8935546875f), half(0.1435546875f), half(0.4423828125f)}));
  TW_ASSERT_OK_AND_ASSIGN(h, Draw("StatelessRandomNormal", DT_HALF, 6));
  EXPECT_THAT(h, TensorIs<half>(
                     {6}, {half(0.5439453125f), half(0.2073974609375f), half(0.07354736328125f),
                           half(0.04644775390625f), half(-1.3017578125f), half(-0.95361328125f)}));
  TW_ASSERT_OK_AND_ASSIGN(h, Draw("StatelessTruncatedNormal", DT_HALF, 6));
  EXPECT_THAT(h, TensorIs<half>(
                     {6}, {half(0.5439453125f), half(0.2073974609375f), half(0.07354736328125f),
                           half(0.04644775390625f), half(0.168212890625f), half(-1.6845703125f)}));
  TW_ASSERT_OK_AND_ASSIGN(Tensor b, Draw("StatelessRandomUniform", DT_BFLOAT16, 6));
  EXPECT_THAT(b, TensorIs<bfloat16>(
                     {6}, {bfloat16(0.34375f), bfloat16(0.8828125f), bfloat16(0.484375f),
                           bfloat16(0.1484375f), bfloat16(0.1484375f), bfloat16(0.5390625f)}));
  TW_ASSERT_OK_AND_ASSIGN(b, Draw("StatelessRandomNormal", DT_BFLOAT16, 6));
  EXPECT_THAT(b, TensorIs<bfloat16>(
                     {6}, {bfloat16(0.54296875f), bfloat16(0.20703125f), bfloat16(0.07373046875f),
                           bfloat16(0.04638671875f), bfloat16(-1.3046875f), bfloat16(-0.953125f)}));
  TW_ASSERT_OK_AND_ASSIGN(b, Draw("StatelessTruncatedNormal", DT_BFLOAT16, 6));
  EXPECT_THAT(b, TensorIs<bfloat16>(
                     {6}, {bfloat16(0.54296875f), bfloat16(0.20703125f), bfloat16(0.07373046875f),
                           bfloat16(0.04638671875f), bfloat16(0.16796875f), bfloat16(-1.6875f)}));
}

TEST(StatelessRandomTest, KeyCounterAndTheV2Forms) {
  KernelRunner kc("StatelessRandomGetKeyCounter");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> kc_out,
                          kc.Run({Literal<int64_t>({2}, {0x123456789, -7})}));
  EXPECT_THAT(kc_out[0], TensorIs<uint64_t>({1}, {1935571257751224705ull}));
  EXPECT_THAT(kc_out[1], TensorIs<uint64_t>({2}, {0, 15893885301918257649ull}));
  KernelRunner kc32("StatelessRandomGetKeyCounter");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> kc32_out, kc32.Run({Literal<int32_t>({2}, {1, 2})}));
  EXPECT_THAT(kc32_out[0], TensorIs<uint64_t>({1}, {10413732777507651514ull}));
  EXPECT_THAT(kc32_out[1], TensorIs<uint64_t>({2}, {0, 17830669156045600267ull}));
  const auto v2 = [&](const char* op, int32_t alg) {
    KernelRunner r(op);
    r.Attr("dtype", DT_FLOAT);
    return r.Run({Shape(5), kc_out[0], kc_out[1], Scalar<int32_t>(alg)});
  };
  for (const int32_t alg : {1, 3}) {
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, v2("StatelessRandomUniformV2", alg));
    EXPECT_THAT(out[0],
                TensorIs<float>({5}, {0.14089453220367432f, 0.8892067670822144f, 0.724797248840332f,
                                      0.32026517391204834f, 0.3449667692184448f}));
  }
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, v2("StatelessRandomNormalV2", 1));
  EXPECT_THAT(out[0],
              TensorNear<float>({5},
                                {-1.269539713859558f, 1.5191301107406616f, 0.725395917892456f,
                                 -0.3428228199481964f, -0.09960202127695084f},
                                2e-7));
  TW_ASSERT_OK_AND_ASSIGN(out, v2("StatelessTruncatedNormalV2", 1));
  EXPECT_THAT(out[0],
              TensorNear<float>({5},
                                {-1.269539713859558f, 1.5191301107406616f, 0.725395917892456f,
                                 -0.3428228199481964f, -0.5487395524978638f},
                                2e-7));
  KernelRunner ints("StatelessRandomUniformIntV2");
  TW_ASSERT_OK_AND_ASSIGN(out, ints.Run({Shape(5), kc_out[0], kc_out[1], Scalar<int32_t>(1),
                                         Scalar<int32_t>(0), Scalar<int32_t>(10)}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({5}, {9, 7, 8, 7, 9}));
  EXPECT_THAT(v2("StatelessRandomUniformV2", 2),
              StatusIs(absl::StatusCode::kInvalidArgument, "Unsupported algorithm id: 2"));
  KernelRunner alg("StatelessRandomGetAlg");
  TW_ASSERT_OK_AND_ASSIGN(out, alg.Run({}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {1}));
}

// Integers over the whole range (TF 2.21's values for seed [7, 8]); the
// GetKeyCounterAlg triple feeds the V2 form, which draws the same numbers.
TEST(StatelessRandomTest, FullRangeIntegers) {
  const auto full = [](DataType dtype, const Tensor& seed) {
    KernelRunner r("StatelessRandomUniformFullInt");
    r.Attr("dtype", dtype);
    return r.Run({Shape(5), seed});
  };
  const Tensor seed = Literal<int64_t>({2}, {7, 8});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, full(DT_INT32, seed));
  EXPECT_THAT(out[0],
              TensorIs<int32_t>({5}, {-276475747, 1478766658, -1774886787, -291032361, 184517209}));
  TW_ASSERT_OK_AND_ASSIGN(out, full(DT_UINT32, Literal<int32_t>({2}, {7, 8})));
  EXPECT_THAT(out[0], TensorIs<uint32_t>(
                          {5}, {4018491549u, 1478766658u, 2520080509u, 4003934935u, 184517209u}));
  TW_ASSERT_OK_AND_ASSIGN(out, full(DT_UINT64, seed));
  EXPECT_THAT(out[0], TensorIs<uint64_t>({5}, {6351254438543708317ull, 17196769603656966269ull,
                                               4715617131889132121ull, 13255857193121736489ull,
                                               16432683458471697089ull}));
  EXPECT_THAT(full(DT_INT32, Literal<uint32_t>({2}, {7, 8})),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid seed type: uint32"));
  EXPECT_THAT(full(DT_INT32, Literal<int64_t>({3}, {7, 8, 9})),
              StatusIs(absl::StatusCode::kInvalidArgument, "seed must have shape [2], not [3]"));

  KernelRunner kca("StatelessRandomGetKeyCounterAlg");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> kca_out, kca.Run({seed}));
  EXPECT_THAT(kca_out[0], TensorIs<uint64_t>({1}, {18211131699702176293ull}));
  EXPECT_THAT(kca_out[1], TensorIs<uint64_t>({2}, {0, 18149656166479458529ull}));
  EXPECT_THAT(kca_out[2], TensorIs<int32_t>({}, {1}));
  KernelRunner v2("StatelessRandomUniformFullIntV2");
  v2.Attr("dtype", DT_INT64);
  TW_ASSERT_OK_AND_ASSIGN(out, v2.Run({Shape(3), kca_out[0], kca_out[1], kca_out[2]}));
  EXPECT_THAT(out[0], TensorIs<int64_t>({3}, {6351254438543708317ll, -1249974470052585347ll,
                                              4715617131889132121ll}));
}

}  // namespace
}  // namespace towerflow
