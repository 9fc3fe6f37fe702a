// Where: an output sized by the data, as gpu/search_ops.cc on GPUs.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// Where(input): the coordinates of its non-zero (true) elements, one row
// each, in row-major order.
template <typename T>
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const T* x = in.data<T>();
    const int64_t n = in.NumElements();
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += x[i] != T(0);
    const int rank = in.dims();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({count, rank})));
    int64_t* row = out->data<int64_t>();
    std::vector<int64_t> coords(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (x[i] != T(0)) {
        std::copy(coords.begin(), coords.end(), row);
        row += rank;
      }
      for (int d = rank - 1; d >= 0 && ++coords[d] == in.dim_size(d); --d) coords[d] = 0;
    }
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(search_ops) {
  RegisterTypedKernels<WhereOp, bool, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("Where").Device(kDeviceCpu), "T");
}

}  // namespace towerflow
