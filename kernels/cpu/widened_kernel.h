// Kernels derived by widening (Note [Derived kernels] in
// framework/kernel_registry.h): a node of a narrow type runs the op's kernel
// for a wider type, its narrow inputs converted up and its narrow outputs
// converted back. The CPU's half and bfloat16 kernels are float kernels so
// (float16_kernels.cc), and its narrow integer kernels int32 or int64 ones
// (narrow_int_kernels.cc).
#ifndef TOWERFLOW_KERNELS_CPU_WIDENED_KERNEL_H_
#define TOWERFLOW_KERNELS_CPU_WIDENED_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/tensor_views.h"

namespace towerflow {

// How one family of narrow types widens.
struct Widening {
  const char* what;  // for messages: "16-bit floats"
  // The type `t` is computed in, or DT_INVALID when `t` is not narrow.
  DataType (*wide)(DataType t);
  // Converts `from` into `to` (same shape), narrow to wide or back.
  void (*convert)(const Eigen::ThreadPoolDevice& d, const Tensor& from, Tensor* to);
};

// Registers a widened CPU kernel for each type of `narrow` that an op's
// schema allows for a type attr, where no kernel takes it yet and a kernel
// takes its wide type, for the ops `derive` accepts whose arguments are all
// values (no refs, resources or type lists).
void DeriveWidenedKernels(const std::vector<const KernelDef*>& kernels, const Widening& widening,
                          const std::vector<DataType>& narrow,
                          const std::function<bool(const std::string& op)>& derive);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_WIDENED_KERNEL_H_
