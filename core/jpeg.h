// JPEG in memory on libjpeg-turbo, with TensorFlow's semantics (its
// core/lib/jpeg): what DecodeJpeg, DecodeAndCropJpeg, ExtractJpegShape and
// EncodeJpeg compute, and what an input pipeline decodes with.
//
//   std::vector<uint8_t> pixels;
//   TW_RETURN_IF_ERROR(jpeg::Decode(bytes, jpeg::DecodeOptions(),
//       [&](int64_t h, int64_t w, int c) -> absl::StatusOr<uint8_t*> {
//         pixels.resize(h * w * c);
//         return pixels.data();
//       }));
//
// Corrupt, truncated or oversized data is InvalidArgument with libjpeg's
// own reason; libjpeg never prints, aborts or exits the process.
#ifndef TOWERFLOW_CORE_JPEG_H_
#define TOWERFLOW_CORE_JPEG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {
namespace jpeg {

// Whether `data` starts as a JPEG file does (the SOI marker).
bool IsJpeg(absl::string_view data);

// The inverse DCT: TF's dct_method "INTEGER_ACCURATE" (libjpeg's
// JDCT_ISLOW), or "" and "INTEGER_FAST" (JDCT_IFAST, TF's default).
enum class DctMethod { kIntegerAccurate, kIntegerFast };
// "", "INTEGER_ACCURATE" or "INTEGER_FAST"; InvalidArgument with TF's
// message otherwise.
absl::StatusOr<DctMethod> ParseDctMethod(absl::string_view name);

// A window of the decoded image: rows [y, y + height), columns [x, x +
// width).
struct Window {
  int64_t y = 0, x = 0, height = 0, width = 0;
};

struct DecodeOptions {
  // 0: the file's (1 for grey, else 3: CMYK and YCCK converted to RGB);
  // 1: grey; 3: RGB.
  int channels = 0;
  // Downscaling while decoding: 1, 2, 4 or 8.
  int ratio = 1;
  bool fancy_upscaling = true;
  // Data that ends early decodes as if it ended there (libjpeg fills the
  // rest); otherwise it is an error unless acceptable_fraction of the rows
  // were read (the others black).
  bool try_recover_truncated = false;
  float acceptable_fraction = 1;
  DctMethod dct_method = DctMethod::kIntegerFast;
  // Decode only this window (DecodeAndCropJpeg): it must lie inside the
  // image and be non-empty.
  std::optional<Window> crop;
};

// Where the decoded pixels go: `height * width * channels` bytes, row
// major, for the image's output size; an error (such as a memory limit) is
// returned by Decode.
using Allocate =
    std::function<absl::StatusOr<uint8_t*>(int64_t height, int64_t width, int channels)>;

// Decodes `data` into the buffer `allocate` gives. InvalidArgument for bad
// options or data, naming libjpeg's reason; images of 2^29 values or more
// are refused (TF's limit).
absl::Status Decode(absl::string_view data, const DecodeOptions& options, const Allocate& allocate);

// The image's size as Decode would give it with default options (TF's
// ExtractJpegShape): height, width and the file's components.
struct Shape {
  int64_t height = 0, width = 0;
  int components = 0;
};
absl::StatusOr<Shape> ReadShape(absl::string_view data);

struct EncodeOptions {
  int quality = 95;  // 0-100
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;
  // JFIF density: unit 1 for dots per inch, 2 per centimetre.
  int density_unit = 1;
  int x_density = 300, y_density = 300;
  // Written as an XMP APP1 marker when not empty.
  std::string xmp_metadata;
};

// `pixels` [height, width, channels] (channels 1 or 3) as a baseline (or
// progressive) JPEG. InvalidArgument for an empty or too large image.
absl::StatusOr<std::string> Encode(const uint8_t* pixels, int64_t height, int64_t width,
                                   int channels, const EncodeOptions& options);

}  // namespace jpeg
}  // namespace towerflow

#endif  // TOWERFLOW_CORE_JPEG_H_
