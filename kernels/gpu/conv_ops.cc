// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on cuDNN, NHWC or
// NCHW, float and double, with strides, dilations and any padding; and
// DepthwiseConv2dNative with its backprops as cuDNN grouped convolutions.
//
// - cuDNN computes in NCHW, as TF's float convolutions do: NHWC data is
//   transposed to NCHW on the device and the result back. cuDNN's NHWC
//   float kernels without tensor cores are several times slower (on an
//   H100, the input gradient of a ResNet-20 layer at batch 128 took 0.8 ms
//   in NHWC, most of the training step's GPU time).
// - TF's filter is HWIO; cuDNN's NCHW convolutions want OIHW (KCRS), so the
//   filter (or its gradient) is transposed on the device.
// - cuDNN pads symmetrically. Where TF's padding is not (SAME with an odd
//   total puts the extra row at the bottom), the input is padded explicitly
//   by the difference and cuDNN pads the rest; the input gradient is then
//   computed for the padded input and cropped.
// - The algorithm is chosen once per kernel and shape, as TF's autotuning
//   does: cuDNN runs every algorithm its heuristics offer within a 1 GiB
//   workspace on the step's own buffers (cudnnFind*AlgorithmEx) and the
//   fastest is kept. TF_CUDNN_USE_AUTOTUNE=0 (TF's switch) keeps cuDNN's
//   first heuristic choice instead, without running anything;
//   TF_CUDNN_DETERMINISTIC=1 (or TF_DETERMINISTIC_OPS=1) keeps only
//   deterministic algorithms. Float math
//   may use TF32 tensor cores when TensorFloat32ExecutionEnabled() (on by
//   default, as in TF >= 2.4); off, math is FMA and results match the CPU
//   kernels to float rounding.
// - Depthwise: filter [KH,KW,C,M] gives output channel c * M + m from input
//   channel c. That is C groups of one input channel and M outputs each,
//   cuDNN's grouped convolution, and the filter's memory is already HWIO
//   [KH,KW,1,C*M] (the layout transposes below take it as that).
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/tensor_float32.h"
#include "kernels/gpu/cudnn_util.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/layout_kernels.h"
#include "kernels/window.h"

namespace towerflow {
namespace gpu {
namespace {

constexpr size_t kWorkspaceLimit = size_t{1} << 30;

enum class ConvPass { kForward, kBackwardInput, kBackwardFilter };

// The descriptors of one convolution. x is the (maybe explicitly padded)
// input.
struct ConvDescriptors {
  TensorDescriptor x, y;
  FilterDescriptor filter;
  ConvolutionDescriptor conv;
};

struct Algorithm {
  int algo = 0;
  size_t workspace = 0;
  // The math type cuDNN chose the algorithm for (its perf result's), which
  // the descriptor must carry when it runs.
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

// The buffers of one run of a pass: what cuDNN reads and the one tensor it
// writes (y, dx or dfilter), in cuDNN's layouts.
struct ConvBuffers {
  const void* x = nullptr;       // forward, backward filter
  const void* filter = nullptr;  // forward, backward input
  const void* dy = nullptr;      // backward passes
  void* out = nullptr;
};

// The algorithms of `perf` (cuDNN's order) that succeeded within `limit`
// (and are deterministic, when asked).
template <typename Perf>
std::vector<Algorithm> Usable(const Perf* perf, int count, size_t limit) {
  std::vector<Algorithm> usable;
  for (int i = 0; i < count; ++i) {
    if (DeterministicOpsRequested() && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
      usable.push_back(Algorithm{static_cast<int>(perf[i].algo), perf[i].memory, perf[i].mathType});
    }
  }
  return usable;
}

// cuDNN's algorithms for the pass, best first: its heuristics' order, or,
// given a run's buffers and a workspace, the order of their measured times
// (each algorithm runs once and writes run->out).
absl::StatusOr<std::vector<Algorithm>> Candidates(cudnnHandle_t handle, ConvPass pass,
                                                  const ConvDescriptors& d, const ConvBuffers* run,
                                                  void* workspace, size_t workspace_bytes) {
  int returned = 0;
  const size_t limit = run == nullptr ? kWorkspaceLimit : workspace_bytes;
  switch (pass) {
    case ConvPass::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      if (run == nullptr) {
        TW_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
            handle, d.x.get(), d.filter.get(), d.conv.get(), d.y.get(),
            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      } else {
        TW_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionForwardAlgorithmEx(
            handle, d.x.get(), run->x, d.filter.get(), run->filter, d.conv.get(), d.y.get(),
            run->out, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, workspace,
            workspace_bytes));
      }
      return Usable(perf, returned, limit);
    }
    case ConvPass::kBackwardInput: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      if (run == nullptr) {
        TW_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
            handle, d.filter.get(), d.y.get(), d.conv.get(), d.x.get(),
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf));
      } else {
        TW_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionBackwardDataAlgorithmEx(
            handle, d.filter.get(), run->filter, d.y.get(), run->dy, d.conv.get(), d.x.get(),
            run->out, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf, workspace,
            workspace_bytes));
      }
      return Usable(perf, returned, limit);
    }
    case ConvPass::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      if (run == nullptr) {
        TW_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            handle, d.x.get(), d.y.get(), d.conv.get(), d.filter.get(),
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf));
      } else {
        TW_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionBackwardFilterAlgorithmEx(
            handle, d.x.get(), run->x, d.y.get(), run->dy, d.conv.get(), d.filter.get(), run->out,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf, workspace, workspace_bytes));
      }
      return Usable(perf, returned, limit);
    }
  }
  return absl::InternalError("unknown convolution pass");
}

// TF's switch: TF_CUDNN_USE_AUTOTUNE=0 (or "false") turns measuring off.
bool Autotune() {
  static const bool autotune = [] {
    const char* v = std::getenv("TF_CUDNN_USE_AUTOTUNE");
    return v == nullptr || !(std::string(v) == "0" || absl::AsciiStrToLower(v) == "false");
  }();
  return autotune;
}

// The input's NCHW dims and its explicit padding, and the symmetric padding
// left to cuDNN.
struct Padding {
  std::vector<int64_t> in_dims, padded_dims;
  int64_t offset[4] = {0, 0, 0, 0};
  int64_t sym_h = 0, sym_w = 0;
  bool explicit_pad = false;
};

Padding PaddingFor(const Window2D& w) {
  Padding p;
  p.sym_h = std::min(w.pad_top, w.pad_bottom);
  p.sym_w = std::min(w.pad_left, w.pad_right);
  const int64_t extra_h = std::max(w.pad_top, w.pad_bottom) - p.sym_h;
  const int64_t extra_w = std::max(w.pad_left, w.pad_right) - p.sym_w;
  constexpr int h_axis = 2, w_axis = 3;
  p.in_dims = {w.batch, w.channels, w.in_h, w.in_w};
  p.padded_dims = p.in_dims;
  p.padded_dims[h_axis] += extra_h;
  p.padded_dims[w_axis] += extra_w;
  p.offset[h_axis] = w.pad_top > w.pad_bottom ? extra_h : 0;
  p.offset[w_axis] = w.pad_left > w.pad_right ? extra_w : 0;
  p.explicit_pad = extra_h > 0 || extra_w > 0;
  return p;
}

// NCHW descriptors. `groups` > 1: a grouped convolution, each group
// w.channels / groups input channels and oc / groups output channels.
template <typename T>
absl::StatusOr<ConvDescriptors> Describe(const Window2D& w, int64_t oc, int64_t groups,
                                         const Padding& pad) {
  constexpr cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  for (int64_t d : pad.padded_dims) {
    if (d > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("convolution input dimension ", d,
                                                     " does not fit cuDNN's 32-bit dimensions"));
    }
  }
  const int64_t ph = pad.padded_dims[2], pw = pad.padded_dims[3];
  TW_ASSIGN_OR_RETURN(TensorDescriptor x, Tensor4d<T>(format, w.batch, w.channels, ph, pw));
  TW_ASSIGN_OR_RETURN(TensorDescriptor y, Tensor4d<T>(format, w.batch, oc, w.out_h, w.out_w));
  TW_ASSIGN_OR_RETURN(FilterDescriptor filter, FilterDescriptor::Create());
  TW_CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(
      filter.get(), CudnnDataType<T>(), format, static_cast<int>(oc),
      static_cast<int>(w.channels / groups), static_cast<int>(w.k_h), static_cast<int>(w.k_w)));
  TW_ASSIGN_OR_RETURN(ConvolutionDescriptor conv, ConvolutionDescriptor::Create());
  TW_CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(
      conv.get(), static_cast<int>(pad.sym_h), static_cast<int>(pad.sym_w),
      static_cast<int>(w.stride_h), static_cast<int>(w.stride_w), static_cast<int>(w.dilation_h),
      static_cast<int>(w.dilation_w), CUDNN_CROSS_CORRELATION, CudnnComputeType<T>()));
  // TF32 tensor cores for float32 when allowed (framework/tensor_float32.h):
  // cuDNN's default math permits them on Ampere and later; FMA math forbids.
  // half and bfloat16: tensor cores always.
  const bool tf32 = std::is_same_v<T, float> && TensorFloat32ExecutionEnabled();
  TW_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(
      conv.get(),
      kIsFloat16<T> ? CUDNN_TENSOR_OP_MATH : (tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)));
  if (groups > 1) {
    TW_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv.get(), static_cast<int>(groups)));
  }
  int n = 0, c = 0, h = 0, wd = 0;
  TW_CUDNN_RETURN_IF_ERROR(
      cudnnGetConvolution2dForwardOutputDim(conv.get(), x.get(), filter.get(), &n, &c, &h, &wd));
  if (n != w.batch || c != oc || h != w.out_h || wd != w.out_w) {
    return absl::InternalError(absl::StrCat("cuDNN's convolution output [", n, ",", c, ",", h, ",",
                                            wd, "] differs from TF's [", w.batch, ",", oc, ",",
                                            w.out_h, ",", w.out_w, "]"));
  }
  return ConvDescriptors{std::move(x), std::move(y), std::move(filter), std::move(conv)};
}

// HWIO -> cuDNN's OIHW filter layout and back, and NHWC data to NCHW and
// back (LaunchTranspose4 permutations).
constexpr int kToOihw[4] = {3, 2, 0, 1}, kFromOihw[4] = {2, 3, 1, 0};

constexpr int kNhwcToNchw[4] = {0, 3, 1, 2}, kNchwToNhwc[4] = {0, 2, 3, 1};

template <typename T, ConvPass kPass, bool kDepthwise = false>
class CudnnConvOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }

  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(GpuDevice * gpu, CurrentGpu(ctx));
    cudaStream_t stream = gpu->compute_stream();
    Window2D w;
    std::vector<int64_t> f_dims;
    TensorShape out_shape;
    if constexpr (kPass == ConvPass::kForward) {
      const Tensor& input = ctx->input(0);
      const Tensor& filter = ctx->input(1);
      if (input.dims() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("input must be 4-dimensional, got ", input.shape().DebugString()));
      }
      std::vector<int64_t> in_dims(input.shape().dim_sizes().begin(),
                                   input.shape().dim_sizes().end());
      f_dims.assign(filter.shape().dim_sizes().begin(), filter.shape().dim_sizes().end());
      TW_ASSIGN_OR_RETURN(w, ConvGeometry(attrs_, attrs_.nchw ? NchwToNhwcDims(in_dims) : in_dims,
                                          f_dims, kDepthwise));
      const std::vector<int64_t> out_nhwc{w.batch, w.out_h, w.out_w,
                                          kDepthwise ? w.channels * f_dims[3] : f_dims[3]};
      TW_ASSIGN_OR_RETURN(out_shape,
                          TensorShape::FromDims(attrs_.nchw ? NhwcToNchwDims(out_nhwc) : out_nhwc));
    } else {
      constexpr bool kFilter = kPass == ConvPass::kBackwardFilter;
      TW_ASSIGN_OR_RETURN(ConvBackpropShapes shapes,
                          ConvBackpropGeometry(attrs_, kFilter, ctx->input(kFilter ? 1 : 0),
                                               ctx->input(kFilter ? 0 : 1).shape(),
                                               ctx->input(2).shape(), kDepthwise));
      w = shapes.w;
      f_dims = shapes.f_dims;
      out_shape = shapes.out_shape;
    }
    const int64_t groups = kDepthwise ? std::max<int64_t>(w.channels, 1) : 1;
    const int64_t oc = kDepthwise ? w.channels * f_dims[3] : f_dims[3];
    // The filter as HWIO: a depthwise [KH,KW,C,M] is [KH,KW,1,C*M].
    if (kDepthwise) f_dims = {w.k_h, w.k_w, 1, oc};
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Nothing to sum over: zeros (cuDNN refuses empty dimensions).
    const bool empty_sum =
        kPass == ConvPass::kForward
            ? w.channels == 0 || w.out_h == 0 || w.out_w == 0
            : w.batch == 0 || oc == 0 || w.out_h == 0 || w.out_w == 0 || w.in_h == 0 || w.in_w == 0;
    if (empty_sum) {
      TW_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream));
      return absl::OkStatus();
    }
    // cuDNN computes in NCHW whatever the data's format, as TF's float
    // convolutions do: NHWC data is transposed in and the result out.
    const bool nhwc = !attrs_.nchw;
    const Padding pad = PaddingFor(w);
    TW_ASSIGN_OR_RETURN(ConvDescriptors d, Describe<T>(w, oc, groups, pad));
    const int64_t per_group = w.channels / groups;
    const std::vector<int64_t> cudnn_filter_dims{oc, per_group, w.k_h, w.k_w};
    const std::vector<int64_t> out_nchw{w.batch, oc, w.out_h, w.out_w};
    const DataType dtype = DataTypeToEnum<T>::value;
    // What cuDNN reads and writes, all NCHW: the (maybe padded) input, the
    // filter as OIHW, and where the result goes (before it is transposed
    // to NHWC or HWIO, or cropped from a padded input's gradient).
    ConvBuffers run;
    Tensor x, f, dy, result = *out;
    if constexpr (kPass != ConvPass::kBackwardInput) {
      TW_ASSIGN_OR_RETURN(x, ToNchw(ctx, ctx->input(0), nhwc, stream));
      TW_ASSIGN_OR_RETURN(x, PaddedInput(ctx, x, pad, stream));
      run.x = x.raw_data();
    }
    if constexpr (kPass != ConvPass::kBackwardFilter) {
      TW_ASSIGN_OR_RETURN(f, DeviceTemp(ctx, dtype, TensorShape(cudnn_filter_dims)));
      TW_CUDA_RETURN_IF_ERROR(LaunchTranspose4<Moved<T>>(Bits<T>(ctx->input(1)), f_dims.data(),
                                                         kToOihw, Bits<T>(f), stream));
      run.filter = f.raw_data();
    }
    if constexpr (kPass != ConvPass::kForward) {
      TW_ASSIGN_OR_RETURN(dy, ToNchw(ctx, ctx->input(2), nhwc, stream));
      run.dy = dy.raw_data();
    }
    if constexpr (kPass == ConvPass::kBackwardFilter) {
      TW_ASSIGN_OR_RETURN(result, DeviceTemp(ctx, dtype, TensorShape(cudnn_filter_dims)));
    } else if (kPass == ConvPass::kBackwardInput && pad.explicit_pad) {
      TW_ASSIGN_OR_RETURN(result, DeviceTemp(ctx, dtype, TensorShape(pad.padded_dims)));
    } else if (nhwc) {
      TW_ASSIGN_OR_RETURN(
          result, DeviceTemp(ctx, dtype,
                             TensorShape(kPass == ConvPass::kForward ? out_nchw : pad.in_dims)));
    }
    run.out = result.raw_data();

    TW_ASSIGN_OR_RETURN(const std::vector<Algorithm> algos, AlgorithmsFor(ctx, gpu, d, w, oc, run));
    // The best algorithm; should cuDNN refuse it for these descriptors
    // (BAD_PARAM or NOT_SUPPORTED, which its heuristics can let through for
    // half and bfloat16), the next, which is then remembered.
    for (size_t i = 0; i < algos.size(); ++i) {
      const Algorithm& algo = algos[i];
      TW_ASSIGN_OR_RETURN(const cudnnStatus_t status, RunPass(ctx, gpu, d, run, algo));
      if (status == CUDNN_STATUS_SUCCESS) {
        if (i > 0) Remember(w, oc, algos, i);
        break;
      }
      if (i + 1 == algos.size() ||
          (status != CUDNN_STATUS_BAD_PARAM && status != CUDNN_STATUS_NOT_SUPPORTED)) {
        TW_CUDNN_RETURN_IF_ERROR(status);
      }
    }
    if constexpr (kPass == ConvPass::kBackwardFilter) {
      TW_CUDA_RETURN_IF_ERROR(LaunchTranspose4<Moved<T>>(Bits<T>(result), cudnn_filter_dims.data(),
                                                         kFromOihw, Bits<T>(*out), stream));
      return absl::OkStatus();
    }
    if constexpr (kPass == ConvPass::kBackwardInput) {
      if (pad.explicit_pad) {
        // The padded input's gradient, cropped (NCHW, then transposed).
        Tensor cropped = *out;
        if (nhwc) {
          TW_ASSIGN_OR_RETURN(cropped, DeviceTemp(ctx, dtype, TensorShape(pad.in_dims)));
        }
        const int64_t crop[4] = {-pad.offset[0], -pad.offset[1], -pad.offset[2], -pad.offset[3]};
        TW_CUDA_RETURN_IF_ERROR(LaunchShift4<Moved<T>>(Bits<T>(result), pad.padded_dims.data(),
                                                       Bits<T>(cropped), pad.in_dims.data(), crop,
                                                       Moved<T>(0), stream));
        result = cropped;
      }
    }
    if (nhwc) {
      TW_CUDA_RETURN_IF_ERROR(LaunchTranspose4<Moved<T>>(
          Bits<T>(result), result.shape().dim_sizes().data(), kNchwToNhwc, Bits<T>(*out), stream));
    }
    return absl::OkStatus();
  }

 private:
  // `t` in NCHW: itself, or transposed from NHWC into a temporary.
  static absl::StatusOr<Tensor> ToNchw(KernelContext* ctx, const Tensor& t, bool nhwc,
                                       cudaStream_t stream) {
    if (!nhwc) return t;
    const auto& dims = t.shape().dim_sizes();
    TW_ASSIGN_OR_RETURN(
        Tensor nchw, DeviceTemp(ctx, DataTypeToEnum<T>::value, TensorShape(NhwcToNchwDims(dims))));
    TW_CUDA_RETURN_IF_ERROR(
        LaunchTranspose4<Moved<T>>(Bits<T>(t), dims.data(), kNhwcToNchw, Bits<T>(nchw), stream));
    return nchw;
  }

  // The input itself, or a zero-padded copy where cuDNN's symmetric
  // padding falls short.
  static absl::StatusOr<Tensor> PaddedInput(KernelContext* ctx, const Tensor& input,
                                            const Padding& pad, cudaStream_t stream) {
    if (!pad.explicit_pad) return input;
    TW_ASSIGN_OR_RETURN(Tensor x,
                        DeviceTemp(ctx, DataTypeToEnum<T>::value, TensorShape(pad.padded_dims)));
    TW_CUDA_RETURN_IF_ERROR(LaunchShift4<Moved<T>>(Bits<T>(input), pad.in_dims.data(), Bits<T>(x),
                                                   pad.padded_dims.data(), pad.offset, Moved<T>(0),
                                                   stream));
    return x;
  }

  // One run of the pass with `algo` (its workspace allocated): cuDNN's
  // status, or an error from allocating.
  absl::StatusOr<cudnnStatus_t> RunPass(KernelContext* ctx, GpuDevice* gpu,
                                        const ConvDescriptors& d, const ConvBuffers& run,
                                        const Algorithm& algo) {
    Tensor workspace;
    if (algo.workspace > 0) {
      TW_ASSIGN_OR_RETURN(workspace,
                          DeviceTemp(ctx, DT_UINT8, TensorShape({int64_t(algo.workspace)})));
    }
    const CudnnScalar<T> one = 1, zero = 0;
    absl::MutexLock lock(&gpu->handle_mutex());
    // half and bfloat16: the math type the algorithm was chosen for (tensor
    // cores or not; float32 accumulation either way). float32 keeps the
    // descriptor's, which decides whether TF32 is allowed.
    if constexpr (kIsFloat16<T>) {
      TW_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(d.conv.get(), algo.math));
    }
    if constexpr (kPass == ConvPass::kForward) {
      return cudnnConvolutionForward(
          gpu->cudnn(), &one, d.x.get(), run.x, d.filter.get(), run.filter, d.conv.get(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), workspace.raw_data(), algo.workspace,
          &zero, d.y.get(), run.out);
    } else if constexpr (kPass == ConvPass::kBackwardInput) {
      return cudnnConvolutionBackwardData(
          gpu->cudnn(), &one, d.filter.get(), run.filter, d.y.get(), run.dy, d.conv.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.algo), workspace.raw_data(),
          algo.workspace, &zero, d.x.get(), run.out);
    } else {
      return cudnnConvolutionBackwardFilter(
          gpu->cudnn(), &one, d.x.get(), run.x, d.y.get(), run.dy, d.conv.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo.algo), workspace.raw_data(),
          algo.workspace, &zero, d.filter.get(), run.out);
    }
  }

  // The math mode is part of the key: TF32 and FMA algorithms differ.
  static std::string CacheKey(const Window2D& w, int64_t oc) {
    return absl::StrJoin({w.batch, w.in_h, w.in_w, w.channels, w.k_h, w.k_w, oc, w.stride_h,
                          w.stride_w, w.dilation_h, w.dilation_w, w.pad_top, w.pad_bottom,
                          w.pad_left, w.pad_right, int64_t{TensorFloat32ExecutionEnabled()}},
                         ",");
  }

  // `algos[i]` ran where the ones before it were refused: it leads from now on.
  void Remember(const Window2D& w, int64_t oc, const std::vector<Algorithm>& algos, size_t i) {
    std::vector<Algorithm> reordered(algos.begin() + i, algos.end());
    absl::MutexLock lock(&cache_mu_);
    cache_[CacheKey(w, oc)] = std::move(reordered);
  }

  // The algorithms for this shape, best first: cached, else measured on
  // `run`'s buffers (or cuDNN's heuristic order without autotuning).
  absl::StatusOr<std::vector<Algorithm>> AlgorithmsFor(KernelContext* ctx, GpuDevice* gpu,
                                                       const ConvDescriptors& d, const Window2D& w,
                                                       int64_t oc, const ConvBuffers& run) {
    const std::string key = CacheKey(w, oc);
    absl::MutexLock lock(&cache_mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::vector<Algorithm> candidates;
    {
      absl::MutexLock handle_lock(&gpu->handle_mutex());
      TW_ASSIGN_OR_RETURN(candidates,
                          Candidates(gpu->cudnn(), kPass, d, nullptr, nullptr, kWorkspaceLimit));
    }
    if (candidates.empty()) {
      return absl::InternalError(
          absl::StrCat("cuDNN has no algorithm for ", key, " within a 1 GiB workspace"));
    }
    if (Autotune()) {
      // Room for the largest of the heuristics' algorithms.
      size_t bytes = 0;
      for (const Algorithm& a : candidates) bytes = std::max(bytes, a.workspace);
      Tensor workspace;
      if (bytes > 0) {
        TW_ASSIGN_OR_RETURN(workspace,
                            DeviceTemp(ctx, DT_UINT8, TensorShape({static_cast<int64_t>(bytes)})));
      }
      absl::MutexLock handle_lock(&gpu->handle_mutex());
      TW_ASSIGN_OR_RETURN(const std::vector<Algorithm> measured,
                          Candidates(gpu->cudnn(), kPass, d, &run, workspace.raw_data(), bytes));
      if (!measured.empty()) candidates = measured;
    }
    cache_.emplace(key, candidates);
    return candidates;
  }

  WindowAttrs attrs_;
  absl::Mutex cache_mu_;
  absl::flat_hash_map<std::string, std::vector<Algorithm>> cache_ ABSL_GUARDED_BY(cache_mu_);
};

template <typename T>
void RegisterForType() {
  const auto on = [](const char* op) {
    return KernelDefBuilder(op)
        .Device(kDeviceGpu)
        .Capturable()
        .TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  RegisterKernel(on("Conv2D"), MakeFactory<CudnnConvOp<T, ConvPass::kForward>>());
  RegisterKernel(on("Conv2DBackpropInput"),
                 MakeFactory<CudnnConvOp<T, ConvPass::kBackwardInput>>());
  RegisterKernel(on("Conv2DBackpropFilter"),
                 MakeFactory<CudnnConvOp<T, ConvPass::kBackwardFilter>>());
  RegisterKernel(on("DepthwiseConv2dNative"),
                 MakeFactory<CudnnConvOp<T, ConvPass::kForward, /*kDepthwise=*/true>>());
  RegisterKernel(on("DepthwiseConv2dNativeBackpropInput"),
                 MakeFactory<CudnnConvOp<T, ConvPass::kBackwardInput, /*kDepthwise=*/true>>());
  RegisterKernel(on("DepthwiseConv2dNativeBackpropFilter"),
                 MakeFactory<CudnnConvOp<T, ConvPass::kBackwardFilter, /*kDepthwise=*/true>>());
}

TW_REGISTER_KERNELS(gpu_conv) {
  RegisterForType<float>();
  RegisterForType<double>();
  RegisterForType<half>();
  RegisterForType<bfloat16>();
}

}  // namespace
}  // namespace gpu
}  // namespace towerflow
