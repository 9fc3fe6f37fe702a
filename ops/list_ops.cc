// TF 2's TensorList ops (list_ops.cc in TF): lists of tensors as values, a
// scalar DT_VARIANT tensor holding a TensorList (framework/tensor_list.h).
// Control flow v2 keeps a loop's accumulators in them, tf.TensorArray inside
// a tf.function is one, TF 2 Keras RNNs read their inputs from one. Each op
// that changes a list returns a new list value (the kernel reuses the input's
// when no one else holds it). Kernels: kernels/cpu/list_ops.cc; gradients:
// ops/gradients/list_grad.cc.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status ListShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// The element shape from shape tensor `input` (-1 for unknown rank).
PartialTensorShape ElementShape(InferenceContext* c, int input) {
  if (c->input(input).dims() == 0) return PartialTensorShape();  // a scalar: -1 or wrong
  absl::StatusOr<PartialTensorShape> s = c->MakeShapeFromShapeTensor(input);
  return s.ok() ? *s : PartialTensorShape();
}

// [leading] + the element shape of shape tensor `input`.
absl::Status StackedShape(InferenceContext* c, int64_t leading, int input, int output) {
  c->set_output(output, PartialTensorShape({leading}).Concatenate(ElementShape(c, input)));
  return absl::OkStatus();
}

TW_REGISTER_OP("EmptyTensorList")
    .Input("element_shape: shape_type")
    .Input("max_num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc(
        "An empty list of element_dtype tensors of element_shape (-1: any), holding at most "
        "max_num_elements (-1: no limit).")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListReserve")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc("A list of num_elements unset elements.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListFromTensor")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc("The list of tensor's rows.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListLength")
    .Input("input_handle: variant")
    .Output("length: int32")
    .Doc("How many elements the list has.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TensorListElementShape")
    .Input("input_handle: variant")
    .Output("element_shape: shape_type")
    .Attr("shape_type: {int32, int64}")
    .Doc("The list's element shape (-1 for unknown dims; the scalar -1 for an unknown rank).")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("TensorListGetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("element_shape: Tshape")
    .Output("item: element_dtype")
    .Attr("element_dtype: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Doc("Element index (zeros of the element shape when it is unset).")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, ElementShape(c, 2));
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorListSetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("item: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("resize_if_index_out_of_bounds: bool = false")
    .Doc("The list with element index set to item.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListPushBack")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Doc("The list with tensor appended.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListPopBack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("output_handle: variant")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .Doc("The list without its last element, and that element.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape::Scalar());
      c->set_output(1, ElementShape(c, 1));
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorListStack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .Attr("num_elements: int = -1")
    .Doc("The elements stacked on a new first dimension.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t n = -1;
      TW_RETURN_IF_ERROR(c->GetAttr("num_elements", &n));
      return StackedShape(c, n < 0 ? -1 : n, 1, 0);
    });

TW_REGISTER_OP("TensorListGather")
    .Input("input_handle: variant")
    .Input("indices: int32")
    .Input("element_shape: int32")
    .Output("values: element_dtype")
    .Attr("element_dtype: type")
    .Doc("The elements at indices, stacked.")
    .SetShapeFn([](InferenceContext* c) {
      const PartialTensorShape& indices = c->input(1);
      return StackedShape(c, indices.dims() == 1 ? indices.dim_size(0) : -1, 2, 0);
    });

TW_REGISTER_OP("TensorListScatter")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc("A list of max(indices) + 1 elements, tensor's rows at indices.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListScatterV2")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc("A list of num_elements elements (-1: max(indices) + 1), tensor's rows at indices.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListScatterIntoExistingList")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Doc("The list with tensor's rows at indices (grown to max(indices) + 1).")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListResize")
    .Input("input_handle: variant")
    .Input("size: int32")
    .Output("output_handle: variant")
    .Doc("The list cut or grown (with unset elements) to size.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListConcat")
    .Input("input_handle: variant")
    .Output("tensor: element_dtype")
    .Output("lengths: int64")
    .Attr("element_dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .Doc("The elements concatenated on their first dimension, and each one's length.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape element_shape;
      TW_RETURN_IF_ERROR(c->GetAttr("element_shape", &element_shape));
      c->set_output(0, element_shape.unknown_rank()
                           ? PartialTensorShape()
                           : PartialTensorShape({-1}).Concatenate(PartialTensorShape(
                                 element_shape.dim_sizes().subspan(element_shape.dims() > 0))));
      c->set_output(1, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorListConcatV2")
    .Input("input_handle: variant")
    .Input("element_shape: shape_type")
    .Input("leading_dims: int64")
    .Output("tensor: element_dtype")
    .Output("lengths: int64")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc(
        "TensorListConcat with the element shape as an input and the first dimensions of "
        "unset elements given.")
    .SetShapeFn([](InferenceContext* c) {
      const PartialTensorShape element_shape = ElementShape(c, 1);
      c->set_output(0, element_shape.unknown_rank() || element_shape.dims() == 0
                           ? PartialTensorShape()
                           : PartialTensorShape({-1}).Concatenate(
                                 PartialTensorShape(element_shape.dim_sizes().subspan(1))));
      c->set_output(1, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorListSplit")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Input("lengths: int64")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .Doc("The list of tensor's pieces of lengths rows each.")
    .SetShapeFn(ListShape);

TW_REGISTER_OP("TensorListConcatLists")
    .Input("input_a: variant")
    .Input("input_b: variant")
    .Output("output: variant")
    .Attr("element_dtype: type")
    .Doc("Element by element, each list of input_a followed by input_b's.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape out;
      TW_RETURN_IF_ERROR(c->Merge(c->input(0), c->input(1), &out));
      c->set_output(0, out);
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorListPushBackBatch")
    .Input("input_handles: variant")
    .Input("tensor: element_dtype")
    .Output("output_handles: variant")
    .Attr("element_dtype: type")
    .Doc("Each list of the vector input_handles with its row of tensor appended.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
