#include "estimator/model_fn.h"

namespace towerflow {

const char* ModeKeyName(ModeKeys mode) {
  switch (mode) {
    case ModeKeys::kTrain:
      return "train";
    case ModeKeys::kEval:
      return "eval";
    case ModeKeys::kPredict:
      return "infer";
  }
  return "unknown";
}

double Params::Get(const std::string& name, double fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

}  // namespace towerflow
