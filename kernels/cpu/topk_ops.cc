// TopKV2 and TopK: the k largest entries of each row (the last dimension) and their
// indices, largest first, equal values in index order (TensorFlow's
// topk_op); NaN ranks above every number, so the order stays a strict weak
// one. Rows run in parallel; each is a partial sort of its indices.
// NthElement: the n-th entry of each row in that order (or reversed), by a
// selection (std::nth_element) of a copy of the row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace {

// a ranks before b: larger, NaN largest.
template <typename T>
bool Larger(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

// TopKV2 (k an input) and TopK (k an attr); the indices int16, int32 or
// int64 (TopKV2's index_type).
template <typename T>
class TopKOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if (!c.def().attr().contains("k")) return absl::OkStatus();
    int64_t k = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("k", &k));
    k_attr_ = Tensor(DT_INT64, TensorShape());
    *k_attr_.data<int64_t>() = k;
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& k_in = ctx->num_inputs() > 1 ? ctx->input(1) : k_attr_;
    TW_ASSIGN_OR_RETURN(const TopKPlan plan, PlanTopK(in.shape(), k_in));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(0, plan.shape));
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(1, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    switch (indices->dtype()) {
      case DT_INT16:
        return Run<int16_t>(ctx, in, plan, values, indices);
      case DT_INT64:
        return Run<int64_t>(ctx, in, plan, values, indices);
      default:
        return Run<int32_t>(ctx, in, plan, values, indices);
    }
  }

 private:
  template <typename I>
  absl::Status Run(KernelContext* ctx, const Tensor& in, const TopKPlan& plan, Tensor* values,
                   Tensor* indices) {
    const int64_t rows = plan.rows, n = plan.n, k = plan.k;
    if (n - 1 > std::numeric_limits<I>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a row of ", n, " entries does not fit index_type ", DataTypeString(indices->dtype())));
    }
    const T* x = in.data<T>();
    T* v = values->data<T>();
    I* idx = indices->data<I>();
    ctx->intra_op_pool()->ParallelFor(rows, n * 8, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> order(n);
      for (int64_t r = begin; r < end; ++r) {
        const T* row = x + r * n;
        std::iota(order.begin(), order.end(), 0);
        const auto before = [row](int32_t a, int32_t b) {
          return Larger(row[a], row[b]) || (!Larger(row[b], row[a]) && a < b);
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          idx[r * k + j] = static_cast<I>(order[j]);
          v[r * k + j] = row[order[j]];
        }
      }
    });
    return absl::OkStatus();
  }

  Tensor k_attr_;
};

template <typename T>
class NthElementOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("reverse", &reverse_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& n_t = ctx->input(1);
    if (n_t.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("N must be scalar but has rank ", n_t.dims()));
    }
    const int64_t n = *n_t.data<int32_t>();
    if (n < 0) return absl::InvalidArgumentError(absl::StrCat("n must be non-negative but is ", n));
    if (in.dims() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input must be at least rank 1 but is rank ", in.dims()));
    }
    const int64_t len = in.shape().dim_size(in.dims() - 1);
    if (len <= n) {
      return absl::InvalidArgumentError(absl::StrCat("Input must have last dimension > n = ", n));
    }
    TensorShape shape = in.shape();
    shape.RemoveDim(in.dims() - 1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    const bool reverse = reverse_;
    ctx->intra_op_pool()->ParallelFor(shape.num_elements(), len, [&](int64_t begin, int64_t end) {
      std::vector<T> row(len);
      for (int64_t r = begin; r < end; ++r) {
        std::copy_n(src + r * len, len, row.begin());
        const auto nth = row.begin() + n;
        if (reverse) {
          std::nth_element(row.begin(), nth, row.end(), Larger<T>);
        } else {
          std::nth_element(row.begin(), nth, row.end(), [](T a, T b) { return Larger(b, a); });
        }
        dst[r] = *nth;
      }
    });
    return absl::OkStatus();
  }

 private:
  bool reverse_ = false;
};

TW_REGISTER_KERNELS(topk_ops) {
  RegisterTypedKernels<TopKOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("TopKV2").Device(kDeviceCpu).HostMemory("k"), "T");
  RegisterTypedKernels<TopKOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("TopK").Device(kDeviceCpu), "T");
  RegisterTypedKernels<NthElementOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("NthElement").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
