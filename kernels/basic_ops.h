// The kernels every device type needs to take part in a step: Const,
// Identity and its relatives, Placeholder, NoOp, _Arg/_Retval, _Send/_Recv
// and their host-memory forms (kernels/basic_ops.cc), and the control-flow
// kernels (kernels/control_flow_ops.cc). The CPU registers
// them itself; a device type with memory of its own calls
// RegisterBasicKernels for its type from its kernel library.
#ifndef TOWERFLOW_KERNELS_BASIC_OPS_H_
#define TOWERFLOW_KERNELS_BASIC_OPS_H_

#include <string>

namespace towerflow {

// REQUIRES: called once per device type, during static initialisation.
// Registers the control-flow kernels too.
void RegisterBasicKernels(const std::string& device_type);

// Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger
// (kernels/control_flow_ops.cc), and the stacks a while loop's gradient
// keeps its forward values on.
void RegisterControlFlowKernels(const std::string& device_type);

// StackV2, StackPushV2, StackPopV2, StackCloseV2 (kernels/stack_ops.cc).
void RegisterStackKernels(const std::string& device_type);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_BASIC_OPS_H_
