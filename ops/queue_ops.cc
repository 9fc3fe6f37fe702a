// Op schemas: TF's queues, readers and gradient accumulators (resource
// forms): TF 1's input pipelines (string_input_producer, readers,
// tf.train.batch, shuffle_batch), and the parts of
// between-graph replicated training that workers meet in on a ps task:
// SyncReplicasOptimizer's token queue and per-variable accumulators
// (train/sync_replicas_optimizer.h).
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// Dequeue: each component's shape from the queue's `shapes` attr when the
// op knows them (it does not: the attr lives on the queue), else unknown.
absl::Status DequeueShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape());
  return absl::OkStatus();
}

}  // namespace

TW_REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc(
        "A queue of tuples of component_types, first in first out; at most capacity "
        "elements (no limit when negative). Shared by name across sessions.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("PaddingFIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc(
        "A FIFO queue whose batch dequeues pad each component with zeros to the largest "
        "element where its shape leaves a dimension unknown (shapes of known rank needed).")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("RandomShuffleQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("min_after_dequeue: int = 0")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc(
        "A queue that dequeues its elements in random order (TF's Philox draws from seed and "
        "seed2), keeping min_after_dequeue of them until it is closed.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("PriorityQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 0 = []")
    .Attr("shapes: list(shape) >= 0")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc(
        "A queue of (int64 priority, component_types...) tuples that dequeues the lowest "
        "priority first; component_types and shapes leave out the priority.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc("Adds one element; waits while the queue is full.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc("Adds the elements along dimension 0 of the components; waits while the queue is full.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc("Removes the first element; waits while the queue is empty.")
    .SetShapeFn(DequeueShape);

TW_REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc("Removes n elements, batched along a new dimension 0; waits until there are n.")
    .SetShapeFn(DequeueShape);

TW_REGISTER_OP("QueueDequeueUpToV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc("As QueueDequeueManyV2, but once the queue is closed takes what is left if fewer.")
    .SetShapeFn(DequeueShape);

TW_REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .Doc("The number of elements in the queue.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("QueueIsClosedV2")
    .Input("handle: resource")
    .Output("is_closed: bool")
    .SetIsStateful()
    .Doc("Whether the queue is closed.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .Doc("Closes the queue: enqueues fail, dequeues drain what is left, then fail.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ResourceConditionalAccumulator")
    .Output("handle: resource")
    .Attr("dtype: numbertype")
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .Doc(
        "An accumulator of gradients of one shape: gradients computed at a time step older "
        "than its own are dropped.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ResourceAccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: numbertype")
    .SetIsStateful()
    .Doc("Adds gradient, computed at time step local_step, unless it is stale.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ResourceAccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: numbertype")
    .SetIsStateful()
    .Doc(
        "Waits until num_required gradients have been added, returns their mean (or sum), "
        "empties the accumulator and advances its time step by one.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ResourceAccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .Doc("The number of gradients added since the last take.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ResourceAccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .SetIsStateful()
    .Doc("Sets the accumulator's time step.")
    .SetShapeFn(shape_fns::UnknownShape);

// TF 1's readers: a reader takes its work (file names) from a queue of
// strings and produces the work's records as (key, value) strings.
TW_REGISTER_OP("TFRecordReaderV2")
    .Output("reader_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("compression_type: string = ''")
    .SetIsStateful()
    .Doc("A reader of TFRecord files: a record's key is '<file>:<offset>'.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("TextLineReaderV2")
    .Output("reader_handle: resource")
    .Attr("skip_header_lines: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc(
        "A reader of text files' lines without their line ends, after skip_header_lines of "
        "each file: a line's key is '<file>:<line number from 1>'.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("FixedLengthRecordReaderV2")
    .Output("reader_handle: resource")
    .Attr("header_bytes: int = 0")
    .Attr("record_bytes: int")
    .Attr("footer_bytes: int = 0")
    .Attr("hop_bytes: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("encoding: string = ''")
    .SetIsStateful()
    .Doc(
        "A reader of record_bytes records between a file's header_bytes and footer_bytes, "
        "hop_bytes apart (record_bytes when 0): a record's key is '<file>:<record from 0>'.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("WholeFileReaderV2")
    .Output("reader_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A reader of whole files: the key is the file name, the value its contents.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("IdentityReaderV2")
    .Output("reader_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A reader whose one record per work is the work itself, as key and value.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ReaderReadV2")
    .Input("reader_handle: resource")
    .Input("queue_handle: resource")
    .Output("key: string")
    .Output("value: string")
    .SetIsStateful()
    .Doc("The reader's next record, taking the next work from the queue when needed.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({}));
      c->set_output(1, PartialTensorShape({}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("ReaderReadUpToV2")
    .Input("reader_handle: resource")
    .Input("queue_handle: resource")
    .Input("num_records: int64")
    .Output("keys: string")
    .Output("values: string")
    .SetIsStateful()
    .Doc("Up to num_records records: fewer when the current work ends after at least one.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({-1}));
      c->set_output(1, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("ReaderNumRecordsProducedV2")
    .Input("reader_handle: resource")
    .Output("records_produced: int64")
    .SetIsStateful()
    .Doc("The number of records the reader has produced.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ReaderNumWorkUnitsCompletedV2")
    .Input("reader_handle: resource")
    .Output("units_completed: int64")
    .SetIsStateful()
    .Doc("The number of works the reader has finished.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ReaderSerializeStateV2")
    .Input("reader_handle: resource")
    .Output("state: string")
    .SetIsStateful()
    .Doc("The reader's state as TF's ReaderBaseState (IdentityReader's only, as in TF).")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ReaderRestoreStateV2")
    .Input("reader_handle: resource")
    .Input("state: string")
    .SetIsStateful()
    .Doc("Restores a state from ReaderSerializeStateV2; a reader that fails to is reset.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ReaderResetV2")
    .Input("reader_handle: resource")
    .SetIsStateful()
    .Doc("Resets the reader's counts and drops its current work.")
    .SetShapeFn(shape_fns::UnknownShape);

// Staging areas (TF's StagingArea and MapStagingArea, data_flow_ops.py):
// tuples staged by one step and taken by a later one, so that a step's
// input is copied while the step before it computes. Every op of one area
// names it by container and shared_name (the node name when empty); the
// first op to run makes it, with its own capacity, memory_limit and dtypes.
// Bounded areas make a stage wait for room; takes wait for their element.
namespace {

// An op of a staging area: TF's attrs around the op's own inputs and
// outputs (`body`), `dtypes` of at least one element where `list_min`.
void RegisterStagingOp(const std::string& name, bool list_min, bool map_stage,
                       const std::function<void(OpDefBuilder&)>& body, const char* doc,
                       absl::Status (*shape_fn)(InferenceContext*)) {
  OpDefBuilder b(name, __FILE__);
  body(b);
  b.Attr("capacity: int >= 0 = 0")
      .Attr("memory_limit: int >= 0 = 0")
      .Attr(list_min ? "dtypes: list(type) >= 1" : "dtypes: list(type)");
  if (map_stage) b.Attr("fake_dtypes: list(type) >= 1");
  b.Attr("container: string = ''").Attr("shared_name: string = ''").SetIsStateful();
  RegisterOp(b.Doc(doc).SetShapeFn(shape_fn));
}

// The map forms: unordered (`prefix` "") and ordered by key ("Ordered").
void RegisterMapOps(const std::string& prefix) {
  const auto name = [&](const char* op) { return prefix + op; };
  RegisterStagingOp(
      name("MapStage"), false, true,
      [](OpDefBuilder& b) {
        b.Input("key: int64").Input("indices: int32").Input("values: fake_dtypes");
      },
      "Stages values as the components `indices` (strictly increasing) of the element `key`; "
      "an element with all its components is complete and counts towards capacity. Waits "
      "for room.",
      shape_fns::UnknownShape);
  RegisterStagingOp(
      name("MapUnstage"), true, false,
      [](OpDefBuilder& b) {
        b.Input("key: int64").Input("indices: int32").Output("values: dtypes");
      },
      "Removes and returns the components `indices` of complete element `key` (the element "
      "goes once all its components are taken); waits for the element.",
      DequeueShape);
  RegisterStagingOp(
      name("MapPeek"), true, false,
      [](OpDefBuilder& b) {
        b.Input("key: int64").Input("indices: int32").Output("values: dtypes");
      },
      "Returns the components `indices` of complete element `key`, leaving them staged; waits "
      "for the element.",
      DequeueShape);
  RegisterStagingOp(
      name("MapUnstageNoKey"), true, false,
      [](OpDefBuilder& b) {
        b.Input("indices: int32").Output("key: int64").Output("values: dtypes");
      },
      prefix.empty() ? "As MapUnstage for a complete element of any key, and its key."
                     : "As MapUnstage for the complete element of the smallest key, and its key.",
      DequeueShape);
  RegisterStagingOp(
      name("MapSize"), false, false, [](OpDefBuilder& b) { b.Output("size: int32"); },
      "The number of complete elements.", shape_fns::ScalarShape);
  RegisterStagingOp(
      name("MapIncompleteSize"), false, false, [](OpDefBuilder& b) { b.Output("size: int32"); },
      "The number of elements still missing a component.", shape_fns::ScalarShape);
  RegisterStagingOp(
      name("MapClear"), false, false, [](OpDefBuilder&) {},
      "Removes every element, complete or not.", shape_fns::UnknownShape);
}

[[maybe_unused]] const bool kStagingRegistered = [] {
  RegisterStagingOp(
      "Stage", true, false, [](OpDefBuilder& b) { b.Input("values: dtypes"); },
      "Appends the tuple `values` to the staging area; waits while it is at capacity or "
      "memory_limit (bytes; 0: none).",
      shape_fns::UnknownShape);
  RegisterStagingOp(
      "Unstage", true, false, [](OpDefBuilder& b) { b.Output("values: dtypes"); },
      "Removes and returns the first tuple; waits while there is none.", DequeueShape);
  RegisterStagingOp(
      "StagePeek", true, false,
      [](OpDefBuilder& b) { b.Input("index: int32").Output("values: dtypes"); },
      "Returns tuple `index` (0: the first), leaving it staged; waits until there is one.",
      DequeueShape);
  RegisterStagingOp(
      "StageSize", false, false, [](OpDefBuilder& b) { b.Output("size: int32"); },
      "The number of tuples staged.", shape_fns::ScalarShape);
  RegisterStagingOp(
      "StageClear", false, false, [](OpDefBuilder&) {}, "Removes every tuple.",
      shape_fns::UnknownShape);
  RegisterMapOps("");
  RegisterMapOps("Ordered");
  return true;
}();

}  // namespace

}  // namespace towerflow
