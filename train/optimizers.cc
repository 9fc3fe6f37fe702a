#include "train/optimizers.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gen/training_ops.h"

namespace towerflow {
namespace train {

Operation GradientDescentOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                               const Variable& var) {
  return ops::ResourceApplyGradientDescent(scope, var.handle(), Rate(scope, var.dtype()), grad);
}

Operation GradientDescentOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                                const Variable& var) {
  return ops::ResourceScatterSub(scope, var.handle(), grad.indices,
                                 ops::Mul(scope, grad.values, Rate(scope, var.dtype())));
}

Variable MomentumOptimizer::Accumulator(const Scope& scope, const Variable& var) {
  return CreateSlot(scope, var, "momentum", name());
}

Operation MomentumOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                        const Variable& var) {
  Variable accum = Accumulator(scope, var);
  if (!accum.valid()) return Operation();
  return ops::ResourceApplyMomentum(scope, var.handle(), accum.handle(), Rate(scope, var.dtype()),
                                    grad, Gated(scope, AsTensor(scope, momentum_, var.dtype()), 1),
                                    ops::ResourceApplyMomentum::UseNesterov(use_nesterov_));
}

Operation MomentumOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                         const Variable& var) {
  Variable accum = Accumulator(scope, var);
  if (!accum.valid()) return Operation();
  const IndexedSlices rows = SumRepeatedRows(scope, grad);
  return ops::ResourceSparseApplyMomentum(
      scope, var.handle(), accum.handle(), Rate(scope, var.dtype()), rows.values, rows.indices,
      Gated(scope, AsTensor(scope, momentum_, var.dtype()), 1),
      ops::ResourceSparseApplyMomentum::UseNesterov(use_nesterov_));
}

absl::Status AdamOptimizer::Prepare(const Scope& scope, const std::vector<Variable>& vars) {
  if (beta1_power_.valid()) return absl::OkStatus();
  // Colocated with the first variable by name, as TensorFlow does.
  const Variable& first =
      *std::min_element(vars.begin(), vars.end(),
                        [](const Variable& a, const Variable& b) { return a.name() < b.name(); });
  VariableOptions options;
  options.trainable = false;
  const Scope at = scope.ColocateWith(first.handle()).WithNoControlDependencies();
  auto make = [&](const std::string& base, double value) {
    std::string name = base;
    for (int i = 1; scope.graph()->variable_store().Find(name) != nullptr; ++i) {
      name = absl::StrCat(base, "_", i);
    }
    return GetVariableByFullName(at, name, VariableReuse::kNoReuse, TensorShape({}), first.dtype(),
                                 initializers::Constant(value), options);
  };
  beta1_power_ = make("beta1_power", beta1_);
  beta2_power_ = make("beta2_power", beta2_);
  return scope.status();
}

Operation AdamOptimizer::ApplyDense(const Scope& scope, const Output& grad, const Variable& var) {
  Variable m = CreateSlot(scope, var, "m", name());
  Variable v = CreateSlot(scope, var, "v", absl::StrCat(name(), "_1"));
  if (!m.valid() || !v.valid()) return Operation();
  const DataType t = var.dtype();
  return ops::ResourceApplyAdam(
      scope, var.handle(), m.handle(), v.handle(), beta1_power_.value(scope),
      beta2_power_.value(scope), Rate(scope, t), Gated(scope, AsTensor(scope, beta1_, t), 1),
      Gated(scope, AsTensor(scope, beta2_, t), 1), AsTensor(scope, epsilon_, t), grad,
      ops::ResourceApplyAdam::UseNesterov(use_nesterov_));
}

Operation AdamOptimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  // b1^t and b2^t advance once every variable has used them.
  const Scope after = scope.WithControlDependencies(updates).ColocateWith(beta1_power_.handle());
  const DataType t = beta1_power_.dtype();
  Operation u1 = ops::AssignVariableOp(
      after, beta1_power_.handle(),
      ops::Mul(after, beta1_power_.value(after), Gated(after, AsTensor(after, beta1_, t), 1)));
  Operation u2 = ops::AssignVariableOp(
      after, beta2_power_.handle(),
      ops::Mul(after, beta2_power_.value(after), Gated(after, AsTensor(after, beta2_, t), 1)));
  std::vector<Operation> all = updates;
  all.push_back(u1);
  all.push_back(u2);
  return ops::NoOp(scope.WithControlDependencies(all));
}

Variable AdagradOptimizer::Accumulator(const Scope& scope, const Variable& var) {
  return CreateSlot(scope, var, "accumulator", name(), initializers::Constant(initial_));
}

Operation AdagradOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                       const Variable& var) {
  Variable accum = Accumulator(scope, var);
  if (!accum.valid()) return Operation();
  return ops::ResourceApplyAdagrad(scope, var.handle(), accum.handle(), Rate(scope, var.dtype()),
                                   grad);
}

Operation AdagradOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                        const Variable& var) {
  Variable accum = Accumulator(scope, var);
  if (!accum.valid()) return Operation();
  const IndexedSlices rows = SumRepeatedRows(scope, grad);
  return ops::ResourceSparseApplyAdagrad(scope, var.handle(), accum.handle(),
                                         Rate(scope, var.dtype()), rows.values, rows.indices);
}

bool RMSPropOptimizer::Slots(const Scope& scope, const Variable& var, Variable* ms, Variable* mom) {
  *ms = CreateSlot(scope, var, "rms", name(), initializers::Ones());
  *mom = CreateSlot(scope, var, "momentum", absl::StrCat(name(), "_1"));
  return ms->valid() && mom->valid();
}

Operation RMSPropOptimizer::Skippable(const Scope& scope, const Variable& var, const Variable& mom,
                                      const std::function<Operation(const Scope&)>& update) {
  if (!apply_if().valid()) return update(scope);
  // No rate makes RMSProp's step the identity (var -= mom moves var by the
  // momentum it keeps), so a skipped step puts var and mom back from reads
  // taken before the update, which copy-on-write keeps (Note [Variable
  // copy-on-write] in kernels/variable_ops.cc). ms is kept by a decay of 1.
  const Output var_before = ops::ReadVariableOp(scope, var.handle(), var.dtype());
  const Output mom_before = ops::ReadVariableOp(scope, mom.handle(), mom.dtype());
  const Operation updated =
      update(scope.WithControlDependencies({var_before.op(), mom_before.op()}));
  const Scope after = scope.WithControlDependencies({updated});
  std::vector<Operation> restored;
  for (const auto& [v, before] : {std::pair(var, var_before), std::pair(mom, mom_before)}) {
    const Output now = ops::ReadVariableOp(after, v.handle(), v.dtype());
    restored.push_back(
        ops::AssignVariableOp(after, v.handle(), ops::SelectV2(after, apply_if(), now, before)));
  }
  return ops::NoOp(scope.WithControlDependencies(restored));
}

Operation RMSPropOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                       const Variable& var) {
  Variable ms, mom;
  if (!Slots(scope, var, &ms, &mom)) return Operation();
  const DataType t = var.dtype();
  return Skippable(scope, var, mom, [&](const Scope& at) {
    return ops::ResourceApplyRMSProp(at, var.handle(), ms.handle(), mom.handle(), Rate(at, t),
                                     Gated(at, AsTensor(at, decay_, t), 1),
                                     AsTensor(at, momentum_, t), AsTensor(at, epsilon_, t), grad);
  });
}

Operation RMSPropOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                        const Variable& var) {
  Variable ms, mom;
  if (!Slots(scope, var, &ms, &mom)) return Operation();
  const DataType t = var.dtype();
  const IndexedSlices rows = SumRepeatedRows(scope, grad);
  return Skippable(scope, var, mom, [&](const Scope& at) {
    return ops::ResourceSparseApplyRMSProp(at, var.handle(), ms.handle(), mom.handle(), Rate(at, t),
                                           Gated(at, AsTensor(at, decay_, t), 1),
                                           AsTensor(at, momentum_, t), AsTensor(at, epsilon_, t),
                                           rows.values, rows.indices);
  });
}

absl::StatusOr<ClippedGradients> ClipByGlobalNorm(const Scope& scope,
                                                  const std::vector<Gradient>& tensors,
                                                  Input clip_norm) {
  TW_RETURN_IF_ERROR(scope.status());
  const Scope s = scope.NewSubScope("clip_by_global_norm");
  std::vector<Output> squares;
  DataType dtype = DT_INVALID;
  for (const Gradient& g : tensors) {
    if (g.is_none()) continue;
    const Output t = g.values();
    dtype = t.type();
    // l2_loss(t) = sum(t^2) / 2
    squares.push_back(ops::Mul(s, ops::L2Loss(s, t), 2.0));
  }
  if (squares.empty()) {
    return absl::InvalidArgumentError("ClipByGlobalNorm: every tensor is none");
  }
  ClippedGradients out;
  out.global_norm = ops::Sqrt(s.WithOpName("global_norm"), ops::AddN(s, squares));
  Output clip = Optimizer::AsTensor(s, clip_norm, dtype);
  // clip / max(norm, clip), which is 1 when the norm is within the bound.
  Output scale = ops::RealDiv(s, clip, ops::Maximum(s, out.global_norm, clip));
  for (const Gradient& g : tensors) {
    out.tensors.push_back(
        g.is_none() ? g : g.WithValues(ops::Mul(s.ColocateWith(g.values()), g.values(), scale)));
  }
  TW_RETURN_IF_ERROR(scope.status());
  return out;
}

absl::StatusOr<std::vector<GradAndVar>> ClipByGlobalNorm(const Scope& scope,
                                                         const std::vector<GradAndVar>& grads,
                                                         Input clip_norm, Output* global_norm) {
  std::vector<Gradient> g;
  for (const GradAndVar& gv : grads) g.push_back(gv.grad);
  TW_ASSIGN_OR_RETURN(ClippedGradients clipped, ClipByGlobalNorm(scope, g, std::move(clip_norm)));
  std::vector<GradAndVar> out = grads;
  for (size_t i = 0; i < out.size(); ++i) out[i].grad = clipped.tensors[i];
  if (global_norm != nullptr) *global_norm = clipped.global_norm;
  return out;
}

}  // namespace train
}  // namespace towerflow
