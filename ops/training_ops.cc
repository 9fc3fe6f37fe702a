// Optimizer update ops on TF1 reference variables (Apply*, SparseApply*) and
// on resource variables (ResourceApply*, ResourceSparseApply*). Each family
// is registered from one description, so the four variants cannot drift.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

struct ApplyFamily {
  const char* name;                 // "Momentum" -> ApplyMomentum, ...
  const char* grad;                 // the gradient's argument name
  std::vector<const char*> slots;   // var-shaped state besides var
  std::vector<const char*> before;  // scalar hyperparameters before grad
  std::vector<const char*> after;   // scalar hyperparameters after grad
  std::vector<const char*> attrs;   // besides T and use_locking
  std::vector<const char*> late_attrs;
  bool has_sparse;
  const char* doc;
  bool resource_only = false;         // no ref-variable form (TF 2's own ops)
  const char* sparse_grad = nullptr;  // the sparse forms' name for grad, when not `grad`
};

// A scalar hyperparameter's input: "lr" is "lr: T"; one written with its
// type ("global_step: int64") is as written.
std::string ScalarArg(const char* s) {
  return absl::StrContains(s, ':') ? s : absl::StrCat(s, ": T");
}
std::string ArgName(const char* s) {
  return std::string(absl::string_view(s).substr(0, absl::string_view(s).find(':')));
}

// The variable's shape: from the ref input, or from the resource's handle.
std::optional<PartialTensorShape> VarShape(InferenceContext* c, int input, bool resource) {
  if (resource) return c->input_handle_shape(input);
  return c->input(input);
}

ShapeFn MakeApplyShape(const ApplyFamily& f, bool resource, bool sparse) {
  return [f, resource, sparse](InferenceContext* c) -> absl::Status {
    std::optional<PartialTensorShape> var = VarShape(c, 0, resource);
    PartialTensorShape merged = var.value_or(PartialTensorShape());
    for (size_t i = 0; i < f.slots.size(); ++i) {
      std::optional<PartialTensorShape> slot = VarShape(c, 1 + i, resource);
      if (!slot.has_value()) continue;
      const absl::Status s = c->Merge(merged, *slot, &merged);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Slot '", f.slots[i], "' has shape ", slot->DebugString(),
                         " but the variable has shape ", merged.DebugString()));
      }
    }
    int start, stop;
    const auto check_scalars = [&](const std::vector<const char*>& names) -> absl::Status {
      for (const char* arg : names) {
        const std::string name = ArgName(arg);
        TW_RETURN_IF_ERROR(c->input_range(name, &start, &stop));
        if (!c->input(start).unknown_rank() && c->input(start).dims() != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, " must be a scalar, got shape ", c->input(start).DebugString()));
        }
      }
      return absl::OkStatus();
    };
    TW_RETURN_IF_ERROR(check_scalars(f.before));
    TW_RETURN_IF_ERROR(check_scalars(f.after));
    TW_RETURN_IF_ERROR(
        c->input_range(sparse && f.sparse_grad ? f.sparse_grad : f.grad, &start, &stop));
    const PartialTensorShape& grad = c->input(start);
    if (sparse) {
      int istart, istop;
      TW_RETURN_IF_ERROR(c->input_range("indices", &istart, &istop));
      PartialTensorShape indices;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(istart), 1, &indices));
      if (!merged.unknown_rank() && merged.dims() >= 1) {
        const PartialTensorShape want =
            indices.Concatenate(PartialTensorShape(merged.dim_sizes().subspan(1)));
        if (!grad.IsCompatibleWith(want)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "grad must have shape [len(indices)] + var.shape[1:] = ", want.DebugString(),
              ", got ", grad.DebugString()));
        }
      }
    } else if (!grad.IsCompatibleWith(merged)) {
      return absl::InvalidArgumentError(absl::StrCat("grad has shape ", grad.DebugString(),
                                                     " but the variable has shape ",
                                                     merged.DebugString()));
    }
    if (!resource) c->set_output(0, merged);
    return absl::OkStatus();
  };
}

void RegisterVariant(const ApplyFamily& f, bool resource, bool sparse) {
  const std::string name =
      absl::StrCat(resource ? "Resource" : "", sparse ? "Sparse" : "", "Apply", f.name);
  OpDefBuilder b(name, __FILE__);
  const auto state = [&](const char* arg) {
    b.Input(resource ? absl::StrCat(arg, ": resource") : absl::StrCat(arg, ": Ref(T)"));
  };
  state("var");
  for (const char* slot : f.slots) state(slot);
  for (const char* s : f.before) b.Input(ScalarArg(s));
  b.Input(absl::StrCat(sparse && f.sparse_grad ? f.sparse_grad : f.grad, ": T"));
  if (sparse) b.Input("indices: Tindices");
  for (const char* s : f.after) b.Input(ScalarArg(s));
  if (!resource) b.Output("out: Ref(T)");
  b.Attr("T: numbertype");
  if (sparse) b.Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  for (const char* a : f.attrs) b.Attr(a);
  for (const char* a : f.late_attrs) b.AttrAddedAfterTF1(a);
  if (resource) b.SetIsStateful();
  b.Doc(f.doc).SetShapeFn(MakeApplyShape(f, resource, sparse));
  RegisterOp(b);
}

[[maybe_unused]] const bool kRegistered = [] {
  const ApplyFamily families[] = {
      {"GradientDescent", "delta", {}, {"alpha"}, {}, {}, {}, false, "var -= alpha * delta"},
      {"Momentum",
       "grad",
       {"accum"},
       {"lr"},
       {"momentum"},
       {"use_nesterov: bool = false"},
       {},
       true,
       "accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= lr * "
       "(grad + momentum * accum))"},
      {"Adam",
       "grad",
       {"m", "v"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"},
       {},
       {"use_nesterov: bool = false"},
       {},
       false,
       "lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) * (1 - "
       "beta1); v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon)"},
      {"Adagrad",
       "grad",
       {"accum"},
       {"lr"},
       {},
       {},
       {"update_slots: bool = true"},
       true,
       "accum += grad^2; var -= lr * grad / sqrt(accum)"},
      {"RMSProp",
       "grad",
       {"ms", "mom"},
       {"lr", "rho", "momentum", "epsilon"},
       {},
       {},
       {},
       true,
       "ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / "
       "sqrt(ms + epsilon); var -= mom"},
      {"KerasMomentum",
       "grad",
       {"accum"},
       {"lr"},
       {"momentum"},
       {"use_nesterov: bool = false"},
       {},
       true,
       "accum = accum * momentum - lr * grad; var += accum (Nesterov: var += accum * momentum "
       "- lr * grad)",
       /*resource_only=*/true},
      {"AdagradV2",
       "grad",
       {"accum"},
       {"lr", "epsilon"},
       {},
       {"update_slots: bool = true"},
       {},
       true,
       "accum += grad^2; var -= lr * grad / (sqrt(accum) + epsilon)"},
      {"Adadelta",
       "grad",
       {"accum", "accum_update"},
       {"lr", "rho", "epsilon"},
       {},
       {},
       {},
       true,
       "accum = rho * accum + (1 - rho) * grad^2; update = sqrt(accum_update + epsilon) / "
       "sqrt(accum + epsilon) * grad; var -= lr * update; accum_update = rho * accum_update + "
       "(1 - rho) * update^2"},
      {"AdaMax",
       "grad",
       {"m", "v"},
       {"beta1_power", "lr", "beta1", "beta2", "epsilon"},
       {},
       {},
       {},
       false,
       "m += (grad - m) * (1 - beta1); v = max(beta2 * v, |grad|); var -= lr / (1 - "
       "beta1_power) * m / (v + epsilon)"},
      {"CenteredRMSProp",
       "grad",
       {"mg", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon"},
       {},
       {},
       {},
       true,
       "ms = rho * ms + (1 - rho) * grad^2; mg = rho * mg + (1 - rho) * grad; mom = momentum "
       "* mom + lr * grad / sqrt(ms - mg^2 + epsilon); var -= mom"},
      {"AdamWithAmsgrad",
       "grad",
       {"m", "v", "vhat"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"},
       {},
       {},
       {},
       false,
       "Adam with vhat = max(vhat, v) in place of v in the step",
       /*resource_only=*/true},
      {"Ftrl",
       "grad",
       {"accum", "linear"},
       {},
       {"lr", "l1", "l2", "lr_power"},
       {},
       {"multiply_linear_by_lr: bool = false"},
       true,
       "FTRL-proximal: accum' = accum + grad^2; linear += grad - (accum'^-lr_power - "
       "accum^-lr_power) / lr * var; var = |linear| > l1 ? (l1 sign(linear) - linear) / "
       "(accum'^-lr_power / lr + 2 l2) : 0; accum = accum'"},
      {"FtrlV2",
       "grad",
       {"accum", "linear"},
       {},
       {"lr", "l1", "l2", "l2_shrinkage", "lr_power"},
       {},
       {"multiply_linear_by_lr: bool = false"},
       true,
       "Ftrl with grad + 2 l2_shrinkage var in place of grad in linear's update"},
      {"ProximalGradientDescent",
       "delta",
       {},
       {"alpha", "l1", "l2"},
       {},
       {},
       {},
       true,
       "prox = var - alpha * delta; var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + "
       "alpha * l2)",
       /*resource_only=*/false,
       /*sparse_grad=*/"grad"},
      {"ProximalAdagrad",
       "grad",
       {"accum"},
       {"lr", "l1", "l2"},
       {},
       {},
       {},
       true,
       "accum += grad^2; rate = lr / sqrt(accum); prox = var - rate * grad; var = sign(prox) * "
       "max(|prox| - rate * l1, 0) / (1 + rate * l2)"},
      {"AddSign",
       "grad",
       {"m"},
       {"lr", "alpha", "sign_decay", "beta"},
       {},
       {},
       {},
       false,
       "m = beta * m + (1 - beta) * grad; var -= lr * (alpha + sign_decay * sign(grad) * "
       "sign(m)) * grad"},
      {"PowerSign",
       "grad",
       {"m"},
       {"lr", "logbase", "sign_decay", "beta"},
       {},
       {},
       {},
       false,
       "m = beta * m + (1 - beta) * grad; var -= lr * exp(logbase * sign_decay * sign(grad) * "
       "sign(m)) * grad"},
      {"AdagradDA",
       "grad",
       {"gradient_accumulator", "gradient_squared_accumulator"},
       {},
       {"lr", "l1", "l2", "global_step: int64"},
       {},
       {},
       true,
       "g += grad; gg += grad^2; var = -lr * sign(g) * max(|g| - l1 * global_step, 0) / (l2 * "
       "global_step * lr + sqrt(gg))"},
  };
  for (const ApplyFamily& f : families) {
    for (bool resource : {false, true}) {
      if (f.resource_only && !resource) continue;
      RegisterVariant(f, resource, false);
      if (f.has_sparse) RegisterVariant(f, resource, true);
    }
  }
  return true;
}();

}  // namespace
}  // namespace towerflow
