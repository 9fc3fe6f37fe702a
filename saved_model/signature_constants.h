// The names TF Serving and TF's SavedModel loader agree on
// (tensorflow/python/saved_model/{tag,signature}_constants.py).
#ifndef TOWERFLOW_SAVED_MODEL_SIGNATURE_CONSTANTS_H_
#define TOWERFLOW_SAVED_MODEL_SIGNATURE_CONSTANTS_H_

namespace towerflow {

inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kSavedModelTagTrain[] = "train";
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";

// The signature methods.
inline constexpr char kPredictMethodName[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethodName[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethodName[] = "tensorflow/serving/regress";

// The input and output keys of the classify and regress methods.
inline constexpr char kClassifyInputs[] = "inputs";
inline constexpr char kClassifyOutputClasses[] = "classes";
inline constexpr char kClassifyOutputScores[] = "scores";
inline constexpr char kRegressInputs[] = "inputs";
inline constexpr char kRegressOutputs[] = "outputs";

}  // namespace towerflow

#endif  // TOWERFLOW_SAVED_MODEL_SIGNATURE_CONSTANTS_H_
