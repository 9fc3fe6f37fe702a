// Mixed-precision training for a model_fn, as TF 1.x's one call
// tf.train.experimental.enable_mixed_precision_graph_rewrite(opt): the
// session's auto_mixed_precision rewrite (runtime/auto_mixed_precision.h)
// plus, for float16, a dynamic loss scale (train/loss_scale_optimizer.h).
//
//   RunConfig config;
//   SetPrecision(Precision::kMixedBfloat16, &config.session_options, &params);
//   ... in the model_fn:
//   TowerOptimizer opt(MixedPrecisionOptimizer(params, std::make_shared<...>(lr)));
//
// The names are Keras's policies: "float32", "mixed_float16",
// "mixed_bfloat16". Variables stay float32; MatMul and Conv2D and what lies
// between them compute in the 16-bit type; softmax, losses and reductions in
// float32. bfloat16 has float32's exponent range, so it needs no loss scale.
#ifndef TOWERFLOW_ESTIMATOR_MIXED_PRECISION_H_
#define TOWERFLOW_ESTIMATOR_MIXED_PRECISION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator/model_fn.h"
#include "runtime/session.h"
#include "train/optimizer.h"

namespace towerflow {

enum class Precision { kFloat32 = 0, kMixedFloat16 = 1, kMixedBfloat16 = 2 };

// "float32", "mixed_float16" or "mixed_bfloat16"; InvalidArgument naming
// the three otherwise.
absl::StatusOr<Precision> ParsePrecision(absl::string_view name);
std::string PrecisionName(Precision precision);

// Sets the session's rewrite for `precision` on every device type (the CPU
// too: asking for it is the explicit request the rewrite's options want).
void SetPrecision(Precision precision, SessionOptions* options);
// The same, and records the precision in `params` ("precision") for the
// model_fn.
void SetPrecision(Precision precision, SessionOptions* options, Params* params);

// The precision SetPrecision recorded (float32 when none).
Precision PrecisionOf(const Params& params);

// `optimizer` in a dynamic LossScaleOptimizer under mixed_float16, as is
// otherwise; the second form under PrecisionOf(params).
std::shared_ptr<train::Optimizer> MixedPrecisionOptimizer(
    Precision precision, std::shared_ptr<train::Optimizer> optimizer);
std::shared_ptr<train::Optimizer> MixedPrecisionOptimizer(
    const Params& params, std::shared_ptr<train::Optimizer> optimizer);

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_MIXED_PRECISION_H_
