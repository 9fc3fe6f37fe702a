// What the CPU's optimizer updates share (kernels/cpu/training_ops.cc and
// more_training_ops.cc): their scalar hyperparameters, the elements of a
// dense update and the rows of a sparse update and the registration of an update's ref and resource
// forms.
#ifndef TOWERFLOW_KERNELS_CPU_APPLY_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_APPLY_UTIL_H_

#include <array>
#include <memory>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/nd_index.h"

namespace towerflow {
namespace apply {

// Scalar hyperparameter `i`, read on the host (ApplyOpBase checked its
// shape).
template <typename T>
T Scalar(KernelContext* ctx, int i) {
  return *ctx->input(i).data<T>();
}

// f(var element, slot elements..., grad element) for every element of a
// dense update, over the intra-op pool (each element's step is its own).
// `cost` is the step's cost per element in cycles.
template <typename T, size_t kVars, typename F>
void ForEachElement(KernelContext* ctx, const std::array<Tensor*, kVars>& t, const Tensor& grad,
                    int64_t cost, F&& f) {
  std::array<T*, kVars> vars;
  for (size_t k = 0; k < kVars; ++k) vars[k] = t[k]->template data<T>();
  const T* g = grad.data<T>();
  ctx->intra_op_pool()->ParallelFor(grad.NumElements(), cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::apply([&](auto*... v) { f(v[i]..., g[i]); }, vars);
    }
  });
}

// f(var row, slot rows..., grad row, row length) for each of grad's rows,
// in index order (a repeated row is updated again).
template <typename T, size_t kVars, typename F>
void ForEachRow(const NdIndex& nd, const std::array<Tensor*, kVars>& t, const Tensor& grad, F&& f) {
  const int64_t m = nd.slice_size;
  for (int64_t r = 0; r < nd.rows; ++r) {
    const int64_t at = nd.offsets[r] * m;
    std::apply(
        [&](auto*... vars) { f(vars->template data<T>() + at..., grad.data<T>() + r * m, m); }, t);
  }
}

// ApplyX and ResourceApplyX, or SparseApplyX and ResourceSparseApplyX
// (indices in host memory).
template <template <typename> class K, typename... Ts>
void RegisterApply(const char* family, bool sparse = false, bool resource_only = false) {
  const char* kind = sparse ? "Sparse" : "";
  for (const bool resource : {false, true}) {
    if (resource_only && !resource) continue;
    KernelDefBuilder b(absl::StrCat(resource ? "Resource" : "", kind, "Apply", family));
    b.Device(kDeviceCpu);
    if (sparse) b.HostMemory("indices");
    (RegisterKernel(KernelDefBuilder(b).TypeConstraint<Ts>("T"),
                    [resource] { return std::make_unique<K<Ts>>(resource); }),
     ...);
  }
}

}  // namespace apply
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_APPLY_UTIL_H_
