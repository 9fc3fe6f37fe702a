#include "testing/model_fn_harness.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "estimator/replicate_model_fn.h"
#include "graph/collections.h"
#include "ops/const_op.h"
#include "ops/gradients.h"
#include "ops/variables.h"
#include "train/optimizer.h"

namespace towerflow {
namespace testing {
namespace {

// The Estimator's log, dropped: a test's output is its assertions.
std::ostream& NullLog() {
  class NullBuffer : public std::streambuf {
   protected:
    int overflow(int c) override { return traits_type::not_eof(c); }
  };
  static NullBuffer* buffer = new NullBuffer;
  static std::ostream* log = new std::ostream(buffer);
  return *log;
}

std::string MakeModelDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern =
      (base != nullptr ? std::filesystem::path(base) : std::filesystem::temp_directory_path()) /
      "model_fn_harness_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

}  // namespace

ModelFnHarness::ModelFnHarness(ModelFn model_fn, std::map<std::string, Tensor> features,
                               std::map<std::string, Tensor> labels, ModelFnHarnessOptions options)
    : model_fn_(std::move(model_fn)),
      features_(std::move(features)),
      labels_(std::move(labels)),
      options_(std::move(options)),
      model_dir_(options_.model_dir) {
  if (model_dir_.empty()) {
    model_dir_ = MakeModelDir();
    owns_model_dir_ = !model_dir_.empty();
  }
}

ModelFnHarness::~ModelFnHarness() {
  estimator_.reset();
  if (owns_model_dir_) {
    std::error_code ignored;
    std::filesystem::remove_all(model_dir_, ignored);
  }
}

absl::StatusOr<ModelFn> ModelFnHarness::BuildModelFn() const {
  if (options_.num_towers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ModelFnHarness: num_towers is ", options_.num_towers, "; at least 1"));
  }
  if (options_.num_towers == 1) return model_fn_;
  ReplicateOptions replicate;
  for (int i = 0; i < options_.num_towers; ++i) {
    replicate.devices.push_back(absl::StrCat("/cpu:", i));
  }
  return ReplicateModelFn(model_fn_, replicate);
}

InputFn ModelFnHarness::Input(bool repeat, bool with_labels) const {
  return [this, repeat, with_labels]() -> absl::StatusOr<InputSpec> {
    std::vector<std::string> feature_names, label_names;
    data::Element batch;
    for (const auto& [name, tensor] : features_) {
      feature_names.push_back(name);
      batch.push_back(tensor);
    }
    if (with_labels) {
      for (const auto& [name, tensor] : labels_) {
        label_names.push_back(name);
        batch.push_back(tensor);
      }
    }
    if (batch.empty()) {
      return absl::InvalidArgumentError("ModelFnHarness: no features and no labels");
    }
    const int64_t rows = batch[0].dims() > 0 ? batch[0].dim_size(0) : 0;
    TW_ASSIGN_OR_RETURN(data::Dataset slices, data::Dataset::FromTensorSlices(batch));
    data::Dataset dataset = slices.Batch(rows);
    if (repeat) dataset = dataset.Repeat();
    return InputSpec{std::move(dataset), std::move(feature_names), std::move(label_names)};
  };
}

absl::StatusOr<Estimator*> ModelFnHarness::GetEstimator() {
  if (estimator_ != nullptr) return estimator_.get();
  if (model_dir_.empty()) {
    return absl::InternalError("ModelFnHarness: could not make a temporary model_dir");
  }
  TW_ASSIGN_OR_RETURN(ModelFn fn, BuildModelFn());
  RunConfig config;
  config.model_dir = model_dir_;
  config.save_checkpoints_secs = 0;
  config.log_step_count_steps = 0;
  config.save_summary_steps = 0;
  config.random_seed = options_.random_seed;
  config.across_processes = false;
  config.log = &NullLog();
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.session_options.device_count["CPU"] = options_.num_towers;
  estimator_ = std::make_unique<Estimator>(std::move(fn), std::move(config), options_.params);
  return estimator_.get();
}

absl::StatusOr<std::vector<double>> ModelFnHarness::Train(int steps) {
  if (steps < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ModelFnHarness::Train: steps is ", steps, "; at least 1"));
  }
  TW_ASSIGN_OR_RETURN(Estimator * estimator, GetEstimator());
  auto history = std::make_shared<StepHistoryHook>();
  TrainOptions train;
  train.steps = steps;
  train.hooks.push_back(history);
  TW_RETURN_IF_ERROR(
      estimator->Train(Input(/*repeat=*/true, /*with_labels=*/true), train).status());
  std::vector<double> losses = history->losses();
  if (static_cast<int>(losses.size()) != steps) {
    return absl::InternalError(
        absl::StrCat("ModelFnHarness::Train: ", losses.size(), " of ", steps, " steps ran"));
  }
  return losses;
}

absl::StatusOr<MetricMap> ModelFnHarness::Evaluate() {
  TW_ASSIGN_OR_RETURN(Estimator * estimator, GetEstimator());
  return estimator->Evaluate(Input(/*repeat=*/false, /*with_labels=*/true));
}

absl::StatusOr<std::vector<PredictionMap>> ModelFnHarness::Predict() {
  TW_ASSIGN_OR_RETURN(Estimator * estimator, GetEstimator());
  return estimator->Predict(Input(/*repeat=*/false, /*with_labels=*/false));
}

absl::Status ModelFnHarness::CheckEveryTrainableVariableHasGradient() {
  TW_ASSIGN_OR_RETURN(ModelFn fn, BuildModelFn());
  Scope root = Scope::NewRootScope();
  train::GetOrCreateGlobalStep(root);
  FeatureMap features, labels;
  for (const auto& [name, tensor] : features_) {
    features[name] = ops::Const(root.WithOpName(name), tensor.AsProto());
  }
  for (const auto& [name, tensor] : labels_) {
    labels[name] = ops::Const(root.WithOpName(name), tensor.AsProto());
  }
  Params params = options_.params;
  const EstimatorSpec spec = fn(root, features, labels, ModeKeys::kTrain, params);
  TW_RETURN_IF_ERROR(root.status());
  if (spec.loss.node() == nullptr) {
    return absl::InvalidArgumentError("the model_fn returned no loss in TRAIN mode");
  }
  const std::vector<Variable> variables =
      GetVariables(*root.graph(), GraphKeys::kTrainableVariables);
  if (variables.empty()) {
    return absl::FailedPreconditionError("the model_fn created no trainable variable");
  }
  std::vector<Output> handles;
  for (const Variable& v : variables) handles.push_back(v.handle());
  GradientOptions gradient_options;
  gradient_options.allow_unreachable = true;
  TW_ASSIGN_OR_RETURN(std::vector<Gradient> gradients,
                      ComputeSymbolicGradients(root.NewSubScope("harness_gradients"), {spec.loss},
                                               handles, {}, gradient_options));
  std::vector<std::string> missing;
  for (size_t i = 0; i < variables.size(); ++i) {
    if (gradients[i].is_none()) missing.push_back(variables[i].name());
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the loss has no gradient for ", missing.size(), " of ", variables.size(),
                     " trainable variables: ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ModelFnHarness::CheckLossDecreases(int steps, double max_ratio) {
  TW_ASSIGN_OR_RETURN(std::vector<double> losses, Train(steps));
  const double first = losses.front(), last = losses.back();
  if (!(last <= max_ratio * first)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the loss went from ", first, " to ", last, " in ", steps, " steps on one batch (",
        last / first, " of the first step's; at most ", max_ratio, " expected)"));
  }
  return absl::OkStatus();
}

}  // namespace testing
}  // namespace towerflow
