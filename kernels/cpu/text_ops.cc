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
}

}  // namespace towerflow
