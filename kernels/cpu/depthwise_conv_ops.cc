// DepthwiseConv2dNative and its two backprops.
//
// Input x [N,H,W,C] (or NCHW), filter f [KH,KW,C,M]: output channel
// c * M + m is input channel c convolved with f[:, :, c, m]. That is a
// grouped convolution with C groups of one input and M output channels, and
// f's memory is already oneDNN's grouped weights (g, o, i = 1, h, w) in
// (h, w, g, o) order, so float runs on oneDNN's depthwise kernels
// (DnnlConv2D with groups = C). Double, and shapes oneDNN declines, run the
// direct loops below: per output pixel, each tap multiplies C input values
// by their M filters, innermost over contiguous memory.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/dnnl_conv.h"
#include "kernels/cpu/nhwc_output.h"
#include "kernels/window.h"

namespace towerflow {
namespace {

// Tries oneDNN (float, non-empty); true when it ran.
template <typename T>
absl::StatusOr<bool> TryDnnl(ConvPass pass, const Window2D& w, int64_t m, const T* x,
                             const T* filter, const T* dy, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (UseDnnlConvolutions().load()) {
      return DnnlConv2D(pass, w, w.channels * m, x, filter, dy, out, /*groups=*/w.channels);
    }
  }
  return false;
}

// The input pixel a tap reads, or -1 outside the input.
inline int64_t InputRow(const Window2D& w, int64_t oh, int64_t kh) {
  const int64_t ih = oh * w.stride_h - w.pad_top + kh * w.dilation_h;
  return ih >= 0 && ih < w.in_h ? ih : -1;
}
inline int64_t InputCol(const Window2D& w, int64_t ow, int64_t kw) {
  const int64_t iw = ow * w.stride_w - w.pad_left + kw * w.dilation_w;
  return iw >= 0 && iw < w.in_w ? iw : -1;
}

template <typename T>
void Forward(ThreadPool* pool, const Window2D& w, int64_t m, const T* x, const T* f, T* y) {
  const int64_t c = w.channels, oc = c * m;
  pool->ParallelFor(w.batch * w.out_h, w.out_w * w.k_h * w.k_w * oc,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t row = begin; row < end; ++row) {
                        const int64_t n = row / w.out_h, oh = row % w.out_h;
                        T* out = y + row * w.out_w * oc;
                        std::fill_n(out, w.out_w * oc, T(0));
                        for (int64_t ow = 0; ow < w.out_w; ++ow, out += oc) {
                          for (int64_t kh = 0; kh < w.k_h; ++kh) {
                            const int64_t ih = InputRow(w, oh, kh);
                            if (ih < 0) continue;
                            for (int64_t kw = 0; kw < w.k_w; ++kw) {
                              const int64_t iw = InputCol(w, ow, kw);
                              if (iw < 0) continue;
                              const T* xp = x + ((n * w.in_h + ih) * w.in_w + iw) * c;
                              const T* fp = f + (kh * w.k_w + kw) * oc;
                              for (int64_t ch = 0; ch < c; ++ch) {
                                for (int64_t j = 0; j < m; ++j) {
                                  out[ch * m + j] += xp[ch] * fp[ch * m + j];
                                }
                              }
                            }
                          }
                        }
                      }
                    });
}

// dx += dy's taps back through f; images in parallel (their taps overlap).
template <typename T>
void BackwardInput(ThreadPool* pool, const Window2D& w, int64_t m, const T* f, const T* dy, T* dx) {
  const int64_t c = w.channels, oc = c * m;
  pool->ParallelFor(w.batch, w.out_h * w.out_w * w.k_h * w.k_w * oc,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t n = begin; n < end; ++n) {
                        T* image = dx + n * w.in_h * w.in_w * c;
                        std::fill_n(image, w.in_h * w.in_w * c, T(0));
                        for (int64_t oh = 0; oh < w.out_h; ++oh) {
                          for (int64_t ow = 0; ow < w.out_w; ++ow) {
                            const T* g = dy + ((n * w.out_h + oh) * w.out_w + ow) * oc;
                            for (int64_t kh = 0; kh < w.k_h; ++kh) {
                              const int64_t ih = InputRow(w, oh, kh);
                              if (ih < 0) continue;
                              for (int64_t kw = 0; kw < w.k_w; ++kw) {
                                const int64_t iw = InputCol(w, ow, kw);
                                if (iw < 0) continue;
                                T* dxp = image + (ih * w.in_w + iw) * c;
                                const T* fp = f + (kh * w.k_w + kw) * oc;
                                for (int64_t ch = 0; ch < c; ++ch) {
                                  T sum = 0;
                                  for (int64_t j = 0; j < m; ++j)
                                    sum += g[ch * m + j] * fp[ch * m + j];
                                  dxp[ch] += sum;
                                }
                              }
                            }
                          }
                        }
                      }
                    });
}

// df[kh, kw] = sum over pixels of x's tap times dy; taps in parallel.
template <typename T>
void BackwardFilter(ThreadPool* pool, const Window2D& w, int64_t m, const T* x, const T* dy,
                    T* df) {
  const int64_t c = w.channels, oc = c * m;
  pool->ParallelFor(w.k_h * w.k_w, w.batch * w.out_h * w.out_w * oc,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t tap = begin; tap < end; ++tap) {
                        const int64_t kh = tap / w.k_w, kw = tap % w.k_w;
                        T* dfp = df + tap * oc;
                        std::fill_n(dfp, oc, T(0));
                        for (int64_t n = 0; n < w.batch; ++n) {
                          for (int64_t oh = 0; oh < w.out_h; ++oh) {
                            const int64_t ih = InputRow(w, oh, kh);
                            if (ih < 0) continue;
                            for (int64_t ow = 0; ow < w.out_w; ++ow) {
                              const int64_t iw = InputCol(w, ow, kw);
                              if (iw < 0) continue;
                              const T* xp = x + ((n * w.in_h + ih) * w.in_w + iw) * c;
                              const T* g = dy + ((n * w.out_h + oh) * w.out_w + ow) * oc;
                              for (int64_t ch = 0; ch < c; ++ch) {
                                for (int64_t j = 0; j < m; ++j)
                                  dfp[ch * m + j] += xp[ch] * g[ch * m + j];
                              }
                            }
                          }
                        }
                      }
                    });
}

template <typename T>
class DepthwiseConvOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional, got ", input.shape().DebugString()));
    }
    Tensor x = input;
    if (attrs_.nchw) {
      TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), input));
    }
    TW_ASSIGN_OR_RETURN(Window2D w, ConvGeometry(attrs_, x.shape().dim_sizes(),
                                                 filter.shape().dim_sizes(), /*depthwise=*/true));
    const int64_t m = filter.dim_size(3);
    TW_ASSIGN_OR_RETURN(
        auto outs,
        NhwcOutput(ctx, attrs_.nchw, {w.batch, w.out_h, w.out_w, w.channels * m}, input.dtype()));
    auto& [out, y] = outs;
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(const bool by_dnnl, TryDnnl<T>(ConvPass::kForward, w, m, x.data<T>(),
                                                       filter.data<T>(), nullptr, y.data<T>()));
    if (!by_dnnl) {
      Forward<T>(ctx->intra_op_pool(), w, m, x.data<T>(), filter.data<T>(), y.data<T>());
    }
    return FinishNhwcOutput(ctx, attrs_.nchw, y, out);
  }

 private:
  WindowAttrs attrs_;
};

// DepthwiseConv2dNativeBackpropInput(input_sizes, filter, out_backprop) and
// DepthwiseConv2dNativeBackpropFilter(input, filter_sizes, out_backprop).
template <typename T, bool kFilter>
class DepthwiseBackpropOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& given = ctx->input(kFilter ? 0 : 1);
    const Tensor& dy_in = ctx->input(2);
    TW_ASSIGN_OR_RETURN(ConvBackpropShapes shapes,
                        ConvBackpropGeometry(attrs_, kFilter, ctx->input(kFilter ? 1 : 0),
                                             given.shape(), dy_in.shape(), /*depthwise=*/true));
    const Window2D& w = shapes.w;
    const int64_t m = shapes.f_dims[3];
    Tensor dy = dy_in;
    if (attrs_.nchw) {
      TW_ASSIGN_OR_RETURN(dy, ToNhwc(d, ctx->device()->allocator(), dy_in));
    }
    const bool empty = dy.NumElements() == 0;
    if constexpr (kFilter) {
      TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shapes.out_shape));
      if (out->NumElements() == 0) return absl::OkStatus();
      Tensor x = given;
      if (attrs_.nchw) {
        TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), given));
      }
      bool by_dnnl = false;
      if (!empty) {
        TW_ASSIGN_OR_RETURN(by_dnnl, TryDnnl<T>(ConvPass::kBackwardFilter, w, m, x.data<T>(),
                                                nullptr, dy.data<T>(), out->data<T>()));
      }
      if (!by_dnnl) {
        BackwardFilter<T>(ctx->intra_op_pool(), w, m, x.data<T>(), dy.data<T>(), out->data<T>());
      }
      return absl::OkStatus();
    }
    TW_ASSIGN_OR_RETURN(
        auto outs,
        NhwcOutput(ctx, attrs_.nchw, attrs_.nchw ? NchwToNhwcDims(shapes.in_dims) : shapes.in_dims,
                   dy.dtype()));
    auto& [out, dx] = outs;
    if (out->NumElements() == 0) return absl::OkStatus();
    bool by_dnnl = false;
    if (!empty) {
      TW_ASSIGN_OR_RETURN(by_dnnl, TryDnnl<T>(ConvPass::kBackwardInput, w, m, nullptr,
                                              given.data<T>(), dy.data<T>(), dx.data<T>()));
    }
    if (!by_dnnl) {
      BackwardInput<T>(ctx->intra_op_pool(), w, m, given.data<T>(), dy.data<T>(), dx.data<T>());
    }
    return FinishNhwcOutput(ctx, attrs_.nchw, dx, out);
  }

 private:
  WindowAttrs attrs_;
};

template <typename T>
using DepthwiseBackpropInputOp = DepthwiseBackpropOp<T, false>;
template <typename T>
using DepthwiseBackpropFilterOp = DepthwiseBackpropOp<T, true>;

TW_REGISTER_KERNELS(depthwise_conv_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<DepthwiseConvOp, float, double>(cpu("DepthwiseConv2dNative"), "T");
  RegisterTypedKernels<DepthwiseBackpropInputOp, float, double>(
      cpu("DepthwiseConv2dNativeBackpropInput").HostMemory("input_sizes"), "T");
  RegisterTypedKernels<DepthwiseBackpropFilterOp, float, double>(
      cpu("DepthwiseConv2dNativeBackpropFilter").HostMemory("filter_sizes"), "T");
}

}  // namespace
}  // namespace towerflow
