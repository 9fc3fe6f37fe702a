// SparseTensorDenseAdd (RaggedRange is in range_ops.cc).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/cwise_ops.h"
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
    if (indices.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input a_indices should be a matrix but received shape: ",
                       indices.shape().DebugString()));
    }
    if (values.dims() != 1 || shape.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Inputs a_values and a_shape should be vectors but received shapes: ",
                       values.shape().DebugString(), " and ", shape.shape().DebugString()));
    }
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

TW_REGISTER_KERNELS(sparse_ops) {
  RegisterTypedKernels<SparseTensorDenseAddOp, float, double, int32_t, int64_t, uint8_t>(
      KernelDefBuilder("SparseTensorDenseAdd").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
