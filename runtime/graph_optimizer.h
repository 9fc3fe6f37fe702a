// Graph rewrites before execution (TF's Grappler, in spirit): run on each
// device's partition of a step (runtime/step_graph.h) before its executor
// is built, so feeds, fetches and Send/Recv are already fixed.
//
// Constant folding (CPU partitions): a stateless node whose inputs are all
// constants (transitively) is evaluated once, when the step's executors are
// built, on the partition's device, and replaced by a Const of the same
// name holding its value (up to 10 MiB, TF's limit); constants nothing reads
// any more go. Shapes are not materialized: a Shape of a computed tensor
// stays.
//
// Remapping (TF's remapper) fuses a product with what follows it:
//   Conv2D + BiasAdd [+ Relu | Relu6]            -> _FusedConv2D
//   Conv2D + FusedBatchNorm{,V2,V3}(is_training=false) [+ Relu | Relu6]
//                                                -> _FusedConv2D (inference:
//                                                   the batch norm is folded
//                                                   into the convolution)
//   MatMul + BiasAdd [+ Relu | Relu6]            -> _FusedMatMul
//   FusedBatchNorm{V2,V3} + Relu                 -> _FusedBatchNormEx (training
//                                                   too; the batch norm's
//                                                   other outputs read from it)
//   ReluGrad + FusedBatchNormGradV3 (of such a   -> _FusedBatchNormGradEx
//   fused batch norm)
// A chain fuses only when each intermediate tensor has a single consumer
// (no fetch, no other reader, no control edge from it), the types agree,
// and the device type has a kernel for the fused node. The fused node takes
// the name of the chain's last node, so its fetches and control edges are
// unchanged, and lists the nodes it replaced in its "_fused_nodes" attr,
// which the executor's errors name.
//
// Pad fusion (CPU partitions): Pad (constant paddings, zero value, spatial dimensions only)
// followed by VALID Conv2D / Conv2DBackpropFilter on its output becomes an
// EXPLICIT padding of those convolutions, and the Pad goes when nothing
// else reads it (a Shape of it becomes the shape of its input plus the
// paddings).
//
// Mixed precision (TF's auto_mixed_precision, runtime/auto_mixed_precision.h),
// first and only when asked: float32 math to float16 or bfloat16 where
// TF's lists allow, with Casts at the boundaries.
//
// Each rewrite keeps the values the graph computes (up to rounding: a fused
// bias is added inside the convolution's accumulation) and can be switched
// off in SessionOptions::optimizer.
#ifndef TOWERFLOW_RUNTIME_GRAPH_OPTIMIZER_H_
#define TOWERFLOW_RUNTIME_GRAPH_OPTIMIZER_H_

#include <string>

#include "absl/status/status.h"
#include "framework/device.h"
#include "framework/threadpool.h"
#include "proto/graph.pb.h"
#include "runtime/auto_mixed_precision.h"

namespace towerflow {

struct GraphOptimizerOptions {
  bool constant_folding = true;
  bool remapping = true;
  bool pad_fusion = true;
  MixedPrecisionOptions mixed_precision;  // off unless its dtype is set

  static GraphOptimizerOptions None() { return {false, false, false}; }
};

// Rewrites `partition`, whose nodes all run on `device` (constant folding
// runs kernels there, on `inter_op_pool`). Errors only for a partition that
// does not parse (a bad input name); what does not match is left alone.
absl::Status OptimizePartition(const GraphOptimizerOptions& options, Device* device,
                               ThreadPool* inter_op_pool, GraphDef* partition);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_GRAPH_OPTIMIZER_H_
