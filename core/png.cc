#include "core/png.h"

#include <png.h>
#include <zlib.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"

namespace towerflow {
namespace png {
namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 29;  // TF's limit

#ifdef ABSL_IS_LITTLE_ENDIAN
constexpr bool kLittleEndian = true;  // 16-bit samples swapped from PNG's big-endian order
#else
constexpr bool kLittleEndian = false;
#endif

// As in core/jpeg.cc (Note [libjpeg errors] there): libpng's error
// callback longjmps to the setjmp of the *Low function that called libpng,
// which holds no object with a destructor; what outlives a jump lives in
// the Context its caller owns.
struct Context {
  const png_byte* data = nullptr;
  size_t left = 0;
  char message[256] = {0};
  std::string encoded;
  std::vector<png_byte> narrow;  // 8-bit rows widened to 16 after decoding
  absl::Status status;           // an allocation's failure
};

void OnError(png_structp png, png_const_charp message) {
  auto* ctx = static_cast<Context*>(png_get_error_ptr(png));
  std::snprintf(ctx->message, sizeof(ctx->message), "%s", message);
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}

void Read(png_structp png, png_bytep out, png_size_t length) {
  auto* ctx = static_cast<Context*>(png_get_io_ptr(png));
  if (ctx->left < length) png_error(png, "the PNG data ends early");
  std::memcpy(out, ctx->data, length);
  ctx->data += length;
  ctx->left -= length;
}

void Write(png_structp png, png_bytep data, png_size_t length) {
  auto* ctx = static_cast<Context*>(png_get_io_ptr(png));
  ctx->encoded.append(reinterpret_cast<const char*>(data), length);
}

void Flush(png_structp) {}

// The header and, when `prepare`, libpng's transforms to `*channels` (0:
// the file's, set here) of `bits` bits.
struct Header {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, passes = 1, channels = 0;
};

void ReadHeader(png_structp png, png_infop info, Header* h) {
  png_read_info(png, info);
  png_get_IHDR(png, info, &h->width, &h->height, &h->bit_depth, &h->color_type, nullptr, nullptr,
               nullptr);
  const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (h->color_type == PNG_COLOR_TYPE_PALETTE) {
    h->channels = trns ? 4 : 3;
  } else {
    h->channels = png_get_channels(png, info);
  }
}

void Transform(png_structp png, png_infop info, const Header& h, int channels, int bits) {
  const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const bool alpha = (h.color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels % 2 == 0) {  // grey and alpha, or RGBA
    if (!alpha && trns) {
      png_set_tRNS_to_alpha(png);
    } else if (!alpha) {
      png_set_add_alpha(png, (1u << h.bit_depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (alpha || trns) {
    png_set_strip_alpha(png);
  }
  if (h.bit_depth > 8 && bits == 8) png_set_strip_16(png);
  png_set_packing(png);
  if (bits == 16 && kLittleEndian) png_set_swap(png);
  if (h.color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool grey = (h.color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (grey && h.bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3 && !grey) png_set_rgb_to_gray(png, 1, 0.299, 0.587);  // ITU-R 601, as JPEG
  if (channels >= 3 && grey) png_set_gray_to_rgb(png);
}

bool DecodeLow(Context* ctx, png_structp png, png_infop info, int channels, int bits,
               const Allocate& allocate, Header* h) {
  if (setjmp(png_jmpbuf(png))) return false;
  ReadHeader(png, info, h);
  if (h->width == 0 || h->height == 0 || static_cast<int64_t>(h->width) * h->height >= kMaxPixels) {
    std::snprintf(ctx->message, sizeof(ctx->message),
                  "PNG image of %ux%u is empty or too large (2^29 pixels at most)", h->height,
                  h->width);
    return false;
  }
  if (channels == 0) channels = h->channels;
  h->channels = channels;
  // 8-bit files asked for 16 bits decode to bytes first.
  const bool widen = bits == 16 && h->bit_depth <= 8;
  Transform(png, info, *h, channels, widen ? 8 : bits);
  h->passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  absl::StatusOr<void*> out = allocate(h->height, h->width, channels);
  if (!out.ok()) {
    ctx->status = out.status();
    return false;
  }
  const size_t row_bytes = static_cast<size_t>(h->width) * channels * (widen ? 1 : bits / 8);
  png_bytep pixels = static_cast<png_bytep>(*out);
  if (widen) {
    ctx->narrow.resize(row_bytes * h->height);
    pixels = ctx->narrow.data();
  }
  for (int pass = 0; pass < h->passes; ++pass) {
    png_bytep row = pixels;
    for (png_uint_32 y = 0; y < h->height; ++y, row += row_bytes) png_read_row(png, row, nullptr);
  }
  png_read_end(png, info);
  if (widen) {
    uint16_t* wide = static_cast<uint16_t*>(*out);
    for (size_t i = 0; i < ctx->narrow.size(); ++i) wide[i] = ctx->narrow[i] * 257;
  }
  return true;
}

bool ReadShapeLow(Context* ctx, png_structp png, png_infop info, Header* h) {
  if (setjmp(png_jmpbuf(png))) return false;
  ReadHeader(png, info, h);
  return true;
}

bool EncodeLow(Context* ctx, png_structp png, png_infop info, const void* pixels, int64_t height,
               int64_t width, int channels, int bits, int compression) {
  if (setjmp(png_jmpbuf(png))) return false;
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                        PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, ctx, Write, Flush);
  png_set_compression_level(png, compression < 0 ? Z_DEFAULT_COMPRESSION : compression);
  png_set_compression_mem_level(png, MAX_MEM_LEVEL);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bits,
               kColorTypes[channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (bits == 16 && kLittleEndian) png_set_swap(png);
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bits / 8);
  png_bytep row = static_cast<png_bytep>(const_cast<void*>(pixels));
  for (int64_t y = 0; y < height; ++y, row += row_bytes) png_write_row(png, row);
  png_write_end(png, nullptr);
  return true;
}

// A read struct and its info, destroyed together.
struct Reader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  explicit Reader(Context* ctx) {
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, ctx, OnError, OnWarning);
    if (png != nullptr) info = png_create_info_struct(png);
    if (png != nullptr) png_set_read_fn(png, ctx, Read);
  }
  ~Reader() {
    if (png != nullptr) png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
  }
};

Context ContextFor(absl::string_view data) {
  Context ctx;
  ctx.data = reinterpret_cast<const png_byte*>(data.data());
  ctx.left = data.size();
  return ctx;
}

}  // namespace

bool IsPng(absl::string_view data) {
  return data.size() >= 8 && png_sig_cmp(reinterpret_cast<png_const_bytep>(data.data()), 0, 8) == 0;
}

absl::Status Decode(absl::string_view data, int channels, int bits, const Allocate& allocate) {
  if (channels < 0 || channels > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("PNG channels must be 0, 1, 2, 3 or 4, got ", channels));
  }
  if (bits != 8 && bits != 16) {
    return absl::InvalidArgumentError(absl::StrCat("PNG samples have 8 or 16 bits, got ", bits));
  }
  if (data.empty()) return absl::InvalidArgumentError("Input is empty.");
  Context ctx = ContextFor(data);
  Reader reader(&ctx);
  if (reader.info == nullptr) return absl::ResourceExhaustedError("libpng could not start");
  Header h;
  if (!DecodeLow(&ctx, reader.png, reader.info, channels, bits, allocate, &h)) {
    if (!ctx.status.ok()) return ctx.status;
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid PNG data, size ", data.size(), ": ", ctx.message));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> ReadShape(absl::string_view data) {
  Context ctx = ContextFor(data);
  Reader reader(&ctx);
  if (reader.info == nullptr) return absl::ResourceExhaustedError("libpng could not start");
  Header h;
  if (data.empty() || !ReadShapeLow(&ctx, reader.png, reader.info, &h)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid PNG data, size ", data.size(), ": ", ctx.message));
  }
  return Shape{h.height, h.width, h.channels, h.bit_depth};
}

absl::StatusOr<std::string> Encode(const void* pixels, int64_t height, int64_t width, int channels,
                                   int bits, int compression) {
  if (channels < 1 || channels > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("image must have 1, 2, 3, or 4 channels, got ", channels));
  }
  if (bits != 8 && bits != 16) {
    return absl::InvalidArgumentError(absl::StrCat("PNG samples have 8 or 16 bits, got ", bits));
  }
  if (compression < -1 || compression > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression must be in [-1,9], got ", compression));
  }
  if (height <= 0 || width <= 0 || height * width >= kMaxPixels || height > PNG_UINT_31_MAX ||
      width > PNG_UINT_31_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode a ", height, "x", width, " image as PNG: empty or too large"));
  }
  Context ctx;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, OnError, OnWarning);
  if (png == nullptr) return absl::ResourceExhaustedError("libpng could not start");
  png_infop info = png_create_info_struct(png);
  const bool ok = info != nullptr &&
                  EncodeLow(&ctx, png, info, pixels, height, width, channels, bits, compression);
  png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("PNG encoding failed: ", ctx.message));
  return std::move(ctx.encoded);
}

}  // namespace png
}  // namespace towerflow
