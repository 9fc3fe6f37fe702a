// Counting and binning kernels: Bincount, HistogramFixedWidth, Bucketize.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Bincount(arr, size, weights): bins[i] = the sum of weights[j] (or the
// number of j; weights empty) over arr[j] == i, for i < size; larger
// entries are dropped, negative ones are an error (TF's).
template <typename T>
class BincountOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& arr = ctx->input(0);
    const Tensor& size_t_ = ctx->input(1);
    const Tensor& weights = ctx->input(2);
    if (size_t_.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape must be rank 0 but is rank ", size_t_.dims()));
    }
    const int64_t size = *size_t_.data<int32_t>();
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative"));
    }
    const bool weighted = weights.NumElements() > 0;
    if (weighted && weights.shape() != arr.shape()) {
      return absl::InvalidArgumentError("Input indices and weights must have the same size.");
    }
    const int32_t* a = arr.data<int32_t>();
    for (int64_t j = 0; j < arr.NumElements(); ++j) {
      if (a[j] < 0) return absl::InvalidArgumentError("Input arr must be non-negative!");
    }
    TW_ASSIGN_OR_RETURN(Tensor * bins, ctx->allocate_output(0, TensorShape({size})));
    T* b = bins->data<T>();
    std::fill_n(b, size, T(0));
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t j = 0; j < arr.NumElements(); ++j) {
      if (a[j] < size) b[a[j]] += weighted ? w[j] : T(1);
    }
    return absl::OkStatus();
  }
};

// HistogramFixedWidth(values, value_range, nbins): counts over nbins equal
// bins of [lo, hi); values below lo count in the first bin, values at or
// above hi in the last. The bin is floor((max(v, lo) - lo) / step) capped
// at nbins - 1, computed in double (TF subtracts in T first, which
// overflows at the integer extremes).
template <typename T, typename Out>
class HistogramFixedWidthOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(0);
    const Tensor& range = ctx->input(1);
    const Tensor& nbins_t = ctx->input(2);
    if (range.dims() != 1) return absl::InvalidArgumentError("value_range should be a vector.");
    if (range.NumElements() != 2) {
      return absl::InvalidArgumentError("value_range should be a vector of 2 elements.");
    }
    if (nbins_t.dims() != 0) return absl::InvalidArgumentError("nbins should be a scalar.");
    const T lo = range.data<T>()[0], hi = range.data<T>()[1];
    const int32_t nbins = *nbins_t.data<int32_t>();
    if (!(lo < hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("value_range should satisfy value_range[0] < value_range[1], but got '[", lo,
                       ", ", hi, "]'"));
    }
    if (nbins <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("nbins should be a positive number, but got '", nbins, "'"));
    }
    const T* v = values.data<T>();
    for (int64_t i = 0; i < values.NumElements(); ++i) {
      if (std::isnan(static_cast<double>(v[i]))) {
        return absl::InvalidArgumentError("Histogram values must not contain NaN");
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({nbins})));
    Out* o = out->data<Out>();
    std::fill_n(o, nbins, Out(0));
    const double step = (static_cast<double>(hi) - static_cast<double>(lo)) / nbins;
    const double last = nbins - 1;
    for (int64_t i = 0; i < values.NumElements(); ++i) {
      const double offset = static_cast<double>(std::max(v[i], lo)) - static_cast<double>(lo);
      ++o[static_cast<int64_t>(std::min(offset / step, last))];
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterHistogram() {
  const auto def = [] {
    return KernelDefBuilder("HistogramFixedWidth").Device(kDeviceCpu).TypeConstraint<T>("T");
  };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>("dtype"),
                 MakeFactory<HistogramFixedWidthOp<T, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>("dtype"),
                 MakeFactory<HistogramFixedWidthOp<T, int64_t>>());
}

// Bucketize(input) with attr boundaries: each value's bucket, the number of
// boundaries at or below it (std::upper_bound, as TF: NaN past them all).
// The value is compared as TF compares it, with float boundaries.
template <typename T>
class BucketizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("boundaries", &boundaries_));
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      return absl::InvalidArgumentError("Expected sorted boundaries");
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const T* x = in.data<T>();
    int32_t* y = out->data<int32_t>();
    ctx->intra_op_pool()->ParallelFor(in.NumElements(), 32, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(), x[i]) -
                                    boundaries_.begin());
      }
    });
    return absl::OkStatus();
  }

 private:
  std::vector<float> boundaries_;
};

TW_REGISTER_KERNELS(histogram_ops) {
  RegisterTypedKernels<BincountOp, int32_t, int64_t, float, double>(
      KernelDefBuilder("Bincount").Device(kDeviceCpu), "T");
  RegisterHistogram<int32_t>();
  RegisterHistogram<int64_t>();
  RegisterHistogram<float>();
  RegisterHistogram<double>();
  RegisterTypedKernels<BucketizeOp, int32_t, int64_t, float, double>(
      KernelDefBuilder("Bucketize").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
