#include "estimator/export_output.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "saved_model/signature_constants.h"

namespace towerflow {

ExportOutput ExportOutput::Predict(std::map<std::string, Output> outputs) {
  return ExportOutput(Kind::kPredict, std::move(outputs));
}

ExportOutput ExportOutput::Classification(Output scores, Output classes) {
  std::map<std::string, Output> outputs;
  if (scores.valid()) outputs[kClassifyOutputScores] = scores;
  if (classes.valid()) outputs[kClassifyOutputClasses] = classes;
  return ExportOutput(Kind::kClassification, std::move(outputs));
}

ExportOutput ExportOutput::Regression(Output value) {
  std::map<std::string, Output> outputs;
  if (value.valid()) outputs[kRegressOutputs] = value;
  return ExportOutput(Kind::kRegression, std::move(outputs));
}

const char* ExportOutput::method_name() const {
  switch (kind_) {
    case Kind::kPredict:
      return kPredictMethodName;
    case Kind::kClassification:
      return kClassifyMethodName;
    case Kind::kRegression:
      return kRegressMethodName;
  }
  return "";
}

ExportOutput ExportOutput::WithOutputs(std::map<std::string, Output> outputs) const {
  return ExportOutput(kind_, std::move(outputs));
}

absl::Status ExportOutput::Validate() const {
  const auto type_of = [](const Output& t) { return DataTypeString(t.type()); };
  switch (kind_) {
    case Kind::kPredict:
      if (outputs_.empty()) {
        return absl::InvalidArgumentError("A PredictOutput needs at least one output");
      }
      for (const auto& [name, tensor] : outputs_) {
        if (name.empty()) return absl::InvalidArgumentError("Prediction output key is empty");
        if (!tensor.valid()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Prediction output value of '", name, "' is not a tensor"));
        }
      }
      return absl::OkStatus();
    case Kind::kClassification: {
      auto scores = outputs_.find(kClassifyOutputScores);
      auto classes = outputs_.find(kClassifyOutputClasses);
      if (scores == outputs_.end() && classes == outputs_.end()) {
        return absl::InvalidArgumentError("At least one of scores and classes must be set.");
      }
      // As TF: any floating type (its message names float32).
      if (scores != outputs_.end() && !DataTypeIsFloating(scores->second.type())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Classification scores must be a float32 Tensor; got ",
                         scores->second.name(), " of ", type_of(scores->second)));
      }
      if (classes != outputs_.end() && classes->second.type() != DT_STRING) {
        return absl::InvalidArgumentError(
            absl::StrCat("Classification classes must be a string Tensor; got ",
                         classes->second.name(), " of ", type_of(classes->second)));
      }
      return absl::OkStatus();
    }
    case Kind::kRegression: {
      auto value = outputs_.find(kRegressOutputs);
      if (value == outputs_.end()) {
        return absl::InvalidArgumentError("A RegressionOutput needs its value");
      }
      if (!DataTypeIsFloating(value->second.type())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Regression output value must be a float32 Tensor; got ",
                         value->second.name(), " of ", type_of(value->second)));
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace towerflow
