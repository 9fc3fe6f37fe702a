// Conv2D and its two backprops as im2col + GEMM (kernels/cpu/blas.h), for
// double and for what oneDNN's convolutions decline.
//
// Note [Convolution as GEMM]
// For NHWC input x [N,H,W,C] and filter f [KH,KW,C,OC], every output pixel
// is one row of "patches" P [N*OH*OW, KH*KW*C] (zeros where the window
// leaves the padded input) times f viewed as [KH*KW*C, OC]:
//   y = P f                      (Conv2D)
//   df = P^T dy                  (Conv2DBackpropFilter)
//   dP = dy f^T, dx = col2im(dP) (Conv2DBackpropInput: each patch entry
//                                 added back to the input pixel it came from)
// P is built in chunks of rows (at most kChunkBytes) so memory stays
// bounded; im2col/col2im are sharded over the intra-op pool (col2im by whole
// images, so no two threads add into one pixel), each GEMM uses the BLAS's
// own threads. A 1x1 stride-1 unpadded convolution skips im2col: P is x.
// NCHW tensors are transposed to NHWC and back.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/dnnl_conv.h"
#include "kernels/cpu/fused_ops.h"
#include "kernels/cpu/nhwc_output.h"
#include "kernels/window.h"

namespace towerflow {
namespace {

constexpr int64_t kChunkBytes = int64_t{16} << 20;

// Whether a float convolution goes to oneDNN: non-empty shapes, and not
// turned off.
bool DnnlApplies(const Window2D& w, int64_t oc) {
  const bool empty = w.batch == 0 || w.channels == 0 || w.in_h == 0 || w.in_w == 0 ||
                     w.out_h == 0 || w.out_w == 0 || oc == 0;
  return !empty && UseDnnlConvolutions().load();
}

// oneDNN's temporaries (Note [Winograd convolutions]) from the kernel's
// allocator.
DnnlTemp DnnlTemps(KernelContext* ctx) {
  return [ctx](int64_t floats) { return ctx->allocate_temp(DT_FLOAT, TensorShape({floats})); };
}

// Tries the oneDNN path for a backward pass (float only); true when it ran.
template <typename T>
absl::StatusOr<bool> TryDnnl(KernelContext* ctx, ConvPass pass, const Window2D& w, int64_t oc,
                             const T* x, const T* filter, const T* dy, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    if (DnnlApplies(w, oc)) {
      const DnnlTemp temp = DnnlTemps(ctx);
      return DnnlConv2D(pass, w, oc, x, filter, dy, out, 1, {}, &temp);
    }
  }
  return false;
}

bool IsPointwise(const Window2D& w) {
  return w.k_h == 1 && w.k_w == 1 && w.stride_h == 1 && w.stride_w == 1 && w.pad_top == 0 &&
         w.pad_left == 0 && w.out_h == w.in_h && w.out_w == w.in_w;
}

// Rows [r0, r1) of the patch matrix of x into p (row length KH*KW*C).
template <typename T>
void Im2Col(ThreadPool* pool, const Window2D& w, const T* x, int64_t r0, int64_t r1, T* p) {
  const int64_t c = w.channels, row = w.k_h * w.k_w * c, pixels = w.out_h * w.out_w;
  pool->ParallelFor(r1 - r0, row, [&](int64_t begin, int64_t end) {
    for (int64_t r = r0 + begin; r < r0 + end; ++r) {
      const int64_t n = r / pixels, oh = (r % pixels) / w.out_w, ow = r % w.out_w;
      T* dst = p + (r - r0) * row;
      for (int64_t kh = 0; kh < w.k_h; ++kh) {
        const int64_t ih = oh * w.stride_h - w.pad_top + kh * w.dilation_h;
        for (int64_t kw = 0; kw < w.k_w; ++kw, dst += c) {
          const int64_t iw = ow * w.stride_w - w.pad_left + kw * w.dilation_w;
          if (ih < 0 || ih >= w.in_h || iw < 0 || iw >= w.in_w) {
            std::fill_n(dst, c, T(0));
          } else {
            std::memcpy(dst, x + ((n * w.in_h + ih) * w.in_w + iw) * c, c * sizeof(T));
          }
        }
      }
    }
  });
}

// Adds patch rows [r0, r1) back into dx. Rows of one image go to one
// thread. REQUIRES: r0 and r1 are image boundaries.
template <typename T>
void Col2Im(ThreadPool* pool, const Window2D& w, const T* p, int64_t r0, int64_t r1, T* dx) {
  const int64_t c = w.channels, row = w.k_h * w.k_w * c, pixels = w.out_h * w.out_w;
  const int64_t n0 = r0 / pixels, n1 = r1 / pixels;
  pool->ParallelFor(n1 - n0, pixels * row, [&](int64_t begin, int64_t end) {
    for (int64_t n = n0 + begin; n < n0 + end; ++n) {
      for (int64_t pix = 0; pix < pixels; ++pix) {
        const int64_t oh = pix / w.out_w, ow = pix % w.out_w;
        const T* src = p + ((n * pixels + pix) - r0) * row;
        for (int64_t kh = 0; kh < w.k_h; ++kh) {
          const int64_t ih = oh * w.stride_h - w.pad_top + kh * w.dilation_h;
          for (int64_t kw = 0; kw < w.k_w; ++kw, src += c) {
            const int64_t iw = ow * w.stride_w - w.pad_left + kw * w.dilation_w;
            if (ih < 0 || ih >= w.in_h || iw < 0 || iw >= w.in_w) continue;
            T* dst = dx + ((n * w.in_h + ih) * w.in_w + iw) * c;
            for (int64_t i = 0; i < c; ++i) dst[i] += src[i];
          }
        }
      }
    }
  });
}

// Rows per chunk: whole images for col2im, at least one row.
int64_t ChunkRows(const Window2D& w, size_t elem, bool whole_images) {
  const int64_t row_bytes = std::max<int64_t>(1, w.k_h * w.k_w * w.channels * elem);
  int64_t rows = std::max<int64_t>(1, kChunkBytes / row_bytes);
  if (whole_images) {
    const int64_t pixels = std::max<int64_t>(1, w.out_h * w.out_w);
    rows = std::max<int64_t>(1, rows / pixels) * pixels;
  }
  return rows;
}

// The forward convolution of NHWC `x` with an HWIO filter into NHWC `y`,
// then y = activation(y + shift[oc]) when `shift` is given (oneDNN does
// both in the same primitive for float; other paths add a pass).
template <typename T>
absl::Status ConvForward(KernelContext* ctx, const Window2D& w, int64_t oc, const Tensor& x,
                         const T* filter, const T* shift, FusedActivation act, Tensor& y) {
  const int64_t rows = w.batch * w.out_h * w.out_w, k = w.k_h * w.k_w * w.channels;
  bool by_dnnl = false;
  if constexpr (std::is_same_v<T, float>) {
    if (DnnlApplies(w, oc)) {
      const DnnlTemp temp = DnnlTemps(ctx);
      TW_ASSIGN_OR_RETURN(
          by_dnnl, DnnlConv2D(ConvPass::kForward, w, oc, x.data<T>(), filter, nullptr, y.data<T>(),
                              1, ConvPostOps{shift, act}, &temp));
    }
  }
  if (by_dnnl) return absl::OkStatus();
  if (x.NumElements() == 0) {
    y.flat<T>().setZero();
  } else if (IsPointwise(w)) {
    Gemm<T>(false, false, rows, oc, k, T(1), x.data<T>(), k, filter, oc, T(0), y.data<T>(), oc);
  } else {
    const int64_t chunk = std::min(rows, ChunkRows(w, sizeof(T), false));
    TW_ASSIGN_OR_RETURN(Tensor patches, ctx->allocate_temp(x.dtype(), TensorShape({chunk, k})));
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      Im2Col<T>(ctx->intra_op_pool(), w, x.data<T>(), r0, r1, patches.data<T>());
      Gemm<T>(false, false, r1 - r0, oc, k, T(1), patches.data<T>(), k, filter, oc, T(0),
              y.data<T>() + r0 * oc, oc);
    }
  }
  if (shift != nullptr) {
    AddShiftAndActivate(ctx->intra_op_pool(), y.data<T>(), rows, oc, shift, act);
  }
  return absl::OkStatus();
}

// Conv2D, and _FusedConv2D (kFused): Conv2D followed by fused_ops
// (fused_ops.h) on inputs 2.., which the remapper makes from Conv2D +
// BiasAdd or inference FusedBatchNorm (+ Relu). A batch norm's scale is
// folded into a copy of the filter: y = conv(x, filter * scale) + shift.
template <typename T, bool kFused>
class Conv2DOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    if constexpr (kFused) {
      TW_ASSIGN_OR_RETURN(fused_, ReadFusedOps(c, /*allow_batch_norm=*/true));
    }
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", input.shape().DebugString()));
    }
    Tensor x = input;
    if (attrs_.nchw) {
      TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), input));
    }
    TW_ASSIGN_OR_RETURN(Window2D w,
                        ConvGeometry(attrs_, x.shape().dim_sizes(), filter.shape().dim_sizes()));
    const int64_t oc = filter.dim_size(3);
    ChannelAffine<T> affine;
    Tensor scaled_filter;
    const T* f = filter.data<T>();
    if constexpr (kFused) {
      TW_ASSIGN_OR_RETURN(affine, FusedChannelAffine<T>(ctx, fused_, 2, oc));
      if (!affine.scale.empty()) {
        TW_ASSIGN_OR_RETURN(scaled_filter, ctx->allocate_temp(filter.dtype(), filter.shape()));
        T* sf = scaled_filter.data<T>();
        for (int64_t i = 0, taps = filter.NumElements() / oc; i < taps; ++i) {
          for (int64_t c = 0; c < oc; ++c) sf[i * oc + c] = f[i * oc + c] * affine.scale[c];
        }
        f = sf;
      }
    }
    TW_ASSIGN_OR_RETURN(
        auto outs, NhwcOutput(ctx, attrs_.nchw, {w.batch, w.out_h, w.out_w, oc}, input.dtype()));
    auto& [out, y] = outs;
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_RETURN_IF_ERROR(ConvForward<T>(ctx, w, oc, x, f, kFused ? affine.shift.data() : nullptr,
                                      fused_.activation, y));
    return FinishNhwcOutput(ctx, attrs_.nchw, y, out);
  }

 private:
  WindowAttrs attrs_;
  FusedOps fused_;
};

// Conv2DBackpropInput(input_sizes, filter, out_backprop) and
// Conv2DBackpropFilter(input, filter_sizes, out_backprop).
template <typename T, bool kFilter>
class Conv2DBackpropOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const Tensor& input = kFilter ? ctx->input(0) : Tensor();
    const Tensor& filter = kFilter ? Tensor() : ctx->input(1);
    const Tensor& dy_in = ctx->input(2);
    TW_ASSIGN_OR_RETURN(
        ConvBackpropShapes shapes,
        ConvBackpropGeometry(attrs_, kFilter, ctx->input(kFilter ? 1 : 0),
                             kFilter ? input.shape() : filter.shape(), dy_in.shape()));
    const Window2D& w = shapes.w;
    const TensorShape& given_shape = shapes.out_shape;
    const std::vector<int64_t> in_nhwc =
        attrs_.nchw ? NchwToNhwcDims(shapes.in_dims) : shapes.in_dims;
    const int64_t oc = shapes.f_dims[3];
    Tensor dy = dy_in;
    if (attrs_.nchw) {
      TW_ASSIGN_OR_RETURN(dy, ToNhwc(d, ctx->device()->allocator(), dy_in));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, given_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t rows = w.batch * w.out_h * w.out_w, k = w.k_h * w.k_w * w.channels;
    if constexpr (kFilter) {
      Tensor x = input;
      if (attrs_.nchw) {
        TW_ASSIGN_OR_RETURN(x, ToNhwc(d, ctx->device()->allocator(), input));
      }
      TW_ASSIGN_OR_RETURN(const bool by_dnnl,
                          TryDnnl<T>(ctx, ConvPass::kBackwardFilter, w, oc, x.data<T>(), nullptr,
                                     dy.data<T>(), out->data<T>()));
      if (by_dnnl) return absl::OkStatus();
      out->flat<T>().setZero();
      if (rows == 0) return absl::OkStatus();
      if (IsPointwise(w)) {
        Gemm<T>(true, false, k, oc, rows, T(1), x.data<T>(), k, dy.data<T>(), oc, T(0),
                out->data<T>(), oc);
        return absl::OkStatus();
      }
      const int64_t chunk = std::min(rows, ChunkRows(w, sizeof(T), false));
      TW_ASSIGN_OR_RETURN(Tensor patches, ctx->allocate_temp(x.dtype(), TensorShape({chunk, k})));
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        Im2Col<T>(ctx->intra_op_pool(), w, x.data<T>(), r0, r1, patches.data<T>());
        Gemm<T>(true, false, k, oc, r1 - r0, T(1), patches.data<T>(), k, dy.data<T>() + r0 * oc, oc,
                T(1), out->data<T>(), oc);
      }
    } else {
      Tensor dx = *out;
      if (attrs_.nchw) {
        TW_ASSIGN_OR_RETURN(dx, ctx->allocate_temp(dy.dtype(), TensorShape(in_nhwc)));
      }
      TW_ASSIGN_OR_RETURN(const bool by_dnnl,
                          TryDnnl<T>(ctx, ConvPass::kBackwardInput, w, oc, nullptr,
                                     filter.data<T>(), dy.data<T>(), dx.data<T>()));
      if (!by_dnnl) {
        dx.flat<T>().setZero();
        if (rows > 0 && IsPointwise(w)) {
          Gemm<T>(false, true, rows, k, oc, T(1), dy.data<T>(), oc, filter.data<T>(), oc, T(0),
                  dx.data<T>(), k);
        } else if (rows > 0) {
          const int64_t chunk = std::min(rows, ChunkRows(w, sizeof(T), true));
          TW_ASSIGN_OR_RETURN(Tensor patches,
                              ctx->allocate_temp(dy.dtype(), TensorShape({chunk, k})));
          for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
            const int64_t r1 = std::min(rows, r0 + chunk);
            Gemm<T>(false, true, r1 - r0, k, oc, T(1), dy.data<T>() + r0 * oc, oc, filter.data<T>(),
                    oc, T(0), patches.data<T>(), k);
            Col2Im<T>(ctx->intra_op_pool(), w, patches.data<T>(), r0, r1, dx.data<T>());
          }
        }
      }
      if (attrs_.nchw) TW_RETURN_IF_ERROR(FromNhwc(d, dx, out));
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs attrs_;
};

template <typename T>
using ForwardConv2DOp = Conv2DOp<T, false>;
template <typename T>
using FusedConv2DOp = Conv2DOp<T, true>;
template <typename T>
using Conv2DBackpropInputOp = Conv2DBackpropOp<T, false>;
template <typename T>
using Conv2DBackpropFilterOp = Conv2DBackpropOp<T, true>;

TW_REGISTER_KERNELS(conv_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<ForwardConv2DOp, float, double>(cpu("Conv2D"), "T");
  RegisterTypedKernels<FusedConv2DOp, float, double>(cpu("_FusedConv2D"), "T");
  RegisterTypedKernels<Conv2DBackpropInputOp, float, double>(cpu("Conv2DBackpropInput"), "T");
  RegisterTypedKernels<Conv2DBackpropFilterOp, float, double>(cpu("Conv2DBackpropFilter"), "T");
}

}  // namespace
}  // namespace towerflow
