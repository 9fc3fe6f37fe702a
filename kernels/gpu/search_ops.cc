// Where on GPUs (kernels/gpu/search_kernels.cu.cc). Its output size is the
// number of non-zero elements, which only the device knows: the kernel
// reads that count back (one small synchronous copy, as TF's GPU Where)
// before it allocates and fills the output.
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/gpu/search_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace gpu {
namespace {

// Where(input): the coordinates of its non-zero elements, [count, rank]
// int64, in row-major order.
template <typename T>
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int64_t n = in.NumElements();
    TW_RETURN_IF_ERROR(CheckCubItems("Where", n));
    if (in.dims() > kMaxIndexRank) {
      return absl::UnimplementedError(absl::StrCat("Where on a GPU takes at most ", kMaxIndexRank,
                                                   " dims, got ", in.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(Tensor positions, DeviceTemp(ctx, DT_INT64, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor count, DeviceTemp(ctx, DT_INT64, TensorShape({})));
    const size_t scratch_bytes = WhereScratchBytes(n);
    TW_ASSIGN_OR_RETURN(
        Tensor scratch,
        DeviceTemp(ctx, DT_UINT8, TensorShape({static_cast<int64_t>(scratch_bytes)})));
    TW_CUDA_RETURN_IF_ERROR(LaunchWhereCount<T>(in.data<T>(), n, positions.data<int64_t>(),
                                                count.data<int64_t>(), scratch.raw_data(),
                                                scratch_bytes, gpu->compute_stream()));
    TW_ASSIGN_OR_RETURN(const Tensor host_count, gpu->CopyToHost(count));
    const int64_t rows = *host_count.data<int64_t>();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({rows, in.dims()})));
    if (out->NumElements() == 0) return absl::OkStatus();
    WhereShape s;
    s.n = n;
    s.rank = in.dims();
    for (int d = 0; d < in.dims(); ++d) s.dims[d] = in.dim_size(d);
    TW_CUDA_RETURN_IF_ERROR(LaunchWhereCoords<T>(in.data<T>(), positions.data<int64_t>(), s,
                                                 out->data<int64_t>(), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(gpu_search_ops) {
  const auto gpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceGpu); };
  RegisterTypedKernels<WhereOp, bool, float, double, int64_t>(gpu("Where"), "T");
}

}  // namespace gpu
}  // namespace towerflow
