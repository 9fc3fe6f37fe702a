// The record decoders of input pipelines, with TF's results and messages:
// DecodeRaw (the CIFAR-10 binary records' bytes as numbers), DecodePaddedRaw
// and DecodeCSV (tf.io.decode_csv: TF's reading of quotes, delimiters,
// na_value and select_cols, its number syntax from parse_number.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/parse_number.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Bytes of one number of `type`: a complex number's parts swap apart.
size_t SwapUnit(DataType type) {
  if (type == DT_COMPLEX64) return 4;
  if (type == DT_COMPLEX128) return 8;
  return TensorElementSize(type);
}

// Copies `n` bytes of numbers into `dst` (`size` bytes there, the rest
// zeros), reversing each unit's bytes when the data's byte order is not
// this machine's.
void CopyNumbers(const char* src, size_t n, size_t size, size_t unit, bool swap, char* dst) {
  std::memcpy(dst, src, n);
  std::memset(dst + n, 0, size - n);
  if (!swap || unit == 1) return;
  for (size_t at = 0; at + unit <= size; at += unit) std::reverse(dst + at, dst + at + unit);
}

bool SwapsBytes(bool little_endian) {
  constexpr bool kHostLittle = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  return little_endian != kHostLittle;
}

// out_type and little_endian, which both raw decoders read.
class RawDecoder : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("out_type", &type_));
    bool little_endian = true;
    TW_RETURN_IF_ERROR(c.GetAttr("little_endian", &little_endian));
    swap_ = SwapsBytes(little_endian);
    return absl::OkStatus();
  }

 protected:
  DataType type_ = DT_INVALID;
  bool swap_ = false;
};

// Bools are bytes; any nonzero byte is true.
void NormaliseBools(Tensor* out) {
  if (out->dtype() != DT_BOOL) return;
  uint8_t* b = static_cast<uint8_t*>(out->raw_data());
  for (int64_t i = 0; i < out->NumElements(); ++i) b[i] = b[i] != 0;
}

// DecodeRaw: every string one length, a multiple of the type's size; the
// output is the input's shape plus the numbers per string.
class DecodeRawOp : public RawDecoder {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const std::string* s = in.data<std::string>();
    const int64_t n = in.NumElements();
    for (int64_t i = 1; i < n; ++i) {
      if (s[i].size() != s[0].size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("DecodeRaw requires input strings to all be the same size, but element ",
                         i, " has size ", s[0].size(), " != ", s[i].size()));
      }
    }
    const size_t bytes = n == 0 ? 0 : s[0].size();
    const size_t size = TensorElementSize(type_);
    if (bytes % size != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Input to DecodeRaw has length ", bytes,
                                                     " that is not a multiple of ", size,
                                                     ", the size of ", DataTypeString(type_)));
    }
    TensorShape shape = in.shape();
    TW_RETURN_IF_ERROR(shape.AddDim(static_cast<int64_t>(bytes / size)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) {
      CopyNumbers(s[i].data(), bytes, bytes, SwapUnit(type_), swap_, dst + i * bytes);
    }
    NormaliseBools(out);
    return absl::OkStatus();
  }
};

// DecodePaddedRaw: each string's first fixed_length bytes, zero-padded.
class DecodePaddedRawOp : public RawDecoder {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& length = ctx->input(1);
    if (length.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("k must be scalar, got shape ", length.shape().DebugString()));
    }
    const int64_t fixed = length.data<int32_t>()[0];
    const int64_t size = static_cast<int64_t>(TensorElementSize(type_));
    if (fixed % size != 0) {
      return absl::InvalidArgumentError(absl::StrCat("fixed_length (", fixed,
                                                     ") must be a multiple of the size of "
                                                     "out_type (",
                                                     size, ")"));
    }
    if (fixed <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("fixed_length (", fixed, ") must be greater than zero."));
    }
    TensorShape shape = in.shape();
    TW_RETURN_IF_ERROR(shape.AddDim(fixed / size));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    char* dst = static_cast<char*>(out->raw_data());
    const std::string* s = in.data<std::string>();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      CopyNumbers(s[i].data(), std::min<size_t>(s[i].size(), fixed), fixed, SwapUnit(type_), swap_,
                  dst + i * fixed);
    }
    return absl::OkStatus();
  }
};

// DecodeCSV.
class DecodeCsvOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("OUT_TYPE", &types_));
    std::string delim;
    TW_RETURN_IF_ERROR(c.GetAttr("field_delim", &delim));
    if (delim.size() != 1) return absl::InvalidArgumentError("field_delim should be only 1 char");
    delim_ = delim[0];
    TW_RETURN_IF_ERROR(c.GetAttr("use_quote_delim", &quotes_));
    TW_RETURN_IF_ERROR(c.GetAttr("na_value", &na_value_));
    TW_RETURN_IF_ERROR(c.GetAttr("select_cols", &select_));
    if (!select_.empty() && select_.size() != types_.size()) {
      return absl::InvalidArgumentError("select_cols should match output size");
    }
    for (size_t i = 1; i < select_.size(); ++i) {
      if (select_[i - 1] >= select_[i]) {
        return absl::InvalidArgumentError("select_cols should be strictly increasing indices");
      }
    }
    if (!select_.empty() && select_.front() < 0) {
      return absl::InvalidArgumentError("select_cols should be non-negative indices");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    const int num = static_cast<int>(types_.size());
    for (int f = 0; f < num; ++f) {
      if (ctx->input(1 + f).NumElements() > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("There should only be 1 default per field but field ", f, " has ",
                         ctx->input(1 + f).NumElements()));
      }
    }
    std::vector<Tensor*> outs(num);
    for (int f = 0; f < num; ++f) {
      TW_ASSIGN_OR_RETURN(outs[f], ctx->allocate_output(f, records.shape()));
    }
    std::vector<std::string> fields;
    for (int64_t i = 0; i < records.NumElements(); ++i) {
      TW_RETURN_IF_ERROR(Split(records.data<std::string>()[i], &fields));
      if (fields.size() != types_.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expect ", num, " fields but have ", fields.size(), " in record ", i));
      }
      for (int f = 0; f < num; ++f) {
        TW_RETURN_IF_ERROR(Store(fields[f], ctx->input(1 + f), f, i, outs[f]));
      }
    }
    return absl::OkStatus();
  }

 private:
  // One field into output f at record i: the default when empty or
  // na_value, else the field read as the column's type.
  absl::Status Store(const std::string& field, const Tensor& fallback, int f, int64_t i,
                     Tensor* out) const {
    if (field.empty() || field == na_value_) {
      if (fallback.NumElements() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Field ", f, " is required but missing in record ", i, "!"));
      }
      switch (out->dtype()) {
        case DT_STRING:
          out->data<std::string>()[i] = fallback.data<std::string>()[0];
          break;
        default:
          std::memcpy(static_cast<char*>(out->raw_data()) + i * TensorElementSize(out->dtype()),
                      fallback.raw_data(), TensorElementSize(out->dtype()));
      }
      return absl::OkStatus();
    }
    bool ok = true;
    switch (out->dtype()) {
      case DT_STRING:
        out->data<std::string>()[i] = field;
        break;
      case DT_INT32:
        ok = ParseNumber(field, out->data<int32_t>() + i);
        break;
      case DT_INT64:
        ok = ParseNumber(field, out->data<int64_t>() + i);
        break;
      case DT_FLOAT:
        ok = ParseNumber(field, out->data<float>() + i);
        break;
      case DT_DOUBLE:
        ok = ParseNumber(field, out->data<double>() + i);
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "csv: data type ", DataTypeString(out->dtype()), " not supported in field ", f));
    }
    if (ok) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("Field ", f, " in record ", i,
                                                   " is not a valid ", DataTypeString(out->dtype()),
                                                   ": ", field));
  }

  // TF's field reader: a field may be quoted ("" inside for a quote); CR
  // and LF between fields are skipped, elsewhere unquoted they are errors;
  // with select_cols only those columns are kept, and reading stops after
  // the last. An empty record has no fields; a trailing delimiter ends in
  // an empty one.
  absl::Status Split(const std::string& in, std::vector<std::string>* out) const {
    out->clear();
    const bool all = select_.empty();
    const size_t size = in.size();
    size_t at = 0, parsed = 0, selected = 0;
    if (in.empty()) return absl::OkStatus();
    while (at < size) {
      if (in[at] == '\n' || in[at] == '\r') {
        ++at;
        continue;
      }
      const bool keep = all || select_[selected] == static_cast<int64_t>(parsed);
      std::string field;
      if (quotes_ && in[at] == '"') {
        ++at;
        while (at + 1 < size && (in[at] != '"' || in[at + 1] != delim_)) {
          if (in[at] != '"') {
            if (keep) field += in[at];
            ++at;
            continue;
          }
          if (in[at + 1] != '"') {
            return absl::InvalidArgumentError(
                "Quote inside a string has to be escaped by another quote");
          }
          if (keep) field += '"';
          at += 2;
        }
        if (!(at < size && in[at] == '"' && (at == size - 1 || in[at + 1] == delim_))) {
          return absl::InvalidArgumentError(
              "Quoted field has to end with quote followed by delim or end");
        }
        at += 2;
      } else {
        for (; at < size && in[at] != delim_; ++at) {
          if ((quotes_ && in[at] == '"') || in[at] == '\n' || in[at] == '\r') {
            return absl::InvalidArgumentError("Unquoted fields cannot have quotes/CRLFs inside");
          }
          if (keep) field += in[at];
        }
        ++at;
      }
      ++parsed;
      if (keep) {
        out->push_back(std::move(field));
        if (!all && ++selected == select_.size()) return absl::OkStatus();
      }
    }
    const bool keep = all || select_[selected] == static_cast<int64_t>(parsed);
    if (keep && in.back() == delim_) out->emplace_back();
    return absl::OkStatus();
  }

  DataTypeVector types_;
  char delim_ = ',';
  bool quotes_ = true;
  std::string na_value_;
  std::vector<int64_t> select_;
};

}  // namespace

TW_REGISTER_KERNELS(decode_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("DecodeRaw"), MakeFactory<DecodeRawOp>());
  RegisterKernel(cpu("DecodePaddedRaw"), MakeFactory<DecodePaddedRawOp>());
  RegisterKernel(cpu("DecodeCSV"), MakeFactory<DecodeCsvOp>());
}

}  // namespace towerflow
