// Constant folding of a partition (runtime/graph_optimizer.h runs it on CPU
// partitions; runtime/capture_specializer.h on a replayed step's device
// partition once its shapes are known). Internal to the runtime.
#ifndef TOWERFLOW_RUNTIME_CONSTANT_FOLDING_H_
#define TOWERFLOW_RUNTIME_CONSTANT_FOLDING_H_

#include <vector>

#include "absl/status/status.h"
#include "framework/device.h"
#include "framework/tensor.h"
#include "framework/threadpool.h"
#include "proto/graph.pb.h"

namespace towerflow {

// How FoldConstants evaluates.
struct FoldOptions {
  // The device whose kernels compute the constant subgraphs: null, the
  // partition's own; a CPU device, as TF's Grappler folds (a GPU
  // partition's shape arithmetic then needs no GPU).
  Device* evaluator = nullptr;
  // Fold only values computed exactly wherever they are: outputs in host
  // memory on the partition's device, or of integer or bool types. A float
  // value a GPU kernel computes stays, so a step gives the same bits as its
  // eager twin.
  bool exact_only = false;
};

// Every node whose value is the same each step (a stateless node with a
// kernel on the evaluating device, outside control flow, whose inputs are
// all such nodes or constants) and that a non-constant node reads is
// replaced by constants holding its outputs' values, computed once here by
// running the constant subgraph (kernels of the pool `pool`). Values over
// 10 MiB (TF's limit) stay as written, and so does a subgraph whose kernels
// fail (its error then comes when the step runs, as without folding).
// Constant nodes nothing reads any more go. `device` is the partition's.
// Errors only for a partition whose input names do not parse. Whether
// anything changed goes to `changed` (may be null).
absl::Status FoldConstants(Device* device, ThreadPool* pool, GraphDef* def,
                           bool* changed = nullptr, const FoldOptions& options = {});

// Replaces node `index` of `def` by constants holding `values`, one per
// output. One output: a Const of the node's name. Several: Consts named
// "<name>/_folded_<k>", the node's readers pointed at them, and a NoOp of
// the node's name when control edges leave it. A value whose output lies in
// host memory on a device with memory of its own becomes a HostConst
// (unless its type is in host memory there anyway), so memory types stay
// as the step graph cut them. The node's own inputs go.
// REQUIRES: values.size() is the node's number of outputs.
absl::Status ReplaceWithConstants(const Device& device, int index,
                                  const std::vector<Tensor>& values, GraphDef* def);

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_CONSTANT_FOLDING_H_
