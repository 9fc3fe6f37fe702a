// Where and TopKV2 on GPUs (kernels/gpu/search_kernels.cu.cc). Where's
// output size is the number of non-zero elements, which only the device
// knows: the kernel reads that count back (one small synchronous copy, as
// TF's GPU Where) before it allocates and fills the output. TopKV2 takes
// the CPU kernel's checks (kernels/rearrange.h) and order; its int32
// indices are read back to host memory.
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace gpu {
namespace {

// cub counts items in int.
absl::Status CheckItems(const char* op, int64_t items) {
  if (items >= std::numeric_limits<int>::max()) {
    return absl::UnimplementedError(
        absl::StrCat(op, " on a GPU takes fewer than 2^31 elements, got ", items));
  }
  return absl::OkStatus();
}

// Where(input): the coordinates of its non-zero elements, [count, rank]
// int64, in row-major order.
template <typename T>
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int64_t n = in.NumElements();
    TW_RETURN_IF_ERROR(CheckItems("Where", n));
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

template <typename T>
class TopKOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const TopKPlan plan, PlanTopK(in.shape(), ctx->input(1)));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(0, plan.shape));
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(1, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    TW_RETURN_IF_ERROR(CheckItems("TopKV2", plan.rows * plan.n));
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

TW_REGISTER_KERNELS(gpu_search_ops) {
  const auto gpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceGpu); };
  RegisterTypedKernels<WhereOp, bool, float, double, int64_t>(gpu("Where"), "T");
  // int32 indices, as TF's GPU kernel (index_type int16 and int64 run on
  // the CPU).
  RegisterTypedKernels<TopKOp, float, double, int64_t>(
      gpu("TopKV2").HostMemory("k").TypeConstraint("index_type", DT_INT32), "T");
}

}  // namespace gpu
}  // namespace towerflow
