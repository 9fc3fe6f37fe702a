// Einsum on GPUs: the CPU kernel's plan (kernels/einsum_plan.h, Note [Einsum
// as GEMM]) with the operands gathered by LaunchIndexGather where they are
// not already laid out, one strided-batched cuBLAS GEMM, and C written into
// the output's label order (onto a zeroed diagonal where the output repeats
// a label) by LaunchIndexScatter.
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/einsum_plan.h"
#include "kernels/gpu/cwise_kernels.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/layout_kernels.h"

namespace towerflow {
namespace gpu {
namespace {

// The IndexMap of `sizes` and `strides`; Unimplemented past kMaxIndexRank.
absl::StatusOr<IndexMap> MapOf(const std::vector<int64_t>& sizes,
                               const std::vector<int64_t>& strides) {
  if (sizes.size() > static_cast<size_t>(kMaxIndexRank)) {
    return absl::UnimplementedError(absl::StrCat("Einsum on a GPU rearranges at most ",
                                                 kMaxIndexRank, " labels of an operand, got ",
                                                 sizes.size()));
  }
  IndexMap map;
  map.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < map.rank; ++d) {
    map.dims[d] = sizes[d];
    map.mult[d] = strides[d];
    map.mod[d] = 0;
  }
  return map;
}

// Element bits of T, for the layout kernels.
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
class EinsumOp : public EinsumOpBase {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const int num = ctx->num_inputs();
    Tensor* out = nullptr;
    TW_ASSIGN_OR_RETURN(const EinsumPlan p, PlanCall(ctx, &out));
    if (p.shape.num_elements() == 0) return absl::OkStatus();
    if (p.batch > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Einsum's batch of ", p.batch, " matrix products is past cuBLAS's int"));
    }
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaStream_t stream = gpu->compute_stream();
    Tensor a_scratch, b_scratch, c_scratch;
    TW_ASSIGN_OR_RETURN(const T* a, Arrange(ctx, ctx->input(0), p.a, stream, &a_scratch));
    const T* b = nullptr;
    if (num == 2) {
      TW_ASSIGN_OR_RETURN(b, Arrange(ctx, ctx->input(1), p.b, stream, &b_scratch));
    } else {  // a one-input Einsum contracts against ones
      TW_ASSIGN_OR_RETURN(b_scratch,
                          DeviceTemp(ctx, DataTypeToEnum<T>::value, TensorShape({p.k * p.n})));
      TW_CUDA_RETURN_IF_ERROR(LaunchFillConstant<T>(T(1), b_scratch.data<T>(), p.k * p.n, stream));
      b = b_scratch.data<T>();
    }
    const int64_t bt = p.batch, m = p.m, n = p.n, k = p.k;
    T* c = out->data<T>();
    if (!p.out_direct) {
      TW_ASSIGN_OR_RETURN(c_scratch,
                          DeviceTemp(ctx, DataTypeToEnum<T>::value, TensorShape({bt * m * n})));
      c = c_scratch.data<T>();
    }
    if (k == 0) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(c, 0, bt * m * n * sizeof(T), stream));
    } else {
      // Row-major C = A B is column-major C^T = B^T A^T: B goes first.
      const T one = 1, zero = 0;
      absl::MutexLock lock(&gpu->handle_mutex());
      if constexpr (std::is_same_v<T, float>) {
        TW_CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
            gpu->cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
            static_cast<int>(k), &one, b, static_cast<int>(n), k * n, a, static_cast<int>(k), m * k,
            &zero, c, static_cast<int>(n), m * n, static_cast<int>(bt)));
      } else {
        TW_CUBLAS_RETURN_IF_ERROR(cublasDgemmStridedBatched(
            gpu->cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
            static_cast<int>(k), &one, b, static_cast<int>(n), k * n, a, static_cast<int>(k), m * k,
            &zero, c, static_cast<int>(n), m * n, static_cast<int>(bt)));
      }
    }
    if (!p.out_direct) {
      if (p.inflate) {
        TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream));
      }
      TW_ASSIGN_OR_RETURN(const IndexMap map, MapOf(p.c_sizes, p.out_strides));
      TW_CUDA_RETURN_IF_ERROR(LaunchIndexScatter<Bits<T>>(reinterpret_cast<const Bits<T>*>(c),
                                                          static_cast<Bits<T>*>(out->raw_data()),
                                                          map, stream));
    }
    return absl::OkStatus();
  }

 private:
  // An operand in its GEMM layout: the input itself, or a gathered copy in
  // `scratch`.
  static absl::StatusOr<const T*> Arrange(KernelContext* ctx, const Tensor& input,
                                          const EinsumOperand& op, cudaStream_t stream,
                                          Tensor* scratch) {
    if (op.direct) return input.data<T>();
    TW_ASSIGN_OR_RETURN(const IndexMap map, MapOf(op.sizes, op.strides));
    int64_t n = 1;
    for (int64_t s : op.sizes) n *= s;
    TW_ASSIGN_OR_RETURN(*scratch, DeviceTemp(ctx, DataTypeToEnum<T>::value, TensorShape({n})));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchIndexGather<Bits<T>>(static_cast<const Bits<T>*>(input.raw_data()),
                                   static_cast<Bits<T>*>(scratch->raw_data()), map, stream));
    return scratch->data<T>();
  }
};

}  // namespace

TW_REGISTER_KERNELS(gpu_einsum_op) {
  RegisterTypedKernels<EinsumOp, float, double>(
      KernelDefBuilder("Einsum").Device(kDeviceGpu).Capturable(), "T");
}

}  // namespace gpu
}  // namespace towerflow
