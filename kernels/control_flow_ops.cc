// The kernels of TensorFlow 1.x's control-flow ops, on every device type.
//
// They only move values: which output a Switch fills, which input a Merge
// forwards. Deadness, frames and iterations are the executor's part
// (runtime/executor.cc, Note [Control flow]): a Switch leaves its untaken
// output unset, which the executor reads as dead, and a Merge runs once its
// first live input has arrived, so exactly one of its inputs is present.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/basic_ops.h"

namespace towerflow {
namespace {

class CheapKernel : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
};

// Sets output `out` to input `in`, as a ref when the input is one.
absl::Status Forward(KernelContext* ctx, int in, int out) {
  if (Var* var = ctx->ref_input(in)) {
    ctx->set_output_ref(out, var);
    return absl::OkStatus();
  }
  return ctx->set_output(out, ctx->input(in));
}

absl::StatusOr<bool> ScalarPredicate(const KernelContext& ctx, int i, const char* what) {
  const Tensor& pred = ctx.input(i);
  if (pred.dtype() != DT_BOOL || pred.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a scalar bool, but it is a ",
                                                   DataTypeString(pred.dtype()), " of shape ",
                                                   pred.shape().DebugString()));
  }
  return pred.scalar<bool>()();
}

// Switch / RefSwitch: data to output_true (1) when pred, else output_false.
class SwitchOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(bool pred, ScalarPredicate(*ctx, 1, "Switch's pred"));
    return Forward(ctx, 0, pred ? 1 : 0);
  }
};

// Merge / RefMerge: the input that arrived, and its index.
class MergeOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->has_input(i)) continue;
      TW_RETURN_IF_ERROR(Forward(ctx, i, 0));
      TW_ASSIGN_OR_RETURN(Tensor * index, ctx->allocate_output(1, TensorShape()));
      index->scalar<int32_t>()() = i;
      return absl::OkStatus();
    }
    return absl::InternalError("Merge ran with none of its inputs");
  }
};

// Enter, Exit, NextIteration and their Ref forms: the executor moves the
// value between frames and iterations; the kernel passes it on.
class ForwardOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override { return Forward(ctx, 0, 0); }
};

class LoopCondOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_RETURN_IF_ERROR(ScalarPredicate(*ctx, 0, "LoopCond's input").status());
    return ctx->set_output(0, ctx->input(0));
  }
};

// ToBool, the predicate of a lowered If or While (graph/lower_functions.h):
// a scalar is true when it is non-zero or a non-empty string, a tensor of
// any other rank when it has elements.
class ToBoolOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    bool truth = false;
    if (in.dims() > 0) {
      truth = in.NumElements() > 0;
    } else if (in.dtype() == DT_STRING) {
      truth = !in.scalar<std::string>()().empty();
    } else if (!VisitNumberType(in.dtype(), [&](auto zero) {
                 using T = decltype(zero);
                 truth = in.scalar<T>()() != zero;
               })) {
      return absl::InvalidArgumentError(
          absl::StrCat("ToBool takes numbers and strings, not ", DataTypeString(in.dtype())));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>()() = truth;
    return absl::OkStatus();
  }
};

// DeviceIndex: where the type of the device the node runs on stands in
// device_names, or their count when it is not there (TF's
// execute_fn_for_device picks a Case branch with it).
class DeviceIndexOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("device_names", &names_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto it = std::find(names_.begin(), names_.end(), ctx->device()->device_type());
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int32_t>()() = static_cast<int32_t>(it - names_.begin());
    return absl::OkStatus();
  }

 private:
  std::vector<std::string> names_;
};

class ControlTriggerOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext*) override { return absl::OkStatus(); }
};

}  // namespace

void RegisterControlFlowKernels(const std::string& device_type) {
  const auto on = [&](const char* op) { return KernelDefBuilder(op).Device(device_type); };
  for (const char* op : {"Switch", "RefSwitch"}) {
    RegisterKernel(on(op).HostMemory("pred"), MakeFactory<SwitchOp>());
  }
  for (const char* op : {"Merge", "RefMerge"}) {
    RegisterKernel(on(op).HostMemory("value_index"), MakeFactory<MergeOp>());
  }
  for (const char* op :
       {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"}) {
    RegisterKernel(on(op), MakeFactory<ForwardOp>());
  }
  RegisterKernel(on("LoopCond").HostMemory("input").HostMemory("output"),
                 MakeFactory<LoopCondOp>());
  RegisterKernel(on("ToBool").HostMemory("input").HostMemory("output"), MakeFactory<ToBoolOp>());
  RegisterKernel(on("ControlTrigger"), MakeFactory<ControlTriggerOp>());
  RegisterKernel(on("DeviceIndex").HostMemory("index"), MakeFactory<DeviceIndexOp>());
  RegisterStackKernels(device_type);
}

}  // namespace towerflow
