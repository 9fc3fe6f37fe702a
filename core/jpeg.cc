#include "core/jpeg.h"

// clang-format off: jpeglib.h needs stdio's FILE and size_t first.
#include <jerror.h>
#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
// clang-format on

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace jpeg {
namespace {

// TF's limit on the values of one image, past which libjpeg's own
// arithmetic is not trusted.
constexpr int64_t kMaxValues = int64_t{1} << 29;

// Note [libjpeg errors]
// libjpeg reports a fatal error by calling error_exit, which must not
// return: ours formats libjpeg's message and longjmps back to the setjmp of
// the function that called into libjpeg (DecodeLow, ReadShapeLow,
// EncodeLow). Those functions hold no object with a destructor, so the jump
// skips none; what must outlive a jump (the status, the scratch rows, the
// encoder's buffer) lives in a Context owned by the caller. Warnings are
// counted, never printed.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0) ++cinfo->err->num_warnings;
}

void OutputMessage(j_common_ptr) {}

void InstallErrors(ErrorManager* err) {
  jpeg_std_error(&err->pub);
  err->pub.error_exit = ErrorExit;
  err->pub.emit_message = EmitMessage;
  err->pub.output_message = OutputMessage;
  err->message[0] = '\0';
}

// The compressed data in memory. When it ends, decoding either suspends
// (fill_input_buffer returns FALSE: the rows so far are what was read) or,
// to recover a truncated file, sees an end-of-image marker libjpeg then
// decodes up to, as TF's source manager does.
constexpr JOCTET kEndOfImage[2] = {0xFF, JPEG_EOI};

struct Source {
  jpeg_source_mgr pub;
  bool recover;
};

void InitSource(j_decompress_ptr) {}

boolean FillInputBuffer(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<Source*>(cinfo->src);
  if (src->pub.next_input_byte == kEndOfImage + 2) ERREXIT(cinfo, JERR_FILE_READ);
  if (!src->recover) return FALSE;
  WARNMS(cinfo, JWRN_JPEG_EOF);
  src->pub.next_input_byte = kEndOfImage;
  src->pub.bytes_in_buffer = 2;
  return TRUE;
}

void SkipInputData(j_decompress_ptr cinfo, long count) {  // NOLINT(runtime/int): libjpeg's
  if (count <= 0) return;
  auto* src = reinterpret_cast<Source*>(cinfo->src);
  const size_t n = std::min(static_cast<size_t>(count), src->pub.bytes_in_buffer);
  src->pub.next_input_byte += n;
  src->pub.bytes_in_buffer -= n;
}

void TermSource(j_decompress_ptr) {}

void SetSource(j_decompress_ptr cinfo, Source* src, absl::string_view data, bool recover) {
  src->pub.init_source = InitSource;
  src->pub.fill_input_buffer = FillInputBuffer;
  src->pub.skip_input_data = SkipInputData;
  src->pub.resync_to_restart = jpeg_resync_to_restart;
  src->pub.term_source = TermSource;
  src->pub.next_input_byte = reinterpret_cast<const JOCTET*>(data.data());
  src->pub.bytes_in_buffer = data.size();
  src->recover = recover;
  cinfo->src = &src->pub;
}

// What a decode keeps across a libjpeg error (Note [libjpeg errors]).
struct DecodeContext {
  const DecodeOptions* options;
  const Allocate* allocate;
  absl::Status status;  // a failed allocation, or a reason found here
  std::unique_ptr<JSAMPLE[]> scratch;
  int64_t height = 0, rows_read = 0, row_bytes = 0;
  uint8_t* pixels = nullptr;

  uint8_t* AllocatePixels(int64_t h, int64_t w, int c) {
    absl::StatusOr<uint8_t*> p = (*allocate)(h, w, c);
    if (!p.ok()) {
      status = p.status();
      return nullptr;
    }
    return *p;
  }
  JSAMPLE* Scratch(int64_t n) {
    scratch.reset(new JSAMPLE[n]);
    return scratch.get();
  }
  bool Fail(std::string reason) {
    status = absl::InvalidArgumentError(std::move(reason));
    return false;
  }
};

// Adobe's inverted CMYK (or plain CMYK) to RGB, as TF converts it.
void CmykToRgb(const JSAMPLE* cmyk, int64_t width, bool adobe, uint8_t* rgb) {
  for (int64_t i = 0; i < width; ++i) {
    const int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (adobe) {
      rgb[3 * i] = static_cast<uint8_t>(k * c / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>(k * m / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>(k * y / 255);
    } else {
      rgb[3 * i] = static_cast<uint8_t>((255 - k) * (255 - c) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>((255 - k) * (255 - m) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((255 - k) * (255 - y) / 255);
    }
  }
}

// Decodes into ctx; false with the reason in ctx->status, or in `err` when
// libjpeg gave up. The rows after ctx->rows_read are not written.
bool DecodeLow(absl::string_view data, DecodeContext* ctx, jpeg_decompress_struct* cinfo,
               ErrorManager* err, Source* src) {
  const DecodeOptions& o = *ctx->options;
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_create_decompress(cinfo);
  SetSource(cinfo, src, data, o.try_recover_truncated);
  if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
    jpeg_destroy_decompress(cinfo);
    return ctx->Fail("Invalid JPEG data: the data ends inside the header");
  }
  const int components = o.channels == 0 ? std::min(cinfo->num_components, 3) : o.channels;
  const bool cmyk = components == 3 &&
                    (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK);
  if (components == 1) {
    cinfo->out_color_space = JCS_GRAYSCALE;
  } else if (components == 3) {
    cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  } else {
    jpeg_destroy_decompress(cinfo);
    return ctx->Fail(absl::StrCat("Invalid JPEG data: ", cinfo->num_components, " components"));
  }
  cinfo->do_fancy_upsampling = o.fancy_upscaling ? TRUE : FALSE;
  cinfo->scale_num = 1;
  cinfo->scale_denom = o.ratio;
  cinfo->dct_method = o.dct_method == DctMethod::kIntegerFast ? JDCT_IFAST : JDCT_ISLOW;
  jpeg_calc_output_dimensions(cinfo);
  const int64_t full_h = cinfo->output_height, full_w = cinfo->output_width;
  if (full_h <= 0 || full_w <= 0 || full_h * full_w * cinfo->out_color_components >= kMaxValues) {
    jpeg_destroy_decompress(cinfo);
    return ctx->Fail(absl::StrCat("JPEG image of ", full_h, "x", full_w,
                                  " is empty or too large (2^29 values at most)"));
  }
  if (!jpeg_start_decompress(cinfo)) {
    jpeg_destroy_decompress(cinfo);
    return ctx->Fail("Invalid JPEG data: the data ends before the first scan");
  }
  int64_t height = full_h, width = full_w, skipped = 0, offset = 0;
  if (o.crop.has_value()) {
    const Window& c = *o.crop;
    if (c.height <= 0 || c.width <= 0 || c.y < 0 || c.x < 0 || c.y + c.height > full_h ||
        c.x + c.width > full_w) {
      jpeg_destroy_decompress(cinfo);
      return ctx->Fail(absl::StrCat("crop window [y ", c.y, ", x ", c.x, ", height ", c.height,
                                    ", width ", c.width, "] is not inside the ", full_h, "x",
                                    full_w, " image"));
    }
    height = c.height;
    width = c.width;
    // libjpeg moves the window's left edge to an iMCU boundary and widens
    // it to match: the row is copied from `offset`.
    JDIMENSION x = static_cast<JDIMENSION>(c.x), w = static_cast<JDIMENSION>(c.width);
    jpeg_crop_scanline(cinfo, &x, &w);
    offset = c.x - static_cast<int64_t>(x);
    skipped = jpeg_skip_scanlines(cinfo, static_cast<JDIMENSION>(c.y));
    if (skipped != c.y) {
      jpeg_destroy_decompress(cinfo);
      return ctx->Fail("Invalid JPEG data: the data ends before the crop window");
    }
  }
  ctx->height = height;
  ctx->row_bytes = width * components;
  ctx->pixels = ctx->AllocatePixels(height, width, components);
  if (ctx->pixels == nullptr) {
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  const int64_t decoded_width = cinfo->output_width;  // the widened crop, or the image
  const bool staged = cmyk || decoded_width != width;
  JSAMPLE* row = staged ? ctx->Scratch(decoded_width * cinfo->output_components) : nullptr;
  const int64_t staged_offset = offset * cinfo->output_components;
  bool truncated = false;
  while (ctx->rows_read < height) {
    uint8_t* out = ctx->pixels + ctx->rows_read * ctx->row_bytes;
    JSAMPROW target = staged ? row : out;
    if (jpeg_read_scanlines(cinfo, &target, 1) != 1) {
      truncated = true;
      break;
    }
    if (cmyk) {
      CmykToRgb(row + staged_offset, width, cinfo->saw_Adobe_marker, out);
    } else if (staged) {
      std::memcpy(out, row + staged_offset, ctx->row_bytes);
    }
    ++ctx->rows_read;
  }
  if (truncated) {
    jpeg_abort_decompress(cinfo);
  } else {
    if (cinfo->output_scanline < cinfo->output_height) {
      jpeg_skip_scanlines(cinfo, cinfo->output_height - cinfo->output_scanline);
    }
    jpeg_finish_decompress(cinfo);
  }
  jpeg_destroy_decompress(cinfo);
  return true;
}

bool ReadShapeLow(absl::string_view data, Shape* shape, jpeg_decompress_struct* cinfo,
                  ErrorManager* err, Source* src) {
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(cinfo);
    return false;
  }
  jpeg_create_decompress(cinfo);
  SetSource(cinfo, src, data, false);
  const bool ok = jpeg_read_header(cinfo, TRUE) == JPEG_HEADER_OK;
  if (ok) {
    jpeg_calc_output_dimensions(cinfo);
    shape->height = cinfo->output_height;
    shape->width = cinfo->output_width;
    shape->components = cinfo->output_components;
  }
  jpeg_destroy_decompress(cinfo);
  return ok;
}

// What an encode keeps across a libjpeg error: the output buffer that
// jpeg_mem_dest allocates.
struct EncodeContext {
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): jpeg_mem_dest's
  std::unique_ptr<JSAMPLE[]> marker;
  ~EncodeContext() { std::free(buffer); }
};

bool EncodeLow(const uint8_t* pixels, int64_t height, int64_t width, int channels,
               const EncodeOptions& o, EncodeContext* ctx, jpeg_compress_struct* cinfo,
               ErrorManager* err) {
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(cinfo);
    return false;
  }
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, &ctx->buffer, &ctx->size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = channels;
  cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  cinfo->optimize_coding = o.optimize_size ? TRUE : FALSE;
  cinfo->density_unit = static_cast<UINT8>(o.density_unit);
  cinfo->X_density = static_cast<UINT16>(o.x_density);
  cinfo->Y_density = static_cast<UINT16>(o.y_density);
  jpeg_set_quality(cinfo, o.quality, TRUE);
  if (o.progressive) jpeg_simple_progression(cinfo);
  if (!o.chroma_downsampling) {
    for (int i = 0; i < cinfo->num_components; ++i) {
      cinfo->comp_info[i].h_samp_factor = 1;
      cinfo->comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(cinfo, TRUE);
  if (ctx->marker != nullptr) {
    static constexpr char kXmpNamespace[] = "http://ns.adobe.com/xap/1.0/";
    const size_t length = sizeof(kXmpNamespace) + o.xmp_metadata.size();
    jpeg_write_marker(cinfo, JPEG_APP0 + 1, ctx->marker.get(), static_cast<unsigned int>(length));
  }
  const int64_t stride = width * channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + cinfo->next_scanline * stride);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return true;
}

}  // namespace

bool IsJpeg(absl::string_view data) {
  return data.size() >= 3 && data.substr(0, 3) == "\xFF\xD8\xFF";
}

absl::StatusOr<DctMethod> ParseDctMethod(absl::string_view name) {
  if (name == "INTEGER_ACCURATE") return DctMethod::kIntegerAccurate;
  if (name.empty() || name == "INTEGER_FAST") return DctMethod::kIntegerFast;
  return absl::InvalidArgumentError(
      "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}");
}

absl::Status Decode(absl::string_view data, const DecodeOptions& options,
                    const Allocate& allocate) {
  if (options.ratio != 1 && options.ratio != 2 && options.ratio != 4 && options.ratio != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("ratio must be 1, 2, 4, or 8, got ", options.ratio));
  }
  if (options.channels != 0 && options.channels != 1 && options.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("JPEG does not support ", options.channels, " channels"));
  }
  if (data.empty()) return absl::InvalidArgumentError("Input is empty.");
  DecodeContext ctx;
  ctx.options = &options;
  ctx.allocate = &allocate;
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  InstallErrors(&err);
  cinfo.err = &err.pub;
  Source src;
  if (!DecodeLow(data, &ctx, &cinfo, &err, &src)) {
    if (!ctx.status.ok()) return ctx.status;
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid JPEG data or crop window: ", err.message));
  }
  if (ctx.rows_read < ctx.height) {
    const float fraction = static_cast<float>(ctx.rows_read) / static_cast<float>(ctx.height);
    if (fraction < std::min(1.0f, options.acceptable_fraction)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid JPEG data: the data ends after ", ctx.rows_read, " of ", ctx.height,
                       " rows (acceptable_fraction ", options.acceptable_fraction, ")"));
    }
    std::memset(ctx.pixels + ctx.rows_read * ctx.row_bytes, 0,
                (ctx.height - ctx.rows_read) * ctx.row_bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> ReadShape(absl::string_view data) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  InstallErrors(&err);
  cinfo.err = &err.pub;
  Source src;
  Shape shape;
  if (data.empty() || !ReadShapeLow(data, &shape, &cinfo, &err, &src)) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid JPEG data, size ", data.size(),
                                                   err.message[0] ? ": " : "", err.message));
  }
  return shape;
}

absl::StatusOr<std::string> Encode(const uint8_t* pixels, int64_t height, int64_t width,
                                   int channels, const EncodeOptions& options) {
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("JPEG images have 1 or 3 channels, got ", channels));
  }
  if (height <= 0 || width <= 0 || height * width >= kMaxValues || height > JPEG_MAX_DIMENSION ||
      width > JPEG_MAX_DIMENSION) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode a ", height, "x", width, " image as JPEG: empty or too large"));
  }
  if (options.quality < 0 || options.quality > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("quality must be in [0,100], got ", options.quality));
  }
  EncodeContext ctx;
  if (!options.xmp_metadata.empty()) {
    static constexpr char kXmpNamespace[] = "http://ns.adobe.com/xap/1.0/";
    const size_t length = sizeof(kXmpNamespace) + options.xmp_metadata.size();
    if (length > 65533) {
      return absl::InvalidArgumentError("xmp_metadata does not fit a JPEG marker (65,504 bytes)");
    }
    ctx.marker.reset(new JSAMPLE[length]);
    std::memcpy(ctx.marker.get(), kXmpNamespace, sizeof(kXmpNamespace));  // with its NUL
    std::memcpy(ctx.marker.get() + sizeof(kXmpNamespace), options.xmp_metadata.data(),
                options.xmp_metadata.size());
  }
  jpeg_compress_struct cinfo;
  ErrorManager err;
  InstallErrors(&err);
  cinfo.err = &err.pub;
  if (!EncodeLow(pixels, height, width, channels, options, &ctx, &cinfo, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("JPEG encoding failed: ", err.message));
  }
  return std::string(reinterpret_cast<const char*>(ctx.buffer), ctx.size);
}

}  // namespace jpeg
}  // namespace towerflow
