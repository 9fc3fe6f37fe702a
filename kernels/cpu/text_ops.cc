// The text kernels of TF 2's tf.strings and Keras's TextVectorization
// (ops/string_ops.cc), with TF's results and messages:
// - StringSplit splits at any byte of its delimiter (into bytes when it is
//   empty) and, as TF, gives an empty string no tokens; StringSplitV2 is
//   Python's str.split(sep, maxsplit), on runs of ASCII whitespace when sep
//   is empty. Both count the tokens before storing any, so the outputs are
//   allocated (and checked against the memory limits) before they are
//   filled.
// - The regular expressions are RE2's, as TF's: StaticRegexFullMatch and
//   RegexFullMatch match whole strings; StaticRegexReplace and RegexReplace
//   are RE2::GlobalReplace (or Replace), so a rewrite naming a group the
//   pattern lacks leaves the string unchanged, as in TF.
// - StringFormat splits its template at the placeholder as TF does
//   (absl::StrSplit; an empty placeholder splits between characters) and
//   shows each input as tf.print does (framework/tensor_print.h).
// - StringNGrams is TF's n-gram builder: per row and width, pad (capped at
//   width - 1) on both sides, one n-gram per window; a row too short for any
//   becomes one padded n-gram with preserve_short_sequences.
#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_print.h"
#include "re2/re2.h"

namespace towerflow {
namespace {

absl::StatusOr<std::unique_ptr<const RE2>> CompileRegex(const std::string& pattern) {
  auto re = std::make_unique<const RE2>(pattern, RE2::Quiet);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid pattern: ", pattern, ", error: ", re->error()));
  }
  return re;
}

// The scalar string input `i` of a kernel; `what` names it in the error.
absl::StatusOr<const std::string*> ScalarStringInput(KernelContext* ctx, int i,
                                                     absl::string_view what) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be scalar, but received ", t.shape().DebugString()));
  }
  return t.data<std::string>();
}

// A regular expression from a scalar input, compiled once per distinct
// pattern: the kernel keeps the last one (graphs feed the same pattern
// step after step).
class RegexCache {
 public:
  absl::StatusOr<std::shared_ptr<const RE2>> Get(const std::string& pattern) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (last_ != nullptr && last_->pattern() == pattern) return last_;
    }
    TW_ASSIGN_OR_RETURN(std::unique_ptr<const RE2> re, CompileRegex(pattern));
    std::shared_ptr<const RE2> shared = std::move(re);
    std::lock_guard<std::mutex> lock(mu_);
    last_ = shared;
    return shared;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const RE2> last_;
};

absl::Status FullMatch(const RE2& re, KernelContext* ctx) {
  const Tensor& in = ctx->input(0);
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
  const auto strings = in.span<std::string>();
  auto matches = out->span<bool>();
  for (size_t i = 0; i < strings.size(); ++i) matches[i] = RE2::FullMatch(strings[i], re);
  return absl::OkStatus();
}

absl::Status Replace(const RE2& re, const std::string& rewrite, bool global, KernelContext* ctx) {
  TW_ASSIGN_OR_RETURN(Tensor * out,
                      ctx->forward_input_or_allocate_output(0, 0, ctx->input(0).shape()));
  const auto in = ctx->input(0).span<std::string>();
  auto strings = out->span<std::string>();
  for (size_t i = 0; i < strings.size(); ++i) {
    if (strings.data() != in.data()) strings[i] = in[i];
    if (global) {
      RE2::GlobalReplace(&strings[i], re, rewrite);
    } else {
      RE2::Replace(&strings[i], re, rewrite);
    }
  }
  return absl::OkStatus();
}

class StaticRegexFullMatchOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string pattern;
    TW_RETURN_IF_ERROR(c.GetAttr("pattern", &pattern));
    TW_ASSIGN_OR_RETURN(re_, CompileRegex(pattern));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override { return FullMatch(*re_, ctx); }

 private:
  std::unique_ptr<const RE2> re_;
};

class RegexFullMatchOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string* pattern, ScalarStringInput(ctx, 1, "Pattern"));
    TW_ASSIGN_OR_RETURN(std::shared_ptr<const RE2> re, cache_.Get(*pattern));
    return FullMatch(*re, ctx);
  }

 private:
  RegexCache cache_;
};

class StaticRegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string pattern;
    TW_RETURN_IF_ERROR(c.GetAttr("pattern", &pattern));
    TW_RETURN_IF_ERROR(c.GetAttr("rewrite", &rewrite_));
    TW_RETURN_IF_ERROR(c.GetAttr("replace_global", &global_));
    TW_ASSIGN_OR_RETURN(re_, CompileRegex(pattern));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    return Replace(*re_, rewrite_, global_, ctx);
  }

 private:
  std::unique_ptr<const RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

class RegexReplaceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("replace_global", &global_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string* pattern, ScalarStringInput(ctx, 1, "Pattern"));
    TW_ASSIGN_OR_RETURN(std::shared_ptr<const RE2> re, cache_.Get(*pattern));
    TW_ASSIGN_OR_RETURN(const std::string* rewrite, ScalarStringInput(ctx, 2, "Rewrite"));
    return Replace(*re, *rewrite, global_, ctx);
  }

 private:
  RegexCache cache_;
  bool global_ = true;
};

// The splitting rules: each calls `emit(token)` for the tokens of `s`.
struct SplitAnyByte {  // StringSplit
  std::string delimiter;
  bool skip_empty = true;
  template <typename Emit>
  void operator()(absl::string_view s, Emit&& emit) const {
    if (s.empty()) return;
    if (delimiter.empty()) {
      for (size_t i = 0; i < s.size(); ++i) emit(s.substr(i, 1));
      return;
    }
    size_t start = 0;
    while (true) {
      const size_t end = s.find_first_of(delimiter, start);
      const absl::string_view token = s.substr(start, end == s.npos ? s.npos : end - start);
      if (!token.empty() || !skip_empty) emit(token);
      if (end == s.npos) return;
      start = end + 1;
    }
  }
};

struct SplitPython {  // StringSplitV2
  std::string sep;
  int64_t maxsplit = -1;
  template <typename Emit>
  void operator()(absl::string_view s, Emit&& emit) const {
    int64_t splits = 0;
    if (!sep.empty()) {
      size_t start = 0;
      while (maxsplit < 0 || splits < maxsplit) {
        const size_t end = s.find(sep, start);
        if (end == s.npos) break;
        emit(s.substr(start, end - start));
        start = end + sep.size();
        ++splits;
      }
      emit(s.substr(start));
      return;
    }
    size_t at = 0;
    const auto skip_space = [&] {
      while (at < s.size() && absl::ascii_isspace(static_cast<unsigned char>(s[at]))) ++at;
    };
    skip_space();
    while (at < s.size()) {
      if (maxsplit >= 0 && splits == maxsplit) {
        emit(s.substr(at));  // the rest, trailing whitespace and all
        return;
      }
      const size_t start = at;
      while (at < s.size() && !absl::ascii_isspace(static_cast<unsigned char>(s[at]))) ++at;
      emit(s.substr(start, at - start));
      ++splits;
      skip_space();
    }
  }
};

// The sparse [indices, values, dense_shape] of the tokens of a vector of
// strings, in two passes: count, allocate, fill.
template <typename Splitter>
absl::Status SplitStrings(const Splitter& split, KernelContext* ctx) {
  const Tensor& in = ctx->input(0);
  if (in.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be a vector, got shape: ", in.shape().DebugString()));
  }
  const auto strings = in.span<std::string>();
  int64_t total = 0, widest = 0;
  for (const std::string& s : strings) {
    int64_t count = 0;
    split(s, [&](absl::string_view) { ++count; });
    total += count;
    widest = std::max(widest, count);
  }
  TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({total, 2})));
  TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape({total})));
  TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2, TensorShape({2})));
  auto index = indices->span<int64_t>();
  auto tokens = values->span<std::string>();
  int64_t k = 0;
  for (int64_t row = 0; row < static_cast<int64_t>(strings.size()); ++row) {
    int64_t column = 0;
    split(strings[row], [&](absl::string_view token) {
      index[2 * k] = row;
      index[2 * k + 1] = column++;
      tokens[k++] = std::string(token);
    });
  }
  shape->span<int64_t>()[0] = static_cast<int64_t>(strings.size());
  shape->span<int64_t>()[1] = widest;
  return absl::OkStatus();
}

class StringSplitOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("skip_empty", &split_.skip_empty);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& delimiter = ctx->input(1);
    if (delimiter.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("delimiter must be a scalar, got shape: ", delimiter.shape().DebugString()));
    }
    SplitAnyByte split = split_;
    split.delimiter = *delimiter.data<std::string>();
    return SplitStrings(split, ctx);
  }

 private:
  SplitAnyByte split_;
};

class StringSplitV2Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("maxsplit", &split_.maxsplit);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& sep = ctx->input(1);
    if (sep.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("sep must be a scalar, got shape: ", sep.shape().DebugString()));
    }
    SplitPython split = split_;
    split.sep = *sep.data<std::string>();
    return SplitStrings(split, ctx);
  }

 private:
  SplitPython split_;
};

class StringStripOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const auto strings = in.span<std::string>();
    auto stripped = out->span<std::string>();
    for (size_t i = 0; i < strings.size(); ++i) {
      stripped[i] = std::string(absl::StripAsciiWhitespace(strings[i]));
    }
    return absl::OkStatus();
  }
};

class StringFormatOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string template_text, placeholder;
    TW_RETURN_IF_ERROR(c.GetAttr("template", &template_text));
    TW_RETURN_IF_ERROR(c.GetAttr("placeholder", &placeholder));
    TW_RETURN_IF_ERROR(c.GetAttr("summarize", &summarize_));
    pieces_ = absl::StrSplit(template_text, placeholder);
    const int64_t placeholders = static_cast<int64_t>(pieces_.size()) - 1;
    if (placeholders != c.num_inputs()) {
      return absl::InvalidArgumentError(
          absl::StrCat("num placeholders in template and num inputs must match: ", placeholders,
                       " vs. ", c.num_inputs()));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    std::string text = pieces_[0];
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&text, SummarizeForPrint(ctx->input(i), summarize_), pieces_[i + 1]);
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<std::string>() = std::move(text);
    return absl::OkStatus();
  }

 private:
  std::vector<std::string> pieces_;
  int64_t summarize_ = 3;
};

// StringNGrams over the rows data_splits cut data into.
template <typename S>
class StringNGramsOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("separator", &separator_));
    TW_RETURN_IF_ERROR(c.GetAttr("ngram_widths", &widths_));
    TW_RETURN_IF_ERROR(c.GetAttr("left_pad", &left_pad_));
    TW_RETURN_IF_ERROR(c.GetAttr("right_pad", &right_pad_));
    TW_RETURN_IF_ERROR(c.GetAttr("pad_width", &pad_width_));
    // TF reads both as C++ ints (its GetAttr refuses wider values); in
    // range, the n-gram arithmetic below cannot overflow.
    for (const int64_t v : widths_) TW_RETURN_IF_ERROR(CheckInt32("ngram_widths", v));
    TW_RETURN_IF_ERROR(CheckInt32("pad_width", pad_width_));
    return c.GetAttr("preserve_short_sequences", &preserve_short_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    for (const int64_t w : widths_) {
      if (w <= 0) return absl::InvalidArgumentError("ngram_widths must contain positive values");
    }
    const Tensor& data = ctx->input(0);
    const Tensor& splits_t = ctx->input(1);
    const std::string* words = data.data<std::string>();
    const S* splits = splits_t.data<S>();
    const int64_t n = data.NumElements(), num_splits = splits_t.NumElements();
    if (num_splits > 0) {
      if (splits[0] != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("First split value must be 0, got ", splits[0]));
      }
      for (int64_t i = 1; i < num_splits; ++i) {
        if (splits[i] < splits[i - 1] || splits[i] > n) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Invalid split value ", splits[i], ", must be in [", splits[i - 1], ", ", n, "]"));
        }
      }
      if (splits[num_splits - 1] != n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Last split value must be data size. Expected ", n, ", got ", splits[num_splits - 1]));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out_splits, ctx->allocate_output(1, splits_t.shape()));
    S* o = out_splits->data<S>();
    if (n == 0 || num_splits == 0) {  // TF's empty result: data's shape
      TW_RETURN_IF_ERROR(ctx->allocate_output(0, data.shape()).status());
      std::fill_n(o, num_splits, S(0));
      return absl::OkStatus();
    }
    // Count first (the output is allocated once, and its size checked).
    o[0] = 0;
    int64_t total = 0;
    __int128 parts = 0;
    for (int64_t i = 1; i < num_splits; ++i) {
      const int64_t length = static_cast<int64_t>(splits[i] - splits[i - 1]);
      int64_t count = 0;
      for (const int64_t w : widths_) {
        const int64_t c = NumNGrams(length, w);
        count += c;
        parts += static_cast<__int128>(c) * w;  // each n-gram joins w parts
      }
      if (preserve_short_ && length > 0 && count == 0) {
        count = 1;
        parts += length + 2 * static_cast<__int128>(std::max<int64_t>(pad_width_, 0));
      }
      if (parts > kMaxBytes) {
        return absl::InvalidArgumentError(absl::StrCat("StringNGrams would join more than ",
                                                       kMaxBytes,
                                                       " strings and pads (ngram_widths, "
                                                       "pad_width too wide)"));
      }
      total += count;
      if (total > std::numeric_limits<S>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "StringNGrams makes more n-grams than its splits type can count: ", total));
      }
      o[i] = static_cast<S>(total);
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({total})));
    std::string* grams = out->data<std::string>();
    int64_t bytes = 0;  // of all n-grams so far
    for (int64_t i = 0; i + 1 < num_splits; ++i) {
      const std::string* row = words + splits[i];
      const int64_t length = static_cast<int64_t>(splits[i + 1] - splits[i]);
      int64_t at = static_cast<int64_t>(o[i]);
      for (const int64_t w : widths_) {
        const int64_t count = NumNGrams(length, w);
        for (int64_t k = 0; k < count; ++k) {
          TW_ASSIGN_OR_RETURN(grams[at + k], Gram(row, k, count, w, &bytes));
        }
        at += count;
      }
      if (preserve_short_ && at == static_cast<int64_t>(o[i]) && length > 0) {
        if (pad_width_ < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Pad width should be >= 0 when preserve_short_sequences is True and ngram_widths "
              "are not provided, got ",
              pad_width_));
        }
        TW_ASSIGN_OR_RETURN(grams[at], Gram(row, 0, 1, length + 2 * pad_width_, &bytes));
      }
    }
    return absl::OkStatus();
  }

 private:
  // All n-grams together at most this many parts, and bytes (a GraphDef's
  // widths or pad_width could ask for strings of gigabytes each).
  static constexpr int64_t kMaxBytes = int64_t{1} << 32;

  static absl::Status CheckInt32(const char* name, int64_t v) {
    if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("Attr ", name, " has value ", v, " out of range for an int32"));
  }
  int64_t PadWidth(int64_t width) const {
    return std::min(pad_width_ < 0 ? width - 1 : pad_width_, width - 1);
  }
  int64_t NumNGrams(int64_t length, int64_t width) const {
    return std::max<int64_t>(0, length + 2 * PadWidth(width) - width + 1);
  }
  // The k-th of `count` n-grams of `width` over `row`; `bytes` counts the
  // bytes made so far.
  absl::StatusOr<std::string> Gram(const std::string* row, int64_t k, int64_t count, int64_t width,
                                   int64_t* bytes) const {
    const int64_t pad = PadWidth(width);
    const int64_t left = std::max<int64_t>(0, pad - k);
    const int64_t right = std::max<int64_t>(0, pad - (count - (k + 1)));
    const int64_t tokens = width - left - right;
    const int64_t first = left > 0 ? 0 : k - pad;
    int64_t size = left * static_cast<int64_t>(left_pad_.size()) +
                   right * static_cast<int64_t>(right_pad_.size()) +
                   (width - 1) * static_cast<int64_t>(separator_.size());
    for (int64_t t = 0; t < tokens; ++t) size += static_cast<int64_t>(row[first + t].size());
    *bytes += size;
    if (*bytes > kMaxBytes) {
      return absl::InvalidArgumentError(absl::StrCat("StringNGrams' n-grams would take more than ",
                                                     kMaxBytes, " bytes (pad_width ", pad_width_,
                                                     ")"));
    }
    std::string gram;
    gram.reserve(size);
    for (int64_t p = 0; p < width; ++p) {
      if (p > 0) gram += separator_;
      gram += p < left ? left_pad_ : p < left + tokens ? row[first + p - left] : right_pad_;
    }
    return gram;
  }

  std::string separator_, left_pad_, right_pad_;
  std::vector<int64_t> widths_;
  int64_t pad_width_ = -1;
  bool preserve_short_ = false;
};

}  // namespace

TW_REGISTER_KERNELS(text_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("StaticRegexFullMatch"), MakeFactory<StaticRegexFullMatchOp>());
  RegisterKernel(cpu("RegexFullMatch"), MakeFactory<RegexFullMatchOp>());
  RegisterKernel(cpu("StaticRegexReplace"), MakeFactory<StaticRegexReplaceOp>());
  RegisterKernel(cpu("RegexReplace"), MakeFactory<RegexReplaceOp>());
  RegisterKernel(cpu("StringSplit"), MakeFactory<StringSplitOp>());
  RegisterKernel(cpu("StringSplitV2"), MakeFactory<StringSplitV2Op>());
  RegisterKernel(cpu("StringStrip"), MakeFactory<StringStripOp>());
  RegisterKernel(cpu("StringFormat"), MakeFactory<StringFormatOp>());
  RegisterTypedKernels<StringNGramsOp, int32_t, int64_t>(cpu("StringNGrams"), "Tsplits");
}

}  // namespace towerflow
