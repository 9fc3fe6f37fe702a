// tfdbg's ops (TF's debug_ops): Copy and CopyHost (deep copies),
// DebugIdentity and DebugIdentityV2 (the input, watched), DebugNanCount,
// DebugNumericSummary and DebugNumericSummaryV2 (summaries of the input),
// with TF's values, layouts and messages. Every element is read as a double,
// as TF's kernels read them; bools count as 0 and 1.
//
// Publishing to debug_urls (tfdbg's dump files, gRPC) is not supported: a
// node that names any is refused when its kernel is made, rather than run
// without writing what it was asked to.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// Calls f(double) on each element of `t`; InvalidArgument for a dtype that
// is not a real number or bool.
template <typename F>
absl::Status ForEachValue(const Tensor& t, absl::string_view op, F&& f) {
  bool real = false;
  VisitNumberType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, complex64> && !std::is_same_v<T, complex128>) {
      real = true;
      const T* data = t.data<T>();
      for (int64_t i = 0, n = t.NumElements(); i < n; ++i) {
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
          f(static_cast<double>(static_cast<float>(data[i])));
        } else {
          f(static_cast<double>(data[i]));
        }
      }
    }
  });
  if (!real) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, " takes real numbers or bools, not ", DataTypeString(t.dtype())));
  }
  return absl::OkStatus();
}

absl::Status NoDebugUrls(const KernelConstruction& c) {
  std::vector<std::string> urls;
  TW_RETURN_IF_ERROR(c.GetAttr("debug_urls", &urls));
  if (urls.empty()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      c.def().op(), " '", c.def().name(), "': publishing to debug_urls (",
      absl::StrJoin(urls, ", "), ") is not supported; without them the op computes its output"));
}

// The attrs of TF 1's debug ops: tensor_name "node" or "node:slot" (TF's
// check), and no debug_urls.
absl::Status CheckWatch(const KernelConstruction& c) {
  std::string tensor_name;
  TW_RETURN_IF_ERROR(c.GetAttr("tensor_name", &tensor_name));
  const std::vector<absl::string_view> items = absl::StrSplit(tensor_name, ':', absl::SkipEmpty());
  if (items.size() != 1 && items.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Failed to parse tensor name: \"", tensor_name, "\""));
  }
  int32_t slot = 0;
  if (items.size() == 2 && !absl::SimpleAtoi(items[1], &slot)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid string value for output_slot: \"", items[1], "\""));
  }
  return NoDebugUrls(c);
}

// Copy, CopyHost: the input's elements in a buffer of their own; a
// variant or resource tensor, which has no bytes to copy, is passed on (as
// TF's).
class CopyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dtype() == DT_VARIANT || in.dtype() == DT_RESOURCE) return ctx->set_output(0, in);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    if (in.dtype() == DT_STRING) {
      std::copy_n(in.data<std::string>(), in.NumElements(), out->data<std::string>());
    } else {
      std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
    }
    return absl::OkStatus();
  }
};

class DebugIdentityOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.def().op() == "DebugIdentityV2" ? CheckV2Urls(c) : CheckWatch(c);
  }
  absl::Status Compute(KernelContext* ctx) override { return ctx->set_output(0, ctx->input(0)); }

 private:
  // TF's message for a URL that is not a file's; files are not written.
  static absl::Status CheckV2Urls(const KernelConstruction& c) {
    std::vector<std::string> urls;
    TW_RETURN_IF_ERROR(c.GetAttr("debug_urls", &urls));
    for (const std::string& url : urls) {
      if (!absl::StartsWith(url, "file://")) {
        return absl::InvalidArgumentError(absl::StrCat("Unsupported debug URL schema in: ", url));
      }
    }
    return NoDebugUrls(c);
  }
};

class DebugNanCountOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return CheckWatch(c); }
  absl::Status Compute(KernelContext* ctx) override {
    int64_t nans = 0;
    TW_RETURN_IF_ERROR(
        ForEachValue(ctx->input(0), "DebugNanCount", [&](double x) { nans += std::isnan(x); }));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({1})));
    *out->data<int64_t>() = nans;
    return absl::OkStatus();
  }
};

// What tfdbg counts of a tensor: finite values by sign (an infinity counted
// as such; with custom bounds, finite values at or past them too), NaNs,
// and the finite values' extremes, mean and (population) variance.
struct Health {
  int64_t nan = 0, neg_inf = 0, pos_inf = 0, neg = 0, zero = 0, pos = 0, finite = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;

  void Add(double x, double lower = -std::numeric_limits<double>::infinity(),
           double upper = std::numeric_limits<double>::infinity()) {
    if (std::isnan(x)) {
      ++nan;
      return;
    }
    if (std::isinf(x)) {
      ++(x < 0 ? neg_inf : pos_inf);
      return;
    }
    if (!std::isinf(lower) && x <= lower) {
      ++neg_inf;
    } else if (!std::isinf(upper) && x >= upper) {
      ++pos_inf;
    } else {
      ++(x < 0 ? neg : x > 0 ? pos : zero);
    }
    min = std::min(min, x);
    max = std::max(max, x);
    sum += x;
    ++finite;
  }
};

class DebugNumericSummaryOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("lower_bound", &lower_));
    TW_RETURN_IF_ERROR(c.GetAttr("upper_bound", &upper_));
    return CheckWatch(c);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Health h;
    TW_RETURN_IF_ERROR(
        ForEachValue(in, "DebugNumericSummary", [&](double x) { h.Add(x, lower_, upper_); }));
    double mean = std::numeric_limits<double>::quiet_NaN(), variance = mean;
    if (h.finite > 0) {
      mean = h.sum / static_cast<double>(h.finite);
      variance = 0;
      TW_RETURN_IF_ERROR(ForEachValue(in, "DebugNumericSummary", [&](double x) {
        if (std::isfinite(x)) variance += (x - mean) * (x - mean);
      }));
      variance /= static_cast<double>(h.finite);
    }
    const int rank = in.dims();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({14 + rank})));
    double* o = out->data<double>();
    const double head[] = {1,
                           static_cast<double>(in.NumElements()),
                           static_cast<double>(h.nan),
                           static_cast<double>(h.neg_inf),
                           static_cast<double>(h.neg),
                           static_cast<double>(h.zero),
                           static_cast<double>(h.pos),
                           static_cast<double>(h.pos_inf),
                           h.min,
                           h.max,
                           mean,
                           variance,
                           static_cast<double>(in.dtype()),
                           static_cast<double>(rank)};
    std::copy(std::begin(head), std::end(head), o);
    for (int d = 0; d < rank; ++d) o[14 + d] = static_cast<double>(in.dim_size(d));
    return absl::OkStatus();
  }

 private:
  float lower_ = 0, upper_ = 0;
};

// tfdbg 2's TensorDebugMode values that have a CPU kernel in TF.
enum DebugMode {
  kCurtHealth = 2,
  kConciseHealth = 3,
  kFullHealth = 4,
  kShape = 5,
  kReduceInfNanThreeSlots = 8,
};

class DebugNumericSummaryV2Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("tensor_debug_mode", &mode_));
    TW_RETURN_IF_ERROR(c.GetAttr("tensor_id", &tensor_id_));
    TW_RETURN_IF_ERROR(c.GetAttr("output_dtype", &output_dtype_));
    if (mode_ != kCurtHealth && mode_ != kConciseHealth && mode_ != kFullHealth &&
        mode_ != kShape && mode_ != kReduceInfNanThreeSlots) {
      return absl::UnimplementedError(absl::StrCat("Unimplemented tensor debug mode: ", mode_));
    }
    constexpr int64_t kMaxFloatId = int64_t{1} << 24;  // exact in a float
    if (output_dtype_ == DT_FLOAT && tensor_id_ > kMaxFloatId) {
      return absl::InvalidArgumentError(
          absl::StrCat("DebugNumericSummaryV2Op requires tensor_id to be less than or equal to "
                       "(2^24). Given tensor_id:",
                       tensor_id_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Health h;
    TW_RETURN_IF_ERROR(ForEachValue(in, "DebugNumericSummaryV2", [&](double x) { h.Add(x); }));
    const double id = static_cast<double>(tensor_id_);
    const double size = static_cast<double>(in.NumElements());
    const double dtype = static_cast<double>(in.dtype()), rank = in.dims();
    const auto d = [](int64_t n) { return static_cast<double>(n); };
    std::vector<double> v;
    switch (mode_) {
      case kCurtHealth:
        v = {id, h.nan + h.neg_inf + h.pos_inf > 0 ? 1.0 : 0.0};
        break;
      case kConciseHealth:
        v = {id, size, d(h.neg_inf), d(h.pos_inf), d(h.nan)};
        break;
      case kFullHealth:
        v = {id,           -1,       dtype,    rank,      size,    d(h.neg_inf),
             d(h.pos_inf), d(h.nan), d(h.neg), d(h.zero), d(h.pos)};
        break;
      case kShape: {
        // The last six dimensions, zero-padded.
        v = {id, dtype, rank, size, 0, 0, 0, 0, 0, 0};
        const int first = std::max(0, in.dims() - 6);
        for (int i = first; i < in.dims(); ++i) v[4 + i - first] = d(in.dim_size(i));
        break;
      }
      default: {  // kReduceInfNanThreeSlots
        constexpr double kInf = std::numeric_limits<double>::infinity();
        v = {h.neg_inf > 0 ? -kInf : 0.0, h.pos_inf > 0 ? kInf : 0.0,
             h.nan > 0 ? std::numeric_limits<double>::quiet_NaN() : 0.0};
        break;
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({static_cast<int64_t>(v.size())})));
    if (output_dtype_ == DT_DOUBLE) {
      std::copy(v.begin(), v.end(), out->data<double>());
    } else {
      std::transform(v.begin(), v.end(), out->data<float>(),
                     [](double x) { return static_cast<float>(x); });
    }
    return absl::OkStatus();
  }

 private:
  int64_t mode_ = -1, tensor_id_ = -1;
  DataType output_dtype_ = DT_FLOAT;
};

TW_REGISTER_KERNELS(debug_ops) {
  // One kernel for every dtype (no type constraint): the 16-bit floats are
  // read as themselves, not widened by a derived kernel.
  RegisterKernel(KernelDefBuilder("Copy").Device(kDeviceCpu), MakeFactory<CopyOp>());
  RegisterKernel(KernelDefBuilder("CopyHost").Device(kDeviceCpu), MakeFactory<CopyOp>());
  RegisterKernel(KernelDefBuilder("DebugIdentity").Device(kDeviceCpu),
                 MakeFactory<DebugIdentityOp>());
  RegisterKernel(KernelDefBuilder("DebugIdentityV2").Device(kDeviceCpu),
                 MakeFactory<DebugIdentityOp>());
  RegisterKernel(KernelDefBuilder("DebugNanCount").Device(kDeviceCpu),
                 MakeFactory<DebugNanCountOp>());
  RegisterKernel(KernelDefBuilder("DebugNumericSummary").Device(kDeviceCpu),
                 MakeFactory<DebugNumericSummaryOp>());
  RegisterKernel(KernelDefBuilder("DebugNumericSummaryV2").Device(kDeviceCpu),
                 MakeFactory<DebugNumericSummaryV2Op>());
}

}  // namespace
}  // namespace towerflow
