// Joining, cutting and picking whole slices on GPUs, as cpu/concat_ops.cc:
// ConcatV2 and Pack as one pitched device copy per input, Split, SplitV and
// Unpack as one per output, GatherV2 and ResourceGather by rows
// (LaunchGatherRows). The checks and shapes are the CPU kernels'
// (kernels/rearrange.h); the axis and the indices stay in host memory.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace gpu {
namespace {

// Gathers on `axis` with `batch_dims` (GatherV2's plan, the CPU kernel's
// checks): the indices, checked on the host, are copied to the device for
// the row gather.
absl::Status GatherRows(KernelContext* ctx, const char* op, const Tensor& params,
                        const Tensor& indices, int64_t axis, int64_t batch_dims) {
  TW_ASSIGN_OR_RETURN(GatherPlan plan, PlanGather(params.shape(), indices, axis, batch_dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
  if (plan.shape.num_elements() == 0) return absl::OkStatus();
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  TW_ASSIGN_OR_RETURN(Tensor device_indices, gpu->CopyFromHost(indices));
  const int64_t per_batch = plan.outer / plan.batch;  // output rows sharing indices
  cudaError_t error = cudaSuccess;
  const bool ok = VisitByElementSize(params.dtype(), [&](auto zero) {
    using U = decltype(zero);
    const auto launch = [&](const auto* idx) {
      return LaunchGatherRows<U>(static_cast<const U*>(params.raw_data()), idx,
                                 static_cast<U*>(out->raw_data()), plan.outer, per_batch,
                                 plan.limit, plan.batch_indices, plan.inner, gpu->compute_stream());
    };
    error = indices.dtype() == DT_INT64 ? launch(device_indices.data<int64_t>())
                                        : launch(device_indices.data<int32_t>());
  });
  if (!ok) return UnsupportedDtype(op, params.dtype());
  TW_CUDA_RETURN_IF_ERROR(error);
  return absl::OkStatus();
}

class GatherV2Op : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("batch_dims", &batch_dims_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(int64_t axis, IntScalar(ctx->input(2), "axis"));
    return GatherRows(ctx, "GatherV2", ctx->input(0), ctx->input(1), axis, batch_dims_);
  }

 private:
  int64_t batch_dims_ = 0;
};

// ResourceGather: the variable's value gathered on axis batch_dims, as the
// CPU kernel.
class ResourceGatherOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("batch_dims", &batch_dims_));
    return c.GetAttr("dtype", &dtype_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const Tensor value, ReadResourceValue(ctx, 0, dtype_, "ResourceGather"));
    if (value.dims() == 0) {
      return absl::InvalidArgumentError("params must be at least 1 dimensional");
    }
    return GatherRows(ctx, "ResourceGather", value, ctx->input(1), batch_dims_, batch_dims_);
  }

 private:
  int64_t batch_dims_ = 0;
  DataType dtype_ = DT_INVALID;
};

// Each input's rows (its elements from the axis on) land side by side in
// the output's rows: a 2-D copy with the output's row pitch.
class ConcatV2Op : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    std::vector<const Tensor*> values;
    for (int i = 0; i < n; ++i) values.push_back(&ctx->input(i));
    TW_ASSIGN_OR_RETURN(ConcatPlan plan, PlanConcat(values, ctx->input(n)));
    if (n == 1) return ctx->set_output(0, *values[0]);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const size_t elem = TensorElementSize(out->dtype());
    const size_t out_row = elem * DimProduct(plan.shape, plan.axis, plan.shape.dims());
    char* dst = static_cast<char*>(out->raw_data());
    for (const Tensor* v : values) {
      const size_t row = elem * DimProduct(v->shape(), plan.axis, v->dims());
      if (row == 0) continue;
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(dst, out_row, v->raw_data(), row, row,
                                                static_cast<size_t>(plan.outer),
                                                cudaMemcpyDeviceToDevice, gpu->compute_stream()));
      dst += row;
    }
    return absl::OkStatus();
  }
};

// Pack: value i's rows (its elements from the axis on) land at offset i in
// each output row, a 2-D copy as ConcatV2's.
class PackOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("axis", &axis_); }
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs();
    std::vector<const Tensor*> values;
    for (int i = 0; i < n; ++i) values.push_back(&ctx->input(i));
    TW_ASSIGN_OR_RETURN(const PackPlan plan, PlanPack(values, axis_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const size_t row = TensorElementSize(out->dtype()) * static_cast<size_t>(plan.inner);
    char* dst = static_cast<char*>(out->raw_data());
    for (const Tensor* v : values) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(dst, row * n, v->raw_data(), row, row,
                                                static_cast<size_t>(plan.outer),
                                                cudaMemcpyDeviceToDevice, gpu->compute_stream()));
      dst += row;
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

// Split, SplitV and Unpack: piece i is the columns of the input's rows
// (its elements from the axis on) after the pieces before it, a 2-D copy.
class SplitOp : public OpKernel {
 public:
  enum class Kind { kSplit, kSplitV, kUnpack };
  explicit SplitOp(Kind kind) : kind_(kind) {}
  absl::Status Init(const KernelConstruction& c) override {
    return kind_ == Kind::kUnpack ? c.GetAttr("axis", &axis_) : absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const int k = ctx->num_outputs();
    const Tensor& in = ctx->input(kind_ == Kind::kSplit ? 1 : 0);
    absl::StatusOr<SplitPlan> planned =
        kind_ == Kind::kSplit    ? PlanSplit(in.shape(), ctx->input(0), k)
        : kind_ == Kind::kSplitV ? PlanSplitV(in.shape(), ctx->input(1), ctx->input(2), k)
                                 : PlanUnpack(in.shape(), axis_, k);
    TW_ASSIGN_OR_RETURN(const SplitPlan plan, std::move(planned));
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const size_t elem = TensorElementSize(in.dtype());
    const size_t in_row = elem * static_cast<size_t>(in.dim_size(plan.axis) * plan.inner);
    const char* src = static_cast<const char*>(in.raw_data());
    for (int i = 0; i < k; ++i) {
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(i, plan.shapes[i]));
      const size_t row = elem * static_cast<size_t>(plan.sizes[i] * plan.inner);
      if (row > 0 && plan.outer > 0) {
        TW_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(out->raw_data(), row, src, in_row, row,
                                                  static_cast<size_t>(plan.outer),
                                                  cudaMemcpyDeviceToDevice, gpu->compute_stream()));
      }
      src += row;
    }
    return absl::OkStatus();
  }

 private:
  const Kind kind_;
  int64_t axis_ = 0;
};

}  // namespace

TW_REGISTER_KERNELS(gpu_concat_ops) {
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    RegisterKernel(KernelDefBuilder("ConcatV2")
                       .Device(kDeviceGpu)
                       .Capturable()
                       .TypeConstraint("T", t)
                       .HostMemory("axis"),
                   MakeFactory<ConcatV2Op>());
    const auto gpu = [t](const char* op) {
      return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint("T", t);
    };
    RegisterKernel(gpu("Pack"), MakeFactory<PackOp>());
    RegisterKernel(gpu("Unpack"), [] { return std::make_unique<SplitOp>(SplitOp::Kind::kUnpack); });
    RegisterKernel(gpu("Split").HostMemory("split_dim"),
                   [] { return std::make_unique<SplitOp>(SplitOp::Kind::kSplit); });
    for (DataType len : {DT_INT8, DT_INT32, DT_INT64}) {
      RegisterKernel(gpu("SplitV")
                         .TypeConstraint("Tlen", len)
                         .HostMemory("size_splits")
                         .HostMemory("split_dim"),
                     [] { return std::make_unique<SplitOp>(SplitOp::Kind::kSplitV); });
    }
    for (DataType index : {DT_INT32, DT_INT64}) {
      RegisterKernel(KernelDefBuilder("GatherV2")
                         .Device(kDeviceGpu)
                         .Capturable()
                         .TypeConstraint("Tparams", t)
                         .TypeConstraint("Tindices", index)
                         .HostMemory("indices")
                         .HostMemory("axis"),
                     MakeFactory<GatherV2Op>());
      RegisterKernel(KernelDefBuilder("ResourceGather")
                         .Device(kDeviceGpu)
                         .Capturable()
                         .TypeConstraint("dtype", t)
                         .TypeConstraint("Tindices", index)
                         .HostMemory("indices"),
                     MakeFactory<ResourceGatherOp>());
    }
  }
}

}  // namespace gpu
}  // namespace towerflow
