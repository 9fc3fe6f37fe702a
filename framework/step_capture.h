// Step capture: a device that can record the work one step enqueues and
// replay it later with one launch (a CUDA graph on a GPU). The session's
// replayed steps (runtime/step_replay.h) drive it; kernels never call it.
//
//   StepCapture* capture = device->step_capture();       // null: cannot
//   TW_RETURN_IF_ERROR(capture->BeginCapture(/*host_slots=*/{}));
//   ... run the step's kernels on this thread: they enqueue as always ...
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<CapturedWork> work, capture->EndCapture());
//   TW_RETURN_IF_ERROR(work->Launch());                   // the step runs now
//
// While recording, the device's work is recorded, not run, and everything
// that would need it to have run fails with FailedPrecondition naming what
// was attempted: waiting for the device, copying a device value to the host,
// a host callback. Every allocation of the device's memory is served from a
// pool private to the recording (Note [Private pools] in
// framework/block_cache.cc), reserved until the CapturedWork is destroyed,
// because the replays write into the very blocks the recording run was
// given. Copies from host memory made while recording (a kernel's host plan
// uploaded) keep their host source alive with the CapturedWork and copy it
// again on each replay, so only host values that are the same every step
// may be copied so.
//
// Thread safety: one recording at a time per device, on one thread; no
// other thread may enqueue work on the device meanwhile (the session holds
// its steps back). Launch, CopyIntoDevice and CopyAllToHost may be called
// from any thread, one at a time per device.
#ifndef TOWERFLOW_FRAMEWORK_STEP_CAPTURE_H_
#define TOWERFLOW_FRAMEWORK_STEP_CAPTURE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace towerflow {

// The recorded work of one step. Destroying it releases its private pool
// (the device must not be running it then, or must run it in stream order
// before anything that reuses the memory, as a GPU's single stream does).
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  // Enqueues the recorded work once more, in order after everything enqueued
  // before, and returns without waiting. Internal on a device failure.
  virtual absl::Status Launch() = 0;
  // Operations recorded (kernels, copies, memsets).
  virtual int64_t num_operations() const = 0;
  // Bytes of device memory reserved for the work (its private pool).
  virtual int64_t reserved_bytes() const = 0;
};

class StepCapture {
 public:
  virtual ~StepCapture() = default;

  // Host memory for a replayed step's feed that stays in host memory (an
  // int32 tensor on a GPU): pinned where the device needs it so.
  virtual absl::StatusOr<Tensor> AllocateHostSlot(DataType dtype, const TensorShape& shape) = 0;

  // Starts recording what this thread enqueues on the device. Every device
  // allocation until EndCapture comes from a new private pool. A copy to
  // the device from within one of `host_slots` (from AllocateHostSlot; the
  // caller keeps them alive as long as the recording) is recorded as a copy
  // of that memory, which each replay reads anew; a copy from any other
  // host memory is recorded as a copy of its bytes as they are now.
  // FailedPrecondition when a recording is already in progress or the
  // device cannot record now (a GPU allocator checking guard bytes
  // synchronises the device on every allocation).
  virtual absl::Status BeginCapture(absl::Span<const Tensor> host_slots) = 0;
  // Ends the recording, always: afterwards the device runs work as usual.
  // The recorded work has not run; Launch it. The error that broke the
  // recording, if anything did (a wait for the device while recording).
  virtual absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() = 0;
  // Whether a recording is in progress.
  virtual bool capturing() const = 0;

  // Copies the bytes of `host` (host memory) into `device` (this device's
  // memory, the same dtype and element count) in order with the device's
  // work; returns at once, and `host` may change afterwards.
  // InvalidArgument when they do not fit each other.
  virtual absl::Status CopyIntoDevice(const Tensor& host, Tensor* device) = 0;
  // Host copies of `device_tensors` (this device's memory) taken after all
  // the work enqueued so far, with one wait for the device.
  virtual absl::StatusOr<std::vector<Tensor>> CopyAllToHost(
      absl::Span<const Tensor> device_tensors) = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_STEP_CAPTURE_H_
