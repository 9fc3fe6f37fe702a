// RandomUniform, RandomStandardNormal and TruncatedNormal on GPUs, float and
// double: the same Philox streams and groups as the CPU kernels
// (core/philox.h), so a seeded op gives the CPU's numbers, TF's. The shape
// stays on the host. The kernel's place in its stream (blocks past the
// seeds' counter) lives in device memory, read and advanced by the enqueued
// work itself, so a recorded step (runtime/step_replay.h) draws new numbers
// on every replay, continuing the eager steps' stream.
#include <vector>

#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/random_kernels.h"
#include "kernels/kernel_util.h"
#include "kernels/random_op_base.h"

namespace towerflow {
namespace gpu {
namespace {

template <typename T>
class GpuRandomOp : public RandomOpBase {
 public:
  explicit GpuRandomOp(PhiloxDist dist) : dist_(dist) {}
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(RandomOpBase::Init(c));
    auto* gpu = static_cast<GpuDevice*>(c.device());
    TW_CUDA_RETURN_IF_ERROR(cudaSetDevice(gpu->ordinal()));
    TW_ASSIGN_OR_RETURN(offset_, Tensor::Allocate(gpu->allocator(), DT_UINT64, TensorShape()));
    TW_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(offset_.raw_data(), 0, sizeof(uint64_t), gpu->compute_stream()));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "shape"));
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchRandom<T>(dist_, generator().initial(), static_cast<uint64_t*>(offset_.raw_data()),
                        out->data<T>(), out->NumElements(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  const PhiloxDist dist_;
  Tensor offset_;  // [] uint64 in device memory: blocks of the stream used so far
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op)
        .Device(kDeviceGpu)
        .Capturable()
        .TypeConstraint("dtype", DataTypeToEnum<T>::value)
        .HostMemory("shape");
  };
  RegisterKernel(on("RandomUniform"),
                 [] { return std::make_unique<GpuRandomOp<T>>(PhiloxDist::kUniform); });
  RegisterKernel(on("RandomStandardNormal"),
                 [] { return std::make_unique<GpuRandomOp<T>>(PhiloxDist::kNormal); });
  RegisterKernel(on("TruncatedNormal"),
                 [] { return std::make_unique<GpuRandomOp<T>>(PhiloxDist::kTruncatedNormal); });
}

TW_REGISTER_KERNELS(gpu_random) {
  RegisterForType<float>();
  RegisterForType<double>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
