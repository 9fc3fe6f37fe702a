#include "train/learning_rate.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"

namespace towerflow {
namespace train {
namespace {

Output StepAsFloat(const Scope& scope, const Output& step) {
  if (step.valid() && step.type() == DT_FLOAT) return step;
  return ops::Cast(scope, step, DT_FLOAT);
}

bool CheckSteps(const Scope& scope, int64_t steps, const char* what) {
  if (steps > 0) return true;
  scope.UpdateStatus(
      absl::InvalidArgumentError(absl::StrCat(what, " must be positive, got ", steps)));
  return false;
}

}  // namespace

Output ExponentialDecay(const Scope& scope, double learning_rate, const Output& step,
                        int64_t decay_steps, double decay_rate, bool staircase) {
  const Scope s = scope.NewSubScope("ExponentialDecay");
  if (!CheckSteps(s, decay_steps, "decay_steps")) return Output();
  Output p = ops::RealDiv(s, StepAsFloat(s, step), static_cast<float>(decay_steps));
  if (staircase) p = ops::Floor(s, p);
  return ops::Mul(s, static_cast<float>(learning_rate),
                  ops::Pow(s, ops::Const(s, static_cast<float>(decay_rate)), p));
}

Output PiecewiseConstant(const Scope& scope, const Output& step,
                         const std::vector<int64_t>& boundaries,
                         const std::vector<double>& values) {
  const Scope s = scope.NewSubScope("PiecewiseConstant");
  if (values.size() != boundaries.size() + 1) {
    s.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("PiecewiseConstant needs one more value than boundaries, got ", values.size(),
                     " values and ", boundaries.size(), " boundaries")));
    return Output();
  }
  for (size_t i = 1; i < boundaries.size(); ++i) {
    if (boundaries[i] <= boundaries[i - 1]) {
      s.UpdateStatus(absl::InvalidArgumentError("PiecewiseConstant boundaries must increase"));
      return Output();
    }
  }
  const Output x = StepAsFloat(s, step);
  // From the last interval down: step <= b_i selects values[i].
  Output lr = ops::Const(s, static_cast<float>(values.back()));
  for (size_t i = boundaries.size(); i-- > 0;) {
    lr = ops::SelectV2(s, ops::LessEqual(s, x, static_cast<float>(boundaries[i])),
                       ops::Const(s, static_cast<float>(values[i])), lr);
  }
  return lr;
}

Output PolynomialDecay(const Scope& scope, double learning_rate, const Output& step,
                       int64_t decay_steps, double end_learning_rate, double power) {
  const Scope s = scope.NewSubScope("PolynomialDecay");
  if (!CheckSteps(s, decay_steps, "decay_steps")) return Output();
  const float steps = static_cast<float>(decay_steps);
  Output fraction = ops::RealDiv(s, ops::Minimum(s, StepAsFloat(s, step), steps), steps);
  Output remaining = ops::Pow(s, ops::Sub(s, ops::Const(s, 1.0f), fraction),
                              ops::Const(s, static_cast<float>(power)));
  return ops::Add(s, ops::Mul(s, remaining, static_cast<float>(learning_rate - end_learning_rate)),
                  static_cast<float>(end_learning_rate));
}

Output CosineDecay(const Scope& scope, double learning_rate, const Output& step,
                   int64_t decay_steps, double alpha) {
  const Scope s = scope.NewSubScope("CosineDecay");
  if (!CheckSteps(s, decay_steps, "decay_steps")) return Output();
  const float steps = static_cast<float>(decay_steps);
  Output fraction = ops::RealDiv(s, ops::Minimum(s, StepAsFloat(s, step), steps), steps);
  Output cosine = ops::Mul(
      s, ops::Add(s, ops::Cos(s, ops::Mul(s, fraction, static_cast<float>(M_PI))), 1.0f), 0.5f);
  Output decayed =
      ops::Add(s, ops::Mul(s, cosine, static_cast<float>(1 - alpha)), static_cast<float>(alpha));
  return ops::Mul(s, decayed, static_cast<float>(learning_rate));
}

Output LinearWarmup(const Scope& scope, const Output& learning_rate, const Output& step,
                    int64_t warmup_steps) {
  const Scope s = scope.NewSubScope("LinearWarmup");
  if (!CheckSteps(s, warmup_steps, "warmup_steps")) return Output();
  const Output x = StepAsFloat(s, step);
  const Output lr = StepAsFloat(s, learning_rate);
  Output warm = ops::Mul(s, lr, ops::RealDiv(s, x, static_cast<float>(warmup_steps)));
  return ops::SelectV2(s, ops::Less(s, x, static_cast<float>(warmup_steps)), warm, lr);
}

}  // namespace train
}  // namespace towerflow
