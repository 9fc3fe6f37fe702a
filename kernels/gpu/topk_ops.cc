// TopKV2 on GPUs, as cpu/topk_ops.cc (the sort in
// kernels/gpu/search_kernels.cu.cc): the CPU kernel's checks
// (kernels/rearrange.h) and order; its int32 indices are read back to host
// memory.
#include <cstdint>
#include <cstring>

#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/search_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
class TopKOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const TopKPlan plan, PlanTopK(in.shape(), ctx->input(1)));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(0, plan.shape));
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(1, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    TW_RETURN_IF_ERROR(CheckCubItems("TopKV2", plan.rows * plan.n));
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const size_t scratch_bytes = TopKScratchBytes<T>(plan.rows, plan.n);
    TW_ASSIGN_OR_RETURN(
        Tensor scratch,
        DeviceTemp(ctx, DT_UINT8, TensorShape({static_cast<int64_t>(scratch_bytes)})));
    // The indices are int32, which lives in host memory (framework/
    // memory_types.h): the kernel writes them to the device, and they are
    // read back, a wait for the sort, as for TF's int32 outputs of GPU kernels.
    Tensor device_indices = *indices;
    if (ctx->output_on_host(1)) {
      TW_ASSIGN_OR_RETURN(device_indices, DeviceTemp(ctx, DT_INT32, plan.shape));
    }
    TW_CUDA_RETURN_IF_ERROR(LaunchTopK<T>(in.data<T>(), plan.rows, plan.n, plan.k,
                                          values->data<T>(), device_indices.data<int32_t>(),
                                          scratch.raw_data(), gpu->compute_stream()));
    if (ctx->output_on_host(1)) {
      TW_ASSIGN_OR_RETURN(const Tensor host, gpu->CopyToHost(device_indices));
      std::memcpy(indices->raw_data(), host.raw_data(), host.TotalBytes());
    }
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(gpu_topk_ops) {
  // int32 indices, as TF's GPU kernel (index_type int16 and int64 run on
  // the CPU).
  RegisterTypedKernels<TopKOp, float, double, int64_t>(KernelDefBuilder("TopKV2")
                                                           .Device(kDeviceGpu)
                                                           .HostMemory("k")
                                                           .TypeConstraint("index_type", DT_INT32),
                                                       "T");
}

}  // namespace gpu
}  // namespace towerflow
