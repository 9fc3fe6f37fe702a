// Connectionist temporal classification (TF's tf.nn.ctc_loss and
// ctc_greedy_decoder; kernels/cpu/ctc_ops.cc): CTCLoss, its loss and the
// gradient of the loss with respect to the logits, CTCGreedyDecoder and
// CTCBeamSearchDecoder.
// Inputs are time-major logits [max_time, batch, num_classes]; labels a
// sparse tensor (indices [N, 2], values [N]).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

TW_REGISTER_OP("CTCLoss")
    .Input("inputs: T")
    .Input("labels_indices: int64")
    .Input("labels_values: int32")
    .Input("sequence_length: int32")
    .Output("loss: T")
    .Output("gradient: T")
    .Attr("preprocess_collapse_repeated: bool = false")
    .Attr("ctc_merge_repeated: bool = true")
    .Attr("ignore_longer_outputs_than_inputs: bool = false")
    .Attr("T: {float, double} = DT_FLOAT")
    .Doc("-log p(labels | inputs) per batch entry (the blank the last class) and its gradient.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape inputs, indices, values, lengths;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &inputs));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &indices));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &values));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 1, &lengths));
      int64_t n = -1, batch = -1;
      TW_RETURN_IF_ERROR(c->MergeDim(indices.unknown_rank() ? -1 : indices.dim_size(0),
                                     values.unknown_rank() ? -1 : values.dim_size(0), &n));
      TW_RETURN_IF_ERROR(c->MergeDim(inputs.unknown_rank() ? -1 : inputs.dim_size(1),
                                     lengths.unknown_rank() ? -1 : lengths.dim_size(0), &batch));
      c->set_output(0, PartialTensorShape({batch}));
      c->set_output(1, inputs.unknown_rank()
                           ? PartialTensorShape::UnknownDims(3)
                           : PartialTensorShape({inputs.dim_size(0), batch, inputs.dim_size(2)}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("CTCGreedyDecoder")
    .Input("inputs: T")
    .Input("sequence_length: int32")
    .Output("decoded_indices: int64")
    .Output("decoded_values: int64")
    .Output("decoded_shape: int64")
    .Output("log_probability: T")
    .Attr("merge_repeated: bool = false")
    .Attr("blank_index: int = -1")
    .Attr("T: {float, double} = DT_FLOAT")
    .Doc("The most likely class at each step, blanks dropped (and repeats merged), as sparse.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape inputs, lengths;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &inputs));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &lengths));
      int64_t batch = -1;
      TW_RETURN_IF_ERROR(c->MergeDim(inputs.unknown_rank() ? -1 : inputs.dim_size(1),
                                     lengths.unknown_rank() ? -1 : lengths.dim_size(0), &batch));
      c->set_output(0, PartialTensorShape({-1, 2}));
      c->set_output(1, PartialTensorShape({-1}));
      c->set_output(2, PartialTensorShape({2}));
      c->set_output(3, PartialTensorShape({batch, 1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("CTCBeamSearchDecoder")
    .Input("inputs: T")
    .Input("sequence_length: int32")
    .Output("decoded_indices: top_paths * int64")
    .Output("decoded_values: top_paths * int64")
    .Output("decoded_shape: top_paths * int64")
    .Output("log_probability: T")
    .Attr("beam_width: int >= 1")
    .Attr("top_paths: int >= 1")
    .Attr("merge_repeated: bool = true")
    .Attr("T: {float, double} = DT_FLOAT")
    .Doc("The top_paths most likely label sequences by prefix beam search, as sparse tensors.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape inputs, lengths;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &inputs));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &lengths));
      int64_t batch = -1, top_paths = 1;
      TW_RETURN_IF_ERROR(c->MergeDim(inputs.unknown_rank() ? -1 : inputs.dim_size(1),
                                     lengths.unknown_rank() ? -1 : lengths.dim_size(0), &batch));
      TW_RETURN_IF_ERROR(c->GetAttr("top_paths", &top_paths));
      for (int64_t p = 0; p < top_paths; ++p) {
        c->set_output(static_cast<int>(p), PartialTensorShape({-1, 2}));
        c->set_output(static_cast<int>(top_paths + p), PartialTensorShape({-1}));
        c->set_output(static_cast<int>(2 * top_paths + p), PartialTensorShape({2}));
      }
      c->set_output(static_cast<int>(3 * top_paths), PartialTensorShape({batch, top_paths}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
