// Checks and summaries: CheckNumerics (and V2), Assert, Print, PrintV2 (TF 2's
// tf.print, after StringFormat), ScalarSummary, HistogramSummary,
// TensorSummary (and V2) and MergeSummary. Summaries are serialized `Summary`
// protos in a scalar string tensor, TensorBoard's format.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/png.h"
#include "core/type_dispatch.h"
#include "core/wav.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/tensor_content.h"
#include "kernels/kernel_util.h"
#include "proto/summary.pb.h"

namespace towerflow {
namespace {

// CheckNumerics and (v2) CheckNumericsV2, whose message tells -Inf from
// +Inf: "<message> : Tensor had -Inf, +Inf, and NaN values" (those found).
template <typename T, bool kV2>
class CheckNumericsOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("message", &message_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    bool nan = false, negative = false, positive = false;
    for (const T v : x.span<T>()) {
      nan |= std::isnan(v);
      negative |= std::isinf(v) && v < 0;
      positive |= std::isinf(v) && v > 0;
    }
    if (!nan && !negative && !positive) return ctx->set_output(0, x);
    if (!kV2) {
      const bool inf = negative || positive;
      return absl::InvalidArgumentError(
          absl::StrCat(message_, " : Tensor had ",
                       nan && inf ? "Inf and NaN" : (nan ? "NaN" : "Inf"), " values"));
    }
    std::vector<std::string> found;
    if (negative) found.push_back("-Inf");
    if (positive) found.push_back("+Inf");
    if (nan) found.push_back("NaN");
    std::string what = found[0];
    if (found.size() == 2) what = absl::StrCat(found[0], " and ", found[1]);
    if (found.size() == 3) what = absl::StrCat(found[0], ", ", found[1], ", and ", found[2]);
    return absl::InvalidArgumentError(absl::StrCat(message_, " : Tensor had ", what, " values"));
  }

 private:
  std::string message_;
};
template <typename T>
using CheckNumericsV1Op = CheckNumericsOp<T, false>;
template <typename T>
using CheckNumericsV2Op = CheckNumericsOp<T, true>;

// "[v0 v1 v2...]" of up to `summarize` values per tensor.
std::string Summarize(KernelContext* ctx, int first, int summarize) {
  std::vector<std::string> parts;
  for (int i = first; i < ctx->num_inputs(); ++i) {
    const Tensor& t = ctx->input(i);
    parts.push_back(t.dtype() == DT_STRING && t.NumElements() == 1
                        ? *t.data<std::string>()
                        : absl::StrCat("[", t.SummarizeValue(summarize), "]"));
  }
  return absl::StrJoin(parts, " ");
}

class AssertOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("summarize", &summarize_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    if (cond.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("In[0] should be a scalar: ", cond.shape().DebugString()));
    }
    if (*cond.data<bool>()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "assertion failed: ",
        Summarize(ctx, 1, static_cast<int>(std::clamp<int64_t>(summarize_, 0, INT_MAX)))));
  }

 private:
  int64_t summarize_ = 3;
};

// Print(input, data...) writes message + data to stderr for the first
// `first_n` runs (all when -1) and passes input through.
class PrintOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("message", &message_));
    TW_RETURN_IF_ERROR(c.GetAttr("first_n", &first_n_));
    return c.GetAttr("summarize", &summarize_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const int64_t count = calls_.fetch_add(1);
    if (first_n_ < 0 || count < first_n_) {
      std::cerr << message_
                << Summarize(ctx, 1, static_cast<int>(std::clamp<int64_t>(summarize_, 0, INT_MAX)))
                << std::endl;
    }
    return ctx->set_output(0, ctx->input(0));
  }

 private:
  std::string message_;
  int64_t first_n_ = -1, summarize_ = 3;
  std::atomic<int64_t> calls_{0};
};

// PrintV2(input) writes the string scalar and `end` to output_stream:
// "stdout", "stderr", "log(info)" / "log(warning)" / "log(error)" (stderr,
// each line marked I, W or E and the node's name, as TF's log marks its
// lines), or "file://<path>", appended to.
class PrintV2Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("output_stream", &stream_));
    TW_RETURN_IF_ERROR(c.GetAttr("end", &end_));
    node_ = c.name();
    if (absl::StartsWith(stream_, "file://")) return absl::OkStatus();
    static constexpr const char* kStreams[] = {"stdout", "stderr", "log(info)", "log(warning)",
                                               "log(error)"};
    if (std::find(std::begin(kStreams), std::end(kStreams), stream_) == std::end(kStreams)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unknown output stream: ", stream_,
                       ", Valid streams are: ", absl::StrJoin(kStreams, " ")));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input is expected to be scalar, but got ", in.shape().DebugString()));
    }
    const std::string text = absl::StrCat(*in.data<std::string>(), end_);
    static std::mutex mu;  // one line at a time, whichever node prints it
    std::lock_guard<std::mutex> lock(mu);
    if (stream_ == "stdout") {
      std::cout << text << std::flush;
    } else if (stream_ == "stderr") {
      std::cerr << text << std::flush;
    } else if (absl::StartsWith(stream_, "log(")) {
      std::cerr << static_cast<char>(std::toupper(stream_[4])) << " " << node_ << "] " << text
                << std::flush;
    } else {
      const std::string path = stream_.substr(strlen("file://"));
      std::FILE* f = std::fopen(path.c_str(), "ab");
      if (f == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("Cannot open ", path, " to append to: ", std::strerror(errno)));
      }
      const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
      if (std::fclose(f) != 0 || !written) {
        return absl::InternalError(
            absl::StrCat("Cannot append to ", path, ": ", std::strerror(errno)));
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string stream_, end_, node_;
};

absl::Status SetSummaryOutput(KernelContext* ctx, const Summary& s) {
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  *out->data<std::string>() = s.SerializeAsString();
  return absl::OkStatus();
}

// Values of a real-number tensor as doubles.
absl::StatusOr<std::vector<double>> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  const bool ok = VisitNumberType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (kIsFloat16<T>) {
      for (const T x : t.span<T>()) v.push_back(static_cast<float>(x));
    } else if constexpr (std::is_arithmetic_v<T>) {
      for (const T x : t.span<T>()) v.push_back(static_cast<double>(x));
    }
  });
  if (!ok || t.dtype() == DT_COMPLEX64 || t.dtype() == DT_COMPLEX128) {
    return UnsupportedDtype("summary", t.dtype());
  }
  return v;
}

class ScalarSummaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    if (tags.shape() != values.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tags and values are not the same shape: ", tags.shape().DebugString(),
                       " != ", values.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(values));
    Summary s;
    for (int64_t i = 0; i < tags.NumElements(); ++i) {
      Summary::Value* value = s.add_value();
      value->set_tag(tags.data<std::string>()[i]);
      value->set_simple_value(static_cast<float>(v[i]));
    }
    return SetSummaryOutput(ctx, s);
  }
};

// ImageSummary(tag, tensor [batch, h, w, 1|3|4]): the first max_images
// images as PNGs (zlib's default compression, as TF), tagged tag/image/i
// (tag/image when max_images is 1). Floats are mapped to bytes as TF's
// kernel maps them: over the finite pixels, v * 255 / max when none is
// negative, else v * 127 / max|v| + 128 (truncated); a pixel with a
// non-finite channel takes bad_color.
class ImageSummaryOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("max_images", &max_images_));
    if (max_images_ >= (int64_t{1} << 31)) {
      return absl::InvalidArgumentError("max_images must be < 2^31");
    }
    const auto it = c.def().attr().find("bad_color");
    if (it == c.def().attr().end() || !it->second.has_tensor()) {  // the schema's default
      bad_color_ = Tensor(DT_UINT8, TensorShape({4}));
      std::copy_n(std::array<uint8_t, 4>{255, 0, 0, 255}.data(), 4, bad_color_.data<uint8_t>());
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(bad_color_, Tensor::FromProto(it->second.tensor()));
    if (bad_color_.dtype() != DT_UINT8) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad_color must be uint8, got ", DataTypeString(bad_color_.dtype())));
    }
    if (bad_color_.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad_color must be a vector, got shape ", bad_color_.shape().DebugString()));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& images = ctx->input(1);
    if (tag.NumElements() != 1) return absl::InvalidArgumentError("Tags must be a scalar");
    if (images.dims() != 4 ||
        (images.dim_size(3) != 1 && images.dim_size(3) != 3 && images.dim_size(3) != 4)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tensor must be 4-D with last dim 1, 3, or 4, not ", images.shape().DebugString()));
    }
    const int64_t batch = images.dim_size(0), h = images.dim_size(1), w = images.dim_size(2),
                  depth = images.dim_size(3);
    if (batch >= (int64_t{1} << 31) || h >= (int64_t{1} << 31) || w >= (int64_t{1} << 31) ||
        h * w >= (int64_t{1} << 29)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tensor too large for summary ", images.shape().DebugString()));
    }
    if (images.dtype() != DT_UINT8 && bad_color_.dim_size(0) < depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected depth <= bad_color.size, got depth = ", depth,
                       ", bad_color.size = ", bad_color_.dim_size(0)));
    }
    const std::string& base = tag.data<std::string>()[0];
    const int64_t n = std::min(max_images_, batch), pixels = h * w * depth;
    std::vector<uint8_t> bytes(pixels);
    Summary s;
    for (int64_t i = 0; i < n; ++i) {
      switch (images.dtype()) {
        case DT_UINT8:
          std::copy_n(images.data<uint8_t>() + i * pixels, pixels, bytes.data());
          break;
        case DT_DOUBLE:
          ToBytes(images.data<double>() + i * pixels, h * w, depth, bytes.data());
          break;
        case DT_FLOAT:
          ToBytes(images.data<float>() + i * pixels, h * w, depth, bytes.data());
          break;
        default:
          return UnsupportedDtype("ImageSummary", images.dtype());
      }
      Summary::Value* v = s.add_value();
      v->set_tag(max_images_ > 1 ? absl::StrCat(base, "/image/", i) : absl::StrCat(base, "/image"));
      Summary::Image* image = v->mutable_image();
      image->set_height(static_cast<int32_t>(h));
      image->set_width(static_cast<int32_t>(w));
      image->set_colorspace(static_cast<int32_t>(depth));
      TW_ASSIGN_OR_RETURN(*image->mutable_encoded_image_string(),
                          png::Encode(bytes.data(), h, w, static_cast<int>(depth), 8, -1));
    }
    return SetSummaryOutput(ctx, s);
  }

 private:
  template <typename T>
  void ToBytes(const T* values, int64_t hw, int64_t depth, uint8_t* out) const {
    const auto finite = [&](int64_t p) {
      for (int64_t c = 0; c < depth; ++c) {
        if (!std::isfinite(values[p * depth + c])) return false;
      }
      return true;
    };
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t p = 0; p < hw; ++p) {
      if (!finite(p)) continue;
      for (int64_t c = 0; c < depth; ++c) {
        lo = std::min(lo, static_cast<float>(values[p * depth + c]));
        hi = std::max(hi, static_cast<float>(values[p * depth + c]));
      }
    }
    constexpr float kZero = 1e-6f;
    T scale, offset;
    if (lo < 0) {
      const float max_abs = std::max(std::abs(lo), std::abs(hi));
      scale = static_cast<T>(max_abs < kZero ? 0.0f : 127.0f / max_abs);
      offset = static_cast<T>(128.0f);
    } else {
      scale = static_cast<T>(hi < kZero ? 0.0f : 255.0f / hi);
      offset = static_cast<T>(0.0f);
    }
    const uint8_t* bad = bad_color_.data<uint8_t>();
    for (int64_t p = 0; p < hw; ++p) {
      const bool ok = finite(p);
      for (int64_t c = 0; c < depth; ++c) {
        out[p * depth + c] =
            ok ? static_cast<uint8_t>(values[p * depth + c] * scale + offset) : bad[c];
      }
    }
  }

  int64_t max_images_ = 3;
  Tensor bad_color_;
};

// AudioSummaryV2(tag, tensor, sample_rate) and AudioSummary (sample_rate an
// attr): the first max_outputs clips of [batch, frames(, channels)] as
// 16-bit WAVs (core/wav.h) at the rate rounded to an integer (at least 1),
// tagged tag/audio/i (tag/audio when max_outputs is 1), as TF's kernel.
class AudioSummaryOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("max_outputs", &max_outputs_));
    if (max_outputs_ <= 0) return absl::InvalidArgumentError("max_outputs must be > 0");
    has_rate_attr_ = c.def().attr().count("sample_rate") > 0;
    if (has_rate_attr_) TW_RETURN_IF_ERROR(c.GetAttr("sample_rate", &rate_attr_));
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& clips = ctx->input(1);
    if (tag.NumElements() != 1) return absl::InvalidArgumentError("Tag must be a scalar");
    if (clips.dims() < 2 || clips.dims() > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tensor must be 3-D or 2-D, got: ", clips.shape().DebugString()));
    }
    float rate = rate_attr_;
    if (!has_rate_attr_) {
      const Tensor& r = ctx->input(2);
      if (r.NumElements() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("sample_rate must be a scalar, got shape ", r.shape().DebugString()));
      }
      rate = r.data<float>()[0];
    }
    if (!(rate > 0.0f)) return absl::InvalidArgumentError("sample_rate must be > 0");
    const int64_t batch = clips.dim_size(0), frames = clips.dim_size(1),
                  channels = clips.dims() == 2 ? 1 : clips.dim_size(2);
    const int64_t rounded = std::max<int64_t>(std::lrint(rate), 1);
    const std::string& base = tag.data<std::string>()[0];
    Summary s;
    for (int64_t i = 0; i < std::min(max_outputs_, batch); ++i) {
      Summary::Value* v = s.add_value();
      v->set_tag(max_outputs_ > 1 ? absl::StrCat(base, "/audio/", i)
                                  : absl::StrCat(base, "/audio"));
      Summary::Audio* audio = v->mutable_audio();
      audio->set_sample_rate(rate);
      audio->set_num_channels(channels);
      audio->set_length_frames(frames);
      audio->set_content_type("audio/wav");
      TW_ASSIGN_OR_RETURN(
          *audio->mutable_encoded_audio_string(),
          wav::Encode(clips.data<float>() + i * frames * channels, rounded, channels, frames));
    }
    return SetSummaryOutput(ctx, s);
  }

 private:
  int64_t max_outputs_ = 3;
  bool has_rate_attr_ = false;
  float rate_attr_ = 0;
};

// TF's default histogram buckets: +-1e-12 * 1.1^k up to 1e20, and 0.
const std::vector<double>& BucketLimits() {
  static const std::vector<double>* limits = [] {
    std::vector<double> pos;
    for (double v = 1e-12; v < 1e20; v *= 1.1) pos.push_back(v);
    pos.push_back(1e20);
    auto* all = new std::vector<double>;
    for (auto it = pos.rbegin(); it != pos.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), pos.begin(), pos.end());
    all->push_back(std::numeric_limits<double>::max());
    return all;
  }();
  return *limits;
}

class HistogramSummaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    if (tag.NumElements() != 1 || tag.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tags must be scalar, got ", tag.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(ctx->input(1)));
    const std::vector<double>& limits = BucketLimits();
    std::vector<double> counts(limits.size(), 0.0);
    HistogramProto h;
    double lo = std::numeric_limits<double>::max(), hi = -lo, sum = 0, sum_sq = 0;
    for (const double x : v) {
      if (!std::isfinite(x)) {
        return absl::InvalidArgumentError(
            absl::StrCat(std::isnan(x) ? "Nan" : "Infinity",
                         " in summary histogram for: ", *tag.data<std::string>()));
      }
      const size_t b = std::upper_bound(limits.begin(), limits.end(), x) - limits.begin();
      counts[std::min(b, limits.size() - 1)] += 1;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
      sum_sq += x * x;
    }
    h.set_min(v.empty() ? 0 : lo);
    h.set_max(v.empty() ? 0 : hi);
    h.set_num(static_cast<double>(v.size()));
    h.set_sum(sum);
    h.set_sum_squares(sum_sq);
    // TF's encoding without zero buckets: each non-empty bucket, and each
    // run of empty ones as one empty bucket ending where the run ends.
    for (size_t i = 0; i < limits.size();) {
      double end = limits[i];
      const double count = counts[i++];
      if (count == 0) {
        while (i < limits.size() && counts[i] == 0) end = limits[i++];
      }
      h.add_bucket_limit(end);
      h.add_bucket(count);
    }
    Summary s;
    Summary::Value* value = s.add_value();
    value->set_tag(*tag.data<std::string>());
    *value->mutable_histo() = std::move(h);
    return SetSummaryOutput(ctx, s);
  }
};

// TensorSummaryV2(tag, tensor, serialized_summary_metadata): one value
// holding the tensor (numbers as tensor_content, strings as string_val, as
// TF) under `tag` with the metadata (left empty when it does not parse, as
// TF ignores it); TensorSummary, TF 1's, names the node instead of a tag.
class TensorSummaryOp : public OpKernel {
 public:
  explicit TensorSummaryOp(bool v2) : v2_(v2) {}
  absl::Status Compute(KernelContext* ctx) override {
    Summary s;
    Summary::Value* value = s.add_value();
    if (!v2_) {
      value->set_node_name(ctx->name());
      *value->mutable_tensor() = AsProtoTensorContent(ctx->input(0));
      return SetSummaryOutput(ctx, s);
    }
    const Tensor& tag = ctx->input(0);
    const Tensor& metadata = ctx->input(2);
    if (tag.dims() != 0) return absl::InvalidArgumentError("tag must be scalar");
    if (metadata.dims() != 0) {
      return absl::InvalidArgumentError("serialized_summary_metadata must be scalar");
    }
    value->set_tag(*tag.data<std::string>());
    if (!value->mutable_metadata()->ParseFromString(*metadata.data<std::string>())) {
      value->mutable_metadata()->Clear();
    }
    *value->mutable_tensor() = AsProtoTensorContent(ctx->input(1));
    return SetSummaryOutput(ctx, s);
  }

 private:
  const bool v2_;
};

class MergeSummaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    Summary merged;
    std::set<std::string> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      for (const std::string& bytes : ctx->input(i).span<std::string>()) {
        Summary s;
        if (!s.ParseFromString(bytes)) {
          return absl::InvalidArgumentError(
              absl::StrCat("Could not parse one of the summary inputs (input ", i, ")"));
        }
        for (Summary::Value& value : *s.mutable_value()) {
          if (!value.tag().empty() && !tags.insert(value.tag()).second) {
            return absl::InvalidArgumentError(
                absl::StrCat("Duplicate tag ", value.tag(), " found in summary inputs"));
          }
          *merged.add_value() = std::move(value);
        }
      }
    }
    return SetSummaryOutput(ctx, merged);
  }
};

TW_REGISTER_KERNELS(logging_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<CheckNumericsV1Op, float, double>(cpu("CheckNumerics"), "T");
  RegisterTypedKernels<CheckNumericsV2Op, float, double>(cpu("CheckNumericsV2"), "T");
  RegisterKernel(cpu("Assert"), MakeFactory<AssertOp>());
  RegisterKernel(cpu("Print"), MakeFactory<PrintOp>());
  RegisterKernel(cpu("PrintV2"), MakeFactory<PrintV2Op>());
  RegisterKernel(cpu("ScalarSummary"), MakeFactory<ScalarSummaryOp>());
  RegisterKernel(cpu("HistogramSummary"), MakeFactory<HistogramSummaryOp>());
  RegisterKernel(cpu("MergeSummary"), MakeFactory<MergeSummaryOp>());
  RegisterKernel(cpu("TensorSummary"), [] { return std::make_unique<TensorSummaryOp>(false); });
  RegisterKernel(cpu("TensorSummaryV2"), [] { return std::make_unique<TensorSummaryOp>(true); });
  RegisterKernel(cpu("ImageSummary"), MakeFactory<ImageSummaryOp>());
  RegisterKernel(cpu("AudioSummary"), MakeFactory<AudioSummaryOp>());
  RegisterKernel(cpu("AudioSummaryV2"), MakeFactory<AudioSummaryOp>());
}

}  // namespace
}  // namespace towerflow
