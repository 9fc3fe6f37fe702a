// Normalisation on GPUs: FusedBatchNorm (V1/V2/V3) and its gradient on cuDNN,
// LRN and LRNGrad on the CUDA kernels of norm_kernels.cu.cc. Batch norm's
// data float, half or bfloat16 (computed in float, as TF's), NHWC or NCHW;
// LRN float, NHWC; with the CPU kernels' attrs and checks.
//
// Batch norm's reserve spaces hold the batch mean and the biased variance,
// as on the CPU (cuDNN's own cache is an inverse deviation, derived again
// for the gradient), so a forward pass on one device and its gradient on
// another agree.
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/cudnn_util.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/norm_kernels.h"
#include "kernels/norm_attrs.h"

namespace towerflow {
namespace gpu {
namespace {

// The geometry of a 4-D batch-norm input and, where cuDNN runs, its cuDNN
// descriptors: x (and y, dy, dx, which share its shape) and the per-channel
// parameters.
//
// NHWC training runs on our own kernels (LaunchBatchNormTrainingNhwc):
// cuDNN's plain SPATIAL mode reduces NHWC data with one block per channel
// (on an H100, about 1 ms per ResNet-20 layer at batch 128), its PERSISTENT
// mode's NHWC kernels took about 150 us, where the data's memory traffic
// takes a few. NCHW training and inference stay with cuDNN's SPATIAL mode.
struct BatchNorm {
  BatchNormShape shape;
  int64_t rows;  // values per channel
  TensorDescriptor x, params;
};

template <typename T>
absl::StatusOr<BatchNorm> Describe(const Tensor& x, bool nchw, bool with_cudnn) {
  const int64_t n = x.dim_size(0), c = x.dim_size(nchw ? 1 : 3);
  const int64_t h = x.dim_size(nchw ? 2 : 1), w = x.dim_size(nchw ? 3 : 2);
  BatchNorm bn{{n, c, h * w, nchw}, n * h * w, {}, {}};
  for (int64_t d : x.shape().dim_sizes()) {
    if (d > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch norm dimension does not fit 32-bit sizes: ", x.shape().DebugString()));
    }
  }
  if (!with_cudnn || bn.rows == 0 || c == 0) return bn;  // cuDNN is not called
  TW_ASSIGN_OR_RETURN(bn.x, Tensor4d<T>(nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, n, c, h, w));
  TW_ASSIGN_OR_RETURN(bn.params, TensorDescriptor::Create());
  TW_CUDNN_RETURN_IF_ERROR(
      cudnnDeriveBNTensorDescriptor(bn.params.get(), bn.x.get(), CUDNN_BATCHNORM_SPATIAL));
  return bn;
}

// Scratch for LaunchBatchNormTraining*Nhwc.
absl::StatusOr<Tensor> NhwcScratch(KernelContext* ctx, const BatchNorm& bn) {
  return DeviceTemp(ctx, DT_FLOAT,
                    TensorShape({BatchNormNhwcScratchFloats(bn.rows, bn.shape.channels)}));
}

absl::Status CopyOnDevice(const Tensor& from, Tensor* to, cudaStream_t stream) {
  TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(to->raw_data(), from.raw_data(), from.TotalBytes(),
                                          cudaMemcpyDeviceToDevice, stream));
  return absl::OkStatus();
}

// FusedBatchNorm(x, scale, offset, mean, variance) -> y, batch_mean,
// batch_variance, reserve_space_1, reserve_space_2 (, reserve_space_3).
// x and y of T (float, half or bfloat16), the rest float.
template <typename T>
class FusedBatchNormOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaStream_t stream = gpu->compute_stream();
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", x.shape().DebugString()));
    }
    const bool own_kernels = a_.is_training && !a_.nchw;
    TW_ASSIGN_OR_RETURN(BatchNorm bn, Describe<T>(x, a_.nchw, !own_kernels));
    const int64_t c = bn.shape.channels;
    const char* names[] = {"scale", "offset", "mean", "variance"};
    const bool need_stats = !a_.is_training || a_.exponential_avg_factor != 1.0f;
    for (int i = 1; i <= 4; ++i) {
      if (i < 3 || need_stats)
        TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(i), c, names[i - 1]));
    }
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    Tensor* stats[5] = {};
    for (int i = 1; i < ctx->num_outputs(); ++i) {
      TW_ASSIGN_OR_RETURN(stats[i - 1], ctx->allocate_output(i, TensorShape({i == 5 ? 0 : c})));
    }
    if (c == 0) return absl::OkStatus();
    const float one = 1, zero = 0;
    const float* scale = ctx->input(1).data<float>();
    const float* offset = ctx->input(2).data<float>();
    if (!a_.is_training) {
      for (int i = 0; i < 4; ++i)
        TW_RETURN_IF_ERROR(CopyOnDevice(ctx->input(3 + i % 2), stats[i], stream));
      if (bn.rows == 0) return absl::OkStatus();
      absl::MutexLock lock(&gpu->handle_mutex());
      TW_CUDNN_RETURN_IF_ERROR(cudnnBatchNormalizationForwardInference(
          gpu->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, bn.x.get(), x.raw_data(), bn.x.get(),
          y->raw_data(), bn.params.get(), scale, offset, ctx->input(3).data<float>(),
          ctx->input(4).data<float>(), a_.epsilon));
      return absl::OkStatus();
    }
    // The batch mean and unbiased variance. cuDNN's go into zeroed buffers
    // (factor 1, so no stale value is ever multiplied by 0); without rows
    // they stay 0.
    TW_ASSIGN_OR_RETURN(Tensor moments, DeviceTemp(ctx, DT_FLOAT, TensorShape({2, c})));
    float* mean = moments.data<float>();
    float* unbiased = mean + c;
    if (own_kernels && bn.rows > 0) {
      TW_ASSIGN_OR_RETURN(Tensor scratch, NhwcScratch(ctx, bn));
      TW_CUDA_RETURN_IF_ERROR(LaunchBatchNormTrainingNhwc<OnGpu<T>>(
          bn.rows, c, GpuData<T>(x), scale, offset, a_.epsilon, GpuData<T>(*y), mean, unbiased,
          scratch.data<float>(), stream));
    } else {
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(mean, 0, moments.TotalBytes(), stream));
    }
    if (!own_kernels && bn.rows > 0) {
      absl::MutexLock lock(&gpu->handle_mutex());
      TW_CUDNN_RETURN_IF_ERROR(cudnnBatchNormalizationForwardTraining(
          gpu->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, bn.x.get(), x.raw_data(), bn.x.get(),
          y->raw_data(), bn.params.get(), scale, offset, 1.0, mean, unbiased, a_.epsilon, nullptr,
          nullptr));
    }
    TW_CUDA_RETURN_IF_ERROR(LaunchBatchNormFinalize(
        mean, unbiased, bn.rows, a_.exponential_avg_factor,
        need_stats ? ctx->input(3).data<float>() : nullptr,
        need_stats ? ctx->input(4).data<float>() : nullptr, stats[0]->data<float>(),
        stats[1]->data<float>(), stats[2]->data<float>(), stats[3]->data<float>(), c, stream));
    return absl::OkStatus();
  }

 private:
  BnAttrs a_;
};

// FusedBatchNormGrad(y_backprop, x, scale, reserve_space_1,
// reserve_space_2 (, reserve_space_3)) -> x_backprop, scale_backprop,
// offset_backprop, reserve_space_3, reserve_space_4. y_backprop, x and
// x_backprop of T, the rest float.
template <typename T>
class FusedBatchNormGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaStream_t stream = gpu->compute_stream();
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckBatchNormGradShapes(dy, x));
    const bool own_kernels = a_.is_training && !a_.nchw;
    TW_ASSIGN_OR_RETURN(BatchNorm bn, Describe<T>(x, a_.nchw, a_.is_training && a_.nchw));
    const int64_t c = bn.shape.channels;
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(2), c, "scale"));
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(3), c, "reserve_space_1 (mean)"));
    TW_RETURN_IF_ERROR(CheckChannelVector(ctx->input(4), c, "reserve_space_2 (variance)"));
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, x.shape()));
    Tensor* outs[4] = {};
    for (int i = 1; i < ctx->num_outputs(); ++i) {
      TW_ASSIGN_OR_RETURN(outs[i - 1], ctx->allocate_output(i, TensorShape({i <= 2 ? c : 0})));
    }
    if (c == 0) return absl::OkStatus();
    float* scale_bp = outs[0]->data<float>();
    float* offset_bp = outs[1]->data<float>();
    if (bn.rows == 0) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(scale_bp, 0, outs[0]->TotalBytes(), stream));
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(offset_bp, 0, outs[1]->TotalBytes(), stream));
      return absl::OkStatus();
    }
    const float* scale = ctx->input(2).data<float>();
    const float* mean = ctx->input(3).data<float>();
    const float* var = ctx->input(4).data<float>();
    if (!a_.is_training) {
      TW_CUDA_RETURN_IF_ERROR(LaunchBatchNormInferenceGrad<OnGpu<T>>(
          bn.shape, GpuData<T>(dy), GpuData<T>(x), scale, mean, var, a_.epsilon, GpuData<T>(*dx),
          scale_bp, offset_bp, stream));
      return absl::OkStatus();
    }
    if (own_kernels) {
      TW_ASSIGN_OR_RETURN(Tensor scratch, NhwcScratch(ctx, bn));
      TW_CUDA_RETURN_IF_ERROR(LaunchBatchNormTrainingGradNhwc<OnGpu<T>>(
          bn.rows, c, GpuData<T>(dy), GpuData<T>(x), scale, mean, var, a_.epsilon, GpuData<T>(*dx),
          scale_bp, offset_bp, scratch.data<float>(), stream));
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(Tensor inv_std, DeviceTemp(ctx, DT_FLOAT, TensorShape({c})));
    TW_CUDA_RETURN_IF_ERROR(LaunchInverseStd(var, a_.epsilon, inv_std.data<float>(), c, stream));
    const float one = 1, zero = 0;
    absl::MutexLock lock(&gpu->handle_mutex());
    TW_CUDNN_RETURN_IF_ERROR(cudnnBatchNormalizationBackward(
        gpu->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, bn.x.get(), x.raw_data(),
        bn.x.get(), dy.raw_data(), bn.x.get(), dx->raw_data(), bn.params.get(), scale, scale_bp,
        offset_bp, a_.epsilon, mean, inv_std.data<float>()));
    return absl::OkStatus();
  }

 private:
  BnAttrs a_;
};

LrnShape LrnGeometry(const LrnParams& p, const Tensor& t) {
  const int64_t depth = t.dim_size(3);
  return LrnShape{
      depth == 0 ? 0 : t.NumElements() / depth, depth, p.radius, p.bias, p.alpha, p.beta};
}

class LrnOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return p_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional, got ", in.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const LrnShape s = LrnGeometry(p_, in);
    TW_CUDA_RETURN_IF_ERROR(
        LaunchLrn(s, in.data<float>(), out->data<float>(), gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  LrnParams p_;
};

// LRNGrad(input_grads, input_image, output_image).
class LrnGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return p_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& dy = ctx->input(0);
    const Tensor& in = ctx->input(1);
    const Tensor& out = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckLrnGradShapes(dy, in, out));
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, in.shape()));
    if (in.NumElements() == 0) return absl::OkStatus();
    const LrnShape s = LrnGeometry(p_, in);
    TW_ASSIGN_OR_RETURN(Tensor scratch,
                        DeviceTemp(ctx, DT_FLOAT, TensorShape({2, in.NumElements()})));
    TW_CUDA_RETURN_IF_ERROR(LaunchLrnGrad(s, dy.data<float>(), in.data<float>(),
                                          scratch.data<float>(), dx->data<float>(),
                                          gpu->compute_stream()));
    return absl::OkStatus();
  }

 private:
  LrnParams p_;
};

// FusedBatchNorm (float only, as TF's) and V2/V3 with x of T and U float.
template <typename T>
void RegisterBatchNorm() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  if constexpr (std::is_same_v<T, float>) {
    RegisterKernel(on("FusedBatchNorm"), MakeFactory<FusedBatchNormOp<T>>());
    RegisterKernel(on("FusedBatchNormGrad"), MakeFactory<FusedBatchNormGradOp<T>>());
  }
  for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    RegisterKernel(on(op).TypeConstraint("U", DT_FLOAT), MakeFactory<FusedBatchNormOp<T>>());
  }
  for (const char* op : {"FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    RegisterKernel(on(op).TypeConstraint("U", DT_FLOAT), MakeFactory<FusedBatchNormGradOp<T>>());
  }
}

TW_REGISTER_KERNELS(gpu_norm) {
  RegisterBatchNorm<float>();
  RegisterBatchNorm<half>();
  RegisterBatchNorm<bfloat16>();
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint("T", DT_FLOAT);
  };
  RegisterKernel(on("LRN"), MakeFactory<LrnOp>());
  RegisterKernel(on("LRNGrad"), MakeFactory<LrnGradOp>());
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
