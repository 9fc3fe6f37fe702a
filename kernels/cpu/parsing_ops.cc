// The tf.Example parsers: ParseExample and ParseExampleV2 (a batch of
// serialized tf.Examples, or V2's scalar; dense, variable-length, sparse
// and ragged features) and TF 1's ParseSingleExample, with TF's outputs and
// messages (the layouts in example_parsing.h).
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
using example_parsing::FeatureMap;
using example_parsing::Form;
using example_parsing::KeyScalars;
using example_parsing::KeyVector;
using example_parsing::ParseFeatureMaps;
using example_parsing::Slots;

// ParseExample (v1: keys as lists of scalars, serialized a vector),
// ParseExampleV2 (keys as vectors, serialized a vector or a scalar) and
// ParseSingleExample (keys as attrs, serialized a scalar, no names input).
enum class ParseForm { kV1, kV2, kSingle };

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(ParseForm form) : form_(form), v2_(form == ParseForm::kV2) {}

  absl::Status Init(const KernelConstruction& c) override {
    const char* op = v2_                           ? "ParseExampleV2"
                     : form_ == ParseForm::kSingle ? "ParseSingleExample"
                                                   : "ParseExample";
    TW_RETURN_IF_ERROR(c.GetAttr(form_ == ParseForm::kV1 ? "Nsparse" : "num_sparse", &num_sparse_));
    TW_RETURN_IF_ERROR(c.GetAttr("sparse_types", &config_.sparse_types));
    TW_RETURN_IF_ERROR(c.GetAttr("Tdense", &config_.dense_types));
    num_dense_ = static_cast<int64_t>(config_.dense_types.size());
    if (form_ == ParseForm::kSingle) {
      TW_RETURN_IF_ERROR(c.GetAttr("sparse_keys", &config_.sparse_keys));
      TW_RETURN_IF_ERROR(c.GetAttr("dense_keys", &config_.dense_keys));
      if (static_cast<int64_t>(config_.sparse_keys.size()) != num_sparse_ ||
          static_cast<int64_t>(config_.dense_keys.size()) != num_dense_) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": ", config_.sparse_keys.size(), " sparse_keys for num_sparse ", num_sparse_,
            " and ", config_.dense_keys.size(), " dense_keys for ", num_dense_, " Tdense types"));
      }
    } else if (v2_) {
      TW_RETURN_IF_ERROR(c.GetAttr("ragged_value_types", &config_.ragged_value_types));
      TW_RETURN_IF_ERROR(c.GetAttr("ragged_split_types", &config_.ragged_split_types));
      if (config_.ragged_value_types.size() != config_.ragged_split_types.size()) {
        return absl::InvalidArgumentError("len(ragged_keys) != len(ragged_split_types)");
      }
    } else {
      TW_RETURN_IF_ERROR(c.GetAttr("Ndense", &num_dense_));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("dense_shapes", &config_.dense_shapes));
    if (static_cast<int64_t>(config_.dense_shapes.size()) != num_dense_ ||
        static_cast<int64_t>(config_.dense_types.size()) != num_dense_ ||
        static_cast<int64_t>(config_.sparse_types.size()) != num_sparse_) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": Tdense and dense_shapes (and the sparse count and sparse_types) disagree"));
    }
    return CheckDenseShapes(config_.dense_shapes, /*variable_ok=*/true);
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const bool single = form_ == ParseForm::kSingle;
    if (single && serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected serialized to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    // v2 takes a scalar: one example, outputs without the batch dimension.
    const bool scalar = single || (v2_ && serialized.dims() == 0);
    if (serialized.dims() != 1 && !scalar) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected serialized to be a ", v2_ ? "scalar or vector" : "vector",
                       ", got shape: ", serialized.shape().DebugString()));
    }
    const int64_t batch = serialized.NumElements();
    const Tensor no_names(DT_STRING, TensorShape({0}));
    TW_ASSIGN_OR_RETURN(std::vector<std::string> names,
                        ExampleNames(single ? no_names : ctx->input(1), batch, "names"));
    FeatureConfig config = config_;
    int first_default = 1;
    if (v2_) {
      TW_RETURN_IF_ERROR(KeyVector(ctx->input(2), num_sparse_, "sparse_keys", &config.sparse_keys));
      TW_RETURN_IF_ERROR(KeyVector(ctx->input(3), num_dense_, "dense_keys", &config.dense_keys));
      TW_RETURN_IF_ERROR(KeyVector(ctx->input(4),
                                   static_cast<int64_t>(config.ragged_value_types.size()),
                                   "ragged_keys", &config.ragged_keys));
      first_default = 5;
    } else if (!single) {
      TW_RETURN_IF_ERROR(KeyScalars(*ctx, 2, num_sparse_, "sparse_keys", &config.sparse_keys));
      TW_RETURN_IF_ERROR(KeyScalars(*ctx, 2 + static_cast<int>(num_sparse_), num_dense_,
                                    "dense_keys", &config.dense_keys));
      first_default = 2 + static_cast<int>(num_sparse_ + num_dense_);
    }
    config.dense_defaults = Defaults(*ctx, first_default, config.dense_types.size());
    TW_RETURN_IF_ERROR(CheckDefaults(config));

    std::vector<Example> examples(batch);
    std::vector<const FeatureMap*> maps(batch);
    for (int64_t b = 0; b < batch; ++b) {
      if (!examples[b].ParseFromString(serialized.data<std::string>()[b])) {
        return absl::InvalidArgumentError(absl::StrCat("Could not parse example input, value: '",
                                                       serialized.data<std::string>()[b], "'"));
      }
      maps[b] = &examples[b].features().feature();
    }
    const int ns = static_cast<int>(num_sparse_), nd = static_cast<int>(num_dense_);
    const Slots slots{.sparse = 0, .dense = 3 * ns, .ragged = 3 * ns + nd};
    return ParseFeatureMaps(ctx, maps, names, !scalar, single ? Form::kSingle : Form::kBatch,
                            config, slots);
  }

 private:
  const ParseForm form_;
  const bool v2_;
  int64_t num_sparse_ = 0, num_dense_ = 0;
  FeatureConfig config_;  // types, shapes, and ParseSingleExample's keys
};

TW_REGISTER_KERNELS(parsing_ops) {
  RegisterKernel(KernelDefBuilder("ParseExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kV1); });
  RegisterKernel(KernelDefBuilder("ParseExampleV2").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kV2); });
  RegisterKernel(KernelDefBuilder("ParseSingleExample").Device(kDeviceCpu),
                 [] { return std::make_unique<ParseExampleOp>(ParseForm::kSingle); });
}

}  // namespace
}  // namespace towerflow
