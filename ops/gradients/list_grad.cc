// Gradients of the TensorList ops, as TF's list_ops.py: a list's gradient is
// a list of its elements' gradients, so each op's gradient is its mirror
// (a write's gradient reads, a push's pops, a stack's unstacks). A list
// output nobody differentiates comes in as ZerosLike of it, a list of zeros
// of the same length (kernels/cpu/list_util.h).
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/list_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

using grad_util::In;

// t's shape without its first dimension, an int32 vector.
Output RowShape(const Scope& scope, const Output& t) {
  return ops::Slice(scope, ops::Shape(scope, t), {1}, {-1});
}

Output ListElementShape(const Scope& scope, const Output& list) {
  return ops::TensorListElementShape(scope, list, DT_INT32);
}

// A list as long as `like`, with `like`'s element shape and nothing set.
Output EmptyLike(const Scope& scope, const Output& like, DataType dtype) {
  return ops::TensorListReserve(scope, ListElementShape(scope, like),
                                ops::TensorListLength(scope, like), dtype);
}

// list = FromTensor(t): t's gradient is the list's gradient stacked.
TW_GRAD_FN(TensorListFromTensorGrad) {
  const Output t = In(op, 0);
  const DataType dtype = grad_util::Attr<DataType>(scope, op, "element_dtype");
  *grad_outputs = {ops::TensorListStack(scope, grad_inputs[0], RowShape(scope, t), dtype),
                   NoGradient()};
  return scope.status();
}

// t = Stack(list): the list's gradient is t's gradient unstacked.
TW_GRAD_FN(TensorListStackGrad) {
  *grad_outputs = {
      ops::TensorListFromTensor(scope, grad_inputs[0], RowShape(scope, grad_inputs[0])),
      NoGradient()};
  return scope.status();
}

// item = GetItem(list, i): the list's gradient holds item's gradient at i.
TW_GRAD_FN(TensorListGetItemGrad) {
  const Output list = In(op, 0);
  const Output grad_list = ops::TensorListSetItem(
      scope, EmptyLike(scope, list, grad_inputs[0].type()), In(op, 1), grad_inputs[0]);
  *grad_outputs = {grad_list, NoGradient(), NoGradient()};
  return scope.status();
}

// out = SetItem(list, i, item): item's gradient is out's gradient at i; the
// list's is out's with zeros at i (and cut back when the set grew it).
TW_GRAD_FN(TensorListSetItemGrad) {
  const Output item = In(op, 2);
  const Output index = In(op, 1);
  Output grad_list =
      ops::TensorListSetItem(scope, grad_inputs[0], index, ops::ZerosLike(scope, item));
  const Output grad_item =
      ops::TensorListGetItem(scope, grad_inputs[0], index, ops::Shape(scope, item), item.type());
  if (grad_util::Attr<bool>(scope, op, "resize_if_index_out_of_bounds")) {
    grad_list = ops::TensorListResize(scope, grad_list, ops::TensorListLength(scope, In(op, 0)));
  }
  *grad_outputs = {grad_list, NoGradient(), grad_item};
  return scope.status();
}

// out = PushBack(list, t): popping out's gradient gives both.
TW_GRAD_FN(TensorListPushBackGrad) {
  const Output t = In(op, 1);
  const ops::TensorListPopBack pop(scope, grad_inputs[0], ops::Shape(scope, t), t.type());
  *grad_outputs = {pop.output_handle, pop.tensor};
  return scope.status();
}

// (out, t) = PopBack(list): the list's gradient is out's with t's pushed.
TW_GRAD_FN(TensorListPopBackGrad) {
  *grad_outputs = {ops::TensorListPushBack(scope, grad_inputs[0], grad_inputs[1]), NoGradient()};
  return scope.status();
}

// t = Gather(list, indices): the list's gradient has t's rows at indices.
TW_GRAD_FN(TensorListGatherGrad) {
  const Output list = In(op, 0);
  const Output grad_list = ops::TensorListScatterIntoExistingList(
      scope, EmptyLike(scope, list, grad_inputs[0].type()), grad_inputs[0], In(op, 1));
  *grad_outputs = {grad_list, NoGradient(), NoGradient()};
  return scope.status();
}

// list = Scatter(t, indices, ...): t's gradient gathers the list's at indices.
TW_GRAD_FN(TensorListScatterGrad) {
  const Output t = In(op, 0);
  grad_outputs->assign(op.num_inputs(), NoGradient());
  (*grad_outputs)[0] =
      ops::TensorListGather(scope, grad_inputs[0], In(op, 1), RowShape(scope, t), t.type());
  return scope.status();
}

// out = ScatterIntoExistingList(list, t, indices): t's gradient gathers
// out's at indices; the list's is out's with zeros there.
TW_GRAD_FN(TensorListScatterIntoExistingListGrad) {
  const Output t = In(op, 1);
  const Output indices = In(op, 2);
  const Output grad_t =
      ops::TensorListGather(scope, grad_inputs[0], indices, RowShape(scope, t), t.type());
  const Output grad_list = ops::TensorListScatterIntoExistingList(
      scope, grad_inputs[0], ops::ZerosLike(scope, t), indices);
  *grad_outputs = {grad_list, grad_t, NoGradient()};
  return scope.status();
}

// out = Resize(list, n): the list's gradient is out's resized back.
TW_GRAD_FN(TensorListResizeGrad) {
  *grad_outputs = {
      ops::TensorListResize(scope, grad_inputs[0], ops::TensorListLength(scope, In(op, 0))),
      NoGradient()};
  return scope.status();
}

// list = Split(t, shape, lengths): t's gradient concatenates the list's.
TW_GRAD_FN(TensorListSplitGrad) {
  const Output t = In(op, 0);
  const Output shape = ops::ConcatV2(scope, {ops::Const(scope, {-1}), RowShape(scope, t)}, 0);
  *grad_outputs = {
      ops::TensorListConcatV2(scope, grad_inputs[0], shape, In(op, 2), t.type()).tensor,
      NoGradient(), NoGradient()};
  return scope.status();
}

// (t, lengths) = Concat(list): the list's gradient splits t's by lengths.
TW_GRAD_FN(TensorListConcatGrad) {
  const Output list = In(op, 0);
  const Output grad_list = ops::TensorListSplit(
      scope, grad_inputs[0], ListElementShape(scope, list), Output(op.node(), 1));
  grad_outputs->assign(op.num_inputs(), NoGradient());
  (*grad_outputs)[0] = grad_list;
  return scope.status();
}

}  // namespace

TW_REGISTER_GRADIENT("TensorListFromTensor", TensorListFromTensorGrad);
TW_REGISTER_GRADIENT("TensorListStack", TensorListStackGrad);
TW_REGISTER_GRADIENT("TensorListGetItem", TensorListGetItemGrad);
TW_REGISTER_GRADIENT("TensorListSetItem", TensorListSetItemGrad);
TW_REGISTER_GRADIENT("TensorListPushBack", TensorListPushBackGrad);
TW_REGISTER_GRADIENT("TensorListPopBack", TensorListPopBackGrad);
TW_REGISTER_GRADIENT("TensorListGather", TensorListGatherGrad);
TW_REGISTER_GRADIENT("TensorListScatter", TensorListScatterGrad);
TW_REGISTER_GRADIENT("TensorListScatterV2", TensorListScatterGrad);
TW_REGISTER_GRADIENT("TensorListScatterIntoExistingList", TensorListScatterIntoExistingListGrad);
TW_REGISTER_GRADIENT("TensorListResize", TensorListResizeGrad);
TW_REGISTER_GRADIENT("TensorListSplit", TensorListSplitGrad);
TW_REGISTER_GRADIENT("TensorListConcat", TensorListConcatGrad);
TW_REGISTER_GRADIENT("TensorListConcatV2", TensorListConcatGrad);

// Sizes and shapes, and lists made from nothing differentiable. TF
// registers no gradient for ConcatLists and PushBackBatch (pfor's) either.
TW_REGISTER_NO_GRADIENT("EmptyTensorList");
TW_REGISTER_NO_GRADIENT("TensorListReserve");
TW_REGISTER_NO_GRADIENT("TensorListLength");
TW_REGISTER_NO_GRADIENT("TensorListElementShape");
TW_REGISTER_NO_GRADIENT("TensorListConcatLists");
TW_REGISTER_NO_GRADIENT("TensorListPushBackBatch");
TW_REGISTER_NO_GRADIENT("VariableShape");

}  // namespace towerflow
