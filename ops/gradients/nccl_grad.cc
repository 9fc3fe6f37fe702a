// The gradient of NcclAllReduce, as TensorFlow's: y_i = sum_j x_j over the
// members, so dx_j = sum_i dy_i, the all-reduce of the members' gradients
// (shared_name + "_grad"), each on its member's device (the gradient is
// colocated with it). Only "sum" has one.
#include "absl/strings/str_cat.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"

namespace towerflow {
namespace {

TW_GRAD_FN(NcclAllReduceGrad) {
  if (grad_util::Attr<std::string>(scope, op, "reduction") != "sum") {
    return absl::InvalidArgumentError(
        "No gradient defined for NcclAllReduce except for reduction=\"sum\".");
  }
  const int64_t n = grad_util::Attr<int64_t>(scope, op, "num_devices");
  const std::string shared_name = grad_util::Attr<std::string>(scope, op, "shared_name");
  grad_outputs->push_back(
      ops::NcclAllReduce(scope, grad_inputs[0], "sum", n, absl::StrCat(shared_name, "_grad")));
  return scope.status();
}

TW_REGISTER_GRADIENT("NcclAllReduce", NcclAllReduceGrad);

// y_i = sum over the processes of x_i: each process's dx_i is the sum of
// every process's dy_i (Horovod's gradient of its allreduce).
TW_GRAD_FN(MpiAllReduceGrad) {
  const int64_t threshold = grad_util::Attr<int64_t>(scope, op, "fusion_threshold_bytes");
  const ops::MpiAllReduce sums(scope, grad_inputs,
                               ops::MpiAllReduce::FusionThresholdBytes(threshold));
  for (const Output& sum : sums.sum) grad_outputs->push_back(sum);
  return scope.status();
}

TW_REGISTER_GRADIENT("MpiAllReduce", MpiAllReduceGrad);

// y_i = every process's x_i in rank order: each process's dx_i is its own
// rows of the sum over the processes of dy_i (Horovod's gradient of its
// allgather). The rows start after those of the lower ranks, whose counts
// are gathered too.
TW_GRAD_FN(MpiAllGatherGrad) {
  const ops::MpiAllReduce sums(scope, grad_inputs);
  std::vector<Output> shapes, rows;
  for (size_t i = 0; i < grad_inputs.size(); ++i) {
    shapes.push_back(ops::Shape(scope, grad_util::In(op, static_cast<int>(i))));
    rows.push_back(ops::Slice(scope, shapes.back(), {0}, {1}));
  }
  // After the sums: every process issues the two collectives in one order.
  const ops::MpiAllGather counts(scope.WithControlDependencies({sums.operation}), rows);
  const Output lower = ops::Reshape(scope, ops::MpiRank(scope), {1});  // ranks below this one
  for (size_t i = 0; i < grad_inputs.size(); ++i) {
    const Output offset = ops::Sum(scope, ops::Slice(scope, counts.gathered[i], {0}, lower), {0},
                                   ops::Sum::KeepDims(true));
    const Output begin = ops::ConcatV2(
        scope, {offset, ops::ZerosLike(scope, ops::Slice(scope, shapes[i], {1}, {-1}))}, 0);
    grad_outputs->push_back(ops::Slice(scope, sums.sum[i], begin, shapes[i]));
  }
  return scope.status();
}

TW_REGISTER_GRADIENT("MpiAllGather", MpiAllGatherGrad);
TW_REGISTER_NO_GRADIENT("MpiRank");
// Copies one process's values over the others': nothing flows back.
TW_REGISTER_NO_GRADIENT("MpiBroadcast");

}  // namespace
}  // namespace towerflow
