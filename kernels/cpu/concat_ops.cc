// Kernels that join, split and pick whole slices: ConcatV2/Concat, Pack,
// Split, SplitV, Unpack, GatherV2/Gather, ResourceGather and OneHot.
//
// Each views its tensors as [outer, axis, inner] and moves contiguous runs
// of axis*inner elements with memcpy, sharded over `outer` on the intra-op
// pool when there is enough to move.
#include <cstring>
#include <vector>

#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// For each of `outer` rows, copies pieces[k] (bytes[k] bytes per row) one
// after another into the output row.
void ConcatRows(ThreadPool* pool, int64_t outer, const std::vector<const char*>& pieces,
                const std::vector<int64_t>& bytes, char* out) {
  int64_t row_bytes = 0;
  for (int64_t b : bytes) row_bytes += b;
  pool->ParallelFor(outer, row_bytes, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      char* dst = out + r * row_bytes;
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (bytes[k] == 0) continue;
        std::memcpy(dst, pieces[k] + r * bytes[k], bytes[k]);
        dst += bytes[k];
      }
    }
  });
}

// ConcatRows for strings, copied as objects: counts[k] elements of pieces[k]
// per row.
void ConcatStringRows(int64_t outer, const std::vector<const std::string*>& pieces,
                      const std::vector<int64_t>& counts, std::string* out) {
  for (int64_t r = 0; r < outer; ++r) {
    for (size_t k = 0; k < pieces.size(); ++k) {
      const std::string* src = pieces[k] + r * counts[k];
      out = std::copy(src, src + counts[k], out);
    }
  }
}

// The inverse: splits each input row into pieces.
void SplitRows(ThreadPool* pool, int64_t outer, const char* in, const std::vector<char*>& pieces,
               const std::vector<int64_t>& bytes) {
  int64_t row_bytes = 0;
  for (int64_t b : bytes) row_bytes += b;
  pool->ParallelFor(outer, row_bytes, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const char* src = in + r * row_bytes;
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (bytes[k] == 0) continue;
        std::memcpy(pieces[k] + r * bytes[k], src, bytes[k]);
        src += bytes[k];
      }
    }
  });
}

// ConcatV2(values..., axis) and Concat(axis, values...).
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(bool axis_first) : axis_first_(axis_first) {}
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    std::vector<const Tensor*> values;
    for (int i = 0; i < n; ++i) values.push_back(&ctx->input(first + i));
    TW_ASSIGN_OR_RETURN(ConcatPlan plan, PlanConcat(values, ctx->input(axis_first_ ? 0 : n)));
    if (n == 1) return ctx->set_output(0, *values[0]);
    if (values[0]->dtype() == DT_STRING) {
      // Strings (classification outputs merged over towers).
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
      std::vector<const std::string*> pieces;
      std::vector<int64_t> counts;
      for (const Tensor* v : values) {
        pieces.push_back(v->data<std::string>());
        counts.push_back(DimProduct(v->shape(), plan.axis, v->dims()));
      }
      ConcatStringRows(plan.outer, pieces, counts, out->data<std::string>());
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("Concat", values[0]->dtype()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    std::vector<const char*> pieces;
    std::vector<int64_t> bytes;
    for (const Tensor* v : values) {
      pieces.push_back(static_cast<const char*>(v->raw_data()));
      bytes.push_back(static_cast<int64_t>(elem) * DimProduct(v->shape(), plan.axis, v->dims()));
    }
    ConcatRows(ctx->intra_op_pool(), plan.outer, pieces, bytes,
               static_cast<char*>(out->raw_data()));
    return absl::OkStatus();
  }

 private:
  const bool axis_first_;
};

class PackOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("axis", &axis_); }
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs();
    std::vector<const Tensor*> values;
    for (int i = 0; i < n; ++i) values.push_back(&ctx->input(i));
    TW_ASSIGN_OR_RETURN(const PackPlan plan, PlanPack(values, axis_));
    const Tensor& v0 = ctx->input(0);
    if (v0.dtype() == DT_STRING) {
      // Strings (TF's saver packs its checkpoint prefixes) are copied as
      // objects, row by row.
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
      std::vector<const std::string*> pieces;
      for (int i = 0; i < n; ++i) pieces.push_back(ctx->input(i).data<std::string>());
      ConcatStringRows(plan.outer, pieces, std::vector<int64_t>(n, plan.inner),
                       out->data<std::string>());
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("Pack", v0.dtype()));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    if (plan.shape.num_elements() == 0) return absl::OkStatus();
    const int64_t inner_bytes = static_cast<int64_t>(elem) * plan.inner;
    std::vector<const char*> pieces;
    for (int i = 0; i < n; ++i)
      pieces.push_back(static_cast<const char*>(ctx->input(i).raw_data()));
    ConcatRows(ctx->intra_op_pool(), plan.outer, pieces, std::vector<int64_t>(n, inner_bytes),
               static_cast<char*>(out->raw_data()));
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

// ParallelConcat(values...) with attr `shape`: the N values, each [1, R...],
// one after another as the output [N, R...] (TF runs it as an update of a
// buffer per value; here it is one copy). `shape` must hold exactly N rows:
// TF leaves rows no value fills uninitialized.
class ParallelConcatOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("shape", &shape_); }
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs();
    TW_ASSIGN_OR_RETURN(const TensorShape shape, shape_.AsTensorShape());
    if (shape.dims() < 1 || shape.dim_size(0) != n) {
      return absl::InvalidArgumentError(absl::StrCat("ParallelConcat's shape ", shape.DebugString(),
                                                     " needs one row for each of its ", n,
                                                     " values"));
    }
    for (int i = 0; i < n; ++i) {
      const TensorShape& v = ctx->input(i).shape();
      if (v.dims() != shape.dims()) {
        return absl::InvalidArgumentError(
            absl::StrCat("value and update shape doesn't match: ", shape.DebugString(), " vs. ",
                         v.DebugString()));
      }
      for (int d = 1; d < v.dims(); ++d) {
        if (v.dim_size(d) != shape.dim_size(d)) {
          return absl::InvalidArgumentError(absl::StrCat("value and update shape doesn't match ",
                                                         shape.DebugString(), " vs. ",
                                                         v.DebugString()));
        }
      }
      if (v.dim_size(0) != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("update shape doesn't match: ", v.DebugString()));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const int64_t row = shape.num_elements() / n;
    if (ctx->input(0).dtype() == DT_STRING) {
      std::vector<const std::string*> pieces;
      for (int i = 0; i < n; ++i) pieces.push_back(ctx->input(i).data<std::string>());
      ConcatStringRows(1, pieces, std::vector<int64_t>(n, row), out->data<std::string>());
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("ParallelConcat", out->dtype()));
    if (row == 0) return absl::OkStatus();
    std::vector<const char*> pieces;
    for (int i = 0; i < n; ++i)
      pieces.push_back(static_cast<const char*>(ctx->input(i).raw_data()));
    ConcatRows(ctx->intra_op_pool(), 1, pieces,
               std::vector<int64_t>(n, static_cast<int64_t>(elem) * row),
               static_cast<char*>(out->raw_data()));
    return absl::OkStatus();
  }

 private:
  PartialTensorShape shape_;
};

// Writes the pieces of `in` that `plan` cuts to outputs 0..k-1.
absl::Status SplitInto(KernelContext* ctx, const Tensor& in, const SplitPlan& plan) {
  TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize(ctx->op(), in.dtype()));
  std::vector<char*> pieces;
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < plan.sizes.size(); ++i) {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(i), plan.shapes[i]));
    pieces.push_back(static_cast<char*>(out->raw_data()));
    bytes.push_back(static_cast<int64_t>(elem) * plan.sizes[i] * plan.inner);
  }
  if (in.NumElements() > 0) {
    SplitRows(ctx->intra_op_pool(), plan.outer, static_cast<const char*>(in.raw_data()), pieces,
              bytes);
  }
  return absl::OkStatus();
}

// Split(split_dim, value) into num_split equal parts.
class SplitOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const SplitPlan plan,
                        PlanSplit(in.shape(), ctx->input(0), ctx->num_outputs()));
    return SplitInto(ctx, in, plan);
  }
};

// SplitV(value, size_splits, split_dim); one size may be -1.
class SplitVOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const SplitPlan plan,
                        PlanSplitV(in.shape(), ctx->input(1), ctx->input(2), ctx->num_outputs()));
    return SplitInto(ctx, in, plan);
  }
};

class UnpackOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("axis", &axis_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const SplitPlan plan, PlanUnpack(in.shape(), axis_, ctx->num_outputs()));
    return SplitInto(ctx, in, plan);
  }

 private:
  int64_t axis_ = 0;
};

// out[outer, i, inner] = params[outer, indices[i], inner], with every index
// checked to lie in [0, params.dim(axis)).
// With batch_dims b, batch element j of the first b dims gathers with its
// own indices: out[j, o, i, inner] = params[j, o, indices[j, i], inner].
absl::Status Gather(KernelContext* ctx, const Tensor& params, const Tensor& indices, int64_t axis,
                    int64_t batch_dims = 0) {
  TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("Gather", params.dtype()));
  TW_ASSIGN_OR_RETURN(GatherPlan plan, PlanGather(params.shape(), indices, axis, batch_dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
  if (plan.shape.num_elements() == 0) return absl::OkStatus();
  const int64_t n = plan.batch_indices;
  const int64_t per_batch = plan.outer / plan.batch;  // output rows sharing indices
  const int64_t inner_bytes = static_cast<int64_t>(elem) * plan.inner;
  const char* src = static_cast<const char*>(params.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  ctx->intra_op_pool()->ParallelFor(plan.outer * n, inner_bytes, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t o = k / n, i = k % n;
      const int64_t index = GatherIndex(indices, (o / per_batch) * n + i);
      std::memcpy(dst + k * inner_bytes, src + (o * plan.limit + index) * inner_bytes, inner_bytes);
    }
  });
  return absl::OkStatus();
}

// GatherV2(params, indices, axis) and Gather(params, indices) (axis 0).
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(bool has_axis) : has_axis_(has_axis) {}
  absl::Status Init(const KernelConstruction& c) override {
    return has_axis_ ? c.GetAttr("batch_dims", &batch_dims_) : absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    int64_t axis = 0;
    if (has_axis_) {
      TW_ASSIGN_OR_RETURN(axis, IntScalar(ctx->input(2), "axis"));
    }
    return Gather(ctx, params, ctx->input(1), axis, batch_dims_);
  }

 private:
  const bool has_axis_;
  int64_t batch_dims_ = 0;
};

// ResourceGather(resource, indices) reads the variable, then gathers on
// axis batch_dims (0 unless batch_dims says otherwise), as GatherV2.
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
    return Gather(ctx, value, ctx->input(1), batch_dims_, batch_dims_);
  }

 private:
  int64_t batch_dims_ = 0;
  DataType dtype_ = DT_INVALID;
};

// OneHot(indices, depth, on_value, off_value) with `axis` (-1 = last).
// Indices outside [0, depth) give an all-off row.
template <typename T>
class OneHotOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("axis", &axis_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    TW_ASSIGN_OR_RETURN(int64_t depth, IntScalar(ctx->input(1), "depth"));
    if (depth < 0) {
      return absl::InvalidArgumentError(absl::StrCat("depth must be non-negative, got: ", depth));
    }
    for (int i = 2; i < 4; ++i) {
      if (ctx->input(i).dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(i == 2 ? "on_value" : "off_value",
                         " must be a scalar, but got: ", ctx->input(i).shape().DebugString()));
      }
    }
    const int rank = indices.dims() + 1;
    if (axis_ < -1 || axis_ >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Expected axis to be -1 or between [0, ", rank,
                                                     ").  But received: ", axis_));
    }
    const int a = axis_ == -1 ? rank - 1 : static_cast<int>(axis_);
    std::vector<int64_t> dims(indices.shape().dim_sizes().begin(),
                              indices.shape().dim_sizes().end());
    dims.insert(dims.begin() + a, depth);
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const T on = *ctx->input(2).data<T>(), off = *ctx->input(3).data<T>();
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), off);
    const int64_t inner = DimProduct(indices.shape(), a, indices.dims());
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      const int64_t idx =
          indices.dtype() == DT_UINT8 ? indices.data<uint8_t>()[i] : IntAt(indices, i);
      if (idx < 0 || idx >= depth) continue;
      const int64_t oi = i / inner, ii = i % inner;
      o[(oi * depth + idx) * inner + ii] = on;
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = -1;
};

TW_REGISTER_KERNELS(concat_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("ConcatV2"), [] { return std::make_unique<ConcatOp>(false); });
  RegisterKernel(cpu("Concat"), [] { return std::make_unique<ConcatOp>(true); });
  RegisterKernel(cpu("Pack"), MakeFactory<PackOp>());
  RegisterKernel(cpu("ParallelConcat"), MakeFactory<ParallelConcatOp>());
  RegisterKernel(cpu("Split"), MakeFactory<SplitOp>());
  RegisterKernel(cpu("SplitV"), MakeFactory<SplitVOp>());
  RegisterKernel(cpu("Unpack"), MakeFactory<UnpackOp>());
  RegisterKernel(cpu("GatherV2"), [] { return std::make_unique<GatherOp>(true); });
  RegisterKernel(cpu("Gather"), [] { return std::make_unique<GatherOp>(false); });
  RegisterKernel(cpu("ResourceGather"), MakeFactory<ResourceGatherOp>());
  RegisterTypedKernels<OneHotOp, float, double, int32_t, int64_t, uint8_t, bool>(cpu("OneHot"),
                                                                                 "T");
  // An int32 one-hot of int32 indices on a GPU node (a reduction's gradient
  // marks its axes so): every argument is int32, in host memory.
  RegisterKernel(KernelDefBuilder("OneHot")
                     .Device(kDeviceGpu)
                     .TypeConstraint("T", DT_INT32)
                     .TypeConstraint("TI", DT_INT32)
                     .Capturable(),
                 MakeFactory<OneHotOp<int32_t>>());
}

}  // namespace
}  // namespace towerflow
