// The optimizer updates of tf.compat.v1.train's less common optimizers, on
// ref variables (ApplyX, SparseApplyX) and resource variables
// (ResourceApplyX, ResourceSparseApplyX), with TF's arithmetic (TF's
// training_ops.cc):
//   ProximalGradientDescent  prox = var - alpha * delta
//                            var = sign(prox) max(|prox| - alpha l1, 0) / (1 + l2 alpha)
//                            (prox / (1 + l2 alpha) when l1 <= 0)
//   ProximalAdagrad          accum += grad^2; rate = lr / sqrt(accum)
//                            prox = var - grad rate, then as above with rate
//   AddSign                  m = m beta + grad (1 - beta)
//                            var -= lr (alpha + sign_decay sign(grad) sign(m)) grad
//   PowerSign                m as AddSign; var -= lr exp(logbase sign_decay sign(grad) sign(m))
//   grad AdagradDA                g += grad; gg += grad^2 (the dual averages); with t the
//                            int64 global_step as a float,
//                            var = -lr sign(g) max(|g| - l1 t, 0) / (l2 t lr + sqrt(gg))
//                            (-lr g / (...) when l1 <= 0)
// and the sparse forms of these, Adadelta and centered RMSProp, on the rows
// their indices name, in index order. The locking, checks and copy-on-write
// are ApplyOpBase's (kernels/variable_util.h).
#include <cmath>
#include <cstdint>

#include "core/float16.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/apply_util.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

using apply::ForEachElement;
using apply::ForEachRow;
using apply::RegisterApply;
using apply::Scalar;

template <typename T>
T Sign(T x) {
  return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0);
}

// The proximal step of both proximal updates: var from prox = var - rate *
// grad, shrunk by rate * l1 and scaled by 1 / (1 + l2 * rate).
template <typename T>
T Proximal(T prox, T rate, T l1, T l2) {
  const T denominator = T(1) + l2 * rate;
  if (l1 > T(0)) {
    const T shrunk = Eigen::numext::abs(prox) - rate * l1;
    return Sign(prox) * (shrunk > T(0) ? shrunk : T(0)) / denominator;
  }
  return prox / denominator;
}

template <typename T>
struct ProximalGdParams {
  T alpha, l1, l2;
  void Step(T& var, T g) const { var = Proximal<T>(var - g * alpha, alpha, l1, l2); }
};

template <typename T>
class ProximalGradientDescentOp : public ApplyOpBase<T, 0> {
 public:
  explicit ProximalGradientDescentOp(bool resource)
      : ApplyOpBase<T, 0>(resource, kApplyProximalGradientDescent) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 1>& t,
                      const Tensor& grad) override {
    const ProximalGdParams<T> p{Scalar<T>(ctx, 1), Scalar<T>(ctx, 2), Scalar<T>(ctx, 3)};
    ForEachElement<T>(ctx, t, grad, 16, [&](T& var, T g) { p.Step(var, g); });
    return absl::OkStatus();
  }
};

template <typename T>
class SparseProximalGradientDescentOp : public SparseApplyOpBase<T, 0> {
 public:
  explicit SparseProximalGradientDescentOp(bool resource)
      : SparseApplyOpBase<T, 0>(resource, kSparseApplyProximalGradientDescent) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 1>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const ProximalGdParams<T> p{Scalar<T>(ctx, 1), Scalar<T>(ctx, 2), Scalar<T>(ctx, 3)};
    ForEachRow<T>(nd, t, grad, [&](T* var, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) p.Step(var[k], g[k]);
    });
    return absl::OkStatus();
  }
};

template <typename T>
struct ProximalAdagradParams {
  T lr, l1, l2;
  void Step(T& var, T& accum, T g) const {
    accum += g * g;
    const T rate = lr * (T(1) / Eigen::numext::sqrt(accum));
    var = Proximal<T>(var - g * rate, rate, l1, l2);
  }
};

template <typename T>
class ProximalAdagradOp : public ApplyOpBase<T, 1> {
 public:
  explicit ProximalAdagradOp(bool resource) : ApplyOpBase<T, 1>(resource, kApplyProximalAdagrad) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    const ProximalAdagradParams<T> p{Scalar<T>(ctx, 2), Scalar<T>(ctx, 3), Scalar<T>(ctx, 4)};
    ForEachElement<T>(ctx, t, grad, 16, [&](T& var, T& accum, T g) { p.Step(var, accum, g); });
    return absl::OkStatus();
  }
};

template <typename T>
class SparseProximalAdagradOp : public SparseApplyOpBase<T, 1> {
 public:
  explicit SparseProximalAdagradOp(bool resource)
      : SparseApplyOpBase<T, 1>(resource, kSparseApplyProximalAdagrad) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const ProximalAdagradParams<T> p{Scalar<T>(ctx, 2), Scalar<T>(ctx, 3), Scalar<T>(ctx, 4)};
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) p.Step(var[k], accum[k], g[k]);
    });
    return absl::OkStatus();
  }
};

// AddSign (kPower false) and PowerSign: the same inputs, the step scaled
// by alpha + sign_decay * agreement or by exp(logbase * sign_decay *
// agreement), agreement being sign(grad) * sign(m) after m's update.
template <typename T, bool kPower>
class SignOp : public ApplyOpBase<T, 1> {
 public:
  explicit SignOp(bool resource)
      : ApplyOpBase<T, 1>(resource, kPower ? kApplyPowerSign : kApplyAddSign) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 2>& t,
                      const Tensor& grad) override {
    const T lr = Scalar<T>(ctx, 2), base = Scalar<T>(ctx, 3);
    const T sign_decay = Scalar<T>(ctx, 4), beta = Scalar<T>(ctx, 5);
    const auto& d = ctx->eigen_cpu_device();
    auto var = t[0]->flat<T>();
    auto m = t[1]->flat<T>();
    const auto g = grad.flat<T>();
    m.device(d) = m * beta + g * (T(1) - beta);
    const auto agreement = g.sign() * m.sign();
    if constexpr (kPower) {
      var.device(d) -= (agreement * (base * sign_decay)).exp() * lr * g;
    } else {
      var.device(d) -= (agreement * sign_decay + base) * lr * g;
    }
    return absl::OkStatus();
  }
};
template <typename T>
using AddSignOp = SignOp<T, false>;
template <typename T>
using PowerSignOp = SignOp<T, true>;

template <typename T>
struct AdagradDaParams {
  T lr, l1, l2, step;  // step: global_step as a float, as TF converts it
  void Step(T& var, T& g_acc, T& gg_acc, T g) const {
    g_acc += g;
    gg_acc += g * g;
    const T denominator = l2 * (step * lr) + Eigen::numext::sqrt(gg_acc);
    if (l1 > T(0)) {
      const T shrunk = Eigen::numext::abs(g_acc) - step * l1;
      var = lr * T(-1) * Sign(g_acc) * (shrunk > T(0) ? shrunk : T(0)) / denominator;
    } else {
      var = lr * g_acc * T(-1) / denominator;
    }
  }
};
template <typename T>
AdagradDaParams<T> ReadAdagradDa(KernelContext* ctx, const ApplySignature& sig) {
  const auto& s = sig.scalars;
  return {Scalar<T>(ctx, s[0].first), Scalar<T>(ctx, s[1].first), Scalar<T>(ctx, s[2].first),
          static_cast<T>(static_cast<float>(Scalar<int64_t>(ctx, s[3].first)))};
}

template <typename T>
class AdagradDaOp : public ApplyOpBase<T, 2> {
 public:
  explicit AdagradDaOp(bool resource) : ApplyOpBase<T, 2>(resource, kApplyAdagradDA) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t,
                      const Tensor& grad) override {
    const AdagradDaParams<T> p = ReadAdagradDa<T>(ctx, kApplyAdagradDA);
    ForEachElement<T>(ctx, t, grad, 16,
                      [&](T& var, T& g_acc, T& gg_acc, T g) { p.Step(var, g_acc, gg_acc, g); });
    return absl::OkStatus();
  }
};

template <typename T>
class SparseAdagradDaOp : public SparseApplyOpBase<T, 2> {
 public:
  explicit SparseAdagradDaOp(bool resource)
      : SparseApplyOpBase<T, 2>(resource, kSparseApplyAdagradDA) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const AdagradDaParams<T> p = ReadAdagradDa<T>(ctx, kSparseApplyAdagradDA);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* g_acc, T* gg_acc, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) p.Step(var[k], g_acc[k], gg_acc[k], g[k]);
    });
    return absl::OkStatus();
  }
};

// Adadelta's update (training_ops.cc's dense form) on the rows indices name.
template <typename T>
class SparseAdadeltaOp : public SparseApplyOpBase<T, 2> {
 public:
  explicit SparseAdadeltaOp(bool resource)
      : SparseApplyOpBase<T, 2>(resource, kSparseApplyAdadelta) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 3>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 3), rho = Scalar<T>(ctx, 4), epsilon = Scalar<T>(ctx, 5);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* accum, T* accum_update, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        accum[k] = accum[k] * rho + g[k] * g[k] * (T(1) - rho);
        const T update = Eigen::numext::sqrt(accum_update[k] + epsilon) *
                         (T(1) / Eigen::numext::sqrt(accum[k] + epsilon)) * g[k];
        var[k] -= update * lr;
        accum_update[k] = accum_update[k] * rho + update * update * (T(1) - rho);
      }
    });
    return absl::OkStatus();
  }
};

// Centered RMSProp's update on the rows indices name.
template <typename T>
class SparseCenteredRmsPropOp : public SparseApplyOpBase<T, 3> {
 public:
  explicit SparseCenteredRmsPropOp(bool resource)
      : SparseApplyOpBase<T, 3>(resource, kSparseApplyCenteredRmsProp) {}

 protected:
  absl::Status Update(KernelContext* ctx, const std::array<Tensor*, 4>& t, const Tensor& grad,
                      const NdIndex& nd) override {
    const T lr = Scalar<T>(ctx, 4), rho = Scalar<T>(ctx, 5);
    const T momentum = Scalar<T>(ctx, 6), epsilon = Scalar<T>(ctx, 7);
    ForEachRow<T>(nd, t, grad, [&](T* var, T* mg, T* ms, T* mom, const T* g, int64_t m) {
      for (int64_t k = 0; k < m; ++k) {
        ms[k] = ms[k] * rho + g[k] * g[k] * (T(1) - rho);
        mg[k] = mg[k] * rho + g[k] * (T(1) - rho);
        const T denominator = ms[k] + epsilon - mg[k] * mg[k];
        mom[k] = mom[k] * momentum + lr * g[k] / Eigen::numext::sqrt(denominator);
        var[k] -= mom[k];
      }
    });
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(more_training_ops) {
  RegisterApply<ProximalGradientDescentOp, float, double, half, bfloat16>(
      "ProximalGradientDescent");
  RegisterApply<SparseProximalGradientDescentOp, float, double, half, bfloat16>(
      "ProximalGradientDescent", /*sparse=*/true);
  RegisterApply<ProximalAdagradOp, float, double, half, bfloat16>("ProximalAdagrad");
  RegisterApply<SparseProximalAdagradOp, float, double, half, bfloat16>("ProximalAdagrad", true);
  RegisterApply<AddSignOp, float, double, half, bfloat16>("AddSign");
  RegisterApply<PowerSignOp, float, double, half, bfloat16>("PowerSign");
  RegisterApply<AdagradDaOp, float, double, half, bfloat16>("AdagradDA");
  RegisterApply<SparseAdagradDaOp, float, double, half, bfloat16>("AdagradDA", true);
  RegisterApply<SparseAdadeltaOp, float, double, half, bfloat16>("Adadelta", true);
  RegisterApply<SparseCenteredRmsPropOp, float, double, half, bfloat16>("CenteredRMSProp", true);
}

}  // namespace
}  // namespace towerflow
