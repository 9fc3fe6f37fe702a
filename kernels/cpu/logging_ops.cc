// Checks and summaries: CheckNumerics (and V2), Assert, Print, PrintV2 (TF 2's
// tf.print, after StringFormat), ScalarSummary, HistogramSummary and
// MergeSummary. Summaries are serialized `Summary`
// protos in a scalar string tensor, TensorBoard's format.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/type_dispatch.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
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
}

}  // namespace
}  // namespace towerflow
