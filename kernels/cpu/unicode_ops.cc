// The Unicode kernels (ops/string_ops.cc) on ICU, as TF's: UnicodeDecode
// and UnicodeDecodeWithOffsets (any encoding ICU has a converter for),
// UnicodeEncode and UnicodeTranscode (to UTF-8, UTF-16-BE or UTF-32-BE),
// UnicodeScript.
//
// Note [Malformed input]
// Decoding reads one code point at a time with ICU's ucnv_getNextUChar; a
// malformed sequence (ICU takes the longest prefix that could have begun
// a character, so "\xe2\x82x" is one error then "x") is flagged through
// ICU's callback. Then, per the errors attr: "replace" emits
// replacement_char, "ignore" emits nothing, "strict" fails the step with
// TF's "Invalid formatting on input string". replace_control_characters
// treats U+0000..U+001F as malformed too. Encoding treats a code point
// that is negative, past U+10FFFF or a surrogate the same way.
#include <unicode/uchar.h>
#include <unicode/ucnv.h>
#include <unicode/ucnv_err.h>
#include <unicode/uscript.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

constexpr absl::string_view kMalformed = "Invalid formatting on input string";

struct ErrorPolicy {
  UChar32 replacement = 0xFFFD;
  bool ignore = false;  // else replace
  bool strict = false;
  bool replace_control = false;
};

absl::StatusOr<ErrorPolicy> GetErrorPolicy(const KernelConstruction& c) {
  ErrorPolicy policy;
  std::string errors;
  TW_RETURN_IF_ERROR(c.GetAttr("errors", &errors));
  policy.ignore = errors == "ignore";
  policy.strict = errors == "strict";
  int64_t replacement = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("replacement_char", &replacement));
  if (replacement < UCHAR_MIN_VALUE || replacement > UCHAR_MAX_VALUE) {
    return absl::InvalidArgumentError("replacement_char out of unicode codepoint range");
  }
  policy.replacement = static_cast<UChar32>(replacement);
  if (c.def().attr().contains("replace_control_characters")) {  // not UnicodeEncode's
    TW_RETURN_IF_ERROR(c.GetAttr("replace_control_characters", &policy.replace_control));
  }
  return policy;
}

// Called by ICU on each malformed sequence: records it, then substitutes
// as ICU's default callback does, so that reading goes on.
void FlagMalformed(const void* context, UConverterToUnicodeArgs* args, const char* units,
                   int32_t length, UConverterCallbackReason reason, UErrorCode* error) {
  if (reason == UCNV_UNASSIGNED || reason == UCNV_ILLEGAL || reason == UCNV_IRREGULAR) {
    *static_cast<bool*>(const_cast<void*>(context)) = true;
  }
  UCNV_TO_U_CALLBACK_SUBSTITUTE(nullptr, args, units, length, reason, error);
}

// An ICU converter from `encoding`, flagging malformed input.
class Decoder {
 public:
  static absl::StatusOr<std::unique_ptr<Decoder>> Open(const std::string& encoding) {
    UErrorCode status = U_ZERO_ERROR;
    UConverter* converter = ucnv_open(encoding.c_str(), &status);
    if (U_FAILURE(status) || converter == nullptr) {
      if (converter != nullptr) ucnv_close(converter);
      return absl::InvalidArgumentError(
          absl::StrCat("Could not create converter for input encoding: ", encoding));
    }
    auto decoder = std::unique_ptr<Decoder>(new Decoder(converter));
    ucnv_setToUCallBack(converter, FlagMalformed, &decoder->malformed_, nullptr, nullptr, &status);
    if (U_FAILURE(status)) {
      return absl::InternalError(absl::StrCat("ICU would not take a callback for ", encoding));
    }
    return decoder;
  }
  ~Decoder() { ucnv_close(converter_); }

  // Calls emit(code point, bytes it took, whether malformed) for each code
  // point of `s`.
  template <typename Emit>
  void Decode(const std::string& s, Emit&& emit) {
    ucnv_reset(converter_);
    const char* at = s.data();
    const char* const end = s.data() + s.size();
    UErrorCode status = U_ZERO_ERROR;
    while (at < end) {
      const char* const before = at;
      malformed_ = false;
      const UChar32 c = ucnv_getNextUChar(converter_, &at, end, &status);
      if (U_FAILURE(status)) at = end;  // as TF: the rest is one error
      emit(c, static_cast<int64_t>(at - before), malformed_);
    }
  }

 private:
  explicit Decoder(UConverter* converter) : converter_(converter) {}
  UConverter* converter_;
  bool malformed_ = false;
};

// Whether the policy treats `c` as malformed (it was, or is a control
// character to replace).
bool TreatAsMalformed(const ErrorPolicy& policy, UChar32 c, bool malformed) {
  return malformed || (policy.replace_control && c <= 0x1F);
}

enum class Encoding { kUtf8, kUtf16Be, kUtf32Be };

absl::StatusOr<Encoding> GetOutputEncoding(const KernelConstruction& c) {
  std::string name;
  TW_RETURN_IF_ERROR(c.GetAttr("output_encoding", &name));
  if (name == "UTF-8") return Encoding::kUtf8;
  if (name == "UTF-16-BE") return Encoding::kUtf16Be;
  if (name == "UTF-32-BE") return Encoding::kUtf32Be;
  return absl::InvalidArgumentError(absl::StrCat("Invalid encoding \"", name, "\""));
}

// Appends code point `c` in `encoding`. A surrogate (only a replacement
// character can be one) is U+FFFD in UTF-8 and itself elsewhere, as ICU's
// strings give it.
void AppendCodePoint(Encoding encoding, UChar32 c, std::string* out) {
  uint8_t buf[4];
  int32_t n = 0;
  switch (encoding) {
    case Encoding::kUtf8:
      if (U_IS_SURROGATE(c)) c = 0xFFFD;
      U8_APPEND_UNSAFE(buf, n, c);
      break;
    case Encoding::kUtf16Be: {
      UChar units[2];
      int32_t k = 0;
      U16_APPEND_UNSAFE(units, k, c);
      for (int32_t i = 0; i < k; ++i) {
        buf[n++] = static_cast<uint8_t>(units[i] >> 8);
        buf[n++] = static_cast<uint8_t>(units[i] & 0xFF);
      }
      break;
    }
    case Encoding::kUtf32Be:
      for (int shift = 24; shift >= 0; shift -= 8) buf[n++] = static_cast<uint8_t>(c >> shift);
      break;
  }
  out->append(reinterpret_cast<const char*>(buf), n);
}

template <typename Splits>
class UnicodeDecodeOp : public OpKernel {
 public:
  explicit UnicodeDecodeOp(bool with_offsets) : with_offsets_(with_offsets) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(policy_, GetErrorPolicy(c));
    TW_RETURN_IF_ERROR(c.GetAttr("input_encoding", &encoding_));
    return Decoder::Open(encoding_).status();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> decoder, Decoder::Open(encoding_));
    const auto strings = ctx->input(0).span<std::string>();
    TW_ASSIGN_OR_RETURN(Tensor * splits,
                        ctx->allocate_output(0, TensorShape({int64_t(strings.size()) + 1})));
    auto row_splits = splits->span<Splits>();
    std::vector<int32_t> chars;
    std::vector<int64_t> starts;
    bool failed = false;
    for (size_t i = 0; i < strings.size(); ++i) {
      row_splits[i] = static_cast<Splits>(chars.size());
      int64_t offset = 0;
      decoder->Decode(strings[i], [&](UChar32 c, int64_t bytes, bool malformed) {
        failed |= policy_.strict && malformed;
        if (TreatAsMalformed(policy_, c, malformed)) {
          if (policy_.ignore) {
            offset += bytes;
            return;
          }
          c = policy_.replacement;
        }
        chars.push_back(c);
        if (with_offsets_) starts.push_back(offset);
        offset += bytes;
      });
      if (failed) return absl::InvalidArgumentError(kMalformed);
    }
    row_splits[strings.size()] = static_cast<Splits>(chars.size());
    const TensorShape values_shape({static_cast<int64_t>(chars.size())});
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, values_shape));
    std::copy(chars.begin(), chars.end(), values->data<int32_t>());
    if (with_offsets_) {
      TW_ASSIGN_OR_RETURN(Tensor * offsets, ctx->allocate_output(2, values_shape));
      std::copy(starts.begin(), starts.end(), offsets->data<int64_t>());
    }
    return absl::OkStatus();
  }

 private:
  const bool with_offsets_;
  ErrorPolicy policy_;
  std::string encoding_;
};

template <typename Splits>
class UnicodeEncodeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(policy_, GetErrorPolicy(c));
    TW_ASSIGN_OR_RETURN(encoding_, GetOutputEncoding(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(0);
    const Tensor& splits = ctx->input(1);
    if (values.dims() != 1 || splits.dims() != 1) {
      return absl::InvalidArgumentError(
          "Both the input_tensor and input_splits should be of rank 1.");
    }
    const auto code_points = values.span<int32_t>();
    const auto row_splits = splits.span<Splits>();
    const int64_t n = static_cast<int64_t>(code_points.size());
    TW_RETURN_IF_ERROR(CheckSplits(row_splits, n));
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, TensorShape({int64_t(row_splits.size()) - 1})));
    auto strings = out->span<std::string>();
    for (size_t row = 0; row + 1 < row_splits.size(); ++row) {
      std::string& s = strings[row];
      for (int64_t k = row_splits[row]; k < row_splits[row + 1]; ++k) {
        UChar32 c = code_points[k];
        if (c < UCHAR_MIN_VALUE || c > UCHAR_MAX_VALUE || U_IS_SURROGATE(c)) {
          if (policy_.strict) {
            return absl::InvalidArgumentError(
                "Code point is out of range for Unicode, or is a surrogate.");
          }
          if (policy_.ignore) continue;
          c = policy_.replacement;
        }
        AppendCodePoint(encoding_, c, &s);
      }
    }
    return absl::OkStatus();
  }

 private:
  static absl::Status CheckSplits(absl::Span<const Splits> splits, int64_t n) {
    if (splits.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input_splits should contain elements, but given input_values has 0 elements"));
    }
    if (splits[0] != 0) {
      return absl::InvalidArgumentError("First value in input_splits must be zero.");
    }
    if (splits.back() != n) {
      return absl::InvalidArgumentError(
          "Last value in input_splits must be equal to length of input_tensor.");
    }
    for (size_t i = 1; i < splits.size(); ++i) {
      if (splits[i] < splits[i - 1]) {
        return absl::InvalidArgumentError(
            "Values in input_splits must be equal or in ascending order.");
      }
      if (splits[i] > n) {
        return absl::InvalidArgumentError(
            "Values in input_splits must be less than or equal to input_tensor length.");
      }
    }
    return absl::OkStatus();
  }

  ErrorPolicy policy_;
  Encoding encoding_ = Encoding::kUtf8;
};

class UnicodeTranscodeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(policy_, GetErrorPolicy(c));
    TW_ASSIGN_OR_RETURN(encoding_, GetOutputEncoding(c));
    TW_RETURN_IF_ERROR(c.GetAttr("input_encoding", &input_encoding_));
    return Decoder::Open(input_encoding_).status();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> decoder, Decoder::Open(input_encoding_));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const auto strings = in.span<std::string>();
    auto transcoded = out->span<std::string>();
    bool failed = false;
    for (size_t i = 0; i < strings.size(); ++i) {
      decoder->Decode(strings[i], [&](UChar32 c, int64_t, bool malformed) {
        if (TreatAsMalformed(policy_, c, malformed)) {
          failed = true;
          if (policy_.ignore) return;
          c = policy_.replacement;
        }
        AppendCodePoint(encoding_, c, &transcoded[i]);
      });
    }
    // As TF, strict fails only once every string is read.
    if (policy_.strict && failed) return absl::InvalidArgumentError(kMalformed);
    return absl::OkStatus();
  }

 private:
  ErrorPolicy policy_;
  Encoding encoding_ = Encoding::kUtf8;
  std::string input_encoding_;
};

class UnicodeScriptOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, in.shape()));
    const auto code_points = in.span<int32_t>();
    auto scripts = out->span<int32_t>();
    for (size_t i = 0; i < code_points.size(); ++i) {
      UErrorCode status = U_ZERO_ERROR;
      const UScriptCode script = uscript_getScript(code_points[i], &status);
      scripts[i] = U_SUCCESS(status) ? static_cast<int32_t>(script) : -1;
    }
    return absl::OkStatus();
  }
};

template <typename Splits>
KernelFactory DecodeFactory(bool with_offsets) {
  return [with_offsets] { return std::make_unique<UnicodeDecodeOp<Splits>>(with_offsets); };
}

}  // namespace

TW_REGISTER_KERNELS(unicode_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const bool offsets : {false, true}) {
    const char* op = offsets ? "UnicodeDecodeWithOffsets" : "UnicodeDecode";
    RegisterKernel(cpu(op).TypeConstraint<int32_t>("Tsplits"), DecodeFactory<int32_t>(offsets));
    RegisterKernel(cpu(op).TypeConstraint<int64_t>("Tsplits"), DecodeFactory<int64_t>(offsets));
  }
  RegisterTypedKernels<UnicodeEncodeOp, int32_t, int64_t>(cpu("UnicodeEncode"), "Tsplits");
  RegisterKernel(cpu("UnicodeTranscode"), MakeFactory<UnicodeTranscodeOp>());
  RegisterKernel(cpu("UnicodeScript"), MakeFactory<UnicodeScriptOp>());
}

}  // namespace towerflow
