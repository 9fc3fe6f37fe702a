#include "estimator/mixed_precision.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "train/loss_scale_optimizer.h"

namespace towerflow {

absl::StatusOr<Precision> ParsePrecision(absl::string_view name) {
  for (Precision p : {Precision::kFloat32, Precision::kMixedFloat16, Precision::kMixedBfloat16}) {
    if (name == PrecisionName(p)) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("precision '", name, "' is none of float32, mixed_float16 and mixed_bfloat16"));
}

std::string PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kMixedFloat16:
      return "mixed_float16";
    case Precision::kMixedBfloat16:
      return "mixed_bfloat16";
    case Precision::kFloat32:
      break;
  }
  return "float32";
}

void SetPrecision(Precision precision, SessionOptions* options) {
  MixedPrecisionOptions& mixed = options->optimizer.mixed_precision;
  mixed.dtype = precision == Precision::kMixedFloat16    ? DT_HALF
                : precision == Precision::kMixedBfloat16 ? DT_BFLOAT16
                                                         : DT_INVALID;
  mixed.device_types = {kDeviceCpu, kDeviceGpu};
}

void SetPrecision(Precision precision, SessionOptions* options, Params* params) {
  SetPrecision(precision, options);
  params->values["precision"] = static_cast<double>(precision);
}

Precision PrecisionOf(const Params& params) {
  const double p = params.Get("precision", 0);
  if (p == static_cast<double>(Precision::kMixedFloat16)) return Precision::kMixedFloat16;
  if (p == static_cast<double>(Precision::kMixedBfloat16)) return Precision::kMixedBfloat16;
  return Precision::kFloat32;
}

std::shared_ptr<train::Optimizer> MixedPrecisionOptimizer(
    Precision precision, std::shared_ptr<train::Optimizer> optimizer) {
  if (precision != Precision::kMixedFloat16) return optimizer;
  return std::make_shared<train::LossScaleOptimizer>(std::move(optimizer));
}

std::shared_ptr<train::Optimizer> MixedPrecisionOptimizer(
    const Params& params, std::shared_ptr<train::Optimizer> optimizer) {
  return MixedPrecisionOptimizer(PrecisionOf(params), std::move(optimizer));
}

}  // namespace towerflow
