#include "framework/kernel_context.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {

absl::StatusOr<Tensor*> KernelContext::allocate_output(int i, const TensorShape& shape) {
  KernelOutput& out = outputs_[i];
  TW_ASSIGN_OR_RETURN(out.tensor,
                      Tensor::Allocate(params_.device->has_device_memory() && output_on_host(i)
                                           ? CpuAllocator()
                                           : params_.device->allocator(),
                                       output_type(i), shape));
  out.set = true;
  return &out.tensor;
}

absl::StatusOr<Tensor*> KernelContext::forward_input_or_allocate_output(int input_index, int i,
                                                                        const TensorShape& shape) {
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
