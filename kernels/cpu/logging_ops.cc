// Checks and prints: CheckNumerics (and V2), Assert, Print and PrintV2 (TF
// 2's tf.print, after StringFormat). The summaries are in summary_ops.cc.
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

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

// Timestamp: now, in seconds since the epoch, from the microseconds as TF.
class TimestampOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<double>() = static_cast<double>(absl::ToUnixMicros(absl::Now())) / 1e6;
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(logging_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<CheckNumericsV1Op, float, double>(cpu("CheckNumerics"), "T");
  RegisterTypedKernels<CheckNumericsV2Op, float, double>(cpu("CheckNumericsV2"), "T");
  RegisterKernel(cpu("Assert"), MakeFactory<AssertOp>());
  RegisterKernel(cpu("Print"), MakeFactory<PrintOp>());
  RegisterKernel(cpu("PrintV2"), MakeFactory<PrintV2Op>());
  RegisterKernel(cpu("Timestamp"), MakeFactory<TimestampOp>());
}

}  // namespace
}  // namespace towerflow
