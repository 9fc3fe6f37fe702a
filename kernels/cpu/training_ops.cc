// Optimizer updates on TF1 ref variables (ApplyX) and resource variables
// (ResourceApplyX): GradientDescent, Momentum (Nesterov), Adam, Adagrad,
// RMSProp. The maths is TF's (../shared/reference/OP_FACTS.md):
//   GD        var -= alpha * delta
//   Momentum  accum = accum * momentum + grad
//             var -= lr * accum                     (nesterov: lr * (grad + momentum * accum))
//   Adam      lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//             m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2)
//             var -= lr_t * m / (sqrt(v) + epsilon)  (nesterov: m * beta1 + (1 - beta1) * grad)
//   Adagrad   accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum)
//   RMSProp   ms = rho * ms + (1 - rho) * grad^2
//             mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom
//
// Inputs: the variable and its slots (refs or handles), scalar
// hyperparameters, grad of the variable's shape.
//
// Every update holds the locks of all its variables (taken in address
// order, so two updates never deadlock), whatever use_locking says: TF's
// lock-free mode trades correctness for speed on many-core parameter
// servers, which is not this library's setting. Buffers shared with a
// reader are copied first (Note [Variable copy-on-write] in
// variable_ops.cc).
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/cpu/variable_util.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "runtime/device.h"

namespace towerflow {
namespace {

// The variables an update touches, locked for the update's duration.
class LockedVars {
 public:
  absl::Status Acquire(KernelContext* ctx, int count, bool resource) {
    for (int i = 0; i < count; ++i) {
      if (!resource) {
        vars_.push_back(ctx->ref_input(i));
        continue;
      }
      TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, i));
      vars_.push_back(var.get());
      holders_.push_back(std::move(var));
    }
    std::vector<Var*> order = vars_;
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    for (Var* v : order) v->mu.Lock();
    locked_ = std::move(order);
    return absl::OkStatus();
  }
  ~LockedVars() {
    for (Var* v : locked_) v->mu.Unlock();
  }

  // Tensor i, checked initialised, of `dtype` and `shape`, with a buffer of
  // its own.
  absl::StatusOr<Tensor*> Mutable(KernelContext* ctx, int i, DataType dtype,
                                  const TensorShape& shape) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Var* v = vars_[i];
    if (!v->initialized) {
      return absl::FailedPreconditionError(
          absl::StrCat("Attempting to use uninitialized value ", v->name()));
    }
    if (v->tensor.dtype() != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("Variable ", v->name(), " holds ",
                                                     DataTypeString(v->tensor.dtype()),
                                                     ", the update is ", DataTypeString(dtype)));
    }
    if (v->tensor.shape() != shape) {
      return absl::InvalidArgumentError(absl::StrCat(i == 0 ? "var" : "slot", " ", v->name(),
                                                     " has shape ", v->tensor.shape().DebugString(),
                                                     " but grad has shape ", shape.DebugString()));
    }
    if (!v->tensor.RefCountIsOne()) {
      TW_ASSIGN_OR_RETURN(v->tensor, v->tensor.DeepCopy(ctx->device()->allocator()));
    }
    return &v->tensor;
  }

  Var* var(int i) const { return vars_[i]; }

 private:
  std::vector<Var*> vars_;
  std::vector<std::shared_ptr<Var>> holders_;
  std::vector<Var*> locked_;
};

template <typename T>
absl::StatusOr<T> ScalarInput(KernelContext* ctx, int i, const char* name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a scalar: ", t.shape().DebugString()));
  }
  return *t.data<T>();
}

// Base for the five updates: `kSlots` variables after var, then inputs.
template <typename T, int kSlots>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(bool resource) : resource_(resource) {}

  absl::Status Compute(KernelContext* ctx) override {
    LockedVars vars;
    TW_RETURN_IF_ERROR(vars.Acquire(ctx, 1 + kSlots, resource_));
    const Tensor& grad = ctx->input(GradIndex());
    std::array<Tensor*, 1 + kSlots> t;
    for (int i = 0; i <= kSlots; ++i) {
      TW_ASSIGN_OR_RETURN(t[i], vars.Mutable(ctx, i, DataTypeToEnum<T>::value, grad.shape()));
    }
    if (grad.NumElements() > 0) TW_RETURN_IF_ERROR(Update(ctx, t, grad));
    if (!resource_) ctx->set_output_ref(0, vars.var(0));
    return absl::OkStatus();
  }

 protected:
  using Vars = std::array<Tensor*, 1 + kSlots>;
  virtual int GradIndex() const = 0;
  virtual absl::Status Update(KernelContext* ctx, const Vars& t, const Tensor& grad) = 0;

 private:
  const bool resource_;
};

template <typename T>
class GradientDescentOp : public ApplyOp<T, 0> {
 public:
  using ApplyOp<T, 0>::ApplyOp;

 protected:
  int GradIndex() const override { return 2; }
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 1>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const T alpha, ScalarInput<T>(ctx, 1, "alpha"));
    t[0]->flat<T>().device(ctx->eigen_cpu_device()) -= grad.flat<T>() * alpha;
    return absl::OkStatus();
  }
};

template <typename T>
class MomentumOp : public ApplyOp<T, 1> {
 public:
  using ApplyOp<T, 1>::ApplyOp;
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_nesterov", &nesterov_);
  }

 protected:
  int GradIndex() const override { return 3; }
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const T lr, ScalarInput<T>(ctx, 2, "lr"));
    TW_ASSIGN_OR_RETURN(const T momentum, ScalarInput<T>(ctx, 4, "momentum"));
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto accum = t[1]->flat<T>();
    const auto g = grad.flat<T>();
    accum.device(d) = accum * momentum + g;
    if (nesterov_) {
      var.device(d) -= g * lr + accum * momentum * lr;
    } else {
      var.device(d) -= accum * lr;
    }
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class AdamOp : public ApplyOp<T, 2> {
 public:
  using ApplyOp<T, 2>::ApplyOp;
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_nesterov", &nesterov_);
  }

 protected:
  int GradIndex() const override { return 9; }
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const T beta1_power, ScalarInput<T>(ctx, 3, "beta1_power"));
    TW_ASSIGN_OR_RETURN(const T beta2_power, ScalarInput<T>(ctx, 4, "beta2_power"));
    TW_ASSIGN_OR_RETURN(const T lr, ScalarInput<T>(ctx, 5, "lr"));
    TW_ASSIGN_OR_RETURN(const T beta1, ScalarInput<T>(ctx, 6, "beta1"));
    TW_ASSIGN_OR_RETURN(const T beta2, ScalarInput<T>(ctx, 7, "beta2"));
    TW_ASSIGN_OR_RETURN(const T epsilon, ScalarInput<T>(ctx, 8, "epsilon"));
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto m = t[1]->flat<T>();
    auto v = t[2]->flat<T>();
    const auto g = grad.flat<T>();
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    m.device(d) += (g - m) * (T(1) - beta1);
    v.device(d) += (g.square() - v) * (T(1) - beta2);
    if (nesterov_) {
      var.device(d) -= ((m * beta1 + g * (T(1) - beta1)) * lr_t) / (v.sqrt() + epsilon);
    } else {
      var.device(d) -= (m * lr_t) / (v.sqrt() + epsilon);
    }
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class AdagradOp : public ApplyOp<T, 1> {
 public:
  using ApplyOp<T, 1>::ApplyOp;
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("update_slots", &update_slots_);
  }

 protected:
  int GradIndex() const override { return 3; }
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const T lr, ScalarInput<T>(ctx, 2, "lr"));
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto accum = t[1]->flat<T>();
    const auto g = grad.flat<T>();
    if (update_slots_) accum.device(d) += g.square();
    var.device(d) -= g * lr * accum.rsqrt();
    return absl::OkStatus();
  }

 private:
  bool update_slots_ = true;
};

template <typename T>
class RmsPropOp : public ApplyOp<T, 2> {
 public:
  using ApplyOp<T, 2>::ApplyOp;

 protected:
  int GradIndex() const override { return 7; }
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const T lr, ScalarInput<T>(ctx, 3, "lr"));
    TW_ASSIGN_OR_RETURN(const T rho, ScalarInput<T>(ctx, 4, "rho"));
    TW_ASSIGN_OR_RETURN(const T momentum, ScalarInput<T>(ctx, 5, "momentum"));
    TW_ASSIGN_OR_RETURN(const T epsilon, ScalarInput<T>(ctx, 6, "epsilon"));
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto ms = t[1]->flat<T>();
    auto mom = t[2]->flat<T>();
    const auto g = grad.flat<T>();
    ms.device(d) += (g.square() - ms) * (T(1) - rho);
    mom.device(d) = mom * momentum + (ms + epsilon).rsqrt() * lr * g;
    var.device(d) -= mom;
    return absl::OkStatus();
  }
};

template <template <typename> class K, typename... Ts>
void RegisterApply(const char* family) {
  (RegisterKernel(
       KernelDefBuilder(absl::StrCat("Apply", family)).Device(kDeviceCpu).TypeConstraint<Ts>("T"),
       [] { return std::make_unique<K<Ts>>(false); }),
   ...);
  (RegisterKernel(KernelDefBuilder(absl::StrCat("ResourceApply", family))
                      .Device(kDeviceCpu)
                      .TypeConstraint<Ts>("T"),
                  [] { return std::make_unique<K<Ts>>(true); }),
   ...);
}

TW_REGISTER_KERNELS(training_ops) {
  RegisterApply<GradientDescentOp, float, double>("GradientDescent");
  RegisterApply<MomentumOp, float, double>("Momentum");
  RegisterApply<AdamOp, float, double>("Adam");
  RegisterApply<AdagradOp, float, double>("Adagrad");
  RegisterApply<RmsPropOp, float, double>("RMSProp");
}

}  // namespace
}  // namespace towerflow
