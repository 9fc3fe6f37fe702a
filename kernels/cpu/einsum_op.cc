// Einsum as one batched GEMM: kernels/einsum_plan.h plans it (Note [Einsum
// as GEMM]); here the operands are gathered by strides where they are not
// already laid out, and each batch is one BLAS GEMM.
#include <algorithm>

#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/blas.h"
#include "kernels/einsum_plan.h"

namespace towerflow {
namespace {

// dst[sum c_d * dst_strides[d]] = src[sum c_d * src_strides[d]] for every
// index (c_0..c_r) of `sizes`: a gather (dst contiguous) or a scatter (src
// contiguous).
template <typename T>
void StridedCopy(const T* src, const std::vector<int64_t>& src_strides, T* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& sizes) {
  if (sizes.empty()) {
    *dst = *src;
    return;
  }
  const int rank = static_cast<int>(sizes.size());
  const int64_t inner = sizes.back(), src_inner = src_strides.back(),
                dst_inner = dst_strides.back();
  int64_t outer = 1;
  for (int i = 0; i + 1 < rank; ++i) outer *= sizes[i];
  std::vector<int64_t> index(rank, 0);
  int64_t s = 0, d = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) dst[d + j * dst_inner] = src[s + j * src_inner];
    for (int k = rank - 2; k >= 0; --k) {  // odometer over the outer dims
      s += src_strides[k];
      d += dst_strides[k];
      if (++index[k] < sizes[k]) break;
      s -= src_strides[k] * sizes[k];
      d -= dst_strides[k] * sizes[k];
      index[k] = 0;
    }
  }
}

std::vector<int64_t> RowMajor(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * sizes[d + 1];
  }
  return strides;
}

// An operand in its GEMM layout: the input itself, or a gathered copy in
// `scratch`.
template <typename T>
absl::StatusOr<const T*> Arrange(KernelContext* ctx, const T* data, const EinsumOperand& op,
                                 Tensor* scratch) {
  if (op.direct) return data;
  int64_t n = 1;
  for (int64_t s : op.sizes) n *= s;
  TW_ASSIGN_OR_RETURN(*scratch, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({n})));
  StridedCopy(data, op.strides, scratch->data<T>(), RowMajor(op.sizes), op.sizes);
  return scratch->data<T>();
}

template <typename T>
class EinsumOp : public EinsumOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int num = ctx->num_inputs();
    Tensor* out = nullptr;
    TW_ASSIGN_OR_RETURN(const EinsumPlan p, PlanCall(ctx, &out));
    if (p.shape.num_elements() == 0) return absl::OkStatus();
    const T one = T(1);
    Tensor a_scratch, b_scratch, c_scratch;
    TW_ASSIGN_OR_RETURN(const T* a, Arrange(ctx, ctx->input(0).data<T>(), p.a, &a_scratch));
    TW_ASSIGN_OR_RETURN(const T* b,
                        Arrange(ctx, num == 2 ? ctx->input(1).data<T>() : &one, p.b, &b_scratch));
    // C in batch, freeA, freeB order: the output itself when that is its
    // order.
    const int64_t bt = p.batch, m = p.m, n = p.n, k = p.k;
    T* c = out->data<T>();
    if (!p.out_direct) {
      TW_ASSIGN_OR_RETURN(c_scratch,
                          ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({bt * m * n})));
      c = c_scratch.data<T>();
    }
    if (k == 0) {
      std::fill_n(c, bt * m * n, T(0));
    } else {
      for (int64_t i = 0; i < bt; ++i) {
        Gemm<T>(false, false, m, n, k, T(1), a + i * m * k, k, b + i * k * n, n, T(0),
                c + i * m * n, n);
      }
    }
    if (!p.out_direct) {
      if (p.inflate) std::fill_n(out->data<T>(), out->NumElements(), T(0));
      StridedCopy(c, RowMajor(p.c_sizes), out->data<T>(), p.out_strides, p.c_sizes);
    }
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(einsum_op) {
  RegisterTypedKernels<EinsumOp, float, double>(KernelDefBuilder("Einsum").Device(kDeviceCpu), "T");
}

}  // namespace
}  // namespace towerflow
