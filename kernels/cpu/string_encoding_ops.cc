// EncodeBase64 and DecodeBase64 (web-safe base64, TF's padding rules and
// messages), ReduceJoin (strings joined along dimensions) and
// UnsortedSegmentJoin (joined by segment), of ops/string_ops.cc.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

constexpr char kWebSafe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string EncodeWebSafe(const std::string& in, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(in[i])); };
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out.push_back(kWebSafe[(v >> shift) & 63]);
  }
  const size_t rest = in.size() - i;
  if (rest > 0) {
    const uint32_t v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(kWebSafe[(v >> 18) & 63]);
    out.push_back(kWebSafe[(v >> 12) & 63]);
    if (rest == 2) out.push_back(kWebSafe[(v >> 6) & 63]);
    if (pad) out.append(rest == 2 ? "=" : "==");
  }
  return out;
}

// The 6 bits of a web-safe character, or -1.
int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// TF's decoding: one or two '=' may end a string whose length is a
// multiple of 4; otherwise 2 or 3 trailing characters make 1 or 2 bytes
// (their spare bits ignored) and 1 is an error.
absl::StatusOr<std::string> DecodeWebSafe(const std::string& in) {
  size_t n = in.size();
  if (n % 4 == 0 && n >= 2) n -= in[n - 1] != '=' ? 0 : in[n - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(n / 4 * 3 + 2);
  const absl::Status invalid = absl::InvalidArgumentError("Invalid character found in base64.");
  for (size_t i = 0; i < n; i += 4) {
    const size_t count = std::min<size_t>(4, n - i);
    if (count == 1) {
      return absl::InvalidArgumentError("Base64 string length cannot be 1 modulo 4.");
    }
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int s = k < count ? Sextet(in[i + k]) : 0;
      if (s < 0) return invalid;
      v = v << 6 | static_cast<uint32_t>(s);
    }
    for (size_t k = 0; k + 1 < count; ++k)
      out.push_back(static_cast<char>((v >> (16 - 8 * k)) & 255));
  }
  return out;
}

class EncodeBase64Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("pad", &pad_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      out->data<std::string>()[i] = EncodeWebSafe(in.data<std::string>()[i], pad_);
    }
    return absl::OkStatus();
  }

 private:
  bool pad_ = false;
};

class DecodeBase64Op : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      TW_ASSIGN_OR_RETURN(out->data<std::string>()[i], DecodeWebSafe(in.data<std::string>()[i]));
    }
    return absl::OkStatus();
  }
};

// ReduceJoin(inputs, reduction_indices): the strings along the reduced
// dimensions joined with separator, the first listed dimension varying
// fastest (TF's order); no dimensions listed, no reduction.
class ReduceJoinOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("keep_dims", &keep_dims_));
    return c.GetAttr("separator", &separator_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const int rank = in.dims();
    std::vector<int> reduced;
    std::vector<bool> is_reduced(rank, false);
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      const int32_t given = indices.data<int32_t>()[i];
      const int64_t d = given < 0 ? int64_t{given} + rank : given;
      if (d < 0 || d >= rank) {
        return absl::OutOfRangeError(absl::StrCat("Invalid reduction dimension ", given,
                                                  " for input with ", rank, " dimension(s)"));
      }
      if (is_reduced[d]) {
        return absl::InvalidArgumentError(absl::StrCat("Duplicate reduction dimension ", given));
      }
      is_reduced[d] = true;
      reduced.push_back(static_cast<int>(d));
    }
    std::vector<int64_t> stride(rank, 1), out_dims;
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * in.dim_size(d + 1);
    std::vector<int> kept;
    for (int d = 0; d < rank; ++d) {
      if (!is_reduced[d]) {
        kept.push_back(d);
        out_dims.push_back(in.dim_size(d));
      } else if (keep_dims_) {
        out_dims.push_back(1);
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(out_dims)));
    const std::string* xs = in.data<std::string>();
    int64_t joined = 1;
    for (int d : reduced) joined *= in.dim_size(d);
    std::vector<int64_t> at(rank, 0);  // the kept dims' index, last fastest
    for (int64_t o = 0; o < out->NumElements(); ++o) {
      int64_t base = 0;
      for (int d : kept) base += at[d] * stride[d];
      std::string& s = out->data<std::string>()[o];
      std::vector<int64_t> r(reduced.size(), 0);  // reduced[0] fastest
      for (int64_t j = 0; j < joined; ++j) {
        int64_t offset = base;
        for (size_t k = 0; k < reduced.size(); ++k) offset += r[k] * stride[reduced[k]];
        if (j > 0) s += separator_;
        s += xs[offset];
        for (size_t k = 0; k < reduced.size() && ++r[k] == in.dim_size(reduced[k]); ++k) r[k] = 0;
      }
      for (int k = static_cast<int>(kept.size()) - 1;
           k >= 0 && ++at[kept[k]] == in.dim_size(kept[k]); --k) {
        at[kept[k]] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

// UnsortedSegmentJoin(inputs, segment_ids, num_segments): output [s, R...]
// joins, in input order, the strings whose ids are s (ids [I...] over
// inputs [I..., R...]); as TF's, the separator goes in only after a
// non-empty join so far, and an id outside [0, num_segments) is an error.
class UnsortedSegmentJoinOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("separator", &separator_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    const Tensor& num_t = ctx->input(2);
    if (num_t.dims() != 0) return absl::InvalidArgumentError("Number of segments must be a scalar");
    const int64_t num = IntAt(num_t, 0);
    if (num < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Number of segments must be non-negative but got ", num));
    }
    if (ids.dims() == 0) return absl::InvalidArgumentError("Segment_id cannot have rank 0");
    if (ids.dims() > inputs.dims()) {
      return absl::OutOfRangeError(absl::StrCat("Invalid segment_id rank ", ids.dims(),
                                                " for input with ", inputs.dims(),
                                                " dimension(s)"));
    }
    for (int d = 0; d < ids.dims(); ++d) {
      if (ids.dim_size(d) != inputs.dim_size(d)) {
        return absl::InvalidArgumentError(absl::StrCat("Segment dimension is ", ids.dim_size(d),
                                                       " while input dimension is ", inputs.dims(),
                                                       " in rank ", d));
      }
    }
    std::vector<int64_t> dims = {num};
    for (int d = ids.dims(); d < inputs.dims(); ++d) dims.push_back(inputs.dim_size(d));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    const int64_t n = ids.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = IntAt(ids, i);
      if (id < 0 || id >= num) {
        return absl::InvalidArgumentError(
            "segment_ids are not allowed to exceed num_segments or to have negative values.");
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t inner = n == 0 ? 0 : inputs.NumElements() / n;
    const std::string* in = inputs.data<std::string>();
    std::string* o = out->data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      std::string* row = o + IntAt(ids, i) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        if (!row[k].empty()) row[k] += separator_;
        row[k] += in[i * inner + k];
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string separator_;
};

TW_REGISTER_KERNELS(string_encoding_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("EncodeBase64"), MakeFactory<EncodeBase64Op>());
  RegisterKernel(cpu("DecodeBase64"), MakeFactory<DecodeBase64Op>());
  RegisterKernel(cpu("ReduceJoin").HostMemory("reduction_indices"), MakeFactory<ReduceJoinOp>());
  RegisterKernel(cpu("UnsortedSegmentJoin").HostMemory("num_segments"),
                 MakeFactory<UnsortedSegmentJoinOp>());
}

}  // namespace
}  // namespace towerflow
