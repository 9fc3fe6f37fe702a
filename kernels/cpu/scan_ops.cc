// Cumsum, Cumprod and CumulativeLogsumexp (running sums, products and
// log-sum-exps along one axis, optionally exclusive and/or reversed),
// ListDiff, Unique and UniqueWithCounts.
//
// A scan is sequential along its axis, so the tensor is viewed as
// [outer, len, inner]: each step adds (multiplies) a whole contiguous inner
// row into the running row, which vectorises; outer blocks are sharded over
// the intra-op pool.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

enum class Scan { kSum, kProduct, kLogSumExp };

template <typename T, Scan kScan>
class ScanOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("exclusive", &exclusive_));
    return c.GetAttr("reverse", &reverse_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(int64_t raw_axis, IntScalar(ctx->input(1), "axis"));
    if (x.dims() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->op(), " needs an input of rank >= 1, got ", x.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(raw_axis, x.dims(), "axis"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.shape().dim_size(i);
    for (int i = axis + 1; i < x.dims(); ++i) inner *= x.shape().dim_size(i);
    const int64_t len = x.shape().dim_size(axis);
    const T* src = RawData<T>(x);
    T* dst = RawData<T>(*out);
    using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
    const T start = kScan == Scan::kProduct ? T(1)
                    : kScan == Scan::kSum   ? T(0)
                                            : -std::numeric_limits<T>::infinity();
    ctx->intra_op_pool()->ParallelFor(outer, len * inner, [&](int64_t begin, int64_t end) {
      Row acc(inner);
      for (int64_t o = begin; o < end; ++o) {
        acc.setConstant(start);
        for (int64_t step = 0; step < len; ++step) {
          const int64_t k = reverse_ ? len - 1 - step : step;
          const int64_t at = (o * len + k) * inner;
          Eigen::Map<const Row> in(src + at, inner);
          Eigen::Map<Row> res(dst + at, inner);
          if (exclusive_) res = acc;
          if constexpr (kScan == Scan::kProduct) {
            acc *= in;
          } else if constexpr (kScan == Scan::kSum) {
            acc += in;
          } else {
            // log(e^a + e^b) = max + log1p(e^(min - max)), TF's; -inf
            // (nothing yet) stays exact.
            const Row hi = acc.max(in);
            const Row lo = acc.min(in);
            acc = (hi == -std::numeric_limits<T>::infinity())
                      .select(hi, hi + ((lo - hi).exp()).log1p());
          }
          if (!exclusive_) res = acc;
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool exclusive_ = false, reverse_ = false;
};

template <typename T>
using CumsumOp = ScanOp<T, Scan::kSum>;
template <typename T>
using CumprodOp = ScanOp<T, Scan::kProduct>;
template <typename T>
using CumulativeLogsumexpOp = ScanOp<T, Scan::kLogSumExp>;

// ListDiff(x, y) = (out, idx): the entries of x not in y, in x's order,
// with their positions in x (TF's setdiff1d).
template <typename T>
class ListDiffOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    for (const Tensor* t : {&x, &y}) {
      if (t->dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            t == &x ? "x" : "y", " must be a vector, got shape ", t->shape().DebugString()));
      }
    }
    const T* xs = RawData<T>(x);
    const T* ys = RawData<T>(y);
    const absl::flat_hash_set<T> drop(ys, ys + y.NumElements());
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (!drop.contains(xs[i])) keep.push_back(i);
    }
    const int64_t n = static_cast<int64_t>(keep.size());
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * idx, ctx->allocate_output(1, TensorShape({n})));
    T* o = RawData<T>(*out);
    for (int64_t i = 0; i < n; ++i) o[i] = xs[keep[i]];
    return WriteInts(keep, idx);
  }
};

// Unique(x) = (y, idx): x's distinct values in order of first appearance,
// and for each x[i] its position in y (TF's unique; each NaN is distinct).
// UniqueWithCounts adds count[k], how often y[k] occurs. The V2 forms take
// an axis [1] and find the distinct slices along it (an empty axis: x must
// be a vector, as V1).
template <typename T, bool kCounts, bool kV2>
class UniqueOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    std::optional<int> axis;
    if constexpr (kV2) {
      TW_ASSIGN_OR_RETURN(axis, UniqueAxis(ctx->input(1), x.dims()));
    }
    if (!axis.has_value() && x.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("unique expects a 1D vector, got shape ", x.shape().DebugString()));
    }
    const int a = axis.value_or(0);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= x.dim_size(d);
    for (int d = a + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
    const int64_t n = x.dim_size(a);
    const T* xs = x.data<T>();
    std::vector<int64_t> idx(n), firsts, counts;
    const auto add = [&](int64_t i, int64_t first) {
      if (first == static_cast<int64_t>(firsts.size())) {
        firsts.push_back(i);
        counts.push_back(0);
      }
      idx[i] = first;
      ++counts[first];
    };
    if (outer == 1 && inner == 1) {
      absl::flat_hash_map<T, int64_t> position;
      for (int64_t i = 0; i < n; ++i) {
        add(i, position.try_emplace(xs[i], static_cast<int64_t>(firsts.size())).first->second);
      }
    } else {
      // Slice i: the elements (o, i, j); equal when all are (==).
      const auto at = [&](int64_t i, int64_t o, int64_t j) { return xs[(o * n + i) * inner + j]; };
      const auto hash = [&](int64_t i) {
        size_t h = 0;
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) h = absl::HashOf(h, at(i, o, j));
        }
        return h;
      };
      const auto equal = [&](int64_t i, int64_t k) {
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            if (!(at(i, o, j) == at(k, o, j))) return false;
          }
        }
        return true;
      };
      absl::flat_hash_map<int64_t, int64_t, decltype(hash), decltype(equal)> position(0, hash,
                                                                                      equal);
      for (int64_t i = 0; i < n; ++i) {
        add(i, position.try_emplace(i, static_cast<int64_t>(firsts.size())).first->second);
      }
    }
    const int64_t m = static_cast<int64_t>(firsts.size());
    std::vector<int64_t> y_dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
    y_dims[a] = m;
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape(y_dims)));
    TW_ASSIGN_OR_RETURN(Tensor * out_idx, ctx->allocate_output(1, TensorShape({n})));
    T* ys = y->data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < m; ++k) {
        std::copy_n(xs + (o * n + firsts[k]) * inner, inner, ys + (o * m + k) * inner);
      }
    }
    TW_RETURN_IF_ERROR(WriteInts(idx, out_idx));
    if constexpr (kCounts) {
      TW_ASSIGN_OR_RETURN(Tensor * count, ctx->allocate_output(2, TensorShape({m})));
      TW_RETURN_IF_ERROR(WriteInts(counts, count));
    }
    return absl::OkStatus();
  }

 private:
  // UniqueV2's axis input: empty (none) or one axis of x, TF's messages.
  static absl::StatusOr<std::optional<int>> UniqueAxis(const Tensor& axis, int dims) {
    if (axis.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis expects a 1D vector, got shape ", axis.shape().DebugString()));
    }
    if (axis.NumElements() > 1) {
      return absl::InvalidArgumentError(
          "axis does not support input tensors larger than 1 elements");
    }
    if (axis.NumElements() == 0) return std::nullopt;
    int64_t a = IntAt(axis, 0);
    if (a < 0) a += dims;
    if (a < 0 || a >= dims) {
      return absl::InvalidArgumentError(absl::StrCat("axis has to be between [0, ", dims, ")"));
    }
    return static_cast<int>(a);
  }
};
template <typename T>
using UniqueOnlyOp = UniqueOp<T, false, false>;
template <typename T>
using UniqueWithCountsOp = UniqueOp<T, true, false>;
template <typename T>
using UniqueV2Op = UniqueOp<T, false, true>;
template <typename T>
using UniqueWithCountsV2Op = UniqueOp<T, true, true>;

TW_REGISTER_KERNELS(scan_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<CumsumOp, float, double, int32_t, int64_t>(cpu("Cumsum"), "T");
  RegisterTypedKernels<CumprodOp, float, double, int32_t, int64_t>(cpu("Cumprod"), "T");
  RegisterTypedKernels<CumulativeLogsumexpOp, float, double>(cpu("CumulativeLogsumexp"), "T");
  RegisterTypedKernels<ListDiffOp, float, double, int32_t, int64_t>(cpu("ListDiff"), "T");
  RegisterTypedKernels<UniqueOnlyOp, float, double, int32_t, int64_t, std::string>(cpu("Unique"),
                                                                                   "T");
  RegisterTypedKernels<UniqueWithCountsOp, float, double, int32_t, int64_t, std::string>(
      cpu("UniqueWithCounts"), "T");
  RegisterTypedKernels<UniqueV2Op, float, double, int32_t, int64_t, bool, std::string>(
      cpu("UniqueV2").HostMemory("axis"), "T");
  RegisterTypedKernels<UniqueWithCountsV2Op, float, double, int32_t, int64_t, bool, std::string>(
      cpu("UniqueWithCountsV2").HostMemory("axis"), "T");
}

}  // namespace
}  // namespace towerflow
