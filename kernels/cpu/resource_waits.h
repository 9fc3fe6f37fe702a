// What the kernels of TF's shared waiting resources (queues, conditional
// accumulators) have in common: a resource in the device's ResourceMgr under
// (container, shared_name), so every session of every worker that names it
// shares it, and waits on it that hold no thread. A dequeue from an empty
// queue or a take from an accumulator short of gradients is an asynchronous
// kernel whose `done` runs when another step lets it go on, or when its own
// step is aborted (an error elsewhere in the step, its deadline,
// Session::Close), which ends the wait with the abort's status.
#ifndef TOWERFLOW_KERNELS_CPU_RESOURCE_WAITS_H_
#define TOWERFLOW_KERNELS_CPU_RESOURCE_WAITS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/resource_mgr.h"
#include "kernels/variable_util.h"

namespace towerflow {

// The end of a wait, called once: with OK and the result, or an error.
template <typename Result>
using WaitDone = std::function<void(absl::Status, Result)>;

// Waits a resource keeps, first come first served: cancelled by id when their
// step is aborted. An id cancelled before its wait was added is remembered,
// so the wait fails as soon as it is added.
template <typename Wait>
class Waits {
 public:
  void Add(int64_t id, Wait wait) { waits_.emplace_back(id, std::move(wait)); }
  // The wait of `id`, removed; false when there is none (it ended already, or
  // has not been added: then `id` is remembered as cancelled).
  bool Take(int64_t id, Wait* out) {
    for (auto it = waits_.begin(); it != waits_.end(); ++it) {
      if (it->first == id) {
        *out = std::move(it->second);
        waits_.erase(it);
        return true;
      }
    }
    cancelled_.insert(id);
    return false;
  }
  bool WasCancelled(int64_t id) { return cancelled_.erase(id) > 0; }
  bool empty() const { return waits_.empty(); }
  std::pair<int64_t, Wait>& front() { return waits_.front(); }
  void pop_front() { waits_.pop_front(); }
  std::deque<std::pair<int64_t, Wait>>& all() { return waits_; }

 private:
  std::deque<std::pair<int64_t, Wait>> waits_;
  absl::flat_hash_set<int64_t> cancelled_;
};

// The handle a resource op outputs (ResourceName's container and name).
absl::StatusOr<Tensor> MakeHandle(const KernelConstruction& c, const char* type_name);

// The resource of type T that input `input`'s handle names; NotFound names
// `what`.
template <typename T>
absl::StatusOr<std::shared_ptr<T>> LookupInput(KernelContext* ctx, const char* what,
                                               int input = 0) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, input));
  absl::StatusOr<std::shared_ptr<T>> r = ctx->resource_manager()->Lookup<T>(h->container, h->name);
  if (absl::IsNotFound(r.status())) {
    return absl::NotFoundError(absl::StrCat(what, " '", h->name, "' (container ", h->container,
                                            ") does not exist on ", ctx->device()->name()));
  }
  return r;
}

// Input `i`, one value of `dtype` (int32 or int64), widened.
absl::StatusOr<int64_t> ScalarInput(KernelContext* ctx, int i, DataType dtype, const char* what);

// Runs `start(id, done)`, a wait on a resource, so that aborting the step
// cancels it: `cancel(id, status)` ends the wait. `start` passes `done` on as
// the wait's end, which takes the abort callback back before it reports.
void StartCancellableWait(KernelContext* ctx,
                          std::function<void(int64_t, const absl::Status&)> cancel,
                          AsyncOpKernel::DoneCallback done,
                          std::function<void(int64_t, AsyncOpKernel::DoneCallback)> start);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_RESOURCE_WAITS_H_
