// The tf.SequenceExample parsers: ParseSequenceExampleV2
// (tf.io.parse_sequence_example and parse_single_sequence_example) and TF
// 1's ParseSequenceExample and ParseSingleSequenceExample, with TF's
// outputs and messages (the layouts in example_parsing.h).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/example_parsing.h"
#include "proto/example.pb.h"

namespace towerflow {
namespace {

using example_parsing::CheckDefaults;
using example_parsing::CheckDenseShapes;
using example_parsing::Defaults;
using example_parsing::ExampleNames;
using example_parsing::FeatureConfig;
using example_parsing::FeatureListMap;
using example_parsing::FeatureMap;
using example_parsing::Form;
using example_parsing::KeyScalars;
using example_parsing::KeyVector;
using example_parsing::ParseFeatureLists;
using example_parsing::ParseFeatureMaps;
using example_parsing::Slots;

// ParseSequenceExample (v1: a vector, keys as attrs), ParseSequenceExampleV2
// (a vector or a scalar, keys as inputs, ragged features) and
// ParseSingleSequenceExample (a scalar, keys as scalar inputs).
enum class SequenceForm { kV1, kV2, kSingle };

class ParseSequenceExampleOp : public OpKernel {
 public:
  explicit ParseSequenceExampleOp(SequenceForm form) : form_(form) {}

  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("Ncontext_sparse", &num_context_sparse_));
    TW_RETURN_IF_ERROR(c.GetAttr("Nfeature_list_sparse", &num_list_sparse_));
    TW_RETURN_IF_ERROR(c.GetAttr("Nfeature_list_dense", &num_list_dense_));
    TW_RETURN_IF_ERROR(c.GetAttr("context_sparse_types", &context_.sparse_types));
    TW_RETURN_IF_ERROR(c.GetAttr("Tcontext_dense", &context_.dense_types));
    TW_RETURN_IF_ERROR(c.GetAttr("context_dense_shapes", &context_.dense_shapes));
    TW_RETURN_IF_ERROR(c.GetAttr("feature_list_sparse_types", &lists_.sparse_types));
    TW_RETURN_IF_ERROR(c.GetAttr("feature_list_dense_types", &lists_.dense_types));
    TW_RETURN_IF_ERROR(c.GetAttr("feature_list_dense_shapes", &lists_.dense_shapes));
    int64_t num_context_dense = static_cast<int64_t>(context_.dense_types.size());
    if (form_ == SequenceForm::kV2) {
      TW_RETURN_IF_ERROR(c.GetAttr("context_ragged_value_types", &context_.ragged_value_types));
      TW_RETURN_IF_ERROR(c.GetAttr("context_ragged_split_types", &context_.ragged_split_types));
      TW_RETURN_IF_ERROR(c.GetAttr("feature_list_ragged_value_types", &lists_.ragged_value_types));
      TW_RETURN_IF_ERROR(c.GetAttr("feature_list_ragged_split_types", &lists_.ragged_split_types));
      if (context_.ragged_value_types.size() != context_.ragged_split_types.size() ||
          lists_.ragged_value_types.size() != lists_.ragged_split_types.size()) {
        return absl::InvalidArgumentError(
            "ragged value types and split types must have the same length");
      }
    } else {
      TW_RETURN_IF_ERROR(c.GetAttr("Ncontext_dense", &num_context_dense));
    }
    if (form_ == SequenceForm::kV1) {
      TW_RETURN_IF_ERROR(c.GetAttr("context_sparse_keys", &context_.sparse_keys));
      TW_RETURN_IF_ERROR(c.GetAttr("context_dense_keys", &context_.dense_keys));
      TW_RETURN_IF_ERROR(c.GetAttr("feature_list_sparse_keys", &lists_.sparse_keys));
      TW_RETURN_IF_ERROR(c.GetAttr("feature_list_dense_keys", &lists_.dense_keys));
      std::vector<std::string> empty;
      TW_RETURN_IF_ERROR(c.GetAttr("feature_list_dense_missing_assumed_empty", &empty));
      lists_.missing_assumed_empty.insert(empty.begin(), empty.end());
      if (static_cast<int64_t>(context_.sparse_keys.size()) != num_context_sparse_ ||
          static_cast<int64_t>(context_.dense_keys.size()) != num_context_dense ||
          static_cast<int64_t>(lists_.sparse_keys.size()) != num_list_sparse_ ||
          static_cast<int64_t>(lists_.dense_keys.size()) != num_list_dense_) {
        return absl::InvalidArgumentError(
            "ParseSequenceExample: the key lists disagree with Ncontext_sparse, Ncontext_dense, "
            "Nfeature_list_sparse and Nfeature_list_dense");
      }
    }
    if (static_cast<int64_t>(context_.sparse_types.size()) != num_context_sparse_ ||
        static_cast<int64_t>(context_.dense_types.size()) != num_context_dense ||
        static_cast<int64_t>(context_.dense_shapes.size()) != num_context_dense ||
        static_cast<int64_t>(lists_.sparse_types.size()) != num_list_sparse_ ||
        static_cast<int64_t>(lists_.dense_types.size()) != num_list_dense_ ||
        static_cast<int64_t>(lists_.dense_shapes.size()) != num_list_dense_) {
      return absl::InvalidArgumentError(
          "the sparse and dense counts disagree with their types or shapes");
    }
    TW_RETURN_IF_ERROR(CheckDenseShapes(context_.dense_shapes, /*variable_ok=*/false));
    return CheckDenseShapes(lists_.dense_shapes, /*variable_ok=*/false);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const bool scalar = serialized.dims() == 0;
    if (form_ == SequenceForm::kSingle ? !scalar
        : form_ == SequenceForm::kV1   ? serialized.dims() != 1
                                       : serialized.dims() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected serialized to be a ",
                       form_ == SequenceForm::kSingle ? "scalar"
                       : form_ == SequenceForm::kV1   ? "vector"
                                                      : "scalar or vector",
                       ", got shape: ", serialized.shape().DebugString()));
    }
    const int64_t batch = serialized.NumElements();
    FeatureConfig context = context_, lists = lists_;
    const int num_context_dense = static_cast<int>(context.dense_types.size());
    std::vector<std::string> names;
    int first_default = 2;
    if (form_ == SequenceForm::kSingle) {
      TW_RETURN_IF_ERROR(SingleInputs(*ctx, &context, &lists, &names, &first_default));
    } else {
      TW_ASSIGN_OR_RETURN(names, ExampleNames(ctx->input(1), batch, "debug_name"));
    }
    if (form_ == SequenceForm::kV2) {
      TW_RETURN_IF_ERROR(V2Keys(*ctx, &context, &lists));
      first_default = 9;
    }
    context.dense_defaults = Defaults(*ctx, first_default, context.dense_types.size());
    TW_RETURN_IF_ERROR(CheckDefaults(context));

    std::vector<SequenceExample> examples(batch);
    std::vector<const FeatureMap*> contexts(batch);
    std::vector<const FeatureListMap*> feature_lists(batch);
    for (int64_t b = 0; b < batch; ++b) {
      if (!examples[b].ParseFromString(serialized.data<std::string>()[b])) {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid protocol message input, example id: ", names[b]));
      }
      contexts[b] = &examples[b].context().feature();
      feature_lists[b] = &examples[b].feature_lists().feature_list();
    }

    // Outputs: the context's sparse (3 lists), dense and ragged (2 lists,
    // V2), then the feature lists' sparse (3), dense, lengths (not
    // ParseSingleSequenceExample) and ragged (3, V2).
    const int cs = static_cast<int>(num_context_sparse_);
    const int cr = static_cast<int>(context.ragged_keys.size());
    const int fs = static_cast<int>(num_list_sparse_), fd = static_cast<int>(num_list_dense_);
    const Slots context_slots{.sparse = 0, .dense = 3 * cs, .ragged = 3 * cs + num_context_dense};
    const int lists_first = 3 * cs + num_context_dense + 2 * cr;
    const bool lengths = form_ != SequenceForm::kSingle;
    const Slots list_slots{.sparse = lists_first,
                           .dense = lists_first + 3 * fs,
                           .dense_lengths = lengths ? lists_first + 3 * fs + fd : -1,
                           .ragged = lists_first + 3 * fs + fd + (lengths ? fd : 0)};
    TW_RETURN_IF_ERROR(
        ParseFeatureMaps(ctx, contexts, names, !scalar, Form::kContext, context, context_slots));
    return ParseFeatureLists(ctx, feature_lists, names, !scalar, lists, list_slots);
  }

 private:
  // ParseSingleSequenceExample's keys, missing lists and name from its
  // inputs; its defaults start at `first_default`.
  absl::Status SingleInputs(const KernelContext& ctx, FeatureConfig* context, FeatureConfig* lists,
                            std::vector<std::string>* names, int* first_default) const {
    const int num_context_dense = static_cast<int>(context->dense_types.size());
    const Tensor& empty = ctx.input(1);
    if (empty.dtype() != DT_STRING || empty.dims() > 1) {
      return absl::InvalidArgumentError(
          "feature_list_dense_missing_assumed_empty must be a vector of strings");
    }
    lists->missing_assumed_empty.insert(empty.data<std::string>(),
                                        empty.data<std::string>() + empty.NumElements());
    int next = 2;
    TW_RETURN_IF_ERROR(
        KeyScalars(ctx, next, num_context_sparse_, "context_sparse_keys", &context->sparse_keys));
    next += static_cast<int>(num_context_sparse_);
    TW_RETURN_IF_ERROR(
        KeyScalars(ctx, next, num_context_dense, "context_dense_keys", &context->dense_keys));
    next += num_context_dense;
    TW_RETURN_IF_ERROR(
        KeyScalars(ctx, next, num_list_sparse_, "feature_list_sparse_keys", &lists->sparse_keys));
    next += static_cast<int>(num_list_sparse_);
    TW_RETURN_IF_ERROR(
        KeyScalars(ctx, next, num_list_dense_, "feature_list_dense_keys", &lists->dense_keys));
    next += static_cast<int>(num_list_dense_);
    *first_default = next;
    const Tensor& debug_name = ctx.input(next + num_context_dense);
    if (debug_name.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("debug_name must be a string scalar, got ",
                                                     debug_name.shape().DebugString()));
    }
    names->push_back(*debug_name.data<std::string>());
    return absl::OkStatus();
  }

  // ParseSequenceExampleV2's keys and missing lists from its inputs.
  absl::Status V2Keys(const KernelContext& ctx, FeatureConfig* context,
                      FeatureConfig* lists) const {
    const int num_context_dense = static_cast<int>(context->dense_types.size());
    TW_RETURN_IF_ERROR(
        KeyVector(ctx.input(2), num_context_sparse_, "context_sparse_keys", &context->sparse_keys));
    TW_RETURN_IF_ERROR(
        KeyVector(ctx.input(3), num_context_dense, "context_dense_keys", &context->dense_keys));
    TW_RETURN_IF_ERROR(KeyVector(ctx.input(4),
                                 static_cast<int64_t>(context->ragged_value_types.size()),
                                 "context_ragged_keys", &context->ragged_keys));
    TW_RETURN_IF_ERROR(
        KeyVector(ctx.input(5), num_list_sparse_, "feature_list_sparse_keys", &lists->sparse_keys));
    TW_RETURN_IF_ERROR(
        KeyVector(ctx.input(6), num_list_dense_, "feature_list_dense_keys", &lists->dense_keys));
    TW_RETURN_IF_ERROR(KeyVector(ctx.input(7),
                                 static_cast<int64_t>(lists->ragged_value_types.size()),
                                 "feature_list_ragged_keys", &lists->ragged_keys));
    const Tensor& empty = ctx.input(8);
    if (empty.dtype() != DT_BOOL || empty.dims() != 1 || empty.NumElements() != num_list_dense_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected feature_list_dense_missing_assumed_empty to be a vector of ",
                       num_list_dense_, " bools, got ", empty.shape().DebugString()));
    }
    for (int64_t i = 0; i < num_list_dense_; ++i) {
      if (empty.data<bool>()[i]) lists->missing_assumed_empty.insert(lists->dense_keys[i]);
    }
    return absl::OkStatus();
  }

  const SequenceForm form_;
  int64_t num_context_sparse_ = 0, num_list_sparse_ = 0, num_list_dense_ = 0;
  FeatureConfig context_, lists_;  // types and shapes, and V1's keys
};

TW_REGISTER_KERNELS(sequence_example_ops) {
  RegisterKernel(KernelDefBuilder("ParseSequenceExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseSequenceExampleOp>(SequenceForm::kV1); });
  RegisterKernel(KernelDefBuilder("ParseSequenceExampleV2").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseSequenceExampleOp>(SequenceForm::kV2); });
  RegisterKernel(KernelDefBuilder("ParseSingleSequenceExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseSequenceExampleOp>(SequenceForm::kSingle); });
}

}  // namespace
}  // namespace towerflow
