// Optimizer updates on TF1 ref variables (ApplyX) and resource variables
// (ResourceApplyX): GradientDescent, Momentum (Nesterov), Adam, Adagrad,
// RMSProp, and Keras's momentum, AdagradV2, Adadelta, AdaMax, centered
// RMSProp, AMSGrad and FTRL (V1, V2) further down. The maths is TF's
// (../shared/reference/OP_FACTS.md, TF's training_ops.cc):
//   GD        var -= alpha * delta
//   Momentum  accum = accum * momentum + grad
//             var -= lr * accum                     (nesterov: lr * (grad + momentum * accum))
//   Adam      lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//             m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2)
//             var -= lr_t * m / (sqrt(v) + epsilon)  (nesterov: m * beta1 + (1 - beta1) * grad)
//   Adagrad   accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum)
//   RMSProp   ms = rho * ms + (1 - rho) * grad^2
//             mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom
// and the sparse forms of Momentum, Adagrad and RMSProp (SparseApplyX,
// ResourceSparseApplyX), which update the rows grad's indices name.
//
// half and bfloat16 variables update as TensorFlow's CPU kernels do: the
// same expressions in the 16-bit type, each operation rounded (mixed
// precision keeps float32 variables and never takes this path).
//
// The locking, checks and copy-on-write are ApplyOpBase's
// (kernels/variable_util.h), shared with the GPU updates. This file also
// gives the CPU's arithmetic to AssignAdd/AssignSub (kernels/variable_ops.h).
#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/apply_util.h"
#include "kernels/variable_ops.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

using apply::ForEachElement;
using apply::ForEachRow;
using apply::RegisterApply;
using apply::Scalar;

template <typename T>
class GradientDescentOp : public ApplyOpBase<T, 0> {
 public:
  explicit GradientDescentOp(bool resource) : ApplyOpBase<T, 0>(resource, kApplyGradientDescent) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 1>& t,
                      const Tensor& grad) override {
    const T alpha = Scalar<T>(ctx, 1);
    t[0]->flat<T>().device(ctx->eigen_cpu_device()) -= grad.flat<T>() * alpha;
    return absl::OkStatus();
  }
};

// Momentum and (kKeras) Keras's SGD with momentum, whose velocity holds
// -lr * grad and is added to var. Their inputs sit at the same places.
template <typename T, bool kKeras>
class MomentumOpT : public ApplyOpBase<T, 1> {
 public:
  explicit MomentumOpT(bool resource) : ApplyOpBase<T, 1>(resource, kApplyMomentum) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_nesterov", &nesterov_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 2), momentum = Scalar<T>(ctx, 4);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto accum = t[1]->flat<T>();
    const auto g = grad.flat<T>();
    if (kKeras) {
      accum.device(d) = accum * momentum - g * lr;
      if (nesterov_) {
        var.device(d) += accum * momentum - g * lr;
      } else {
        var.device(d) += accum;
      }
      return absl::OkStatus();
    }
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
using MomentumOp = MomentumOpT<T, false>;
template <typename T>
using KerasMomentumOp = MomentumOpT<T, true>;

template <typename T>
class AdamOp : public ApplyOpBase<T, 2> {
 public:
  explicit AdamOp(bool resource) : ApplyOpBase<T, 2>(resource, kApplyAdam) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_nesterov", &nesterov_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    const T beta1_power = Scalar<T>(ctx, 3), beta2_power = Scalar<T>(ctx, 4);
    const T lr = Scalar<T>(ctx, 5), beta1 = Scalar<T>(ctx, 6), beta2 = Scalar<T>(ctx, 7);
    const T epsilon = Scalar<T>(ctx, 8);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto m = t[1]->flat<T>();
    auto v = t[2]->flat<T>();
    const auto g = grad.flat<T>();
    const T lr_t = lr * Eigen::numext::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
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
class AdagradOp : public ApplyOpBase<T, 1> {
 public:
  explicit AdagradOp(bool resource) : ApplyOpBase<T, 1>(resource, kApplyAdagrad) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("update_slots", &update_slots_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 2);
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
class RmsPropOp : public ApplyOpBase<T, 2> {
 public:
  explicit RmsPropOp(bool resource) : ApplyOpBase<T, 2>(resource, kApplyRmsProp) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 3), rho = Scalar<T>(ctx, 4);
    const T momentum = Scalar<T>(ctx, 5), epsilon = Scalar<T>(ctx, 6);
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

// Adagrad with epsilon outside the root (Keras's Adagrad).
template <typename T>
class AdagradV2Op : public ApplyOpBase<T, 1> {
 public:
  explicit AdagradV2Op(bool resource) : ApplyOpBase<T, 1>(resource, kApplyAdagradV2) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("update_slots", &update_slots_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 2), epsilon = Scalar<T>(ctx, 3);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto accum = t[1]->flat<T>();
    const auto g = grad.flat<T>();
    if (update_slots_) accum.device(d) += g.square();
    var.device(d) -= g * lr / (accum.sqrt() + epsilon);
    return absl::OkStatus();
  }

 private:
  bool update_slots_ = true;
};

template <typename T>
class AdadeltaOp : public ApplyOpBase<T, 2> {
 public:
  explicit AdadeltaOp(bool resource) : ApplyOpBase<T, 2>(resource, kApplyAdadelta) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 3), rho = Scalar<T>(ctx, 4), epsilon = Scalar<T>(ctx, 5);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto accum = t[1]->flat<T>();
    auto accum_update = t[2]->flat<T>();
    const auto g = grad.flat<T>();
    accum.device(d) = accum * rho + g.square() * (T(1) - rho);
    const auto update = (accum_update + epsilon).sqrt() * (accum + epsilon).rsqrt() * g;
    var.device(d) -= update * lr;
    accum_update.device(d) = accum_update * rho + update.square() * (T(1) - rho);
    return absl::OkStatus();
  }
};

// Adam's infinity-norm variant.
template <typename T>
class AdaMaxOp : public ApplyOpBase<T, 2> {
 public:
  explicit AdaMaxOp(bool resource) : ApplyOpBase<T, 2>(resource, kApplyAdaMax) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    const T beta1_power = Scalar<T>(ctx, 3), lr = Scalar<T>(ctx, 4), beta1 = Scalar<T>(ctx, 5);
    const T beta2 = Scalar<T>(ctx, 6), epsilon = Scalar<T>(ctx, 7);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto m = t[1]->flat<T>();
    auto v = t[2]->flat<T>();
    const auto g = grad.flat<T>();
    m.device(d) += (g - m) * (T(1) - beta1);
    v.device(d) = (v * beta2).cwiseMax(g.abs());
    var.device(d) -= (m / (v + epsilon)) * (lr / (T(1) - beta1_power));
    return absl::OkStatus();
  }
};

// RMSProp normalised by the variance (ms - mg^2) rather than the second
// moment.
template <typename T>
class CenteredRmsPropOp : public ApplyOpBase<T, 3> {
 public:
  explicit CenteredRmsPropOp(bool resource) : ApplyOpBase<T, 3>(resource, kApplyCenteredRmsProp) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 4>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 4), rho = Scalar<T>(ctx, 5);
    const T momentum = Scalar<T>(ctx, 6), epsilon = Scalar<T>(ctx, 7);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto mg = t[1]->flat<T>();
    auto ms = t[2]->flat<T>();
    auto mom = t[3]->flat<T>();
    const auto g = grad.flat<T>();
    ms.device(d) += (g.square() - ms) * (T(1) - rho);
    mg.device(d) += (g - mg) * (T(1) - rho);
    mom.device(d) = mom * momentum + (g * lr) / (ms - mg.square() + epsilon).sqrt();
    var.device(d) -= mom;
    return absl::OkStatus();
  }
};

// Adam whose step divides by the running maximum vhat of v (AMSGrad).
template <typename T>
class AdamWithAmsgradOp : public ApplyOpBase<T, 3> {
 public:
  explicit AdamWithAmsgradOp(bool resource) : ApplyOpBase<T, 3>(resource, kApplyAdamWithAmsgrad) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 4>& t,
                      const Tensor& grad) override {
    const T beta1_power = Scalar<T>(ctx, 4), beta2_power = Scalar<T>(ctx, 5);
    const T lr = Scalar<T>(ctx, 6), beta1 = Scalar<T>(ctx, 7), beta2 = Scalar<T>(ctx, 8);
    const T epsilon = Scalar<T>(ctx, 9);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto m = t[1]->flat<T>();
    auto v = t[2]->flat<T>();
    auto vhat = t[3]->flat<T>();
    const auto g = grad.flat<T>();
    const T lr_t = lr * Eigen::numext::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    m.device(d) += (g - m) * (T(1) - beta1);
    v.device(d) += (g.square() - v) * (T(1) - beta2);
    vhat.device(d) = vhat.cwiseMax(v);
    var.device(d) -= (m * lr_t) / (vhat.sqrt() + epsilon);
    return absl::OkStatus();
  }
};

// FTRL-proximal, one element (TF's Ftrl functors; V1 has no shrinkage):
// linear gathers the gradient (plus 2 l2_shrinkage var for V2) less the
// change of the per-coordinate rate times var, and var is the closed-form
// minimiser, 0 where |linear| <= l1. multiply_linear_by_lr keeps linear
// scaled by lr.
template <typename T>
struct FtrlParams {
  T lr, l1, l2, l2_shrinkage, lr_power;
  bool shrinkage, by_lr;

  // accum^-lr_power, as a square root for the usual -0.5.
  T Rate(T accum) const {
    return lr_power == T(-0.5) ? Eigen::numext::sqrt(accum)
                               : static_cast<T>(std::pow(static_cast<double>(accum),
                                                         -static_cast<double>(lr_power)));
  }
  void Step(T& var, T& accum, T& linear, T g) const {
    const T g_shrunk = shrinkage ? g + T(2) * l2_shrinkage * var : g;
    const T new_accum = accum + g * g;
    const T rate_change = Rate(new_accum) - Rate(accum);
    linear += by_lr ? g_shrunk * lr - rate_change * var : g_shrunk - rate_change / lr * var;
    const T l1_eff = by_lr ? l1 * lr : l1;
    const T sign = linear > T(0) ? T(1) : linear < T(0) ? T(-1) : T(0);
    const T x = l1_eff * sign - linear;
    const T y = by_lr ? Rate(new_accum) + T(2) * l2 * lr : Rate(new_accum) / lr + T(2) * l2;
    var = Eigen::numext::abs(linear) > l1_eff ? x / y : T(0);
    accum = new_accum;
  }
};

// The sparse forms refuse a non-positive lr, negative l1, l2 or shrinkage
// and a positive lr_power with TF's messages; the dense ones, as TF's, take
// any values.
template <typename T>
absl::StatusOr<FtrlParams<T>> ReadFtrl(KernelContext* ctx, const ApplySignature& sig, bool v2,
                                       bool by_lr, bool check_values) {
  FtrlParams<T> p;
  int k = 0;
  p.lr = Scalar<T>(ctx, sig.scalars[k++].first);
  p.l1 = Scalar<T>(ctx, sig.scalars[k++].first);
  p.l2 = Scalar<T>(ctx, sig.scalars[k++].first);
  p.l2_shrinkage = v2 ? Scalar<T>(ctx, sig.scalars[k++].first) : T(0);
  p.lr_power = Scalar<T>(ctx, sig.scalars[k++].first);
  p.shrinkage = v2;
  p.by_lr = by_lr;
  if (!check_values) return p;
  // TF's messages end in the (scalar) shape, whatever the value.
  const auto check = [](bool ok, const char* what) {
    return ok ? absl::OkStatus() : absl::InvalidArgumentError(absl::StrCat(what, "[]"));
  };
  TW_RETURN_IF_ERROR(check(p.lr > T(0), "lr is not a positive scalar: "));
  TW_RETURN_IF_ERROR(
      check(p.l1 >= T(0), "l1 regularization strength is not a non-negative scalar: "));
  TW_RETURN_IF_ERROR(
      check(p.l2 >= T(0), "l2 regularization strength is not a non-negative scalar: "));
  if (v2) {
    TW_RETURN_IF_ERROR(
        check(p.l2_shrinkage >= T(0),
              "l2 shrinkage regularization strength is not a non-negative scalar: "));
  }
  TW_RETURN_IF_ERROR(check(p.lr_power <= T(0), "lr_power is not a non-positive scalar: "));
  return p;
}

template <typename T>
class FtrlOp : public ApplyOpBase<T, 2> {
 public:
  FtrlOp(bool resource, bool v2)
      : ApplyOpBase<T, 2>(resource, v2 ? kApplyFtrlV2 : kApplyFtrl), v2_(v2) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("multiply_linear_by_lr", &by_lr_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(const FtrlParams<T> p,
                        ReadFtrl<T>(ctx, v2_ ? kApplyFtrlV2 : kApplyFtrl, v2_, by_lr_, false));
    ForEachElement<T>(ctx, t, grad, 64,
                      [&](T& var, T& accum, T& linear, T g) { p.Step(var, accum, linear, g); });
    return absl::OkStatus();
  }

 private:
  const bool v2_;
  bool by_lr_ = false;
};
template <typename T>
struct FtrlV1 : FtrlOp<T> {
  explicit FtrlV1(bool resource) : FtrlOp<T>(resource, false) {}
};
template <typename T>
struct FtrlV2 : FtrlOp<T> {
  explicit FtrlV2(bool resource) : FtrlOp<T>(resource, true) {}
};

// SparseApplyMomentum (and, kKeras, Keras's): the Momentum update on the
// rows indices name, in index order.
template <typename T, bool kKeras>
class SparseMomentumOpT : public SparseApplyOpBase<T, 1> {
 public:
  explicit SparseMomentumOpT(bool resource)
      : SparseApplyOpBase<T, 1>(resource, kSparseApplyMomentum) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("use_nesterov", &nesterov_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 2), momentum = Scalar<T>(ctx, 5);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        if (kKeras) {
          accum[k] = accum[k] * momentum - g[k] * lr;
          var[k] += nesterov_ ? accum[k] * momentum - g[k] * lr : accum[k];
        } else {
          accum[k] = accum[k] * momentum + g[k];
          var[k] -= nesterov_ ? g[k] * lr + accum[k] * momentum * lr : accum[k] * lr;
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};
template <typename T>
using SparseMomentumOp = SparseMomentumOpT<T, false>;
template <typename T>
using SparseKerasMomentumOp = SparseMomentumOpT<T, true>;

// SparseApplyAdagrad: the Adagrad update on the rows indices name, in
// index order.
template <typename T>
class SparseAdagradOp : public SparseApplyOpBase<T, 1> {
 public:
  explicit SparseAdagradOp(bool resource)
      : SparseApplyOpBase<T, 1>(resource, kSparseApplyAdagrad) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("update_slots", &update_slots_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 2);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        if (update_slots_) accum[k] += g[k] * g[k];
        var[k] -= g[k] * lr / Eigen::numext::sqrt(accum[k]);
      }
    });
    return absl::OkStatus();
  }

 private:
  bool update_slots_ = true;
};

// SparseApplyRMSProp: the RMSProp update on the rows indices name, in
// index order; the other rows' ms and mom stay as they are.
template <typename T>
class SparseRmsPropOp : public SparseApplyOpBase<T, 2> {
 public:
  explicit SparseRmsPropOp(bool resource)
      : SparseApplyOpBase<T, 2>(resource, kSparseApplyRmsProp) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 3), rho = Scalar<T>(ctx, 4);
    const T momentum = Scalar<T>(ctx, 5), epsilon = Scalar<T>(ctx, 6);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* ms, T* mom, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        ms[k] += (g[k] * g[k] - ms[k]) * (T(1) - rho);
        mom[k] = mom[k] * momentum + lr * g[k] / Eigen::numext::sqrt(ms[k] + epsilon);
        var[k] -= mom[k];
      }
    });
    return absl::OkStatus();
  }
};

// The sparse forms of AdagradV2 and FTRL (V1 and V2), on the rows indices
// name, in index order.
template <typename T>
class SparseAdagradV2Op : public SparseApplyOpBase<T, 1> {
 public:
  explicit SparseAdagradV2Op(bool resource)
      : SparseApplyOpBase<T, 1>(resource, kSparseApplyAdagradV2) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("update_slots", &update_slots_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 2), epsilon = Scalar<T>(ctx, 3);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        if (update_slots_) accum[k] += g[k] * g[k];
        var[k] -= g[k] * lr / (Eigen::numext::sqrt(accum[k]) + epsilon);
      }
    });
    return absl::OkStatus();
  }

 private:
  bool update_slots_ = true;
};

template <typename T>
class SparseFtrlOp : public SparseApplyOpBase<T, 2> {
 public:
  SparseFtrlOp(bool resource, bool v2)
      : SparseApplyOpBase<T, 2>(resource, v2 ? kSparseApplyFtrlV2 : kSparseApplyFtrl), v2_(v2) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("multiply_linear_by_lr", &by_lr_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    TW_ASSIGN_OR_RETURN(
        const FtrlParams<T> p,
        ReadFtrl<T>(ctx, v2_ ? kSparseApplyFtrlV2 : kSparseApplyFtrl, v2_, by_lr_, true));
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, T* linear, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) p.Step(var[k], accum[k], linear[k], g[k]);
    });
    return absl::OkStatus();
  }

 private:
  const bool v2_;
  bool by_lr_ = false;
};
template <typename T>
struct SparseFtrlV1 : SparseFtrlOp<T> {
  explicit SparseFtrlV1(bool resource) : SparseFtrlOp<T>(resource, false) {}
};
template <typename T>
struct SparseFtrlV2 : SparseFtrlOp<T> {
  explicit SparseFtrlV2(bool resource) : SparseFtrlOp<T>(resource, true) {}
};

// AssignAdd/AssignSub's arithmetic on the CPU.
template <typename T>
absl::Status AddInto(KernelContext* ctx, const Tensor& current, const Tensor& delta, bool add,
                     Tensor* out) {
  const auto& d = ctx->eigen_cpu_device();
  if (add) {
    out->flat<T>().device(d) = current.flat<T>() + delta.flat<T>();
  } else {
    out->flat<T>().device(d) = current.flat<T>() - delta.flat<T>();
  }
  return absl::OkStatus();
}

TW_REGISTER_KERNELS(training_ops) {
  RegisterAssignUpdateKernels(kDeviceCpu, DT_FLOAT, AddInto<float>);
  RegisterAssignUpdateKernels(kDeviceCpu, DT_DOUBLE, AddInto<double>);
  RegisterAssignUpdateKernels(kDeviceCpu, DT_HALF, AddInto<half>);
  RegisterAssignUpdateKernels(kDeviceCpu, DT_BFLOAT16, AddInto<bfloat16>);
  RegisterAssignUpdateKernels(kDeviceCpu, DT_INT32, AddInto<int32_t>);
  RegisterAssignUpdateKernels(kDeviceCpu, DT_INT64, AddInto<int64_t>);
  RegisterApply<GradientDescentOp, float, double, half, bfloat16>("GradientDescent");
  RegisterApply<MomentumOp, float, double, half, bfloat16>("Momentum");
  RegisterApply<AdamOp, float, double, half, bfloat16>("Adam");
  RegisterApply<AdagradOp, float, double, half, bfloat16>("Adagrad");
  RegisterApply<RmsPropOp, float, double, half, bfloat16>("RMSProp");
  RegisterApply<SparseMomentumOp, float, double, half, bfloat16>("Momentum", /*sparse=*/true);
  RegisterApply<SparseAdagradOp, float, double, half, bfloat16>("Adagrad", /*sparse=*/true);
  RegisterApply<SparseRmsPropOp, float, double, half, bfloat16>("RMSProp", /*sparse=*/true);
  RegisterApply<KerasMomentumOp, float, double, half, bfloat16>("KerasMomentum", false,
                                                                /*resource_only=*/true);
  RegisterApply<SparseKerasMomentumOp, float, double, half, bfloat16>("KerasMomentum", true,
                                                                      /*resource_only=*/true);
  RegisterApply<AdagradV2Op, float, double, half, bfloat16>("AdagradV2");
  RegisterApply<SparseAdagradV2Op, float, double, half, bfloat16>("AdagradV2", true);
  RegisterApply<AdadeltaOp, float, double, half, bfloat16>("Adadelta");
  RegisterApply<AdaMaxOp, float, double, half, bfloat16>("AdaMax");
  RegisterApply<CenteredRmsPropOp, float, double, half, bfloat16>("CenteredRMSProp");
  RegisterApply<AdamWithAmsgradOp, float, double, half, bfloat16>("AdamWithAmsgrad", false,
                                                                  /*resource_only=*/true);
  RegisterApply<FtrlV1, float, double, half, bfloat16>("Ftrl");
  RegisterApply<FtrlV2, float, double, half, bfloat16>("FtrlV2");
  RegisterApply<SparseFtrlV1, float, double, half, bfloat16>("Ftrl", true);
  RegisterApply<SparseFtrlV2, float, double, half, bfloat16>("FtrlV2", true);
}

}  // namespace
}  // namespace towerflow
