// Indexing by N-d index rows on GPUs, as cpu/scatter_nd_ops.cc: GatherNd,
// ScatterNd, TensorScatterUpdate and the scatters into variables
// (ScatterAdd/Sub/Update and their resource forms). Indices stay in host
// memory: the CPU kernels' plans (kernels/nd_index.h) check them and give
// the same errors, and what the device needs of them (slice offsets) is
// copied over once per call.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/index_kernels.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/variable_ops.h"

namespace towerflow {
namespace gpu {
namespace {

std::vector<int64_t> Dims(const TensorShape& shape) {
  return std::vector<int64_t>(shape.dim_sizes().begin(), shape.dim_sizes().end());
}

// TF's bad_indices_policy: the GPU kernels take the default (a bad index
// is an error) and refuse IGNORE, which the CPU kernels implement.
class NdKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(const BadIndices bad, BadIndicesOf(c));
    if (bad == BadIndices::kIgnore) {
      return absl::UnimplementedError(
          "bad_indices_policy IGNORE has CPU kernels only: place the node on the CPU");
    }
    return absl::OkStatus();
  }
};

// GatherNd: row r of the output is the params slice at offsets[r], a row
// gather over params as [slices, slice_size].
class GatherNdOp : public NdKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const std::vector<int64_t> dims = Dims(params.shape());
    TW_ASSIGN_OR_RETURN(const NdIndex nd, ResolveNd(ctx->input(1), dims, "params"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(GatherNdDims(nd, dims)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(Tensor offsets, Upload(gpu, nd.offsets));
    const int64_t slices = params.NumElements() / nd.slice_size;
    cudaError_t error = cudaSuccess;
    const bool ok = VisitByElementSize(params.dtype(), [&](auto zero) {
      using U = decltype(zero);
      error = LaunchGatherRows<U>(static_cast<const U*>(params.raw_data()), offsets.data<int64_t>(),
                                  static_cast<U*>(out->raw_data()), 1, 1, slices, nd.rows,
                                  nd.slice_size, gpu->compute_stream());
    });
    if (!ok) return UnsupportedDtype("GatherNd", params.dtype());
    TW_CUDA_RETURN_IF_ERROR(error);
    return absl::OkStatus();
  }
};

template <typename U>
absl::Status ScatterInto(GpuDevice* gpu, RowScatter mode, const NdIndex& nd, const Tensor& updates,
                         Tensor* out) {
  if (nd.rows == 0 || nd.slice_size == 0) return absl::OkStatus();
  int64_t groups = 0;
  TW_ASSIGN_OR_RETURN(Tensor plan, Upload(gpu, GroupRowsBySlice(nd, &groups)));
  TW_CUDA_RETURN_IF_ERROR(LaunchScatterRows<U>(
      mode, updates.dims() == 0, static_cast<const U*>(updates.raw_data()), plan.data<int64_t>(),
      groups, nd.rows, nd.slice_size, static_cast<U*>(out->raw_data()), gpu->compute_stream()));
  return absl::OkStatus();
}

// The GPU's arithmetic of the scatters into variables (kernels/
// variable_ops.h): ScatterAdd and ScatterSub for T ...
template <typename T>
absl::Status ScatterArithmetic(KernelContext* ctx, ScatterMode mode, const NdIndex& nd,
                               const Tensor& updates, Tensor* var) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  return ScatterInto<T>(gpu, mode == ScatterMode::kAdd ? RowScatter::kAdd : RowScatter::kSub, nd,
                        updates, var);
}

// ... and ScatterUpdate, which moves elements as bytes.
absl::Status ScatterAssign(KernelContext* ctx, ScatterMode, const NdIndex& nd,
                           const Tensor& updates, Tensor* var) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  absl::Status status;
  const bool ok = VisitByElementSize(var->dtype(), [&](auto zero) {
    status = ScatterInto<decltype(zero)>(gpu, RowScatter::kAssign, nd, updates, var);
  });
  if (!ok) return UnsupportedDtype("ScatterUpdate", var->dtype());
  return status;
}

// ScatterNd(indices, updates, shape): zeros, each update added at its index
// (duplicates summed in index order, as on the CPU).
template <typename T>
class ScatterNdOp : public NdKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(2), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    if (dims.empty()) return absl::InvalidArgumentError("shape must have at least one element");
    TW_ASSIGN_OR_RETURN(const NdIndex nd, ResolveNd(indices, dims, "output"));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), gpu->compute_stream()));
    return ScatterInto<T>(gpu, RowScatter::kAdd, nd, updates, out);
  }
};

// TensorScatterUpdate(tensor, indices, updates): tensor with each indexed
// slice replaced (a duplicate index keeps its last update).
class TensorScatterUpdateOp : public NdKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tensor = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    const std::vector<int64_t> dims = Dims(tensor.shape());
    if (dims.empty()) {
      return absl::InvalidArgumentError("tensor must be at least 1-D, got a scalar");
    }
    TW_ASSIGN_OR_RETURN(const NdIndex nd, ResolveNd(indices, dims, "tensor"));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, tensor.shape()));
    if (tensor.NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    if (out->raw_data() != tensor.raw_data()) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out->raw_data(), tensor.raw_data(),
                                              tensor.TotalBytes(), cudaMemcpyDeviceToDevice,
                                              gpu->compute_stream()));
    }
    absl::Status status;
    const bool ok = VisitByElementSize(tensor.dtype(), [&](auto zero) {
      status = ScatterInto<decltype(zero)>(gpu, RowScatter::kAssign, nd, updates, out);
    });
    if (!ok) return UnsupportedDtype("TensorScatterUpdate", tensor.dtype());
    return status;
  }
};

}  // namespace

TW_REGISTER_KERNELS(gpu_scatter_nd_ops) {
  const auto gpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable();
  };
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    for (DataType index : {DT_INT32, DT_INT64}) {
      RegisterKernel(gpu("GatherNd")
                         .TypeConstraint("Tparams", t)
                         .TypeConstraint("Tindices", index)
                         .HostMemory("indices"),
                     MakeFactory<GatherNdOp>());
      RegisterKernel(gpu("TensorScatterUpdate")
                         .TypeConstraint("T", t)
                         .TypeConstraint("Tindices", index)
                         .HostMemory("indices"),
                     MakeFactory<TensorScatterUpdateOp>());
    }
  }
  for (DataType index : {DT_INT32, DT_INT64}) {
    RegisterKernel(gpu("ScatterNd")
                       .TypeConstraint("T", DT_FLOAT)
                       .TypeConstraint("Tindices", index)
                       .HostMemory("indices")
                       .HostMemory("shape"),
                   MakeFactory<ScatterNdOp<float>>());
    RegisterKernel(gpu("ScatterNd")
                       .TypeConstraint("T", DT_DOUBLE)
                       .TypeConstraint("Tindices", index)
                       .HostMemory("indices")
                       .HostMemory("shape"),
                   MakeFactory<ScatterNdOp<double>>());
    RegisterKernel(gpu("ScatterNd")
                       .TypeConstraint("T", DT_INT64)
                       .TypeConstraint("Tindices", index)
                       .HostMemory("indices")
                       .HostMemory("shape"),
                   MakeFactory<ScatterNdOp<int64_t>>());
  }
  RegisterScatterKernels(kDeviceGpu, DT_FLOAT, false, ScatterArithmetic<float>);
  RegisterScatterKernels(kDeviceGpu, DT_DOUBLE, false, ScatterArithmetic<double>);
  RegisterScatterKernels(kDeviceGpu, DT_INT64, false, ScatterArithmetic<int64_t>);
  for (DataType t : {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT64, DT_BOOL}) {
    RegisterScatterKernels(kDeviceGpu, t, true, ScatterAssign);
  }
}

}  // namespace gpu
}  // namespace towerflow
