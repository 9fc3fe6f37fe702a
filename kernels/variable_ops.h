// The variable kernels (kernels/variable_ops.cc): resource variables
// (VarHandleOp, ReadVariableOp, AssignVariableOp, ...) and TF1 reference
// variables (VariableV2, Assign, ...). They only move buffers, so every
// device type shares them; the CPU registers them itself, and a device type
// with memory of its own calls RegisterVariableKernels for its type from its
// kernel library. AssignAdd/AssignSub (and their resource forms) need the
// device's arithmetic, given per dtype as an AddIntoFn.
#ifndef TOWERFLOW_KERNELS_VARIABLE_OPS_H_
#define TOWERFLOW_KERNELS_VARIABLE_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "core/types.h"
#include "framework/kernel_context.h"

namespace towerflow {

// *out = current + delta (or - delta when !add) on the kernel's device.
// `out` may be `&current` (in place); all three have one shape.
using AddIntoFn = absl::Status (*)(KernelContext* ctx, const Tensor& current, const Tensor& delta,
                                   bool add, Tensor* out);

// REQUIRES: each called once per device type (and dtype), during static
// initialisation.
void RegisterVariableKernels(const std::string& device_type);
void RegisterAssignUpdateKernels(const std::string& device_type, DataType dtype,
                                 AddIntoFn add_into);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_VARIABLE_OPS_H_
