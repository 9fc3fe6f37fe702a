// PNG in memory on libpng, with TensorFlow's semantics (its core/lib/png):
// what DecodePng, DecodeImage and EncodePng compute, and what an input
// pipeline decodes with. Corrupt or truncated data is InvalidArgument with
// libpng's reason; libpng never prints or aborts.
#ifndef TOWERFLOW_CORE_PNG_H_
#define TOWERFLOW_CORE_PNG_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {
namespace png {

// Whether `data` starts with the PNG signature.
bool IsPng(absl::string_view data);

// Where the decoded pixels go: height * width * channels values of
// `bits` (8: bytes, 16: uint16_t in the machine's order), row major; an
// error (such as a memory limit) is returned by Decode.
using Allocate = std::function<absl::StatusOr<void*>(int64_t height, int64_t width, int channels)>;

// Decodes `data` with `channels` (0: the file's -- 1 grey, 2 grey and
// alpha, 3 RGB, 4 RGBA, a palette as RGB or RGBA; else 1, 3 or 4, grey from
// colour by ITU-R 601 weights, alpha added opaque or dropped) of `bits`
// bits (16-bit samples are truncated to 8, 8-bit ones widened as v * 257).
// Images of 2^29 pixels or more are refused (TF's limit).
absl::Status Decode(absl::string_view data, int channels, int bits, const Allocate& allocate);

struct Shape {
  int64_t height = 0, width = 0;
  int channels = 0, bits = 0;
};
// The header's size, channels (as Decode with channels 0 gives them) and
// bit depth.
absl::StatusOr<Shape> ReadShape(absl::string_view data);

// `pixels` [height, width, channels] (1-4 channels of 8 or 16 bits, 16-bit
// ones in the machine's order) as a PNG; `compression` -1 (zlib's default)
// to 9.
absl::StatusOr<std::string> Encode(const void* pixels, int64_t height, int64_t width, int channels,
                                   int bits, int compression);

}  // namespace png
}  // namespace towerflow

#endif  // TOWERFLOW_CORE_PNG_H_
