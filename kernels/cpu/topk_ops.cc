// TopKV2: the k largest entries of each row (the last dimension) and their
// indices, largest first, equal values in index order (TensorFlow's
// topk_op); NaN ranks above every number, so the order stays a strict weak
// one. Rows run in parallel; each is a partial sort of its indices.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
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

template <typename T>
class TopKOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const TopKPlan plan, PlanTopK(in.shape(), ctx->input(1)));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(0, plan.shape));
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(1, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    const int64_t rows = plan.rows, n = plan.n, k = plan.k;
    const T* x = in.data<T>();
    T* v = values->data<T>();
    int32_t* idx = indices->data<int32_t>();
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
          idx[r * k + j] = order[j];
          v[r * k + j] = row[order[j]];
        }
      }
    });
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(topk_ops) {
  RegisterTypedKernels<TopKOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("TopKV2").Device(kDeviceCpu).HostMemory("k"), "T");
}

}  // namespace
}  // namespace towerflow
