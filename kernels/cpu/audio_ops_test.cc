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
      summary.Run({Bytes(absl::BytesToHexString("snd")), Literal<float>({3}, {0, 0, 0}), Scalar<float>(8000)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Tensor must be 3-D or 2-D, got: [3]"));
}

}  // namespace
}  // namespace towerflow
