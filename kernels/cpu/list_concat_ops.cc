// The TensorList kernels that join and split: TensorListConcat/V2,
// TensorListSplit, TensorListConcatLists, TensorListPushBackBatch, and AddN
// of lists (TF's TensorListBinaryAdd, how a loop's gradient accumulators
// sum). Semantics as in list_ops.cc; helpers in list_util.h.
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

// TensorListConcat (element_shape an attr) and TensorListConcatV2 (an
// input, with the first dimensions of unset elements in leading_dims).
class ConcatOp : public ListKernel {
 public:
  explicit ConcatOp(bool v2) : v2_(v2) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(ListKernel::Init(c));
    return v2_ ? absl::OkStatus() : c.GetAttr("element_shape", &attr_shape_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const TensorList* list, InputList(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *list));
    PartialTensorShape shape = attr_shape_;
    std::vector<int64_t> leading;
    if (v2_) {
      TW_ASSIGN_OR_RETURN(shape, ShapeFromTensor(ctx->input(1)));
      TW_ASSIGN_OR_RETURN(leading, IntVector(ctx->input(2), "leading_dims"));
    }
    TW_ASSIGN_OR_RETURN(shape, shape.MergeWith(list->element_shape));
    if (shape.dims() == 0) {
      return absl::InvalidArgumentError(
          "Concat requires elements to be at least vectors, found scalars instead.");
    }
    // The shape past the first dimension, from the op, the list and the set
    // elements.
    PartialTensorShape rest = shape.unknown_rank()
                                  ? PartialTensorShape()
                                  : PartialTensorShape(shape.dim_sizes().subspan(1));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    for (int64_t i = 0; i < size; ++i) {
      const Tensor& t = list->tensors[i];
      if (!t.IsInitialized()) continue;
      if (t.dims() == 0) {
        return absl::InvalidArgumentError(
            "Concat saw a scalar shape at index 0 but requires at least vectors.");
      }
      const PartialTensorShape r(t.shape().dim_sizes().subspan(1));
      if (!rest.IsCompatibleWith(r)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Tried to concat tensors with unequal shapes: ", rest.DebugString(),
                         " vs ", r.DebugString()));
      }
      TW_ASSIGN_OR_RETURN(rest, rest.MergeWith(r));
    }
    if (!rest.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          size == 0 ? "All except the first dimension must be fully defined when concating an "
                      "empty tensor list. element_shape: "
                    : "Trying to concat list with only uninitialized tensors but element_shape "
                      "is not fully defined: ",
          shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape rest_shape, rest.AsTensorShape());
    std::vector<int64_t> lengths(size);
    int64_t rows = 0;
    for (int64_t i = 0; i < size; ++i) {
      const Tensor& t = list->tensors[i];
      if (t.IsInitialized()) {
        lengths[i] = t.dim_size(0);
      } else if (!shape.unknown_rank() && shape.dim_size(0) >= 0) {
        lengths[i] = shape.dim_size(0);
      } else if (i < static_cast<int64_t>(leading.size()) && leading[i] >= 0) {
        lengths[i] = leading[i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("Trying to concat list with uninitialized tensor at index ", i,
                         " but its first dimension is not known: neither element_shape ",
                         shape.DebugString(), " nor leading_dims gives it"));
      }
      rows += lengths[i];
    }
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), rest_shape.dim_sizes().begin(), rest_shape.dim_sizes().end());
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    TW_ASSIGN_OR_RETURN(Tensor * lengths_out, ctx->allocate_output(1, TensorShape({size})));
    const int64_t row = rest_shape.num_elements();
    int64_t offset = 0;
    for (int64_t i = 0; i < size; ++i) {
      lengths_out->data<int64_t>()[i] = lengths[i];
      const Tensor& t = list->tensors[i];
      if (t.IsInitialized()) {
        CopyElements(t, offset, out);
      } else {
        TensorShape zeros_shape = rest_shape;
        std::vector<int64_t> zdims = {lengths[i]};
        zdims.insert(zdims.end(), rest_shape.dim_sizes().begin(), rest_shape.dim_sizes().end());
        TW_ASSIGN_OR_RETURN(zeros_shape, TensorShape::FromDims(zdims));
        TW_ASSIGN_OR_RETURN(Tensor zeros, Zeros(ctx, element_dtype_, zeros_shape));
        CopyElements(zeros, offset, out);
      }
      offset += lengths[i] * row;
    }
    return absl::OkStatus();
  }

 private:
  const bool v2_;
  PartialTensorShape attr_shape_;
};

class SplitOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, ShapeFromTensor(ctx->input(1)));
    TW_RETURN_IF_ERROR(CheckAtLeastVector(t));
    // The pieces' first dimensions vary: the rest must fit element_shape.
    const PartialTensorShape pieces =
        PartialTensorShape({-1}).Concatenate(PartialTensorShape(t.shape().dim_sizes().subspan(1)));
    if (!pieces.IsCompatibleWith(shape)) {
      return absl::InvalidArgumentError(absl::StrCat("tensor shape ", t.shape().DebugString(),
                                                     " is not compatible with element_shape ",
                                                     shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, IntVector(ctx->input(2), "lengths"));
    TW_RETURN_IF_ERROR(CheckSize(static_cast<int64_t>(lengths.size()), "A list of"));
    int64_t used = 0;
    for (int64_t len : lengths) {
      if (len < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Invalid value in lengths: ", len));
      }
      used += len;
      if (used > t.dim_size(0)) break;
    }
    if (used != t.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Unused values in tensor. Length of tensor: ", t.dim_size(0), " Values used: ", used));
    }
    TensorList list(t.dtype(), std::move(shape));
    list.tensors.reserve(lengths.size());
    int64_t start = 0;
    for (int64_t len : lengths) {
      TW_ASSIGN_OR_RETURN(Tensor piece, t.Slice(start, start + len));
      list.tensors.push_back(std::move(piece));
      start += len;
    }
    return SetListOutput(ctx, 0, std::move(list));
  }
};

class ConcatListsOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.shape() != b.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Incompatible input TensorList tensor shapes: ", a.shape().DebugString(),
                       " vs. ", b.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, a.shape()));
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      const TensorList* la = a.data<Variant>()[i].get<TensorList>();
      const TensorList* lb = b.data<Variant>()[i].get<TensorList>();
      if (la == nullptr || lb == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            la == nullptr ? "input_a" : "input_b", " is not a TensorList at index ", i, ".  Saw: '",
            (la == nullptr ? a : b).data<Variant>()[i].DebugString(), "'"));
      }
      for (const TensorList* l : {la, lb}) {
        if (l->element_dtype != element_dtype_) {
          return absl::InvalidArgumentError(absl::StrCat(
              l == la ? "input_a[" : "input_b[", i, "].dtype != element_dtype.  Saw: ",
              DataTypeString(l->element_dtype), " vs. ", DataTypeString(element_dtype_)));
        }
      }
      if (!la->element_shape.IsIdenticalTo(lb->element_shape)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input_a and input_b TensorList element shapes are not identical at index ", i,
            ".  Saw ", la->element_shape.DebugString(), " vs. ", lb->element_shape.DebugString()));
      }
      TW_RETURN_IF_ERROR(
          CheckSize(static_cast<int64_t>(la->tensors.size() + lb->tensors.size()), "A list of"));
      TensorList joined = *la;
      joined.tensors.insert(joined.tensors.end(), lb->tensors.begin(), lb->tensors.end());
      out->data<Variant>()[i] = Variant(std::move(joined));
    }
    return absl::OkStatus();
  }
};

class PushBackBatchOp : public ListKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& handles = ctx->input(0);
    const Tensor& t = ctx->input(1);
    if (handles.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected input_handles to be a vector, but saw shape: ", handles.shape().DebugString()));
    }
    TW_RETURN_IF_ERROR(CheckAtLeastVector(t));
    if (t.dim_size(0) != handles.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected tensor.shape[0] == input_handles.size, but saw ", t.dim_size(0),
                       " vs. ", handles.dim_size(0)));
    }
    if (t.dtype() != element_dtype_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid data types; list elements ", DataTypeString(element_dtype_),
                       " but tried to append ", DataTypeString(t.dtype())));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, handles.shape()));
    for (int64_t b = 0; b < handles.dim_size(0); ++b) {
      const TensorList* l = handles.data<Variant>()[b].get<TensorList>();
      if (l == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input handle at index ", b, " is not a list. Saw: '",
                         handles.data<Variant>()[b].DebugString(), "'"));
      }
      TW_ASSIGN_OR_RETURN(Tensor row, Row(t, b));
      if (!l->element_shape.IsCompatibleWith(row.shape())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Tried to append a tensor with incompatible shape to a list at index ", b,
                         ". Op element shape: ", row.shape().DebugString(),
                         " list shape: ", l->element_shape.DebugString()));
      }
      TW_RETURN_IF_ERROR(CheckDtype(element_dtype_, *l));
      if (l->max_num_elements != -1 &&
          static_cast<int64_t>(l->tensors.size()) >= l->max_num_elements) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Tried to push item into a full list at index ", b, " list size: ", l->tensors.size(),
            " max_num_elements: ", l->max_num_elements));
      }
      TW_RETURN_IF_ERROR(CheckSize(static_cast<int64_t>(l->tensors.size()) + 1, "A list of"));
      TensorList grown = *l;
      grown.tensors.push_back(std::move(row));
      out->data<Variant>()[b] = Variant(std::move(grown));
    }
    return absl::OkStatus();
  }
};

// AddN of lists (TF's TensorListBinaryAdd, the sum of a loop's gradient
// accumulators): element by element; an unset element takes the other's.
absl::StatusOr<Variant> AddVariants(KernelContext* ctx, const Variant& a, const Variant& b);

absl::StatusOr<Tensor> AddElements(KernelContext* ctx, const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Trying to add two tensors with incompatible element shapes. One is ",
                     a.shape().DebugString(), " and the other is ", b.shape().DebugString()));
  }
  TW_ASSIGN_OR_RETURN(Tensor sum, ctx->allocate_temp(a.dtype(), a.shape()));
  if (a.dtype() == DT_VARIANT) {
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      TW_ASSIGN_OR_RETURN(sum.data<Variant>()[i],
                          AddVariants(ctx, a.data<Variant>()[i], b.data<Variant>()[i]));
    }
    return sum;
  }
  const bool numeric = VisitNumberType(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    sum.flat<T>() = a.flat<T>() + b.flat<T>();
  });
  if (!numeric) return UnsupportedDtype("AddN of TensorLists", a.dtype());
  return sum;
}

absl::StatusOr<Variant> AddVariants(KernelContext* ctx, const Variant& a, const Variant& b) {
  const TensorList* la = a.get<TensorList>();
  const TensorList* lb = b.get<TensorList>();
  if (la == nullptr || lb == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("AddN of variants adds TensorLists only, saw '",
                                                   (la == nullptr ? a : b).DebugString(), "'"));
  }
  if (la->element_dtype != lb->element_dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("Trying to add two lists of tensors of different dtypes. One is ",
                     DataTypeString(la->element_dtype), " and the other is ",
                     DataTypeString(lb->element_dtype)));
  }
  if (!la->element_shape.IsCompatibleWith(lb->element_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to add two lists of tensors with incompatible element shapes. One is ",
        la->element_shape.DebugString(), " and the other is ", lb->element_shape.DebugString()));
  }
  if (la->tensors.size() != lb->tensors.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Trying to add two lists of tensors with different lengths. One is ",
                     la->tensors.size(), " and the other is ", lb->tensors.size()));
  }
  TensorList sum(la->element_dtype, la->element_shape);
  TW_ASSIGN_OR_RETURN(sum.element_shape, la->element_shape.MergeWith(lb->element_shape));
  sum.max_num_elements = la->max_num_elements;
  sum.tensors.reserve(la->tensors.size());
  for (size_t i = 0; i < la->tensors.size(); ++i) {
    const Tensor& x = la->tensors[i];
    const Tensor& y = lb->tensors[i];
    if (!x.IsInitialized() || !y.IsInitialized()) {
      sum.tensors.push_back(x.IsInitialized() ? x : y);
      continue;
    }
    TW_ASSIGN_OR_RETURN(Tensor s, AddElements(ctx, x, y));
    sum.tensors.push_back(std::move(s));
  }
  return Variant(std::move(sum));
}

class AddNVariantOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddN of variants: input ", i, " has shape ", ctx->input(i).shape().DebugString(),
            " but input 0 has shape ", first.shape().DebugString()));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, first.shape()));
    for (int64_t e = 0; e < first.NumElements(); ++e) {
      Variant sum = first.data<Variant>()[e];
      for (int i = 1; i < ctx->num_inputs(); ++i) {
        TW_ASSIGN_OR_RETURN(sum, AddVariants(ctx, sum, ctx->input(i).data<Variant>()[e]));
      }
      out->data<Variant>()[e] = std::move(sum);
    }
    return absl::OkStatus();
  }
};

}  // namespace

TW_REGISTER_KERNELS(list_concat_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("TensorListConcat"), [] { return std::make_unique<ConcatOp>(false); });
  RegisterKernel(cpu("TensorListConcatV2"), [] { return std::make_unique<ConcatOp>(true); });
  RegisterKernel(cpu("TensorListSplit"), MakeFactory<SplitOp>());
  RegisterKernel(cpu("TensorListConcatLists"), MakeFactory<ConcatListsOp>());
  RegisterKernel(cpu("TensorListPushBackBatch"), MakeFactory<PushBackBatchOp>());
  RegisterKernel(cpu("AddN").TypeConstraint("T", DT_VARIANT), MakeFactory<AddNVariantOp>());
}

}  // namespace towerflow
