// JPEG, PNG and WAV bytes -> the decoders of core/jpeg.h, core/png.h and
// core/wav.h (what DecodeJpeg, DecodeAndCropJpeg, DecodePng, DecodeImage,
// ExtractJpegShape, DecodeWav and the input pipeline run on files): a WAV
// (RIFF) is decoded whole; for an image, the header, then a
// decode with the options the first byte picks (channels, ratio, the fast
// or accurate transform, a crop window, recovery of a truncated file; 8 or
// 16-bit PNG samples).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/jpeg.h"
#include "core/png.h"
#include "core/status_macros.h"
#include "core/wav.h"
#include "fuzz/fuzz_target.h"

namespace towerflow {
namespace fuzz {
namespace {

// Decoded images above this are refused (ResourceExhausted), as a session's
// tensor limit would: the decoders accept up to 2^29 values.
constexpr int64_t kMaxDecodedBytes = int64_t{64} << 20;

absl::Status RunImage(absl::string_view input) {
  if (input.size() > kMaxInputBytes) return absl::InvalidArgumentError("input too long");
  if (absl::StartsWith(input, "RIFF")) return wav::Decode(input).status();
  const uint8_t knobs = input.empty() ? 0 : static_cast<uint8_t>(input[0]);
  std::vector<uint8_t> pixels;
  const auto allocate = [&](int64_t h, int64_t w, int c, int bytes) -> absl::StatusOr<uint8_t*> {
    if (h * w * c * bytes > kMaxDecodedBytes) {
      return absl::ResourceExhaustedError("decoded image over the fuzzing limit");
    }
    pixels.assign(h * w * c * bytes, 0xAB);
    return pixels.data();
  };
  if (jpeg::IsJpeg(input)) {
    TW_ASSIGN_OR_RETURN(const jpeg::Shape shape, jpeg::ReadShape(input));
    jpeg::DecodeOptions options;
    options.channels = (knobs & 3) == 3 ? 0 : (knobs & 3) == 1 ? 1 : 3;
    options.ratio = 1 << ((knobs >> 2) & 3);
    options.dct_method =
        knobs & 16 ? jpeg::DctMethod::kIntegerAccurate : jpeg::DctMethod::kIntegerFast;
    options.try_recover_truncated = knobs & 32;
    options.acceptable_fraction = knobs & 64 ? 0.5f : 1.0f;
    if (knobs & 128)
      options.crop =
          jpeg::Window{shape.height / 3, shape.width / 4, shape.height / 2, shape.width / 2};
    return jpeg::Decode(input, options,
                        [&](int64_t h, int64_t w, int c) { return allocate(h, w, c, 1); });
  }
  TW_ASSIGN_OR_RETURN(const png::Shape shape, png::ReadShape(input));
  const int channels = static_cast<int>(knobs % 5);
  const int bits = knobs & 8 ? 16 : 8;
  return png::Decode(input, channels, bits,
                     [&](int64_t h, int64_t w, int c) -> absl::StatusOr<void*> {
                       TW_ASSIGN_OR_RETURN(uint8_t * p, allocate(h, w, c, bits / 8));
                       return static_cast<void*>(p);
                     });
}

// Images the encoders write: grey and colour JPEGs (baseline, progressive,
// without chroma subsampling) and PNGs of 1-4 channels, 8 and 16 bits.
std::vector<std::string> ImageSeeds() {
  std::vector<std::string> seeds;
  std::vector<uint8_t> pixels(24 * 17 * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 + i / 7);
  for (int channels : {1, 3}) {
    jpeg::EncodeOptions options;
    for (int variant = 0; variant < 3; ++variant) {
      options.progressive = variant == 1;
      options.chroma_downsampling = variant != 2;
      absl::StatusOr<std::string> jpeg = jpeg::Encode(pixels.data(), 17, 24, channels, options);
      if (jpeg.ok()) seeds.push_back(*std::move(jpeg));
    }
  }
  for (int channels = 1; channels <= 4; ++channels) {
    for (int bits : {8, 16}) {
      absl::StatusOr<std::string> png =
          png::Encode(pixels.data(), bits == 16 ? 6 : 17, 12, channels, bits, 6);
      if (png.ok()) seeds.push_back(*std::move(png));
    }
  }
  // WAVs of 1 and 2 channels.
  std::vector<float> samples(48);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<float>(i % 9) / 4 - 1;
  for (int channels : {1, 2}) {
    absl::StatusOr<std::string> wav = wav::Encode(samples.data(), 16000, channels, 48 / channels);
    if (wav.ok()) seeds.push_back(*std::move(wav));
  }
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET(image, RunImage, ImageSeeds)

}  // namespace fuzz
}  // namespace towerflow
