// MaxPool, AvgPool and their gradients (MaxPool's second order too; the
// MaxPoolV2 forms with the window in inputs), and
// MaxPoolWithArgmax with its gradient. LRN,
// a normalization, is in norm_ops.cc, as on the GPU.
//
// Buffers (NHWC; NCHW inputs are transposed to NHWC and back):
// input [N,H,W,C], output [N,OH,OW,C]. Every kernel walks output pixels
// with the channel loop innermost (contiguous, vectorised), sharded over
// the intra-op pool: forward kernels by output rows, gradient kernels by
// whole images so no two threads add into one input pixel.
//
// Padding pixels never take part: MaxPool ignores them and AvgPool divides
// by the number of real pixels in the window, as TF does.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/nhwc_output.h"
#include "kernels/kernel_util.h"
#include "kernels/window.h"

namespace towerflow {
namespace {

// The clipped window [h0, h1) x [w0, w1) of output pixel (oh, ow).
struct Span2 {
  int64_t h0, h1, w0, w1;
};
Span2 WindowOf(const Window2D& w, int64_t oh, int64_t ow) {
  const int64_t hs = oh * w.stride_h - w.pad_top, ws = ow * w.stride_w - w.pad_left;
  return {std::max<int64_t>(hs, 0), std::min(hs + w.k_h, w.in_h), std::max<int64_t>(ws, 0),
          std::min(ws + w.k_w, w.in_w)};
}

// Input in NHWC (a transposed copy for NCHW) and the geometry.
struct Prepared {
  Tensor x;
  Window2D w;
};

absl::StatusOr<Prepared> Prepare(KernelContext* ctx, const WindowAttrs& attrs, const Tensor& in,
                                 const char* what) {
  if (in.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 4-dimensional, got ", in.shape().DebugString()));
  }
  Prepared p;
  p.x = in;
  if (attrs.nchw) {
    TW_ASSIGN_OR_RETURN(p.x, ToNhwc(ctx->eigen_cpu_device(), ctx->device()->allocator(), in));
  }
  TW_ASSIGN_OR_RETURN(p.w, attrs.Compute(p.x.shape().dim_sizes(), attrs.k_h, attrs.k_w));
  return p;
}

// One pixel's C channels.
template <typename T>
using ChannelRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableChannelRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

std::vector<int64_t> OutNhwc(const Window2D& w) { return {w.batch, w.out_h, w.out_w, w.channels}; }

TensorShape InFormat(const WindowAttrs& attrs, const std::vector<int64_t>& nhwc) {
  return TensorShape(attrs.nchw ? NhwcToNchwDims(nhwc) : nhwc);
}

// A pooling node's window: its attrs, or for MaxPoolV2 and its gradients
// (kInputs) data_format and padding attrs with the ksize and strides inputs
// `first` and `first + 1`.
template <bool kInputs>
class PoolWindow {
 public:
  absl::Status Init(const KernelConstruction& c, int first) {
    first_ = first;
    if constexpr (kInputs) return attrs_.InitLayoutAndPadding(c);
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }
  absl::StatusOr<WindowAttrs> For(KernelContext* ctx) const {
    if constexpr (kInputs) return attrs_.WithWindow(ctx->input(first_), ctx->input(first_ + 1));
    return attrs_;
  }

 private:
  WindowAttrs attrs_;
  int first_ = 0;
};

template <typename T, bool kMax, bool kInputs = false>
class PoolOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return window_.Init(c, 1); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const WindowAttrs attrs, window_.For(ctx));
    TW_ASSIGN_OR_RETURN(Prepared p, Prepare(ctx, attrs, ctx->input(0), "input"));
    const Window2D& w = p.w;
    TW_ASSIGN_OR_RETURN(auto outs, NhwcOutput(ctx, attrs.nchw, OutNhwc(w), p.x.dtype()));
    Tensor& y = outs.second;
    if (y.NumElements() == 0) return absl::OkStatus();
    const T* x = p.x.data<T>();
    T* o = y.data<T>();
    const int64_t c = w.channels;
    ctx->intra_op_pool()->ParallelFor(
        w.batch * w.out_h, w.out_w * w.k_h * w.k_w * c, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / w.out_h, oh = r % w.out_h;
            for (int64_t ow = 0; ow < w.out_w; ++ow) {
              MutableChannelRow<T> out(o + ((n * w.out_h + oh) * w.out_w + ow) * c, c);
              const Span2 s = WindowOf(w, oh, ow);
              out.setConstant(kMax ? -std::numeric_limits<T>::infinity() : T(0));
              for (int64_t h = s.h0; h < s.h1; ++h) {
                for (int64_t ww = s.w0; ww < s.w1; ++ww) {
                  // Eigen's packets: GCC's -O2 leaves a loop of unknown
                  // length scalar. max keeps std::max's NaN behaviour.
                  const ChannelRow<T> src(x + ((n * w.in_h + h) * w.in_w + ww) * c, c);
                  if constexpr (kMax) {
                    out = out.max(src);
                  } else {
                    out += src;
                  }
                }
              }
              if constexpr (!kMax) {
                const int64_t count = (s.h1 - s.h0) * (s.w1 - s.w0);
                out *= count > 0 ? T(1) / static_cast<T>(count) : T(0);
              }
            }
          }
        });
    return FinishNhwcOutput(ctx, attrs.nchw, y, outs.first);
  }

 private:
  PoolWindow<kInputs> window_;
};

// Where x[i] > best[i]: best[i] = x[i] and at[i] = k, for i in [0, c) (so
// NaN never wins, as with a scalar >). Written with Eigen's packets
// (compare, then select): GCC's -O2 leaves this select scalar, and the
// scalar loop was 80% of MaxPoolGrad's time.
template <typename T>
void KeepFirstMaximum(const T* x, T k, int64_t c, T* best, T* at) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<T>::type;
  constexpr int64_t kWidth = ei::packet_traits<T>::size;
  const Packet kv = ei::pset1<Packet>(k);
  int64_t i = 0;
  for (; i + kWidth <= c; i += kWidth) {
    const Packet xv = ei::ploadu<Packet>(x + i), bv = ei::ploadu<Packet>(best + i);
    const Packet better = ei::pcmp_lt(bv, xv);
    ei::pstoreu(best + i, ei::pselect(better, xv, bv));
    ei::pstoreu(at + i, ei::pselect(better, kv, ei::ploadu<Packet>(at + i)));
  }
  for (; i < c; ++i) {
    const bool better = x[i] > best[i];
    best[i] = better ? x[i] : best[i];
    at[i] = better ? k : at[i];
  }
}

// MaxPoolGrad(orig_input, orig_output, grad): each output's gradient goes
// to the first maximum of its window (scan order h, w), as TF.
// MaxPoolGradGrad(orig_input, orig_output, grad), its derivative in grad
// (kSecond; grad shaped like orig_input): each output reads grad at its
// window's first maximum.
template <typename T, bool kSecond, bool kInputs = false>
class MaxPoolBackOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return window_.Init(c, 3); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const WindowAttrs attrs, window_.For(ctx));
    TW_ASSIGN_OR_RETURN(Prepared p, Prepare(ctx, attrs, ctx->input(0), "orig_input"));
    const Window2D& w = p.w;
    const TensorShape pooled = InFormat(attrs, OutNhwc(w));
    for (int i : {1, 2}) {
      const TensorShape& expected = (i == 2 && kSecond) ? ctx->input(0).shape() : pooled;
      if (ctx->input(i).shape() != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            i == 1 ? "orig_output" : "grad", " has shape ", ctx->input(i).shape().DebugString(),
            " but must be ", expected.DebugString(), " for orig_input ",
            ctx->input(0).shape().DebugString()));
      }
    }
    Tensor dy = ctx->input(2);
    if (attrs.nchw) {
      TW_ASSIGN_OR_RETURN(dy, ToNhwc(ctx->eigen_cpu_device(), ctx->device()->allocator(), dy));
    }
    const std::vector<int64_t> in_nhwc(p.x.shape().dim_sizes().begin(),
                                       p.x.shape().dim_sizes().end());
    TW_ASSIGN_OR_RETURN(auto outs,
                        NhwcOutput(ctx, attrs.nchw, kSecond ? OutNhwc(w) : in_nhwc, p.x.dtype()));
    Tensor& dx = outs.second;
    if (dx.NumElements() == 0) return absl::OkStatus();
    // Each image is zeroed by the thread that fills it: one thread zeroing
    // all of dx first made MaxPoolGrad 15-25% slower in the CIFAR-10 model.
    const int64_t per_image = dx.NumElements() / w.batch;
    const T* x = p.x.data<T>();
    const T* g = dy.data<T>();
    T* o = dx.data<T>();
    const int64_t c = w.channels;
    ctx->intra_op_pool()->ParallelFor(
        w.batch, w.out_h * w.out_w * w.k_h * w.k_w * c, [&](int64_t begin, int64_t end) {
          // Per output pixel, one branch-free pass over the window keeps
          // each channel's maximum and the window position of its first
          // holder (strict >, so the first maximum in scan order wins); the
          // position is kept as a T so the select vectorises at T's width.
          // Then the gradient is moved between the output pixel and those
          // positions, each position's offset in x read from a table.
          std::vector<T> best(c), at(c);
          // A clipped window's positions (ksize may exceed the input).
          std::vector<int64_t> offset(std::min(w.k_h, w.in_h) * std::min(w.k_w, w.in_w));
          for (int64_t n = begin; n < end; ++n) {
            std::fill_n(o + n * per_image, per_image, T(0));
            for (int64_t oh = 0; oh < w.out_h; ++oh) {
              for (int64_t ow = 0; ow < w.out_w; ++ow) {
                const Span2 s = WindowOf(w, oh, ow);
                if (s.h0 >= s.h1 || s.w0 >= s.w1) continue;
                std::fill(best.begin(), best.end(), -std::numeric_limits<T>::infinity());
                std::fill(at.begin(), at.end(), T(0));
                T k = 0;
                for (int64_t h = s.h0; h < s.h1; ++h) {
                  for (int64_t ww = s.w0; ww < s.w1; ++ww, k += 1) {
                    KeepFirstMaximum(x + ((n * w.in_h + h) * w.in_w + ww) * c, k, c, best.data(),
                                     at.data());
                  }
                }
                int64_t* next = offset.data();
                for (int64_t h = s.h0; h < s.h1; ++h) {
                  for (int64_t ww = s.w0; ww < s.w1; ++ww) {
                    *next++ = ((n * w.in_h + h) * w.in_w + ww) * c;
                  }
                }
                const int64_t pixel = ((n * w.out_h + oh) * w.out_w + ow) * c;
                for (int64_t i = 0; i < c; ++i) {
                  const int64_t in_at = offset[static_cast<int64_t>(at[i])] + i;
                  if constexpr (kSecond) {
                    o[pixel + i] = g[in_at];
                  } else {
                    o[in_at] += g[pixel + i];
                  }
                }
              }
            }
          }
        });
    return FinishNhwcOutput(ctx, attrs.nchw, dx, outs.first);
  }

 private:
  PoolWindow<kInputs> window_;
};

template <typename T>
using MaxPoolGradOp = MaxPoolBackOp<T, false>;
template <typename T>
using MaxPoolGradGradOp = MaxPoolBackOp<T, true>;
template <typename T>
using MaxPoolV2Op = PoolOp<T, true, true>;
template <typename T>
using MaxPoolGradV2Op = MaxPoolBackOp<T, false, true>;
template <typename T>
using MaxPoolGradGradV2Op = MaxPoolBackOp<T, true, true>;

// AvgPoolGrad(orig_input_shape, grad): each output's gradient spread evenly
// over the real pixels of its window.
template <typename T>
class AvgPoolGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), "orig_input_shape"));
    if (dims.size() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("orig_input_shape must have 4 elements, got ", dims.size()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape in_shape, TensorShape::FromDims(dims));
    const std::vector<int64_t> in_nhwc = attrs_.nchw ? NchwToNhwcDims(dims) : dims;
    TW_ASSIGN_OR_RETURN(Window2D w, attrs_.Compute(in_nhwc, attrs_.k_h, attrs_.k_w));
    const TensorShape expected = InFormat(attrs_, OutNhwc(w));
    if (ctx->input(1).shape() != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat("grad has shape ", ctx->input(1).shape().DebugString(), " but pooling ",
                       in_shape.DebugString(), " gives ", expected.DebugString()));
    }
    Tensor dy = ctx->input(1);
    if (attrs_.nchw) {
      TW_ASSIGN_OR_RETURN(dy, ToNhwc(ctx->eigen_cpu_device(), ctx->device()->allocator(), dy));
    }
    TW_ASSIGN_OR_RETURN(auto outs, NhwcOutput(ctx, attrs_.nchw, in_nhwc, dy.dtype()));
    Tensor& dx = outs.second;
    if (dx.NumElements() == 0) return absl::OkStatus();
    // Each image is zeroed by the thread that fills it (as in MaxPoolGrad).
    const int64_t per_image = dx.NumElements() / w.batch;
    const T* g = dy.data<T>();
    T* o = dx.data<T>();
    const int64_t c = w.channels;
    ctx->intra_op_pool()->ParallelFor(
        w.batch, w.out_h * w.out_w * w.k_h * w.k_w * c, [&](int64_t begin, int64_t end) {
          for (int64_t n = begin; n < end; ++n) {
            std::fill_n(o + n * per_image, per_image, T(0));
            for (int64_t oh = 0; oh < w.out_h; ++oh) {
              for (int64_t ow = 0; ow < w.out_w; ++ow) {
                const Span2 s = WindowOf(w, oh, ow);
                const int64_t count = (s.h1 - s.h0) * (s.w1 - s.w0);
                if (count == 0) continue;
                const T scale = T(1) / static_cast<T>(count);
                const T* gi = g + ((n * w.out_h + oh) * w.out_w + ow) * c;
                for (int64_t h = s.h0; h < s.h1; ++h) {
                  for (int64_t ww = s.w0; ww < s.w1; ++ww) {
                    T* dst = o + ((n * w.in_h + h) * w.in_w + ww) * c;
                    for (int64_t i = 0; i < c; ++i) dst[i] += gi[i] * scale;
                  }
                }
              }
            }
          }
        });
    return FinishNhwcOutput(ctx, attrs_.nchw, dx, outs.first);
  }

 private:
  WindowAttrs attrs_;
};

template <typename T>
using MaxPoolOp = PoolOp<T, true>;
template <typename T>
using AvgPoolOp = PoolOp<T, false>;

// MaxPoolWithArgmax(input) = (output, argmax), NHWC: each window's first
// maximum in scan order (a NaN first in its window stays; later ones never
// win), and its flat position ((n * H + h) * W + w) * C + c, n counted only
// with include_batch_in_index.
template <typename T, typename Index>
class MaxPoolWithArgmaxOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("include_batch_in_index", &with_batch_));
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Prepared p, Prepare(ctx, attrs_, ctx->input(0), "input"));
    const Window2D& w = p.w;
    const TensorShape shape(OutNhwc(w));
    TW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, shape));
    TW_ASSIGN_OR_RETURN(Tensor * at, ctx->allocate_output(1, shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const T* x = p.x.data<T>();
    T* o = y->data<T>();
    Index* a = at->data<Index>();
    const int64_t c = w.channels, image = w.in_h * w.in_w * c;
    if ((with_batch_ ? w.batch * image : image) - 1 > std::numeric_limits<Index>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", p.x.shape().DebugString(), " has positions past Targmax's range"));
    }
    ctx->intra_op_pool()->ParallelFor(
        w.batch * w.out_h, w.out_w * w.k_h * w.k_w * c, [&](int64_t begin, int64_t end) {
          std::vector<int64_t> best(c);  // per channel, the maximum's flat index
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / w.out_h, oh = r % w.out_h;
            for (int64_t ow = 0; ow < w.out_w; ++ow) {
              const int64_t out = ((n * w.out_h + oh) * w.out_w + ow) * c;
              const Span2 s = WindowOf(w, oh, ow);
              std::fill(best.begin(), best.end(), -1);
              for (int64_t h = s.h0; h < s.h1; ++h) {
                for (int64_t ww = s.w0; ww < s.w1; ++ww) {
                  const int64_t pixel = n * image + (h * w.in_w + ww) * c;
                  for (int64_t ch = 0; ch < c; ++ch) {
                    const int64_t i = pixel + ch;
                    if (best[ch] < 0 || x[i] > x[best[ch]]) best[ch] = i;
                  }
                }
              }
              for (int64_t ch = 0; ch < c; ++ch) {
                o[out + ch] = x[best[ch]];
                a[out + ch] = static_cast<Index>(with_batch_ ? best[ch] : best[ch] - n * image);
              }
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  WindowAttrs attrs_;
  bool with_batch_ = false;
};

// MaxPoolGradWithArgmax(input, grad, argmax): grad added at each argmax
// position, which must lie in its own image (TF's kernel CHECK-fails
// otherwise). Images run in parallel; each writes only its own.
template <typename T, typename Index>
class MaxPoolGradWithArgmaxOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("include_batch_in_index", &with_batch_));
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Prepared p, Prepare(ctx, attrs_, ctx->input(0), "input"));
    const Window2D& w = p.w;
    const TensorShape pooled(OutNhwc(w));
    for (int i : {1, 2}) {
      if (ctx->input(i).shape() != pooled) {
        return absl::InvalidArgumentError(
            absl::StrCat(i == 1 ? "grad" : "argmax", " has shape ",
                         ctx->input(i).shape().DebugString(), " but must be ", pooled.DebugString(),
                         " for input ", ctx->input(0).shape().DebugString()));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, p.x.shape()));
    T* o = dx->data<T>();
    std::fill_n(o, dx->NumElements(), T(0));
    const T* g = ctx->input(1).data<T>();
    const Index* a = ctx->input(2).data<Index>();
    const int64_t image = w.in_h * w.in_w * w.channels;
    const int64_t per_image = w.out_h * w.out_w * w.channels;
    std::atomic<int64_t> bad{-1};
    ctx->intra_op_pool()->ParallelFor(w.batch, per_image, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        for (int64_t i = n * per_image; i < (n + 1) * per_image; ++i) {
          const int64_t to = static_cast<int64_t>(a[i]) + (with_batch_ ? 0 : n * image);
          if (to < n * image || to >= (n + 1) * image) {
            bad = i;
            return;
          }
          o[to] += g[i];
        }
      }
    });
    if (bad >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid argmax ", static_cast<int64_t>(a[bad]), " at ", bad.load(),
                       ": not a position in its image (of ", image, " elements",
                       with_batch_ ? ", batch included" : "", ")"));
    }
    return absl::OkStatus();
  }

 private:
  WindowAttrs attrs_;
  bool with_batch_ = false;
};

template <template <typename, typename> class Op, typename T>
void RegisterArgmaxKernels(const char* op) {
  const auto def = [op] { return KernelDefBuilder(op).Device(kDeviceCpu).TypeConstraint<T>("T"); };
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int32_t>("Targmax"),
                 MakeFactory<Op<T, int32_t>>());
  RegisterKernel(KernelDefBuilder(def()).TypeConstraint<int64_t>("Targmax"),
                 MakeFactory<Op<T, int64_t>>());
}
template <template <typename, typename> class Op, typename... Ts>
void RegisterArgmaxFamily(const char* op) {
  (RegisterArgmaxKernels<Op, Ts>(op), ...);
}

TW_REGISTER_KERNELS(pooling_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<MaxPoolOp, float, double>(cpu("MaxPool"), "T");
  RegisterTypedKernels<AvgPoolOp, float, double>(cpu("AvgPool"), "T");
  RegisterTypedKernels<MaxPoolGradOp, float, double>(cpu("MaxPoolGrad"), "T");
  RegisterTypedKernels<MaxPoolGradGradOp, float, double>(cpu("MaxPoolGradGrad"), "T");
  // The V2 forms read their window from host inputs.
  const auto v2 = [&](const char* op) { return cpu(op).HostMemory("ksize").HostMemory("strides"); };
  RegisterTypedKernels<MaxPoolV2Op, float, double>(v2("MaxPoolV2"), "T");
  RegisterTypedKernels<MaxPoolGradV2Op, float, double>(v2("MaxPoolGradV2"), "T");
  RegisterTypedKernels<MaxPoolGradGradV2Op, float, double>(v2("MaxPoolGradGradV2"), "T");
  RegisterTypedKernels<AvgPoolGradOp, float, double>(cpu("AvgPoolGrad"), "T");
  RegisterArgmaxFamily<MaxPoolWithArgmaxOp, float, double, int32_t, int64_t, uint8_t>(
      "MaxPoolWithArgmax");
  RegisterArgmaxFamily<MaxPoolGradWithArgmaxOp, float, double, int32_t, int64_t, uint8_t>(
      "MaxPoolGradWithArgmax");
}

}  // namespace
}  // namespace towerflow
