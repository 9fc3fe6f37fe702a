// The variable kernels (kernels/variable_ops.cc): resource variables
// (VarHandleOp, ReadVariableOp, AssignVariableOp, ...) and TF1 reference
// variables (VariableV2, Assign, ...). They only move buffers, so every
// device type shares them; the CPU registers them itself, and a device type
// with memory of its own calls RegisterVariableKernels for its type from its
// kernel library. AssignAdd/AssignSub (and their resource forms) need the
// device's arithmetic, given per dtype as an AddIntoFn; the row scatters
// (ScatterAdd, ScatterSub, ScatterUpdate and their resource forms) the
// device's scatter, given per dtype as a ScatterFn.
#ifndef TOWERFLOW_KERNELS_VARIABLE_OPS_H_
#define TOWERFLOW_KERNELS_VARIABLE_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/types.h"
#include "framework/kernel_context.h"
#include "kernels/nd_index.h"

namespace towerflow {

// *out = current + delta (or - delta when !add) on the kernel's device.
// `out` may be `&current` (in place); all three have one shape.
using AddIntoFn = absl::Status (*)(KernelContext* ctx, const Tensor& current, const Tensor& delta,
                                   bool add, Tensor* out);

// (variable_ops.cc names the ops in this order.)
enum class ScatterMode { kAdd, kSub, kUpdate, kMul, kDiv, kMax, kMin };

// Row nd.offsets[i] of `var` (as [params.shape[0], nd.slice_size]) gets row
// i of `updates` added, subtracted or assigned, for i in index order (so a
// duplicate index adds each of its rows, or keeps the last one assigned);
// a scalar `updates` stands for rows all of that value; a row whose offset
// is kIgnoredRow (bad_indices_policy IGNORE) is skipped. `var` is the
// variable's own buffer (nobody else reads it: the caller copied it first
// if need be), and nd came from ResolveScatter, so every row is checked.
using ScatterFn = absl::Status (*)(KernelContext* ctx, ScatterMode mode, const NdIndex& nd,
                                   const Tensor& updates, Tensor* var);

// Copies `from` into `to` (one dtype and shape, both in the device's
// memory) in order with the device's work: a GPU's copy on its stream.
using CopyIntoFn = absl::Status (*)(KernelContext* ctx, const Tensor& from, Tensor* to);

// REQUIRES: each called once per device type (and dtype), during static
// initialisation.
// `copy_into`: how Assign and AssignVariableOp write a value into the
// variable's own buffer when nothing else holds that buffer and the shapes
// agree, so the variable keeps its buffer from step to step (a recorded
// step needs that, runtime/step_replay.h); null (the CPU's): the variable
// takes the value's buffer, as TF's kernels do.
void RegisterVariableKernels(const std::string& device_type, CopyIntoFn copy_into = nullptr);
void RegisterAssignUpdateKernels(const std::string& device_type, DataType dtype,
                                 AddIntoFn add_into);
// ScatterAdd and ScatterSub (and ResourceScatterAdd/Sub) for `dtype`, or
// ScatterUpdate and ResourceScatterUpdate when `update`; indices in host
// memory.
void RegisterScatterKernels(const std::string& device_type, DataType dtype, bool update,
                            ScatterFn scatter);
// The row scatters Scatter<Mode> and ResourceScatter<Mode> for each of
// `modes`, or (`nd`) the N-d ones ScatterNd<Mode> and ResourceScatterNd<Mode>,
// whose indices [..., D] address the first D dims of the variable (updates
// indices.shape[:-1] + var.shape[D:], TF's bad_indices_policy).
void RegisterScatterVarKernels(const std::string& device_type, DataType dtype,
                               const std::vector<ScatterMode>& modes, bool nd, ScatterFn scatter);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_VARIABLE_OPS_H_
