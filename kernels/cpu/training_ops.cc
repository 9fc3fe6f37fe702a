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
#include "kernels/variable_ops.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// Scalar hyperparameter `i`, read on the host (ApplyOpBase checked its
// shape).
template <typename T>
T Scalar(KernelContext* ctx, int i) {
  return *ctx->input(i).data<T>();
}

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

template <typename T>
class MomentumOp : public ApplyOpBase<T, 1> {
 public:
  explicit MomentumOp(bool resource) : ApplyOpBase<T, 1>(resource, kApplyMomentum) {}
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

// f(var row, slot rows..., grad row, row length) for each of grad's rows,
// in index order (a repeated row is updated again).
template <typename T, size_t kVars, typename F>
void ForEachRow(const NdIndex& nd, const std::array<Tensor*, kVars>& t, const Tensor& grad, F&& f) {
  const int64_t m = nd.slice_size;
  for (int64_t r = 0; r < nd.rows; ++r) {
    const int64_t at = nd.offsets[r] * m;
    std::apply(
        [&](auto*... vars) { f(vars->template data<T>() + at..., grad.data<T>() + r * m, m); }, t);
  }
}

// SparseApplyMomentum: the Momentum update on the rows indices name, in
// index order.
template <typename T>
class SparseMomentumOp : public SparseApplyOpBase<T, 1> {
 public:
  explicit SparseMomentumOp(bool resource)
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
        accum[k] = accum[k] * momentum + g[k];
        var[k] -= nesterov_ ? g[k] * lr + accum[k] * momentum * lr : accum[k] * lr;
      }
    });
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

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

// ApplyX and ResourceApplyX, or SparseApplyX and ResourceSparseApplyX
// (indices in host memory).
template <template <typename> class K, typename... Ts>
void RegisterApply(const char* family, bool sparse = false) {
  const char* kind = sparse ? "Sparse" : "";
  for (const bool resource : {false, true}) {
    KernelDefBuilder b(absl::StrCat(resource ? "Resource" : "", kind, "Apply", family));
    b.Device(kDeviceCpu);
    if (sparse) b.HostMemory("indices");
    (RegisterKernel(KernelDefBuilder(b).TypeConstraint<Ts>("T"),
                    [resource] { return std::make_unique<K<Ts>>(resource); }),
     ...);
  }
}

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
}

}  // namespace
}  // namespace towerflow
