// Size checks of tensors against a session's MemoryLimits
// (framework/allocator.h), before any memory is asked for: a size that
// comes from a graph, a feed or a file is checked here first.
//
//   TW_RETURN_IF_ERROR(CheckTensorBytes(DT_FLOAT, shape, device->memory_limits()));
#ifndef TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_
#define TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor_shape.h"
#include "framework/allocator.h"
#include "framework/tensor.h"
#include "proto/tensor.pb.h"
#include "proto/types.pb.h"

namespace towerflow {

// ResourceExhausted "OOM when allocating tensor with shape [..] and type
// float: N bytes, past the session's max_tensor_bytes of M" when a `dtype`
// tensor of `shape` is larger than `limits.max_tensor_bytes` (or than 2^63
// bytes); the shape's own error when it is invalid.
absl::Status CheckTensorBytes(DataType dtype, const TensorShape& shape, const MemoryLimits& limits);

// ResourceExhausted "... bytes more would take the process's host tensors
// from N bytes past the session's host memory budget of M bytes" when
// `bytes` more host memory (beyond what CpuAllocator() has handed out) would
// not fit limits.host_budget_bytes; `what` says what wanted it ("OOM when
// allocating tensor with shape [..] and type float", "a copy of fetch x").
absl::Status CheckHostBudget(int64_t bytes, const MemoryLimits& limits, absl::string_view what);

// What limits.host_budget_bytes leaves beyond CpuAllocator()'s bytes in use
// (negative when past it).
int64_t HostBudgetLeft(const MemoryLimits& limits);

// A host tensor (CpuAllocator()) of `dtype` and `shape`, refused first by
// CheckTensorBytes and CheckHostBudget: what every allocation on the path of
// a step that is not a kernel's output (a fetch's copy, a parsed feed) uses.
absl::StatusOr<Tensor> AllocateHostTensor(DataType dtype, const TensorShape& shape,
                                          const MemoryLimits& limits);

// The same for the tensor a TensorProto describes (its shape: a splat of
// two values may describe 2^40 elements), a variant's elements' tensors
// (a list's) included, each and all together.
absl::Status CheckTensorProtoBytes(const TensorProto& proto, const MemoryLimits& limits);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_
