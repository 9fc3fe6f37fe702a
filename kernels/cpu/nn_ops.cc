// Neural-network kernels that are not windowed: BiasAdd(+Grad), the ReLU
// family and ELU with their gradients, Softmax, LogSoftmax, the two
// softmax cross-entropy losses, L2Loss and InTopK.
//
// Buffers: logits/features [batch, classes] (Softmax: any rank >= 1, over
// the last dim); labels [batch, classes] or sparse [batch] int32/int64;
// loss [batch]; backprop [batch, classes].
#include <cmath>

#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "framework/threadpool.h"
#include "kernels/cpu/cwise_ops.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_attrs.h"

namespace towerflow {
namespace {

using cwise::SameShapeBinaryOp;
using cwise::UnaryOp;

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(nchw_, BiasIsNchw(c));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& v = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    if (v.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input tensor must be at least 2D: ", v.shape().DebugString()));
    }
    if (bias.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Biases must be 1D: ", bias.shape().DebugString()));
    }
    const int channel_dim = nchw_ ? 1 : v.dims() - 1;
    const int64_t c = v.dim_size(channel_dim);
    if (bias.dim_size(0) != c) {
      return absl::InvalidArgumentError(
          absl::StrCat("Must provide as many biases as the channel dimension of the input tensor: ",
                       bias.shape().DebugString(), " vs. ", v.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, v.shape()));
    if (v.NumElements() == 0) return absl::OkStatus();
    const auto& d = ctx->eigen_cpu_device();
    const int64_t outer = nchw_ ? v.dim_size(0) : v.NumElements() / c;
    const int64_t inner = nchw_ ? v.NumElements() / (outer * c) : 1;
    const std::array<int64_t, 3> dims{outer, c, inner};
    const std::array<Eigen::DenseIndex, 3> bcast{outer, 1, inner};
    out->shaped<T, 3>(dims).device(d) =
        v.shaped<T, 3>(dims) + bias.shaped<T, 3>({1, c, 1}).broadcast(bcast);
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
    const Tensor& g = ctx->input(0);
    if (g.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input tensor must be at least 2D: ", g.shape().DebugString()));
    }
    const int64_t c = g.dim_size(nchw_ ? 1 : g.dims() - 1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({c})));
    if (c == 0) return absl::OkStatus();
    if (g.NumElements() == 0) {
      out->flat<T>().setZero();
      return absl::OkStatus();
    }
    const int64_t outer = nchw_ ? g.dim_size(0) : g.NumElements() / c;
    const int64_t inner = nchw_ ? g.NumElements() / (outer * c) : 1;
    if (inner == 1) return ColumnSums(ctx, g.data<T>(), outer, c, out->data<T>());
    const Eigen::array<Eigen::DenseIndex, 2> axes{0, 2};
    out->flat<T>().device(ctx->eigen_cpu_device()) = g.shaped<T, 3>({outer, c, inner}).sum(axes);
    return absl::OkStatus();
  }

 private:
  // out[j] = sum_i g[i, j] for row-major g [rows, c]: blocks of rows are
  // summed into partial rows on the pool (contiguous, vectorised), then
  // the partials are added.
  static absl::Status ColumnSums(KernelContext* ctx, const T* g, int64_t rows, int64_t c, T* out) {
    const int64_t blocks = std::min<int64_t>(rows, 4 * ctx->intra_op_pool()->NumThreads());
    TW_ASSIGN_OR_RETURN(Tensor partial,
                        ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({blocks, c})));
    T* p = partial.data<T>();
    std::fill_n(p, blocks * c, T(0));
    const int64_t per_block = (rows + blocks - 1) / blocks;
    ctx->intra_op_pool()->ParallelFor(blocks, per_block * c, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        T* acc = p + b * c;
        for (int64_t r = b * per_block; r < std::min(rows, (b + 1) * per_block); ++r) {
          const T* row = g + r * c;
          for (int64_t j = 0; j < c; ++j) acc[j] += row[j];
        }
      }
    });
    std::copy_n(p, c, out);
    for (int64_t b = 1; b < blocks; ++b) {
      for (int64_t j = 0; j < c; ++j) out[j] += p[b * c + j];
    }
    return absl::OkStatus();
  }

 private:
  bool nchw_ = false;
};

// y[i,:] = x[i,:] - log sum_j exp(x[i,j]), shifted by the row maximum for
// stability. Row statistics go through `stat` [rows]: a reduction inside a
// broadcast would be re-evaluated per element, and read y while it is being
// written when y aliases x.
template <typename T>
void LogSoftmaxRows(const Eigen::ThreadPoolDevice& d, TensorMap<T, 2> x, TensorMap<T, 1> stat,
                    TensorMap<T, 2> y) {
  const int64_t rows = x.dimension(0), cols = x.dimension(1);
  const Eigen::array<Eigen::DenseIndex, 1> along{1};
  const Eigen::array<Eigen::DenseIndex, 2> col{rows, 1}, bcast{1, cols};
  stat.device(d) = x.maximum(along);
  y.device(d) = x - stat.reshape(col).broadcast(bcast);
  stat.device(d) = y.exp().sum(along).log();
  y.device(d) = y - stat.reshape(col).broadcast(bcast);
}

// loss[i] = -sum_j labels[i,j] log softmax(logits)[i,j];
// backprop = softmax(logits) - labels. `stat` is a [rows] scratch vector.
template <typename T>
void SoftmaxXent(const Eigen::ThreadPoolDevice& d, TensorMap<T, 2> logits, TensorMap<T, 2> labels,
                 TensorMap<T, 1> stat, TensorMap<T, 1> loss, TensorMap<T, 2> backprop) {
  const Eigen::array<Eigen::DenseIndex, 1> along{1};
  LogSoftmaxRows<T>(d, logits, stat, backprop);  // backprop holds log softmax first
  loss.device(d) = (-labels * backprop).sum(along);
  backprop.device(d) = backprop.exp() - labels;
}

absl::StatusOr<Tensor> RowScratch(KernelContext* ctx, int64_t rows, DataType dtype) {
  return ctx->allocate_temp(dtype, TensorShape({rows}));
}

// Softmax / LogSoftmax over the last dimension.
template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    if (logits.dims() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("logits must have >= 1 dimension, got ", logits.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, logits.shape()));
    if (logits.NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(Tensor stat,
                        RowScratch(ctx, logits.flat_inner_dims<T>().dimension(0), logits.dtype()));
    auto y = out->flat_inner_dims<T>();
    LogSoftmaxRows<T>(ctx->eigen_cpu_device(), logits.flat_inner_dims<T>(), stat.vec<T>(), y);
    if constexpr (!kLog) y.device(ctx->eigen_cpu_device()) = y.exp();
    return absl::OkStatus();
  }
};

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    if (logits.dims() != 2 || logits.shape() != labels.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("logits and labels must be 2-D and of the same shape, got logits ",
                       logits.shape().DebugString(), " and labels ", labels.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({logits.dim_size(0)})));
    TW_ASSIGN_OR_RETURN(Tensor * backprop, ctx->allocate_output(1, logits.shape()));
    if (logits.NumElements() == 0) {
      loss->flat<T>().setZero();
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(Tensor stat, RowScratch(ctx, logits.dim_size(0), logits.dtype()));
    SoftmaxXent<T>(ctx->eigen_cpu_device(), logits.matrix<T>(), labels.matrix<T>(), stat.vec<T>(),
                   loss->vec<T>(), backprop->matrix<T>());
    return absl::OkStatus();
  }
};

template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    if (logits.dims() != 2 || labels.dims() != 1 || labels.dim_size(0) != logits.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "logits must be 2-D and labels 1-D with the same first dimension, got logits ",
          logits.shape().DebugString(), " and labels ", labels.shape().DebugString()));
    }
    const int64_t rows = logits.dim_size(0), cols = logits.dim_size(1);
    if (cols == 0 && rows > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Must have at least one class, but got logits shape ", logits.shape().DebugString()));
    }
    const Index* l = labels.data<Index>();
    for (int64_t i = 0; i < rows; ++i) {
      if (l[i] < 0 || l[i] >= cols) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Received a label value of ", l[i], " which is outside the valid range of [0, ", cols,
            ").  Label values: ", labels.SummarizeValue(10)));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({rows})));
    TW_ASSIGN_OR_RETURN(Tensor * backprop, ctx->allocate_output(1, logits.shape()));
    if (rows == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(Tensor dense, ctx->allocate_temp(DataTypeToEnum<T>::value, logits.shape()));
    auto dm = dense.matrix<T>();
    dm.setZero();
    for (int64_t i = 0; i < rows; ++i) dm(i, l[i]) = T(1);
    TW_ASSIGN_OR_RETURN(Tensor stat, RowScratch(ctx, logits.dim_size(0), logits.dtype()));
    SoftmaxXent<T>(ctx->eigen_cpu_device(), logits.matrix<T>(), dm, stat.vec<T>(), loss->vec<T>(),
                   backprop->matrix<T>());
    return absl::OkStatus();
  }
};

template <typename T>
class L2LossOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    if (x.NumElements() == 0) {
      *out->data<T>() = T(0);
      return absl::OkStatus();
    }
    out->shaped<T, 0>({}).device(ctx->eigen_cpu_device()) = x.flat<T>().square().sum() / T(2);
    return absl::OkStatus();
  }
};

// InTopK(predictions [b, c], targets [b], k): is the target's prediction
// among the k largest? Non-finite predictions and out-of-range targets are
// never in the top k (as TF).
template <typename Index>
class InTopKOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if (c.def().op() == "InTopK") TW_RETURN_IF_ERROR(c.GetAttr("k", &k_attr_));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& pred = ctx->input(0);
    const Tensor& targets = ctx->input(1);
    int64_t k = k_attr_;
    if (ctx->num_inputs() > 2) {
      TW_ASSIGN_OR_RETURN(k, IntScalar(ctx->input(2), "k"));
    }
    if (pred.dims() != 2 || targets.dims() != 1 || targets.dim_size(0) != pred.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("predictions must be 2-D and targets 1-D of batch size, got ",
                       pred.shape().DebugString(), " and ", targets.shape().DebugString()));
    }
    const int64_t rows = pred.dim_size(0), cols = pred.dim_size(1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({rows})));
    const auto p = pred.matrix<float>();
    for (int64_t i = 0; i < rows; ++i) {
      const Index t = targets.data<Index>()[i];
      bool in = false;
      if (t >= 0 && t < cols && std::isfinite(p(i, t))) {
        int64_t greater = 0;
        for (int64_t j = 0; j < cols; ++j) greater += p(i, j) > p(i, t);
        in = greater < k;
      }
      out->data<bool>()[i] = in;
    }
    return absl::OkStatus();
  }

 private:
  int64_t k_attr_ = 0;
};

template <typename T>
using ReluOp = UnaryOp<T, functor::Relu<T>>;
template <typename T>
using Relu6Op = UnaryOp<T, functor::Relu6<T>>;
template <typename T>
using EluOp = UnaryOp<T, functor::Elu<T>>;
template <typename T>
using ReluGradOp = SameShapeBinaryOp<T, functor::ReluGrad<T>>;
template <typename T>
using Relu6GradOp = SameShapeBinaryOp<T, functor::Relu6Grad<T>>;
template <typename T>
using EluGradOp = SameShapeBinaryOp<T, functor::EluGrad<T>>;
template <typename T>
using SoftplusOp = UnaryOp<T, functor::Softplus<T>>;
template <typename T>
using SoftplusGradOp = SameShapeBinaryOp<T, functor::SoftplusGrad<T>>;
template <typename T>
using SoftsignOp = UnaryOp<T, functor::Softsign<T>>;
template <typename T>
using SoftsignGradOp = SameShapeBinaryOp<T, functor::SoftsignGrad<T>>;
template <typename T>
using SeluOp = UnaryOp<T, functor::Selu<T>>;
template <typename T>
using SeluGradOp = SameShapeBinaryOp<T, functor::SeluGrad<T>>;

// LeakyRelu: x where x > 0, else alpha * x.
template <typename T>
class LeakyReluOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("alpha", &alpha_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const T alpha = static_cast<T>(alpha_);
    y->flat<T>().device(ctx->eigen_cpu_device()) =
        (x.flat<T>() > T(0)).select(x.flat<T>(), x.flat<T>() * alpha);
    return absl::OkStatus();
  }

 private:
  float alpha_ = 0.2f;
};

// LeakyReluGrad(gradients, features): gradients where features > 0, else
// alpha * gradients.
template <typename T>
class LeakyReluGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("alpha", &alpha_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& f = ctx->input(1);
    if (g.shape() != f.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("LeakyReluGrad needs both inputs of one shape, got ",
                       g.shape().DebugString(), " and ", f.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    const T alpha = static_cast<T>(alpha_);
    out->flat<T>().device(ctx->eigen_cpu_device()) =
        (f.flat<T>() > T(0)).select(g.flat<T>(), g.flat<T>() * alpha);
    return absl::OkStatus();
  }

 private:
  float alpha_ = 0.2f;
};
template <typename T>
using SoftmaxKernel = SoftmaxOp<T, false>;
template <typename T>
using LogSoftmaxKernel = SoftmaxOp<T, true>;
template <typename T>
using SparseXent32 = SparseSoftmaxXentOp<T, int32_t>;
template <typename T>
using SparseXent64 = SparseSoftmaxXentOp<T, int64_t>;

TW_REGISTER_KERNELS(nn_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<ReluOp, float, double, int32_t, int64_t>(cpu("Relu"), "T");
  RegisterTypedKernels<Relu6Op, float, double, int32_t, int64_t>(cpu("Relu6"), "T");
  RegisterTypedKernels<EluOp, float, double>(cpu("Elu"), "T");
  RegisterTypedKernels<ReluGradOp, float, double, int32_t, int64_t, uint8_t>(cpu("ReluGrad"), "T");
  RegisterTypedKernels<Relu6GradOp, float, double, int32_t, int64_t, uint8_t>(cpu("Relu6Grad"),
                                                                              "T");
  RegisterTypedKernels<EluGradOp, float, double>(cpu("EluGrad"), "T");
  RegisterTypedKernels<SoftplusOp, float, double>(cpu("Softplus"), "T");
  RegisterTypedKernels<SoftplusGradOp, float, double>(cpu("SoftplusGrad"), "T");
  RegisterTypedKernels<SoftsignOp, float, double>(cpu("Softsign"), "T");
  RegisterTypedKernels<SoftsignGradOp, float, double>(cpu("SoftsignGrad"), "T");
  RegisterTypedKernels<SeluOp, float, double>(cpu("Selu"), "T");
  RegisterTypedKernels<SeluGradOp, float, double>(cpu("SeluGrad"), "T");
  RegisterTypedKernels<LeakyReluOp, float, double>(cpu("LeakyRelu"), "T");
  RegisterTypedKernels<LeakyReluGradOp, float, double>(cpu("LeakyReluGrad"), "T");
  // Integers too, as TensorFlow's CPU kernels (int32 biases in quantized and
  // index arithmetic graphs).
  RegisterTypedKernels<BiasAddOp, float, double, int32_t, int64_t, uint8_t>(cpu("BiasAdd"), "T");
  RegisterTypedKernels<BiasAddOp, float, double, int32_t, int64_t, uint8_t>(cpu("BiasAddV1"), "T");
  RegisterTypedKernels<BiasAddGradOp, float, double, int32_t, int64_t, uint8_t>(cpu("BiasAddGrad"),
                                                                                "T");
  RegisterTypedKernels<SoftmaxKernel, float, double>(cpu("Softmax"), "T");
  RegisterTypedKernels<LogSoftmaxKernel, float, double>(cpu("LogSoftmax"), "T");
  RegisterTypedKernels<SoftmaxXentOp, float, double>(cpu("SoftmaxCrossEntropyWithLogits"), "T");
  RegisterTypedKernels<SparseXent32, float, double>(
      cpu("SparseSoftmaxCrossEntropyWithLogits").TypeConstraint<int32_t>("Tlabels"), "T");
  RegisterTypedKernels<SparseXent64, float, double>(
      cpu("SparseSoftmaxCrossEntropyWithLogits").TypeConstraint<int64_t>("Tlabels"), "T");
  RegisterTypedKernels<L2LossOp, float, double>(cpu("L2Loss"), "T");
  RegisterTypedKernels<InTopKOp, int32_t, int64_t>(cpu("InTopKV2"), "T");
  RegisterTypedKernels<InTopKOp, int32_t, int64_t>(cpu("InTopK"), "T");
}

}  // namespace
}  // namespace towerflow
