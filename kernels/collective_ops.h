// NcclAllReduce kernels: what every device type shares.
//
// Each NcclAllReduce op of a step joins its collective (keyed by
// shared_name) at the step's Rendezvous and returns at once: it is an async
// kernel, so n members waiting for each other hold no threads. The last to
// join checks that the members agree (dtype, shape, reduction, device type)
// and runs the device type's AllReduceLauncher for all of them, then ends
// every member with the launcher's status. A step that aborts first ends the
// waiting members with the abort's status.
//
// Device types register a kernel with their launcher:
//
//   RegisterAllReduceKernels(kDeviceCpu, {DT_FLOAT, DT_DOUBLE}, CpuAllReduce);
//
// The launcher gets the members sorted by device name, then node name, so
// ranks and reduction order do not depend on arrival order.
#ifndef TOWERFLOW_KERNELS_COLLECTIVE_OPS_H_
#define TOWERFLOW_KERNELS_COLLECTIVE_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "framework/kernel.h"
#include "framework/kernel_context.h"

namespace towerflow {

enum class ReduceKind { kSum, kProd, kMin, kMax };

// One NcclAllReduce op's part in its collective.
struct AllReduceMember {
  KernelContext* ctx;  // valid until the member's kernel is done
  const Tensor* input;
  ReduceKind kind;
};

// Sets output 0 of every member to the reduction of all inputs (same dtype
// and shape, checked). Runs on the thread of the last member to join; may
// enqueue device work and return before it is done, as any GPU kernel.
using AllReduceLauncher = absl::Status (*)(absl::Span<const AllReduceMember> members);

// Registers NcclAllReduce on `device_type` for `types` (attr T).
void RegisterAllReduceKernels(const std::string& device_type, const std::vector<DataType>& types,
                              AllReduceLauncher launcher);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_COLLECTIVE_OPS_H_
