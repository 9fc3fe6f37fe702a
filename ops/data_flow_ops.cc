// Data-flow ops that route tensor elements by index: DynamicStitch (used by
// reduction gradients) and DynamicPartition; and the stacks on which a while
// loop's gradient keeps each forward iteration's values (StackV2 and its
// push, pop and close; kernels/stack_ops.cc); and the TensorArray V3 ops
// (kernels/cpu/tensor_array_ops.cc).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  PartialTensorShape tail;  // data[i].shape[indices[i].rank:], common to all
  bool tail_known = false;
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& indices = c->input(i);
    const PartialTensorShape& data = c->input(n + i);
    if (indices.unknown_rank() || data.unknown_rank()) continue;
    if (!shape_fns::StartsWithShape(data, indices)) {
      return absl::InvalidArgumentError(absl::StrCat("data[", i, "].shape ", data.DebugString(),
                                                     " must start with indices[", i, "].shape ",
                                                     indices.DebugString()));
    }
    const PartialTensorShape t(data.dim_sizes().subspan(indices.dims()));
    TW_RETURN_IF_ERROR(c->Merge(tail, t, &tail));
    tail_known = true;
  }
  c->set_output(0, PartialTensorShape({-1}).Concatenate(tail_known ? tail : PartialTensorShape()));
  return absl::OkStatus();
}

absl::Status DynamicPartitionShape(InferenceContext* c) {
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& partitions = c->input(1);
  if (data.unknown_rank() || partitions.unknown_rank()) return absl::OkStatus();
  if (!shape_fns::StartsWithShape(data, partitions)) {
    return absl::InvalidArgumentError(absl::StrCat("data.shape ", data.DebugString(),
                                                   " must start with partitions.shape ",
                                                   partitions.DebugString()));
  }
  const PartialTensorShape out = PartialTensorShape({-1}).Concatenate(
      PartialTensorShape(data.dim_sizes().subspan(partitions.dims())));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

TW_REGISTER_OP("DynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Doc("merged[indices[i][...]] = data[i][...]")
    .SetShapeFn(DynamicStitchShape);

TW_REGISTER_OP("ParallelDynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Doc("DynamicStitch; of duplicate indices, which value wins is unspecified (here the last).")
    .SetShapeFn(DynamicStitchShape);

TW_REGISTER_OP("DynamicPartition")
    .Input("data: T")
    .Input("partitions: int32")
    .Output("outputs: num_partitions * T")
    .Attr("num_partitions: int >= 1")
    .Attr("T: type")
    .Doc("Splits data into num_partitions tensors by the partitions index.")
    .SetShapeFn(DynamicPartitionShape);

TW_REGISTER_OP("StackV2")
    .Input("max_size: int32")
    .Output("handle: resource")
    .Attr("elem_type: type")
    .Attr("stack_name: string = ''")
    .SetIsStateful()
    .Doc("A new stack of elem_type tensors, at most max_size deep (no limit when negative).")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("StackPushV2")
    .Input("handle: resource")
    .Input("elem: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("swap_memory: bool = false")
    .SetIsStateful()
    .Doc("Pushes elem onto the stack and forwards it.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    });

TW_REGISTER_OP("StackPopV2")
    .Input("handle: resource")
    .Output("elem: elem_type")
    .Attr("elem_type: type")
    .SetIsStateful()
    .Doc("Pops the stack's last element; an error when it is empty.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("StackCloseV2")
    .Input("handle: resource")
    .SetIsStateful()
    .Doc("Closes the stack, dropping its elements.")
    .SetShapeFn(shape_fns::UnknownShape);

// ---- TensorArray (TF's V3 ops): a resource handle and a float flow that
// orders the ops; see kernels/cpu/tensor_array_ops.cc.

absl::Status TensorArrayShape(InferenceContext* c) {
  PartialTensorShape size;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &size));
  c->set_output(0, PartialTensorShape::Scalar());
  c->set_output(1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// [unknown] followed by the element shape attr `attr`.
absl::Status PackedShape(InferenceContext* c, const char* attr) {
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(c->GetAttr(attr, &element));
  if (element.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
  } else {
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), element.dim_sizes().begin(), element.dim_sizes().end());
    c->set_output(0, PartialTensorShape(dims));
  }
  return absl::OkStatus();
}

TW_REGISTER_OP("TensorArrayV3")
    .Input("size: int32")
    .Output("handle: resource")
    .Output("flow: float")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .Attr("dynamic_size: bool = false")
    .Attr("clear_after_read: bool = true")
    .Attr("identical_element_shapes: bool = false")
    .Attr("tensor_array_name: string = ''")
    .SetIsStateful()
    .Doc("A new array of `size` dtype tensors, and its flow.")
    .SetShapeFn(TensorArrayShape);

TW_REGISTER_OP("TensorArrayGradV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("grad_handle: resource")
    .Output("flow_out: float")
    .Attr("source: string")
    .SetIsStateful()
    .Doc("The gradient array of (handle, source): made on first use, its writes aggregate.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape::Scalar());
      c->set_output(1, PartialTensorShape::Scalar());
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorArrayWriteV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Writes value at index.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TensorArrayReadV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc("The element at index.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("TensorArrayGatherV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .SetIsStateful()
    .Doc("The elements at indices, stacked.")
    .SetShapeFn([](InferenceContext* c) { return PackedShape(c, "element_shape"); });

TW_REGISTER_OP("TensorArrayScatterV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Writes value's rows at indices.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TensorArrayConcatV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Output("lengths: int64")
    .Attr("dtype: type")
    .Attr("element_shape_except0: shape = { unknown_rank: true }")
    .SetIsStateful()
    .Doc("Every element concatenated along dimension 0, and their lengths.")
    .SetShapeFn([](InferenceContext* c) {
      TW_RETURN_IF_ERROR(PackedShape(c, "element_shape_except0"));
      c->set_output(1, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("TensorArraySplitV3")
    .Input("handle: resource")
    .Input("value: T")
    .Input("lengths: int64")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Writes value split along dimension 0 by lengths, one piece per element.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TensorArraySizeV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("size: int32")
    .SetIsStateful()
    .Doc("The array's current size.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TensorArrayCloseV3")
    .Input("handle: resource")
    .SetIsStateful()
    .Doc("Closes the array, dropping its elements.")
    .SetShapeFn(shape_fns::UnknownShape);

// TF 1's tensor handles: a tensor kept in the session between runs
// (kernels/cpu/session_handle_ops.cc).
TW_REGISTER_OP("GetSessionHandle")
    .Input("value: T")
    .Output("handle: string")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Keeps value in the session; its handle as a string.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("GetSessionHandleV2")
    .Input("value: T")
    .Output("handle: resource")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Keeps value in the session; its handle as a resource.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("GetSessionTensor")
    .Input("handle: string")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc("The tensor a GetSessionHandle kept under handle.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("DeleteSessionTensor")
    .Input("handle: string")
    .SetIsStateful()
    .Doc("Drops the tensor kept under handle.")
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace
}  // namespace towerflow
