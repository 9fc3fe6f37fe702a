// DynamicPartition and DynamicStitch: elements routed by index, as
// TensorFlow's data_flow_ops. Rows (the elements of data past the index
// dims) are copied as bytes, so every plain dtype is taken; the checks and
// the routing are kernels/rearrange.h's plans, which the GPU kernels share.
//
//   DynamicPartition(data [I..., R...], partitions [I...]) -> outputs[p] =
//     the rows whose partition is p, in order: [count_p, R...]
//   DynamicStitch(indices[m] [I_m...], data[m] [I_m..., R...]) -> merged
//     [max index + 1, R...], merged[indices[m][i]] = data[m][i]; later m win
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/kernel_util.h"
#include "kernels/rearrange.h"

namespace towerflow {
namespace {

class DynamicPartitionOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("num_partitions", &num_partitions_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("DynamicPartition", data.dtype()));
    TW_ASSIGN_OR_RETURN(const PartitionPlan plan,
                        PlanDynamicPartition(data.shape(), ctx->input(1), num_partitions_));
    const size_t row_bytes = elem * static_cast<size_t>(plan.row);
    const char* src = static_cast<const char*>(data.raw_data());
    for (int64_t k = 0; k < num_partitions_; ++k) {
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(k), plan.shapes[k]));
      char* dst = static_cast<char*>(out->raw_data());
      for (int64_t r = plan.starts[k]; r < plan.starts[k + 1] && row_bytes > 0; ++r) {
        std::memcpy(dst, src + plan.rows[r] * row_bytes, row_bytes);
        dst += row_bytes;
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t num_partitions_ = 1;
};

class DynamicStitchOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    std::vector<const Tensor*> indices, data;
    for (int m = 0; m < n; ++m) {
      indices.push_back(&ctx->input(m));
      data.push_back(&ctx->input(n + m));
    }
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("DynamicStitch", data[0]->dtype()));
    TW_ASSIGN_OR_RETURN(const StitchPlan plan, PlanDynamicStitch(indices, data));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.shape));
    const size_t row_bytes = elem * static_cast<size_t>(plan.row);
    if (out->NumElements() == 0) return absl::OkStatus();
    // Rows no index names stay zero (TF leaves them uninitialized).
    std::memset(out->raw_data(), 0, out->NumElements() * elem);
    char* dst = static_cast<char*>(out->raw_data());
    for (int m = 0; m < n; ++m) {
      const char* src = static_cast<const char*>(data[m]->raw_data());
      for (size_t k = 0; k < plan.src[m].size(); ++k) {
        std::memcpy(dst + plan.dst[m][k] * row_bytes, src + plan.src[m][k] * row_bytes, row_bytes);
      }
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(data_flow_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("DynamicPartition"), MakeFactory<DynamicPartitionOp>());
  RegisterKernel(cpu("DynamicStitch"), MakeFactory<DynamicStitchOp>());
  // Of duplicate indices TF leaves the winner unspecified; here, the last.
  RegisterKernel(cpu("ParallelDynamicStitch"), MakeFactory<DynamicStitchOp>());
}

}  // namespace
}  // namespace towerflow
