// The ops that make a SparseTensor from SparseTensors by moving entries:
// SparseReorder, SparseSlice (and SparseSliceGrad), SparseConcat and
// SparseSplit, plus SparseSoftmax, with TF's checks, messages and output
// orders. They do not require sorted input, as TF's do not: SparseReorder,
// SparseConcat and SparseSoftmax give canonical (row-major) order, SparseSlice
// and SparseSplit keep the input's order. Values of any type but resources
// and variants move (strings as strings).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/sparse_util.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

absl::Status CheckVector(const Tensor& t, absl::string_view what) {
  if (t.dims() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " should be a vector but received shape ", t.shape().DebugString()));
}

absl::Status CheckLength(const Tensor& t, int64_t rank, absl::string_view what) {
  if (t.dim_size(0) == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Expected ", what, " to be a vector of length ",
                                                 rank, " but got length ", t.dim_size(0)));
}

// Allocates a SparseTensor result's indices [n, rank] and values [n] at
// outputs indices_output and values_output.
struct SparseOutput {
  Tensor* indices = nullptr;
  Tensor* values = nullptr;
};
absl::StatusOr<SparseOutput> AllocateSparse(KernelContext* ctx, int indices_output,
                                            int values_output, int64_t n, int64_t rank) {
  SparseOutput out;
  TW_ASSIGN_OR_RETURN(out.indices, ctx->allocate_output(indices_output, TensorShape({n, rank})));
  TW_ASSIGN_OR_RETURN(out.values, ctx->allocate_output(values_output, TensorShape({n})));
  return out;
}

absl::Status WriteShape(KernelContext* ctx, int output, const std::vector<int64_t>& dims) {
  TW_ASSIGN_OR_RETURN(
      Tensor * out, ctx->allocate_output(output, TensorShape({static_cast<int64_t>(dims.size())})));
  return WriteInts(dims, out);
}

// SparseReorder: the entries sorted by index, row-major; equal indices keep
// their order. Neither bounds nor the dense shape are checked, as TF.
class SparseReorderOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    TW_RETURN_IF_ERROR(sparse::Validate(indices, values, ctx->input(2)));
    const std::vector<int64_t> order = sparse::CanonicalOrder(indices);
    TW_ASSIGN_OR_RETURN(const SparseOutput out,
                        AllocateSparse(ctx, 0, 1, indices.dim_size(0), indices.dim_size(1)));
    sparse::TakeRows(indices, order, {}, out.indices);
    return sparse::TakeValues("SparseReorder", values, order, out.values);
  }
};

// SparseSlice: the entries with start[d] <= index[d] < start[d] + size[d] in
// every dimension, in input order, moved by -start; the output shape is size
// cut at the dense shape (0 where start is past it).
class SparseSliceOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& start = ctx->input(3);
    const Tensor& size = ctx->input(4);
    TW_RETURN_IF_ERROR(sparse::Validate(indices, values, shape));
    TW_RETURN_IF_ERROR(CheckVector(start, "Input start"));
    TW_RETURN_IF_ERROR(CheckVector(size, "Input size"));
    const int64_t rank = shape.dim_size(0);
    TW_RETURN_IF_ERROR(CheckLength(start, rank, "start"));
    TW_RETURN_IF_ERROR(CheckLength(size, rank, "size"));
    const int64_t* dims = shape.data<int64_t>();
    const int64_t* s = start.data<int64_t>();
    const int64_t* z = size.data<int64_t>();
    std::vector<int64_t> out_dims(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected shape dimensions to be non-negative, got ", dims[d]));
      }
      if (z[d] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Expected a non-negative size, got ", z[d]));
      }
      // In 128 bits: start + size and shape - start may pass 2^63.
      const __int128 end = static_cast<__int128>(s[d]) + z[d];
      out_dims[d] = end < dims[d]
                        ? z[d]
                        : static_cast<int64_t>(std::max<__int128>(0, __int128{dims[d]} - s[d]));
    }
    TW_RETURN_IF_ERROR(TensorShape::FromDims(out_dims).status());
    const int64_t n = indices.dim_size(0);
    const int64_t* idx = indices.data<int64_t>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < n; ++i) {
      bool hit = true;
      for (int64_t d = 0; d < rank && hit; ++d) {
        const int64_t k = idx[i * rank + d];
        hit = k >= s[d] && static_cast<__int128>(k) < static_cast<__int128>(s[d]) + z[d];
      }
      if (hit) kept.push_back(i);
    }
    TW_ASSIGN_OR_RETURN(const SparseOutput out,
                        AllocateSparse(ctx, 0, 1, static_cast<int64_t>(kept.size()), rank));
    sparse::TakeRows(indices, kept, absl::MakeConstSpan(s, rank), out.indices);
    TW_RETURN_IF_ERROR(sparse::TakeValues("SparseSlice", values, kept, out.values));
    return WriteShape(ctx, 2, out_dims);
  }
};

// SparseSliceGrad: walks the input entries in order, matching each output
// entry (plus start) in turn, as TF; every output entry must be matched.
class SparseSliceGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const Tensor& in = ctx->input(1);
    const Tensor& start = ctx->input(2);
    const Tensor& out = ctx->input(3);
    if (in.dims() != 2 || out.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input and output indices should be matrices but received shapes: ",
                       in.shape().DebugString(), " and ", out.shape().DebugString()));
    }
    if (grad.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input backprop_val_grad should be a vector but received shape: ",
                       grad.shape().DebugString()));
    }
    const int64_t rank = in.dim_size(1);
    if (out.dim_size(1) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("The input and output should have the same ndims: got: ", rank, " and ",
                       out.dim_size(1)));
    }
    const int64_t out_n = out.dim_size(0);
    if (grad.NumElements() != out_n) {
      return absl::InvalidArgumentError(
          absl::StrCat("# elements of backprop_val_grad and # rows of output_indices should "
                       "match (#nnz of sum): got ",
                       grad.NumElements(), " and ", out_n));
    }
    if (start.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "The input_start should be a vector but received shape ", start.shape().DebugString()));
    }
    TW_RETURN_IF_ERROR(CheckLength(start, rank, "input_start"));
    TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize("SparseSliceGrad", grad.dtype()));
    const int64_t in_n = in.dim_size(0);
    TW_ASSIGN_OR_RETURN(Tensor * result, ctx->allocate_output(0, TensorShape({in_n})));
    char* dst = static_cast<char*>(result->raw_data());
    const char* src = static_cast<const char*>(grad.raw_data());
    std::memset(dst, 0, in_n * elem);  // zero bits are 0 in every number type
    const int64_t* a = in.data<int64_t>();
    const int64_t* b = out.data<int64_t>();
    const int64_t* s = start.data<int64_t>();
    int64_t j = 0;
    for (int64_t i = 0; i < in_n && j < out_n; ++i) {
      bool same = true;
      for (int64_t d = 0; d < rank && same; ++d) {
        same = static_cast<uint64_t>(a[i * rank + d]) ==
               static_cast<uint64_t>(b[j * rank + d]) + static_cast<uint64_t>(s[d]);
      }
      if (same) {
        std::memcpy(dst + i * elem, src + j * elem, elem);
        ++j;
      }
    }
    if (j != out_n) {  // (TF's code is Internal: the caller's inputs are at fault)
      return absl::InvalidArgumentError(
          absl::StrCat("Elements of backprop_val_grad aren't all propagated. Num elements:", out_n,
                       ", used: ", j));
    }
    return absl::OkStatus();
  }
};

// SparseConcat: each input's entries moved along concat_dim by the sizes
// before it, all sorted row-major (TF reorders the result).
class SparseConcatOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("concat_dim", &concat_dim_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs() / 3;
    for (int i = 0; i < n; ++i) {
      if (ctx->input(i).dims() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input indices should be a matrix but received shape ",
                         ctx->input(i).shape().DebugString(), " at position ", i));
      }
    }
    const char* const kinds[] = {"values", "shapes"};
    for (int k = 1; k <= 2; ++k) {
      for (int i = 0; i < n; ++i) {
        const Tensor& t = ctx->input(k * n + i);
        if (t.dims() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("Input ", kinds[k - 1], " should be a vector but received shape ",
                           t.shape().DebugString(), " at position ", i));
        }
      }
    }
    const Tensor& first = ctx->input(2 * n);
    const int64_t rank = first.dim_size(0);
    const int64_t axis = concat_dim_ < 0 ? concat_dim_ + rank : concat_dim_;
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Concat dimension must be in range [", -rank,
                                                     ", ", rank, "), got ", concat_dim_));
    }
    std::vector<int64_t> out_dims(first.data<int64_t>(), first.data<int64_t>() + rank);
    for (int i = 0; i < n; ++i) {
      const Tensor& shape = ctx->input(2 * n + i);
      if (shape.dim_size(0) != rank) {
        return absl::InvalidArgumentError(
            absl::StrCat("Ranks of all input tensors must match: expected ", rank, " but got ",
                         shape.dim_size(0), " at position ", i));
      }
      const int64_t* dims = shape.data<int64_t>();
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && dims[d] != out_dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat("Input shapes must match: expected ",
                                                         out_dims[d], " for dimension ", d,
                                                         " but got ", dims[d], " at position ", i));
        }
      }
    }
    // Where each input starts along the axis, and how many entries in all.
    std::vector<int64_t> offsets(n);
    int64_t along = 0, total = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& indices = ctx->input(i);
      const Tensor& values = ctx->input(n + i);
      if (indices.dim_size(0) != values.dim_size(0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices and values rows (indexing dimension) must match. (indices = ",
                         indices.dim_size(0), ", values = ", values.dim_size(0), ")"));
      }
      if (indices.dim_size(1) != rank) {
        return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
      }
      const int64_t d = ctx->input(2 * n + i).data<int64_t>()[axis];
      offsets[i] = along;
      if (d < 0 || __builtin_add_overflow(along, d, &along)) {
        return absl::InvalidArgumentError("Encountered overflow from large input shape.");
      }
      total += indices.dim_size(0);
    }
    out_dims[axis] = along;
    TW_RETURN_IF_ERROR(TensorShape::FromDims(out_dims).status());
    // All entries moved and joined (indices, values), then sorted row-major.
    Tensor joined(DT_INT64, TensorShape({total, rank}));
    Tensor joined_values(ctx->input(n).dtype(), TensorShape({total}));
    int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& indices = ctx->input(i);
      const int64_t m = indices.dim_size(0);
      std::vector<int64_t> rows(m), shift(rank, 0);
      for (int64_t e = 0; e < m; ++e) rows[e] = e;
      shift[axis] = -offsets[i];  // offsets are at most INT64_MAX
      TW_ASSIGN_OR_RETURN(Tensor part, joined.Slice(at, at + m));
      sparse::TakeRows(indices, rows, shift, &part);
      TW_ASSIGN_OR_RETURN(Tensor part_values, joined_values.Slice(at, at + m));
      TW_RETURN_IF_ERROR(sparse::TakeValues("SparseConcat", ctx->input(n + i), rows, &part_values));
      at += m;
    }
    const std::vector<int64_t> order = sparse::CanonicalOrder(joined);
    TW_ASSIGN_OR_RETURN(const SparseOutput out, AllocateSparse(ctx, 0, 1, total, rank));
    sparse::TakeRows(joined, order, {}, out.indices);
    TW_RETURN_IF_ERROR(sparse::TakeValues("SparseConcat", joined_values, order, out.values));
    return WriteShape(ctx, 2, out_dims);
  }

 private:
  int64_t concat_dim_ = 0;
};

// SparseSplit: num_split pieces along split_dim, the first (size %
// num_split) one longer; each piece keeps the input's order.
class SparseSplitOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("num_split", &num_split_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& split_dim = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& shape = ctx->input(3);
    if (split_dim.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input axis should be a scalar but received shape ", split_dim.shape().DebugString()));
    }
    if (indices.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input indices should be a matrix but received shape ", indices.shape().DebugString()));
    }
    TW_RETURN_IF_ERROR(CheckVector(values, "Input values"));
    TW_RETURN_IF_ERROR(CheckVector(shape, "Input shape"));
    const int64_t rank = shape.dim_size(0);
    const int64_t given = split_dim.data<int64_t>()[0];
    if (given < -rank || given >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input axis should be in range [", -rank, ", ", rank, "), got ", given));
    }
    const int64_t axis = given < 0 ? given + rank : given;
    const int64_t size = shape.data<int64_t>()[axis];
    if (num_split_ < 1 || num_split_ > size) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input num_split should be between 1 and the splitting dimension size (",
                       size, "), got ", num_split_));
    }
    TW_RETURN_IF_ERROR(sparse::Validate(indices, values, shape));
    TW_RETURN_IF_ERROR(sparse::CheckInBounds(indices, shape));
    // The first `longer` pieces have base + 1 positions, the rest base.
    const int64_t base = size / num_split_, longer = size % num_split_;
    const int64_t long_end = longer * (base + 1);
    const auto piece_of = [&](int64_t k) {
      return k < long_end ? k / (base + 1) : longer + (k - long_end) / base;
    };
    const auto piece_start = [&](int64_t p) {
      return p < longer ? p * (base + 1) : long_end + (p - longer) * base;
    };
    const int64_t n = indices.dim_size(0);
    const int64_t* idx = indices.data<int64_t>();
    std::vector<std::vector<int64_t>> members(num_split_);
    for (int64_t i = 0; i < n; ++i) members[piece_of(idx[i * rank + axis])].push_back(i);
    const int num = static_cast<int>(num_split_);
    for (int p = 0; p < num; ++p) {
      TW_ASSIGN_OR_RETURN(
          const SparseOutput out,
          AllocateSparse(ctx, p, num + p, static_cast<int64_t>(members[p].size()), rank));
      std::vector<int64_t> shift(rank, 0);
      shift[axis] = piece_start(p);
      sparse::TakeRows(indices, members[p], shift, out.indices);
      TW_RETURN_IF_ERROR(sparse::TakeValues("SparseSplit", values, members[p], out.values));
      std::vector<int64_t> dims(shape.data<int64_t>(), shape.data<int64_t>() + rank);
      dims[axis] = p < longer ? base + 1 : base;
      TW_RETURN_IF_ERROR(WriteShape(ctx, 2 * num + p, dims));
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_split_ = 1;
};

// SparseSoftmax: entries sorted row-major, then a softmax over each run of
// entries sharing all but the last index, exp(x - max) * (1 / sum) as TF;
// the values come out in that sorted order. Bounds are not checked, as TF.
template <typename T>
class SparseSoftmaxOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    TW_RETURN_IF_ERROR(sparse::CheckOperandRanks(indices, values, shape, "sp_"));
    if (shape.NumElements() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input should have rank >= 2, but received shape: ", shape.SummarizeValue(3)));
    }
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (values.dim_size(0) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices and values rows (indexing dimension) must match. (indices = ", n,
                       ", values = ", values.dim_size(0), ")"));
    }
    if (shape.dim_size(0) != rank) {
      return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
    }
    const std::vector<int64_t> order = sparse::CanonicalOrder(indices);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n})));
    const int64_t* idx = indices.data<int64_t>();
    const T* v = values.data<T>();
    T* o = out->data<T>();
    for (int64_t begin = 0; begin < n;) {
      int64_t end = begin + 1;
      while (end < n && sparse::CompareRows(idx + order[begin] * rank, idx + order[end] * rank,
                                            rank - 1) == 0) {
        ++end;
      }
      T top = v[order[begin]];
      for (int64_t k = begin + 1; k < end; ++k) top = std::max(top, v[order[k]]);
      T sum = 0;
      for (int64_t k = begin; k < end; ++k) {
        o[k] = std::exp(v[order[k]] - top);
        sum += o[k];
      }
      const T scale = T(1) / sum;
      for (int64_t k = begin; k < end; ++k) o[k] *= scale;
      begin = end;
    }
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(sparse_tensor_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("SparseReorder"), MakeFactory<SparseReorderOp>());
  RegisterKernel(cpu("SparseSlice"), MakeFactory<SparseSliceOp>());
  RegisterKernel(cpu("SparseSliceGrad"), MakeFactory<SparseSliceGradOp>());
  RegisterKernel(cpu("SparseConcat"), MakeFactory<SparseConcatOp>());
  RegisterKernel(cpu("SparseSplit"), MakeFactory<SparseSplitOp>());
  RegisterTypedKernels<SparseSoftmaxOp, float, double>(cpu("SparseSoftmax"), "T");
}

}  // namespace towerflow
