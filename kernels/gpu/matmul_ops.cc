// MatMul and BatchMatMul on cuBLAS.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/cudnn_util.h"
#include "kernels/gpu/gpu_kernel_util.h"

namespace towerflow {
namespace gpu {
namespace {

// cuBLAS's name for a 16-bit element type.
template <typename T>
constexpr cudaDataType_t CudaDataType() {
  static_assert(kIsFloat16<T>);
  return std::is_same_v<T, half> ? CUDA_R_16F : CUDA_R_16BF;
}

// alpha and beta: float for the 16-bit types (their GEMMs compute in
// float32), else the element type.
template <typename T>
using GemmScalar = std::conditional_t<kIsFloat16<T>, float, T>;

// MatMul on cuBLAS (half and bfloat16 by cublasGemmEx on tensor cores,
// accumulating in float32, as TF's). Row-major C = op(A) op(B) is column-major
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
    const cublasOperation_t op_a = transpose_a_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = transpose_b_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = static_cast<int>(a.dim_size(1)), ldb = static_cast<int>(b.dim_size(1));
    const GemmScalar<T> one = 1, zero = 0;
    absl::MutexLock lock(&gpu->handle_mutex());
    if constexpr (kIsFloat16<T>) {
      // Tensor cores, accumulating in float32.
      TW_CUBLAS_RETURN_IF_ERROR(cublasGemmEx(
          gpu->cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
          &one, b.raw_data(), CudaDataType<T>(), ldb, a.raw_data(), CudaDataType<T>(), lda, &zero,
          c->raw_data(), CudaDataType<T>(), static_cast<int>(n), CUBLAS_COMPUTE_32F,
          CUBLAS_GEMM_DEFAULT));
      return absl::OkStatus();
    }
    if constexpr (std::is_same_v<T, float>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
          gpu->cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
          &one, b.data<T>(), ldb, a.data<T>(), lda, &zero, c->data<T>(), static_cast<int>(n)));
    } else if constexpr (std::is_same_v<T, double>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasDgemm(
          gpu->cublas(), op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
          &one, b.data<T>(), ldb, a.data<T>(), lda, &zero, c->data<T>(), static_cast<int>(n)));
    }
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
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
    const GemmScalar<T> one = 1, zero = 0;
    int64_t stride_x, stride_y;
    if (Strided(xi, m * k, &stride_x) && Strided(yi, k * n, &stride_y)) {
      absl::MutexLock lock(&gpu->handle_mutex());
      if constexpr (kIsFloat16<T>) {
        TW_CUBLAS_RETURN_IF_ERROR(cublasGemmStridedBatchedEx(
            gpu->cublas(), op_y, op_x, in, im, ik, &one, y.raw_data(), CudaDataType<T>(), ldy,
            stride_y, x.raw_data(), CudaDataType<T>(), ldx, stride_x, &zero, out->raw_data(),
            CudaDataType<T>(), in, m * n, static_cast<int>(batches), CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
        return absl::OkStatus();
      }
      if constexpr (std::is_same_v<T, float>) {
        TW_CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
            gpu->cublas(), op_y, op_x, in, im, ik, &one, y.data<T>(), ldy, stride_y, x.data<T>(),
            ldx, stride_x, &zero, out->data<T>(), in, m * n, static_cast<int>(batches)));
      } else if constexpr (std::is_same_v<T, double>) {
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
    if constexpr (kIsFloat16<T>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasGemmBatchedEx(
          gpu->cublas(), op_y, op_x, in, im, ik, &one, reinterpret_cast<const void* const*>(d),
          CudaDataType<T>(), ldy, reinterpret_cast<const void* const*>(d + batches),
          CudaDataType<T>(), ldx, &zero, reinterpret_cast<void* const*>(c), CudaDataType<T>(), in,
          static_cast<int>(batches), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return absl::OkStatus();
    }
    if constexpr (std::is_same_v<T, float>) {
      TW_CUBLAS_RETURN_IF_ERROR(cublasSgemmBatched(gpu->cublas(), op_y, op_x, in, im, ik, &one, d,
                                                   ldy, d + batches, ldx, &zero, c, in,
                                                   static_cast<int>(batches)));
    } else if constexpr (std::is_same_v<T, double>) {
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
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
  };
  RegisterKernel(on("MatMul"), MakeFactory<MatMulOp<T>>());
  RegisterKernel(on("BatchMatMul"), MakeFactory<BatchMatMulOp<T>>());
  RegisterKernel(on("BatchMatMulV2"), MakeFactory<BatchMatMulOp<T>>());
}

TW_REGISTER_KERNELS(gpu_matmul) {
  RegisterForType<float>();
  RegisterForType<double>();
  RegisterForType<half>();
  RegisterForType<bfloat16>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
