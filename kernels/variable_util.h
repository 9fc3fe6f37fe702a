// Variable access shared by every device's kernels that read or update a
// variable: handle lookup, copy-on-write, and the locking every optimizer
// update (Apply*, ResourceApply*) does. The variable kernels themselves
// (kernels/variable_ops.h) are device-agnostic; the arithmetic of AssignAdd
// and the Apply* updates is each device's own.
#ifndef TOWERFLOW_KERNELS_VARIABLE_UTIL_H_
#define TOWERFLOW_KERNELS_VARIABLE_UTIL_H_

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/resource_mgr.h"
#include "kernels/nd_index.h"

namespace towerflow {

// The handle in input `input`: a one-element DT_RESOURCE tensor naming a
// resource on this kernel's device; InvalidArgument otherwise.
absl::StatusOr<const ResourceHandle*> ResourceHandleInput(KernelContext* ctx, int input);

// The (container, name) of a resource op from its `container` and
// `shared_name` attrs, with TF's defaults: "localhost" and the node name.
absl::Status ResourceName(const KernelConstruction& c, std::string* container, std::string* name);

// The variable behind handle input `input`; FailedPrecondition when it does
// not exist (never assigned), which is how an uninitialised resource
// variable reads.
absl::StatusOr<std::shared_ptr<Var>> LookupResourceVar(KernelContext* ctx, int input);

// The variable of input `input` of an op with a ref form and a resource
// form: the ref's (`resource` false), or the one behind the handle, which
// `*holder` keeps alive.
absl::StatusOr<Var*> RefOrResourceVar(KernelContext* ctx, int input, bool resource,
                                      std::shared_ptr<Var>* holder);

// FailedPrecondition, as TF's message for reading an unassigned variable.
absl::Status UninitializedError(const Var& var);

// The value of the resource variable behind handle input `input`, shared
// (not copied): FailedPrecondition when it is uninitialised, InvalidArgument
// when it does not hold `dtype` (naming `op`, the reader).
absl::StatusOr<Tensor> ReadResourceValue(KernelContext* ctx, int input, DataType dtype,
                                         const char* op);

// A copy of `value` with a buffer of its own in the same memory of the
// kernel's device: a host copy on CPUs, a device-to-device copy (ordered on
// the device's stream) on a device with memory of its own.
// REQUIRES: on such a device, `value` is in device memory.
absl::StatusOr<Tensor> CopyForWrite(KernelContext* ctx, const Tensor& value);

// The variables an update touches, locked for the update's duration (in
// address order, so two updates never deadlock).
class LockedVars {
 public:
  LockedVars() = default;
  LockedVars(const LockedVars&) = delete;
  LockedVars& operator=(const LockedVars&) = delete;
  ~LockedVars();

  // Inputs 0..count-1: ref inputs, or resource handles when `resource`.
  absl::Status Acquire(KernelContext* ctx, int count, bool resource);

  // Variable i's tensor, checked initialised, of `dtype` and `shape`, with a
  // buffer of its own (copied first when a reader shares it: Note [Variable
  // copy-on-write] in variable_ops.cc).
  // `against` names what `shape` is in the message when they differ.
  absl::StatusOr<Tensor*> Mutable(KernelContext* ctx, int i, DataType dtype,
                                  const TensorShape& shape, const char* against = "grad");

  Var* var(int i) const { return vars_[i]; }
  // Variable i's shape now (that of an empty tensor while uninitialised).
  TensorShape shape(int i) const ABSL_NO_THREAD_SAFETY_ANALYSIS {  // locked in Acquire
    return vars_[i]->tensor.shape();
  }

 private:
  std::vector<Var*> vars_;
  std::vector<std::shared_ptr<Var>> holders_;
  std::vector<Var*> locked_;
};

// Where an optimizer update's inputs are: variables 0..slots (var, then its
// slots), the scalar hyperparameters (index and name), grad, and for a
// sparse update (SparseApplyX) the indices of grad's rows. TF's signatures
// (../shared/reference/OP_FACTS.md), the same on every device.
struct ApplySignature {
  int slots;
  std::vector<std::pair<int, const char*>> scalars;
  int grad;
  int indices = -1;
};
inline const ApplySignature kApplyGradientDescent{0, {{1, "alpha"}}, 2};
inline const ApplySignature kApplyMomentum{1, {{2, "lr"}, {4, "momentum"}}, 3};
inline const ApplySignature kApplyAdam{
    2,
    {{3, "beta1_power"}, {4, "beta2_power"}, {5, "lr"}, {6, "beta1"}, {7, "beta2"}, {8, "epsilon"}},
    9};
inline const ApplySignature kApplyAdagrad{1, {{2, "lr"}}, 3};
inline const ApplySignature kApplyRmsProp{
    2, {{3, "lr"}, {4, "rho"}, {5, "momentum"}, {6, "epsilon"}}, 7};
inline const ApplySignature kSparseApplyMomentum{1, {{2, "lr"}, {5, "momentum"}}, 3, 4};
inline const ApplySignature kSparseApplyAdagrad{1, {{2, "lr"}}, 3, 4};
inline const ApplySignature kSparseApplyRmsProp{
    2, {{3, "lr"}, {4, "rho"}, {5, "momentum"}, {6, "epsilon"}}, 7, 8};
inline const ApplySignature kApplyAdagradV2{1, {{2, "lr"}, {3, "epsilon"}}, 4};
inline const ApplySignature kSparseApplyAdagradV2{1, {{2, "lr"}, {3, "epsilon"}}, 4, 5};
inline const ApplySignature kApplyAdadelta{2, {{3, "lr"}, {4, "rho"}, {5, "epsilon"}}, 6};
inline const ApplySignature kApplyAdaMax{
    2, {{3, "beta1_power"}, {4, "lr"}, {5, "beta1"}, {6, "beta2"}, {7, "epsilon"}}, 8};
inline const ApplySignature kApplyCenteredRmsProp{
    3, {{4, "lr"}, {5, "rho"}, {6, "momentum"}, {7, "epsilon"}}, 8};
inline const ApplySignature kApplyAdamWithAmsgrad{
    3,
    {{4, "beta1_power"}, {5, "beta2_power"}, {6, "lr"}, {7, "beta1"}, {8, "beta2"}, {9, "epsilon"}},
    10};
inline const ApplySignature kApplyFtrl{2, {{4, "lr"}, {5, "l1"}, {6, "l2"}, {7, "lr_power"}}, 3};
inline const ApplySignature kApplyFtrlV2{
    2, {{4, "lr"}, {5, "l1"}, {6, "l2"}, {7, "l2_shrinkage"}, {8, "lr_power"}}, 3};
inline const ApplySignature kSparseApplyFtrl{
    2, {{5, "lr"}, {6, "l1"}, {7, "l2"}, {8, "lr_power"}}, 3, 4};
inline const ApplySignature kSparseApplyFtrlV2{
    2, {{5, "lr"}, {6, "l1"}, {7, "l2"}, {8, "l2_shrinkage"}, {9, "lr_power"}}, 3, 4};
inline const ApplySignature kApplyProximalGradientDescent{
    0, {{1, "alpha"}, {2, "l1"}, {3, "l2"}}, 4};
inline const ApplySignature kSparseApplyProximalGradientDescent{
    0, {{1, "alpha"}, {2, "l1"}, {3, "l2"}}, 4, 5};
inline const ApplySignature kApplyProximalAdagrad{1, {{2, "lr"}, {3, "l1"}, {4, "l2"}}, 5};
inline const ApplySignature kSparseApplyProximalAdagrad{1, {{2, "lr"}, {3, "l1"}, {4, "l2"}}, 5, 6};
inline const ApplySignature kApplyAddSign{
    1, {{2, "lr"}, {3, "alpha"}, {4, "sign_decay"}, {5, "beta"}}, 6};
inline const ApplySignature kApplyPowerSign{
    1, {{2, "lr"}, {3, "logbase"}, {4, "sign_decay"}, {5, "beta"}}, 6};
// global_step is an int64 scalar.
inline const ApplySignature kApplyAdagradDA{
    2, {{4, "lr"}, {5, "l1"}, {6, "l2"}, {7, "global_step"}}, 3};
inline const ApplySignature kSparseApplyAdagradDA{
    2, {{5, "lr"}, {6, "l1"}, {7, "l2"}, {8, "global_step"}}, 3, 4};
inline const ApplySignature kSparseApplyAdadelta{2, {{3, "lr"}, {4, "rho"}, {5, "epsilon"}}, 6, 7};
inline const ApplySignature kSparseApplyCenteredRmsProp{
    3, {{4, "lr"}, {5, "rho"}, {6, "momentum"}, {7, "epsilon"}}, 8, 9};

// InvalidArgument unless each of the signature's scalars is a scalar.
absl::Status CheckApplyScalars(KernelContext* ctx, const ApplySignature& signature);

// The base of the optimizer updates (ApplyX on ref variables, ResourceApplyX
// on handles) of every device. Each update holds the locks of all its
// variables whatever use_locking says: TF's lock-free mode trades
// correctness for speed on many-core parameter servers, which is not this
// library's setting.
template <typename T, int kSlots>
class ApplyOpBase : public OpKernel {
 public:
  ApplyOpBase(bool resource, const ApplySignature& signature)
      : resource_(resource), signature_(signature) {}

  absl::Status Compute(KernelContext* ctx) override {
    static_assert(kSlots >= 0);
    LockedVars vars;
    TW_RETURN_IF_ERROR(vars.Acquire(ctx, 1 + kSlots, resource_));
    const Tensor& grad = ctx->input(signature_.grad);
    Vars t;
    for (int i = 0; i <= kSlots; ++i) {
      TW_ASSIGN_OR_RETURN(t[i], vars.Mutable(ctx, i, DataTypeToEnum<T>::value, grad.shape()));
    }
    TW_RETURN_IF_ERROR(CheckApplyScalars(ctx, signature_));
    if (grad.NumElements() > 0) TW_RETURN_IF_ERROR(Update(ctx, t, grad));
    if (!resource_) ctx->set_output_ref(0, vars.var(0));
    return absl::OkStatus();
  }

 protected:
  using Vars = std::array<Tensor*, 1 + kSlots>;
  // REQUIRES: grad has elements; every t[i] has grad's shape; the
  // signature's scalars are scalars.
  virtual absl::Status Update(KernelContext* ctx, const Vars& t, const Tensor& grad) = 0;

 private:
  const bool resource_;
  const ApplySignature& signature_;
};

// The base of the sparse optimizer updates (SparseApplyX on ref variables,
// ResourceSparseApplyX on handles) of every device: grad's row i updates
// the variable's (and its slots') row indices[i], in index order, so a
// duplicate index updates its row twice, as in TF. Locking as ApplyOpBase.
template <typename T, int kSlots>
class SparseApplyOpBase : public OpKernel {
 public:
  SparseApplyOpBase(bool resource, const ApplySignature& signature)
      : resource_(resource), signature_(signature) {}

  absl::Status Compute(KernelContext* ctx) override {
    static_assert(kSlots >= 0);
    LockedVars vars;
    TW_RETURN_IF_ERROR(vars.Acquire(ctx, 1 + kSlots, resource_));
    Vars t;
    const DataType dtype = DataTypeToEnum<T>::value;
    const TensorShape shape = vars.shape(0);
    for (int i = 0; i <= kSlots; ++i) {
      TW_ASSIGN_OR_RETURN(t[i], vars.Mutable(ctx, i, dtype, shape, "var"));
    }
    TW_RETURN_IF_ERROR(CheckApplyScalars(ctx, signature_));
    const Tensor& grad = ctx->input(signature_.grad);
    TW_ASSIGN_OR_RETURN(const NdIndex nd,
                        ResolveSparseApply(ctx->input(signature_.indices), grad, t[0]->shape()));
    if (nd.rows > 0 && nd.slice_size > 0) TW_RETURN_IF_ERROR(Update(ctx, t, grad, nd));
    if (!resource_) ctx->set_output_ref(0, vars.var(0));
    return absl::OkStatus();
  }

 protected:
  using Vars = std::array<Tensor*, 1 + kSlots>;
  // REQUIRES: grad has nd.rows rows of nd.slice_size elements, each index
  // of nd is a row of var, every t[i] has var's shape; the signature's
  // scalars are scalars.
  virtual absl::Status Update(KernelContext* ctx, const Vars& t, const Tensor& grad,
                              const NdIndex& nd) = 0;

 private:
  const bool resource_;
  const ApplySignature& signature_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_VARIABLE_UTIL_H_