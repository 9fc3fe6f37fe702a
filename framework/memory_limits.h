// Size checks of tensors against a session's MemoryLimits
// (framework/allocator.h), before any memory is asked for: a size that
// comes from a graph, a feed or a file is checked here first.
//
//   TW_RETURN_IF_ERROR(CheckTensorBytes(DT_FLOAT, shape, device->memory_limits()));
#ifndef TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_
#define TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_

#include "absl/status/status.h"
#include "core/tensor_shape.h"
#include "framework/allocator.h"
#include "proto/tensor.pb.h"
#include "proto/types.pb.h"

namespace towerflow {

// ResourceExhausted "OOM when allocating tensor with shape [..] and type
// float: N bytes, past the session's max_tensor_bytes of M" when a `dtype`
// tensor of `shape` is larger than `limits.max_tensor_bytes` (or than 2^63
// bytes); the shape's own error when it is invalid.
absl::Status CheckTensorBytes(DataType dtype, const TensorShape& shape, const MemoryLimits& limits);

// The same for the tensor a TensorProto describes (its shape: a splat of
// two values may describe 2^40 elements).
absl::Status CheckTensorProtoBytes(const TensorProto& proto, const MemoryLimits& limits);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_MEMORY_LIMITS_H_
