// _Send / _Recv: the two ends of an edge the partitioner cut between
// devices. Both build the rendezvous key from their attrs once, at Init; a
// _Recv waits asynchronously, so no thread blocks on a value in flight.
// Between CPU devices the tensor is handed over as is (one address space);
// device-to-device copies come with the GPU devices.
#include "core/status_macros.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "runtime/device.h"

namespace towerflow {
namespace {

absl::StatusOr<std::string> RendezvousKey(const KernelConstruction& c) {
  std::string tensor_name, send_device, recv_device;
  int64_t incarnation = 0;
  TW_RETURN_IF_ERROR(c.GetAttr("tensor_name", &tensor_name));
  TW_RETURN_IF_ERROR(c.GetAttr("send_device", &send_device));
  TW_RETURN_IF_ERROR(c.GetAttr("send_device_incarnation", &incarnation));
  TW_RETURN_IF_ERROR(c.GetAttr("recv_device", &recv_device));
  return Rendezvous::CreateKey(send_device, incarnation, recv_device, tensor_name);
}

class SendOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(key_, RendezvousKey(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    if (ctx->rendezvous() == nullptr) return absl::InternalError("_Send run without a rendezvous");
    return ctx->rendezvous()->Send(key_, ctx->input(0));
  }

 private:
  std::string key_;
};

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
        key_, [ctx, done = std::move(done)](const absl::Status& s, const Tensor& value) {
          done(s.ok() ? ctx->set_output(0, value) : s);
        });
  }

 private:
  std::string key_;
};

TW_REGISTER_KERNELS(sendrecv) {
  for (const char* op : {"_Send", "_HostSend"}) {
    RegisterKernel(KernelDefBuilder(op).Device(kDeviceCpu), MakeFactory<SendOp>());
  }
  for (const char* op : {"_Recv", "_HostRecv"}) {
    RegisterKernel(KernelDefBuilder(op).Device(kDeviceCpu), MakeFactory<RecvOp>());
  }
}

}  // namespace
}  // namespace towerflow
