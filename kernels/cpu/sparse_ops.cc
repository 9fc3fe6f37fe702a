// SparseTensorDenseAdd, SparseToDense, SparseFillEmptyRows (and its
// gradient) and SparseReshape, with TF's checks and messages (RaggedRange
// is in range_ops.cc).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/cpu/sparse_util.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// SparseTensorDenseAdd(a_indices, a_values, a_shape, b): b plus the
// SparseTensor a, which must have b's shape; repeated indices add up.
template <typename T>
class SparseTensorDenseAddOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& b = ctx->input(3);
    TW_RETURN_IF_ERROR(sparse::CheckOperandRanks(indices, values, shape, "a_"));
    const int64_t nnz = indices.shape().dim_size(0), rank = indices.shape().dim_size(1);
    if (values.NumElements() != nnz) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a_indices has ", nnz, " rows but a_values has ", values.NumElements(), " values"));
    }
    if (shape.NumElements() != b.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Two operands have different ranks; received: ", shape.NumElements(), " and ", b.dims()));
    }
    if (rank != b.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a_indices has ", rank, " columns for a shape of rank ", b.dims()));
    }
    for (int d = 0; d < b.dims(); ++d) {
      if (IntAt(shape, d) != b.shape().dim_size(d)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Dimension ", d, " does not equal (no broadcasting is supported): sparse side ",
            IntAt(shape, d), " vs dense side ", b.shape().dim_size(d)));
      }
    }
    std::vector<int64_t> flat(nnz, 0);
    for (int64_t i = 0; i < nnz; ++i) {
      for (int d = 0; d < rank; ++d) {
        const int64_t x = IntAt(indices, i * rank + d);
        if (x < 0 || x >= b.shape().dim_size(d)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Sparse tensor has an invalid index on dimension ", d, ": a_indices(", i, ",", d,
              ") = ", x, ", dense tensor shape: ", absl::StrJoin(b.shape().dim_sizes(), " ")));
        }
        flat[i] = flat[i] * b.shape().dim_size(d) + x;
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(3, 0, b.shape()));
    T* o = out->data<T>();
    if (!out->SharesBufferWith(b)) std::copy_n(b.data<T>(), b.NumElements(), o);
    const T* v = values.data<T>();
    const functor::Add<T> add;  // integers wrap, as the dense Add
    for (int64_t i = 0; i < nnz; ++i) o[flat[i]] = add(o[flat[i]], v[i]);
    return absl::OkStatus();
  }
};

// "[a,b,c]": an index row, as TF's messages print it.
std::string IndexRow(const Tensor& indices, int64_t row, int64_t rank) {
  std::vector<int64_t> v(rank);
  for (int64_t d = 0; d < rank; ++d) v[d] = IntAt(indices, row * rank + d);
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// SparseToDense(sparse_indices, output_shape, sparse_values, default_value):
// default_value everywhere but at the indices (a scalar, a vector for a 1-D
// output, or [N, rank]), which take their values (or the one scalar value).
// validate_indices: every index in bounds (always checked here: TF's
// unvalidated kernel would write out of bounds) and sorted without repeats.
class SparseToDenseOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("validate_indices", &validate_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(2);
    const Tensor& fill = ctx->input(3);
    if (indices.dims() > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("sparse_indices should be a scalar, vector, or matrix, got shape ",
                       indices.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(1), "output_shape"));
    const int64_t n = indices.dims() > 0 ? indices.dim_size(0) : 1;
    const int64_t rank = indices.dims() > 1 ? indices.dim_size(1) : 1;
    if (values.dims() != 0 && values.shape() != TensorShape({n})) {
      return absl::InvalidArgumentError(absl::StrCat("sparse_values has incorrect shape ",
                                                     values.shape().DebugString(),
                                                     ", should be [] or [", n, "]"));
    }
    if (fill.dims() != 0) return absl::InvalidArgumentError("default_value should be a scalar.");
    if (rank != static_cast<int64_t>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output_shape has incorrect number of elements: ", dims.size(), " should be: ", rank));
    }
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    size_t elem = 0;  // strings are copied as strings
    if (values.dtype() != DT_STRING) {
      TW_ASSIGN_OR_RETURN(elem, PlainElementSize("SparseToDense", values.dtype()));
    }
    // Flat offsets, checked first: nothing is written for bad input.
    std::vector<int64_t> offsets(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      bool in_bounds = true;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t k = IntAt(indices, i * rank + d);
        in_bounds = in_bounds && k >= 0 && k < dims[d];
        offset = offset * dims[d] + k;
      }
      if (!in_bounds) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices[", i, "] = ", IndexRow(indices, i, rank),
                         " is out of bounds: need 0 <= index < ", shape.DebugString()));
      }
      if (validate_ && i > 0 && offset <= offsets[i - 1]) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices[", i, "] = ", IndexRow(indices, i, rank),
                         offset == offsets[i - 1]
                             ? " is repeated"
                             : " is out of order. Many sparse ops require sorted indices.\n"
                               "    Use `tf.sparse.reorder` to create a correctly ordered copy."
                               "\n\n"));
      }
      offsets[i] = offset;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (values.dtype() == DT_STRING) {
      std::string* dst = out->data<std::string>();
      std::fill_n(dst, out->NumElements(), *fill.data<std::string>());
      for (int64_t i = 0; i < n; ++i) {
        dst[offsets[i]] = values.data<std::string>()[values.dims() == 0 ? 0 : i];
      }
      return absl::OkStatus();
    }
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t k = 0; k < out->NumElements(); ++k)
      std::memcpy(dst + k * elem, fill.raw_data(), elem);
    const char* src = static_cast<const char*>(values.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + offsets[i] * elem, src + (values.dims() == 0 ? 0 : i) * elem, elem);
    }
    return absl::OkStatus();
  }

 private:
  bool validate_ = true;
};

// SparseFillEmptyRows(indices, values, dense_shape, default_value): each
// row (first index) with no entry gains one, [row, 0, ...] = default_value;
// the output lists rows in order, each row's entries in their input order
// (TF's stable placement); reverse_index_map[i] is where input entry i went.
// RaggedFillEmptyRows(value_rowids, values, nrows, default_value) is the
// same on the row ids as indices [n, 1] and dense_shape [nrows] (kRagged:
// output 0 is the filled row ids, a vector), as TF's shared functor.
template <bool kRagged>
class FillEmptyRowsOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    if constexpr (kRagged) {
      const Tensor& rowids = ctx->input(0);
      const Tensor& nrows = ctx->input(2);
      if (rowids.dims() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("value_rowids must be a vector, saw: ", rowids.shape().DebugString()));
      }
      if (nrows.NumElements() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("nrows must be a scalar, saw: ", nrows.shape().DebugString()));
      }
      const Tensor& values = ctx->input(1);
      if (values.dims() >= 1 && values.dim_size(0) != rowids.dim_size(0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "The length of `values` (", values.dim_size(0),
            ") must match the first dimension of `value_rowids` (", rowids.dim_size(0), ")."));
      }
      TW_ASSIGN_OR_RETURN(const Tensor indices,
                          rowids.Reshaped(TensorShape({rowids.dim_size(0), 1})));
      TW_ASSIGN_OR_RETURN(const Tensor dense_shape, nrows.Reshaped(TensorShape({1})));
      return Fill(ctx, indices, values, dense_shape, ctx->input(3));
    } else {
      return Fill(ctx, ctx->input(0), ctx->input(1), ctx->input(2), ctx->input(3));
    }
  }

 private:
  absl::Status Fill(KernelContext* ctx, const Tensor& indices, const Tensor& values,
                    const Tensor& dense_shape, const Tensor& fill) {
    if (indices.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices must be a matrix, saw: ", indices.shape().DebugString()));
    }
    if (values.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("values must be a vector, saw: ", values.shape().DebugString()));
    }
    if (dense_shape.dims() != 1 || dense_shape.NumElements() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dense_shape must be a non-empty vector, saw: ", dense_shape.shape().DebugString()));
    }
    if (fill.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("default_value must be a scalar, saw: ", fill.shape().DebugString()));
    }
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (values.dim_size(0) != n || rank != dense_shape.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices ", indices.shape().DebugString(), ", values ", values.shape().DebugString(),
          " and dense_shape ", dense_shape.shape().DebugString(), " do not fit together"));
    }
    const int64_t rows = dense_shape.data<int64_t>()[0];
    if (rows < 0) return absl::InvalidArgumentError("dense_shape[0] must be non-negative");
    if (rows == 0 && n > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = ", n));
    }
    const int64_t* idx = indices.data<int64_t>();
    // Per-row counts and starts from the allocator, which refuses a
    // dense_shape[0] past the memory limits (a std::vector would throw).
    if (rows >= INT64_MAX / 4) {
      return absl::InvalidArgumentError(absl::StrCat("dense_shape[0] = ", rows, " is too large"));
    }
    TW_ASSIGN_OR_RETURN(const TensorShape temp_shape, TensorShape::FromDims({3, rows + 1}));
    TW_ASSIGN_OR_RETURN(Tensor counts, ctx->allocate_temp(DT_INT64, temp_shape));
    int64_t* count = counts.data<int64_t>();
    int64_t* start = count + rows + 1;
    int64_t* next = start + rows + 1;
    std::fill_n(count, rows + 1, 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = idx[i * rank];
      if (row < 0 || row >= rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices(", i, ", 0) is invalid: ", row, " >= ", rows));
      }
      ++count[row];
    }
    // Where each row's entries start in the output.
    start[0] = 0;
    for (int64_t r = 0; r < rows; ++r) start[r + 1] = start[r] + std::max<int64_t>(count[r], 1);
    const int64_t out_n = start[rows];
    size_t elem = 0;  // strings are copied as strings
    if (values.dtype() != DT_STRING) {
      TW_ASSIGN_OR_RETURN(elem, PlainElementSize("SparseFillEmptyRows", values.dtype()));
    }
    TW_ASSIGN_OR_RETURN(
        Tensor * out_indices,
        ctx->allocate_output(0, kRagged ? TensorShape({out_n}) : TensorShape({out_n, rank})));
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(1, TensorShape({out_n})));
    TW_ASSIGN_OR_RETURN(Tensor * empty, ctx->allocate_output(2, TensorShape({rows})));
    TW_ASSIGN_OR_RETURN(Tensor * reverse, ctx->allocate_output(3, TensorShape({n})));
    int64_t* oi = out_indices->data<int64_t>();
    std::fill_n(oi, out_n * rank, 0);
    std::copy_n(start, rows, next);
    const auto copy_value = [&](int64_t to, const Tensor& from, int64_t at) {
      if (values.dtype() == DT_STRING) {
        out_values->data<std::string>()[to] = from.data<std::string>()[at];
      } else {
        std::memcpy(static_cast<char*>(out_values->raw_data()) + to * elem,
                    static_cast<const char*>(from.raw_data()) + at * elem, elem);
      }
    };
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = next[idx[i * rank]]++;
      std::copy_n(idx + i * rank, rank, oi + to * rank);
      copy_value(to, values, i);
      reverse->data<int64_t>()[i] = to;
    }
    for (int64_t r = 0; r < rows; ++r) {
      empty->data<bool>()[r] = count[r] == 0;
      if (count[r] > 0) continue;
      oi[start[r] * rank] = r;
      copy_value(start[r], fill, 0);
    }
    return absl::OkStatus();
  }
};

// SparseFillEmptyRowsGrad and RaggedFillEmptyRowsGrad(reverse_index_map,
// grad_values): d_values[i] =
// grad_values[reverse_index_map[i]]; the rest of grad_values (the filled
// entries) sums into d_default_value.
template <typename T>
class SparseFillEmptyRowsGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& map = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    if (map.dims() != 1 || grad.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reverse_index_map and grad_values must be vectors, saw: ", map.shape().DebugString(),
          " and ", grad.shape().DebugString()));
    }
    const int64_t n = map.NumElements(), m = grad.NumElements();
    TW_ASSIGN_OR_RETURN(Tensor * d_values, ctx->allocate_output(0, map.shape()));
    TW_ASSIGN_OR_RETURN(Tensor * d_default, ctx->allocate_output(1, TensorShape({})));
    std::vector<bool> kept(m, false);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = map.data<int64_t>()[i];
      if (at < 0 || at >= m) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid reverse_index_map[", i, "] = ", at,
                                                       ", grad_values has ", m, " values"));
      }
      d_values->data<T>()[i] = grad.data<T>()[at];
      kept[at] = true;
    }
    T rest = T(0);
    for (int64_t j = 0; j < m; ++j) {
      if (!kept[j]) rest += grad.data<T>()[j];
    }
    *d_default->data<T>() = rest;
    return absl::OkStatus();
  }
};

// SparseReshape(input_indices, input_shape, new_shape): each entry's flat
// position, re-indexed in new_shape (one -1 inferred from the element count).
class SparseReshapeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& in_shape = ctx->input(1);
    const Tensor& new_shape = ctx->input(2);
    if (indices.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input indices should be a matrix but received shape ", indices.shape().DebugString()));
    }
    if (in_shape.dims() != 1 || new_shape.dims() != 1) {
      return absl::InvalidArgumentError("input_shape and new_shape must be vectors");
    }
    const int64_t n = indices.dim_size(0), in_rank = indices.dim_size(1);
    if (in_rank != in_shape.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input rank (", in_shape.NumElements(), ") and indices rank (", in_rank, ") must agree"));
    }
    const int64_t* in_dims = in_shape.data<int64_t>();
    int64_t dense = 1;
    for (int64_t d = 0; d < in_rank; ++d) {
      if (in_dims[d] < 0 || (in_dims[d] > 0 && dense > INT64_MAX / in_dims[d])) {
        return absl::InvalidArgumentError("input_shape must be non-negative and fit int64");
      }
      dense *= in_dims[d];
    }
    const int64_t out_rank = new_shape.NumElements();
    std::vector<int64_t> out_dims(new_shape.data<int64_t>(), new_shape.data<int64_t>() + out_rank);
    int64_t unknown = -1, product = 1;
    for (int64_t d = 0; d < out_rank; ++d) {
      if (out_dims[d] == -1) {
        if (unknown >= 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("only one output dimension may be -1, not both ", unknown, " and ", d));
        }
        unknown = d;
        continue;
      }
      if (out_dims[d] < 0 || (out_dims[d] > 0 && product > INT64_MAX / out_dims[d])) {
        return absl::InvalidArgumentError(
            absl::StrCat("size ", d, " must be non-negative, not ", out_dims[d]));
      }
      product *= out_dims[d];
    }
    const auto shape_string = [&]() {
      std::vector<int64_t> shown = out_dims;
      if (unknown >= 0) shown[unknown] = 1;
      return absl::StrCat("input_shape=[", absl::StrJoin(in_dims, in_dims + in_rank, ","),
                          "] output_shape=[", absl::StrJoin(shown, ","), "]");
    };
    if (unknown >= 0) {
      if (product == 0 || dense % product != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input to reshape is a SparseTensor with ", dense,
                         " dense values, but the requested shape requires a multiple of ", product,
                         ". ", shape_string()));
      }
      out_dims[unknown] = dense / product;
    } else if (product != dense) {
      return absl::InvalidArgumentError(absl::StrCat("Input to reshape is a tensor with ", dense,
                                                     " dense values, but the requested shape has ",
                                                     product, ". ", shape_string()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out_indices, ctx->allocate_output(0, TensorShape({n, out_rank})));
    TW_ASSIGN_OR_RETURN(Tensor * out_shape, ctx->allocate_output(1, TensorShape({out_rank})));
    std::copy(out_dims.begin(), out_dims.end(), out_shape->data<int64_t>());
    const int64_t* in = indices.data<int64_t>();
    int64_t* out = out_indices->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t flat = 0;
      for (int64_t d = 0; d < in_rank; ++d) {
        const int64_t k = in[i * in_rank + d];
        if (k < 0 || k >= in_dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat("input_indices[", i,
                                                         "] = ", IndexRow(indices, i, in_rank),
                                                         " is out of bounds for input_shape"));
        }
        flat = flat * in_dims[d] + k;
      }
      for (int64_t d = out_rank - 1; d >= 0; --d) {
        out[i * out_rank + d] = out_dims[d] == 0 ? 0 : flat % out_dims[d];
        flat = out_dims[d] == 0 ? 0 : flat / out_dims[d];
      }
    }
    return absl::OkStatus();
  }
};

// SparseTensorDenseMatMul(a_indices, a_values, a_shape, b): the sparse
// matrix A (or its transpose, adjoint_a) times B (or B's, adjoint_b): each
// nonzero adds its value times a row of B into a row of the product, as an
// Eigen row operation. Duplicate indices add up, as TF's.
template <typename T>
class SparseTensorDenseMatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("adjoint_a", &adjoint_a_));
    return c.GetAttr("adjoint_b", &adjoint_b_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& b = ctx->input(3);
    if (shape.dims() != 1) return absl::InvalidArgumentError("Tensor 'a_shape' is not a vector");
    if (shape.NumElements() != 2) {
      return absl::InvalidArgumentError("Tensor 'a_shape' must have 2 elements");
    }
    if (values.dims() != 1) return absl::InvalidArgumentError("Tensor 'a_values' is not a vector");
    if (indices.dims() != 2 || indices.dim_size(1) != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tensor 'a_indices' is not a matrix of two columns, got shape ",
                       indices.shape().DebugString()));
    }
    if (indices.dim_size(0) != values.NumElements()) {
      return absl::InvalidArgumentError(
          "Number of rows of a_indices does not match number of entries in a_values");
    }
    if (b.dims() != 2) return absl::InvalidArgumentError("Tensor 'b' is not a matrix");
    const int64_t a_rows = shape.data<int64_t>()[0], a_cols = shape.data<int64_t>()[1];
    if (a_rows < 0 || a_cols < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tensor 'a_shape' has negative dimensions: [", a_rows, ", ", a_cols, "]"));
    }
    const int64_t m = adjoint_a_ ? a_cols : a_rows, k = adjoint_a_ ? a_rows : a_cols;
    const int64_t b_inner = b.dim_size(adjoint_b_ ? 1 : 0), n = b.dim_size(adjoint_b_ ? 0 : 1);
    if (k != b_inner) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot multiply A and B because inner dimension does not match: ", k,
                       " vs. ", b_inner, ".  Did you forget a transpose?  Dimensions of A: [",
                       a_rows, ", ", a_cols, ").  Dimensions of B: ", b.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<Matrix> product(out->data<T>(), m, n);
    product.setZero();
    const Eigen::Map<const Matrix> dense(b.data<T>(), b.dim_size(0), b.dim_size(1));
    const T* v = values.data<T>();
    for (int64_t e = 0; e < values.NumElements(); ++e) {
      const int64_t i = IntAt(indices, 2 * e), j = IntAt(indices, 2 * e + 1);
      if (i < 0 || i >= a_rows) {
        return absl::InvalidArgumentError(absl::StrCat(adjoint_a_ ? "k (" : "m (", i,
                                                       ") from index[", e,
                                                       ",0] out of bounds (>=", a_rows, ")"));
      }
      if (j < 0 || j >= a_cols) {
        return absl::InvalidArgumentError(absl::StrCat(adjoint_a_ ? "m (" : "k (", j,
                                                       ") from index[", e,
                                                       ",1] out of bounds (>=", a_cols, ")"));
      }
      const int64_t row = adjoint_a_ ? j : i, inner = adjoint_a_ ? i : j;
      if (adjoint_b_) {
        product.row(row) += v[e] * dense.col(inner).transpose();
      } else {
        product.row(row) += v[e] * dense.row(inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool adjoint_a_ = false, adjoint_b_ = false;
};

TW_REGISTER_KERNELS(sparse_ops) {
  RegisterTypedKernels<SparseTensorDenseAddOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("SparseTensorDenseAdd").Device(kDeviceCpu), "T");
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("SparseToDense"), MakeFactory<SparseToDenseOp>());
  RegisterKernel(cpu("SparseFillEmptyRows"), MakeFactory<FillEmptyRowsOp<false>>());
  RegisterKernel(cpu("RaggedFillEmptyRows"), MakeFactory<FillEmptyRowsOp<true>>());
  for (const char* grad : {"SparseFillEmptyRowsGrad", "RaggedFillEmptyRowsGrad"}) {
    RegisterTypedKernels<SparseFillEmptyRowsGradOp, float, double, int32_t, int64_t>(cpu(grad),
                                                                                     "T");
  }
  RegisterKernel(cpu("SparseReshape"), MakeFactory<SparseReshapeOp>());
  RegisterTypedKernels<SparseTensorDenseMatMulOp, float, double, int32_t, int64_t>(
      cpu("SparseTensorDenseMatMul"), "T");
}

}  // namespace
}  // namespace towerflow
