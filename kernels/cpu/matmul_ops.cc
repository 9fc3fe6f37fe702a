// MatMul, SparseMatMul and BatchMatMul/V2/V3: float and double through Gemm
// (kernels/cpu/blas.h: oneDNN's sgemm, OpenBLAS's dgemm), int32 on Eigen's
// contraction.
//
// Buffers: MatMul a [m,k] (or [k,m] with transpose_a), b [k,n] (or [n,k]),
// product [m,n]. BatchMatMulV2 x [..., m, k], y [..., k, n] whose batch dims
// broadcast; output [broadcast batch..., m, n]. adj_x/adj_y transpose
// (real types: adjoint = transpose).
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/bcast.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/fused_ops.h"

namespace towerflow {
namespace {

// One product of row-major matrices a and b into c [m, n].
template <typename T>
void Product(const Eigen::ThreadPoolDevice& d, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
             const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill_n(c, m * n, T(0));
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    Gemm<T>(ta, tb, m, n, k, T(1), a, ta ? m : k, b, tb ? k : n, T(0), c, n);
  } else {
    // Integers wrap around on overflow (functor::WrappingType): the product
    // is computed on the same bits as unsigned, whose overflow is defined.
    using U = std::make_unsigned_t<T>;
    using Map = Eigen::TensorMap<Eigen::Tensor<const U, 2, Eigen::RowMajor>>;
    const Map am(reinterpret_cast<const U*>(a), ta ? k : m, ta ? m : k);
    const Map bm(reinterpret_cast<const U*>(b), tb ? n : k, tb ? k : n);
    Eigen::TensorMap<Eigen::Tensor<U, 2, Eigen::RowMajor>> cm(reinterpret_cast<U*>(c), m, n);
    const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims{
        Eigen::IndexPair<Eigen::DenseIndex>(ta ? 0 : 1, tb ? 1 : 0)};
    cm.device(d) = am.contract(bm, dims);
  }
}

// MatMul, and _FusedMatMul (kFused): MatMul then fused_ops (fused_ops.h:
// BiasAdd, then optionally Relu or Relu6) on input 2, which the remapper
// makes from MatMul + BiasAdd (+ Relu); the bias and activation are one
// pass over the product.
template <typename T, bool kFused>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if constexpr (kFused) {
      TW_ASSIGN_OR_RETURN(fused_, ReadFusedOps(c, /*allow_batch_norm=*/false));
    }
    TW_RETURN_IF_ERROR(c.GetAttr("transpose_a", &ta_));
    return c.GetAttr("transpose_b", &tb_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const MatMulDims d, PlanMatMul(a.shape(), b.shape(), ta_, tb_));
    ChannelAffine<T> affine;
    if constexpr (kFused) {
      TW_ASSIGN_OR_RETURN(affine, FusedChannelAffine<T>(ctx, fused_, 2, d.n));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    Product<T>(ctx->eigen_cpu_device(), ta_, tb_, d.m, d.n, d.k, a.data<T>(), b.data<T>(),
               out->data<T>());
    if constexpr (kFused) {
      AddShiftAndActivate(ctx->intra_op_pool(), out->data<T>(), d.m, d.n, affine.shift.data(),
                          fused_.activation);
    }
    return absl::OkStatus();
  }

 private:
  FusedOps fused_;
  bool ta_ = false, tb_ = false;
};

template <typename T>
using PlainMatMulOp = MatMulOp<T, false>;
template <typename T>
using FusedMatMulOp = MatMulOp<T, true>;

// The products of a batch plan (PlanBatchMatMul), each matrix pair through
// Product.
template <typename T>
void BatchProducts(const Eigen::ThreadPoolDevice& d, const BatchMatMulPlan& plan, bool adj_x,
                   bool adj_y, const T* xd, const T* yd, T* od) {
  const int64_t m = plan.m, n = plan.n, k = plan.k;
  for (size_t i = 0; i < plan.x_index.size(); ++i) {
    Product<T>(d, adj_x, adj_y, m, n, k, xd + plan.x_index[i] * m * k, yd + plan.y_index[i] * k * n,
               od + static_cast<int64_t>(i) * m * n);
  }
}

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("adj_x", &adj_x_));
    return c.GetAttr("adj_y", &adj_y_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const BatchMatMulPlan plan,
                        PlanBatchMatMul(x.shape(), y.shape(), adj_x_, adj_y_));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (plan.out_shape.num_elements() == 0) return absl::OkStatus();
    BatchProducts<T>(ctx->eigen_cpu_device(), plan, adj_x_, adj_y_, x.data<T>(), y.data<T>(),
                     out->data<T>());
    return absl::OkStatus();
  }

 protected:
  bool adj_x_ = false, adj_y_ = false;
};

// `t` (of type From) as a tensor of C: `t` itself when From is C.
template <typename From, typename C>
absl::StatusOr<Tensor> AsComputeType(KernelContext* ctx, const Tensor& t) {
  if constexpr (std::is_same_v<From, C>) {
    return t;
  } else {
    TW_ASSIGN_OR_RETURN(Tensor wide, ctx->allocate_temp(DataTypeToEnum<C>::value, t.shape()));
    wide.flat<C>().device(ctx->eigen_cpu_device()) = t.flat<From>().template cast<C>();
    return wide;
  }
}

// BatchMatMulV3: x of Ta, y of Tb, the product of Tout, computed in C. TF's
// CPU kernels take one type for all three, int8/uint8 operand pairs giving
// int32, and bfloat16 with an int8/uint8 operand giving bfloat16 (and here
// half as well); narrow operands widen to C (int32, or float for the 16-bit
// floats) and a 16-bit product rounds once from float.
template <typename TA, typename TB, typename TOut, typename C>
class BatchMatMulV3Op : public BatchMatMulOp<C> {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    if constexpr (std::is_same_v<TA, C> && std::is_same_v<TB, C> && std::is_same_v<TOut, C>) {
      return BatchMatMulOp<C>::Compute(ctx);
    } else {
      const bool adj_x = this->adj_x_, adj_y = this->adj_y_;
      TW_ASSIGN_OR_RETURN(
          const BatchMatMulPlan plan,
          PlanBatchMatMul(ctx->input(0).shape(), ctx->input(1).shape(), adj_x, adj_y));
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
      if (plan.out_shape.num_elements() == 0) return absl::OkStatus();
      TW_ASSIGN_OR_RETURN(const Tensor x, (AsComputeType<TA, C>(ctx, ctx->input(0))));
      TW_ASSIGN_OR_RETURN(const Tensor y, (AsComputeType<TB, C>(ctx, ctx->input(1))));
      Tensor product = *out;
      if constexpr (!std::is_same_v<TOut, C>) {
        TW_ASSIGN_OR_RETURN(product, ctx->allocate_temp(DataTypeToEnum<C>::value, plan.out_shape));
      }
      BatchProducts<C>(ctx->eigen_cpu_device(), plan, adj_x, adj_y, x.data<C>(), y.data<C>(),
                       product.data<C>());
      if constexpr (!std::is_same_v<TOut, C>) {
        out->flat<TOut>().device(ctx->eigen_cpu_device()) = product.flat<C>().template cast<TOut>();
      }
      return absl::OkStatus();
    }
  }
};

// SparseMatMul: MatMul in float of float or bfloat16 operands (bfloat16
// widens exactly); the a_is_sparse/b_is_sparse hints are TF's choice of a
// sparse algorithm on the CPU, which gives the same product.
template <typename TA, typename TB>
class SparseMatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("transpose_a", &ta_));
    return c.GetAttr("transpose_b", &tb_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2) return absl::InvalidArgumentError("a is not a matrix");
    if (b.dims() != 2) return absl::InvalidArgumentError("b is not a matrix");
    const int64_t m = a.dim_size(ta_ ? 1 : 0), k = a.dim_size(ta_ ? 0 : 1);
    const int64_t kb = b.dim_size(tb_ ? 1 : 0), n = b.dim_size(tb_ ? 0 : 1);
    if (k != kb) {
      return absl::InvalidArgumentError(
          absl::StrCat("Matrix size incompatible: a: ", a.shape().DebugString(),
                       ", b: ", b.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    TW_ASSIGN_OR_RETURN(const Tensor x, (AsComputeType<TA, float>(ctx, a)));
    TW_ASSIGN_OR_RETURN(const Tensor y, (AsComputeType<TB, float>(ctx, b)));
    Product<float>(ctx->eigen_cpu_device(), ta_, tb_, m, n, k, x.data<float>(), y.data<float>(),
                   out->data<float>());
    return absl::OkStatus();
  }

 private:
  bool ta_ = false, tb_ = false;
};

template <typename TA, typename TB>
void RegisterSparseMatMul() {
  RegisterKernel(KernelDefBuilder("SparseMatMul")
                     .Device(kDeviceCpu)
                     .template TypeConstraint<TA>("Ta")
                     .template TypeConstraint<TB>("Tb"),
                 MakeFactory<SparseMatMulOp<TA, TB>>());
}

template <typename TA, typename TB, typename TOut, typename C>
void RegisterBatchMatMulV3() {
  RegisterKernel(KernelDefBuilder("BatchMatMulV3")
                     .Device(kDeviceCpu)
                     .template TypeConstraint<TA>("Ta")
                     .template TypeConstraint<TB>("Tb")
                     .template TypeConstraint<TOut>("Tout"),
                 MakeFactory<BatchMatMulV3Op<TA, TB, TOut, C>>());
}

TW_REGISTER_KERNELS(matmul) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<PlainMatMulOp, float, double, int32_t>(cpu("MatMul"), "T");
  RegisterTypedKernels<FusedMatMulOp, float, double>(cpu("_FusedMatMul"), "T");
  RegisterTypedKernels<BatchMatMulOp, float, double, int32_t>(cpu("BatchMatMul"), "T");
  RegisterTypedKernels<BatchMatMulOp, float, double, int32_t>(cpu("BatchMatMulV2"), "T");
  RegisterSparseMatMul<float, float>();
  RegisterSparseMatMul<float, bfloat16>();
  RegisterSparseMatMul<bfloat16, float>();
  RegisterSparseMatMul<bfloat16, bfloat16>();
  RegisterBatchMatMulV3<float, float, float, float>();
  RegisterBatchMatMulV3<double, double, double, double>();
  RegisterBatchMatMulV3<int32_t, int32_t, int32_t, int32_t>();
  RegisterBatchMatMulV3<int64_t, int64_t, int64_t, int64_t>();
  RegisterBatchMatMulV3<int16_t, int16_t, int16_t, int32_t>();
  RegisterBatchMatMulV3<bfloat16, bfloat16, bfloat16, float>();
  RegisterBatchMatMulV3<half, half, half, float>();  // TF's CPU has no half form
  RegisterBatchMatMulV3<int8_t, int8_t, int32_t, int32_t>();
  RegisterBatchMatMulV3<int8_t, uint8_t, int32_t, int32_t>();
  RegisterBatchMatMulV3<uint8_t, int8_t, int32_t, int32_t>();
  RegisterBatchMatMulV3<uint8_t, uint8_t, int32_t, int32_t>();
  RegisterBatchMatMulV3<bfloat16, int8_t, bfloat16, float>();
  RegisterBatchMatMulV3<bfloat16, uint8_t, bfloat16, float>();
  RegisterBatchMatMulV3<int8_t, bfloat16, bfloat16, float>();
  RegisterBatchMatMulV3<uint8_t, bfloat16, bfloat16, float>();
}

}  // namespace
}  // namespace towerflow
