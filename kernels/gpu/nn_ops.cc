// GPU BiasAdd, BiasAddGrad, L2Loss, softmax (on cuDNN) and the cross-entropy
// losses. Class labels of type int32 arrive in host memory, so they are
// checked on the host with the CPU kernels' messages before anything is
// launched.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/cwise_functors.h"
#include "kernels/gpu/cudnn_util.h"
#include "kernels/gpu/cwise_kernels.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "kernels/gpu/reduction_kernels.h"
#include "kernels/nn_attrs.h"

namespace towerflow {
namespace gpu {
namespace {

// BiasAdd: value [..., C] (NHWC) or [N, C, ...] (NCHW) plus bias [C].
template <typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(nchw_, BiasIsNchw(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    const int channel_dim = nchw_ ? 1 : x.dims() - 1;
    if (bias.dims() != 1 || x.dims() < (nchw_ ? 3 : 2) ||
        x.dim_size(channel_dim) != bias.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("BiasAdd: bias ", bias.shape().DebugString(), " does not fit value ",
                       x.shape().DebugString(), " in ", nchw_ ? "NCHW" : "NHWC"));
    }
    const int64_t c = bias.dim_size(0);
    const int64_t n = x.NumElements();
    Broadcast b;
    if (nchw_) {
      const int64_t inner = c == 0 ? 0 : n / x.dim_size(0) / c;
      b.rank = 3;
      const int64_t dims[] = {x.dim_size(0), c, inner};
      const int64_t xs[] = {c * inner, inner, 1};
      const int64_t ys[] = {0, 1, 0};
      for (int d = 0; d < 3; ++d)
        b.dims[d] = dims[d], b.x_strides[d] = xs[d], b.y_strides[d] = ys[d];
    } else {
      b.rank = 2;
      b.dims[0] = c == 0 ? 0 : n / c, b.dims[1] = c;
      b.x_strides[0] = c, b.x_strides[1] = 1;
      b.y_strides[0] = 0, b.y_strides[1] = 1;
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    TW_CUDA_RETURN_IF_ERROR((LaunchBinary<OnGpu<T>, functor::Add<GpuMath<T>>>(
        GpuData<T>(x), GpuData<T>(bias), GpuData<T>(*out), n, &b, gpu->compute_stream())));
    return absl::OkStatus();
  }

 private:
  bool nchw_ = false;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(nchw_, BiasIsNchw(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& dy = ctx->input(0);
    if (dy.dims() < (nchw_ ? 3 : 2)) {
      return absl::InvalidArgumentError(absl::StrCat("BiasAddGrad: input must be at least ",
                                                     nchw_ ? 3 : 2, "-D, got ",
                                                     dy.shape().DebugString()));
    }
    const int channel_dim = nchw_ ? 1 : dy.dims() - 1;
    const int64_t c = dy.dim_size(channel_dim);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({c})));
    if (c == 0) return absl::OkStatus();
    const int64_t n = dy.NumElements();
    if (!nchw_) {
      TW_CUDA_RETURN_IF_ERROR(LaunchReduce<OnGpu<T>>(
          ReduceFn::kSum, GpuData<T>(dy), GpuData<T>(*out), 1, n / c, c, 1, gpu->compute_stream()));
      return absl::OkStatus();
    }
    // [N, C, HW]: sum HW into [N, C], then N into [C]; the partial sums of
    // a 16-bit type in float32, so the sum is rounded once.
    using Partial = GpuMath<T>;
    const int64_t batch = dy.dim_size(0), inner = batch == 0 ? 0 : n / batch / c;
    TW_ASSIGN_OR_RETURN(Tensor partial,
                        DeviceTemp(ctx, DataTypeToEnum<Partial>::value, TensorShape({batch, c})));
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchReduce<OnGpu<T>, Partial>(ReduceFn::kSum, GpuData<T>(dy), partial.data<Partial>(),
                                         batch * c, inner, 1, 1, gpu->compute_stream())));
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchReduce<Partial, OnGpu<T>>(ReduceFn::kSum, partial.data<Partial>(), GpuData<T>(*out),
                                         1, batch, c, 1, gpu->compute_stream())));
    return absl::OkStatus();
  }

 private:
  bool nchw_ = false;
};

// Rows and columns of a [..., classes] input.
absl::Status RowsCols(const Tensor& t, const char* what, int64_t* rows, int64_t* cols) {
  if (t.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must have rank >= 1, got ", t.shape().DebugString()));
  }
  *cols = t.dim_size(t.dims() - 1);
  *rows = *cols == 0 ? 0 : t.NumElements() / *cols;
  return absl::OkStatus();
}

// On cuDNN (the accurate, max-subtracting algorithm, one softmax per row);
// shapes past cuDNN's int sizes on our own row kernel.
template <typename T>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(bool log) : log_(log) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& logits = ctx->input(0);
    int64_t rows, cols;
    TW_RETURN_IF_ERROR(RowsCols(logits, "logits", &rows, &cols));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, logits.shape()));
    if (rows == 0) return absl::OkStatus();
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();
    if (rows * cols > kIntMax) {
      TW_CUDA_RETURN_IF_ERROR(LaunchSoftmax<T>(logits.data<T>(), out->data<T>(), rows, cols, log_,
                                               gpu->compute_stream()));
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(TensorDescriptor d, Tensor4d<T>(CUDNN_TENSOR_NCHW, rows, cols, 1, 1));
    const T one = 1, zero = 0;
    absl::MutexLock lock(&gpu->handle_mutex());
    TW_CUDNN_RETURN_IF_ERROR(cudnnSoftmaxForward(gpu->cudnn(),
                                                 log_ ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                                 CUDNN_SOFTMAX_MODE_INSTANCE, &one, d.get(),
                                                 logits.data<T>(), &zero, d.get(), out->data<T>()));
    return absl::OkStatus();
  }

 private:
  const bool log_;
};

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    if (logits.dims() != 2 || logits.shape() != labels.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "logits and labels must be 2-D and of one shape: logits_size=",
          logits.shape().DebugString(), " labels_size=", labels.shape().DebugString()));
    }
    const int64_t rows = logits.dim_size(0), cols = logits.dim_size(1);
    TW_ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({rows})));
    TW_ASSIGN_OR_RETURN(Tensor * backprop, ctx->allocate_output(1, logits.shape()));
    TW_CUDA_RETURN_IF_ERROR(LaunchSoftmaxXent<T>(logits.data<T>(), labels.data<T>(),
                                                 loss->data<T>(), backprop->data<T>(), rows, cols,
                                                 gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// Labels: int32 (host memory: range-checked like the CPU kernel, then
// copied over) or int64 (device memory; out-of-range rows come out NaN, as
// in TF's GPU kernel).
template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    if (logits.dims() != 2 || labels.dims() != 1 || labels.dim_size(0) != logits.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("logits must be 2-D and labels 1-D with as many rows: logits ",
                       logits.shape().DebugString(), ", labels ", labels.shape().DebugString()));
    }
    const int64_t rows = logits.dim_size(0), cols = logits.dim_size(1);
    TW_ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({rows})));
    TW_ASSIGN_OR_RETURN(Tensor * backprop, ctx->allocate_output(1, logits.shape()));
    const Index* device_labels = labels.data<Index>();
    Tensor copied;
    if (ctx->input_on_host(1)) {
      for (int64_t i = 0; i < rows; ++i) {
        const Index l = labels.data<Index>()[i];
        if (l < 0 || l >= cols) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Received a label value of ", l, " which is outside the valid range of [0, ", cols,
              ").  Label values: row ", i));
        }
      }
      TW_ASSIGN_OR_RETURN(copied, DeviceTemp(ctx, labels.dtype(), labels.shape()));
      TW_RETURN_IF_ERROR(gpu->CopyHostBytes(labels, &copied));
      device_labels = copied.data<Index>();
    }
    TW_CUDA_RETURN_IF_ERROR((LaunchSparseSoftmaxXent<T, Index>(logits.data<T>(), device_labels,
                                                               loss->data<T>(), backprop->data<T>(),
                                                               rows, cols, gpu->compute_stream())));
    return absl::OkStatus();
  }
};

// L2Loss: sum(x^2) / 2, a scalar, as a square then a halved sum.
template <typename T>
class L2LossOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    const int64_t n = x.NumElements();
    if (n == 0) {
      TW_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), gpu->compute_stream()));
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(Tensor squares, DeviceTemp(ctx, x.dtype(), TensorShape({n})));
    TW_CUDA_RETURN_IF_ERROR((LaunchUnary<T, functor::Square<T>>(x.data<T>(), squares.data<T>(), n,
                                                                gpu->compute_stream())));
    TW_CUDA_RETURN_IF_ERROR(LaunchReduce<T>(ReduceFn::kSum, squares.data<T>(), out->data<T>(), 1, n,
                                            1, T(0.5), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

template <typename T>
void RegisterBias() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("BiasAdd"), MakeFactory<BiasAddOp<T>>());
  RegisterKernel(on("BiasAddGrad"), MakeFactory<BiasAddGradOp<T>>());
}

template <typename T>
void RegisterForType() {
  RegisterBias<T>();
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("L2Loss"), MakeFactory<L2LossOp<T>>());
  RegisterKernel(on("Softmax"), [] { return std::make_unique<SoftmaxOp<T>>(false); });
  RegisterKernel(on("LogSoftmax"), [] { return std::make_unique<SoftmaxOp<T>>(true); });
  RegisterKernel(on("SoftmaxCrossEntropyWithLogits"), MakeFactory<SoftmaxXentOp<T>>());
  // int32 labels, in host memory, are only range-checked and copied to the
  // GPU: a replayed step may feed them (KernelDef::copied_host_inputs).
  RegisterKernel(on("SparseSoftmaxCrossEntropyWithLogits")
                     .TypeConstraint("Tlabels", DT_INT32)
                     .CopiedHostInput("labels"),
                 MakeFactory<SparseSoftmaxXentOp<T, int32_t>>());
  RegisterKernel(on("SparseSoftmaxCrossEntropyWithLogits").TypeConstraint("Tlabels", DT_INT64),
                 MakeFactory<SparseSoftmaxXentOp<T, int64_t>>());
}

TW_REGISTER_KERNELS(gpu_nn) {
  RegisterForType<float>();
  RegisterForType<double>();
  // half and bfloat16: the bias and its gradient (the losses and softmax
  // stay float32 in mixed precision: runtime/auto_mixed_precision.h).
  RegisterBias<half>();
  RegisterBias<bfloat16>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
