// The kernels the runtime itself needs to move values around, on every
// device type: Const and HostConst, Identity and its relatives, Placeholder,
// NoOp, the _Arg/_Retval pair through which Session::Run feeds and fetches
// tensors (and _DeviceArg/_DeviceRetval, a replayed step's), and the
// _Send/_Recv pair the partitioner puts on cut edges.
//
// None of them touches elements: they share buffers, and on a device with
// memory of its own they move values with the device's copies
// (TransferTensor) — a feed into device memory, a fetch out of it, a Const's
// value once at Init, a _Recv's value when the two ends' memories differ.
// All are cheap, so the executor runs them inline.
#include "kernels/basic_ops.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_limits.h"
#include "framework/memory_types.h"

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
    // A splat of one value may describe any number of elements: the size is
    // checked against the session's limits before it is allocated.
    absl::Status fits = CheckTensorProtoBytes(proto, c.device()->memory_limits());
    if (!fits.ok()) return AddErrorContext(fits, absl::StrCat("value of Const '", c.name(), "'"));
    absl::StatusOr<Tensor> t = Tensor::FromProto(proto);
    if (!t.ok())
      return AddErrorContext(t.status(), absl::StrCat("value of Const '", c.name(), "'"));
    MemoryTypeVector out;
    TW_RETURN_IF_ERROR(MemoryTypesForNode(*c.device(), c.def(), c.op_def(), nullptr, &out));
    TW_ASSIGN_OR_RETURN(value_,
                        TransferTensor(*t, nullptr, true, c.device(), out[0] == MemoryType::kHost));
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
    TW_ASSIGN_OR_RETURN(
        value, TransferTensor(value, nullptr, true, ctx->device(), ctx->output_on_host(0)));
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
    TW_ASSIGN_OR_RETURN(Tensor value, TransferTensor(ctx->input(0), ctx->device(),
                                                     ctx->input_on_host(0), nullptr, true));
    return ctx->call_frame()->SetRetval(static_cast<int>(index_), value);
  }

 private:
  int64_t index_ = 0;
};

// _DeviceArg / _DeviceRetval: a replayed step's feed and fetch
// (runtime/step_replay.h). The call frame holds the value in the memory the
// node's output or input uses, so nothing is copied: the replay copies the
// feed into its slot before the recorded work runs and the fetch out after.
class DeviceArgOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("index", &index_); }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->call_frame() == nullptr) {
      return absl::InternalError("_DeviceArg run without a call frame");
    }
    TW_ASSIGN_OR_RETURN(Tensor value, ctx->call_frame()->GetArg(index_));
    return ctx->set_output(0, std::move(value));
  }

 private:
  int64_t index_ = 0;
};

class DeviceRetvalOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("index", &index_); }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->call_frame() == nullptr) {
      return absl::InternalError("_DeviceRetval run without a call frame");
    }
    return ctx->call_frame()->SetRetval(static_cast<int>(index_), ctx->input(0));
  }

 private:
  int64_t index_ = 0;
};

// _AssertShape: the input's shape is the one a replayed step folded into a
// constant; it reads the shape alone (host work, never the elements).
class AssertShapeOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    PartialTensorShape shape;
    TW_RETURN_IF_ERROR(c.GetAttr("shape", &shape));
    TW_ASSIGN_OR_RETURN(expected_, shape.AsTensorShape());
    // The checked tensor's name, for the message (the specializer sets it).
    auto tensor = c.def().attr().find("_tensor");
    input_ = tensor != c.def().attr().end() ? tensor->second.s() : "its input";
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->input(0).shape() == expected_) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("build-time shape inference gave ", expected_.DebugString(), " for '", input_,
                     "', but the step computes ", ctx->input(0).shape().DebugString()));
  }

 private:
  TensorShape expected_;
  std::string input_;
};

absl::StatusOr<std::string> RendezvousKey(const KernelConstruction& c) {
  std::string tensor_name, send_device, recv_device;
  int64_t incarnation = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("tensor_name", &tensor_name));
  TW_RETURN_IF_ERROR(c.GetAttr("send_device", &send_device));
  TW_RETURN_IF_ERROR(c.GetAttr("send_device_incarnation", &incarnation));
  TW_RETURN_IF_ERROR(c.GetAttr("recv_device", &recv_device));
  return Rendezvous::CreateKey(send_device, incarnation, recv_device, tensor_name);
}

// _Send / _HostSend: hands input 0 to the rendezvous with where it lives.
class SendOp : public CheapKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(key_, RendezvousKey(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->rendezvous() == nullptr) return absl::InternalError("_Send run without a rendezvous");
    // A dead input is sent as dead, so the receiving side is dead too.
    const bool dead = ctx->is_input_dead();
    return ctx->rendezvous()->Send(key_, dead ? Tensor() : ctx->input(0),
                                   Rendezvous::Origin{ctx->device(), ctx->input_on_host(0), dead});
  }

 private:
  std::string key_;
};

// _Recv / _HostRecv: waits for the value without blocking a thread, then
// copies it when it lives in another memory than this output's.
class RecvOp : public AsyncOpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(key_, RendezvousKey(c));
    return absl::OkStatus();
  }
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      done(absl::InternalError("_Recv run without a rendezvous"));
      return;
    }
    ctx->rendezvous()->RecvAsync(
        key_, [ctx, done = std::move(done)](const absl::Status& s, const Tensor& value,
                                            const Rendezvous::Origin& origin) {
          if (!s.ok() || origin.is_dead) {
            done(s);  // a dead value leaves the output unset: dead
            return;
          }
          absl::StatusOr<Tensor> moved = TransferTensor(value, origin.device, origin.on_host,
                                                        ctx->device(), ctx->output_on_host(0));
          done(moved.ok() ? ctx->set_output(0, *std::move(moved)) : moved.status());
        });
  }

 private:
  std::string key_;
};

}  // namespace

void RegisterBasicKernels(const std::string& device_type) {
  const auto on = [&](const char* op) { return KernelDefBuilder(op).Device(device_type); };
  // Capturable (KernelDef::capturable): they pass buffers on, and a Const's
  // value is copied to the device once, when its kernel is made.
  RegisterKernel(on("Const").Capturable(), MakeFactory<ConstOp>());
  RegisterKernel(on("HostConst").HostMemory("output").Capturable(), MakeFactory<ConstOp>());
  for (const char* op :
       {"Identity", "StopGradient", "PreventGradient", "Snapshot", "PlaceholderWithDefault",
        "GuaranteeConst", "RefIdentity", "DebugGradientIdentity", "DebugGradientRefIdentity"}) {
    RegisterKernel(on(op).Capturable(), MakeFactory<IdentityOp>());
  }
  RegisterKernel(on("IdentityN").Capturable(), MakeFactory<IdentityNOp>());
  RegisterKernel(on("Placeholder"), MakeFactory<PlaceholderOp>());
  RegisterKernel(on("PlaceholderV2"), MakeFactory<PlaceholderOp>());
  RegisterKernel(on("NoOp").Capturable(), MakeFactory<NoOp>());
  RegisterKernel(on("_Arg"), MakeFactory<ArgOp>());
  RegisterKernel(on("_Retval"), MakeFactory<RetvalOp>());
  RegisterKernel(on("_DeviceArg").Capturable(), MakeFactory<DeviceArgOp>());
  RegisterKernel(on("_DeviceRetval").Capturable(), MakeFactory<DeviceRetvalOp>());
  RegisterKernel(on("_AssertShape").Capturable(), MakeFactory<AssertShapeOp>());
  RegisterKernel(on("_Send"), MakeFactory<SendOp>());
  RegisterKernel(on("_HostSend").HostMemory("tensor"), MakeFactory<SendOp>());
  RegisterKernel(on("_Recv"), MakeFactory<RecvOp>());
  RegisterKernel(on("_HostRecv").HostMemory("tensor"), MakeFactory<RecvOp>());
  RegisterControlFlowKernels(device_type);
}

namespace {

TW_REGISTER_KERNELS(basic) { RegisterBasicKernels(kDeviceCpu); }

}  // namespace
}  // namespace towerflow
