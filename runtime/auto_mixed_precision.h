// TF's auto_mixed_precision graph rewrite (Grappler's AutoMixedPrecision,
// with TF 2.x's lists): a partition's float32 math moves to float16 or
// bfloat16 where it is fast and numerically safe, with Casts at the
// boundaries. Run by the graph optimizer (runtime/graph_optimizer.h) before
// its other rewrites, when SessionOptions::optimizer.mixed_precision asks.
//
// Which nodes change (each has a float32 "T" attr, runs on a device type the
// options name, and has a kernel there for the 16-bit type):
// 1. allow-list ops (MatMul, BatchMatMul, Conv2D and its gradients, Einsum,
//    the fused RNN cells): always;
// 2. deny-list ops (Exp, Log, Softmax, LogSoftmax, the softmax cross
//    entropies, Sum, Mean, Pow, L2Loss, SaveV2) never, nor the infer-list ops they
//    reach forward through clear- and infer-list ops, nor the clear-list
//    ops on the way;
// 3. infer-list ops (Add, Mul, BiasAdd, the batch norms, activations...) and
//    clear-list ops (Relu, Reshape, MaxPool, Concat...) that lie between
//    two changed nodes (downstream of one and upstream of another);
// 4. clear-list ops connected to a changed node through clear-list ops.
// Everything else keeps float32: variables (read, then cast, so optimizers
// update float32 masters), losses, reductions, fetches and feeds (_Retval
// and _Arg are on no list), and the control-flow ops of while loops (TF
// colours a loop's Merge and NextIteration alike; here they stay float32).
// A Cast "<node>-<output>-CastToFp16-AutoMixedPrecision" (CastToBf16,
// CastToFp32) is inserted per tensor and direction where a changed node
// meets an unchanged one; node names are kept, so fetches and errors name
// the same nodes.
#ifndef TOWERFLOW_RUNTIME_AUTO_MIXED_PRECISION_H_
#define TOWERFLOW_RUNTIME_AUTO_MIXED_PRECISION_H_

#include <set>
#include <string>

#include "absl/status/status.h"
#include "core/types.h"
#include "proto/graph.pb.h"

namespace towerflow {

struct MixedPrecisionOptions {
  // DT_HALF or DT_BFLOAT16; DT_INVALID leaves graphs as they are.
  DataType dtype = DT_INVALID;
  // The device types whose partitions are rewritten. GPUs by default: a
  // CPU computes 16-bit types in float32 (kernels/cpu/float16_kernels.cc),
  // so there it only adds casts; name "CPU" to test or to store bfloat16.
  std::set<std::string> device_types = {"GPU"};
};

// Rewrites `partition`, whose nodes run on a device of `device_type`; leaves
// it alone when that device type cannot cast between float32 and the
// 16-bit type.
// Errors only for a partition that does not parse.
absl::Status AutoMixedPrecision(const MixedPrecisionOptions& options,
                                const std::string& device_type, GraphDef* partition);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_AUTO_MIXED_PRECISION_H_
