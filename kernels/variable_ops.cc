// Variable kernels, the same on every device: resource variables (VarHandleOp, ReadVariableOp,
// Assign*VariableOp, VarIsInitializedOp, DestroyResourceOp) and TF1
// reference variables (VariableV2/Variable, Assign, AssignAdd, AssignSub,
// IsVariableInitialized), and the row scatters into either kind
// (Scatter*/ResourceScatter*). The arithmetic of AssignAdd/AssignSub and of
// the scatters is the device's own (AddIntoFn, ScatterFn). Both kinds keep their value in a `Var`
// in the device's ResourceMgr under (container, shared_name or node name).
//
// Note [Variable copy-on-write]
// A read shares the variable's buffer (no copy), so an update must never
// change a buffer someone else holds. Writers take the Var's lock, then
// update in place only when the Var holds the sole reference
// (RefCountIsOne); otherwise they compute into a new buffer and swap it in.
// Readers thus see either the old or the new value, never a torn one, and a
// value fetched by Session::Run stays what it was when read.
#include "kernels/variable_ops.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_types.h"
#include "kernels/kernel_util.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// var = value, under var->mu: into the variable's own buffer with
// `copy_into` when it has one, the value is in the device's memory, nobody
// else holds that buffer and the shapes agree; else the variable takes the
// value's buffer (Note [Variable copy-on-write]). (Host-memory values, a
// GPU's int32, are read by host kernels at once, not in stream order.)
absl::Status AssignLocked(KernelContext* ctx, CopyIntoFn copy_into, Var* var, const Tensor& value) {
  if (copy_into != nullptr && !AlwaysInHostMemory(value.dtype()) && var->initialized &&
      var->tensor.dtype() == value.dtype() && var->tensor.shape() == value.shape() &&
      var->tensor.RefCountIsOne() && var->tensor.raw_data() != value.raw_data()) {
    return copy_into(ctx, value, &var->tensor);
  }
  var->tensor = value;
  return absl::OkStatus();
}

absl::Status CheckDtype(const Var& var, DataType want, const char* what) {
  if (var.dtype() != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("Trying to ", what, " variable ", var.name(), " with wrong dtype. Expected ",
                     DataTypeString(var.dtype()), " got ", DataTypeString(want)));
  }
  return absl::OkStatus();
}

// var = var (+|-) delta through `add_into`, in place when `var` is the
// buffer's only holder. See Note [Variable copy-on-write].
absl::Status AddOrSub(KernelContext* ctx, AddIntoFn add_into, Var* var, const Tensor& delta,
                      bool add) {
  absl::MutexLock lock(&var->mu);
  if (!var->initialized) return UninitializedError(*var);
  if (var->tensor.shape() != delta.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot update variable with shape ", var->tensor.shape().DebugString(),
        " using a Tensor with shape ", delta.shape().DebugString(), ", shapes must be equal."));
  }
  if (var->tensor.RefCountIsOne()) return add_into(ctx, var->tensor, delta, add, &var->tensor);
  TW_ASSIGN_OR_RETURN(Tensor fresh, ctx->allocate_temp(var->dtype(), var->tensor.shape()));
  TW_RETURN_IF_ERROR(add_into(ctx, var->tensor, delta, add, &fresh));
  var->tensor = std::move(fresh);
  return absl::OkStatus();
}

// ---- Resource variables ----

class VarHandleOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    ResourceHandle h;
    TW_RETURN_IF_ERROR(ResourceName(c, &h.container, &h.name));
    h.device = c.device()->name();
    h.type_name = "Var";
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    *handle_.data<ResourceHandle>() = std::move(h);
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override { return ctx->set_output(0, handle_); }

 private:
  Tensor handle_;  // immutable after Init
};

class ReadVariableOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("dtype", &dtype_); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(*var, dtype_, "read"));
    absl::ReaderMutexLock lock(&var->mu);
    if (!var->initialized) return UninitializedError(*var);
    return ctx->set_output(0, var->tensor);
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class VariableShapeOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, 0));
    absl::ReaderMutexLock lock(&var->mu);
    if (!var->initialized) return UninitializedError(*var);
    const TensorShape& shape = var->tensor.shape();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({shape.dims()})));
    return WriteInts(std::vector<int64_t>(shape.dim_sizes().begin(), shape.dim_sizes().end()), out);
  }
};

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(CopyIntoFn copy_into) : copy_into_(copy_into) {}
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("dtype", &dtype_); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    const std::string name = h->name;
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var,
                        ctx->resource_manager()->LookupOrCreate<Var>(
                            h->container, h->name, [&]() -> absl::StatusOr<std::shared_ptr<Var>> {
                              return std::make_shared<Var>(dtype_, name);
                            }));
    TW_RETURN_IF_ERROR(CheckDtype(*var, dtype_, "assign"));
    absl::MutexLock lock(&var->mu);
    TW_RETURN_IF_ERROR(AssignLocked(ctx, copy_into_, var.get(), ctx->input(1)));
    var->initialized = true;
    return absl::OkStatus();
  }

 private:
  const CopyIntoFn copy_into_;
  DataType dtype_ = DT_INVALID;
};

class AssignUpdateVariableOp : public OpKernel {
 public:
  AssignUpdateVariableOp(DataType dtype, AddIntoFn add_into, bool add)
      : dtype_(dtype), add_into_(add_into), add_(add) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, 0));
    TW_RETURN_IF_ERROR(CheckDtype(*var, dtype_, "update"));
    return AddOrSub(ctx, add_into_, var.get(), ctx->input(1), add_);
  }

 private:
  const DataType dtype_;
  const AddIntoFn add_into_;
  const bool add_;
};

class VarIsInitializedOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    absl::StatusOr<std::shared_ptr<Var>> var =
        ctx->resource_manager()->Lookup<Var>(h->container, h->name);
    bool initialized = false;
    if (var.ok()) {
      absl::ReaderMutexLock lock(&(*var)->mu);
      initialized = (*var)->initialized;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<bool>() = initialized;
    return absl::OkStatus();
  }
};

// TF 2's savers switch a variable out of copy-on-read mode before reading it.
// Towerflow's variables have no such mode (a read shares the buffer until
// the next write, Note [Variable copy-on-write]): the variable must exist.
class DisableCopyOnReadOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    return ctx->resource_manager()->Lookup<Var>(h->container, h->name).status();
  }
};

class DestroyResourceOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("ignore_lookup_error", &ignore_lookup_error_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    absl::Status s = ctx->resource_manager()->Delete<Var>(h->container, h->name);
    if (absl::IsNotFound(s) && ignore_lookup_error_) return absl::OkStatus();
    return s;
  }

 private:
  bool ignore_lookup_error_ = true;
};

// ---- TF1 reference variables ----

class VariableOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    std::string container, name;
    TW_RETURN_IF_ERROR(ResourceName(c, &container, &name));
    DataType dtype;
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype));
    // The Var is made once and held here, so the ref this kernel hands out
    // stays valid for as long as the executor (and so the kernel) lives.
    TW_ASSIGN_OR_RETURN(var_, c.device()->resource_manager()->LookupOrCreate<Var>(
                                  container, name, [&]() -> absl::StatusOr<std::shared_ptr<Var>> {
                                    return std::make_shared<Var>(dtype, c.name());
                                  }));
    return CheckDtype(*var_, dtype, "declare");
  }
  absl::Status Compute(KernelContext* ctx) override {
    ctx->set_output_ref(0, var_.get());
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<Var> var_;
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(CopyIntoFn copy_into) : copy_into_(copy_into) {}
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("validate_shape", &validate_shape_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    Var* var = ctx->ref_input(0);
    const Tensor& value = ctx->input(1);
    {
      absl::MutexLock lock(&var->mu);
      if (validate_shape_ && var->initialized && var->tensor.shape() != value.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Assign requires shapes of both tensors to match. lhs shape= ",
            var->tensor.shape().DebugString(), " rhs shape= ", value.shape().DebugString()));
      }
      TW_RETURN_IF_ERROR(AssignLocked(ctx, copy_into_, var, value));
      var->initialized = true;
    }
    ctx->set_output_ref(0, var);
    return absl::OkStatus();
  }

 private:
  const CopyIntoFn copy_into_;
  bool validate_shape_ = true;
};

class AssignUpdateOp : public OpKernel {
 public:
  AssignUpdateOp(AddIntoFn add_into, bool add) : add_into_(add_into), add_(add) {}
  absl::Status Compute(KernelContext* ctx) override {
    Var* var = ctx->ref_input(0);
    TW_RETURN_IF_ERROR(AddOrSub(ctx, add_into_, var, ctx->input(1), add_));
    ctx->set_output_ref(0, var);
    return absl::OkStatus();
  }

 private:
  const AddIntoFn add_into_;
  const bool add_;
};

class IsVariableInitializedOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    Var* var = ctx->ref_input(0);
    bool initialized;
    {
      absl::ReaderMutexLock lock(&var->mu);
      initialized = var->initialized;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<bool>() = initialized;
    return absl::OkStatus();
  }
};

// ---- Row scatters, on both kinds ----

// ScatterAdd/Sub/Update(ref, indices, updates) and ResourceScatterAdd/Sub/
// Update(resource, indices, updates). Every index is checked before any
// row is written, so a bad index leaves the variable as it was (TF's CPU
// kernels may have written the rows before it). The lock is held whatever
// use_locking says, as the optimizer updates do (kernels/variable_util.h).
// ScatterNd<Mode>(ref, indices, updates) and ResourceScatterNd<Mode> (`nd`)
// address slices by N-d index rows instead.
class ScatterVarOp : public OpKernel {
 public:
  ScatterVarOp(bool resource, bool nd, ScatterMode mode, DataType dtype, ScatterFn scatter)
      : resource_(resource), nd_(nd), mode_(mode), dtype_(dtype), scatter_(scatter) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (nd_) {
      TW_ASSIGN_OR_RETURN(bad_indices_, BadIndicesOf(c));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    std::shared_ptr<Var> holder;
    TW_ASSIGN_OR_RETURN(Var * var, RefOrResourceVar(ctx, 0, resource_, &holder));
    TW_RETURN_IF_ERROR(CheckDtype(*var, dtype_, "scatter into"));
    {
      absl::MutexLock lock(&var->mu);
      if (!var->initialized) return UninitializedError(*var);
      TW_ASSIGN_OR_RETURN(const NdIndex nd, Resolve(ctx->input(1), ctx->input(2), var->tensor));
      if (nd.rows > 0 && nd.slice_size > 0) {
        if (!var->tensor.RefCountIsOne()) {  // see Note [Variable copy-on-write]
          TW_ASSIGN_OR_RETURN(var->tensor, CopyForWrite(ctx, var->tensor));
        }
        TW_RETURN_IF_ERROR(scatter_(ctx, mode_, nd, ctx->input(2), &var->tensor));
      }
    }
    if (!resource_) ctx->set_output_ref(0, var);
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<NdIndex> Resolve(const Tensor& indices, const Tensor& updates,
                                  const Tensor& var) const {
    if (!nd_) return ResolveScatter(indices, updates, var.shape());
    const absl::Span<const int64_t> dims = var.shape().dim_sizes();
    TW_ASSIGN_OR_RETURN(NdIndex nd, ResolveNd(indices, dims, "params", bad_indices_));
    TW_RETURN_IF_ERROR(CheckNdUpdates(nd, indices, updates, dims));
    return nd;
  }

  const bool resource_;
  const bool nd_;
  const ScatterMode mode_;
  const DataType dtype_;
  const ScatterFn scatter_;
  BadIndices bad_indices_ = BadIndices::kError;
};

// CountUpTo(ref) and ResourceCountUpTo(resource): the scalar's value, then
// the scalar incremented, until it reaches `limit` (OutOfRange: TF's input
// producers end an epoch so).
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(bool resource) : resource_(resource) {}
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("limit", &limit_); }
  absl::Status Compute(KernelContext* ctx) override {
    std::shared_ptr<Var> holder;
    TW_ASSIGN_OR_RETURN(Var * var, RefOrResourceVar(ctx, 0, resource_, &holder));
    absl::MutexLock lock(&var->mu);
    if (!var->initialized) return UninitializedError(*var);
    Tensor& t = var->tensor;
    if (t.dtype() != ctx->output_type(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Variable ", var->name(), " holds ", DataTypeString(t.dtype()),
                       " but CountUpTo ", "expects ", DataTypeString(ctx->output_type(0))));
    }
    if (t.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input is not a scalar: ", t.shape().DebugString()));
    }
    const int64_t before = IntAt(t, 0);
    if (before >= limit_) return absl::OutOfRangeError(absl::StrCat("Reached limit of ", limit_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    TW_RETURN_IF_ERROR(WriteInts({before}, out));
    if (!t.RefCountIsOne()) {  // see Note [Variable copy-on-write]
      TW_ASSIGN_OR_RETURN(t, CopyForWrite(ctx, t));
    }
    return WriteInts({before + 1}, &t);
  }

 private:
  const bool resource_;
  int64_t limit_ = 0;
};

}  // namespace

absl::Status UninitializedError(const Var& var) {
  return absl::FailedPreconditionError(
      absl::StrCat("Attempting to use uninitialized value ", var.name()));
}

absl::StatusOr<Var*> RefOrResourceVar(KernelContext* ctx, int input, bool resource,
                                      std::shared_ptr<Var>* holder) {
  if (!resource) return ctx->ref_input(input);
  TW_ASSIGN_OR_RETURN(*holder, LookupResourceVar(ctx, input));
  return holder->get();
}

absl::StatusOr<Tensor> ReadResourceValue(KernelContext* ctx, int input, DataType dtype,
                                         const char* op) {
  TW_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, LookupResourceVar(ctx, input));
  absl::ReaderMutexLock lock(&var->mu);
  if (!var->initialized) return UninitializedError(*var);
  if (var->tensor.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Variable ", var->name(), " holds ",
                                                   DataTypeString(var->tensor.dtype()), " but ", op,
                                                   " expects ", DataTypeString(dtype)));
  }
  return var->tensor;
}

absl::StatusOr<const ResourceHandle*> ResourceHandleInput(KernelContext* ctx, int input) {
  const Tensor& t = ctx->input(input);
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("resource handle input must be a scalar, got ", t.shape().DebugString()));
  }
  const ResourceHandle* h = t.data<ResourceHandle>();
  if (h->device != ctx->device()->name()) {
    return absl::InvalidArgumentError(absl::StrCat("Resource ", h->DebugString(), " lives on ",
                                                   h->device, " but '", ctx->name(), "' runs on ",
                                                   ctx->device()->name()));
  }
  return h;
}

void RegisterVariableKernels(const std::string& device_type, CopyIntoFn copy_into) {
  const auto on = [&](const char* op) { return KernelDefBuilder(op).Device(device_type); };
  // Capturable (KernelDef::capturable): they look a variable up or move a
  // buffer in or out of it. A replayed step checks that every variable
  // keeps its buffer (runtime/step_replay.cc, Note [Replayed steps]), so an
  // Assign that swaps one in (no `copy_into`, or another shape) is found
  // there.
  RegisterKernel(on("VarHandleOp").Capturable(), MakeFactory<VarHandleOp>());
  RegisterKernel(on("ReadVariableOp").Capturable(), MakeFactory<ReadVariableOp>());
  RegisterKernel(on("AssignVariableOp").Capturable(),
                 [copy_into] { return std::make_unique<AssignVariableOp>(copy_into); });
  RegisterKernel(on("DisableCopyOnRead"), MakeFactory<DisableCopyOnReadOp>());
  RegisterKernel(on("VariableShape").HostMemory("output"), MakeFactory<VariableShapeOp>());
  RegisterKernel(on("VarIsInitializedOp").HostMemory("is_initialized"),
                 MakeFactory<VarIsInitializedOp>());
  RegisterKernel(on("DestroyResourceOp"), MakeFactory<DestroyResourceOp>());
  RegisterKernel(on("VariableV2").Capturable(), MakeFactory<VariableOp>());
  RegisterKernel(on("Variable").Capturable(), MakeFactory<VariableOp>());
  RegisterKernel(on("Assign").Capturable(),
                 [copy_into] { return std::make_unique<AssignOp>(copy_into); });
  RegisterKernel(on("IsVariableInitialized").HostMemory("is_initialized"),
                 MakeFactory<IsVariableInitializedOp>());
}

void RegisterAssignUpdateKernels(const std::string& device_type, DataType dtype,
                                 AddIntoFn add_into) {
  for (const bool add : {true, false}) {
    // Capturable: the update is the device's arithmetic (`add_into`, which
    // enqueues on a device with a stream).
    RegisterKernel(KernelDefBuilder(add ? "AssignAdd" : "AssignSub")
                       .Device(device_type)
                       .TypeConstraint("T", dtype)
                       .Capturable(),
                   [=] { return std::make_unique<AssignUpdateOp>(add_into, add); });
    RegisterKernel(KernelDefBuilder(add ? "AssignAddVariableOp" : "AssignSubVariableOp")
                       .Device(device_type)
                       .TypeConstraint("dtype", dtype)
                       .Capturable(),
                   [=] { return std::make_unique<AssignUpdateVariableOp>(dtype, add_into, add); });
  }
}

void RegisterScatterKernels(const std::string& device_type, DataType dtype, bool update,
                            ScatterFn scatter) {
  RegisterScatterVarKernels(device_type, dtype,
                            update ? std::vector<ScatterMode>{ScatterMode::kUpdate}
                                   : std::vector<ScatterMode>{ScatterMode::kAdd, ScatterMode::kSub},
                            /*nd=*/false, scatter);
}

void RegisterScatterVarKernels(const std::string& device_type, DataType dtype,
                               const std::vector<ScatterMode>& modes, bool nd, ScatterFn scatter) {
  for (const ScatterMode mode : modes) {
    // The op name's suffix, in ScatterMode's order.
    static constexpr const char* kNames[] = {"Add", "Sub", "Update", "Mul", "Div", "Max", "Min"};
    const char* name = kNames[static_cast<int>(mode)];
    for (const bool resource : {false, true}) {
      RegisterKernel(
          KernelDefBuilder(
              absl::StrCat(resource ? "ResourceScatter" : "Scatter", nd ? "Nd" : "", name))
              .Device(device_type)
              .TypeConstraint(resource && !nd ? "dtype" : "T", dtype)
              .HostMemory("indices")
              .Capturable(),
          [=] { return std::make_unique<ScatterVarOp>(resource, nd, mode, dtype, scatter); });
    }
  }
}

TW_REGISTER_KERNELS(variables) {
  RegisterVariableKernels(kDeviceCpu);
  RegisterKernel(KernelDefBuilder("CountUpTo").Device(kDeviceCpu),
                 [] { return std::make_unique<CountUpToOp>(false); });
  RegisterKernel(KernelDefBuilder("ResourceCountUpTo").Device(kDeviceCpu),
                 [] { return std::make_unique<CountUpToOp>(true); });
}

absl::StatusOr<Tensor> CopyForWrite(KernelContext* ctx, const Tensor& value) {
  Device* device = ctx->device();
  if (device->has_device_memory()) return device->CopyToDevice(value, device);
  return value.DeepCopy(device->allocator());
}

LockedVars::~LockedVars() {
  for (Var* v : locked_) v->mu.Unlock();
}

absl::Status LockedVars::Acquire(KernelContext* ctx, int count, bool resource) {
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

absl::StatusOr<Tensor*> LockedVars::Mutable(KernelContext* ctx, int i, DataType dtype,
                                            const TensorShape& shape, const char* against)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {  // the lock was taken in Acquire
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
    return absl::InvalidArgumentError(absl::StrCat(
        i == 0 ? "var" : "slot", " ", v->name(), " has shape ", v->tensor.shape().DebugString(),
        " but ", against, " has shape ", shape.DebugString()));
  }
  if (!v->tensor.RefCountIsOne()) {
    TW_ASSIGN_OR_RETURN(v->tensor, CopyForWrite(ctx, v->tensor));
  }
  return &v->tensor;
}

absl::Status CheckApplyScalars(KernelContext* ctx, const ApplySignature& signature) {
  for (const auto& [index, name] : signature.scalars) {
    const Tensor& s = ctx->input(index);
    if (s.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar, got shape ",
                                                     s.shape().DebugString(), " in '", ctx->name(),
                                                     "' (", ctx->op(), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status ResourceName(const KernelConstruction& c, std::string* container, std::string* name) {
  TW_RETURN_IF_ERROR(c.GetAttr("container", container));
  TW_RETURN_IF_ERROR(c.GetAttr("shared_name", name));
  if (container->empty()) *container = kDefaultContainer;
  if (name->empty()) *name = c.name();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Var>> LookupResourceVar(KernelContext* ctx, int input) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, input));
  absl::StatusOr<std::shared_ptr<Var>> var =
      ctx->resource_manager()->Lookup<Var>(h->container, h->name);
  if (absl::IsNotFound(var.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Error while reading resource variable ", h->name, " from Container: ", h->container,
        ". This could mean that the variable was uninitialized. ", var.status().message()));
  }
  return var;
}

}  // namespace towerflow
