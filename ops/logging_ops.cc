// Assertions, printing, TensorBoard summaries and tfdbg's debug ops. Summary
// ops produce a serialized `Summary` proto (proto/summary.proto) as a scalar
// string.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status ScalarSummaryShape(InferenceContext* c) {
  if (!c->input(0).IsCompatibleWith(c->input(1))) {
    return absl::InvalidArgumentError(absl::StrCat("tags and values must have the same shape, got ",
                                                   c->input(0).DebugString(), " and ",
                                                   c->input(1).DebugString()));
  }
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

absl::Status HistogramSummaryShape(InferenceContext* c) {
  PartialTensorShape tag;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &tag));
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// A scalar from inputs of any shape (MergeSummary's: every element a
// Summary), as TF's.
absl::Status MergeSummaryShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

TW_REGISTER_OP("Assert")
    .Input("condition: bool")
    .Input("data: T")
    .Attr("T: list(type) >= 1")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .Doc("Fails the step, printing `data`, when condition is false.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      return c->WithRank(c->input(0), 0, &scalar);
    });

TW_REGISTER_OP("Print")
    .Input("input: T")
    .Input("data: U")
    .Output("output: T")
    .Attr("T: type")
    .Attr("U: list(type) >= 0")
    .Attr("message: string = ''")
    .Attr("first_n: int = -1")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .Doc("Passes `input` through, logging `message` and `data`.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("PrintV2")
    .Input("input: string")
    .Attr("output_stream: string = 'stderr'")
    .AttrAddedAfterTF1("end: string = '\\n'")
    .SetIsStateful()
    .Doc("Prints a string scalar.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      return c->WithRank(c->input(0), 0, &scalar);
    });

TW_REGISTER_OP("ScalarSummary")
    .Input("tags: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: realnumbertype")
    .Doc("A Summary with one simple_value per tag.")
    .SetShapeFn(ScalarSummaryShape);

TW_REGISTER_OP("HistogramSummary")
    .Input("tag: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: realnumbertype = DT_FLOAT")
    .Doc("A Summary with a histogram of the values.")
    .SetShapeFn(HistogramSummaryShape);

TW_REGISTER_OP("ImageSummary")
    .Input("tag: string")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("max_images: int >= 1 = 3")
    .Attr("T: {uint8, float, half, double} = DT_FLOAT")
    .Attr(
        "bad_color: tensor = { dtype: DT_UINT8 tensor_shape { dim { size: 4 } } int_val: 255 "
        "int_val: 0 int_val: 0 int_val: 255 }")
    .Doc("A Summary with the first max_images images of a [batch, h, w, 1|3|4] tensor as PNGs.")
    .SetShapeFn(HistogramSummaryShape);

absl::Status AudioSummaryShape(InferenceContext* c) {
  PartialTensorShape tag, audio;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &tag));
  if (!c->input(1).unknown_rank() && (c->input(1).dims() < 2 || c->input(1).dims() > 3)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor must be 3-D or 2-D, got: ", c->input(1).DebugString()));
  }
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

TW_REGISTER_OP("AudioSummaryV2")
    .Input("tag: string")
    .Input("tensor: float")
    .Input("sample_rate: float")
    .Output("summary: string")
    .Attr("max_outputs: int >= 1 = 3")
    .Doc("A Summary with the first max_outputs clips of [batch, frames(, channels)] as WAVs.")
    .SetShapeFn(AudioSummaryShape);

TW_REGISTER_OP("AudioSummary")
    .Input("tag: string")
    .Input("tensor: float")
    .Output("summary: string")
    .Attr("sample_rate: float")
    .Attr("max_outputs: int >= 1 = 3")
    .Doc("AudioSummaryV2 with the sample rate an attr (TF 1.0's form).")
    .SetShapeFn(AudioSummaryShape);

TW_REGISTER_OP("MergeSummary")
    .Input("inputs: N * string")
    .Output("summary: string")
    .Attr("N: int >= 1")
    .Doc("One Summary holding the values of all the inputs.")
    .SetShapeFn(MergeSummaryShape);

// The tensor itself in a Summary (TF's shape functions: a scalar, no checks).
TW_REGISTER_OP("TensorSummaryV2")
    .Input("tag: string")
    .Input("tensor: T")
    .Input("serialized_summary_metadata: string")
    .Output("summary: string")
    .Attr("T: type")
    .Doc("A Summary holding the tensor under tag, with the plugin's metadata.")
    .SetShapeFn(MergeSummaryShape);

TW_REGISTER_OP("TensorSummary")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("T: type")
    .Attr("description: string = ''")
    .Attr("labels: list(string) = []")
    .Attr("display_name: string = ''")
    .Doc(
        "TF 1's: a Summary holding the tensor under the node's name (the other attrs unused, "
        "as in TF).")
    .SetShapeFn(MergeSummaryShape);

TW_REGISTER_OP("Timestamp")
    .Output("ts: double")
    .SetIsStateful()
    .Doc(
        "The time of the run, in seconds since the Unix epoch, to the microsecond "
        "(tf.timestamp).")
    .SetShapeFn(shape_fns::ScalarShape);

// TF 2's summary writers in graphs (tf.summary.create_file_writer and the
// writes of tf.summary inside a tf.function): a writer resource that
// appends events to a TensorBoard file of its own in logdir.
TW_REGISTER_OP("SummaryWriter")
    .Output("writer: resource")
    .Attr("shared_name: string = ''")
    .Attr("container: string = ''")
    .SetIsStateful()
    .Doc("The handle of a summary writer (made by CreateSummaryFileWriter).")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("CreateSummaryFileWriter")
    .Input("writer: resource")
    .Input("logdir: string")
    .Input("max_queue: int32")
    .Input("flush_millis: int32")
    .Input("filename_suffix: string")
    .SetIsStateful()
    .Doc(
        "Makes the writer, unless it exists: its events go to a new file "
        "events.out.tfevents.<seconds>.<host>.<pid>.<n><filename_suffix> in logdir, written "
        "when max_queue are waiting or flush_millis have passed.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tensor: T")
    .Input("tag: string")
    .Input("summary_metadata: string")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("Writes the tensor under tag with the plugin's metadata (tf.summary's writes).")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteScalarSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tag: string")
    .Input("value: T")
    .Attr("T: realnumbertype")
    .SetIsStateful()
    .Doc("Writes a scalar as ScalarSummary does.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteHistogramSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tag: string")
    .Input("values: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64, bool} = DT_FLOAT")
    .SetIsStateful()
    .Doc("Writes a histogram as HistogramSummary does.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteImageSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tag: string")
    .Input("tensor: T")
    .Input("bad_color: uint8")
    .Attr("max_images: int >= 1 = 3")
    .Attr("T: {uint8, double, float, half} = DT_FLOAT")
    .SetIsStateful()
    .Doc("Writes images as ImageSummary does.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteAudioSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tag: string")
    .Input("tensor: float")
    .Input("sample_rate: float")
    .Attr("max_outputs: int >= 1 = 3")
    .SetIsStateful()
    .Doc("Writes audio clips as AudioSummaryV2 does.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteRawProtoSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tensor: string")
    .SetIsStateful()
    .Doc("Writes each serialized Summary of tensor, one event each.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("WriteGraphSummary")
    .Input("writer: resource")
    .Input("step: int64")
    .Input("tensor: string")
    .SetIsStateful()
    .Doc("Writes a serialized GraphDef as a graph event.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ImportEvent")
    .Input("writer: resource")
    .Input("event: string")
    .SetIsStateful()
    .Doc("Writes a serialized Event as it is.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("FlushSummaryWriter")
    .Input("writer: resource")
    .SetIsStateful()
    .Doc("Writes the events waiting and flushes the file.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("CloseSummaryWriter")
    .Input("writer: resource")
    .SetIsStateful()
    .Doc("Flushes and closes the file, and deletes the writer.")
    .SetShapeFn(shape_fns::UnknownShape);

// tfdbg's ops (TF's debug_ops): copies and identities that a debugger
// watches, and numeric summaries of a tensor. Publishing to debug_urls is
// not supported (the kernels refuse a node that names any).
// Copy and CopyHost (the copy in host memory) share their signature.
[[maybe_unused]] const bool kDebugCopies = [] {
  for (const auto& [name, doc] :
       {std::pair{"Copy", "A deep copy of the input (tfdbg's)."},
        std::pair{"CopyHost", "A deep copy of the input in host memory (tfdbg's)."}}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("input: T")
        .Output("output: T")
        .Attr("T: type")
        .Attr("tensor_name: string = ''")
        .Attr("debug_ops_spec: list(string) = []")
        .SetAllowsUninitializedInput()
        .Doc(doc)
        .SetShapeFn(shape_fns::UnchangedShape);
    RegisterOp(b);
  }
  return true;
}();

TW_REGISTER_OP("DebugIdentity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("device_name: string = ''")
    .Attr("tensor_name: string = ''")
    .Attr("debug_urls: list(string) = []")
    .Attr("gated_grpc: bool = false")
    .SetAllowsUninitializedInput()
    .Doc("The input, watched by tfdbg under tensor_name ('node:slot').")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("DebugIdentityV2")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("tfdbg_context_id: string = ''")
    .Attr("op_name: string = ''")
    .Attr("output_slot: int = -1")
    .Attr("tensor_debug_mode: int = -1")
    .Attr("debug_urls: list(string) = []")
    .Attr("circular_buffer_size: int = 1000")
    .Attr("tfdbg_run_id: string = ''")
    .SetIsStateful()
    .Doc("The input, watched by tfdbg 2.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("DebugNanCount")
    .Input("input: T")
    .Output("output: int64")
    .Attr("T: type")
    .Attr("device_name: string = ''")
    .Attr("tensor_name: string = ''")
    .Attr("debug_urls: list(string) = []")
    .Attr("gated_grpc: bool = false")
    .SetAllowsUninitializedInput()
    .Doc("The number of NaNs in the input, as a vector of one.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DebugNumericSummary")
    .Input("input: T")
    .Output("output: double")
    .Attr("T: type")
    .Attr("device_name: string = ''")
    .Attr("tensor_name: string = ''")
    .Attr("debug_urls: list(string) = []")
    .Attr("lower_bound: float = -inf")
    .Attr("upper_bound: float = inf")
    .Attr("mute_if_healthy: bool = false")
    .Attr("gated_grpc: bool = false")
    .SetAllowsUninitializedInput()
    .Doc(
        "tfdbg's numeric summary: counts by kind of value, min, max, mean, variance, dtype "
        "and shape.")
    .SetShapeFn([](InferenceContext* c) {
      const int64_t rank = c->input(0).dims();
      c->set_output(0, PartialTensorShape({rank < 0 ? -1 : 14 + rank}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DebugNumericSummaryV2")
    .Input("input: T")
    .Output("output: output_dtype")
    .Attr("output_dtype: {float32, float64} = DT_FLOAT")
    .Attr("T: type")
    .Attr("tensor_debug_mode: int = -1")
    .Attr("tensor_id: int = -1")
    .Doc("tfdbg 2's summary of a tensor in one of its tensor_debug_modes.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t mode = -1;
      TW_RETURN_IF_ERROR(c->GetAttr("tensor_debug_mode", &mode));
      // CURT_HEALTH, CONCISE_HEALTH, FULL_HEALTH, SHAPE; REDUCE_INF_NAN_THREE_SLOTS.
      const int64_t size = mode == 2   ? 2
                           : mode == 3 ? 5
                           : mode == 4 ? 11
                           : mode == 5 ? 10
                           : mode == 8 ? 3
                                       : -1;
      c->set_output(0, PartialTensorShape({size}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DebugGradientIdentity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .Doc("The input, whose gradient tfdbg watches.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("DebugGradientRefIdentity")
    .Input("input: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .Doc("The ref, whose gradient tfdbg watches.")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace
}  // namespace towerflow
