// The TensorList kernels (TF's list_kernels): lists of tensors as values, a
// scalar DT_VARIANT tensor holding a TensorList (framework/tensor_list.h),
// with TF's semantics and messages:
// - A list's element shape may be partial; elements must be compatible with
//   it. An op's element_shape input (a shape tensor, -1 for an unknown rank)
//   is merged with the list's, and for a read of unset elements with the set
//   elements' shapes: unset elements read as zeros of that shape, which must
//   then be fully known.
// - Ops that change a list (SetItem, PushBack, PopBack, Resize,
//   ScatterIntoExistingList) change the input's list in place when this
//   node holds the only reference to its tensor, as TF forwards the input;
//   otherwise they change a copy (whose elements share their buffers).
// - Elements share their producers' buffers (FromTensor's rows are slices).
// CPU only: soft placement puts a GPU tower's lists on the CPU.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_list.h"
#include "kernels/cpu/list_util.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Output `output`: the elements of `list` at `indices`, stacked, unset ones
// as zeros of `element_shape` (fully defined by then).
absl::Status StackElements(KernelContext* ctx, int output, const TensorList& list,
                           const std::vector<int64_t>& indices, const TensorShape& element_shape) {
  std::vector<int64_t> dims = {static_cast<int64_t>(indices.size())};
  dims.insert(dims.end(), element_shape.dim_sizes().begin(), element_shape.dim_sizes().end());
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(output, shape));
  const int64_t row = element_shape.num_elements();
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& t = list.tensors[indices[k]];
    if (!t.IsInitialized()) {
      TW_ASSIGN_OR_RETURN(Tensor zeros, Zeros(ctx, list.element_dtype, element_shape));
      CopyElements(zeros, k * row, out);
      continue;
    }
    if (t.shape() != element_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tried to stack elements of different shapes: element ", indices[k], " has shape ",
          t.shape().DebugString(), " but the elements are ", element_shape.DebugString()));
    }
    CopyElements(t, k * row, out);
  }
  return absl::OkStatus();
}

// EmptyTensorList and TensorListReserve.
class NewListOp : public ListKernel {
 public:
  explicit NewListOp(bool reserve) : reserve_(reserve) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ShapeFromTensor(ctx->input(0)));
    TensorList list(element_dtype_, std::move(shape));
    if (reserve_) {
      TW_ASSIGN_OR_RETURN(int64_t n, IntScalar(ctx->input(1), "num_elements"));
      if (n < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("The num_elements to reserve must be a non negative number, but got ", n));
      }
      TW_RETURN_IF_ERROR(CheckGrowth(ctx, n, "num_elements"));
      list.tensors.resize(n);
    } else {
      TW_ASSIGN_OR_RETURN(list.max_num_elements, IntScalar(ctx->input(1), "max_num_elements"));
    }
    return SetListOutput(ctx, 0, std::move(list));
  }

 private:
  const bool reserve_;
};

class FromTensorOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ShapeFromTensor(ctx->input(1)));
    TW_RETURN_IF_ERROR(CheckAtLeastVector(t));
    TW_RETURN_IF_ERROR(CheckRowsCompatible(shape, t));
    TW_RETURN_IF_ERROR(CheckSize(t.dim_size(0), "A list of"));
    TensorList list(t.dtype(), std::move(shape));
    list.tensors.reserve(t.dim_size(0));
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      TW_ASSIGN_OR_RETURN(Tensor row, Row(t, i));
      list.tensors.push_back(std::move(row));
    }
    return SetListOutput(ctx, 0, std::move(list));
  }
};

class LengthOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({})));
    out->data<int32_t>()[0] = static_cast<int32_t>(list->tensors.size());
    return absl::OkStatus();
  }
};

class ElementShapeOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    const PartialTensorShape& s = list->element_shape;
    if (s.unknown_rank()) {
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({})));
      return WriteInts({-1}, out);
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({s.dims()})));
    return WriteInts(std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end()), out);
  }
};

class GetItemOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    TW_ASSIGN_OR_RETURN(int64_t index, IntScalar(ctx->input(1), "index"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    if (index < 0 || index >= size) {
      return absl::InvalidArgumentError(
          absl::StrCat("Trying to access element ", index, " in a list with ", size, " elements."));
    }
    const Tensor& item = list->tensors[index];
    if (item.IsInitialized()) return ctx->set_output(0, item);
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ElementShapeFromInput(ctx, 2, *list));
    TW_ASSIGN_OR_RETURN(shape, MergeElementShapes(std::move(shape), *list, nullptr));
    if (!shape.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Trying to read an uninitialized tensor but element_shape is not fully defined: ",
          shape.DebugString(), " and no list element is set."));
    }
    TW_ASSIGN_OR_RETURN(TensorShape full, shape.AsTensorShape());
    TW_ASSIGN_OR_RETURN(Tensor zeros, Zeros(ctx, element_dtype_, full));
    return ctx->set_output(0, std::move(zeros));
  }
};

class SetItemOp : public ListKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(ListKernel::Init(c));
    return c.GetAttr("resize_if_index_out_of_bounds", &resize_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    TW_ASSIGN_OR_RETURN(int64_t index, IntScalar(ctx->input(1), "index"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    if (index < 0 || (index >= size && !resize_)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Trying to modify element ", index, " in a list with ", size, " elements."));
    }
    TW_RETURN_IF_ERROR(CheckGrowth(ctx, index + 1, "A list of"));
    const Tensor& item = ctx->input(2);
    if (!list->element_shape.IsCompatibleWith(item.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tried to set a tensor with incompatible shape at a list index. Item element shape: ",
          item.shape().DebugString(), " list shape: ", list->element_shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorList * out, OutputList(ctx, 0, 0, *list));
    if (index >= size) out->tensors.resize(index + 1);
    out->tensors[index] = item;
    return absl::OkStatus();
  }

 private:
  bool resize_ = false;
};

class PushBackOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& item = ctx->input(1);
    if (element_dtype_ != item.dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid data types; list elements ", DataTypeString(element_dtype_),
                       " but tried to append ", DataTypeString(item.dtype())));
    }
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    if (!list->element_shape.IsCompatibleWith(item.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tried to append a tensor with incompatible shape to a list. Op element shape: ",
          item.shape().DebugString(), " list shape: ", list->element_shape.DebugString()));
    }
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    if (list->max_num_elements != -1 && size >= list->max_num_elements) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tried to push item into a full list list size: ", size,
                       " max_num_elements: ", list->max_num_elements));
    }
    TW_RETURN_IF_ERROR(CheckSize(size + 1, "A list of"));
    TW_ASSIGN_OR_RETURN(TensorList * out, OutputList(ctx, 0, 0, *list));
    out->tensors.push_back(item);
    return absl::OkStatus();
  }
};

class PopBackOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    if (list->tensors.empty()) {
      return absl::InvalidArgumentError("Trying to pop from an empty list.");
    }
    Tensor item = list->tensors.back();
    if (!item.IsInitialized()) {
      TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ElementShapeFromInput(ctx, 1, *list));
      if (!shape.IsFullyDefined()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Trying to read an uninitialized tensor but element_shape is not fully "
                         "defined.",
                         shape.DebugString()));
      }
      TW_ASSIGN_OR_RETURN(TensorShape full, shape.AsTensorShape());
      TW_ASSIGN_OR_RETURN(item, Zeros(ctx, element_dtype_, full));
    }
    TW_ASSIGN_OR_RETURN(TensorList * out, OutputList(ctx, 0, 0, *list));
    out->tensors.pop_back();
    return ctx->set_output(1, std::move(item));
  }
};

// TensorListStack and TensorListGather.
class StackOp : public ListKernel {
 public:
  explicit StackOp(bool gather) : gather_(gather) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(ListKernel::Init(c));
    return gather_ ? absl::OkStatus() : c.GetAttr("num_elements", &num_elements_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    std::vector<int64_t> indices;
    if (gather_) {
      const Tensor& t = ctx->input(1);
      if (t.dims() > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("indices must be a vector, got shape ", t.shape().DebugString()));
      }
      for (int64_t k = 0; k < t.NumElements(); ++k) {
        const int64_t i = IntAt(t, k);
        if (i < 0 || i >= size) {
          return absl::InvalidArgumentError(
              absl::StrCat("Index ", i, " out o range; list only has ", size, " elements."));
        }
        indices.push_back(i);
      }
    } else {
      if (num_elements_ != -1 && size != num_elements_) {
        return absl::InvalidArgumentError(
            absl::StrCat("Operation expected a list with ", num_elements_,
                         " elements but got a list with ", size, " elements."));
      }
      indices.resize(size);
      for (int64_t i = 0; i < size; ++i) indices[i] = i;
    }
    const int shape_input = gather_ ? 2 : 1;
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ElementShapeFromInput(ctx, shape_input, *list));
    if (!shape.IsFullyDefined() && indices.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(gather_ ? "Tried to gather 0-elements from a list with non-fully-defined "
                                 "shape: "
                               : "Tried to stack elements of an empty list with "
                                 "non-fully-defined element_shape: ",
                       shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(shape, MergeElementShapes(std::move(shape), *list, &indices));
    if (!shape.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          gather_ ? "Tried to gather uninitialized tensors from a list with non-fully-defined "
                    "element_shape: "
                  : "Tried to stack list which only contains uninitialized tensors and has a "
                    "non-fully-defined element_shape: ",
          shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape full, shape.AsTensorShape());
    return StackElements(ctx, 0, *list, indices, full);
  }

 private:
  const bool gather_;
  int64_t num_elements_ = -1;
};

// The indices of a scatter: a vector as long as `t`'s first dimension, each
// non-negative.
absl::StatusOr<std::vector<int64_t>> ScatterIndices(KernelContext* ctx, const Tensor& indices,
                                                    const Tensor& t) {
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> out, IntVector(indices, "indices"));
  if (static_cast<int64_t>(out.size()) != t.dim_size(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid number of rows in input tensor. Expected: ", out.size(),
                     " Actual: ", t.dim_size(0)));
  }
  for (int64_t i : out) {
    if (i < 0) {
      return absl::InvalidArgumentError("Indices in TensorListScatter must all be non-negative.");
    }
    TW_RETURN_IF_ERROR(CheckGrowth(ctx, i + 1, "A list of"));
  }
  return out;
}

// Sets `list`'s elements at `indices` to t's rows, growing it as needed.
absl::Status ScatterRows(const Tensor& t, const std::vector<int64_t>& indices, TensorList* list) {
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] >= static_cast<int64_t>(list->tensors.size())) {
      list->tensors.resize(indices[k] + 1);
    }
    TW_ASSIGN_OR_RETURN(list->tensors[indices[k]], Row(t, k));
  }
  return absl::OkStatus();
}

// TensorListScatter and TensorListScatterV2.
class ScatterOp : public ListKernel {
 public:
  explicit ScatterOp(bool v2) : v2_(v2) {}
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ShapeFromTensor(ctx->input(2)));
    TW_RETURN_IF_ERROR(CheckAtLeastVector(t));
    TW_RETURN_IF_ERROR(CheckRowsCompatible(shape, t));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ScatterIndices(ctx, ctx->input(1), t));
    TensorList list(t.dtype(), std::move(shape));
    if (v2_) {
      TW_ASSIGN_OR_RETURN(int64_t n, IntScalar(ctx->input(3), "num_elements"));
      if (n < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("TensorListScatter expects num_elements >= -1, found: ", n));
      }
      if (n != -1) {
        TW_RETURN_IF_ERROR(CheckGrowth(ctx, n, "num_elements"));
        for (int64_t i : indices) {
          if (i >= n) {
            return absl::InvalidArgumentError(absl::StrCat(
                "TensorListScatter: Trying to scatter at index ", i, " in list with size ", n));
          }
        }
        list.tensors.resize(n);
      }
    }
    TW_RETURN_IF_ERROR(ScatterRows(t, indices, &list));
    return SetListOutput(ctx, 0, std::move(list));
  }

 private:
  const bool v2_;
};

class ScatterIntoExistingListOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    const Tensor& t = ctx->input(1);
    if (t.dtype() != list->element_dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid data types; list elements ", DataTypeString(list->element_dtype),
                       " but tried to write ", DataTypeString(t.dtype())));
    }
    TW_RETURN_IF_ERROR(CheckAtLeastVector(t));
    TW_RETURN_IF_ERROR(CheckRowsCompatible(list->element_shape, t));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ScatterIndices(ctx, ctx->input(2), t));
    TW_ASSIGN_OR_RETURN(TensorList * out, OutputList(ctx, 0, 0, *list));
    return ScatterRows(t, indices, out);
  }
};

class ResizeOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_ASSIGN_OR_RETURN(int64_t size, IntScalar(ctx->input(1), "size"));
    if (size < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorListSlice expects size to be non-negative. Got: ", size));
    }
    TW_RETURN_IF_ERROR(CheckGrowth(ctx, size, "size"));
    TW_ASSIGN_OR_RETURN(TensorList * out, OutputList(ctx, 0, 0, *list));
    out->tensors.resize(size);
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(list_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("EmptyTensorList"), [] { return std::make_unique<NewListOp>(false); });
  RegisterKernel(cpu("TensorListReserve"), [] { return std::make_unique<NewListOp>(true); });
  RegisterKernel(cpu("TensorListFromTensor"), MakeFactory<FromTensorOp>());
  RegisterKernel(cpu("TensorListLength"), MakeFactory<LengthOp>());
  RegisterKernel(cpu("TensorListElementShape"), MakeFactory<ElementShapeOp>());
  RegisterKernel(cpu("TensorListGetItem"), MakeFactory<GetItemOp>());
  RegisterKernel(cpu("TensorListSetItem"), MakeFactory<SetItemOp>());
  RegisterKernel(cpu("TensorListPushBack"), MakeFactory<PushBackOp>());
  RegisterKernel(cpu("TensorListPopBack"), MakeFactory<PopBackOp>());
  RegisterKernel(cpu("TensorListStack"), [] { return std::make_unique<StackOp>(false); });
  RegisterKernel(cpu("TensorListGather"), [] { return std::make_unique<StackOp>(true); });
  RegisterKernel(cpu("TensorListScatter"), [] { return std::make_unique<ScatterOp>(false); });
  RegisterKernel(cpu("TensorListScatterV2"), [] { return std::make_unique<ScatterOp>(true); });
  RegisterKernel(cpu("TensorListScatterIntoExistingList"),
                 MakeFactory<ScatterIntoExistingListOp>());
  RegisterKernel(cpu("TensorListResize"), MakeFactory<ResizeOp>());
}

}  // namespace towerflow
