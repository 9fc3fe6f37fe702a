// ClipByValue(t, clip_value_min, clip_value_max): max(min(t, max), min)
// elementwise, in C++'s std::min/std::max order as TF's kernel, so a NaN in
// t stays NaN, a NaN bound lets t through and a min above the max gives the
// min. Each bound is a scalar or has t's shape (TF broadcasts nothing else).
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    const auto fits = [&](const Tensor& bound) {
      return bound.shape() == t.shape() || bound.dims() == 0;
    };
    if (!fits(lo) || !fits(hi)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "clip_value_min and clip_value_max must be either of the same shape as input, or a "
          "scalar. input shape: ",
          t.shape().DebugString(), "clip_value_min shape: ", lo.shape().DebugString(),
          "clip_value_max shape: ", hi.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, t.shape()));
    const int64_t n = t.NumElements();
    const T* x = t.data<T>();
    const T* l = lo.data<T>();
    const T* h = hi.data<T>();
    const int64_t lo_step = lo.dims() == 0 ? 0 : 1, hi_step = hi.dims() == 0 ? 0 : 1;
    T* y = out->data<T>();
    for (int64_t i = 0; i < n; ++i) y[i] = std::max(std::min(x[i], h[i * hi_step]), l[i * lo_step]);
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(clip_ops) {
  RegisterTypedKernels<ClipByValueOp, float, double, int8_t, int16_t, int32_t, int64_t, uint8_t,
                       uint16_t>(KernelDefBuilder("ClipByValue").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
