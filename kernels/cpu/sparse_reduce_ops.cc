// SparseReduceSum and SparseReduceMax (tf.sparse.reduce_sum / reduce_max),
// dense results as TF's: an output element no entry reaches is 0 (for the
// maximum too); each element's entries are combined in the order of their
// positions along the reduced axes (TF sorts them so), duplicates included.
// An entry outside the dense shape is an error naming it. And their forms
// with a SparseTensor result (SparseReduceSumSparse, SparseReduceMaxSparse).
#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cwise_functors.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// TF's checks of the SparseTensor operand (its messages).
absl::Status CheckOperand(const Tensor& indices, const Tensor& values, const Tensor& shape) {
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input indices should be a matrix but received shape ", indices.shape().DebugString()));
  }
  if (values.dims() != 1 || shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("Input values and shape should be vectors, got ",
                                                   values.shape().DebugString(), " and ",
                                                   shape.shape().DebugString()));
  }
  const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
  if (values.dim_size(0) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices and values rows (indexing dimension) must match. (indices = ", n,
                     ", values = ", values.dim_size(0), ")"));
  }
  if (shape.dim_size(0) != rank)
    return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
  return absl::OkStatus();
}

// One more entry into an output element: the sum, or the maximum.
template <typename T, bool kMax>
T Combine(T acc, T v) {
  if constexpr (kMax) {
    return std::max(acc, v);
  } else {
    return functor::Add<T>()(acc, v);
  }
}

// What a reduction of the SparseTensor (indices, values, shape) over
// reduction_axes keeps: which dimensions it reduces, and the result's dense
// shape (the kept dims, 1 for each reduced one with keep_dims).
struct Reduction {
  std::vector<bool> reduced;
  std::vector<int64_t> out_dims;
};
absl::StatusOr<Reduction> PlanReduction(KernelContext* ctx, bool keep_dims) {
  const Tensor& indices = ctx->input(0);
  const Tensor& shape = ctx->input(2);
  const Tensor& axes = ctx->input(3);
  TW_RETURN_IF_ERROR(CheckOperand(indices, ctx->input(1), shape));
  const int64_t rank = indices.dim_size(1);
  Reduction plan;
  plan.reduced.assign(rank, false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a = axes.data<int32_t>()[i];
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                     ", for input with ", rank, " dimensions."));
    }
    plan.reduced[axis] = true;
  }
  const int64_t* dims = shape.data<int64_t>();
  for (int64_t d = 0; d < rank; ++d) {
    if (dims[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_shape has a negative dimension ", dims[d], " at ", d));
    }
    if (!plan.reduced[d]) {
      plan.out_dims.push_back(dims[d]);
    } else if (keep_dims) {
      plan.out_dims.push_back(1);
    }
  }
  return plan;
}

// The keep_dims attr both forms read.
class SparseReduceBase : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("keep_dims", &keep_dims_);
  }

 protected:
  bool keep_dims_ = false;
};

template <typename T, bool kMax>
class SparseReduceOp : public SparseReduceBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const Reduction plan, PlanReduction(ctx, keep_dims_));
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    const int64_t* dims = ctx->input(2).data<int64_t>();
    const std::vector<bool>& reduced = plan.reduced;
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(plan.out_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    // Each entry's output element and its position along the reduced axes.
    const int64_t* idx = indices.data<int64_t>();
    std::vector<int64_t> where(n);
    std::vector<uint64_t> along(n);  // (wrapping: an order key only)
    for (int64_t e = 0; e < n; ++e) {
      int64_t o = 0;
      uint64_t r = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = idx[e * rank + d];
        if (i < 0 || i >= dims[d]) {
          return absl::InvalidArgumentError(
              absl::StrCat("indices[", e, "] = [",
                           absl::StrJoin(absl::MakeConstSpan(idx + e * rank, rank), ", "),
                           "] is out of bounds for the dense shape [",
                           absl::StrJoin(absl::MakeConstSpan(dims, rank), ", "), "]"));
        }
        if (reduced[d]) {
          r = r * static_cast<uint64_t>(dims[d]) + static_cast<uint64_t>(i);
        } else {
          o = o * dims[d] + i;
        }
      }
      where[e] = o;
      along[e] = r;
    }
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return where[a] != where[b] ? where[a] < where[b] : along[a] < along[b];
    });
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    const T* v = values.data<T>();
    for (int64_t k = 0; k < n;) {
      const int64_t target = where[order[k]];
      T acc = v[order[k]];
      for (++k; k < n && where[order[k]] == target; ++k) {
        acc = Combine<T, kMax>(acc, v[order[k]]);
      }
      o[target] = acc;
    }
    return absl::OkStatus();
  }
};

// SparseReduceSumSparse / SparseReduceMaxSparse: the same reductions as a
// SparseTensor of the output elements some entry reaches, in row-major
// order (the reduced dims are 0 in its indices with keep_dims); only the
// present entries are combined (the maximum ignores the absent zeros). TF
// checks no bounds here: an index past the dense shape is grouped as given.
template <typename T, bool kMax>
class SparseReduceSparseOp : public SparseReduceBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const Reduction plan, PlanReduction(ctx, keep_dims_));
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    const std::vector<bool>& reduced = plan.reduced;
    const std::vector<int64_t>& out_dims = plan.out_dims;
    // Entries sorted by their kept coordinates, then by the reduced ones.
    std::vector<int64_t> dims_by_key;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) dims_by_key.push_back(d);
    }
    const size_t kept = dims_by_key.size();
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) dims_by_key.push_back(d);
    }
    const int64_t* idx = indices.data<int64_t>();
    const auto compare = [&](int64_t a, int64_t b, size_t count) {
      for (size_t k = 0; k < count; ++k) {
        const int64_t x = idx[a * rank + dims_by_key[k]], y = idx[b * rank + dims_by_key[k]];
        if (x != y) return x < y ? -1 : 1;
      }
      return 0;
    };
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return compare(a, b, dims_by_key.size()) < 0; });
    std::vector<int64_t> firsts;  // the first entry of each output element
    std::vector<T> results;
    const T* v = values.data<T>();
    for (int64_t k = 0; k < n;) {
      const int64_t head = order[k];
      T acc = v[head];
      for (++k; k < n && compare(order[k], head, kept) == 0; ++k) {
        acc = Combine<T, kMax>(acc, v[order[k]]);
      }
      firsts.push_back(head);
      results.push_back(acc);
    }
    const int64_t m = static_cast<int64_t>(firsts.size());
    const int64_t out_rank = static_cast<int64_t>(out_dims.size());
    TW_ASSIGN_OR_RETURN(Tensor * out_indices, ctx->allocate_output(0, TensorShape({m, out_rank})));
    int64_t* oi = out_indices->data<int64_t>();
    for (const int64_t e : firsts) {
      for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[d]) {
          *oi++ = idx[e * rank + d];
        } else if (keep_dims_) {
          *oi++ = 0;
        }
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(1, TensorShape({m})));
    std::copy(results.begin(), results.end(), out_values->data<T>());
    TW_ASSIGN_OR_RETURN(Tensor * out_shape, ctx->allocate_output(2, TensorShape({out_rank})));
    return WriteInts(out_dims, out_shape);
  }
};

// Class templates, not aliases: RegisterTypedKernels instantiated with an
// alias template is mangled by the alias's name, so an alias named as one in
// another file's anonymous namespace (reduction_ops.cc's SumOp) would merge
// the two registrations at link time.
template <typename T>
class SparseReduceSumOp : public SparseReduceOp<T, false> {};
template <typename T>
class SparseReduceMaxOp : public SparseReduceOp<T, true> {};
template <typename T>
class SparseReduceSumSparseOp : public SparseReduceSparseOp<T, false> {};
template <typename T>
class SparseReduceMaxSparseOp : public SparseReduceSparseOp<T, true> {};

}  // namespace

TW_REGISTER_KERNELS(sparse_reduce_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<SparseReduceSumOp, float, double, int32_t, int64_t, complex64, complex128>(
      cpu("SparseReduceSum"), "T");
  RegisterTypedKernels<SparseReduceMaxOp, float, double, int32_t, int64_t>(cpu("SparseReduceMax"),
                                                                           "T");
  RegisterTypedKernels<SparseReduceSumSparseOp, float, double, int32_t, int64_t, uint8_t, int8_t,
                       int16_t, uint16_t, uint32_t, uint64_t, complex64, complex128>(
      cpu("SparseReduceSumSparse"), "T");
  RegisterTypedKernels<SparseReduceMaxSparseOp, float, double, int32_t, int64_t, uint8_t, int8_t,
                       int16_t, uint16_t, uint32_t, uint64_t>(cpu("SparseReduceMaxSparse"), "T");
}

}  // namespace towerflow
