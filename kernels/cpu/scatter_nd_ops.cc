// Indexing by N-d index: GatherNd, ScatterNd and TensorScatterUpdate, on
// the index rows resolved by kernels/nd_index.h; and the CPU's arithmetic
// of the row scatters into variables (ScatterAdd, ScatterSub, ScatterUpdate
// and their resource forms: kernels/variable_ops.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/variable_ops.h"

namespace towerflow {
namespace {

class GatherNdOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("GatherNd", params.dtype()));
    const std::vector<int64_t> dims(params.shape().dim_sizes().begin(),
                                    params.shape().dim_sizes().end());
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "params"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(GatherNdDims(nd, dims)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    const size_t run = nd.slice_size * elem;
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    ctx->intra_op_pool()->ParallelFor(nd.rows, nd.slice_size, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        std::memcpy(dst + r * run, src + nd.offsets[r] * run, run);
      }
    });
    return absl::OkStatus();
  }
};

// ScatterNd(indices, updates, shape): zeros with every update added at its
// index (duplicates summed, in index order).
template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(2), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    if (dims.empty()) return absl::InvalidArgumentError("shape must have at least one element");
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "output"));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    out->flat<T>().setZero();
    const T* u = updates.data<T>();
    T* o = out->data<T>();
    // Sequential: duplicate indices add into one slice.
    for (int64_t r = 0; r < nd.rows; ++r) {
      T* dst = o + nd.offsets[r] * nd.slice_size;
      const T* src = u + r * nd.slice_size;
      for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] += src[k];
    }
    return absl::OkStatus();
  }
};

// TensorScatterUpdate(tensor, indices, updates): a copy of tensor with
// each indexed slice replaced (a duplicate index keeps its last update).
class TensorScatterUpdateOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& tensor = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("TensorScatterUpdate", tensor.dtype()));
    const std::vector<int64_t> dims(tensor.shape().dim_sizes().begin(),
                                    tensor.shape().dim_sizes().end());
    if (dims.empty())
      return absl::InvalidArgumentError("tensor must be at least 1-D, got a scalar");
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "tensor"));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, tensor.shape()));
    if (tensor.NumElements() == 0) return absl::OkStatus();
    std::memcpy(out->raw_data(), tensor.raw_data(), tensor.NumElements() * elem);
    const size_t run = nd.slice_size * elem;
    const char* src = static_cast<const char*>(updates.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t r = 0; r < nd.rows; ++r) {
      std::memcpy(dst + nd.offsets[r] * run, src + r * run, run);
    }
    return absl::OkStatus();
  }
};

// ScatterAdd/ScatterSub into a variable: rows in index order, so a
// duplicate index adds each of its rows in turn, as ScatterNd.
template <typename T>
absl::Status ScatterArithmetic(KernelContext*, ScatterMode mode, const NdIndex& nd,
                               const Tensor& updates, Tensor* var) {
  const T* u = updates.data<T>();
  const bool scalar = updates.dims() == 0;
  T* v = var->data<T>();
  for (int64_t r = 0; r < nd.rows; ++r) {
    T* dst = v + nd.offsets[r] * nd.slice_size;
    const T* src = u + (scalar ? 0 : r * nd.slice_size);
    if (scalar && mode == ScatterMode::kAdd) {
      for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] += *src;
    } else if (scalar) {
      for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] -= *src;
    } else if (mode == ScatterMode::kAdd) {
      for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] += src[k];
    } else {
      for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] -= src[k];
    }
  }
  return absl::OkStatus();
}

// ScatterUpdate: each indexed row replaced (a duplicate keeps its last
// row), for elements of any size and for strings.
template <typename T>
void AssignRows(const NdIndex& nd, const Tensor& updates, Tensor* var) {
  const T* u = static_cast<const T*>(updates.raw_data());
  T* v = static_cast<T*>(var->raw_data());
  const bool scalar = updates.dims() == 0;
  for (int64_t r = 0; r < nd.rows; ++r) {
    T* dst = v + nd.offsets[r] * nd.slice_size;
    if (scalar) {
      std::fill(dst, dst + nd.slice_size, *u);
    } else {
      std::copy(u + r * nd.slice_size, u + (r + 1) * nd.slice_size, dst);
    }
  }
}

absl::Status ScatterAssign(KernelContext*, ScatterMode, const NdIndex& nd, const Tensor& updates,
                           Tensor* var) {
  if (var->dtype() == DT_STRING) {
    AssignRows<std::string>(nd, updates, var);
    return absl::OkStatus();
  }
  const bool ok = VisitByElementSize(
      var->dtype(), [&](auto zero) { AssignRows<decltype(zero)>(nd, updates, var); });
  return ok ? absl::OkStatus() : UnsupportedDtype("ScatterUpdate", var->dtype());
}

TW_REGISTER_KERNELS(scatter_nd_ops) {
  RegisterScatterKernels(kDeviceCpu, DT_FLOAT, false, ScatterArithmetic<float>);
  RegisterScatterKernels(kDeviceCpu, DT_DOUBLE, false, ScatterArithmetic<double>);
  RegisterScatterKernels(kDeviceCpu, DT_HALF, false, ScatterArithmetic<half>);
  RegisterScatterKernels(kDeviceCpu, DT_BFLOAT16, false, ScatterArithmetic<bfloat16>);
  RegisterScatterKernels(kDeviceCpu, DT_INT32, false, ScatterArithmetic<int32_t>);
  RegisterScatterKernels(kDeviceCpu, DT_INT64, false, ScatterArithmetic<int64_t>);
  RegisterScatterKernels(kDeviceCpu, DT_UINT8, false, ScatterArithmetic<uint8_t>);
  for (const DataType t :
       {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8, DT_INT8, DT_INT16, DT_UINT16, DT_UINT32,
        DT_UINT64, DT_BOOL, DT_HALF, DT_BFLOAT16, DT_STRING}) {
    RegisterScatterKernels(kDeviceCpu, t, true, ScatterAssign);
  }
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const DataType index : {DT_INT32, DT_INT64}) {
    RegisterKernel(cpu("GatherNd").TypeConstraint("Tindices", index),
                   [] { return std::make_unique<GatherNdOp>(); });
    RegisterKernel(cpu("TensorScatterUpdate").TypeConstraint("Tindices", index),
                   [] { return std::make_unique<TensorScatterUpdateOp>(); });
  }
  RegisterTypedKernels<ScatterNdOp, float, double, int32_t, int64_t>(
      cpu("ScatterNd").HostMemory("shape"), "T");
}

}  // namespace
}  // namespace towerflow
