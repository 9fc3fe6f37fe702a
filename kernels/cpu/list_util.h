// What the TensorList kernels share (kernels/cpu/list_ops.cc,
// list_concat_ops.cc), and ZerosLike of lists for the ZerosLike kernel.
#ifndef TOWERFLOW_KERNELS_CPU_LIST_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_LIST_UTIL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/tensor.h"
#include "framework/tensor_list.h"

namespace towerflow {

// The list in scalar variant input `i`; InvalidArgument naming what it is
// otherwise.
absl::StatusOr<const TensorList*> InputList(KernelContext* ctx, int i);

// Output `output`'s list, to change: input `input`'s own list when no one
// else holds its tensor (TF's forwarding), else a copy of `list`.
absl::StatusOr<TensorList*> OutputList(KernelContext* ctx, int input, int output,
                                       const TensorList& list);

// Sets output `output` to a new scalar variant holding `list`.
absl::Status SetListOutput(KernelContext* ctx, int output, TensorList list);

// An element shape from an int32/int64 shape tensor: the scalar -1 is an
// unknown rank, -1 in a vector an unknown dimension.
absl::StatusOr<PartialTensorShape> ShapeFromTensor(const Tensor& t);

// Input `index`'s element shape merged with the list's.
absl::StatusOr<PartialTensorShape> ElementShapeFromInput(KernelContext* ctx, int index,
                                                         const TensorList& list);

// TF's "Invalid data types; op elements ... but list elements ...".
absl::Status CheckDtype(DataType op_dtype, const TensorList& list);

// InvalidArgument when `size` elements exceed kMaxTensorListElements.
absl::Status CheckSize(int64_t size, absl::string_view what);
// CheckSize, and ResourceExhausted when the bookkeeping of a list grown to
// `size` elements that no data stands for (a reserve, a resize, a far
// index) would not fit the device's host memory budget.
absl::Status CheckGrowth(KernelContext* ctx, int64_t size, absl::string_view what);

// `shape` merged with the shape of every set element of `list` at `indices`
// (all of them when null).
absl::StatusOr<PartialTensorShape> MergeElementShapes(PartialTensorShape shape,
                                                      const TensorList& list,
                                                      const std::vector<int64_t>* indices);

// Zeros (empty strings, empty variants) of `dtype` and `shape`.
absl::StatusOr<Tensor> Zeros(KernelContext* ctx, DataType dtype, const TensorShape& shape);

// Copies `n` elements of `src` from element `src_at` into `dst` from element
// `dst_at` (strings, handles and variants copied as objects). REQUIRES: the
// same dtype, and room.
void CopyElements(const Tensor& src, int64_t src_at, int64_t n, Tensor* dst, int64_t dst_at);
// Copies all of `src`'s elements into `dst` from element `offset` on.
inline void CopyElements(const Tensor& src, int64_t offset, Tensor* dst) {
  CopyElements(src, 0, src.NumElements(), dst, offset);
}

// Row `i` of `t` as a tensor of t's shape without its first dimension,
// sharing t's buffer.
absl::StatusOr<Tensor> Row(const Tensor& t, int64_t i);

absl::Status CheckAtLeastVector(const Tensor& t);

// `element_shape` must admit `t`'s rows (t at least a vector).
absl::Status CheckRowsCompatible(const PartialTensorShape& element_shape, const Tensor& t);

// A list kernel: reads element_dtype when the op has it; cheap enough to
// run inline.
class ListKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override;
  bool IsExpensive() const override { return false; }

 protected:
  DataType element_dtype_ = DT_INVALID;
};

// ZerosLike of a DT_VARIANT tensor (TF's ZEROS_LIKE_VARIANT_UNARY_OP): each
// TensorList of `in` as a list of zeros of its elements' shapes, unset
// elements staying unset, into `out` (allocated like `in`). InvalidArgument
// for a variant that is not a TensorList.
absl::Status ZerosLikeVariants(KernelContext* ctx, const Tensor& in, Tensor* out);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_LIST_UTIL_H_
