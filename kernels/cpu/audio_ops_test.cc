// DecodeWav, EncodeWav and the audio summaries against TF 2.21's bytes and
// values (tf.raw_ops).
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// [[0.5, -0.25], [1.0, -1.2], [1e-5, 0]] at 16 kHz: 1.0 clamps to 32767,
// -1.2 to -32768.
constexpr char kWav[] =
    "524946463000000057415645666d74201000000001000200803e000000fa000004001000646174610c0000000040"
    "00e0ff7f008000000000";

Tensor Bytes(const std::string& hex) {
  Tensor t(DT_STRING, TensorShape({}));
  *t.data<std::string>() = absl::HexStringToBytes(hex);
  return t;
}

TEST(AudioOpsTest, EncodeWavGivesTensorFlowsBytes) {
  KernelRunner encode("EncodeWav");
  const Tensor wav = RunOk(
      encode, {Literal<float>({3, 2}, {0.5f, -0.25f, 1, -1.2f, 1e-5f, 0}), Scalar<int32_t>(16000)});
  EXPECT_EQ(absl::BytesToHexString(*wav.data<std::string>()), kWav);
  EXPECT_THAT(encode.Run({Literal<float>({2}, {0, 0}), Scalar<int32_t>(16000)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(encode.Run({Literal<float>({1, 1}, {0}), Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "sample_rate must be in (0, 2^32), got: 0"));
}

TEST(AudioOpsTest, DecodeWavPadsCutsAndRepeatsChannelsAsTensorFlow) {
  KernelRunner wide("DecodeWav");
  wide.Attr("desired_channels", int64_t{3}).Attr("desired_samples", int64_t{4});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, wide.Run({Bytes(kWav)}));
  EXPECT_THAT(out[0], TensorIs<float>({4, 3}, {0.5f, -0.25f, -0.25f, 0.999969482421875f, -1, -1, 0,
                                               0, 0, 0, 0, 0}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({}, {16000}));
  KernelRunner mono("DecodeWav");
  mono.Attr("desired_channels", int64_t{1});
  TW_ASSERT_OK_AND_ASSIGN(out, mono.Run({Bytes(kWav)}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 1}, {0.5f, 0.999969482421875f, 0}));
  KernelRunner decode("DecodeWav");
  const std::string wav = absl::HexStringToBytes(kWav);
  EXPECT_THAT(decode.Run({Bytes(absl::BytesToHexString(wav.substr(0, 30)))}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Data too short when trying to read string"));
  EXPECT_THAT(decode.Run({Bytes(absl::BytesToHexString("RIFX" + wav.substr(4)))}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Header mismatch: Expected RIFF but found RIFX"));
  EXPECT_THAT(decode.Run({Bytes(absl::BytesToHexString(wav.substr(0, 40)))}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Data too short when trying to read string"));
}

TEST(AudioOpsTest, AudioSummaryGivesTensorFlowsBytes) {
  KernelRunner summary("AudioSummaryV2");
  summary.Attr("max_outputs", int64_t{2});
  const Tensor s = RunOk(summary, {Bytes(absl::BytesToHexString("snd")),
                                   Literal<float>({2, 3}, {0.5f, -0.5f, 0.25f, 0.1f, 0.2f, -1.5f}),
                                   Scalar<float>(8000.4f)});
  EXPECT_EQ(absl::BytesToHexString(*s.data<std::string>()),
            "0a570a0b736e642f617564696f2f3032480d3303fa45100118032232524946462a000000574156456"
            "66d74201000000001000100401f0000803e0000020010006461746106000000004000c000202a0961"
            "7564696f2f7761760a570a0b736e642f617564696f2f3132480d3303fa45100118032232524946462a"
            "00000057415645666d74201000000001000100401f0000803e0000020010006461746106000000cd0c"
            "9a1900802a09617564696f2f776176");
  EXPECT_THAT(
      summary.Run({Bytes(absl::BytesToHexString("snd")), Literal<float>({3}, {0, 0, 0}),
                   Scalar<float>(8000)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Tensor must be 3-D or 2-D, got: [3]"));
}

// TF 2.21's spectrogram of two channels of exact samples (window 12, so a
// 16-point FFT, stride 7), squared and not; frames too few give none.
TEST(AudioOpsTest, AudioSpectrogramMatchesTensorFlow) {
  std::vector<float> x(80);
  for (int t = 0; t < 40; ++t) {
    x[2 * t] = static_cast<float>((t * 13) % 17 - 8) / 16;
    x[2 * t + 1] = static_cast<float>((t * 5) % 7 - 3) / 8;
  }
  const Tensor input = Literal<float>({40, 2}, x);
  KernelRunner squared("AudioSpectrogram");
  squared.Attr("window_size", int64_t{12})
      .Attr("stride", int64_t{7})
      .Attr("magnitude_squared", true);
  EXPECT_THAT(RunOk(squared, {input}),
              TensorNear<float>(
                  {2, 5, 9}, {0.002197265625f,        0.025312520563602448f, 0.01814010925590992f,
                              0.5877826809883118f,    1.2816293239593506f,   0.6157897114753723f,
                              0.019051965326070786f,  0.3172738552093506f,   0.635009765625f,
                              0.1181640625f,          0.18768630921840668f,  0.30268728733062744f,
                              0.9570248126983643f,    0.9057316780090332f,   0.3617224395275116f,
                              0.3015771210193634f,    0.3408671021461487f,   0.2822265625f,
                              0.107666015625f,        0.06629717350006104f,  0.038366422057151794f,
                              0.5778724551200867f,    1.2816293239593506f,   0.6175875067710876f,
                              0.019058041274547577f,  0.31690362095832825f,  0.635009765625f,
                              0.107666015625f,        0.06629717350006104f,  0.038366422057151794f,
                              0.5778724551200867f,    1.2816293239593506f,   0.6175875067710876f,
                              0.019058041274547577f,  0.31690362095832825f,  0.635009765625f,
                              0.1181640625f,          0.18768630921840668f,  0.30268728733062744f,
                              0.9570248126983643f,    0.9057316780090332f,   0.3617224395275116f,
                              0.3015771210193634f,    0.3408671021461487f,   0.2822265625f,
                              0.0012345465365797281f, 0.03920503705739975f,  0.14482809603214264f,
                              0.38934165239334106f,   0.7707080841064453f,   0.5005329847335815f,
                              0.02551445923745632f,   0.2414131909608841f,   0.35716891288757324f,
                              0.0012345465365797281f, 0.03920503705739975f,  0.14482809603214264f,
                              0.38934165239334106f,   0.7707080841064453f,   0.5005329847335815f,
                              0.02551445923745632f,   0.2414131909608841f,   0.35716891288757324f,
                              0.0012345465365797281f, 0.03920503705739975f,  0.14482809603214264f,
                              0.38934165239334106f,   0.7707080841064453f,   0.5005329847335815f,
                              0.02551445923745632f,   0.2414131909608841f,   0.35716891288757324f,
                              0.0012345465365797281f, 0.03920503705739975f,  0.14482809603214264f,
                              0.38934165239334106f,   0.7707080841064453f,   0.5005329847335815f,
                              0.02551445923745632f,   0.2414131909608841f,   0.35716891288757324f,
                              0.0012345465365797281f, 0.03920503705739975f,  0.14482809603214264f,
                              0.38934165239334106f,   0.7707080841064453f,   0.5005329847335815f,
                              0.02551445923745632f,   0.2414131909608841f,   0.35716891288757324f},
                  2e-6));
  KernelRunner magnitude("AudioSpectrogram");
  magnitude.Attr("window_size", int64_t{12}).Attr("stride", int64_t{7});
  const Tensor m = RunOk(magnitude, {input});
  const std::vector<float> first_frame = {
      0.046875f,         0.15909908711910248f, 0.134685218334198f,   0.7666698694229126f,
      1.13209068775177f, 0.7847226858139038f,  0.13802886009216309f, 0.5632706880569458f,
      0.796875f};
  for (int k = 0; k < 9; ++k) {
    EXPECT_NEAR(m.data<float>()[k], first_frame[k], 2e-6 * first_frame[k]) << k;
  }
  std::vector<float> short_input(10);
  EXPECT_EQ(RunOk(magnitude, {Literal<float>({5, 2}, short_input)}).shape(),
            TensorShape({2, 0, 9}));
  KernelRunner tiny("AudioSpectrogram");
  tiny.Attr("window_size", int64_t{1}).Attr("stride", int64_t{1});
  EXPECT_THAT(tiny.Run({input}), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                   "window_size must be > 1, got 1"));
  KernelRunner huge("AudioSpectrogram");
  huge.Attr("window_size", int64_t{1} << 40).Attr("stride", int64_t{1});
  EXPECT_THAT(huge.Run({input}), testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

// TF 2.21's Mfcc of a 257-bin spectrogram, with the defaults and with other
// limits, bands and coefficients.
TEST(AudioOpsTest, MfccMatchesTensorFlow) {
  std::vector<float> spectrum(2 * 257);
  for (int f = 0; f < 2; ++f) {
    for (int k = 0; k < 257; ++k) {
      spectrum[f * 257 + k] = static_cast<float>((k * 37 + f * 11) % 101) / 20.0f;
    }
  }
  const Tensor s = Literal<float>({1, 2, 257}, spectrum);
  KernelRunner mfcc("Mfcc");
  EXPECT_THAT(RunOk(mfcc, {s, Scalar<int32_t>(16000)}),
              TensorNear<float>(
                  {1, 2, 13}, {12.299054145812988f,   -3.3912436962127686f,   -0.15262345969676971f,
                               -0.46170076727867126f, -0.049832433462142944f, -0.1195814311504364f,
                               0.013086196035146713f, -0.18771065771579742f,  -0.1425325721502304f,
                               -0.12386748939752579f, -0.19153974950313568f,  -0.35147348046302795f,
                               -0.07582198083400726f, 12.332124710083008f,    -3.378164291381836f,
                               0.038423482328653336f, -0.31083476543426514f,  -0.07513722777366638f,
                               -0.23757798969745636f, 0.07855301350355148f,   0.09825832396745682f,
                               0.1013580858707428f,   -0.01919308304786682f,  -0.05301962047815323f,
                               -0.251966655254364f,   -0.08310379832983017f},
                  2e-5));
  KernelRunner narrow("Mfcc");
  narrow.Attr("upper_frequency_limit", 3000.0f)
      .Attr("lower_frequency_limit", 100.0f)
      .Attr("filterbank_channel_count", int64_t{20})
      .Attr("dct_coefficient_count", int64_t{5});
  EXPECT_THAT(RunOk(narrow, {s, Scalar<int32_t>(8000)}),
              TensorNear<float>({1, 2, 5},
                                {15.69679069519043f, -1.8558552265167236f, -0.00026531144976615906f,
                                 -0.24974851310253143f, -0.04272802919149399f, 15.673012733459473f,
                                 -1.886886715888977f, -0.019313234835863113f, -0.20533058047294617f,
                                 0.0780954658985138f},
                                2e-5));
  KernelRunner too_many("Mfcc");
  too_many.Attr("dct_coefficient_count", int64_t{50});
  EXPECT_THAT(too_many.Run({s, Scalar<int32_t>(16000)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Mfcc initialization failed for channel count 257, sample rate "
                                "16000 and filterbank_channel_count 40"));
  KernelRunner huge("Mfcc");
  huge.Attr("filterbank_channel_count", int64_t{1} << 40);
  EXPECT_THAT(huge.Run({s, Scalar<int32_t>(16000)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(mfcc.Run({s, Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Mfcc initialization failed for channel count 257, sample rate 0"));
}

}  // namespace
}  // namespace towerflow
