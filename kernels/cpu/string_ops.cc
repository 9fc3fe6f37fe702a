// The elementwise string kernels (ops/string_ops.cc), with TF's results and
// messages:
// - StringLength counts bytes, or UTF-8 characters (bytes that do not
//   continue a sequence).
// - StringLower / StringUpper change ASCII letters only, as TF without an
//   encoding; with encoding 'utf-8' every letter, by the C library's
//   Unicode case tables (TF uses ICU's; both are Unicode's simple case
//   mapping). A string that is not valid UTF-8 is an error there.
// - AsString is printf: TF's format built from precision, scientific,
//   shortest (%g), width and the fill flag; width and precision are at most
//   1024 (TF has no bound; a graph's 2^31 would make 2 GB per element).
// - StringToNumber accepts what TF's safe_strto* accept: surrounding
//   whitespace, and for floats what strtod reads (hex, inf, nan) whole.
// - Substr broadcasts pos and len (one shape) against the strings.
#include <clocale>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cwctype>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cpu/parse_number.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

bool Utf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Whether the op's unit attr is UTF8_CHAR (else BYTE).
absl::StatusOr<bool> CountsCharacters(const KernelConstruction& c) {
  std::string unit;
  TW_RETURN_IF_ERROR(c.GetAttr("unit", &unit));
  return unit == "UTF8_CHAR";
}

class StringLengthOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(chars_, CountsCharacters(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      const std::string& s = in.data<std::string>()[i];
      int64_t n = static_cast<int64_t>(s.size());
      if (chars_) {
        n = 0;
        for (char c : s) n += Utf8Continuation(c) ? 0 : 1;
      }
      out->data<int32_t>()[i] = static_cast<int32_t>(n);
    }
    return absl::OkStatus();
  }

 private:
  bool chars_ = false;
};

// Decodes one UTF-8 character of `s` at `*at`; false when it is not one.
bool DecodeUtf8(const std::string& s, size_t* at, char32_t* out) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(*at);
  int extra = lead < 0x80           ? 0
              : (lead >> 5) == 0x6  ? 1
              : (lead >> 4) == 0xE  ? 2
              : (lead >> 3) == 0x1E ? 3
                                    : -1;
  if (extra < 0 || *at + extra >= s.size()) return false;
  char32_t c = extra == 0 ? lead : lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    if (!Utf8Continuation(s[*at + k])) return false;
    c = (c << 6) | (byte(*at + k) & 0x3F);
  }
  *at += extra + 1;
  *out = c;
  return c <= 0x10FFFF;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// The C library's Unicode locale, for towlower_l / towupper_l.
locale_t Utf8Locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nullptr);
  return locale;
}

template <bool kUpper>
class StringCaseOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string encoding;
    TW_RETURN_IF_ERROR(c.GetAttr("encoding", &encoding));
    if (!encoding.empty() && encoding != "utf-8") {
      return absl::InvalidArgumentError(
          absl::StrCat("only utf-8 or '' (no encoding) is supported, received ", encoding));
    }
    utf8_ = !encoding.empty();
    if (utf8_ && Utf8Locale() == nullptr) {
      return absl::FailedPreconditionError(
          "StringLower/StringUpper with encoding 'utf-8' need the C.UTF-8 locale, which this "
          "system's C library lacks");
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      const std::string& s = in.data<std::string>()[i];
      std::string& o = out->data<std::string>()[i];
      if (!utf8_) {
        o = kUpper ? absl::AsciiStrToUpper(s) : absl::AsciiStrToLower(s);
        continue;
      }
      o.clear();
      o.reserve(s.size());
      for (size_t at = 0; at < s.size();) {
        char32_t c = 0;
        if (!DecodeUtf8(s, &at, &c)) {
          return absl::InvalidArgumentError(
              absl::StrCat("String at index ", i, " is not valid UTF-8"));
        }
        const wint_t mapped = kUpper ? towupper_l(static_cast<wint_t>(c), Utf8Locale())
                                     : towlower_l(static_cast<wint_t>(c), Utf8Locale());
        AppendUtf8(static_cast<char32_t>(mapped), &o);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool utf8_ = false;
};

class AsStringOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    DataType dtype = DT_INVALID;
    TW_RETURN_IF_ERROR(c.GetAttr("T", &dtype));
    TW_RETURN_IF_ERROR(c.GetAttr("precision", &precision));
    TW_RETURN_IF_ERROR(c.GetAttr("scientific", &scientific));
    TW_RETURN_IF_ERROR(c.GetAttr("shortest", &shortest));
    TW_RETURN_IF_ERROR(c.GetAttr("width", &width));
    TW_RETURN_IF_ERROR(c.GetAttr("fill", &fill));
    // A width or precision from a graph must not make gigabytes of text per
    // element (TF has no limit; printf's own is 2^31).
    constexpr int64_t kMaxWidth = 1024;
    if (width > kMaxWidth || precision > kMaxWidth) {
      return absl::InvalidArgumentError(absl::StrCat("AsString's width (", width,
                                                     ") and precision (", precision,
                                                     ") must be at most ", kMaxWidth));
    }
    if (fill.size() > 1) {
      return absl::InvalidArgumentError("Fill string must be one or fewer characters");
    }
    if (scientific && shortest) {
      return absl::InvalidArgumentError("Cannot select both scientific and shortest notation");
    }
    const bool floating = DataTypeIsFloating(dtype) || DataTypeIsComplex(dtype);
    if (!floating) {
      const char* which = precision > -1 ? "precision"
                          : scientific   ? "scientific"
                          : shortest     ? "shortest"
                                         : nullptr;
      if (which != nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(which, " not supported for datatype ", DataTypeString(dtype)));
      }
    }
    format_ = "%";
    if (!fill.empty()) {
      if (fill != " " && fill != "+" && fill != "-" && fill != "0" && fill != "#") {
        return absl::InvalidArgumentError(
            absl::StrCat("Fill argument not supported: \"", fill, "\""));
      }
      format_ += fill;
    }
    if (width > -1) absl::StrAppend(&format_, width);
    if (precision > -1) absl::StrAppend(&format_, ".", precision);
    if (floating) {
      format_ += scientific ? "e" : shortest ? "g" : "f";
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    std::string* o = out->data<std::string>();
    const int64_t n = in.NumElements();
    const auto each = [&](auto f) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(i);
    };
    if (in.dtype() == DT_STRING) {
      each([&](int64_t i) { return Printf(format_ + "s", in.data<std::string>()[i].c_str()); });
      return absl::OkStatus();
    }
    if (in.dtype() == DT_VARIANT) {
      each([&](int64_t i) {
        return Printf(format_ + "s", in.data<Variant>()[i].DebugString().c_str());
      });
      return absl::OkStatus();
    }
    const bool numeric = VisitNumberType(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* x = in.data<T>();
      each([&](int64_t i) -> std::string {
        if constexpr (std::is_same_v<T, bool>) {
          return x[i] ? "true" : "false";
        } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
          return absl::StrCat("(", Printf(format_, static_cast<double>(x[i].real())), ",",
                              Printf(format_, static_cast<double>(x[i].imag())), ")");
        } else if constexpr (kIsFloatingPoint<T>) {
          return Printf(format_, static_cast<double>(x[i]));
        } else if constexpr (std::is_unsigned_v<T>) {
          return Printf(format_ + "llu", static_cast<unsigned long long>(x[i]));
        } else {
          return Printf(format_ + "lld", static_cast<long long>(x[i]));
        }
      });
    });
    if (!numeric) return UnsupportedDtype("AsString", in.dtype());
    return absl::OkStatus();
  }

 private:
  template <typename V>
  static std::string Printf(const std::string& format, V v) {
    const int size = std::snprintf(nullptr, 0, format.c_str(), v);
    std::string s(size > 0 ? size : 0, '\0');
    std::snprintf(s.data(), s.size() + 1, format.c_str(), v);
    return s;
  }

  std::string format_;
};

template <typename T>
class StringToNumberOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      const std::string& s = in.data<std::string>()[i];
      if (!ParseNumber(s, &out->data<T>()[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("StringToNumberOp could not correctly convert string: ", s));
      }
    }
    return absl::OkStatus();
  }
};

// Substr: unit is bytes or UTF-8 characters; a negative pos counts from
// the end; a len past the end (or negative) takes the rest.
template <typename T>
class SubstrOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(chars_, CountsCharacters(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& pos = ctx->input(1);
    const Tensor& len = ctx->input(2);
    if (pos.shape() != len.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pos and len should have the same shape, got: ", pos.shape().DebugString(),
                       " vs. ", len.shape().DebugString()));
    }
    const BCast b(in.shape(), pos.shape());
    if (!b.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes: ", in.shape().DebugString(), " vs. ", pos.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, b.output_shape()));
    const std::vector<int64_t> in_index = BroadcastIndex(in.shape(), b.output_shape());
    const std::vector<int64_t> pos_index = BroadcastIndex(pos.shape(), b.output_shape());
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      const std::string& s = in.data<std::string>()[in_index[i]];
      // Character starts (UTF-8) or byte offsets.
      std::vector<size_t> starts;
      if (chars_) {
        for (size_t k = 0; k < s.size(); ++k) {
          if (!Utf8Continuation(s[k])) starts.push_back(k);
        }
      }
      const int64_t size =
          chars_ ? static_cast<int64_t>(starts.size()) : static_cast<int64_t>(s.size());
      int64_t p = pos.data<T>()[pos_index[i]];
      const int64_t l = len.data<T>()[pos_index[i]];
      if (p > size || p < -size) {
        return absl::InvalidArgumentError(
            absl::StrCat("pos ", p, " out of range for string b'", s, "' at index ", in_index[i]));
      }
      if (p < 0) p += size;
      const int64_t count = l < 0 ? size - p : std::min(l, size - p);
      const auto offset = [&](int64_t c) {
        return c >= size ? s.size() : chars_ ? starts[c] : static_cast<size_t>(c);
      };
      out->data<std::string>()[i] = s.substr(offset(p), offset(p + count) - offset(p));
    }
    return absl::OkStatus();
  }

 private:
  // For each element of `out`, the element of a tensor of `shape` that
  // broadcasts to it.
  static std::vector<int64_t> BroadcastIndex(const TensorShape& shape, const TensorShape& out) {
    const int rank = out.dims(), offset = out.dims() - shape.dims();
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (int d = shape.dims() - 1; d >= 0; --d) {
      strides[d + offset] = shape.dim_size(d) == 1 ? 0 : stride;
      stride *= shape.dim_size(d);
    }
    std::vector<int64_t> index(out.num_elements());
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      int64_t rest = i, at = 0;
      for (int d = rank - 1; d >= 0; --d) {
        at += (rest % out.dim_size(d)) * strides[d];
        rest /= out.dim_size(d);
      }
      index[i] = at;
    }
    return index;
  }

  bool chars_ = false;
};

}  // namespace

TW_REGISTER_KERNELS(string_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("StringLength"), MakeFactory<StringLengthOp>());
  RegisterKernel(cpu("StringLower"), MakeFactory<StringCaseOp<false>>());
  RegisterKernel(cpu("StringUpper"), MakeFactory<StringCaseOp<true>>());
  RegisterKernel(cpu("AsString"), MakeFactory<AsStringOp>());
  RegisterTypedKernels<StringToNumberOp, float, double, int32_t, int64_t, uint32_t, uint64_t>(
      cpu("StringToNumber"), "out_type");
  RegisterTypedKernels<SubstrOp, int32_t, int64_t>(cpu("Substr"), "T");
}

}  // namespace towerflow
