// The gradient of NcclAllReduce, as TensorFlow's: y_i = sum_j x_j over the
// members, so dx_j = sum_i dy_i, the all-reduce of the members' gradients
// (shared_name + "_grad"), each on its member's device (the gradient is
// colocated with it). Only "sum" has one.
#include "absl/strings/str_cat.h"
#include "ops/grad_registry.h"
#include "ops/gradients/grad_util.h"
#include "ops/ops.h"

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
// Copies one process's values over the others': nothing flows back.
TW_REGISTER_NO_GRADIENT("MpiBroadcast");

}  // namespace
}  // namespace towerflow
