// TF 1's tensor handles (tf.get_session_handle, tf.get_session_tensor,
// tf.delete_session_tensor): GetSessionHandle keeps a tensor in the session
// under a handle "node;id;device" (TF's form) that later runs feed back;
// GetSessionHandleV2 gives it as a resource handle whose name is that
// string; GetSessionTensor returns the tensor, DeleteSessionTensor drops
// it. The tensors live in the device's ResourceMgr (a session's devices are
// its own), so a handle is read on the device that made it; ids count per
// device. Unlike TF, which keeps a tensor only when its run succeeds, a
// tensor is kept when its node runs.
#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_handle.h"

namespace towerflow {
namespace {

constexpr char kContainer[] = "_session_tensors";

struct SessionTensor : ResourceBase {
  explicit SessionTensor(Tensor t) : value(std::move(t)) {}
  std::string DebugString() const override { return "SessionTensor"; }
  const Tensor value;
};

struct HandleCounter : ResourceBase {
  std::string DebugString() const override { return "HandleCounter"; }
  std::atomic<int64_t> next{0};
};

class GetSessionHandleOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    ResourceMgr* rm = ctx->resource_manager();
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<HandleCounter> counter,
        rm->LookupOrCreate<HandleCounter>(kContainer, "_counter",
                                          []() -> absl::StatusOr<std::shared_ptr<HandleCounter>> {
                                            return std::make_shared<HandleCounter>();
                                          }));
    const std::string handle =
        absl::StrCat(ctx->name(), ";", counter->next.fetch_add(1), ";", ctx->device()->name());
    const Tensor value = ctx->input(0);
    TW_RETURN_IF_ERROR(
        rm->LookupOrCreate<SessionTensor>(kContainer, handle,
                                          [&]() -> absl::StatusOr<std::shared_ptr<SessionTensor>> {
                                            return std::make_shared<SessionTensor>(value);
                                          })
            .status());
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    if (ctx->op() == "GetSessionHandle") {
      *out->data<std::string>() = handle;
      return absl::OkStatus();
    }
    ResourceHandle h;
    h.container = kContainer;
    h.name = handle;
    h.device = ctx->device()->name();
    h.type_name = "SessionTensor";
    *out->data<ResourceHandle>() = std::move(h);
    return absl::OkStatus();
  }
};

absl::StatusOr<std::string> HandleString(const Tensor& handle) {
  if (handle.dtype() != DT_STRING || handle.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("handle must be a string scalar, got ", handle.shape().DebugString()));
  }
  return *handle.data<std::string>();
}

class GetSessionTensorOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string handle, HandleString(ctx->input(0)));
    absl::StatusOr<std::shared_ptr<SessionTensor>> stored =
        ctx->resource_manager()->Lookup<SessionTensor>(kContainer, handle);
    if (!stored.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("The tensor with handle '", handle, "' is not in the session store."));
    }
    return ctx->set_output(0, (*stored)->value);
  }
};

class DeleteSessionTensorOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const std::string handle, HandleString(ctx->input(0)));
    if (!ctx->resource_manager()->Delete<SessionTensor>(kContainer, handle).ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Failed to delete a tensor with handle '",
                                                     handle, "' in the session store."));
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(session_handle_ops) {
  RegisterKernel(KernelDefBuilder("GetSessionHandle").Device(kDeviceCpu),
                 MakeFactory<GetSessionHandleOp>());
  RegisterKernel(KernelDefBuilder("GetSessionHandleV2").Device(kDeviceCpu),
                 MakeFactory<GetSessionHandleOp>());
  RegisterKernel(KernelDefBuilder("GetSessionTensor").Device(kDeviceCpu),
                 MakeFactory<GetSessionTensorOp>());
  RegisterKernel(KernelDefBuilder("DeleteSessionTensor").Device(kDeviceCpu),
                 MakeFactory<DeleteSessionTensorOp>());
}

}  // namespace
}  // namespace towerflow
