// Binary ops on SparseTensors, with TF's checks and messages: SparseAdd (and
// SparseAddGrad) and SparseSparseMaximum/Minimum merge two SparseTensors of
// one shape in index order, as TF (row-major sorted operands give the union
// sorted; unsorted ones give what the same merge gives); and
// SparseDenseCwiseAdd/Mul/Div combine each present entry with a dense tensor
// broadcast to the sparse shape. And EditDistance between two
// SparseTensors' sequences.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/sparse_util.h"
#include "kernels/cwise_functors.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// The entries of the union of a and b, by a merge in index order: which
// operand (and entry) each comes from, and the matching entry of the other
// operand (-1 for none).
struct Merged {
  bool from_a;
  int64_t a, b;
};
std::vector<Merged> MergeIndices(const Tensor& a, const Tensor& b) {
  const int64_t rank = a.dim_size(1), na = a.dim_size(0), nb = b.dim_size(0);
  const int64_t* ia = a.data<int64_t>();
  const int64_t* ib = b.data<int64_t>();
  std::vector<Merged> merged;
  merged.reserve(na + nb);
  int64_t i = 0, j = 0;
  while (i < na && j < nb) {
    const int c = sparse::CompareRows(ia + i * rank, ib + j * rank, rank);
    if (c < 0) {
      merged.push_back({true, i++, -1});
    } else if (c == 0) {
      merged.push_back({true, i++, j++});
    } else {
      merged.push_back({false, -1, j++});
    }
  }
  for (; i < na; ++i) merged.push_back({true, i, -1});
  for (; j < nb; ++j) merged.push_back({false, -1, j});
  return merged;
}

void WriteMergedIndices(const Tensor& a, const Tensor& b, const std::vector<Merged>& merged,
                        Tensor* out) {
  const int64_t rank = a.dim_size(1);
  int64_t* dst = out->data<int64_t>();
  for (const Merged& m : merged) {
    const int64_t* src = m.from_a ? a.data<int64_t>() + m.a * rank : b.data<int64_t>() + m.b * rank;
    dst = std::copy(src, src + rank, dst);
  }
}

absl::Status CheckSameShapes(const Tensor& a_shape, const Tensor& b_shape) {
  if (a_shape.NumElements() != b_shape.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Operands do not have the same ranks; got shapes: ", a_shape.SummarizeValue(10), " and ",
        b_shape.SummarizeValue(10)));
  }
  for (int64_t d = 0; d < a_shape.NumElements(); ++d) {
    const int64_t x = a_shape.data<int64_t>()[d], y = b_shape.data<int64_t>()[d];
    if (x != y) {
      return absl::InvalidArgumentError(
          absl::StrCat("Operands' shapes do not match: got ", x, " and ", y, " for dimension ", d));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOperandRank(const Tensor& indices, const Tensor& shape, absl::string_view name) {
  if (indices.dim_size(1) == shape.dim_size(0)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Second dimension of ", name, "_indices and length of ", name,
                   "_shape must match, got ", indices.dim_size(1), " and ", shape.dim_size(0)));
}

// |x| exactly, for comparing with the threshold whatever the two types.
template <typename T>
long double Magnitude(T x) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return static_cast<long double>(std::abs(x));
  } else {
    return std::fabs(static_cast<long double>(x));
  }
}

// SparseAdd: a's and b's entries merged; where both have an entry the sum is
// kept only if |sum| >= thresh (an entry of one operand is always kept).
template <typename T>
class SparseAddOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a_indices = ctx->input(0);
    const Tensor& a_values = ctx->input(1);
    const Tensor& a_shape = ctx->input(2);
    const Tensor& b_indices = ctx->input(3);
    const Tensor& b_values = ctx->input(4);
    const Tensor& b_shape = ctx->input(5);
    const Tensor& thresh = ctx->input(6);
    if (a_indices.dims() != 2 || b_indices.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input indices should be matrices but received shapes: ", a_indices.shape().DebugString(),
          " and ", b_indices.shape().DebugString()));
    }
    if (a_values.dims() != 1 || b_values.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input values should be vectors but received shapes: ", a_values.shape().DebugString(),
          " and ", b_values.shape().DebugString()));
    }
    const int64_t na = a_indices.dim_size(0), nb = b_indices.dim_size(0);
    if (a_values.dim_size(0) != na || b_values.dim_size(0) != nb) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected ", na, " and ", nb, " non-empty input values, got ",
                       a_values.dim_size(0), " and ", b_values.dim_size(0)));
    }
    if (a_shape.dims() != 1 || b_shape.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input shapes should be a vector but received shapes ",
                       a_shape.shape().DebugString(), " and ", b_shape.shape().DebugString()));
    }
    if (a_indices.dim_size(1) != b_indices.dim_size(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input indices must have the same dimension, got ", a_indices.dim_size(1),
                       " and ", b_indices.dim_size(1)));
    }
    TW_RETURN_IF_ERROR(CheckOperandRank(a_indices, a_shape, "a"));
    TW_RETURN_IF_ERROR(CheckOperandRank(b_indices, b_shape, "b"));
    TW_RETURN_IF_ERROR(CheckSameShapes(a_shape, b_shape));
    if (thresh.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "The magnitude threshold must be a scalar: got shape ", thresh.shape().DebugString()));
    }
    long double limit = 0;
    const bool known = VisitRealScalar(thresh, &limit);
    if (!known) return UnsupportedDtype("SparseAdd's thresh", thresh.dtype());
    const std::vector<Merged> all = MergeIndices(a_indices, b_indices);
    const T* av = a_values.data<T>();
    const T* bv = b_values.data<T>();
    std::vector<Merged> kept;
    std::vector<T> sums;
    kept.reserve(all.size());
    sums.reserve(all.size());
    for (const Merged& m : all) {
      if (m.a >= 0 && m.b >= 0) {
        const T s = functor::Add<T>()(av[m.a], bv[m.b]);
        if (!(limit <= Magnitude(s))) continue;
        sums.push_back(s);
      } else {
        sums.push_back(m.from_a ? av[m.a] : bv[m.b]);
      }
      kept.push_back(m);
    }
    const int64_t n = static_cast<int64_t>(kept.size());
    TW_ASSIGN_OR_RETURN(Tensor * out_indices,
                        ctx->allocate_output(0, TensorShape({n, a_indices.dim_size(1)})));
    WriteMergedIndices(a_indices, b_indices, kept, out_indices);
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(1, TensorShape({n})));
    std::copy(sums.begin(), sums.end(), out_values->data<T>());
    return ctx->set_output(2, a_shape);
  }

 private:
  // The threshold as a long double, which holds every value of every real
  // type exactly; false for other dtypes.
  static bool VisitRealScalar(const Tensor& t, long double* out) {
    switch (t.dtype()) {
#define TW_CASE(D, C)                                \
  case D:                                            \
    *out = static_cast<long double>(t.data<C>()[0]); \
    return true;
      TW_CASE(DT_FLOAT, float)
      TW_CASE(DT_DOUBLE, double)
      TW_CASE(DT_INT32, int32_t)
      TW_CASE(DT_INT64, int64_t)
      TW_CASE(DT_INT16, int16_t)
      TW_CASE(DT_INT8, int8_t)
      TW_CASE(DT_UINT8, uint8_t)
      TW_CASE(DT_UINT16, uint16_t)
      TW_CASE(DT_UINT32, uint32_t)
      TW_CASE(DT_UINT64, uint64_t)
#undef TW_CASE
      default:
        return false;
    }
  }
};

// SparseAddGrad: TF's walk of a, b and the sum together; an operand entry
// takes the gradient of the sum entry at its index (0 where dropped).
class SparseAddGradOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const Tensor& a = ctx->input(1);
    const Tensor& b = ctx->input(2);
    const Tensor& sum = ctx->input(3);
    if (a.dims() != 2 || b.dims() != 2 || sum.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input indices should be matrices but received shapes: ", a.shape().DebugString(),
          " and ", b.shape().DebugString(), " and ", sum.shape().DebugString()));
    }
    if (grad.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input backprop_val_grad should be a vector but received shape: ",
                       grad.shape().DebugString()));
    }
    const int64_t rank = a.dim_size(1);
    if (b.dim_size(1) != rank || sum.dim_size(1) != rank) {
      // (TF's message runs the three numbers together.)
      return absl::InvalidArgumentError(absl::StrCat(
          "The densified operands should have the same ndims; for A, B, sum got: ", rank,
          b.dim_size(1), sum.dim_size(1)));
    }
    const int64_t n = sum.dim_size(0);
    if (grad.NumElements() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("# elements of backprop_val_grad and # rows of sum_indices should match "
                       "(#nnz of sum): got ",
                       grad.NumElements(), " and ", n));
    }
    TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize("SparseAddGrad", grad.dtype()));
    const int64_t na = a.dim_size(0), nb = b.dim_size(0);
    TW_ASSIGN_OR_RETURN(Tensor * a_grad, ctx->allocate_output(0, TensorShape({na})));
    TW_ASSIGN_OR_RETURN(Tensor * b_grad, ctx->allocate_output(1, TensorShape({nb})));
    char* ga = static_cast<char*>(a_grad->raw_data());
    char* gb = static_cast<char*>(b_grad->raw_data());
    const char* g = static_cast<const char*>(grad.raw_data());
    std::memset(ga, 0, na * elem);  // zero bits are 0 in every number type
    std::memset(gb, 0, nb * elem);
    const int64_t* ia = a.data<int64_t>();
    const int64_t* ib = b.data<int64_t>();
    const int64_t* is = sum.data<int64_t>();
    int64_t i = 0, j = 0, k = 0;
    // One operand's step against sum entry k: copies the gradient on a
    // match; false when the operand's index is behind the sum's.
    const auto step = [&](const int64_t* idx, int64_t& at, char* dst) {
      const int c = sparse::CompareRows(idx + at * rank, is + k * rank, rank);
      if (c == 0) std::memcpy(dst + at * elem, g + k * elem, elem);
      if (c <= 0) ++at;
      return c >= 0;
    };
    while (i < na && j < nb && k < n) {
      const bool a_ahead = step(ia, i, ga);
      const bool b_ahead = step(ib, j, gb);
      if (a_ahead && b_ahead) ++k;
    }
    while (i < na && k < n) {
      if (step(ia, i, ga)) ++k;
    }
    while (j < nb && k < n) {
      if (step(ib, j, gb)) ++k;
    }
    return absl::OkStatus();
  }
};

// SparseSparseMaximum/Minimum: F over the merged entries, an absent entry
// counting as 0 (NaN propagates, as TF's maximum and minimum).
template <typename T, typename F>
class SparseSparseBinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a_indices = ctx->input(0);
    const Tensor& a_values = ctx->input(1);
    const Tensor& a_shape = ctx->input(2);
    const Tensor& b_indices = ctx->input(3);
    const Tensor& b_values = ctx->input(4);
    const Tensor& b_shape = ctx->input(5);
    TW_RETURN_IF_ERROR(sparse::Validate(a_indices, a_values, a_shape));
    TW_RETURN_IF_ERROR(sparse::CheckInBounds(a_indices, a_shape));
    TW_RETURN_IF_ERROR(sparse::Validate(b_indices, b_values, b_shape));
    TW_RETURN_IF_ERROR(sparse::CheckInBounds(b_indices, b_shape));
    TW_RETURN_IF_ERROR(CheckSameShapes(a_shape, b_shape));
    const std::vector<Merged> merged = MergeIndices(a_indices, b_indices);
    const int64_t n = static_cast<int64_t>(merged.size());
    TW_ASSIGN_OR_RETURN(Tensor * out_indices,
                        ctx->allocate_output(0, TensorShape({n, a_indices.dim_size(1)})));
    WriteMergedIndices(a_indices, b_indices, merged, out_indices);
    TW_ASSIGN_OR_RETURN(Tensor * out_values, ctx->allocate_output(1, TensorShape({n})));
    const T* av = a_values.data<T>();
    const T* bv = b_values.data<T>();
    T* o = out_values->data<T>();
    for (int64_t k = 0; k < n; ++k) {
      const Merged& m = merged[k];
      o[k] = F()(m.a >= 0 ? av[m.a] : T(0), m.b >= 0 ? bv[m.b] : T(0));
    }
    return absl::OkStatus();
  }
};

template <typename T>
class SparseSparseMaximumOp : public SparseSparseBinaryOp<T, functor::Maximum<T>> {};
template <typename T>
class SparseSparseMinimumOp : public SparseSparseBinaryOp<T, functor::Minimum<T>> {};

// SparseDenseCwise*: values[i] F dense[index i], the dense side broadcast to
// the sparse shape (it may have fewer dimensions, or 1s; never more). A zero
// divisor is an error whatever the type, as TF's.
template <typename T, typename F>
class SparseDenseCwiseOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& dense = ctx->input(3);
    TW_RETURN_IF_ERROR(sparse::CheckOperandRanks(indices, values, shape, "sp_"));
    const int64_t n = indices.dim_size(0), rank = shape.dim_size(0);
    if (values.dim_size(0) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("The first dimension of values and indices should match. (",
                       values.dim_size(0), " vs. ", n, ")"));
    }
    if (indices.dim_size(1) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Number of dimensions must match second dimension of indices. Got ", rank,
                       " dimensions, indices shape: ", indices.shape().DebugString()));
    }
    if (rank == 0) {
      return absl::InvalidArgumentError("The shape argument requires at least one element.");
    }
    const int64_t* dims = shape.data<int64_t>();
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected shape dimensions to be non-negative, got ", dims[d]));
      }
    }
    // The dense side's dims aligned right to the sparse ones: each equal, or
    // 1 against a nonzero dim.
    const int dense_rank = dense.dims();
    bool fits = dense_rank <= rank;
    for (int d = 0; fits && d < dense_rank; ++d) {
      const int64_t want = dims[rank - dense_rank + d], have = dense.dim_size(d);
      fits = have == want || (have == 1 && want > 0);
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible shapes: [",
          absl::StrJoin(dims, dims + rank, ","), "] vs. [",
          absl::StrJoin(dense.shape().dim_sizes(), ","), "]"));
    }
    if (rank > 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Only tensors with ranks between 1 and 5 are currently supported.  Tensor rank: ", rank));
    }
    // Each sparse dim's stride in the dense tensor (0 where broadcast).
    std::vector<int64_t> stride(rank, 0);
    for (int64_t d = rank - 1, s = 1; d >= rank - dense_rank; --d) {
      const int64_t have = dense.dim_size(static_cast<int>(d - (rank - dense_rank)));
      stride[d] = have == 1 ? 0 : s;
      s *= have;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({n})));
    const int64_t* idx = indices.data<int64_t>();
    const T* v = values.data<T>();
    const T* y = dense.data<T>();
    T* o = out->data<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t k = idx[i * rank + d];
        if (k < 0 || k >= dims[d]) {
          return absl::InvalidArgumentError(
              "Provided indices are out-of-bounds w.r.t. dense side with broadcasted shape");
        }
        at += k * stride[d];
      }
      if constexpr (functor::DividesByY<F>::value) {  // floats too, as TF
        if (y[at] == T(0)) {
          return absl::InvalidArgumentError(
              "SparseDenseCwiseDiv cannot divide by zero,but input dense tensor contains zero ");
        }
      }
      o[i] = F()(v[i], y[at]);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class SparseDenseCwiseAddOp : public SparseDenseCwiseOp<T, functor::Add<T>> {};
template <typename T>
class SparseDenseCwiseMulOp : public SparseDenseCwiseOp<T, functor::Mul<T>> {};
template <typename T>
class SparseDenseCwiseDivOp : public SparseDenseCwiseOp<T, functor::Div<T>> {};

// EditDistance: the sequences are runs of consecutive entries sharing all
// but the last index (TF's grouping, which assumes row-major order); the two
// operands' runs merge by that position, each writing its output element:
// the Levenshtein distance where both have a run (over the truth's length
// with normalize), the hypothesis' length where the truth has none (inf
// with normalize), the truth's length (1) where the hypothesis has none.
template <typename T>
class EditDistanceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("normalize", &normalize_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_RETURN_IF_ERROR(Validate(ctx));
    const Tensor& h_shape = ctx->input(2);
    const Tensor& t_shape = ctx->input(5);
    const int64_t rank = t_shape.NumElements();
    std::vector<int64_t> out_dims;
    for (int64_t d = 0; d < rank; ++d) {
      for (const Tensor* shape : {&h_shape, &t_shape}) {
        const int64_t v = shape->data<int64_t>()[d];
        if (v < 0)
          return absl::InvalidArgumentError(absl::StrCat("Dimension ", v, " must be >= 0"));
      }
      if (d + 1 < rank) {
        out_dims.push_back(std::max(h_shape.data<int64_t>()[d], t_shape.data<int64_t>()[d]));
      }
    }
    TW_ASSIGN_OR_RETURN(const TensorShape out_shape, TensorShape::FromDims(out_dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    float* o = out->data<float>();
    std::fill_n(o, out->NumElements(), 0.0f);
    const std::vector<Run> hyp = Runs(ctx->input(0)), truth = Runs(ctx->input(3));
    const T* hv = ctx->input(1).data<T>();
    const T* tv = ctx->input(4).data<T>();
    const int64_t* hi = ctx->input(0).data<int64_t>();
    const int64_t* ti = ctx->input(3).data<int64_t>();
    // The output element of the run starting at row `e` of `indices`.
    const auto where = [&](const int64_t* indices, int64_t e, int64_t* at) -> absl::Status {
      // In 128 bits, stride and position held within +-2^64: past that the
      // position is out of range whatever follows, and nothing overflows.
      constexpr __int128 kFar = static_cast<__int128>(1) << 64;
      __int128 loc = 0, stride = 1;
      for (int64_t d = rank - 2; d >= 0; --d) {
        loc += static_cast<__int128>(indices[e * rank + d]) * stride;
        loc = std::clamp(loc, -kFar, kFar);
        stride = std::min(stride * out_dims[d], kFar);
      }
      if (loc < 0 || loc >= out->NumElements()) {
        // (TF's code is Internal; the indices are the caller's.)
        return absl::InvalidArgumentError(absl::StrCat(
            "Got an inner product ",
            loc > std::numeric_limits<int64_t>::max()   ? std::string("over 2^63")
            : loc < std::numeric_limits<int64_t>::min() ? std::string("under -2^63")
                                                        : absl::StrCat(static_cast<int64_t>(loc)),
            " which would require writing to outside of the buffer for the output tensor (max "
            "elements ",
            out->NumElements(), ")"));
      }
      *at = static_cast<int64_t>(loc);
      return absl::OkStatus();
    };
    size_t i = 0, j = 0;
    int64_t at = 0;
    while (i < hyp.size() || j < truth.size()) {
      const int c = i == hyp.size()     ? 1
                    : j == truth.size() ? -1
                                        : sparse::CompareRows(hi + hyp[i].begin * rank,
                                                              ti + truth[j].begin * rank, rank - 1);
      if (c == 0) {
        TW_RETURN_IF_ERROR(where(ti, truth[j].begin, &at));
        const float distance = static_cast<float>(
            Levenshtein(hv + hyp[i].begin, hyp[i].size(), tv + truth[j].begin, truth[j].size()));
        o[at] = normalize_ ? distance / static_cast<float>(truth[j].size()) : distance;
        ++i;
        ++j;
      } else if (c < 0) {  // no truth here
        TW_RETURN_IF_ERROR(where(hi, hyp[i].begin, &at));
        o[at] = static_cast<float>(hyp[i].size());
        if (normalize_) o[at] /= 0.0f;
        ++i;
      } else {  // no hypothesis here
        TW_RETURN_IF_ERROR(where(ti, truth[j].begin, &at));
        o[at] = normalize_ ? 1.0f : static_cast<float>(truth[j].size());
        ++j;
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Run {
    int64_t begin, end;
    int64_t size() const { return end - begin; }
  };

  // TF's checks, in its order.
  static absl::Status Validate(KernelContext* ctx) {
    const char* const names[] = {"hypothesis", "truth"};
    const char* const parts[] = {"_indices should be a matrix", "_values should be a vector",
                                 "_shape should be a vector"};
    for (int part = 0; part < 3; ++part) {
      for (int k = 0; k < 2; ++k) {
        const Tensor& t = ctx->input(3 * k + part);
        if (t.dims() != (part == 0 ? 2 : 1)) {
          return absl::InvalidArgumentError(
              absl::StrCat(names[k], parts[part], ", but got shape: ", t.shape().DebugString()));
        }
      }
    }
    for (int k = 0; k < 2; ++k) {
      const Tensor& indices = ctx->input(3 * k);
      const Tensor& values = ctx->input(3 * k + 1);
      if (values.NumElements() != indices.dim_size(0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected ", names[k], "_values.NumElements == #rows(", names[k],
                         "_indices), their shapes are: ", values.shape().DebugString(), " and ",
                         indices.shape().DebugString()));
      }
    }
    const Tensor& h_shape = ctx->input(2);
    const Tensor& t_shape = ctx->input(5);
    const auto cols = [&](int k) -> absl::Status {
      const Tensor& indices = ctx->input(3 * k);
      const Tensor& shape = ctx->input(3 * k + 2);
      if (shape.NumElements() == indices.dim_size(1)) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("Expected ", names[k], "_shape.NumElements == #cols(", names[k],
                       "_indices), their shapes are: ", shape.shape().DebugString(), " and ",
                       indices.shape().DebugString()));
    };
    TW_RETURN_IF_ERROR(cols(0));
    if (t_shape.NumElements() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input SparseTensors must have rank at least 2, but truth_shape rank is: ",
                       t_shape.NumElements()));
    }
    TW_RETURN_IF_ERROR(cols(1));
    if (t_shape.NumElements() != h_shape.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected truth and hypothesis to have matching ranks, but their shapes are: ",
          t_shape.shape().DebugString(), " and ", h_shape.shape().DebugString()));
    }
    return absl::OkStatus();
  }

  // Runs of consecutive rows equal but in the last column.
  static std::vector<Run> Runs(const Tensor& indices) {
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    const int64_t* idx = indices.data<int64_t>();
    std::vector<Run> runs;
    for (int64_t e = 0; e < n; ++e) {
      if (runs.empty() ||
          sparse::CompareRows(idx + runs.back().begin * rank, idx + e * rank, rank - 1) != 0) {
        runs.push_back({e, e + 1});
      } else {
        runs.back().end = e + 1;
      }
    }
    return runs;
  }

  // Insertions, deletions and substitutions turning a into b (one row of
  // the table at a time).
  static int64_t Levenshtein(const T* a, int64_t na, const T* b, int64_t nb) {
    std::vector<int64_t> row(nb + 1);
    for (int64_t k = 0; k <= nb; ++k) row[k] = k;
    for (int64_t x = 1; x <= na; ++x) {
      int64_t diagonal = row[0];
      row[0] = x;
      for (int64_t y = 1; y <= nb; ++y) {
        const int64_t above = row[y];
        row[y] = std::min({above + 1, row[y - 1] + 1, diagonal + (a[x - 1] == b[y - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[nb];
  }

  bool normalize_ = true;
};

}  // namespace

TW_REGISTER_KERNELS(sparse_binary_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<SparseAddOp, float, double, int32_t, int64_t, uint8_t, int16_t, int8_t,
                       complex64, complex128>(cpu("SparseAdd"), "T");
  RegisterKernel(cpu("SparseAddGrad"), MakeFactory<SparseAddGradOp>());
#define TW_REAL_TYPES \
  float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t
  RegisterTypedKernels<SparseSparseMaximumOp, TW_REAL_TYPES>(cpu("SparseSparseMaximum"), "T");
  RegisterTypedKernels<SparseSparseMinimumOp, TW_REAL_TYPES>(cpu("SparseSparseMinimum"), "T");
  RegisterTypedKernels<SparseDenseCwiseAddOp, TW_REAL_TYPES>(cpu("SparseDenseCwiseAdd"), "T");
  RegisterTypedKernels<SparseDenseCwiseMulOp, TW_REAL_TYPES>(cpu("SparseDenseCwiseMul"), "T");
  RegisterTypedKernels<SparseDenseCwiseDivOp, TW_REAL_TYPES>(cpu("SparseDenseCwiseDiv"), "T");
#undef TW_REAL_TYPES
  RegisterTypedKernels<EditDistanceOp, float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                       uint16_t, uint32_t, uint64_t, bool, std::string, complex64, complex128, half,
                       bfloat16>(cpu("EditDistance"), "T");
}

}  // namespace towerflow
