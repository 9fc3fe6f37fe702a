// The image codecs (image_codec_ops.cc) against TensorFlow 2.21: a 6x8 RGB
// image TF encoded as JPEG (quality 95) and PNG, decoded here with each
// option, must give TF's pixels; TF's error messages for bad data and
// attrs. The expected values are TF's outputs for the same bytes.
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// TF: img[y, x] = ((37y + 11x) % 256, (5xy + 90) % 256, (200 - 13x + 7y) % 256),
// tf.io.encode_jpeg(img) and tf.io.encode_png(img).
const std::string kJpeg = std::string(
    "\xff\xd8\xff\xe0\x00\x10\x4a\x46\x49\x46\x00\x01\x01\x01\x01\x2c\x01\x2c\x00\x00\xff\xdb"
    "\x00\x43\x00\x02\x01\x01\x01\x01\x01\x02\x01\x01\x01\x02\x02\x02\x02\x02\x04\x03\x02\x02"
    "\x02\x02\x05\x04\x04\x03\x04\x06\x05\x06\x06\x06\x05\x06\x06\x06\x07\x09\x08\x06\x07\x09"
    "\x07\x06\x06\x08\x0b\x08\x09\x0a\x0a\x0a\x0a\x0a\x06\x08\x0b\x0c\x0b\x0a\x0c\x09\x0a\x0a"
    "\x0a\xff\xdb\x00\x43\x01\x02\x02\x02\x02\x02\x02\x05\x03\x03\x05\x0a\x07\x06\x07\x0a\x0a"
    "\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a"
    "\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a"
    "\x0a\x0a\x0a\x0a\xff\xc0\x00\x11\x08\x00\x06\x00\x08\x03\x01\x22\x00\x02\x11\x01\x03\x11"
    "\x01\xff\xc4\x00\x1f\x00\x00\x01\x05\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\xff\xc4\x00\xb5\x10\x00\x02\x01\x03\x03"
    "\x02\x04\x03\x05\x05\x04\x04\x00\x00\x01\x7d\x01\x02\x03\x00\x04\x11\x05\x12\x21\x31\x41"
    "\x06\x13\x51\x61\x07\x22\x71\x14\x32\x81\x91\xa1\x08\x23\x42\xb1\xc1\x15\x52\xd1\xf0\x24"
    "\x33\x62\x72\x82\x09\x0a\x16\x17\x18\x19\x1a\x25\x26\x27\x28\x29\x2a\x34\x35\x36\x37\x38"
    "\x39\x3a\x43\x44\x45\x46\x47\x48\x49\x4a\x53\x54\x55\x56\x57\x58\x59\x5a\x63\x64\x65\x66"
    "\x67\x68\x69\x6a\x73\x74\x75\x76\x77\x78\x79\x7a\x83\x84\x85\x86\x87\x88\x89\x8a\x92\x93"
    "\x94\x95\x96\x97\x98\x99\x9a\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xb2\xb3\xb4\xb5\xb6\xb7"
    "\xb8\xb9\xba\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xe1"
    "\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xff\xc4\x00"
    "\x1f\x01\x00\x03\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x01\x02\x03"
    "\x04\x05\x06\x07\x08\x09\x0a\x0b\xff\xc4\x00\xb5\x11\x00\x02\x01\x02\x04\x04\x03\x04\x07"
    "\x05\x04\x04\x00\x01\x02\x77\x00\x01\x02\x03\x11\x04\x05\x21\x31\x06\x12\x41\x51\x07\x61"
    "\x71\x13\x22\x32\x81\x08\x14\x42\x91\xa1\xb1\xc1\x09\x23\x33\x52\xf0\x15\x62\x72\xd1\x0a"
    "\x16\x24\x34\xe1\x25\xf1\x17\x18\x19\x1a\x26\x27\x28\x29\x2a\x35\x36\x37\x38\x39\x3a\x43"
    "\x44\x45\x46\x47\x48\x49\x4a\x53\x54\x55\x56\x57\x58\x59\x5a\x63\x64\x65\x66\x67\x68\x69"
    "\x6a\x73\x74\x75\x76\x77\x78\x79\x7a\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x92\x93\x94\x95"
    "\x96\x97\x98\x99\x9a\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9"
    "\xba\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xe2\xe3\xe4"
    "\xe5\xe6\xe7\xe8\xe9\xea\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xff\xda\x00\x0c\x03\x01\x00"
    "\x02\x11\x03\x11\x00\x3f\x00\xec\xbe\x16\xfe\xc4\x5f\x05\x3c\x35\xf0\x43\xc5\x1f\x1f\x3e"
    "\x24\x5a\xbd\xce\x8f\xe0\xcf\x0a\x5f\xf8\x83\x57\xb6\xd3\xed\x96\x4b\x99\x6d\xac\xed\xa4"
    "\xb9\x95\x22\x57\x64\x46\x90\xa4\x6c\x14\x33\x2a\x96\x23\x2c\xa3\x90\x51\x45\x7d\x4f\x12"
    "\x29\xe6\xdc\x65\x98\x7d\x6a\x72\x97\x24\x92\x8d\xa7\x28\xd9\x6b\xfc\xad\x7e\x27\x4e\x71"
    "\x95\xe5\xd9\x46\x25\x50\xc1\xd2\x50\x87\x64\xbf\xcc\xff\xd9",
    719);

const std::string kPng = std::string(
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x08\x00\x00"
    "\x00\x06\x08\x02\x00\x00\x00\x71\x67\x48\xac\x00\x00\x00\x2b\x49\x44\x41\x54\x08\x99\x63"
    "\x64\x88\x3a\xc1\xcd\xf0\x19\x13\xb1\xa8\x32\xb0\x73\xb3\xfe\xc2\x44\x30\x09\x2e\x74\x84"
    "\x24\xc1\x8f\x82\x50\x25\x44\x10\x08\x43\x42\x12\x8a\x00\x44\xe4\x2e\x5e\xb7\x9c\x1d\xaf"
    "\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82",
    100);

Tensor Str(const std::string& s) {
  Tensor t(DT_STRING, TensorShape());
  *t.data<std::string>() = s;
  return t;
}

TEST(DecodeJpegTest, PixelsAreTensorFlows) {
  KernelRunner r("DecodeJpeg");
  EXPECT_THAT(RunOk(r, {Str(kJpeg)}),
              TensorIs<uint8_t>(
                  {6, 8, 3},
                  {13,  78,  180, 15,  78,  175, 29,  85,  170, 36,  85,  154, 48,  88,  139, 57,
                   91,  119, 66,  90,  100, 73,  95,  93,  39,  88,  191, 42,  91,  186, 56,  98,
                   182, 62,  100, 165, 78,  109, 153, 82,  107, 129, 102, 122, 123, 110, 127, 117,
                   68,  87,  192, 81,  100, 195, 89,  106, 184, 107, 122, 177, 116, 129, 161, 130,
                   141, 147, 138, 149, 133, 149, 159, 132, 111, 97,  208, 114, 100, 198, 132, 122,
                   195, 139, 131, 178, 148, 144, 161, 163, 162, 157, 174, 176, 152, 185, 189, 154,
                   143, 94,  211, 157, 113, 211, 169, 129, 199, 178, 148, 186, 193, 172, 179, 203,
                   190, 174, 210, 204, 178, 226, 223, 192, 165, 100, 218, 186, 126, 226, 199, 146,
                   214, 207, 166, 200, 219, 189, 189, 230, 212, 192, 250, 240, 213, 31,  26,  0}));
}

TEST(DecodeJpegTest, GreyRatioAndPlainUpsamplingAreTensorFlows) {
  KernelRunner grey("DecodeJpeg");
  grey.Attr("channels", int64_t{1});
  EXPECT_THAT(
      RunOk(grey, {Str(kJpeg)}),
      TensorIs<uint8_t>({6, 8, 1}, {70,  70,  78,  78,  82,  84,  84,  88,  85,  87,  95,  96,
                                    105, 102, 116, 121, 93,  105, 110, 124, 129, 138, 144, 153,
                                    114, 115, 133, 139, 147, 162, 173, 184, 122, 137, 149, 161,
                                    179, 192, 203, 220, 133, 155, 170, 182, 198, 215, 240, 24}));
  KernelRunner half("DecodeJpeg");
  half.Attr("ratio", int64_t{2});
  EXPECT_THAT(
      RunOk(half, {Str(kJpeg)}),
      TensorIs<uint8_t>({3, 4, 3}, {26,  91,  193, 43,  96,  176, 67,  102, 142, 88,  110, 108,
                                    96,  99,  206, 119, 123, 187, 143, 147, 158, 164, 170, 134,
                                    169, 104, 222, 194, 146, 196, 215, 192, 176, 177, 172, 142}));
  KernelRunner plain("DecodeJpeg");
  plain.Attr("fancy_upscaling", false);
  EXPECT_THAT(RunOk(plain, {Str(kJpeg)}),
              TensorIs<uint8_t>(
                  {6, 8, 3},
                  {13,  78,  180, 13,  78,  180, 32,  85,  165, 32,  85,  165, 53,  88,  128, 55,
                   90,  130, 69,  91,  89,  73,  95,  93,  28,  93,  195, 30,  95,  197, 49,  102,
                   182, 50,  103, 183, 76,  111, 151, 73,  108, 148, 101, 123, 121, 106, 128, 126,
                   79,  82,  189, 91,  94,  201, 100, 104, 168, 114, 118, 182, 125, 129, 140, 134,
                   138, 149, 144, 150, 114, 153, 159, 123, 100, 103, 210, 101, 104, 211, 123, 127,
                   191, 129, 133, 197, 143, 147, 158, 158, 162, 173, 173, 179, 143, 184, 190, 154,
                   154, 89,  207, 169, 104, 222, 177, 129, 179, 189, 141, 191, 197, 174, 158, 210,
                   187, 171, 210, 205, 175, 227, 222, 192, 165, 100, 218, 187, 122, 240, 198, 150,
                   200, 210, 162, 212, 216, 193, 177, 233, 210, 194, 247, 242, 212, 31,  26,  0}));
}

TEST(DecodeJpegTest, CropWindowIsTensorFlows) {
  KernelRunner r("DecodeAndCropJpeg");
  EXPECT_THAT(
      RunOk(r, {Str(kJpeg), Literal<int32_t>({4}, {1, 2, 3, 4})}),
      TensorIs<uint8_t>({3, 4, 3}, {56,  98,  182, 62,  100, 165, 78,  109, 153, 78,  107, 139,
                                    89,  106, 184, 107, 122, 177, 116, 129, 161, 127, 140, 157,
                                    132, 122, 195, 139, 131, 178, 148, 144, 161, 163, 161, 164}));
  // The window must lie inside the image and be non-empty.
  for (const std::vector<int32_t>& w :
       {std::vector<int32_t>{0, 0, 7, 8}, {1, 1, 0, 3}, {-1, 0, 2, 2}, {5, 7, 2, 2}}) {
    KernelRunner bad("DecodeAndCropJpeg");
    EXPECT_THAT(bad.Run({Str(kJpeg), Literal<int32_t>({4}, w)}).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, "crop window"));
  }
  KernelRunner three("DecodeAndCropJpeg");
  EXPECT_THAT(
      three.Run({Str(kJpeg), Literal<int32_t>({3}, {0, 0, 1})}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "crop_size must have four elements [3]"));
  KernelRunner png("DecodeAndCropJpeg");
  EXPECT_THAT(png.Run({Str(kPng), Literal<int32_t>({4}, {0, 0, 1, 1})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG."));
}

TEST(DecodeJpegTest, TruncatedDataFailsOrIsRecoveredAsTensorFlowsIs) {
  const std::string truncated = kJpeg.substr(0, 683);
  KernelRunner strict("DecodeJpeg");
  EXPECT_THAT(strict.Run({Str(truncated)}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid JPEG data"));
  // Recovered, the missing data decodes as libjpeg fills it, full size.
  // (TF 2.21's own libjpeg-turbo 3 fills it differently from Debian's 2.1,
  // so the recovered pixels are not compared.)
  KernelRunner recover("DecodeJpeg");
  recover.Attr("try_recover_truncated", true).Attr("acceptable_fraction", 0.1f);
  const Tensor recovered = RunOk(recover, {Str(truncated)});
  EXPECT_EQ(recovered.shape(), TensorShape({6, 8, 3}));
}

TEST(DecodeJpegTest, BadDataAndAttrsGiveTensorFlowsErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "Input is empty."},
      {"garbage!", "Unknown image file format"},
      {std::string("\xff\xd8\xff\xe0") + std::string(20, '\0'), "Invalid JPEG data"},
  };
  for (const auto& [data, message] : cases) {
    for (const char* op : {"DecodeJpeg", "DecodePng", "DecodeImage"}) {
      KernelRunner r(op);
      EXPECT_THAT(r.Run({Str(data)}).status(),
                  StatusIs(absl::StatusCode::kInvalidArgument, message))
          << op;
    }
  }
  KernelRunner gif("DecodeImage");
  EXPECT_THAT(gif.Run({Str("GIF89a....")}).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "GIF"));
  KernelRunner matrix("DecodeJpeg");
  EXPECT_THAT(matrix.Run({Literal<std::string>({2}, {kJpeg, kJpeg})}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "contents must be scalar"));
  const std::pair<const char*, int64_t> attrs[] = {{"channels", 4}, {"ratio", 3}};
  for (const auto& [attr, value] : attrs) {
    KernelRunner r("DecodeJpeg");
    r.Attr(attr, value);
    EXPECT_THAT(r.Run({Str(kJpeg)}).status(), StatusIs(absl::StatusCode::kInvalidArgument));
  }
  KernelRunner dct("DecodeJpeg");
  dct.Attr("dct_method", std::string("X"));
  EXPECT_THAT(dct.Run({Str(kJpeg)}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}"));
}

TEST(ExtractJpegShapeTest, IsTheHeadersSize) {
  KernelRunner r("ExtractJpegShape");
  EXPECT_THAT(RunOk(r, {Str(kJpeg)}), TensorIs<int32_t>({3}, {6, 8, 3}));
  KernelRunner wide("ExtractJpegShape");
  wide.Attr("output_type", DT_INT64);
  EXPECT_THAT(RunOk(wide, {Str(kJpeg)}), TensorIs<int64_t>({3}, {6, 8, 3}));
  KernelRunner bad("ExtractJpegShape");
  EXPECT_THAT(bad.Run({Str("garbage!")}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid JPEG data, size 8"));
}

TEST(DecodePngTest, PixelsChannelsAndDepthsAreTensorFlows) {
  KernelRunner r("DecodePng");
  const Tensor rgb = RunOk(r, {Str(kPng)});
  ASSERT_EQ(rgb.shape(), TensorShape({6, 8, 3}));
  // PNG is lossless: the image TF encoded.
  for (int64_t y = 0; y < 6; ++y) {
    for (int64_t x = 0; x < 8; ++x) {
      const uint8_t* p = rgb.data<uint8_t>() + (y * 8 + x) * 3;
      EXPECT_EQ(p[0], (37 * y + 11 * x) % 256);
      EXPECT_EQ(p[1], (5 * x * y + 90) % 256);
      EXPECT_EQ(p[2], (200 - 13 * x + 7 * y) % 256);
    }
  }
  KernelRunner grey("DecodePng");
  grey.Attr("channels", int64_t{1});
  EXPECT_THAT(
      RunOk(grey, {Str(kPng)}),
      TensorIs<uint8_t>({6, 8, 1}, {75,  77,  79,  81,  82,  84,  86,  88,  87,  92,  96,  101,
                                    106, 111, 115, 120, 99,  107, 114, 122, 130, 137, 145, 153,
                                    111, 121, 132, 143, 153, 164, 174, 185, 123, 136, 150, 163,
                                    177, 190, 204, 217, 134, 151, 167, 184, 200, 217, 233, 23}));
  KernelRunner rgba("DecodePng");
  rgba.Attr("channels", int64_t{4});
  const Tensor four = RunOk(rgba, {Str(kPng)});
  ASSERT_EQ(four.shape(), TensorShape({6, 8, 4}));
  EXPECT_EQ(four.data<uint8_t>()[3], 255);  // opaque alpha added
  KernelRunner two("DecodePng");
  two.Attr("channels", int64_t{2});
  EXPECT_THAT(two.Run({Str(kPng)}).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                                      "`channels` must be 0, 1, 3 or 4 but got 2"));
}

// A grey PNG as RGB and RGBA, and 16-bit samples as bytes (the high byte),
// as TF decodes them: the red channel of the test image, encoded here.
TEST(DecodePngTest, GreyWidensAndSixteenBitsNarrowAsTensorFlows) {
  Tensor grey(DT_UINT8, TensorShape({6, 8, 1}));
  Tensor deep(DT_UINT16, TensorShape({6, 8, 1}));
  for (int64_t y = 0; y < 6; ++y) {
    for (int64_t x = 0; x < 8; ++x) {
      grey.data<uint8_t>()[y * 8 + x] = static_cast<uint8_t>((37 * y + 11 * x) % 256);
      deep.data<uint16_t>()[y * 8 + x] = static_cast<uint16_t>((37 * y + 11 * x) % 256 * 257 + 3);
    }
  }
  KernelRunner encode("EncodePng");
  const Tensor png = RunOk(encode, {grey});
  KernelRunner rgb("DecodePng");
  rgb.Attr("channels", int64_t{3});
  const Tensor three = RunOk(rgb, {png});
  EXPECT_THAT(std::vector<uint8_t>(three.data<uint8_t>(), three.data<uint8_t>() + 6),
              ::testing::ElementsAre(0, 0, 0, 11, 11, 11));
  KernelRunner rgba("DecodePng");
  rgba.Attr("channels", int64_t{4});
  const Tensor four = RunOk(rgba, {png});
  EXPECT_THAT(std::vector<uint8_t>(four.data<uint8_t>(), four.data<uint8_t>() + 8),
              ::testing::ElementsAre(0, 0, 0, 255, 11, 11, 11, 255));
  KernelRunner encode16("EncodePng");
  const Tensor png16 = RunOk(encode16, {deep});
  KernelRunner bytes("DecodePng");
  EXPECT_THAT(RunOk(bytes, {png16}), TensorEq(grey));
}

TEST(DecodePngTest, EachDecoderReadsTheOtherFormatAsTensorFlow2Does) {
  KernelRunner png_as_jpeg("DecodeJpeg");
  const Tensor a = RunOk(png_as_jpeg, {Str(kPng)});
  EXPECT_THAT(std::vector<uint8_t>(a.data<uint8_t>(), a.data<uint8_t>() + 6),
              ::testing::ElementsAre(0, 90, 200, 11, 90, 187));
  KernelRunner jpeg_as_png("DecodePng");
  const Tensor b = RunOk(jpeg_as_png, {Str(kJpeg)});
  EXPECT_THAT(std::vector<uint8_t>(b.data<uint8_t>(), b.data<uint8_t>() + 6),
              ::testing::ElementsAre(13, 78, 180, 15, 78, 175));
}

TEST(DecodeImageTest, WiderTypesScaleAsTensorFlows) {
  KernelRunner png_float("DecodeImage");
  png_float.Attr("dtype", DT_FLOAT);
  const Tensor f = RunOk(png_float, {Str(kPng)});
  EXPECT_THAT(
      std::vector<float>(f.data<float>(), f.data<float>() + 6),
      ::testing::ElementsAre(0.0f, 0.3529411852359772f, 0.7843137383460999f, 0.04313725605607033f,
                             0.3529411852359772f, 0.7333333492279053f));
  KernelRunner jpeg_float("DecodeImage");
  jpeg_float.Attr("dtype", DT_FLOAT);
  const Tensor g = RunOk(jpeg_float, {Str(kJpeg)});
  EXPECT_THAT(
      std::vector<float>(g.data<float>(), g.data<float>() + 6),
      ::testing::ElementsAre(0.05098039656877518f, 0.30588236451148987f, 0.7058823704719543f,
                             0.05882353335618973f, 0.30588236451148987f, 0.686274528503418f));
  KernelRunner jpeg_u16("DecodeImage");
  jpeg_u16.Attr("dtype", DT_UINT16);
  const Tensor h = RunOk(jpeg_u16, {Str(kJpeg)});
  EXPECT_THAT(std::vector<uint16_t>(h.data<uint16_t>(), h.data<uint16_t>() + 6),
              ::testing::ElementsAre(3328, 19968, 46080, 3840, 19968, 44800));
}

// Encoding round trips: PNG exactly (8 and 16 bits, every channel count),
// JPEG to TF's header and close to the pixels (a lossy code).
TEST(EncodeTest, RoundTripsThroughTheDecoders) {
  KernelRunner decode("DecodePng");
  const Tensor image = RunOk(decode, {Str(kPng)});
  KernelRunner encode("EncodePng");
  encode.Attr("compression", int64_t{9});
  const Tensor png = RunOk(encode, {image});
  KernelRunner again("DecodePng");
  EXPECT_THAT(RunOk(again, {png}), TensorEq(image));
  Tensor deep(DT_UINT16, TensorShape({2, 3, 2}));
  for (int i = 0; i < 12; ++i) deep.data<uint16_t>()[i] = static_cast<uint16_t>(i * 5000 + 7);
  KernelRunner encode16("EncodePng");
  const Tensor png16 = RunOk(encode16, {deep});
  KernelRunner decode16("DecodePng");
  decode16.Attr("dtype", DT_UINT16);
  EXPECT_THAT(RunOk(decode16, {png16}), TensorEq(deep));
  KernelRunner encode_jpeg("EncodeJpeg");
  encode_jpeg.Attr("quality", int64_t{100}).Attr("chroma_downsampling", false);
  const Tensor jpeg = RunOk(encode_jpeg, {image});
  KernelRunner shape("ExtractJpegShape");
  EXPECT_THAT(RunOk(shape, {jpeg}), TensorIs<int32_t>({3}, {6, 8, 3}));
  KernelRunner decode_jpeg("DecodeJpeg");
  decode_jpeg.Attr("dct_method", std::string("INTEGER_ACCURATE"));
  const Tensor back = RunOk(decode_jpeg, {jpeg});
  ASSERT_EQ(back.shape(), image.shape());
  for (int64_t i = 0; i < image.NumElements(); ++i) {
    EXPECT_NEAR(back.data<uint8_t>()[i], image.data<uint8_t>()[i], 12) << i;
  }
  for (const char* format : {"grayscale", "rgb"}) {
    KernelRunner r("EncodeJpeg");
    r.Attr("format", std::string(format));
    const Tensor two = Literal<uint8_t>({1, 1, 2}, {1, 2});
    EXPECT_THAT(r.Run({two}).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, "channels, got [1,1,2]"));
  }
  KernelRunner five("EncodePng");
  EXPECT_THAT(five.Run({Tensor(DT_UINT8, TensorShape({2, 2, 5}))}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "image must have 1, 2, 3, or 4 channels, got 5"));
  KernelRunner empty("EncodeJpeg");
  EXPECT_THAT(empty.Run({Tensor(DT_UINT8, TensorShape({0, 4, 3}))}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// TF 2.21 encodes a batch [..., height, width, channels] into one PNG each:
// a [2, 1, 2, 2, 3] batch gives [2, 1] PNGs of 79 bytes, each the image's
// own PNG.
TEST(EncodeTest, PngEncodesEachImageOfABatch) {
  Tensor batch(DT_UINT8, TensorShape({2, 1, 2, 2, 3}));
  for (int i = 0; i < 24; ++i) batch.data<uint8_t>()[i] = static_cast<uint8_t>(i);
  KernelRunner encode("EncodePng");
  const Tensor pngs = RunOk(encode, {batch});
  ASSERT_EQ(pngs.shape(), TensorShape({2, 1}));
  for (int i = 0; i < 2; ++i) {
    Tensor one(DT_UINT8, TensorShape({2, 2, 3}));
    for (int j = 0; j < 12; ++j) one.data<uint8_t>()[j] = static_cast<uint8_t>(12 * i + j);
    KernelRunner single("EncodePng");
    EXPECT_EQ(pngs.data<std::string>()[i], RunOk(single, {one}).data<std::string>()[0]);
    EXPECT_EQ(pngs.data<std::string>()[i].size(), 79u);
  }
  KernelRunner flat("EncodePng");
  EXPECT_THAT(flat.Run({Tensor(DT_UINT8, TensorShape({2, 3}))}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "images must be at least rank 3[2,3]"));
}

// tf.image.adjust_jpeg_quality's op: TF 2.21's JPEGs of this image at
// qualities 0, 50 and 100 (their lengths and FarmHash fingerprints, as
// tf.raw_ops.Fingerprint gives them), and its messages.
TEST(EncodeTest, JpegOfAVariableQualityAsTensorFlow) {
  Tensor image(DT_UINT8, TensorShape({4, 5, 3}));
  for (int i = 0; i < 60; ++i) image.data<uint8_t>()[i] = static_cast<uint8_t>(4 * i);
  const auto encode = [&](const Tensor& pixels, int32_t quality) {
    KernelRunner k("EncodeJpegVariableQuality");
    return k.Run({pixels, Literal<int32_t>({}, {quality})});
  };
  const auto fingerprint = [](const Tensor& jpeg) {
    KernelRunner k("Fingerprint");
    return RunOk(k, {Literal<std::string>({1}, {*jpeg.data<std::string>()}),
                     Literal<std::string>({}, {"farmhash64"})});
  };
  const struct {
    int32_t quality;
    size_t length;
    std::vector<uint8_t> fingerprint;
  } kTf[] = {{0, 631, {48, 180, 118, 45, 141, 240, 0, 44}},
             {50, 637, {235, 187, 186, 192, 31, 209, 100, 209}},
             {100, 662, {190, 44, 123, 183, 234, 152, 177, 59}}};
  for (const auto& tf : kTf) {
    absl::StatusOr<std::vector<Tensor>> jpeg = encode(image, tf.quality);
    ASSERT_TRUE(jpeg.ok()) << jpeg.status();
    EXPECT_EQ((*jpeg)[0].data<std::string>()->size(), tf.length) << tf.quality;
    EXPECT_THAT(fingerprint((*jpeg)[0]), TensorIs<uint8_t>({1, 8}, tf.fingerprint)) << tf.quality;
  }
  EXPECT_THAT(encode(image, 101),
              StatusIs(absl::StatusCode::kInvalidArgument, "quality must be in [0,100], got 101"));
  EXPECT_THAT(encode(image, -1),
              StatusIs(absl::StatusCode::kInvalidArgument, "quality must be in [0,100], got -1"));
  KernelRunner vector("EncodeJpegVariableQuality");
  EXPECT_THAT(vector.Run({image, Literal<int32_t>({1}, {50})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "quality must be scalar: [1]"));
  EXPECT_THAT(
      encode(Tensor(DT_UINT8, TensorShape({4, 5, 2})), 50),
      StatusIs(absl::StatusCode::kInvalidArgument, "image must have 1 or 3 channels, got [4,5,2]"));
  EXPECT_THAT(encode(Tensor(DT_UINT8, TensorShape({5, 3})), 50),
              StatusIs(absl::StatusCode::kInvalidArgument, "image must be 3-dimensional[5,3]"));
}

// The BMPs of a [2, 3] image (pixel i's channels 10 * (4i, 4i + 1, 4i + 2,
// 4i + 3)) as 24-bit BGR, 32-bit BGRA and 8-bit gray rows (bottom-up, rows
// padded to 4 bytes; the header's 40 bytes after the file's 14).
const std::string kBmp24 = absl::HexStringToBytes(
    "424d4e0000000000000036000000280000000300000002000000010018000000000018000000130b0000130b00"
    "0000000000000000008c8278b4aaa0dcd2c8000000140a003c3228645a50000000");
const std::string kBmp32 = absl::HexStringToBytes(
    "424d4e0000000000000036000000280000000300000002000000010020000000000018000000130b0000130b00"
    "0000000000000000008c827896b4aaa0bedcd2c8e6140a001e3c322846645a506e");
const std::string kBmp8 = absl::HexStringToBytes(
    "424d3e0000000000000036000000280000000300000002000000010008000000000008000000130b0000130b00"
    "00000000000000000078a0c80000285000");

absl::StatusOr<std::vector<Tensor>> DecodeBmp(const std::string& bmp, int64_t channels,
                                              const char* op = "DecodeBmp") {
  KernelRunner k(op);
  k.Attr("channels", channels);
  return k.Run({Str(bmp)});
}

// TF 2.21's pixels for each depth and channel count.
TEST(DecodeBmpTest, PixelsAreTensorFlows) {
  const std::vector<uint8_t> rgb = {0,   10,  20,  40,  50,  60,  80,  90,  100,
                                    120, 130, 140, 160, 170, 180, 200, 210, 220};
  std::vector<uint8_t> rgba, rgb_opaque;
  for (int i = 0; i < 24; ++i) rgba.push_back(static_cast<uint8_t>(10 * i));
  for (int i = 0; i < 6; ++i) {
    for (int c = 0; c < 3; ++c) rgb_opaque.push_back(rgb[3 * i + c]);
    rgb_opaque.push_back(255);
  }
  const auto decoded = [](const std::string& bmp, int64_t channels) {
    absl::StatusOr<std::vector<Tensor>> out = DecodeBmp(bmp, channels);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  EXPECT_THAT(decoded(kBmp24, 0), TensorIs<uint8_t>({2, 3, 3}, rgb));
  EXPECT_THAT(decoded(kBmp24, 3), TensorIs<uint8_t>({2, 3, 3}, rgb));
  EXPECT_THAT(decoded(kBmp24, 4), TensorIs<uint8_t>({2, 3, 4}, rgb_opaque));
  EXPECT_THAT(decoded(kBmp32, 0), TensorIs<uint8_t>({2, 3, 4}, rgba));
  EXPECT_THAT(decoded(kBmp32, 3), TensorIs<uint8_t>({2, 3, 3}, rgb));
  EXPECT_THAT(decoded(kBmp8, 0), TensorIs<uint8_t>({2, 3, 1}, {0, 40, 80, 120, 160, 200}));
  EXPECT_THAT(decoded(kBmp8, 3),
              TensorIs<uint8_t>({2, 3, 3}, {0, 0, 0, 40, 40, 40, 80, 80, 80, 120, 120, 120, 160,
                                            160, 160, 200, 200, 200}));
  // Top-down rows (a negative height).
  std::string top_down = kBmp24;
  top_down.replace(22, 4, std::string("\xfe\xff\xff\xff", 4));
  EXPECT_THAT(decoded(top_down, 0),
              TensorIs<uint8_t>({2, 3, 3}, {120, 130, 140, 160, 170, 180, 200, 210, 220,  //
                                            0, 10, 20, 40, 50, 60, 80, 90, 100}));
  // DecodeImage reads BMPs in every dtype (TF's scaling); DecodeJpeg and
  // DecodePng refuse them.
  KernelRunner image("DecodeImage");
  image.Attr("dtype", DT_UINT16);
  const Tensor wide = RunOk(image, {Str(kBmp24)});
  EXPECT_EQ(wide.data<uint16_t>()[1], 2560);
  for (const char* op : {"DecodeJpeg", "DecodePng"}) {
    KernelRunner k(op);
    EXPECT_THAT(k.Run({Str(kBmp24)}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("Trying to decode BMP format using a wrong op. Use "
                                      "`decode_bmp` or `decode_image` instead. Op used: ",
                                      op)));
  }
}

TEST(DecodeBmpTest, BadFilesGiveTensorFlowsErrors) {
  const auto with = [](size_t at, int32_t v) {
    std::string s = kBmp24;
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  const auto fails = [](const std::string& bmp, const std::string& message, int64_t channels = 0,
                        const char* op = "DecodeBmp") {
    EXPECT_THAT(DecodeBmp(bmp, channels, op),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
  };
  fails(kBmp24, "`channels` must be 0, 3 or 4 for BMP, but got 1", 1);
  fails(kBmp8, "`channels` must be 0, 3 or 4 for BMP, but got 1", 1, "DecodeImage");
  fails(kBmp24.substr(0, 30),
        "Incomplete bmp content, requires at least 32 bytes to find the header size, width, "
        "height, and bpp, got 30 bytes");
  fails(kBmp24.substr(0, kBmp24.size() - 3),
        "Input size should match (header_size + row_size * abs_height) but they differ by -3");
  fails(kBmp24 + "extra",
        "Input size should match (header_size + row_size * abs_height) but they differ by 5");
  fails(with(18, -3), "Width must be positive");
  fails(with(22, 0), "Height must be nonzero");
  fails(with(10, -5), "header size must be nonnegative");
  fails(with(18, 1 << 30), "Total possible pixel bytes must be less than 2^30");
  std::string sixteen = kBmp24;
  sixteen[28] = 16;
  fails(sixteen, "Number of channels inherent in the image must be 1, 3 or 4, was 2");
  fails("", "Input is empty.");
  fails(std::string(kPng),
        "Trying to decode PNG format using DecodeBmp op. Use `decode_png` or "
        "`decode_image` instead.");
}

}  // namespace
}  // namespace towerflow
