// The image codecs: DecodeJpeg, DecodeAndCropJpeg, DecodePng, DecodeImage,
// ExtractJpegShape, EncodeJpeg and EncodePng on core/jpeg.h and
// core/png.h, with TensorFlow 2.x's behaviour: the decoders look at the
// data, so DecodeJpeg reads a PNG and DecodePng a JPEG (DecodeAndCropJpeg
// reads JPEG only); a decoded image is allocated once, at its output size,
// through the context (so the session's tensor limit applies before any
// pixel is written). BMP (DecodeBmp, DecodeImage) is read here, as TF reads
// it: uncompressed 8-, 24- or 32-bit rows, the palette ignored. GIF and WebP
// are not decoded.
#include <cctype>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/jpeg.h"
#include "core/png.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

absl::StatusOr<absl::string_view> ScalarContents(const Tensor& t) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("contents must be scalar, got shape ", t.shape().DebugString()));
  }
  const std::string& s = *t.data<std::string>();
  if (s.empty()) return absl::InvalidArgumentError("Input is empty.");
  return absl::string_view(s);
}

// What the first bytes say the file is, for formats Towerflow does not
// decode: their name; else empty.
std::string OtherFormat(absl::string_view data) {
  if (data.substr(0, 3) == "GIF") return "GIF";
  if (data.size() >= 12 && data.substr(0, 4) == "RIFF" && data.substr(8, 4) == "WEBP") {
    return "WebP";
  }
  return "";
}

bool IsBmp(absl::string_view data) { return data.substr(0, 2) == "BM"; }

int64_t LittleEndian(absl::string_view data, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(data[at + i]);
  return bytes == 4 ? static_cast<int32_t>(v) : static_cast<int16_t>(v);
}

// A BMP's uncompressed pixels as TF's DecodeBmp reads them: its header's
// data offset, width, height (negative for top-down rows) and bits per
// pixel (8, 24 or 32: gray, BGR or BGRA), rows padded to 4 bytes and
// exactly filling the file; `channels` 0 (the file's), 3 or 4 (gray
// repeated, alpha 255). `allocate` gives the [height, width, channels]
// output.
absl::Status DecodeBmp(
    absl::string_view data, int channels,
    const std::function<absl::StatusOr<uint8_t*>(int64_t, int64_t, int)>& allocate) {
  if (data.size() < 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incomplete bmp content, requires at least 32 bytes to find the header size, width, "
        "height, and bpp, got ",
        data.size(), " bytes"));
  }
  const int64_t offset = LittleEndian(data, 10, 4), width = LittleEndian(data, 18, 4),
                height = LittleEndian(data, 22, 4), bpp = LittleEndian(data, 28, 2);
  if (offset < 0) return absl::InvalidArgumentError("header size must be nonnegative");
  if (width <= 0) return absl::InvalidArgumentError("Width must be positive");
  if (height == 0) return absl::InvalidArgumentError("Height must be nonzero");
  const int in_channels = static_cast<int>(bpp / 8);
  if (in_channels != 1 && in_channels != 3 && in_channels != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of channels inherent in the image must be 1, 3 or 4, was ", in_channels));
  }
  if (channels != 0 && channels != 3 && channels != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("`channels` must be 0, 3 or 4 for BMP, but got ", channels));
  }
  const int out_channels = channels == 0 ? in_channels : channels;
  const int64_t rows = height < 0 ? -height : height;
  if (width * rows * out_channels >= (int64_t{1} << 30)) {
    return absl::InvalidArgumentError("Total possible pixel bytes must be less than 2^30");
  }
  const int64_t row_size = (8 * in_channels * width + 31) / 32 * 4;
  const int64_t excess = static_cast<int64_t>(data.size()) - (offset + row_size * rows);
  if (excess != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input size should match (header_size + row_size * abs_height) but they "
                     "differ by ",
                     excess));
  }
  TW_ASSIGN_OR_RETURN(uint8_t * out, allocate(rows, width, out_channels));
  for (int64_t r = 0; r < rows; ++r) {
    // Rows are stored bottom-up unless the height is negative.
    const auto* in = reinterpret_cast<const uint8_t*>(data.data() + offset +
                                                      (height < 0 ? r : rows - 1 - r) * row_size);
    uint8_t* o = out + r * width * out_channels;
    for (int64_t x = 0; x < width; ++x, in += in_channels, o += out_channels) {
      if (in_channels == 1) {
        std::fill_n(o, std::min(out_channels, 3), in[0]);
      } else {
        o[0] = in[2];
        o[1] = in[1];
        o[2] = in[0];
      }
      if (out_channels == 4) o[3] = in_channels == 4 ? in[3] : 255;
    }
  }
  return absl::OkStatus();
}

// DecodeJpeg, DecodeAndCropJpeg, DecodePng and DecodeImage.
class DecodeImageOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    op_ = c.def().op();
    const bool jpeg_op = op_ == "DecodeJpeg" || op_ == "DecodeAndCropJpeg";
    int64_t channels;
    TW_RETURN_IF_ERROR(c.GetAttr("channels", &channels));
    if (jpeg_op) {
      if (channels != 0 && channels != 1 && channels != 3) {
        return absl::InvalidArgumentError(
            absl::StrCat("JPEG does not support ", channels, " channels"));
      }
      int64_t ratio;
      TW_RETURN_IF_ERROR(c.GetAttr("ratio", &ratio));
      if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
        return absl::InvalidArgumentError(absl::StrCat("ratio must be 1, 2, 4, or 8, got ", ratio));
      }
      jpeg_.ratio = static_cast<int>(ratio);
      TW_RETURN_IF_ERROR(c.GetAttr("fancy_upscaling", &jpeg_.fancy_upscaling));
      TW_RETURN_IF_ERROR(c.GetAttr("try_recover_truncated", &jpeg_.try_recover_truncated));
      TW_RETURN_IF_ERROR(c.GetAttr("acceptable_fraction", &jpeg_.acceptable_fraction));
      std::string dct;
      TW_RETURN_IF_ERROR(c.GetAttr("dct_method", &dct));
      TW_ASSIGN_OR_RETURN(jpeg_.dct_method, jpeg::ParseDctMethod(dct));
    } else if (op_ == "DecodeBmp") {
      dtype_ = DT_UINT8;  // its channels are checked with the file's (TF's order)
    } else {
      if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("`channels` must be 0, 1, 3 or 4 but got ", channels));
      }
      TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    }
    channels_ = static_cast<int>(channels);
    jpeg_.channels = channels_ == 4 ? 0 : channels_;
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(absl::string_view data, ScalarContents(ctx->input(0)));
    if (op_ == "DecodeBmp" && !IsBmp(data)) {
      const std::string format = jpeg::IsJpeg(data) ? "JPEG"
                                 : png::IsPng(data) ? "PNG"
                                                    : OtherFormat(data);
      if (format.empty()) {
        return absl::InvalidArgumentError(
            "Unknown image file format. One of JPEG, PNG, BMP required.");
      }
      std::string lower = format;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
      return absl::InvalidArgumentError(absl::StrCat("Trying to decode ", format,
                                                     " format using DecodeBmp op. Use `decode_",
                                                     lower, "` or `decode_image` instead."));
    }
    if (jpeg::IsJpeg(data)) return DecodeJpeg(ctx, data);
    if (op_ == "DecodeAndCropJpeg") {
      const std::string format = png::IsPng(data) ? "PNG" : OtherFormat(data);
      return absl::InvalidArgumentError(
          format.empty() ? "Unknown image file format. DecodeAndCropJpeg decodes JPEG."
                         : absl::StrCat("DecodeAndCropJpeg operation can run on JPEG only, but "
                                        "detected ",
                                        format, "."));
    }
    if (png::IsPng(data)) return DecodePng(ctx, data);
    if (IsBmp(data)) {
      if (op_ != "DecodeBmp" && op_ != "DecodeImage") {
        return absl::InvalidArgumentError(absl::StrCat(
            "Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` "
            "instead. Op used: ",
            op_));
      }
      return DecodeBmp(ctx, data);
    }
    const std::string other = OtherFormat(data);
    if (!other.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          op_, ": ", other, " images are not decoded by Towerflow (JPEG and PNG are)"));
    }
    return absl::InvalidArgumentError("Unknown image file format. One of JPEG, PNG, BMP required.");
  }

 private:
  // The image in uint8, then widened to the op's dtype (Widen).
  absl::Status DecodeJpeg(KernelContext* ctx, absl::string_view data) {
    if (channels_ == 4) {
      return absl::InvalidArgumentError("JPEG does not support 4 channels");
    }
    jpeg::DecodeOptions options = jpeg_;
    if (op_ == "DecodeAndCropJpeg") {
      const Tensor& window = ctx->input(1);
      if (window.NumElements() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("crop_size must have four elements ", window.shape().DebugString()));
      }
      const int32_t* w = window.data<int32_t>();
      options.crop = jpeg::Window{w[0], w[1], w[2], w[3]};
    }
    const bool bytes = dtype_ == DT_UINT8;
    Tensor* out = nullptr;
    Tensor narrow;
    const jpeg::Allocate allocate = [&](int64_t h, int64_t w, int c) -> absl::StatusOr<uint8_t*> {
      const TensorShape shape({h, w, c});
      TW_ASSIGN_OR_RETURN(out, ctx->allocate_output(0, shape));
      if (bytes) return out->data<uint8_t>();
      narrow = Tensor(DT_UINT8, shape);
      return narrow.data<uint8_t>();
    };
    absl::Status s = jpeg::Decode(data, options, allocate);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(op_, ": ", s.message()));
    if (!bytes) Widen(narrow.data<uint8_t>(), narrow.NumElements(), 8, out);
    return absl::OkStatus();
  }

  absl::Status DecodePng(KernelContext* ctx, absl::string_view data) {
    const int bits = dtype_ == DT_UINT8 ? 8 : 16;
    Tensor* out = nullptr;
    Tensor wide;
    const png::Allocate allocate = [&](int64_t h, int64_t w, int c) -> absl::StatusOr<void*> {
      const TensorShape shape({h, w, c});
      TW_ASSIGN_OR_RETURN(out, ctx->allocate_output(0, shape));
      if (dtype_ != DT_FLOAT) return out->raw_data();
      wide = Tensor(DT_UINT16, shape);
      return wide.raw_data();
    };
    absl::Status s = png::Decode(data, channels_, bits, allocate);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(op_, ": ", s.message()));
    if (dtype_ == DT_FLOAT) Widen(wide.data<uint16_t>(), wide.NumElements(), 16, out);
    return absl::OkStatus();
  }

  absl::Status DecodeBmp(KernelContext* ctx, absl::string_view data) {
    Tensor* out = nullptr;
    Tensor narrow;
    const bool bytes = dtype_ == DT_UINT8;
    absl::Status s = towerflow::DecodeBmp(
        data, channels_, [&](int64_t h, int64_t w, int c) -> absl::StatusOr<uint8_t*> {
          const TensorShape shape({h, w, c});
          TW_ASSIGN_OR_RETURN(out, ctx->allocate_output(0, shape));
          if (bytes) return out->data<uint8_t>();
          narrow = Tensor(DT_UINT8, shape);
          return narrow.data<uint8_t>();
        });
    if (!s.ok()) return s;
    if (!bytes) Widen(narrow.data<uint8_t>(), narrow.NumElements(), 8, out);
    return absl::OkStatus();
  }

  // `n` values of `bits` bits into `out` (uint16 or float), as TF widens a
  // JPEG's bytes: uint16 as v * 256, float as v / 255 (a PNG's 8-bit
  // samples become v * 257 in libpng, png::Decode).
  template <typename V>
  static void Widen(const V* in, int64_t n, int bits, Tensor* out) {
    if (out->dtype() == DT_UINT16) {
      uint16_t* o = out->data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint16_t>(in[i] << 8);
      return;
    }
    const float scale = bits == 8 ? 1.0f / 255 : 1.0f / 65535;
    float* o = out->data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(in[i]) * scale;
  }

  std::string op_;
  int channels_ = 0;
  DataType dtype_ = DT_UINT8;
  jpeg::DecodeOptions jpeg_;
};

class ExtractJpegShapeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& contents = ctx->input(0);
    if (contents.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("contents must be scalar, got shape ", contents.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(const jpeg::Shape shape, jpeg::ReadShape(*contents.data<std::string>()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({3})));
    const int64_t dims[3] = {shape.height, shape.width, shape.components};
    for (int i = 0; i < 3; ++i) {
      if (out->dtype() == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
      } else {
        out->data<int64_t>()[i] = dims[i];
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<const Tensor*> Image3d(KernelContext* ctx) {
  const Tensor& image = ctx->input(0);
  if (image.dims() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("image must be 3-dimensional", image.shape().DebugString()));
  }
  return &image;
}

absl::Status SetScalarString(KernelContext* ctx, std::string value) {
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  *out->data<std::string>() = std::move(value);
  return absl::OkStatus();
}

// EncodeJpeg, and EncodeJpegVariableQuality (tf.image.adjust_jpeg_quality:
// the quality as an int32 scalar input, EncodeJpeg's defaults for the rest;
// TF's bytes for the same quality).
class EncodeJpegOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    variable_quality_ = c.def().op() == "EncodeJpegVariableQuality";
    if (variable_quality_) return absl::OkStatus();
    TW_RETURN_IF_ERROR(c.GetAttr("format", &format_));
    int64_t quality, x, y;
    TW_RETURN_IF_ERROR(c.GetAttr("quality", &quality));
    TW_RETURN_IF_ERROR(CheckQuality(quality));
    TW_RETURN_IF_ERROR(c.GetAttr("x_density", &x));
    TW_RETURN_IF_ERROR(c.GetAttr("y_density", &y));
    if (x < 0 || y < 0 || x > 65535 || y > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("x_density and y_density must be in [0, 65535], got ", x, " and ", y));
    }
    options_.quality = static_cast<int>(quality);
    options_.x_density = static_cast<int>(x);
    options_.y_density = static_cast<int>(y);
    std::string unit;
    TW_RETURN_IF_ERROR(c.GetAttr("density_unit", &unit));
    options_.density_unit = unit == "cm" ? 2 : 1;
    TW_RETURN_IF_ERROR(c.GetAttr("progressive", &options_.progressive));
    TW_RETURN_IF_ERROR(c.GetAttr("optimize_size", &options_.optimize_size));
    TW_RETURN_IF_ERROR(c.GetAttr("chroma_downsampling", &options_.chroma_downsampling));
    return c.GetAttr("xmp_metadata", &options_.xmp_metadata);
  }

  absl::Status Compute(KernelContext* ctx) override {
    jpeg::EncodeOptions options = options_;
    if (variable_quality_) {
      const Tensor& quality = ctx->input(1);
      if (quality.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("quality must be scalar: ", quality.shape().DebugString()));
      }
      TW_RETURN_IF_ERROR(CheckQuality(*quality.data<int32_t>()));
      options.quality = *quality.data<int32_t>();
    }
    TW_ASSIGN_OR_RETURN(const Tensor* image, Image3d(ctx));
    const int64_t channels = image->dim_size(2);
    const int64_t wanted = format_ == "grayscale" ? 1 : format_ == "rgb" ? 3 : channels;
    if (channels != wanted || (channels != 1 && channels != 3)) {
      return absl::InvalidArgumentError(
          absl::StrCat("image must have ", format_.empty() ? "1 or 3" : absl::StrCat(wanted),
                       " channels, got ", image->shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::string jpeg,
                        jpeg::Encode(image->data<uint8_t>(), image->dim_size(0), image->dim_size(1),
                                     static_cast<int>(channels), options));
    return SetScalarString(ctx, std::move(jpeg));
  }

 private:
  static absl::Status CheckQuality(int64_t quality) {
    if (quality < 0 || quality > 100) {
      return absl::InvalidArgumentError(absl::StrCat("quality must be in [0,100], got ", quality));
    }
    return absl::OkStatus();
  }

  bool variable_quality_ = false;
  std::string format_;
  jpeg::EncodeOptions options_;
};

class EncodePngOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("compression", &compression_));
    if (compression_ < -1 || compression_ > 9) {
      return absl::InvalidArgumentError(
          absl::StrCat("compression should be in [-1,9], got ", compression_));
    }
    return absl::OkStatus();
  }

  // One PNG per [height, width, channels] image of the batch [...] (TF 2).
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& images = ctx->input(0);
    if (images.dims() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("images must be at least rank 3", images.shape().DebugString()));
    }
    const int rank = images.dims();
    const int64_t height = images.dim_size(rank - 3), width = images.dim_size(rank - 2),
                  channels = images.dim_size(rank - 1);
    if (channels < 1 || channels > 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("image must have 1, 2, 3, or 4 channels, got ", channels));
    }
    TensorShape batch = images.shape();
    for (int i = 0; i < 3; ++i) batch.RemoveDim(batch.dims() - 1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, batch));
    const int64_t bytes = height * width * channels * DataTypeSize(images.dtype());
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      TW_ASSIGN_OR_RETURN(
          out->data<std::string>()[i],
          png::Encode(static_cast<const char*>(images.raw_data()) + i * bytes, height, width,
                      static_cast<int>(channels), images.dtype() == DT_UINT8 ? 8 : 16,
                      static_cast<int>(compression_)));
    }
    return absl::OkStatus();
  }

 private:
  int64_t compression_ = -1;
};

TW_REGISTER_KERNELS(image_codec_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const char* op :
       {"DecodeJpeg", "DecodeAndCropJpeg", "DecodePng", "DecodeImage", "DecodeBmp"}) {
    RegisterKernel(cpu(op), MakeFactory<DecodeImageOp>());
  }
  RegisterKernel(cpu("ExtractJpegShape"), MakeFactory<ExtractJpegShapeOp>());
  RegisterKernel(cpu("EncodeJpeg"), MakeFactory<EncodeJpegOp>());
  RegisterKernel(cpu("EncodeJpegVariableQuality"), MakeFactory<EncodeJpegOp>());
  RegisterKernel(cpu("EncodePng"), MakeFactory<EncodePngOp>());
}

}  // namespace
}  // namespace towerflow
