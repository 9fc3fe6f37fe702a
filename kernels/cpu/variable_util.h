// Resource-variable access shared by the CPU kernels that take a variable
// handle (variable_ops.cc, ResourceGather, the ResourceApply* updates).
#ifndef TOWERFLOW_KERNELS_CPU_VARIABLE_UTIL_H_
#define TOWERFLOW_KERNELS_CPU_VARIABLE_UTIL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/kernel_context.h"
#include "runtime/resource_mgr.h"

namespace towerflow {

// The handle in input `input`: a one-element DT_RESOURCE tensor naming a
// resource on this kernel's device; InvalidArgument otherwise.
absl::StatusOr<const ResourceHandle*> ResourceHandleInput(KernelContext* ctx, int input);

// The variable behind handle input `input`; FailedPrecondition when it does
// not exist (never assigned), which is how an uninitialised resource
// variable reads.
absl::StatusOr<std::shared_ptr<Var>> LookupResourceVar(KernelContext* ctx, int input);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_VARIABLE_UTIL_H_
