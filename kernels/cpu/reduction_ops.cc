// Reductions along axes: Sum, Mean, Prod, Max, Min, All, Any, EuclideanNorm
// (the square root of the sum of |x|^2), and ArgMax /
// ArgMin along one axis.
//
// Buffers: input [d0..dn], reduction_indices [k] or scalar (int32/int64),
// output [input dims with reduced ones dropped, or 1 with keep_dims].
//
// The input is viewed with adjacent dims merged when they are both reduced
// or both kept (size-1 dims dropped), which leaves four Eigen shapes to
// instantiate: everything [R], inner [K,R], outer [R,K] and middle [K,R,K].
// Other patterns shuffle the reduced dims innermost first.
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// Axes from an int32/int64 scalar or vector, checked and normalised.
absl::StatusOr<std::vector<bool>> ReducedAxes(const Tensor& axes, int rank) {
  if (axes.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduction indices must be a scalar or a vector, got shape ", axes.shape().DebugString()));
  }
  if (axes.dtype() != DT_INT32 && axes.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat("reduction indices must be int32 or int64, got ",
                                                   DataTypeString(axes.dtype())));
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a = axes.dtype() == DT_INT32 ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension (", a,
                                                     " for input with ", rank, " dimension(s)"));
    }
    reduced[a < 0 ? a + rank : a] = true;
  }
  return reduced;
}

// The merged view: sizes of alternating kept/reduced groups and whether
// the first group is reduced.
struct Plan {
  std::vector<int64_t> groups;
  bool first_reduced = false;
  TensorShape out_shape;
};

absl::StatusOr<Plan> MakePlan(const TensorShape& in, const std::vector<bool>& reduced,
                              bool keep_dims) {
  Plan p;
  int last = -1;  // 0 kept, 1 reduced
  for (int i = 0; i < in.dims(); ++i) {
    const int64_t size = in.dim_size(i);
    if (reduced[i]) {
      if (keep_dims) TW_RETURN_IF_ERROR(p.out_shape.AddDim(1));
    } else {
      TW_RETURN_IF_ERROR(p.out_shape.AddDim(size));
    }
    if (size == 1) continue;
    const int kind = reduced[i] ? 1 : 0;
    if (kind == last) {
      p.groups.back() *= size;
    } else {
      if (last == -1) p.first_reduced = reduced[i];
      p.groups.push_back(size);
      last = kind;
    }
  }
  return p;
}

struct SumR {
  template <typename T>
  static T Identity() {
    return Reducer<T>().initialize();
  }
  template <typename T>
  using Reducer = Eigen::internal::SumReducer<T>;
};
struct ProdR {
  template <typename T>
  static T Identity() {
    return Reducer<T>().initialize();
  }
  template <typename T>
  using Reducer = Eigen::internal::ProdReducer<T>;
};
struct MaxR {
  template <typename T>
  using Reducer = Eigen::internal::MaxReducer<T, Eigen::PropagateNaN>;  // NaN wins, as TF's
  template <typename T>
  static T Identity() {  // -inf for floats, as TF
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
};
struct MinR {
  template <typename T>
  using Reducer = Eigen::internal::MinReducer<T, Eigen::PropagateNaN>;
  template <typename T>
  static T Identity() {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  }
};
struct AndR {
  template <typename T>
  static T Identity() {
    return Reducer<T>().initialize();
  }
  template <typename T>
  using Reducer = Eigen::internal::AndReducer;
};
struct OrR {
  template <typename T>
  static T Identity() {
    return Reducer<T>().initialize();
  }
  template <typename T>
  using Reducer = Eigen::internal::OrReducer;
};

// What a reduction does around its reducer: nothing, divide by the count
// (Mean), or sum |x|^2 and take the square root (EuclideanNorm).
enum class Finish { kNone, kMean, kEuclidean };

template <typename T>
struct AbsSquared {
  T operator()(const T& x) const {
    if constexpr (kIsComplex<T>) {
      return T(std::norm(x));
    } else {
      return x * x;
    }
  }
};

template <typename T, typename R, Finish kFinish = Finish::kNone>
class ReductionOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("keep_dims", &keep_dims_);
  }

  absl::Status Compute(KernelContext* ctx) override {
    Tensor in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedAxes(ctx->input(1), in.dims()));
    TW_ASSIGN_OR_RETURN(Plan p, MakePlan(in.shape(), reduced, keep_dims_));
    const std::vector<int64_t>& g = p.groups;
    const auto& d = ctx->eigen_cpu_device();
    if constexpr (kFinish == Finish::kEuclidean) {
      // Nothing reduced gives |x| too, as TF's.
      TW_ASSIGN_OR_RETURN(Tensor squared, ctx->allocate_temp(in.dtype(), in.shape()));
      squared.flat<T>().device(d) = in.flat<T>().unaryExpr(AbsSquared<T>());
      in = std::move(squared);
    } else if (in.NumElements() > 0 && (g.empty() || (g.size() == 1 && !p.first_reduced))) {
      // Nothing (or only size-1 dims) reduced, as in the gradient of an Add
      // of two same-shape tensors: the input itself, in the output's shape
      // (TF's kernels forward it too).
      TW_ASSIGN_OR_RETURN(Tensor same, in.Reshaped(p.out_shape));
      return ctx->set_output(0, std::move(same));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    using Reducer = typename R::template Reducer<T>;
    const Reducer reducer;
    auto o = out->flat<T>();
    const Eigen::array<Eigen::DenseIndex, 1> axis0{0}, axis1{1};
    if (in.NumElements() == 0) {
      // Reducing an empty dimension gives the reducer's identity.
      o.setConstant(R::template Identity<T>());
    } else if (g.empty() || (g.size() == 1 && !p.first_reduced)) {
      o.device(d) = in.flat<T>();  // nothing reduced (EuclideanNorm's squares)
    } else if (g.size() == 1) {
      out->shaped<T, 0>({}).device(d) = in.flat<T>().reduce(axis0, reducer);
    } else if (g.size() == 2 && !p.first_reduced) {
      o.device(d) = in.shaped<T, 2>(g).reduce(axis1, reducer);
    } else if (g.size() == 2) {
      o.device(d) = in.shaped<T, 2>(g).reduce(axis0, reducer);
    } else if (g.size() == 3 && !p.first_reduced) {
      out->shaped<T, 2>({g[0], g[2]}).device(d) = in.shaped<T, 3>(g).reduce(axis1, reducer);
    } else {
      TW_RETURN_IF_ERROR(ReduceShuffled(ctx, in, g, p.first_reduced, out));
    }
    if constexpr (kFinish == Finish::kEuclidean) {
      o.device(d) = o.sqrt();
    } else if constexpr (kFinish == Finish::kMean) {
      const int64_t count = in.NumElements() / std::max<int64_t>(out->NumElements(), 1);
      if (count == 0) {
        // The mean of nothing: NaN for floats (0/0), 0 for integers.
        o.setConstant(std::is_floating_point_v<T> ? std::numeric_limits<T>::quiet_NaN() : T(0));
      } else {
        o.device(d) = o / o.constant(static_cast<T>(count));
      }
    }
    return absl::OkStatus();
  }

 private:
  // General pattern: move reduced groups innermost, then reduce [K, R].
  absl::Status ReduceShuffled(KernelContext* ctx, const Tensor& in, const std::vector<int64_t>& g,
                              bool first_reduced, Tensor* out) {
    const int n = static_cast<int>(g.size());
    if (n > 8) {  // beyond Eigen's shuffle ranks: a plain strided loop
      ReduceLoop(in.data<T>(), g, first_reduced, out->data<T>(), out->NumElements());
      return absl::OkStatus();
    }
    std::vector<int64_t> perm, kept_dims, red_dims;
    int64_t kept = 1, red = 1;
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < n; ++i) {
        const bool is_reduced = ((i % 2 == 0) == first_reduced);
        if (is_reduced == (pass == 1)) perm.push_back(i);
        if (pass == 0) (is_reduced ? red : kept) *= g[i];
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor shuffled, ctx->allocate_temp(in.dtype(), in.shape()));
    Eigen::array<Eigen::DenseIndex, 8> shuffle_dims;
    Eigen::array<Eigen::DenseIndex, 8> dims8;
    std::vector<int64_t> shuffled_dims;
    for (int i = 0; i < 8; ++i) {
      shuffle_dims[i] = i < n ? perm[i] : i;
      dims8[i] = i < n ? g[i] : 1;
      shuffled_dims.push_back(i < n ? g[perm[i]] : 1);
    }
    const auto& d = ctx->eigen_cpu_device();
    const std::vector<int64_t> g8(dims8.begin(), dims8.end());
    shuffled.shaped<T, 8>(shuffled_dims).device(d) = in.shaped<T, 8>(g8).shuffle(shuffle_dims);
    const Eigen::array<Eigen::DenseIndex, 1> axis1{1};
    using Reducer = typename R::template Reducer<T>;
    out->flat<T>().device(d) = shuffled.shaped<T, 2>({kept, red}).reduce(axis1, Reducer());
    return absl::OkStatus();
  }

  // Reduces with the reducer's reduce/finalize one element at a time,
  // walking the input in order and keeping the output index of the kept
  // coordinates up to date.
  static void ReduceLoop(const T* in, const std::vector<int64_t>& g, bool first_reduced, T* out,
                         int64_t out_n) {
    using Reducer = typename R::template Reducer<T>;
    Reducer reducer;
    const int n = static_cast<int>(g.size());
    std::unique_ptr<T[]> acc(new T[out_n]);
    for (int64_t i = 0; i < out_n; ++i) acc[i] = reducer.initialize();
    std::vector<int64_t> stride(n, 0), pos(n, 0);
    int64_t total = 1, s = 1;
    for (int i = n - 1; i >= 0; --i) {
      total *= g[i];
      if ((i % 2 == 0) != first_reduced) {  // a kept group
        stride[i] = s;
        s *= g[i];
      }
    }
    int64_t o = 0;
    for (int64_t k = 0; k < total; ++k) {
      reducer.reduce(in[k], &acc[o]);
      for (int d = n - 1; d >= 0; --d) {
        o += stride[d];
        if (++pos[d] < g[d]) break;
        o -= stride[d] * g[d];
        pos[d] = 0;
      }
    }
    for (int64_t i = 0; i < out_n; ++i) out[i] = reducer.finalize(acc[i]);
  }

  bool keep_dims_ = false;
};

template <typename T>
using SumOp = ReductionOp<T, SumR>;
template <typename T>
using MeanOp = ReductionOp<T, SumR, Finish::kMean>;
template <typename T>
using EuclideanNormOp = ReductionOp<T, SumR, Finish::kEuclidean>;
template <typename T>
using ProdOp = ReductionOp<T, ProdR>;
template <typename T>
using MaxOp = ReductionOp<T, MaxR>;
template <typename T>
using MinOp = ReductionOp<T, MinR>;

// ArgMax / ArgMin(input, dimension) -> output_type, the first index of the
// extreme value along `dimension`.
template <typename T, bool kMax>
class ArgOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& dim = ctx->input(1);
    if (dim.NumElements() != 1 || dim.dims() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim must be a scalar, but received tensor of shape: ", dim.shape().DebugString()));
    }
    int64_t axis = dim.dtype() == DT_INT32 ? *dim.data<int32_t>() : *dim.data<int64_t>();
    if (axis < -in.dims() || axis >= in.dims() || in.dims() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected dimension in the range [", -in.dims(), ", ", in.dims(), "), but got ", axis));
    }
    if (axis < 0) axis += in.dims();
    if (in.dim_size(axis) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reduction axis ", axis, " is empty in shape ", in.shape().DebugString()));
    }
    TensorShape out_shape = in.shape();
    out_shape.RemoveDim(static_cast<int>(axis));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= in.dim_size(i);
    for (int i = static_cast<int>(axis) + 1; i < in.dims(); ++i) inner *= in.dim_size(i);
    const int64_t n = in.dim_size(axis);
    const std::array<int64_t, 3> dims3{outer, n, inner};
    auto x = in.shaped<T, 3>(dims3);
    const auto& d = ctx->eigen_cpu_device();
    if (out->dtype() == DT_INT64) {
      Write<int64_t>(d, x, out, outer, inner);
    } else {
      Write<int32_t>(d, x, out, outer, inner);
    }
    return absl::OkStatus();
  }

 private:
  template <typename Index, typename X>
  static void Write(const Eigen::ThreadPoolDevice& d, const X& x, Tensor* out, int64_t outer,
                    int64_t inner) {
    auto o = out->shaped<Index, 2>({outer, inner});
    if constexpr (kMax) {
      o.device(d) = x.argmax(1).template cast<Index>();
    } else {
      o.device(d) = x.argmin(1).template cast<Index>();
    }
  }
};

template <typename T>
using ArgMaxOp = ArgOp<T, true>;
template <typename T>
using ArgMinOp = ArgOp<T, false>;

TW_REGISTER_KERNELS(reductions) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<SumOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Sum"),
                                                                                      "T");
  RegisterTypedKernels<MeanOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Mean"),
                                                                                       "T");
  RegisterTypedKernels<ProdOp, float, double, int32_t, int64_t, complex64, complex128>(cpu("Prod"),
                                                                                       "T");
  // uint8 squares and sums in uint8, wrapping as TF's kernel does.
  RegisterTypedKernels<EuclideanNormOp, float, double, int32_t, int64_t, uint8_t, complex64,
                       complex128>(cpu("EuclideanNorm"), "T");
  RegisterTypedKernels<MaxOp, float, double, int32_t, int64_t>(cpu("Max"), "T");
  RegisterTypedKernels<MinOp, float, double, int32_t, int64_t>(cpu("Min"), "T");
  RegisterKernel(cpu("All"), MakeFactory<ReductionOp<bool, AndR>>());
  RegisterKernel(cpu("Any"), MakeFactory<ReductionOp<bool, OrR>>());
  RegisterTypedKernels<ArgMaxOp, float, double, int32_t, int64_t>(cpu("ArgMax"), "T");
  RegisterTypedKernels<ArgMinOp, float, double, int32_t, int64_t>(cpu("ArgMin"), "T");
  // int32 reductions of GPU nodes (a reduction's gradient counts its axes
  // so): int32 tensors of a GPU node live in host memory, and these CPU
  // kernels serve, as TensorFlow's do.
  const auto gpu_host = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceGpu).HostMemory("reduction_indices").Capturable();
  };
  RegisterTypedKernels<SumOp, int32_t>(gpu_host("Sum"), "T");
  RegisterTypedKernels<ProdOp, int32_t>(gpu_host("Prod"), "T");
  RegisterTypedKernels<MaxOp, int32_t>(gpu_host("Max"), "T");
  RegisterTypedKernels<MinOp, int32_t>(gpu_host("Min"), "T");
}

}  // namespace
}  // namespace towerflow
