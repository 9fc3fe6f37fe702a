// Variables and their updates on GPUs: the device-agnostic variable kernels
// (kernels/variable_ops.h), AssignAdd/AssignSub, and the optimizer updates
// (ApplyX on ref variables, ResourceApplyX on handles) for GradientDescent,
// Momentum, Adam, Adagrad and RMSProp, and the sparse forms of Momentum,
// Adagrad and RMSProp (SparseApplyX, ResourceSparseApplyX). Locking, checks and copy-on-write are
// ApplyOpBase's, shared with the CPU; a shared buffer is copied on the
// device. The hyperparameters stay in device memory and the kernels read
// them there, so an update never waits on a copy to the host.
#include <array>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/training_kernels.h"
#include "kernels/variable_ops.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
absl::Status GpuAddInto(KernelContext* ctx, const Tensor& current, const Tensor& delta, bool add,
                        Tensor* out) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  TW_CUDA_RETURN_IF_ERROR(LaunchAddInto<T>(current.data<T>(), delta.data<T>(), out->data<T>(), add,
                                           out->NumElements(), gpu->compute_stream()));
  return absl::OkStatus();
}

// An update's operands for the launchers: variable t[0], slots t[1..],
// grad, and the signature's scalars (device memory).
template <typename T, size_t kVars>
ApplyArgs<T> MakeApplyArgs(KernelContext* ctx, const ApplySignature& signature,
                           const std::array<Tensor*, kVars>& t, const Tensor& grad, bool flag) {
  static_assert(kVars <= 3);
  ApplyArgs<T> args;
  args.var = t[0]->template data<T>();
  for (size_t i = 1; i < kVars; ++i) args.slots[i - 1] = t[i]->template data<T>();
  args.grad = grad.data<T>();
  for (size_t i = 0; i < signature.scalars.size(); ++i) {
    args.scalars[i] = ctx->input(signature.scalars[i].first).template data<T>();
  }
  args.flag = flag;
  return args;
}

// The bool attr `flag_attr` into *flag (ApplyArgs::flag); none for "".
absl::Status ReadFlag(const KernelConstruction& c, const char* flag_attr, bool* flag) {
  if (*flag_attr == '\0') return absl::OkStatus();
  return c.GetAttr(flag_attr, flag);
}

// `flag_attr` names the bool attr passed as ApplyArgs::flag ("" for none).
template <typename T, int kSlots>
class GpuApplyOp : public ApplyOpBase<T, kSlots> {
 public:
  GpuApplyOp(bool resource, const ApplySignature& signature, ApplyFn fn, const char* flag_attr)
      : ApplyOpBase<T, kSlots>(resource, signature),
        signature_(signature),
        fn_(fn),
        flag_attr_(flag_attr) {}

  absl::Status Init(const KernelConstruction& c) override {
    return ReadFlag(c, flag_attr_, &flag_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const typename ApplyOpBase<T, kSlots>::Vars& t,
                      const Tensor& grad) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const ApplyArgs<T> args = MakeApplyArgs<T>(ctx, signature_, t, grad, flag_);
    TW_CUDA_RETURN_IF_ERROR(LaunchApply<T>(fn_, args, grad.NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  const ApplySignature& signature_;
  const ApplyFn fn_;
  const char* const flag_attr_;
  bool flag_ = false;
};

// SparseApplyMomentum, SparseApplyAdagrad and SparseApplyRMSProp (and their
// resource forms): the rows grouped on the host (indices stay in host
// memory), the groups updated on the device.
template <typename T, int kSlots>
class GpuSparseApplyOp : public SparseApplyOpBase<T, kSlots> {
 public:
  GpuSparseApplyOp(bool resource, const ApplySignature& signature, ApplyFn fn,
                   const char* flag_attr)
      : SparseApplyOpBase<T, kSlots>(resource, signature),
        signature_(signature),
        fn_(fn),
        flag_attr_(flag_attr) {}

  absl::Status Init(const KernelConstruction& c) override {
    return ReadFlag(c, flag_attr_, &flag_);
  }

 protected:
  absl::Status Update(KernelContext* ctx, const typename SparseApplyOpBase<T, kSlots>::Vars& t,
                      const Tensor& grad, const NdIndex& nd) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    int64_t groups = 0;
    TW_ASSIGN_OR_RETURN(const Tensor plan, Upload(gpu, GroupRowsBySlice(nd, &groups)));
    const ApplyArgs<T> args = MakeApplyArgs<T>(ctx, signature_, t, grad, flag_);
    TW_CUDA_RETURN_IF_ERROR(LaunchSparseApply<T>(fn_, args, plan.data<int64_t>(), groups,
                                                 nd.slice_size, gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  const ApplySignature& signature_;
  const ApplyFn fn_;
  const char* const flag_attr_;
  bool flag_ = false;
};

template <typename T, int kSlots>
void RegisterApply(const char* family, const ApplySignature& signature, ApplyFn fn,
                   const char* flag_attr) {
  static_assert(kSlots <= 2);
  for (const bool resource : {false, true}) {
    RegisterKernel(KernelDefBuilder(absl::StrCat(resource ? "ResourceApply" : "Apply", family))
                       .Device(kDeviceGpu)
                       .Capturable()
                       .TypeConstraint("T", DataTypeToEnum<T>::value),
                   [=, &signature] {
                     return std::make_unique<GpuApplyOp<T, kSlots>>(resource, signature, fn,
                                                                    flag_attr);
                   });
  }
}

template <typename T, int kSlots>
void RegisterSparseApply(const char* family, const ApplySignature& signature, ApplyFn fn,
                         const char* flag_attr) {
  for (const bool resource : {false, true}) {
    RegisterKernel(
        KernelDefBuilder(absl::StrCat(resource ? "ResourceSparseApply" : "SparseApply", family))
            .Device(kDeviceGpu)
            .Capturable()
            .TypeConstraint("T", DataTypeToEnum<T>::value)
            .HostMemory("indices"),
        [=, &signature] {
          return std::make_unique<GpuSparseApplyOp<T, kSlots>>(resource, signature, fn, flag_attr);
        });
  }
}

template <typename T>
void RegisterApplyForType() {
  RegisterApply<T, 0>("GradientDescent", kApplyGradientDescent, ApplyFn::kGradientDescent, "");
  RegisterApply<T, 1>("Momentum", kApplyMomentum, ApplyFn::kMomentum, "use_nesterov");
  RegisterApply<T, 2>("Adam", kApplyAdam, ApplyFn::kAdam, "use_nesterov");
  RegisterApply<T, 1>("Adagrad", kApplyAdagrad, ApplyFn::kAdagrad, "update_slots");
  RegisterApply<T, 2>("RMSProp", kApplyRmsProp, ApplyFn::kRmsProp, "");
  RegisterSparseApply<T, 1>("Momentum", kSparseApplyMomentum, ApplyFn::kMomentum, "use_nesterov");
  RegisterSparseApply<T, 1>("Adagrad", kSparseApplyAdagrad, ApplyFn::kAdagrad, "update_slots");
  RegisterSparseApply<T, 2>("RMSProp", kSparseApplyRmsProp, ApplyFn::kRmsProp, "");
}

// A variable's value copied into its own buffer on the compute stream
// (variable_ops.h, CopyIntoFn).
absl::Status GpuCopyInto(KernelContext* ctx, const Tensor& from, Tensor* to) {
  TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(to->raw_data(), from.raw_data(), from.TotalBytes(),
                                          cudaMemcpyDeviceToDevice, gpu->compute_stream()));
  return absl::OkStatus();
}

TW_REGISTER_KERNELS(gpu_training) {
  RegisterVariableKernels(kDeviceGpu, GpuCopyInto);
  RegisterAssignUpdateKernels(kDeviceGpu, DT_FLOAT, GpuAddInto<float>);
  RegisterAssignUpdateKernels(kDeviceGpu, DT_DOUBLE, GpuAddInto<double>);
  RegisterAssignUpdateKernels(kDeviceGpu, DT_INT64, GpuAddInto<int64_t>);
  RegisterApplyForType<float>();
  RegisterApplyForType<double>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
