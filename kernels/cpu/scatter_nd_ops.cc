// Indexing by N-d index: GatherNd, ScatterNd, TensorScatterUpdate and
// TensorScatterAdd/Sub/Max/Min (and TF 1's ScatterNdNonAliasingAdd, as
// TensorScatterAdd), on the index rows resolved by
// kernels/nd_index.h (TF's bad_indices_policy: an error, or IGNORE); and the CPU's arithmetic
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
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// The N-d index kernels, which take TF's bad_indices_policy attr.
class NdKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(bad_, BadIndicesOf(c));
    return absl::OkStatus();
  }

 protected:
  BadIndices bad_ = BadIndices::kError;
};

// GatherNd(params, indices): the params slice of each index row (zeros for
// a row the policy ignores).
// ResourceGatherNd(resource, indices) (`resource`) gathers from the
// variable's value.
class GatherNdOp : public NdKernel {
 public:
  explicit GatherNdOp(bool resource = false) : resource_(resource) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (resource_) TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    return NdKernel::Init(c);
  }
  absl::Status Compute(KernelContext* ctx) override {
    Tensor params = ctx->input(0);
    if (resource_) {
      TW_ASSIGN_OR_RETURN(params, ReadResourceValue(ctx, 0, dtype_, "ResourceGatherNd"));
    }
    const Tensor& indices = ctx->input(1);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("GatherNd", params.dtype()));
    const std::vector<int64_t> dims(params.shape().dim_sizes().begin(),
                                    params.shape().dim_sizes().end());
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "params", bad_));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(GatherNdDims(nd, dims)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return absl::OkStatus();
    const size_t run = nd.slice_size * elem;
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    ctx->intra_op_pool()->ParallelFor(nd.rows, nd.slice_size, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (nd.offsets[r] == kIgnoredRow) {
          std::memset(dst + r * run, 0, run);
        } else {
          std::memcpy(dst + r * run, src + nd.offsets[r] * run, run);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const bool resource_;
  DataType dtype_ = DT_INVALID;
};

// Applies each update slice to its row of `out` in index order, so a
// duplicate index takes its updates in turn; ignored rows are skipped.
template <typename T, typename Fn>
void ApplyRows(const NdIndex& nd, const Tensor& updates, Tensor* out, Fn fn) {
  const T* u = updates.data<T>();
  T* o = out->data<T>();
  for (int64_t r = 0; r < nd.rows; ++r) {
    if (nd.offsets[r] == kIgnoredRow) continue;
    T* dst = o + nd.offsets[r] * nd.slice_size;
    const T* src = u + r * nd.slice_size;
    for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] = fn(dst[k], src[k]);
  }
}

// ScatterNd(indices, updates, shape): zeros with every update added at its
// index (duplicates summed, in index order).
template <typename T>
class ScatterNdOp : public NdKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(2), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    if (dims.empty()) return absl::InvalidArgumentError("shape must have at least one element");
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "output", bad_));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    out->flat<T>().setZero();
    ApplyRows<T>(nd, updates, out, [](T a, T b) { return a + b; });
    return absl::OkStatus();
  }
};

// The copy of `tensor` (input 0) a TensorScatter* op updates, with its
// index rows resolved against it.
absl::StatusOr<NdIndex> CopyForScatter(KernelContext* ctx, const char* op, BadIndices bad,
                                       Tensor** out, const char* what = "tensor") {
  const Tensor& tensor = ctx->input(0);
  const Tensor& indices = ctx->input(1);
  const Tensor& updates = ctx->input(2);
  TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize(op, tensor.dtype()));
  const std::vector<int64_t> dims(tensor.shape().dim_sizes().begin(),
                                  tensor.shape().dim_sizes().end());
  if (dims.empty()) return absl::InvalidArgumentError("tensor must be at least 1-D, got a scalar");
  TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, what, bad));
  TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
  TW_ASSIGN_OR_RETURN(*out, ctx->allocate_output(0, tensor.shape()));
  if (tensor.NumElements() > 0) {
    std::memcpy((*out)->raw_data(), tensor.raw_data(), tensor.NumElements() * elem);
  }
  return nd;
}

// TensorScatterUpdate(tensor, indices, updates): a copy of tensor with
// each indexed slice replaced (a duplicate index keeps its last update).
class TensorScatterUpdateOp : public NdKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    Tensor* out = nullptr;
    TW_ASSIGN_OR_RETURN(const NdIndex nd, CopyForScatter(ctx, "TensorScatterUpdate", bad_, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const size_t run = out->TotalBytes() / out->NumElements() * nd.slice_size;
    const char* src = static_cast<const char*>(ctx->input(2).raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t r = 0; r < nd.rows; ++r) {
      if (nd.offsets[r] != kIgnoredRow) std::memcpy(dst + nd.offsets[r] * run, src + r * run, run);
    }
    return absl::OkStatus();
  }
};

// TensorScatterAdd, Sub, Max and Min: a copy of tensor with each update
// combined into its slice, in index order (TF's: std::max / std::min, so a
// NaN already in the tensor stays).
enum class Combine { kAdd, kSub, kMax, kMin };
// kNonAliasing: ScatterNdNonAliasingAdd, whose message names "shape" alone.
template <Combine kHow, bool kNonAliasing = false>
struct TensorScatterArith {
  template <typename T>
  class Op : public NdKernel {
   public:
    absl::Status Compute(KernelContext* ctx) override {
      Tensor* out = nullptr;
      TW_ASSIGN_OR_RETURN(const NdIndex nd, CopyForScatter(ctx, "TensorScatter", bad_, &out,
                                                           kNonAliasing ? "" : "tensor"));
      if (out->NumElements() == 0) return absl::OkStatus();
      ApplyRows<T>(nd, ctx->input(2), out, [](T a, T b) {
        if constexpr (kHow == Combine::kAdd) return static_cast<T>(a + b);
        if constexpr (kHow == Combine::kSub) return static_cast<T>(a - b);
        if constexpr (kHow == Combine::kMax) return std::max(a, b);
        if constexpr (kHow == Combine::kMin) return std::min(a, b);
      });
      return absl::OkStatus();
    }
  };
};

// The arithmetic scatters into a variable (Scatter{Add,Sub,Mul,Div,Max,Min}
// and their Nd and resource forms): rows in index order, so a duplicate
// index combines each of its rows in turn, as TF's CPU kernels. Integer
// division by zero is TF's error, and nothing is written then.
template <typename T>
absl::Status ScatterArithmetic(KernelContext*, ScatterMode mode, const NdIndex& nd,
                               const Tensor& updates, Tensor* var) {
  const T* u = updates.data<T>();
  const int64_t step = updates.dims() == 0 ? 0 : 1;  // a scalar updates every element
  if constexpr (std::is_integral_v<T>) {
    if (mode == ScatterMode::kDiv) {
      for (int64_t i = 0; i < updates.NumElements(); ++i) {
        if (u[i] == T(0)) return absl::InvalidArgumentError("updates must not contain 0");
      }
    }
  }
  T* v = var->data<T>();
  const auto apply = [&](auto combine) {
    for (int64_t r = 0; r < nd.rows; ++r) {
      if (nd.offsets[r] == kIgnoredRow) continue;
      T* dst = v + nd.offsets[r] * nd.slice_size;
      if (step == 0) {
        const T value = *u;
        for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] = combine(dst[k], value);
      } else {
        const T* src = u + r * nd.slice_size;
        for (int64_t k = 0; k < nd.slice_size; ++k) dst[k] = combine(dst[k], src[k]);
      }
    }
  };
  switch (mode) {
    case ScatterMode::kAdd:
      apply([](T a, T b) { return static_cast<T>(a + b); });
      break;
    case ScatterMode::kSub:
      apply([](T a, T b) { return static_cast<T>(a - b); });
      break;
    case ScatterMode::kMul:
      apply([](T a, T b) { return static_cast<T>(a * b); });
      break;
    case ScatterMode::kDiv:
      apply([](T a, T b) { return static_cast<T>(a / b); });
      break;
    case ScatterMode::kMax:
      apply([](T a, T b) { return std::max(a, b); });
      break;
    case ScatterMode::kMin:
      apply([](T a, T b) { return std::min(a, b); });
      break;
    case ScatterMode::kUpdate:
      apply([](T, T b) { return b; });
      break;
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
    if (nd.offsets[r] == kIgnoredRow) continue;
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
  const bool ok = VisitByElementSizeCpu(
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
  // The other modes, and the N-d forms, on the CPU only.
  const std::vector<ScatterMode> others = {ScatterMode::kMul, ScatterMode::kDiv, ScatterMode::kMax,
                                           ScatterMode::kMin};
  const std::vector<ScatterMode> nd_modes = {ScatterMode::kAdd, ScatterMode::kSub,
                                             ScatterMode::kMax, ScatterMode::kMin};
  const std::pair<DataType, ScatterFn> arithmetic[] = {
      {DT_FLOAT, ScatterArithmetic<float>},   {DT_DOUBLE, ScatterArithmetic<double>},
      {DT_HALF, ScatterArithmetic<half>},     {DT_BFLOAT16, ScatterArithmetic<bfloat16>},
      {DT_INT32, ScatterArithmetic<int32_t>}, {DT_INT64, ScatterArithmetic<int64_t>},
      {DT_UINT8, ScatterArithmetic<uint8_t>}};
  for (const auto& [dtype, fn] : arithmetic) {
    RegisterScatterVarKernels(kDeviceCpu, dtype, others, false, fn);
    RegisterScatterVarKernels(kDeviceCpu, dtype, nd_modes, true, fn);
  }
  for (const DataType t :
       {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8, DT_INT8, DT_INT16, DT_UINT16, DT_UINT32,
        DT_UINT64, DT_BOOL, DT_HALF, DT_BFLOAT16, DT_STRING}) {
    RegisterScatterKernels(kDeviceCpu, t, true, ScatterAssign);
    RegisterScatterVarKernels(kDeviceCpu, t, {ScatterMode::kUpdate}, true, ScatterAssign);
  }
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  for (const DataType index : {DT_INT32, DT_INT64}) {
    RegisterKernel(cpu("GatherNd").TypeConstraint("Tindices", index),
                   [] { return std::make_unique<GatherNdOp>(); });
    RegisterKernel(cpu("ResourceGatherNd").TypeConstraint("Tindices", index),
                   [] { return std::make_unique<GatherNdOp>(true); });
    RegisterKernel(cpu("TensorScatterUpdate").TypeConstraint("Tindices", index),
                   [] { return std::make_unique<TensorScatterUpdateOp>(); });
    const auto arith = [&](const char* op) { return cpu(op).TypeConstraint("Tindices", index); };
    RegisterTypedKernels<TensorScatterArith<Combine::kAdd>::Op, float, double, int32_t, int64_t>(
        arith("TensorScatterAdd"), "T");
    RegisterTypedKernels<TensorScatterArith<Combine::kSub>::Op, float, double, int32_t, int64_t>(
        arith("TensorScatterSub"), "T");
    RegisterTypedKernels<TensorScatterArith<Combine::kMax>::Op, float, double, int32_t, int64_t>(
        arith("TensorScatterMax"), "T");
    RegisterTypedKernels<TensorScatterArith<Combine::kMin>::Op, float, double, int32_t, int64_t>(
        arith("TensorScatterMin"), "T");
    RegisterTypedKernels<TensorScatterArith<Combine::kAdd, true>::Op, float, double, half, bfloat16,
                         int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                         complex64, complex128, bool>(arith("ScatterNdNonAliasingAdd"), "T");
  }
  RegisterTypedKernels<ScatterNdOp, float, double, int32_t, int64_t>(
      cpu("ScatterNd").HostMemory("shape"), "T");
}

}  // namespace
}  // namespace towerflow
