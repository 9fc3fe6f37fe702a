// MaxPool3D and AvgPool3D with their gradients (MaxPool3DGrad,
// AvgPool3DGrad, MaxPool3DGradGrad), as TensorFlow's CPU kernels compute
// them (pooling_ops_3d.cc):
// - padding pixels never take part: MaxPool3D ignores them, AvgPool3D and
//   AvgPool3DGrad divide by the number of real pixels in the window;
// - MaxPool3DGrad gives a window's gradient to every pixel within 1e-5 of
//   the window's maximum (ties all receive it, unlike 2-D MaxPoolGrad's
//   first maximum);
// - MaxPool3DGradGrad reads grad at the first pixel (plane, row, column
//   order) equal to the maximum.
// Buffers are NDHWC with the channel loop innermost (contiguous,
// vectorised through Eigen maps); NCDHW tensors are transposed in and out.
// Forward kernels shard over output rows, MaxPool3DGrad and AvgPool3DGrad
// over whole images (no two threads add into one input pixel).
#include <algorithm>
#include <array>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"
#include "kernels/window3d.h"

namespace towerflow {
namespace {

template <typename T>
using Row = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutableRow = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// The window of output pixel (od, oh, ow) clipped to the input:
// [lo[i], hi[i]) along each spatial dim.
struct Box {
  std::array<int64_t, 3> lo, hi;
  int64_t Count() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};
Box BoxOf(const Window3D& w, const std::array<int64_t, 3>& o) {
  Box b;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = w.Start(i, o[i]);
    b.lo[i] = std::max<int64_t>(s, 0);
    b.hi[i] = std::min(s + w.k[i], w.in[i]);
  }
  return b;
}

// Calls fn(input_pixel) for each pixel of `b` in (plane, row, col) order.
template <typename Fn>
void ForEachPixel(const Window3D& w, const Box& b, Fn&& fn) {
  for (int64_t d = b.lo[0]; d < b.hi[0]; ++d) {
    for (int64_t h = b.lo[1]; h < b.hi[1]; ++h) {
      for (int64_t x = b.lo[2]; x < b.hi[2]; ++x) fn((d * w.in[1] + h) * w.in[2] + x);
    }
  }
}

std::array<int64_t, 3> OutIndex(const Window3D& w, int64_t pix) {
  return {pix / (w.out[1] * w.out[2]), (pix / w.out[2]) % w.out[1], pix % w.out[2]};
}

std::vector<int64_t> OutNdhwc(const Window3D& w) {
  return {w.batch, w.out[0], w.out[1], w.out[2], w.channels};
}

// The pooling attrs every kernel here reads.
class Pool3DKernel : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/false, /*has_ksize=*/true);
  }

 protected:
  // Checks that `t` (op's format) is what the pooling of `w` gives.
  absl::Status CheckPooledShape(const Window3D& w, const Tensor& t, const char* what) const {
    const TensorShape expected(attrs_.InFormat(OutNdhwc(w)));
    if (t.shape() != expected) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", t.shape().DebugString(),
                                                     " but the pooling gives ",
                                                     expected.DebugString()));
    }
    return absl::OkStatus();
  }
  Window3DAttrs attrs_;
};

template <typename T, bool kMax>
class Pool3DOp : public Pool3DKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor x, NdhwcInput(ctx, attrs_, ctx->input(0), "input"));
    TW_ASSIGN_OR_RETURN(Window3D w, attrs_.Compute(x.shape().dim_sizes(), attrs_.k));
    TW_ASSIGN_OR_RETURN(auto outs, NdhwcOutput(ctx, attrs_, OutNdhwc(w), x.dtype()));
    Tensor& y = outs.second;
    if (y.NumElements() == 0) return FinishNdhwcOutput(ctx, attrs_, y, outs.first);
    const int64_t c = w.channels, pixels = w.OutPixels();
    const T* in = x.data<T>();
    T* o = y.data<T>();
    ctx->intra_op_pool()->ParallelFor(
        w.batch * pixels, w.Taps() * c, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const T* image = in + (r / pixels) * w.InPixels() * c;
            const Box b = BoxOf(w, OutIndex(w, r % pixels));
            MutableRow<T> out(o + r * c, c);
            out.setConstant(kMax ? -std::numeric_limits<T>::infinity() : T(0));
            ForEachPixel(w, b, [&](int64_t p) {
              const Row<T> src(image + p * c, c);
              if constexpr (kMax) {
                out = out.max(src);
              } else {
                out += src;
              }
            });
            if constexpr (!kMax) {
              const int64_t count = b.Count();
              out *= count > 0 ? T(1) / static_cast<T>(count) : T(0);
            }
          }
        });
    return FinishNdhwcOutput(ctx, attrs_, y, outs.first);
  }
};

// MaxPool3DGrad(orig_input, orig_output, grad) and
// AvgPool3DGrad(orig_input_shape, grad): dx shaped like the input.
template <typename T, bool kMax>
class Pool3DGradOp : public Pool3DKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    std::vector<int64_t> in_dims;
    Tensor x, y;
    if constexpr (kMax) {
      const auto d = ctx->input(0).shape().dim_sizes();
      in_dims.assign(d.begin(), d.end());
    } else {
      TW_ASSIGN_OR_RETURN(in_dims, IntVector(ctx->input(0), "orig_input_shape"));
      if (in_dims.size() != 5) {
        return absl::InvalidArgumentError(
            absl::StrCat("orig_input_shape must have 5 elements, got ", in_dims.size()));
      }
    }
    TW_ASSIGN_OR_RETURN(TensorShape in_shape, TensorShape::FromDims(in_dims));
    if (in_shape.dims() != 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("orig_input must be 5-dimensional, got ", in_shape.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Window3D w, attrs_.Compute(attrs_.Ndhwc(in_dims), attrs_.k));
    const int g_index = kMax ? 2 : 1;
    if constexpr (kMax) TW_RETURN_IF_ERROR(CheckPooledShape(w, ctx->input(1), "orig_output"));
    TW_RETURN_IF_ERROR(CheckPooledShape(w, ctx->input(g_index), "grad"));
    if constexpr (kMax) {
      TW_ASSIGN_OR_RETURN(x, NdhwcInput(ctx, attrs_, ctx->input(0), "orig_input"));
      TW_ASSIGN_OR_RETURN(y, NdhwcInput(ctx, attrs_, ctx->input(1), "orig_output"));
    }
    TW_ASSIGN_OR_RETURN(Tensor g, NdhwcInput(ctx, attrs_, ctx->input(g_index), "grad"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    Tensor dx = *out;
    if (attrs_.ncdhw) {
      TW_ASSIGN_OR_RETURN(dx, ctx->allocate_temp(g.dtype(), TensorShape(attrs_.Ndhwc(in_dims))));
    }
    dx.flat<T>().setZero();
    const int64_t c = w.channels, pixels = w.OutPixels(), in_size = w.InPixels() * c;
    ctx->intra_op_pool()->ParallelFor(
        w.batch, pixels * w.Taps() * c, [&](int64_t begin, int64_t end) {
          for (int64_t n = begin; n < end; ++n) {
            T* dimage = dx.data<T>() + n * in_size;
            for (int64_t pix = 0; pix < pixels; ++pix) {
              const int64_t r = n * pixels + pix;
              const Box b = BoxOf(w, OutIndex(w, pix));
              const Row<T> grad(g.data<T>() + r * c, c);
              if constexpr (kMax) {
                const T* image = x.data<T>() + n * in_size;
                const Row<T> max(y.data<T>() + r * c, c);
                ForEachPixel(w, b, [&](int64_t p) {
                  const Row<T> v(image + p * c, c);
                  MutableRow<T>(dimage + p * c, c) +=
                      ((v - max).abs() < T(1e-5)).select(grad, T(0));
                });
              } else {
                const int64_t count = b.Count();
                if (count == 0) continue;
                const T scale = T(1) / static_cast<T>(count);
                ForEachPixel(w, b,
                             [&](int64_t p) { MutableRow<T>(dimage + p * c, c) += grad * scale; });
              }
            }
          }
        });
    if (attrs_.ncdhw) return FromNdhwc(ctx->eigen_cpu_device(), dx, out);
    return absl::OkStatus();
  }
};

// MaxPool3DGradGrad(orig_input, orig_output, grad): out shaped like
// orig_output, each element grad at its window's first maximum (0 where
// none equals it, as for a NaN).
template <typename T>
class MaxPool3DGradGradOp : public Pool3DKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor x, NdhwcInput(ctx, attrs_, ctx->input(0), "orig_input"));
    TW_ASSIGN_OR_RETURN(Window3D w, attrs_.Compute(x.shape().dim_sizes(), attrs_.k));
    TW_RETURN_IF_ERROR(CheckPooledShape(w, ctx->input(1), "orig_output"));
    if (ctx->input(2).shape() != ctx->input(0).shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("grad has shape ", ctx->input(2).shape().DebugString(),
                       " but orig_input has ", ctx->input(0).shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor y, NdhwcInput(ctx, attrs_, ctx->input(1), "orig_output"));
    TW_ASSIGN_OR_RETURN(Tensor g, NdhwcInput(ctx, attrs_, ctx->input(2), "grad"));
    TW_ASSIGN_OR_RETURN(auto outs, NdhwcOutput(ctx, attrs_, OutNdhwc(w), x.dtype()));
    Tensor& z = outs.second;
    if (z.NumElements() == 0) return FinishNdhwcOutput(ctx, attrs_, z, outs.first);
    const int64_t c = w.channels, pixels = w.OutPixels(), in_size = w.InPixels() * c;
    ctx->intra_op_pool()->ParallelFor(w.batch * pixels, w.Taps() * c,
                                      [&](int64_t begin, int64_t end) {
                                        for (int64_t r = begin; r < end; ++r) {
                                          const int64_t n = r / pixels;
                                          const T* image = x.data<T>() + n * in_size;
                                          const T* grad = g.data<T>() + n * in_size;
                                          const T* max = y.data<T>() + r * c;
                                          T* out = z.data<T>() + r * c;
                                          const Box b = BoxOf(w, OutIndex(w, r % pixels));
                                          for (int64_t ch = 0; ch < c; ++ch) {
                                            out[ch] = T(0);
                                            bool found = false;
                                            ForEachPixel(w, b, [&](int64_t p) {
                                              if (!found && image[p * c + ch] == max[ch]) {
                                                out[ch] = grad[p * c + ch];
                                                found = true;
                                              }
                                            });
                                          }
                                        }
                                      });
    return FinishNdhwcOutput(ctx, attrs_, z, outs.first);
  }
};

template <typename T>
using MaxPool3DOp = Pool3DOp<T, true>;
template <typename T>
using AvgPool3DOp = Pool3DOp<T, false>;
template <typename T>
using MaxPool3DGradOp = Pool3DGradOp<T, true>;
template <typename T>
using AvgPool3DGradOp = Pool3DGradOp<T, false>;

TW_REGISTER_KERNELS(pooling3d_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<MaxPool3DOp, float>(cpu("MaxPool3D"), "T");
  RegisterTypedKernels<AvgPool3DOp, float, double>(cpu("AvgPool3D"), "T");
  RegisterTypedKernels<MaxPool3DGradOp, float>(
      cpu("MaxPool3DGrad").TypeConstraint("TInput", DT_FLOAT), "T");
  RegisterTypedKernels<AvgPool3DGradOp, float, double>(cpu("AvgPool3DGrad"), "T");
  RegisterTypedKernels<MaxPool3DGradGradOp, float, double, int32_t, int64_t, uint8_t>(
      cpu("MaxPool3DGradGrad"), "T");
}

}  // namespace
}  // namespace towerflow
