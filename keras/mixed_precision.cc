#include "keras/mixed_precision.h"

#include <atomic>

#include "core/status_macros.h"

namespace towerflow {
namespace keras {
namespace mixed_precision {
namespace {

std::atomic<Precision>& Global() {
  static std::atomic<Precision> precision{Precision::kFloat32};
  return precision;
}

}  // namespace

Policy::Policy(Precision precision) : precision_(precision), name_(PrecisionName(precision)) {}

DataType Policy::compute_dtype() const {
  switch (precision_) {
    case Precision::kMixedFloat16:
      return DT_HALF;
    case Precision::kMixedBfloat16:
      return DT_BFLOAT16;
    case Precision::kFloat32:
      break;
  }
  return DT_FLOAT;
}

absl::Status SetGlobalPolicy(const std::string& name) {
  TW_ASSIGN_OR_RETURN(const Precision precision, ParsePrecision(name));
  Global().store(precision);
  return absl::OkStatus();
}

Policy GlobalPolicy() { return Policy(Global().load()); }

}  // namespace mixed_precision
}  // namespace keras
}  // namespace towerflow
