// GPU reductions (Sum, Mean, Max, Min, Prod over any axes; ArgMax/ArgMin;
// BiasAddGrad), softmax (on cuDNN) and the cross-entropy losses, and MatMul
// and BatchMatMul on cuBLAS.
// Axes and class labels of type int32 arrive in host memory, so they are
// checked on the host with the CPU kernels' messages before anything is
// launched.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "kernels/bcast.h"
#include "kernels/gpu/cudnn_util.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/launch.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace gpu {
namespace {

// The axes in `t` (int32 or int64, host memory), made non-negative, sorted
// and unique. InvalidArgument for one outside [-rank, rank).
absl::StatusOr<std::vector<int>> Axes(const Tensor& t, int rank) {
  std::vector<int> axes;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    int64_t a = t.dtype() == DT_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension (", a,
                                                     " for input with ", rank, " dimension(s)"));
    }
    axes.push_back(static_cast<int>(a < 0 ? a + rank : a));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

template <typename T>
class ReduceOp : public OpKernel {
 public:
  ReduceOp(ReduceFn fn, bool mean) : fn_(fn), mean_(mean) {}
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("keep_dims", &keep_dims_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int> axes, Axes(ctx->input(1), in.dims()));
    std::vector<bool> reduced(in.dims(), false);
    for (int a : axes) reduced[a] = true;
    TensorShape out_shape;
    int64_t count = 1;
    for (int d = 0; d < in.dims(); ++d) {
      if (!reduced[d]) {
        TW_RETURN_IF_ERROR(out_shape.AddDim(in.dim_size(d)));
      } else {
        count *= in.dim_size(d);
        if (keep_dims_) TW_RETURN_IF_ERROR(out_shape.AddDim(1));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Each run of adjacent reduced axes, last first, is one [outer, r,
    // inner] pass; a run reduced to 1 leaves the others' layout as it was.
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    std::vector<std::pair<int, int>> runs;  // [begin, end)
    for (int d = 0; d < in.dims(); ++d) {
      if (!reduced[d]) continue;
      if (!runs.empty() && runs.back().second == d) {
        runs.back().second = d + 1;
      } else {
        runs.push_back({d, d + 1});
      }
    }
    const T* src = in.data<T>();
    Tensor scratch;
    if (runs.empty()) {  // nothing to reduce: a copy
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out->raw_data(), in.raw_data(), in.TotalBytes(),
                                              cudaMemcpyDeviceToDevice, gpu->compute_stream()));
      return absl::OkStatus();
    }
    for (int k = static_cast<int>(runs.size()) - 1; k >= 0; --k) {
      int64_t outer = 1, r = 1, inner = 1;
      for (int d = 0; d < runs[k].first; ++d) outer *= dims[d];
      for (int d = runs[k].first; d < runs[k].second; ++d) r *= dims[d], dims[d] = 1;
      for (int d = runs[k].second; d < static_cast<int>(dims.size()); ++d) inner *= dims[d];
      const bool last = k == 0;
      T* dst = out->data<T>();
      if (!last) {
        Tensor next;
        TW_ASSIGN_OR_RETURN(next, DeviceTemp(ctx, in.dtype(), TensorShape({outer * inner})));
        dst = next.data<T>();
        TW_CUDA_RETURN_IF_ERROR(
            LaunchReduce<T>(fn_, src, dst, outer, r, inner, T(1), gpu->compute_stream()));
        scratch = std::move(next);  // keeps src alive for the next pass
        src = dst;
        continue;
      }
      // A mean over nothing is 0 * inf = NaN, as in TF.
      const T scale = mean_ ? T(1) / static_cast<T>(count) : T(1);
      TW_CUDA_RETURN_IF_ERROR(
          LaunchReduce<T>(fn_, src, dst, outer, r, inner, scale, gpu->compute_stream()));
    }
    return absl::OkStatus();
  }

 private:
  const ReduceFn fn_;
  const bool mean_;
  bool keep_dims_ = false;
};

template <typename T, typename Index>
class ArgReduceOp : public OpKernel {
 public:
  explicit ArgReduceOp(bool is_max) : is_max_(is_max) {}
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<int> axes, Axes(ctx->input(1), in.dims()));
    if (axes.size() != 1) return absl::InvalidArgumentError("dimension must be a scalar");
    const int axis = axes[0];
    if (in.dim_size(axis) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reduction axis ", axis, " is empty in shape ", in.shape().DebugString()));
    }
    TensorShape out_shape;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < in.dims(); ++d) {
      if (d == axis) continue;
      TW_RETURN_IF_ERROR(out_shape.AddDim(in.dim_size(d)));
      (d < axis ? outer : inner) *= in.dim_size(d);
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    TW_CUDA_RETURN_IF_ERROR(
        (LaunchArgReduce<T, Index>(in.data<T>(), out->data<Index>(), outer, in.dim_size(axis),
                                   inner, is_max_, gpu->compute_stream())));
    return absl::OkStatus();
  }

 private:
  const bool is_max_;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_ASSIGN_OR_RETURN(nchw_, IsNchw(c));
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
      TW_CUDA_RETURN_IF_ERROR(LaunchReduce<T>(ReduceFn::kSum, dy.data<T>(), out->data<T>(), 1,
                                              n / c, c, T(1), gpu->compute_stream()));
      return absl::OkStatus();
    }
    // [N, C, HW]: sum HW into [N, C], then N into [C].
    const int64_t batch = dy.dim_size(0), inner = batch == 0 ? 0 : n / batch / c;
    TW_ASSIGN_OR_RETURN(Tensor partial, DeviceTemp(ctx, dy.dtype(), TensorShape({batch, c})));
    TW_CUDA_RETURN_IF_ERROR(LaunchReduce<T>(ReduceFn::kSum, dy.data<T>(), partial.data<T>(),
                                            batch * c, inner, 1, T(1), gpu->compute_stream()));
    TW_CUDA_RETURN_IF_ERROR(LaunchReduce<T>(ReduceFn::kSum, partial.data<T>(), out->data<T>(), 1,
                                            batch, c, T(1), gpu->compute_stream()));
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
      TW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(copied.raw_data(), labels.raw_data(),
                                              labels.TotalBytes(), cudaMemcpyHostToDevice,
                                              gpu->compute_stream()));
      // Pageable memory: the call returns once the bytes are staged.
      device_labels = copied.data<Index>();
    }
    TW_CUDA_RETURN_IF_ERROR((LaunchSparseSoftmaxXent<T, Index>(logits.data<T>(), device_labels,
                                                               loss->data<T>(), backprop->data<T>(),
                                                               rows, cols, gpu->compute_stream())));
    return absl::OkStatus();
  }
};

// MatMul on cuBLAS. Row-major C = op(A) op(B) is column-major
// C^T = op(B)^T op(A)^T, so B goes first.
template <typename T>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("transpose_a", &transpose_a_));
    return c.GetAttr("transpose_b", &transpose_b_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const MatMulDims d,
                        PlanMatMul(a.shape(), b.shape(), transpose_a_, transpose_b_));
    const int64_t m = d.m, n = d.n, k = d.k;
    TW_ASSIGN_OR_RETURN(Tensor * c, ctx->allocate_output(0, TensorShape({m, n})));
    if (m == 0 || n == 0) return absl::OkStatus();
    if (k == 0) {
      TW_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(c->raw_data(), 0, c->TotalBytes(), gpu->compute_stream()));
      return absl::OkStatus();
    }
    const T one = 1, zero = 0;
    const cublasOperation_t op_a = transpose_a_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = transpose_b_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = static_cast<int>(a.dim_size(1)), ldb = static_cast<int>(b.dim_size(1));
    absl::MutexLock lock(&gpu->handle_mutex());
    if constexpr (std::is_same_v<T, float>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
          gpu->cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
          &one, b.data<T>(), ldb, a.data<T>(), lda, &zero, c->data<T>(), static_cast<int>(n)));
    } else {
      TW_CUBLAS_RETURN_IF_ERROR(cublasDgemm(
          gpu->cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
          &one, b.data<T>(), ldb, a.data<T>(), lda, &zero, c->data<T>(), static_cast<int>(n)));
    }
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
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
    TW_CUDA_RETURN_IF_ERROR(
        LaunchUnary<T>(UnaryFn::kSquare, x.data<T>(), squares.data<T>(), n, gpu->compute_stream()));
    TW_CUDA_RETURN_IF_ERROR(LaunchReduce<T>(ReduceFn::kSum, squares.data<T>(), out->data<T>(), 1, n,
                                            1, T(0.5), gpu->compute_stream()));
    return absl::OkStatus();
  }
};

// BatchMatMul / BatchMatMulV2 (batch dims broadcast) on cuBLAS: one
// strided-batched GEMM when each operand's matrices are all distinct or all
// one (broadcast), else a batched GEMM over pointer arrays copied to the
// device. Row-major as in MatMulOp.
template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("adj_x", &adj_x_));
    return c.GetAttr("adj_y", &adj_y_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const BatchMatMulPlan plan,
                        PlanBatchMatMul(x.shape(), y.shape(), adj_x_, adj_y_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (plan.out_shape.num_elements() == 0) return absl::OkStatus();
    cudaStream_t stream = gpu->compute_stream();
    const int64_t m = plan.m, n = plan.n, k = plan.k;
    if (k == 0) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream));
      return absl::OkStatus();
    }
    const std::vector<int64_t>& xi = plan.x_index;
    const std::vector<int64_t>& yi = plan.y_index;
    const int64_t batches = static_cast<int64_t>(xi.size());
    if (batches > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError("too many matrices for cuBLAS");
    }
    const int rx = x.dims(), ry = y.dims();
    const cublasOperation_t op_x = adj_x_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_y = adj_y_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldx = static_cast<int>(x.dim_size(rx - 1)),
              ldy = static_cast<int>(y.dim_size(ry - 1));
    const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
    const T one = 1, zero = 0;
    int64_t stride_x, stride_y;
    if (Strided(xi, m * k, &stride_x) && Strided(yi, k * n, &stride_y)) {
      absl::MutexLock lock(&gpu->handle_mutex());
      if constexpr (std::is_same_v<T, float>) {
        TW_CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
            gpu->cublas(), op_y, op_x, in, im, ik, &one, y.data<T>(), ldy, stride_y, x.data<T>(),
            ldx, stride_x, &zero, out->data<T>(), in, m * n, static_cast<int>(batches)));
      } else {
        TW_CUBLAS_RETURN_IF_ERROR(cublasDgemmStridedBatched(
            gpu->cublas(), op_y, op_x, in, im, ik, &one, y.data<T>(), ldy, stride_y, x.data<T>(),
            ldx, stride_x, &zero, out->data<T>(), in, m * n, static_cast<int>(batches)));
      }
      return absl::OkStatus();
    }
    // Pointer arrays [y..., x..., out...] for the general broadcast.
    TW_ASSIGN_OR_RETURN(Tensor host_ptrs,
                        Tensor::Allocate(CpuAllocator(), DT_INT64, TensorShape({3 * batches})));
    const T** p = reinterpret_cast<const T**>(host_ptrs.raw_data());
    for (int64_t i = 0; i < batches; ++i) {
      p[i] = y.data<T>() + yi[i] * k * n;
      p[batches + i] = x.data<T>() + xi[i] * m * k;
      p[2 * batches + i] = out->data<T>() + i * m * n;
    }
    TW_ASSIGN_OR_RETURN(Tensor ptrs, gpu->CopyFromHost(host_ptrs));
    const T** d = reinterpret_cast<const T**>(ptrs.raw_data());
    T** c = reinterpret_cast<T**>(ptrs.raw_data()) + 2 * batches;
    absl::MutexLock lock(&gpu->handle_mutex());
    if constexpr (std::is_same_v<T, float>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasSgemmBatched(gpu->cublas(), op_y, op_x, in, im, ik, &one, d,
                                                   ldy, d + batches, ldx, &zero, c, in,
                                                   static_cast<int>(batches)));
    } else {
      TW_CUBLAS_RETURN_IF_ERROR(cublasDgemmBatched(gpu->cublas(), op_y, op_x, in, im, ik, &one, d,
                                                   ldy, d + batches, ldx, &zero, c, in,
                                                   static_cast<int>(batches)));
    }
    return absl::OkStatus();
  }

 private:
  // Whether the matrices `index` picks are every one in turn (stride =
  // matrix size) or always the first (stride 0).
  static bool Strided(const std::vector<int64_t>& index, int64_t matrix, int64_t* stride) {
    bool all_first = true, in_turn = true;
    for (size_t i = 0; i < index.size(); ++i) {
      all_first = all_first && index[i] == 0;
      in_turn = in_turn && index[i] == static_cast<int64_t>(i);
    }
    *stride = all_first ? 0 : matrix;
    return all_first || in_turn;
  }

  bool adj_x_ = false, adj_y_ = false;
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).TypeConstraint<T>("T");
  };
  const std::pair<const char*, ReduceFn> reductions[] = {{"Sum", ReduceFn::kSum},
                                                         {"Max", ReduceFn::kMax},
                                                         {"Min", ReduceFn::kMin},
                                                         {"Prod", ReduceFn::kProd}};
  for (const auto& [op, fn] : reductions) {
    RegisterKernel(on(op).HostMemory("reduction_indices"),
                   [fn = fn] { return std::make_unique<ReduceOp<T>>(fn, false); });
  }
  RegisterKernel(on("Mean").HostMemory("reduction_indices"),
                 [] { return std::make_unique<ReduceOp<T>>(ReduceFn::kSum, true); });
  for (const bool is_max : {true, false}) {
    RegisterKernel(on(is_max ? "ArgMax" : "ArgMin")
                       .HostMemory("dimension")
                       .TypeConstraint("output_type", DT_INT64),
                   [is_max] { return std::make_unique<ArgReduceOp<T, int64_t>>(is_max); });
  }
  RegisterKernel(on("BiasAddGrad"), MakeFactory<BiasAddGradOp<T>>());
  RegisterKernel(on("L2Loss"), MakeFactory<L2LossOp<T>>());
  RegisterKernel(on("Softmax"), [] { return std::make_unique<SoftmaxOp<T>>(false); });
  RegisterKernel(on("LogSoftmax"), [] { return std::make_unique<SoftmaxOp<T>>(true); });
  RegisterKernel(on("SoftmaxCrossEntropyWithLogits"), MakeFactory<SoftmaxXentOp<T>>());
  RegisterKernel(on("SparseSoftmaxCrossEntropyWithLogits").TypeConstraint("Tlabels", DT_INT32),
                 MakeFactory<SparseSoftmaxXentOp<T, int32_t>>());
  RegisterKernel(on("SparseSoftmaxCrossEntropyWithLogits").TypeConstraint("Tlabels", DT_INT64),
                 MakeFactory<SparseSoftmaxXentOp<T, int64_t>>());
  RegisterKernel(on("MatMul"), MakeFactory<MatMulOp<T>>());
  RegisterKernel(on("BatchMatMul"), MakeFactory<BatchMatMulOp<T>>());
  RegisterKernel(on("BatchMatMulV2"), MakeFactory<BatchMatMulOp<T>>());
}

TW_REGISTER_KERNELS(gpu_nn) {
  RegisterForType<float>();
  RegisterForType<double>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
