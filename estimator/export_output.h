// Typed serving outputs, as TF's tf.estimator.export.{PredictOutput,
// ClassificationOutput, RegressionOutput}: a model_fn maps signature keys to
// them in EstimatorSpec::export_outputs, and each becomes a SignatureDef of
// the exported SavedModel with TF Serving's method.
//
//   spec.export_outputs["serving_default"] = ExportOutput::Predict({{"probabilities", probs}});
//   spec.export_outputs["classify"] = ExportOutput::Classification(probs, class_names);
//   spec.export_outputs["regress"] = ExportOutput::Regression(value);
//
// Classification and regression signatures take one string tensor of
// serialized tf.Examples ("inputs"), so they are only exported with a
// receiver that has exactly one such tensor
// (BuildParsingServingInputReceiverFn); with others they are left out, as
// TF's export does.
#ifndef TOWERFLOW_ESTIMATOR_EXPORT_OUTPUT_H_
#define TOWERFLOW_ESTIMATOR_EXPORT_OUTPUT_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "graph/output.h"

namespace towerflow {

class ExportOutput {
 public:
  enum class Kind { kPredict, kClassification, kRegression };

  // tensorflow/serving/predict: `outputs` by name, fed by every tensor of
  // the receiver.
  static ExportOutput Predict(std::map<std::string, Output> outputs);
  // tensorflow/serving/classify: "scores" (float, [batch, classes]) and
  // "classes" (string, [batch, classes]); either may be left out (Output()).
  static ExportOutput Classification(Output scores, Output classes = Output());
  // tensorflow/serving/regress: "outputs" (float, one value per example).
  static ExportOutput Regression(Output value);

  Kind kind() const { return kind_; }
  // TF Serving's method name ("tensorflow/serving/predict", ...).
  const char* method_name() const;
  // The tensors by their signature output key: the predict outputs' names;
  // "scores" and "classes"; "outputs".
  const std::map<std::string, Output>& outputs() const { return outputs_; }
  // The same kind of output over other tensors for the same keys (what
  // ReplicateModelFn merges the towers' outputs into).
  ExportOutput WithOutputs(std::map<std::string, Output> outputs) const;

  // TF's checks, InvalidArgument naming the output: a predict output with
  // no or an unset tensor; classification without scores and classes,
  // scores not floating (TF's message says float32; float64, half and
  // bfloat16 are accepted, as TF's is_floating), classes not string; a
  // regression value not floating.
  absl::Status Validate() const;

 private:
  ExportOutput(Kind kind, std::map<std::string, Output> outputs)
      : kind_(kind), outputs_(std::move(outputs)) {}

  Kind kind_;
  std::map<std::string, Output> outputs_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_EXPORT_OUTPUT_H_
