// The partition of a replayed step (runtime/step_replay.h), specialised to
// the shapes of its feeds so that everything it computes on the host is
// known before it runs, and checked for what a recording cannot hold.
// Internal to the runtime.
//
// A GPU partition computes shapes, axes and sizes on the host (int32 and
// HostMemory arguments, framework/memory_types.h). A recorded step bakes
// what the host computed while recording into the kernels it launches, so
// that is only right when the host would compute the same every step. With
// the feeds' shapes fixed:
//  * the feeds become _DeviceArg nodes carrying their shapes, the fetches
//    _DeviceRetval nodes;
//  * Shape, Size, Rank and ShapeN of tensors whose shapes are then known
//    become constants, and constant folding (runtime/constant_folding.h)
//    computes the values that depend only on constants and come out the
//    same wherever they are computed (BroadcastGradientArgs, the int32 and
//    int64 arithmetic of gradients' shapes), with the host's CPU kernels, as
//    TF's Grappler does;
//  * a constant sent across the host/device boundary inside the partition
//    becomes a constant where it is received.
// What is left is refused, naming the first node that prevents capture: a
// host value that still depends on the step's data or state (a
// data-dependent count, a variable in host memory, an int32 feed that a
// kernel reads on the host for more than copying it to the device), a copy
// between host and device memory inside the step, control flow, and a
// kernel that is not declared capturable (KernelDef::capturable). An int32
// feed that kernels only copy to the device (KernelDef::
// copied_host_inputs: a GPU's class labels) is fed through a host slot.
#ifndef TOWERFLOW_RUNTIME_CAPTURE_SPECIALIZER_H_
#define TOWERFLOW_RUNTIME_CAPTURE_SPECIALIZER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_shape.h"
#include "framework/device.h"
#include "framework/threadpool.h"
#include "proto/graph.pb.h"

namespace towerflow {

struct CapturePlan {
  // The partition to record: only capturable kernels, _DeviceArg and
  // _DeviceRetval, every host-memory input a constant or a variable handle.
  GraphDef graph;
  // By fetch (_Retval index): whether its value is in host memory, and so a
  // constant of the recording, the same on every replay.
  std::vector<bool> fetch_on_host;
  // By feed (_Arg index): whether it stays in host memory (an int32 tensor
  // on a GPU), fed through a host slot (StepCapture::AllocateHostSlot) that
  // only copied host inputs (KernelDef::copied_host_inputs) read.
  std::vector<bool> feed_on_host;
};

// Whether `op` is one of TF 1.x's control-flow primitives (Switch, Merge,
// Enter, Exit, NextIteration, LoopCond, ControlTrigger and their Ref forms).
bool IsControlFlowOp(const std::string& op);

// Whether `op` copies a value between devices or memories (_Send, _Recv,
// _HostSend, _HostRecv). Inside one partition such a copy of a constant is
// folded away; any other is refused.
bool IsTransferOp(const std::string& op);

// `partition` is the one partition of a step on `device`, with `_Arg`
// feeds of `feed_shapes` (by _Arg index; `feed_names`, the fed tensors'
// names for messages, or empty) and `num_fetches` `_Retval`s.
// Constant folding runs CPU kernels on `host` (a CPU device; inter-op pool
// `pool`), never `device`'s.
// FailedPrecondition naming the node that prevents recording;
// InvalidArgument for a malformed partition.
absl::StatusOr<CapturePlan> SpecializeForCapture(const GraphDef& partition,
                                                 absl::Span<const TensorShape> feed_shapes,
                                                 absl::Span<const std::string> feed_names,
                                                 int num_fetches, Device* device, Device* host,
                                                 ThreadPool* pool);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_CAPTURE_SPECIALIZER_H_
