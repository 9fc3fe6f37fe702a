// The layout ops TF's layout optimizer writes into graphs (and TF 2's
// Keras layers into theirs): DataFormatDimMap maps dimension indices of
// src_format to where dst_format has those dimensions; DataFormatVecPermute
// reorders a vector (or the rows of a matrix) given in src_format's order
// into dst_format's, whole (4 or 5 entries) or spatial dims only (2 or 3).
// Formats are permutations of each other, 4 or 5 letters, as TF.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// For each position of `dst`, where `src` has that letter.
absl::StatusOr<std::vector<int>> Permutation(const std::string& src, const std::string& dst) {
  if (src.size() != 4 && src.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("Source format must be of length 4 or 5, received src_format = ", src));
  }
  std::vector<int> from(dst.size());
  bool ok = dst.size() == src.size();
  for (size_t i = 0; ok && i < dst.size(); ++i) {
    const size_t at = src.find(dst[i]);
    ok = at != std::string::npos && src.find(dst[i], at + 1) == std::string::npos;
    from[i] = static_cast<int>(at);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Destination and source format must determine a permutation, got ", src, " and ", dst));
  }
  return from;
}

// The format without N and C: its spatial letters.
std::string Spatial(const std::string& format) {
  std::string out;
  for (char c : format) {
    if (c != 'N' && c != 'C') out.push_back(c);
  }
  return out;
}

class DataFormatKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("src_format", &src_));
    TW_RETURN_IF_ERROR(c.GetAttr("dst_format", &dst_));
    TW_ASSIGN_OR_RETURN(from_, Permutation(src_, dst_));
    return absl::OkStatus();
  }

 protected:
  std::string src_, dst_;
  std::vector<int> from_;  // dst position -> src position
};

template <typename T>
class DataFormatDimMapOp : public DataFormatKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const int64_t n = static_cast<int64_t>(src_.size());
    // src position -> dst position.
    std::vector<T> to(n);
    for (int64_t i = 0; i < n; ++i) to[from_[i]] = static_cast<T>(i);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t d = ((static_cast<int64_t>(x.data<T>()[i]) % n) + n) % n;
      y->data<T>()[i] = to[d];
    }
    return absl::OkStatus();
  }
};

template <typename T>
class DataFormatVecPermuteOp : public DataFormatKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t full = static_cast<int64_t>(src_.size()), spatial = full - 2;
    const bool rows = x.dims() == 2;
    if (x.dims() != 1 && !(rows && x.dim_size(1) == 2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be a vector or a 2D tensor with 2 columns, but got shape ",
                       x.shape().DebugString()));
    }
    const int64_t n = x.dim_size(0);
    if (n != full && n != spatial) {
      return absl::InvalidArgumentError(
          absl::StrCat(rows ? "First dimension of 2D input" : "1D input", " must be of size ",
                       spatial, " or ", full, ", but got shape ", x.shape().DebugString()));
    }
    std::vector<int> from = from_;
    if (n == spatial) {
      TW_ASSIGN_OR_RETURN(from, Permutation(Spatial(src_) + "NC", Spatial(dst_) + "NC"));
      from.resize(spatial);
    }
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const int64_t width = rows ? 2 : 1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < width; ++k) {
        y->data<T>()[i * width + k] = x.data<T>()[from[i] * width + k];
      }
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(data_format_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<DataFormatDimMapOp, int32_t, int64_t>(cpu("DataFormatDimMap"), "T");
  RegisterTypedKernels<DataFormatVecPermuteOp, int32_t, int64_t>(cpu("DataFormatVecPermute"), "T");
}

}  // namespace
}  // namespace towerflow
