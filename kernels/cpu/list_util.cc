// Helpers of the TensorList kernels (kernels/cpu/list_ops.cc,
// list_concat_ops.cc): see list_util.h.
#include "kernels/cpu/list_util.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/memory_limits.h"
#include "kernels/kernel_util.h"

namespace towerflow {

absl::StatusOr<const TensorList*> InputList(KernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input list must be a scalar saw: ", t.shape().DebugString()));
  }
  const TensorList* list = t.data<Variant>()->get<TensorList>();
  if (list == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input handle is not a list. Saw: '", t.data<Variant>()->DebugString(), "'"));
  }
  return list;
}

// Output `output`'s list, to change: input `input`'s own list when no one
// else holds its tensor (TF's forwarding), else a copy of `list`.
absl::StatusOr<TensorList*> OutputList(KernelContext* ctx, int input, int output,
                                       const TensorList& list) {
  const Tensor& in = ctx->input(input);
  if (in.RefCountIsOne()) {
    TW_RETURN_IF_ERROR(ctx->set_output(output, in));
    return in.data<Variant>()->get<TensorList>();
  }
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(output, TensorShape({})));
  *out->data<Variant>() = Variant(list);
  return out->data<Variant>()->get<TensorList>();
}

absl::Status SetListOutput(KernelContext* ctx, int output, TensorList list) {
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(output, TensorShape({})));
  *out->data<Variant>() = Variant(std::move(list));
  return absl::OkStatus();
}

// An element shape from a shape tensor: the scalar -1 is an unknown rank.
absl::StatusOr<PartialTensorShape> ShapeFromTensor(const Tensor& t) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected an int32 or int64 shape tensor; found ", DataTypeString(t.dtype())));
  }
  if (t.dims() == 0) {
    if (IntAt(t, 0) == -1) return PartialTensorShape();
    return absl::InvalidArgumentError(
        "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) dims[i] = IntAt(t, i);
  return PartialTensorShape::FromDims(dims);
}

// Input `index`'s element shape merged with the list's.
absl::StatusOr<PartialTensorShape> ElementShapeFromInput(KernelContext* ctx, int index,
                                                         const TensorList& list) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ShapeFromTensor(ctx->input(index)));
  return shape.MergeWith(list.element_shape);
}

absl::Status CheckDtype(DataType op_dtype, const TensorList& list) {
  if (op_dtype != list.element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid data types; op elements ",
                                                   DataTypeString(op_dtype), " but list elements ",
                                                   DataTypeString(list.element_dtype)));
  }
  return absl::OkStatus();
}

absl::Status CheckSize(int64_t size, absl::string_view what) {
  if (size > kMaxTensorListElements) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", size, " is beyond the ", kMaxTensorListElements, " elements a list may hold"));
  }
  return absl::OkStatus();
}

absl::Status CheckGrowth(KernelContext* ctx, int64_t size, absl::string_view what) {
  TW_RETURN_IF_ERROR(CheckSize(size, what));
  return CheckHostBudget(size * static_cast<int64_t>(sizeof(Tensor)),
                         ctx->device()->memory_limits(),
                         absl::StrCat(what, " ", size, " list elements"));
}

// `shape` merged with the shape of every set element of `list` at `indices`
// (all of them when null).
absl::StatusOr<PartialTensorShape> MergeElementShapes(PartialTensorShape shape,
                                                      const TensorList& list,
                                                      const std::vector<int64_t>* indices) {
  if (shape.IsFullyDefined()) return shape;
  const int64_t n =
      indices ? static_cast<int64_t>(indices->size()) : static_cast<int64_t>(list.tensors.size());
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = indices ? (*indices)[k] : k;
    if (i < 0 || i >= static_cast<int64_t>(list.tensors.size())) continue;
    const Tensor& t = list.tensors[i];
    if (!t.IsInitialized()) continue;
    TW_ASSIGN_OR_RETURN(shape, shape.MergeWith(t.shape()));
  }
  return shape;
}

// Zeros (empty strings, empty variants) of `dtype` and `shape`.
absl::StatusOr<Tensor> Zeros(KernelContext* ctx, DataType dtype, const TensorShape& shape) {
  TW_ASSIGN_OR_RETURN(Tensor t, ctx->allocate_temp(dtype, shape));
  if (dtype != DT_STRING && dtype != DT_RESOURCE && dtype != DT_VARIANT && t.TotalBytes() > 0) {
    std::memset(t.raw_data(), 0, t.TotalBytes());
  }
  return t;
}

// Copies `src`'s elements into `dst` from element `offset` on.
void CopyElements(const Tensor& src, int64_t src_at, int64_t n, Tensor* dst, int64_t dst_at) {
  if (n == 0) return;
  switch (src.dtype()) {
    case DT_STRING:
      std::copy_n(src.data<std::string>() + src_at, n, dst->data<std::string>() + dst_at);
      return;
    case DT_RESOURCE:
      std::copy_n(src.data<ResourceHandle>() + src_at, n, dst->data<ResourceHandle>() + dst_at);
      return;
    case DT_VARIANT:
      std::copy_n(src.data<Variant>() + src_at, n, dst->data<Variant>() + dst_at);
      return;
    default: {
      const size_t size = TensorElementSize(src.dtype());
      std::memcpy(static_cast<char*>(dst->raw_data()) + dst_at * size,
                  static_cast<const char*>(src.raw_data()) + src_at * size, n * size);
    }
  }
}

// Row `i` of `t` as a tensor of t's shape without its first dimension,
// sharing t's buffer.
absl::StatusOr<Tensor> Row(const Tensor& t, int64_t i) {
  TW_ASSIGN_OR_RETURN(Tensor row, t.Slice(i, i + 1));
  return row.Reshaped(TensorShape(t.shape().dim_sizes().subspan(1)));
}

absl::Status CheckAtLeastVector(const Tensor& t) {
  if (t.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor must be at least a vector, but saw shape: ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// `element_shape` must admit `t`'s rows (t at least a vector).
absl::Status CheckRowsCompatible(const PartialTensorShape& element_shape, const Tensor& t) {
  const TensorShape rows(t.shape().dim_sizes().subspan(1));
  if (!element_shape.IsCompatibleWith(rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Specified a list with shape ", element_shape.DebugString(),
                     " from a tensor with shape ", rows.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status ListKernel::Init(const KernelConstruction& c) {
  for (const auto& attr : c.op_def().attr()) {
    if (attr.name() == "element_dtype") return c.GetAttr("element_dtype", &element_dtype_);
  }
  return absl::OkStatus();
}

absl::Status ZerosLikeVariants(KernelContext* ctx, const Tensor& in, Tensor* out) {
  for (int64_t e = 0; e < in.NumElements(); ++e) {
    const Variant& v = in.data<Variant>()[e];
    const TensorList* list = v.get<TensorList>();
    if (list == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ZerosLike of a variant takes TensorLists only, saw '", v.DebugString(), "'"));
    }
    TensorList zeros(list->element_dtype, list->element_shape);
    zeros.max_num_elements = list->max_num_elements;
    zeros.tensors.reserve(list->tensors.size());
    for (const Tensor& t : list->tensors) {
      if (!t.IsInitialized()) {
        zeros.tensors.emplace_back();
        continue;
      }
      TW_ASSIGN_OR_RETURN(Tensor z, Zeros(ctx, t.dtype(), t.shape()));
      if (t.dtype() == DT_VARIANT) TW_RETURN_IF_ERROR(ZerosLikeVariants(ctx, t, &z));
      zeros.tensors.push_back(std::move(z));
    }
    out->data<Variant>()[e] = Variant(std::move(zeros));
  }
  return absl::OkStatus();
}

}  // namespace towerflow
