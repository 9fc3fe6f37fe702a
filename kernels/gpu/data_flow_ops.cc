// DynamicPartition and DynamicStitch on GPUs, as cpu/data_flow_ops.cc:
// partitions by rows (LaunchGatherRows), stitches by row assignments
// (LaunchScatterRows). The checks and shapes are the CPU kernels'
// (kernels/rearrange.h); partitions and indices stay in host memory.
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/index_kernels.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace gpu {
namespace {

// DynamicPartition: the rows of each output, listed by the host's plan
// (partitions stay in host memory), gathered by one launch per output.
class DynamicPartitionOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("num_partitions", &num_partitions_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const PartitionPlan plan,
                        PlanDynamicPartition(data.shape(), ctx->input(1), num_partitions_));
    std::vector<Tensor*> outs(num_partitions_);
    for (int64_t k = 0; k < num_partitions_; ++k) {
      TW_ASSIGN_OR_RETURN(outs[k], ctx->allocate_output(static_cast<int>(k), plan.shapes[k]));
    }
    if (plan.rows.empty() || plan.row == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(const Tensor rows, Upload(gpu, plan.rows));
    const int64_t n = static_cast<int64_t>(plan.rows.size());
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(data.dtype(), [&](auto zero) {
      using U = decltype(zero);
      for (int64_t k = 0; k < num_partitions_ && error == cudaSuccess; ++k) {
        error = LaunchGatherRows<U>(
            static_cast<const U*>(data.raw_data()), rows.data<int64_t>() + plan.starts[k],
            static_cast<U*>(outs[k]->raw_data()), 1, 1, n, plan.starts[k + 1] - plan.starts[k],
            plan.row, gpu->compute_stream());
      }
    });
    if (!ok) return UnsupportedDtype("DynamicPartition", data.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }

 private:
  int64_t num_partitions_ = 1;
};

// DynamicStitch: the merged rows zeroed, then each data input's winning
// rows (the host's plan; indices stay in host memory) assigned by one
// LaunchScatterRows each, one row per group.
class DynamicStitchOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    std::vector<const Tensor*> indices, data;
    for (int m = 0; m < n; ++m) {
      indices.push_back(&ctx->input(m));
      data.push_back(&ctx->input(n + m));
    }
    TW_ASSIGN_OR_RETURN(const StitchPlan plan, PlanDynamicStitch(indices, data));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), gpu->compute_stream()));
    for (int m = 0; m < n; ++m) {
      const int64_t groups = static_cast<int64_t>(plan.src[m].size());
      if (groups == 0) continue;
      // LaunchScatterRows' plan: offsets (the merged rows), starts, rows.
      std::vector<int64_t> host_plan = plan.dst[m];
      for (int64_t g = 0; g <= groups; ++g) host_plan.push_back(g);
      host_plan.insert(host_plan.end(), plan.src[m].begin(), plan.src[m].end());
      TW_ASSIGN_OR_RETURN(const Tensor device_plan, Upload(gpu, host_plan));
      cudaError_t error = cudaSuccess;
      const bool ok = VisitByElementSize(out->dtype(), [&](auto zero) {
        using U = decltype(zero);
        error = LaunchScatterRows<U>(RowScatter::kAssign, false,
                                     static_cast<const U*>(data[m]->raw_data()),
                                     device_plan.data<int64_t>(), groups, groups, plan.row,
                                     static_cast<U*>(out->raw_data()), gpu->compute_stream());
      });
      if (!ok) return UnsupportedDtype("DynamicStitch", out->dtype());
      TW_CUDA_RETURN_IF_ERROR(error);
    }
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(gpu_data_flow_ops) {
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    const auto gpu = [t](const char* op) {
      return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint("T", t);
    };
    RegisterKernel(gpu("DynamicPartition").HostMemory("partitions"),
                   MakeFactory<DynamicPartitionOp>());
    RegisterKernel(gpu("DynamicStitch").HostMemory("indices"), MakeFactory<DynamicStitchOp>());
  }
}

}  // namespace gpu
}  // namespace towerflow
