// Counting and binning kernels: Bincount, DenseBincount, SparseBincount,
// RaggedBincount, the *CountSparseOutput ops, HistogramFixedWidth, Bucketize, and the searches of
// sorted rows LowerBound and UpperBound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/sparse_util.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Bincount(arr, size, weights): bins[i] = the sum of weights[j] (or the
// number of j; weights empty) over arr[j] == i, for i < size; larger
// entries are dropped, negative ones are an error (TF's).
template <typename T>
class BincountOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& arr = ctx->input(0);
    const Tensor& size_t_ = ctx->input(1);
    const Tensor& weights = ctx->input(2);
    if (size_t_.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape must be rank 0 but is rank ", size_t_.dims()));
    }
    const int64_t size = *size_t_.data<int32_t>();
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative"));
    }
    const bool weighted = weights.NumElements() > 0;
    if (weighted && weights.shape() != arr.shape()) {
      return absl::InvalidArgumentError("Input indices and weights must have the same size.");
    }
    const int32_t* a = arr.data<int32_t>();
    for (int64_t j = 0; j < arr.NumElements(); ++j) {
      if (a[j] < 0) return absl::InvalidArgumentError("Input arr must be non-negative!");
    }
    TW_ASSIGN_OR_RETURN(Tensor * bins, ctx->allocate_output(0, TensorShape({size})));
    T* b = bins->data<T>();
    std::fill_n(b, size, T(0));
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t j = 0; j < arr.NumElements(); ++j) {
      if (a[j] < size) b[a[j]] += weighted ? w[j] : T(1);
    }
    return absl::OkStatus();
  }
};

// The bincounts that take binary_output (a bin is 1 when any value falls
// in it).
class BinaryOutputKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("binary_output", &binary_);
  }

 protected:
  bool binary_ = false;
};

// DenseBincount(input, size, weights): Bincount of a vector, or of each row
// of a matrix into a row of bins; binary_output sets a bin to 1 when any
// entry falls in it (weights ignored), as TF's.
template <typename Tidx, typename T>
class DenseBincountOp : public BinaryOutputKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& weights = ctx->input(2);
    TW_ASSIGN_OR_RETURN(const int64_t size, IntScalar(ctx->input(1), "size"));
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative"));
    }
    if (in.dims() > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape must be at most rank 2 but is rank ", in.dims()));
    }
    const bool weighted = weights.NumElements() > 0;
    if (weighted && weights.shape() != in.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it "
          "acts as all weights equal to 1. Received ",
          weights.shape().DebugString()));
    }
    const Tidx* a = in.data<Tidx>();
    for (int64_t j = 0; j < in.NumElements(); ++j) {
      if (a[j] < 0) return absl::InvalidArgumentError("Input arr must be non-negative!");
    }
    const int64_t rows = in.dims() == 2 ? in.dim_size(0) : 1;
    const int64_t cols = in.dims() == 2 ? in.dim_size(1) : in.NumElements();
    TW_ASSIGN_OR_RETURN(
        Tensor * bins,
        ctx->allocate_output(0, in.dims() == 2 ? TensorShape({rows, size}) : TensorShape({size})));
    T* b = bins->data<T>();
    std::fill_n(b, bins->NumElements(), T(0));
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = r * cols; j < (r + 1) * cols; ++j) {
        if (a[j] >= size) continue;
        T& bin = b[r * size + a[j]];
        bin = binary_ ? T(1) : bin + (weighted ? w[j] : T(1));
      }
    }
    return absl::OkStatus();
  }
};

// Adds values[j] (weights[j], or 1) into row row_of(j) of `bins` [rows,
// size] for each j with 0 <= values[j] < size; binary_output sets the bin
// to 1 instead (TF's SparseBincount and RaggedBincount).
template <typename Tidx, typename T, typename RowOf>
void CountRows(const Tensor& values, const Tensor& weights, int64_t size, bool binary, RowOf row_of,
               Tensor* bins) {
  T* b = bins->data<T>();
  std::fill_n(b, bins->NumElements(), T(0));
  const Tidx* v = values.data<Tidx>();
  const T* w = weights.NumElements() > 0 ? weights.data<T>() : nullptr;
  for (int64_t j = 0; j < values.NumElements(); ++j) {
    if (v[j] < 0 || v[j] >= size) continue;
    T& bin = b[row_of(j) * size + v[j]];
    bin = binary ? T(1) : bin + (w != nullptr ? w[j] : T(1));
  }
}

// The bincounts' common checks: a non-negative scalar size, and weights
// empty or one per value (TF's kernels read past a shorter list).
template <typename Tidx>
absl::StatusOr<int64_t> BincountSize(const Tensor& size_t_, const Tensor& values,
                                     const Tensor& weights) {
  TW_ASSIGN_OR_RETURN(const int64_t size, IntScalar(size_t_, "size"));
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative"));
  }
  if (weights.NumElements() != 0 && weights.NumElements() != values.NumElements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("weights must be empty or have one element per value: ", weights.NumElements(),
                     " weights for ", values.NumElements(), " values"));
  }
  return size;
}

// SparseBincount(indices, values, dense_shape, size, weights): the
// Bincount of a SparseTensor's values, one row of bins per row (the first
// index) of a matrix (or more dimensions), one for a vector; negative
// values are dropped, as TF's.
template <typename Tidx, typename T>
class SparseBincountOp : public BinaryOutputKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& weights = ctx->input(4);
    TW_ASSIGN_OR_RETURN(const int64_t size, BincountSize<Tidx>(ctx->input(3), values, weights));
    TW_RETURN_IF_ERROR(sparse::Validate(indices, values, shape));
    TW_RETURN_IF_ERROR(sparse::CheckInBounds(indices, shape));
    const int64_t rank = shape.NumElements();
    if (rank == 0) return absl::InvalidArgumentError("dense_shape must not be empty");
    const int64_t* dims = shape.data<int64_t>();
    const int64_t* idx = indices.data<int64_t>();
    const bool vector = rank == 1;
    TW_ASSIGN_OR_RETURN(
        Tensor * bins,
        ctx->allocate_output(0, vector ? TensorShape({size}) : TensorShape({dims[0], size})));
    CountRows<Tidx, T>(
        values, weights, size, binary_,
        [&](int64_t j) { return vector ? int64_t{0} : idx[j * rank]; }, bins);
    return absl::OkStatus();
  }
};

// The row of each of `count` values of a ragged tensor's `splits` (checked
// as TF's RaggedBincount checks them; splits that decrease, which TF reads
// as rows of odd extents, are refused); `rows` gets the number of rows.
absl::StatusOr<std::vector<int64_t>> RaggedRowOf(const Tensor& splits_t, int64_t count,
                                                 int64_t* rows) {
  TW_ASSIGN_OR_RETURN(const std::vector<int64_t> splits, IntVector(splits_t, "splits"));
  if (splits.empty()) return absl::InvalidArgumentError("Splits must be non-empty");
  if (splits[0] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Splits must start with 0, not with ", splits[0]));
  }
  if (splits.back() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Splits must end with the number of values, got ", splits.back(), " instead of ", count));
  }
  std::vector<int64_t> row(count);
  for (size_t r = 0; r + 1 < splits.size(); ++r) {
    if (splits[r + 1] < splits[r]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Splits must not decrease, got ", splits[r + 1], " after ", splits[r]));
    }
    std::fill(row.begin() + splits[r], row.begin() + splits[r + 1], static_cast<int64_t>(r));
  }
  *rows = static_cast<int64_t>(splits.size()) - 1;
  return row;
}

// RaggedBincount(splits, values, size, weights): one row of bins per row of
// a ragged tensor; negative values are an error, as TF's. Splits that
// decrease are refused (TF's kernel reads them as rows of odd extents).
template <typename Tidx, typename T>
class RaggedBincountOp : public BinaryOutputKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(1);
    const Tensor& weights = ctx->input(3);
    TW_ASSIGN_OR_RETURN(const int64_t size, BincountSize<Tidx>(ctx->input(2), values, weights));
    int64_t rows = 0;
    TW_ASSIGN_OR_RETURN(const std::vector<int64_t> row,
                        RaggedRowOf(ctx->input(0), values.NumElements(), &rows));
    const Tidx* v = values.data<Tidx>();
    for (int64_t j = 0; j < values.NumElements(); ++j) {
      if (v[j] < 0) return absl::InvalidArgumentError("Input must be non-negative");
    }
    TW_ASSIGN_OR_RETURN(Tensor * bins, ctx->allocate_output(0, TensorShape({rows, size})));
    CountRows<Tidx, T>(
        values, weights, size, binary_, [&](int64_t j) { return row[j]; }, bins);
    return absl::OkStatus();
  }
};

// DenseCountSparseOutput, SparseCountSparseOutput and
// RaggedCountSparseOutput (tf.sparse.bincount's sparse results): for each
// row, each distinct value below maxlength (if given) with its count or
// summed weights (1 with binary_output), in order, as a SparseTensor whose
// last dimension is maxlength if given, else past the largest value and at
// least minlength (TF's). Negative values are an error.
template <typename Tidx, typename T>
class CountSparseOutputOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    form_ = c.def().op() == "DenseCountSparseOutput"    ? 0
            : c.def().op() == "SparseCountSparseOutput" ? 1
                                                        : 2;
    TW_RETURN_IF_ERROR(c.GetAttr("minlength", &minlength_));
    TW_RETURN_IF_ERROR(c.GetAttr("maxlength", &maxlength_));
    return c.GetAttr("binary_output", &binary_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(form_ == 0 ? 0 : 1);
    const Tensor& weights = ctx->input(form_ == 0 ? 1 : form_ == 1 ? 3 : 2);
    const bool weighted = weights.NumElements() > 0;
    int64_t rows = 1;
    bool batched = false;
    std::vector<int64_t> row_of(values.NumElements(), 0);
    if (form_ == 0) {
      if (values.dims() != 1 && values.dims() != 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Input must be a 1 or 2-dimensional tensor. Got: ", values.shape().DebugString()));
      }
      if (weighted && weights.shape() != values.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Weights and data must have the same shape. Weight shape: ",
            weights.shape().DebugString(), "; data shape: ", values.shape().DebugString()));
      }
      batched = values.dims() == 2;
      if (batched) {
        rows = values.dim_size(0);
        const int64_t cols = values.dim_size(1);
        for (int64_t j = 0; j < values.NumElements(); ++j) row_of[j] = j / cols;
      }
    } else {
      if (weighted && weights.NumElements() != values.NumElements()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Weights and values must have the same shape. Weight shape: ",
            weights.shape().DebugString(), "; values shape: ", values.shape().DebugString()));
      }
      if (form_ == 1) {
        TW_RETURN_IF_ERROR(SparseRows(ctx, values, &rows, &batched, &row_of));
      } else {
        TW_ASSIGN_OR_RETURN(row_of, RaggedRowOf(ctx->input(0), values.NumElements(), &rows));
        batched = true;
      }
    }
    const Tidx* v = values.data<Tidx>();
    const T* w = weighted ? weights.data<T>() : nullptr;
    // By row, then value: only the rows that have values (a SparseTensor's
    // dense shape may declare any number).
    std::map<int64_t, std::map<int64_t, T>> counts;
    int64_t largest = 0;
    for (int64_t j = 0; j < values.NumElements(); ++j) {
      if (v[j] < 0) return absl::InvalidArgumentError("Input values must all be non-negative");
      if (maxlength_ >= 0 && v[j] >= maxlength_) continue;
      largest = std::max<int64_t>(largest, v[j]);
      T& c = counts[row_of[j]][v[j]];
      c = binary_ ? T(1) : c + (w != nullptr ? w[j] : T(1));
    }
    int64_t n = 0;
    for (const auto& [r, row] : counts) n += static_cast<int64_t>(row.size());
    const int64_t rank = batched ? 2 : 1;
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({n, rank})));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(1, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2, TensorShape({rank})));
    int64_t* idx = indices->data<int64_t>();
    T* o = out->data<T>();
    for (const auto& [r, row] : counts) {
      for (const auto& [value, count] : row) {
        if (batched) *idx++ = r;
        *idx++ = value;
        *o++ = count;
      }
    }
    const int64_t width = maxlength_ >= 0 ? maxlength_ : std::max<int64_t>(largest + 1, minlength_);
    int64_t* dims = shape->data<int64_t>();
    if (batched) *dims++ = rows;
    *dims = width;
    return absl::OkStatus();
  }

 private:
  // A SparseTensor's rows: the first index of each value of a matrix (its
  // dense shape's rows), one row for a vector.
  static absl::Status SparseRows(KernelContext* ctx, const Tensor& values, int64_t* rows,
                                 bool* batched, std::vector<int64_t>* row_of) {
    const Tensor& indices = ctx->input(0);
    const Tensor& shape = ctx->input(2);
    if (shape.dims() != 1 || shape.NumElements() < 1 || indices.dims() != 2 ||
        indices.dim_size(0) != values.NumElements() || indices.dim_size(1) != shape.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected a SparseTensor: indices [n, rank], values [n], dense_shape [rank]; got ",
          indices.shape().DebugString(), ", ", values.shape().DebugString(), " and ",
          shape.shape().DebugString()));
    }
    const int64_t rank = shape.NumElements();
    *batched = rank > 1;
    *rows = *batched ? shape.data<int64_t>()[0] : 1;
    if (*rows < 0) return absl::InvalidArgumentError("dense_shape must not be negative");
    for (int64_t j = 0; j < values.NumElements(); ++j) {
      const int64_t r = *batched ? indices.data<int64_t>()[j * rank] : 0;
      if (r < 0 || r >= *rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("Index ", j, " is out of bounds: row ", r, " of ", *rows, " rows"));
      }
      (*row_of)[j] = r;
    }
    return absl::OkStatus();
  }

  int form_ = 0;  // dense, sparse, ragged
  int64_t minlength_ = -1, maxlength_ = -1;
  bool binary_ = false;
};

// LowerBound / UpperBound(sorted_inputs, values): for each row, where each
// value would be inserted in the sorted row (std::lower_bound before equal
// entries, std::upper_bound after them; TF's).
template <typename T, bool kUpper>
class BoundOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& sorted = ctx->input(0);
    const Tensor& values = ctx->input(1);
    if (sorted.dims() != 2 || values.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("sorted_inputs and values must be matrices, got shapes ",
                       sorted.shape().DebugString(), " and ", values.shape().DebugString()));
    }
    if (sorted.dim_size(0) != values.dim_size(0)) {
      return absl::InvalidArgumentError("Leading dim_size of both tensors must match.");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, values.shape()));
    const int64_t n = sorted.dim_size(1), m = values.dim_size(1);
    const bool wide = out->dtype() == DT_INT64;
    if (!wide && n > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sorted_inputs has ", n, " columns, too many for int32 positions"));
    }
    const T* s = sorted.data<T>();
    const T* v = values.data<T>();
    ctx->intra_op_pool()->ParallelFor(values.NumElements(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = s + (i / m) * n;
        const T* at =
            kUpper ? std::upper_bound(row, row + n, v[i]) : std::lower_bound(row, row + n, v[i]);
        if (wide) {
          out->data<int64_t>()[i] = at - row;
        } else {
          out->data<int32_t>()[i] = static_cast<int32_t>(at - row);
        }
      }
    });
    return absl::OkStatus();
  }
};
template <typename T>
using LowerBoundOp = BoundOp<T, false>;
template <typename T>
using UpperBoundOp = BoundOp<T, true>;

// HistogramFixedWidth(values, value_range, nbins): counts over nbins equal
// bins of [lo, hi); values below lo count in the first bin, values at or
// above hi in the last. The bin is floor((max(v, lo) - lo) / step) capped
// at nbins - 1, computed in double (TF subtracts in T first, which
// overflows at the integer extremes).
template <typename T, typename Out>
class HistogramFixedWidthOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(0);
    const Tensor& range = ctx->input(1);
    const Tensor& nbins_t = ctx->input(2);
    if (range.dims() != 1) return absl::InvalidArgumentError("value_range should be a vector.");
    if (range.NumElements() != 2) {
      return absl::InvalidArgumentError("value_range should be a vector of 2 elements.");
    }
    if (nbins_t.dims() != 0) return absl::InvalidArgumentError("nbins should be a scalar.");
    const T lo = range.data<T>()[0], hi = range.data<T>()[1];
    const int32_t nbins = *nbins_t.data<int32_t>();
    if (!(lo < hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("value_range should satisfy value_range[0] < value_range[1], but got '[", lo,
                       ", ", hi, "]'"));
    }
    if (nbins <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("nbins should be a positive number, but got '", nbins, "'"));
    }
    const T* v = values.data<T>();
    for (int64_t i = 0; i < values.NumElements(); ++i) {
      if (std::isnan(static_cast<double>(v[i]))) {
        return absl::InvalidArgumentError("Histogram values must not contain NaN");
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({nbins})));
    Out* o = out->data<Out>();
    std::fill_n(o, nbins, Out(0));
    const double step = (static_cast<double>(hi) - static_cast<double>(lo)) / nbins;
    const double last = nbins - 1;
    for (int64_t i = 0; i < values.NumElements(); ++i) {
      const double offset = static_cast<double>(std::max(v[i], lo)) - static_cast<double>(lo);
      ++o[static_cast<int64_t>(std::min(offset / step, last))];
    }
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterHistogram() {
  const auto def = [] {
    return KernelDefBuilder("HistogramFixedWidth").Device(kDeviceCpu).TypeConstraint<T>("T");
  };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>("dtype"),
                 MakeFactory<HistogramFixedWidthOp<T, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>("dtype"),
                 MakeFactory<HistogramFixedWidthOp<T, int64_t>>());
}

// Bucketize(input) with attr boundaries: each value's bucket, the number of
// boundaries at or below it (std::upper_bound, as TF: NaN past them all).
// The value is compared as TF compares it, with float boundaries.
template <typename T>
class BucketizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("boundaries", &boundaries_));
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      return absl::InvalidArgumentError("Expected sorted boundaries");
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const T* x = in.data<T>();
    int32_t* y = out->data<int32_t>();
    ctx->intra_op_pool()->ParallelFor(in.NumElements(), 32, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(), x[i]) -
                                    boundaries_.begin());
      }
    });
    return absl::OkStatus();
  }

 private:
  std::vector<float> boundaries_;
};

// `Op<Tidx, T>` as op `name` for values of Tidx (type attr `idx_attr`) and
// every count type (attr `count_attr`): the bincounts and the
// *CountSparseOutput ops.
template <template <typename, typename> class Op, typename Tidx>
void RegisterCounts(const char* name, const char* idx_attr, const char* count_attr) {
  const auto def = [&] {
    return KernelDefBuilder(name).Device(kDeviceCpu).TypeConstraint<Tidx>(idx_attr);
  };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>(count_attr),
                 MakeFactory<Op<Tidx, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>(count_attr),
                 MakeFactory<Op<Tidx, int64_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<float>(count_attr),
                 MakeFactory<Op<Tidx, float>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<double>(count_attr),
                 MakeFactory<Op<Tidx, double>>());
}

TW_REGISTER_KERNELS(histogram_ops) {
  RegisterTypedKernels<BincountOp, int32_t, int64_t, float, double>(
      KernelDefBuilder("Bincount").Device(kDeviceCpu), "T");
  RegisterCounts<DenseBincountOp, int32_t>("DenseBincount", "Tidx", "T");
  RegisterCounts<DenseBincountOp, int64_t>("DenseBincount", "Tidx", "T");
  RegisterCounts<SparseBincountOp, int32_t>("SparseBincount", "Tidx", "T");
  RegisterCounts<SparseBincountOp, int64_t>("SparseBincount", "Tidx", "T");
  RegisterCounts<RaggedBincountOp, int32_t>("RaggedBincount", "Tidx", "T");
  RegisterCounts<RaggedBincountOp, int64_t>("RaggedBincount", "Tidx", "T");
  for (const char* op :
       {"DenseCountSparseOutput", "SparseCountSparseOutput", "RaggedCountSparseOutput"}) {
    RegisterCounts<CountSparseOutputOp, int32_t>(op, "T", "output_type");
    RegisterCounts<CountSparseOutputOp, int64_t>(op, "T", "output_type");
  }
  RegisterTypedKernels<LowerBoundOp, float, double, int32_t, int64_t>(
      KernelDefBuilder("LowerBound").Device(kDeviceCpu), "T");
  RegisterTypedKernels<UpperBoundOp, float, double, int32_t, int64_t>(
      KernelDefBuilder("UpperBound").Device(kDeviceCpu), "T");
  RegisterHistogram<int32_t>();
  RegisterHistogram<int64_t>();
  RegisterHistogram<float>();
  RegisterHistogram<double>();
  RegisterTypedKernels<BucketizeOp, int32_t, int64_t, float, double>(
      KernelDefBuilder("Bucketize").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
