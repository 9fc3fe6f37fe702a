// SerializeTensor and ParseTensor (tf.io.serialize_tensor / parse_tensor).
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/memory_limits.h"
#include "kernels/cpu/tensor_content.h"

namespace towerflow {
namespace {

// SerializeTensor: the tensor's TensorProto bytes (numbers as
// tensor_content, strings as string_val, as TF writes them); ParseTensor:
// back, checked against out_type, with TF's decoding rules and messages.
class SerializeTensorOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<std::string>() = AsProtoTensorContent(ctx->input(0)).SerializeAsString();
    return absl::OkStatus();
  }
};

class ParseTensorOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("out_type", &type_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    if (serialized.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected `serialized` to be a scalar, got shape: ", serialized.shape().DebugString()));
    }
    const std::string& bytes = *serialized.data<std::string>();
    TensorProto proto;
    if (!proto.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not parse `serialized` as TensorProto, base64: ", absl::Base64Escape(bytes)));
    }
    // A few bytes may declare a huge shape: the session's limits first.
    absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
    if (shape.ok() && proto.dtype() != DT_INVALID && TensorElementSize(proto.dtype()) > 0) {
      TW_RETURN_IF_ERROR(CheckTensorBytes(proto.dtype(), *shape, ctx->device()->memory_limits()));
      TW_RETURN_IF_ERROR(CheckHostBudget(
          shape->num_elements() * static_cast<int64_t>(TensorElementSize(proto.dtype())),
          ctx->device()->memory_limits(), "a parsed tensor"));
    }
    absl::StatusOr<Tensor> parsed = Tensor::FromProto(proto);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot parse tensor from proto: ", parsed.status().message()));
    }
    if (parsed->dtype() != type_) {
      return absl::InvalidArgumentError(absl::StrCat("Type mismatch between parsed tensor (",
                                                     DataTypeString(parsed->dtype()),
                                                     ") and dtype (", DataTypeString(type_), ")"));
    }
    TW_RETURN_IF_ERROR(ctx->set_output(0, *std::move(parsed)));
    return absl::OkStatus();
  }

 private:
  DataType type_ = DT_INVALID;
};

TW_REGISTER_KERNELS(serialize_tensor_ops) {
  RegisterKernel(KernelDefBuilder("SerializeTensor").Device(kDeviceCpu),
                 MakeFactory<SerializeTensorOp>());
  RegisterKernel(KernelDefBuilder("ParseTensor").Device(kDeviceCpu), MakeFactory<ParseTensorOp>());
}

}  // namespace
}  // namespace towerflow
