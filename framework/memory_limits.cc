#include "framework/memory_limits.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "framework/tensor.h"

namespace towerflow {

absl::Status CheckTensorBytes(DataType dtype, const TensorShape& shape,
                              const MemoryLimits& limits) {
  TW_RETURN_IF_ERROR(shape.status());
  const int64_t bytes =
      MultiplyWithoutOverflow(shape.num_elements(), static_cast<int64_t>(TensorElementSize(dtype)));
  if (bytes >= 0 && bytes <= limits.max_tensor_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("OOM when allocating tensor with shape ", shape.DebugString(), " and type ",
                   DataTypeString(dtype), ": ", bytes < 0 ? "more than 2^63" : absl::StrCat(bytes),
                   " bytes, past the session's max_tensor_bytes of ", limits.max_tensor_bytes));
}

int64_t HostBudgetLeft(const MemoryLimits& limits) {
  const std::optional<Allocator::Stats> stats = CpuAllocator()->GetStats();
  return limits.host_budget_bytes - (stats ? stats->bytes_in_use : 0);
}

absl::Status CheckHostBudget(int64_t bytes, const MemoryLimits& limits, absl::string_view what) {
  if (bytes <= 0) return absl::OkStatus();
  const int64_t left = HostBudgetLeft(limits);
  if (bytes <= left) return absl::OkStatus();
  const int64_t in_use = limits.host_budget_bytes - left;
  return absl::ResourceExhaustedError(absl::StrCat(
      what, ": ", bytes, " bytes more would take the process's host tensors from ", in_use,
      " bytes past the session's host memory budget of ", limits.host_budget_bytes, " bytes"));
}

absl::StatusOr<Tensor> AllocateHostTensor(DataType dtype, const TensorShape& shape,
                                          const MemoryLimits& limits) {
  TW_RETURN_IF_ERROR(CheckTensorBytes(dtype, shape, limits));
  const int64_t bytes = shape.num_elements() * static_cast<int64_t>(TensorElementSize(dtype));
  TW_RETURN_IF_ERROR(
      CheckHostBudget(bytes, limits,
                      absl::StrCat("OOM when allocating tensor with shape ", shape.DebugString(),
                                   " and type ", DataTypeString(dtype))));
  return Tensor::Allocate(CpuAllocator(), dtype, shape);
}

namespace {

// Adds the bytes `proto` decodes to (a variant's elements' tensors too) to
// `*total`, each tensor and the total within max_tensor_bytes.
absl::Status AddTensorProtoBytes(const TensorProto& proto, const MemoryLimits& limits,
                                 int64_t* total) {
  TensorShape shape;
  if (proto.dtype() == DT_VARIANT) {
    TW_ASSIGN_OR_RETURN(shape, TensorShape::FromProto(proto.tensor_shape()));
  } else {
    TW_ASSIGN_OR_RETURN(shape, TensorProtoShape(proto));
  }
  TW_RETURN_IF_ERROR(CheckTensorBytes(proto.dtype(), shape, limits));
  *total += shape.num_elements() * static_cast<int64_t>(TensorElementSize(proto.dtype()));
  for (const VariantTensorDataProto& value : proto.variant_val()) {
    for (const TensorProto& element : value.tensors()) {
      TW_RETURN_IF_ERROR(AddTensorProtoBytes(element, limits, total));
      if (*total > limits.max_tensor_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "OOM when decoding a variant tensor with shape ", shape.DebugString(),
            ": its elements' tensors take more than the session's max_tensor_bytes of ",
            limits.max_tensor_bytes));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTensorProtoBytes(const TensorProto& proto, const MemoryLimits& limits) {
  int64_t total = 0;
  return AddTensorProtoBytes(proto, limits, &total);
}

}  // namespace towerflow
