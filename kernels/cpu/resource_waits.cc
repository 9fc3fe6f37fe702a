#include "kernels/cpu/resource_waits.h"

#include <atomic>

#include "framework/rendezvous.h"
#include "framework/resource_handle.h"

namespace towerflow {

absl::StatusOr<Tensor> MakeHandle(const KernelConstruction& c, const char* type_name) {
  ResourceHandle h;
  TW_RETURN_IF_ERROR(ResourceName(c, &h.container, &h.name));
  h.device = c.device()->name();
  h.type_name = type_name;
  Tensor handle(DT_RESOURCE, TensorShape());
  *handle.data<ResourceHandle>() = std::move(h);
  return handle;
}

absl::StatusOr<int64_t> ScalarInput(KernelContext* ctx, int i, DataType dtype, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != dtype || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(ctx->name(), ": ", what, " must be one ",
                                                   DataTypeString(dtype), ", not ",
                                                   t.shape().DebugString()));
  }
  return dtype == DT_INT64 ? t.flat<int64_t>()(0) : t.flat<int32_t>()(0);
}

void StartCancellableWait(KernelContext* ctx,
                          std::function<void(int64_t, const absl::Status&)> cancel,
                          AsyncOpKernel::DoneCallback done,
                          std::function<void(int64_t, AsyncOpKernel::DoneCallback)> start) {
  static std::atomic<int64_t> next_wait_id{1};
  const int64_t id = next_wait_id.fetch_add(1);
  Rendezvous* rendezvous = ctx->rendezvous();
  if (rendezvous == nullptr) {
    start(id, std::move(done));
    return;
  }
  const int64_t token =
      rendezvous->AddAbortCallback([cancel, id](const absl::Status& s) { cancel(id, s); });
  start(id, [rendezvous, token, done = std::move(done)](absl::Status s) {
    rendezvous->RemoveAbortCallback(token);
    done(s);
  });
}

}  // namespace towerflow
