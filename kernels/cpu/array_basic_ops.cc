// The kernels the runtime itself needs to move values around: Const,
// Identity and its relatives, Placeholder, NoOp, and the _Arg/_Retval pair
// through which Session::Run feeds and fetches tensors.
//
// All of them are cheap: they share buffers and never touch elements, so the
// executor runs them inline.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "runtime/device.h"

namespace towerflow {
namespace {

class CheapKernel : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
};

// Const: the `value` attr, decoded once; every step shares its buffer.
class ConstOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    auto it = c.def().attr().find("value");
    if (it == c.def().attr().end() || !it->second.has_tensor()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Const '", c.name(), "' has no tensor attr 'value'"));
    }
    const TensorProto& proto = it->second.tensor();
    DataType dtype;
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype));
    if (proto.dtype() != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("Const '", c.name(), "' has dtype ",
                                                     DataTypeString(dtype), " but its value is ",
                                                     DataTypeString(proto.dtype())));
    }
    absl::StatusOr<Tensor> t = Tensor::FromProto(proto, c.device()->allocator());
    if (!t.ok())
      return AddErrorContext(t.status(), absl::StrCat("value of Const '", c.name(), "'"));
    value_ = *std::move(t);
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override { return ctx->set_output(0, value_); }

 private:
  Tensor value_;  // immutable after Init
};

// Identity, StopGradient, PreventGradient, Snapshot-free passes: output 0 is
// input 0. A ref input arrives already read (see Executor), so this is also
// how TF1 graphs read variables (`w/read`).
class IdentityOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override { return ctx->set_output(0, ctx->input(0)); }
};

class IdentityNOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      TW_RETURN_IF_ERROR(ctx->set_output(i, ctx->input(i)));
    }
    return absl::OkStatus();
  }
};

// Placeholder runs only when it is not fed (a fed tensor replaces it).
class PlaceholderOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    DataType dtype;
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype));
    PartialTensorShape shape;
    TW_RETURN_IF_ERROR(c.GetAttr("shape", &shape));
    message_ = absl::StrCat("You must feed a value for placeholder tensor '", c.name(),
                            "' with dtype ", DataTypeString(dtype));
    if (!shape.unknown_rank()) absl::StrAppend(&message_, " and shape ", shape.DebugString());
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext*) override { return absl::InvalidArgumentError(message_); }

 private:
  std::string message_;
};

class NoOp : public CheapKernel {
 public:
  absl::Status Compute(KernelContext*) override { return absl::OkStatus(); }
};

// _Arg: feed `index` of the step's call frame.
class ArgOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("index", &index_); }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->call_frame() == nullptr) {
      return absl::InternalError("_Arg run without a call frame");
    }
    TW_ASSIGN_OR_RETURN(Tensor value, ctx->call_frame()->GetArg(index_));
    return ctx->set_output(0, std::move(value));
  }

 private:
  int64_t index_ = 0;
};

// _Retval: stores fetch `index` in the step's call frame.
class RetvalOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("index", &index_); }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->call_frame() == nullptr) {
      return absl::InternalError("_Retval run without a call frame");
    }
    return ctx->call_frame()->SetRetval(static_cast<int>(index_), ctx->input(0));
  }

 private:
  int64_t index_ = 0;
};

TW_REGISTER_KERNELS(array_basic) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("Const"), MakeFactory<ConstOp>());
  for (const char* op :
       {"Identity", "StopGradient", "PreventGradient", "Snapshot", "PlaceholderWithDefault"}) {
    RegisterKernel(cpu(op), MakeFactory<IdentityOp>());
  }
  RegisterKernel(cpu("IdentityN"), MakeFactory<IdentityNOp>());
  RegisterKernel(cpu("Placeholder"), MakeFactory<PlaceholderOp>());
  RegisterKernel(cpu("NoOp"), MakeFactory<NoOp>());
  RegisterKernel(cpu("_Arg"), MakeFactory<ArgOp>());
  RegisterKernel(cpu("_Retval"), MakeFactory<RetvalOp>());
}

}  // namespace
}  // namespace towerflow
