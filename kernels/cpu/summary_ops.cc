// Summaries, TensorBoard's format: the ops that compute a serialized
// `Summary` in a scalar string tensor (ScalarSummary, ImageSummary,
// AudioSummary/V2, HistogramSummary, TensorSummary/V2, MergeSummary), and
// TF 2's summary writers in graphs, whose Write* ops append the same
// summaries as events to a file of the writer's (SummaryWriter,
// CreateSummaryFileWriter, WriteSummary, WriteScalarSummary,
// WriteHistogramSummary, WriteImageSummary, WriteAudioSummary,
// WriteRawProtoSummary, WriteGraphSummary, ImportEvent,
// FlushSummaryWriter, CloseSummaryWriter).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/file_io.h"
#include "core/png.h"
#include "core/proto_io.h"
#include "core/record_io.h"
#include "core/type_dispatch.h"
#include "core/wav.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/cpu/resource_waits.h"
#include "kernels/cpu/tensor_content.h"
#include "kernels/kernel_util.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"
#include "proto/summary.pb.h"

namespace towerflow {
namespace {

absl::Status SetSummaryOutput(KernelContext* ctx, const Summary& s) {
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  *out->data<std::string>() = s.SerializeAsString();
  return absl::OkStatus();
}

// Values of a real-number (or bool) tensor as doubles.
absl::StatusOr<std::vector<double>> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  if (t.dtype() == DT_BOOL) {
    for (const bool x : t.span<bool>()) v.push_back(x ? 1.0 : 0.0);
    return v;
  }
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

// The string of a one-element string tensor; InvalidArgument naming `what`.
absl::StatusOr<std::string> ScalarString(const Tensor& t, const char* what) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return t.data<std::string>()[0];
}

// ---- The summaries.

// ImageSummary's bad_color: a uint8 vector.
absl::Status CheckBadColor(const Tensor& bad_color) {
  if (bad_color.dtype() != DT_UINT8) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad_color must be uint8, got ", DataTypeString(bad_color.dtype())));
  }
  if (bad_color.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad_color must be a vector, got shape ", bad_color.shape().DebugString()));
  }
  return absl::OkStatus();
}

// One image of floats as bytes, as TF's kernel maps them: over the finite
// pixels, v * 255 / max when none is negative, else v * 127 / max|v| + 128
// (truncated); a pixel with a non-finite channel takes bad_color.
template <typename T>
void ImageBytes(const T* values, int64_t hw, int64_t depth, const uint8_t* bad, uint8_t* out) {
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
  for (int64_t p = 0; p < hw; ++p) {
    const bool ok = finite(p);
    for (int64_t c = 0; c < depth; ++c) {
      out[p * depth + c] =
          ok ? static_cast<uint8_t>(values[p * depth + c] * scale + offset) : bad[c];
    }
  }
}

// ImageSummary(tag, tensor [batch, h, w, 1|3|4]): the first max_images
// images as PNGs (zlib's default compression, as TF), tagged tag/image/i
// (tag/image when max_images is 1), floats mapped by ImageBytes.
absl::StatusOr<Summary> ImageSummaryOf(const Tensor& tag, const Tensor& images,
                                       const Tensor& bad_color, int64_t max_images) {
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
  if (images.dtype() != DT_UINT8 && bad_color.dim_size(0) < depth) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected depth <= bad_color.size, got depth = ", depth,
                     ", bad_color.size = ", bad_color.dim_size(0)));
  }
  const std::string& base = tag.data<std::string>()[0];
  const int64_t n = std::min(max_images, batch), pixels = h * w * depth;
  const uint8_t* bad = bad_color.data<uint8_t>();
  std::vector<uint8_t> bytes(pixels);
  Summary s;
  for (int64_t i = 0; i < n; ++i) {
    switch (images.dtype()) {
      case DT_UINT8:
        std::copy_n(images.data<uint8_t>() + i * pixels, pixels, bytes.data());
        break;
      case DT_DOUBLE:
        ImageBytes(images.data<double>() + i * pixels, h * w, depth, bad, bytes.data());
        break;
      case DT_FLOAT:
        ImageBytes(images.data<float>() + i * pixels, h * w, depth, bad, bytes.data());
        break;
      default:
        return UnsupportedDtype("ImageSummary", images.dtype());
    }
    Summary::Value* v = s.add_value();
    v->set_tag(max_images > 1 ? absl::StrCat(base, "/image/", i) : absl::StrCat(base, "/image"));
    Summary::Image* image = v->mutable_image();
    image->set_height(static_cast<int32_t>(h));
    image->set_width(static_cast<int32_t>(w));
    image->set_colorspace(static_cast<int32_t>(depth));
    TW_ASSIGN_OR_RETURN(*image->mutable_encoded_image_string(),
                        png::Encode(bytes.data(), h, w, static_cast<int>(depth), 8, -1));
  }
  return s;
}

// AudioSummary: the first max_outputs clips of [batch, frames(, channels)]
// as 16-bit WAVs (core/wav.h) at the rate rounded to an integer (at least
// 1), tagged tag/audio/i (tag/audio when max_outputs is 1), as TF's kernel.
absl::StatusOr<Summary> AudioSummaryOf(const Tensor& tag, const Tensor& clips, float rate,
                                       int64_t max_outputs) {
  if (tag.NumElements() != 1) return absl::InvalidArgumentError("Tag must be a scalar");
  if (clips.dims() < 2 || clips.dims() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor must be 3-D or 2-D, got: ", clips.shape().DebugString()));
  }
  if (!(rate > 0.0f)) return absl::InvalidArgumentError("sample_rate must be > 0");
  const int64_t batch = clips.dim_size(0), frames = clips.dim_size(1),
                channels = clips.dims() == 2 ? 1 : clips.dim_size(2);
  const int64_t rounded = std::max<int64_t>(std::lrint(rate), 1);
  const std::string& base = tag.data<std::string>()[0];
  Summary s;
  for (int64_t i = 0; i < std::min(max_outputs, batch); ++i) {
    Summary::Value* v = s.add_value();
    v->set_tag(max_outputs > 1 ? absl::StrCat(base, "/audio/", i) : absl::StrCat(base, "/audio"));
    Summary::Audio* audio = v->mutable_audio();
    audio->set_sample_rate(rate);
    audio->set_num_channels(channels);
    audio->set_length_frames(frames);
    audio->set_content_type("audio/wav");
    TW_ASSIGN_OR_RETURN(
        *audio->mutable_encoded_audio_string(),
        wav::Encode(clips.data<float>() + i * frames * channels, rounded, channels, frames));
  }
  return s;
}

// AudioSummary's sample_rate input: one float.
absl::StatusOr<float> SampleRate(const Tensor& r) {
  if (r.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_rate must be a scalar, got shape ", r.shape().DebugString()));
  }
  return r.data<float>()[0];
}

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

absl::StatusOr<Summary> HistogramSummaryOf(const Tensor& tag, const Tensor& values) {
  if (tag.NumElements() != 1 || tag.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tags must be scalar, got ", tag.shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(values));
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
  return s;
}

// TensorSummaryV2 and WriteSummary: one value holding the tensor (numbers
// as tensor_content, strings as string_val, as TF) under `tag` with the
// metadata (left empty when it does not parse, as TF ignores it).
absl::StatusOr<Summary> TensorSummaryOf(const Tensor& tag, const Tensor& tensor,
                                        const Tensor& metadata) {
  if (tag.dims() != 0) return absl::InvalidArgumentError("tag must be scalar");
  if (metadata.dims() != 0) {
    return absl::InvalidArgumentError("serialized_summary_metadata must be scalar");
  }
  Summary s;
  Summary::Value* value = s.add_value();
  value->set_tag(*tag.data<std::string>());
  if (!value->mutable_metadata()->ParseFromString(*metadata.data<std::string>())) {
    value->mutable_metadata()->Clear();
  }
  *value->mutable_tensor() = AsProtoTensorContent(tensor);
  return s;
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

// ImageSummary: bad_color in an attr (WriteImageSummary's is an input).
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
    return CheckBadColor(bad_color_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Summary s,
                        ImageSummaryOf(ctx->input(0), ctx->input(1), bad_color_, max_images_));
    return SetSummaryOutput(ctx, s);
  }

 private:
  int64_t max_images_ = 3;
  Tensor bad_color_;
};

// AudioSummaryV2(tag, tensor, sample_rate) and AudioSummary (sample_rate an
// attr).
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
    float rate = rate_attr_;
    if (!has_rate_attr_) {
      TW_ASSIGN_OR_RETURN(rate, SampleRate(ctx->input(2)));
    }
    TW_ASSIGN_OR_RETURN(Summary s,
                        AudioSummaryOf(ctx->input(0), ctx->input(1), rate, max_outputs_));
    return SetSummaryOutput(ctx, s);
  }

 private:
  int64_t max_outputs_ = 3;
  bool has_rate_attr_ = false;
  float rate_attr_ = 0;
};

class HistogramSummaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Summary s, HistogramSummaryOf(ctx->input(0), ctx->input(1)));
    return SetSummaryOutput(ctx, s);
  }
};

// TensorSummaryV2(tag, tensor, serialized_summary_metadata); TensorSummary,
// TF 1's, names the node instead of a tag.
class TensorSummaryOp : public OpKernel {
 public:
  explicit TensorSummaryOp(bool v2) : v2_(v2) {}
  absl::Status Compute(KernelContext* ctx) override {
    if (v2_) {
      TW_ASSIGN_OR_RETURN(Summary s, TensorSummaryOf(ctx->input(0), ctx->input(1), ctx->input(2)));
      return SetSummaryOutput(ctx, s);
    }
    Summary s;
    Summary::Value* value = s.add_value();
    value->set_node_name(ctx->name());
    *value->mutable_tensor() = AsProtoTensorContent(ctx->input(0));
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

// ---- The writers.

double NowSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

// TF's SummaryFileWriter: events queue in memory and go to the file when
// more than max_queue wait or flush_millis have passed since the last
// flush (checked at each write, as TF), at a flush, and at the close.
class SummaryFileWriter : public ResourceBase {
 public:
  static absl::StatusOr<std::shared_ptr<SummaryFileWriter>> Open(const std::string& logdir,
                                                                 int32_t max_queue,
                                                                 int32_t flush_millis,
                                                                 const std::string& suffix) {
    TW_RETURN_IF_ERROR(CreateDirectories(logdir));
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    static std::atomic<int64_t> files{0};
    const std::string path =
        absl::StrCat(logdir, "/events.out.tfevents.", absl::ToUnixSeconds(absl::Now()), ".", host,
                     ".", getpid(), ".", files.fetch_add(1), suffix);
    TW_ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> records, RecordWriter::Open(path));
    auto writer = std::shared_ptr<SummaryFileWriter>(
        new SummaryFileWriter(std::move(records), path, max_queue, flush_millis));
    Event version;
    version.set_wall_time(NowSeconds());
    version.set_file_version("brain.Event:2");
    version.mutable_source_metadata()->set_writer("towerflow");
    TW_RETURN_IF_ERROR(writer->records_->WriteRecord(SerializeDeterministic(version)));
    TW_RETURN_IF_ERROR(writer->records_->Flush());
    return writer;
  }

  // What is still queued is written, as TF's writer does when it goes.
  ~SummaryFileWriter() override {
    absl::MutexLock lock(&mu_);
    (void)FlushLocked();
  }

  std::string DebugString() const override { return absl::StrCat("summary writer ", path_); }

  // Stamps `event` with the time and `step`, and queues it.
  absl::Status Write(int64_t step, Event event) {
    event.set_wall_time(NowSeconds());
    event.set_step(step);
    return Queue(event);
  }
  // Queues `event` as it is (ImportEvent's).
  absl::Status Queue(const Event& event) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(SerializeDeterministic(event));
    const absl::Time now = absl::Now();
    if (static_cast<int64_t>(queue_.size()) > max_queue_ ||
        now - last_flush_ > absl::Milliseconds(flush_millis_)) {
      return FlushLocked();
    }
    return absl::OkStatus();
  }
  absl::Status WriteSummary(int64_t step, Summary summary) {
    Event event;
    *event.mutable_summary() = std::move(summary);
    return Write(step, std::move(event));
  }
  absl::Status Flush() {
    absl::MutexLock lock(&mu_);
    return FlushLocked();
  }
  absl::Status Close() {
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(FlushLocked());
    return records_->Close();
  }

 private:
  SummaryFileWriter(std::unique_ptr<RecordWriter> records, std::string path, int32_t max_queue,
                    int32_t flush_millis)
      : records_(std::move(records)),
        path_(std::move(path)),
        max_queue_(max_queue),
        flush_millis_(flush_millis) {}

  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (; !queue_.empty(); queue_.pop_front()) {
      TW_RETURN_IF_ERROR(records_->WriteRecord(queue_.front()));
    }
    last_flush_ = absl::Now();
    return records_->Flush();
  }

  absl::Mutex mu_;
  const std::unique_ptr<RecordWriter> records_;
  const std::string path_;
  const int64_t max_queue_;
  const int64_t flush_millis_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_) = absl::Now();
};

// SummaryWriter: the handle; the writer exists once CreateSummaryFileWriter
// has run.
class SummaryWriterOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, "SummaryWriter"));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override { return ctx->set_output(0, handle_); }

 private:
  Tensor handle_;
};

class CreateSummaryFileWriterOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    TW_ASSIGN_OR_RETURN(const std::string logdir, ScalarString(ctx->input(1), "logdir"));
    TW_ASSIGN_OR_RETURN(const int64_t max_queue, ScalarInput(ctx, 2, DT_INT32, "max_queue"));
    TW_ASSIGN_OR_RETURN(const int64_t flush_millis, ScalarInput(ctx, 3, DT_INT32, "flush_millis"));
    TW_ASSIGN_OR_RETURN(const std::string suffix, ScalarString(ctx->input(4), "filename_suffix"));
    return ctx->resource_manager()
        ->LookupOrCreate<SummaryFileWriter>(h->container, h->name,
                                            [&] {
                                              return SummaryFileWriter::Open(
                                                  logdir, static_cast<int32_t>(max_queue),
                                                  static_cast<int32_t>(flush_millis), suffix);
                                            })
        .status();
  }
};

// What each Write* op writes, from its inputs after (writer, step).
enum class WriteKind { kTensor, kScalar, kHistogram, kImage, kAudio, kRawProto, kGraph, kEvent };

class WriteOp : public OpKernel {
 public:
  explicit WriteOp(WriteKind kind) : kind_(kind) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (kind_ == WriteKind::kImage) TW_RETURN_IF_ERROR(c.GetAttr("max_images", &max_));
    if (kind_ == WriteKind::kAudio) TW_RETURN_IF_ERROR(c.GetAttr("max_outputs", &max_));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<SummaryFileWriter> writer,
                        LookupInput<SummaryFileWriter>(ctx, "summary writer"));
    if (kind_ == WriteKind::kEvent) {
      TW_ASSIGN_OR_RETURN(const std::string bytes, ScalarString(ctx->input(1), "event"));
      Event event;
      if (!event.ParseFromString(bytes)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Bad Event proto of ", bytes.size(), " bytes"));
      }
      return writer->Queue(event);
    }
    TW_ASSIGN_OR_RETURN(const int64_t step, ScalarInput(ctx, 1, DT_INT64, "step"));
    switch (kind_) {
      case WriteKind::kTensor: {
        TW_ASSIGN_OR_RETURN(Summary s,
                            TensorSummaryOf(ctx->input(3), ctx->input(2), ctx->input(4)));
        return writer->WriteSummary(step, std::move(s));
      }
      case WriteKind::kScalar: {
        TW_ASSIGN_OR_RETURN(const std::string tag, ScalarString(ctx->input(2), "tag"));
        const Tensor& value = ctx->input(3);
        if (value.NumElements() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("value must be a scalar, got shape ", value.shape().DebugString()));
        }
        TW_ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(value));
        Summary s;
        Summary::Value* out = s.add_value();
        out->set_tag(tag);
        out->set_simple_value(static_cast<float>(v[0]));
        return writer->WriteSummary(step, std::move(s));
      }
      case WriteKind::kHistogram: {
        TW_ASSIGN_OR_RETURN(Summary s, HistogramSummaryOf(ctx->input(2), ctx->input(3)));
        return writer->WriteSummary(step, std::move(s));
      }
      case WriteKind::kImage: {
        TW_RETURN_IF_ERROR(CheckBadColor(ctx->input(4)));
        TW_ASSIGN_OR_RETURN(Summary s,
                            ImageSummaryOf(ctx->input(2), ctx->input(3), ctx->input(4), max_));
        return writer->WriteSummary(step, std::move(s));
      }
      case WriteKind::kAudio: {
        TW_ASSIGN_OR_RETURN(const float rate, SampleRate(ctx->input(4)));
        TW_ASSIGN_OR_RETURN(Summary s, AudioSummaryOf(ctx->input(2), ctx->input(3), rate, max_));
        return writer->WriteSummary(step, std::move(s));
      }
      case WriteKind::kRawProto: {
        for (const std::string& bytes : ctx->input(2).span<std::string>()) {
          Summary s;
          if (!s.ParseFromString(bytes)) {
            return absl::InvalidArgumentError(
                absl::StrCat("Bad Summary proto of ", bytes.size(), " bytes"));
          }
          TW_RETURN_IF_ERROR(writer->WriteSummary(step, std::move(s)));
        }
        return absl::OkStatus();
      }
      case WriteKind::kGraph: {
        TW_ASSIGN_OR_RETURN(const std::string bytes, ScalarString(ctx->input(2), "graph"));
        GraphDef graph;
        if (!graph.ParseFromString(bytes)) {
          return absl::InvalidArgumentError(
              absl::StrCat("Bad GraphDef proto of ", bytes.size(), " bytes"));
        }
        Event event;
        event.set_graph_def(bytes);
        return writer->Write(step, std::move(event));
      }
      case WriteKind::kEvent:
        break;
    }
    return absl::InternalError("unknown summary write");
  }

 private:
  const WriteKind kind_;
  int64_t max_ = 3;
};

// FlushSummaryWriter; CloseSummaryWriter, which also deletes the writer
// (a later write is NotFound, as in TF).
class FlushOrCloseOp : public OpKernel {
 public:
  explicit FlushOrCloseOp(bool close) : close_(close) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<SummaryFileWriter> writer,
                        LookupInput<SummaryFileWriter>(ctx, "summary writer"));
    if (!close_) return writer->Flush();
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    TW_RETURN_IF_ERROR(ctx->resource_manager()->Delete<SummaryFileWriter>(h->container, h->name));
    return writer->Close();
  }

 private:
  const bool close_;
};

TW_REGISTER_KERNELS(summary_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("ScalarSummary"), MakeFactory<ScalarSummaryOp>());
  RegisterKernel(cpu("HistogramSummary"), MakeFactory<HistogramSummaryOp>());
  RegisterKernel(cpu("MergeSummary"), MakeFactory<MergeSummaryOp>());
  RegisterKernel(cpu("TensorSummary"), [] { return std::make_unique<TensorSummaryOp>(false); });
  RegisterKernel(cpu("TensorSummaryV2"), [] { return std::make_unique<TensorSummaryOp>(true); });
  RegisterKernel(cpu("ImageSummary"), MakeFactory<ImageSummaryOp>());
  RegisterKernel(cpu("AudioSummary"), MakeFactory<AudioSummaryOp>());
  RegisterKernel(cpu("AudioSummaryV2"), MakeFactory<AudioSummaryOp>());
  RegisterKernel(cpu("SummaryWriter"), MakeFactory<SummaryWriterOp>());
  RegisterKernel(cpu("CreateSummaryFileWriter"), MakeFactory<CreateSummaryFileWriterOp>());
  const std::pair<const char*, WriteKind> writes[] = {
      {"WriteSummary", WriteKind::kTensor},
      {"WriteScalarSummary", WriteKind::kScalar},
      {"WriteHistogramSummary", WriteKind::kHistogram},
      {"WriteImageSummary", WriteKind::kImage},
      {"WriteAudioSummary", WriteKind::kAudio},
      {"WriteRawProtoSummary", WriteKind::kRawProto},
      {"WriteGraphSummary", WriteKind::kGraph},
      {"ImportEvent", WriteKind::kEvent},
  };
  for (const auto& [op, kind] : writes) {
    const WriteKind k = kind;
    RegisterKernel(cpu(op), [k] { return std::make_unique<WriteOp>(k); });
  }
  RegisterKernel(cpu("FlushSummaryWriter"), [] { return std::make_unique<FlushOrCloseOp>(false); });
  RegisterKernel(cpu("CloseSummaryWriter"), [] { return std::make_unique<FlushOrCloseOp>(true); });
}

}  // namespace
}  // namespace towerflow
