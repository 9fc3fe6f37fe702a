// SparseReduceSum and SparseReduceMax (tf.sparse.reduce_sum / reduce_max),
// dense results as TF's: an output element no entry reaches is 0 (for the
// maximum too); each element's entries are combined in the order of their
// positions along the reduced axes (TF sorts them so), duplicates included.
// An entry outside the dense shape is an error naming it.
#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

template <typename T, bool kMax>
class SparseReduceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("keep_dims", &keep_dims_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& shape = ctx->input(2);
    const Tensor& axes = ctx->input(3);
    if (indices.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input indices should be a matrix but received shape ", indices.shape().DebugString()));
    }
    if (values.dims() != 1 || shape.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input values and shape should be vectors, got ",
                       values.shape().DebugString(), " and ", shape.shape().DebugString()));
    }
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    if (values.dim_size(0) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices and values rows (indexing dimension) must match. (indices = ", n,
                       ", values = ", values.dim_size(0), ")"));
    }
    if (shape.dim_size(0) != rank)
      return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
    const int64_t* dims = shape.data<int64_t>();
    std::vector<bool> reduced(rank, false);
    for (int64_t i = 0; i < axes.NumElements(); ++i) {
      const int64_t a = axes.data<int32_t>()[i];
      const int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                       ", for input with ", rank, " dimensions."));
      }
      reduced[axis] = true;
    }
    std::vector<int64_t> out_dims;
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input_shape has a negative dimension ", dims[d], " at ", d));
      }
      if (!reduced[d]) {
        out_dims.push_back(dims[d]);
      } else if (keep_dims_) {
        out_dims.push_back(1);
      }
    }
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
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
        if constexpr (kMax) {
          acc = std::max(acc, v[order[k]]);
        } else {
          acc += v[order[k]];
        }
      }
      o[target] = acc;
    }
    return absl::OkStatus();
  }

 private:
  bool keep_dims_ = false;
};

// Class templates, not aliases: RegisterTypedKernels instantiated with an
// alias template is mangled by the alias's name, so an alias named as one in
// another file's anonymous namespace (reduction_ops.cc's SumOp) would merge
// the two registrations at link time.
template <typename T>
class SparseReduceSumOp : public SparseReduceOp<T, false> {};
template <typename T>
class SparseReduceMaxOp : public SparseReduceOp<T, true> {};

}  // namespace

TW_REGISTER_KERNELS(sparse_reduce_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<SparseReduceSumOp, float, double, int32_t, int64_t, complex64, complex128>(
      cpu("SparseReduceSum"), "T");
  RegisterTypedKernels<SparseReduceMaxOp, float, double, int32_t, int64_t>(cpu("SparseReduceMax"),
                                                                           "T");
}

}  // namespace towerflow
