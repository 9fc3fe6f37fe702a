#include "framework/kernel_context.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel.h"
#include "framework/memory_limits.h"

namespace towerflow {

absl::StatusOr<Tensor> KernelContext::Allocate(DataType dtype, const TensorShape& shape,
                                               bool on_host) const {
  const MemoryLimits& limits = params_.device->memory_limits();
  if (on_host) return AllocateHostTensor(dtype, shape, limits);
  TW_RETURN_IF_ERROR(CheckTensorBytes(dtype, shape, limits));
  return Tensor::Allocate(params_.device->allocator(), dtype, shape);
}

Tensor* KernelContext::TakeInputBuffer(int i, const TensorShape& shape) {
  if (params_.output_sinks.empty()) return nullptr;
  const InputBufferSink& sink = params_.output_sinks[i];
  if (sink.consumer == nullptr || params_.device->has_device_memory()) return nullptr;
  std::optional<Tensor> buffer =
      sink.consumer->InputBuffer(params_.run_id, sink.input, output_type(i), shape);
  if (!buffer.has_value()) return nullptr;
  KernelOutput& out = outputs_[i];
  out.tensor = *std::move(buffer);
  out.set = true;
  return &out.tensor;
}

absl::StatusOr<Tensor*> KernelContext::allocate_output(int i, const TensorShape& shape) {
  if (Tensor* given = TakeInputBuffer(i, shape)) return given;
  KernelOutput& out = outputs_[i];
  const bool on_host = !params_.device->has_device_memory() || output_on_host(i);
  TW_ASSIGN_OR_RETURN(out.tensor, Allocate(output_type(i), shape, on_host));
  out.set = true;
  return &out.tensor;
}

absl::StatusOr<Tensor> KernelContext::allocate_temp(DataType dtype, const TensorShape& shape) {
  return Allocate(dtype, shape, !params_.device->has_device_memory());
}

absl::StatusOr<Tensor*> KernelContext::forward_input_or_allocate_output(int input_index, int i,
                                                                        const TensorShape& shape) {
  if (Tensor* given = TakeInputBuffer(i, shape)) return given;
  Tensor* in = params_.inputs[input_index].tensor;
  if (in != nullptr && in->RefCountIsOne() && in->dtype() == output_type(i) &&
      in->NumElements() == shape.num_elements() && shape.IsValid()) {
    absl::StatusOr<Tensor> reshaped = in->Reshaped(shape);
    if (reshaped.ok()) {
      KernelOutput& out = outputs_[i];
      out.tensor = *std::move(reshaped);
      out.set = true;
      return &out.tensor;
    }
  }
  return allocate_output(i, shape);
}

absl::Status KernelContext::set_output(int i, Tensor value) {
  if (value.dtype() != output_type(i)) {
    return absl::InvalidArgumentError(absl::StrCat("output ", i, " should be ",
                                                   DataTypeString(output_type(i)), " but got ",
                                                   DataTypeString(value.dtype())));
  }
  KernelOutput& out = outputs_[i];
  out.tensor = std::move(value);
  out.set = true;
  return absl::OkStatus();
}

void KernelContext::set_output_ref(int i, Var* var) {
  KernelOutput& out = outputs_[i];
  out.ref = var;
  out.set = true;
}

}  // namespace towerflow
