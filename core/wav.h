// 16-bit PCM WAV in memory, with TensorFlow's semantics (its core/lib/wav):
// what EncodeWav, DecodeWav and the audio summaries compute. Samples are
// floats in [-1, 1): an int16 s reads as s / 32768, a float x is written as
// round(x * 32768) clamped to int16. Corrupt or truncated data is
// InvalidArgument naming what was wrong; nothing is read past the data.
#ifndef TOWERFLOW_CORE_WAV_H_
#define TOWERFLOW_CORE_WAV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {
namespace wav {

// `frames` frames of `channels` interleaved samples as a 44-byte-header WAV.
// InvalidArgument for a sample rate outside (0, 2^32), channels outside
// (0, 2^16), or a file past 4 GiB.
absl::StatusOr<std::string> Encode(const float* samples, int64_t sample_rate, int64_t channels,
                                   int64_t frames);

struct Audio {
  std::vector<float> samples;  // frames * channels, interleaved
  int64_t frames = 0;
  int channels = 0;
  uint32_t sample_rate = 0;
};

// The RIFF/WAVE file's PCM samples: a "fmt " chunk of 16 or 18 bytes for
// 16-bit PCM (after any JUNK, bext, iXML, qlty, mext, levl, link or axml
// chunks, as TF skips), then exactly one "data" chunk among the others.
absl::StatusOr<Audio> Decode(absl::string_view data);

}  // namespace wav
}  // namespace towerflow

#endif  // TOWERFLOW_CORE_WAV_H_
