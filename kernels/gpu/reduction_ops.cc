// GPU reductions: Sum, Mean, Max, Min, Prod over any axes, and
// ArgMax/ArgMin. The axes arrive in host memory, so they are checked on the
// host with the CPU kernels' messages before anything is launched.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/reduction_kernels.h"

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
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).Capturable().TypeConstraint<T>("T");
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
}

TW_REGISTER_KERNELS(gpu_reduction) {
  RegisterForType<float>();
  RegisterForType<double>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
