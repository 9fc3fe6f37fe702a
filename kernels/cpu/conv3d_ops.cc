// Conv3D and its backprops (Conv3DBackpropInputV2, Conv3DBackpropFilterV2,
// and the deprecated Conv3DBackpropInput / Conv3DBackpropFilter that take
// the tensors themselves for their shapes) as vol2col + GEMM
// (kernels/cpu/blas.h), Note [Convolution as GEMM] in conv_ops.cc one
// dimension up: for NDHWC x [N,D,H,W,C] and filter f [KD,KH,KW,C,OC],
// every output pixel is one row of the patch matrix
// P [N*OD*OH*OW, KD*KH*KW*C] (zeros where the window leaves the padded
// input), and
//   y = P f,   df = P^T dy,   dP = dy f^T, dx = col2vol(dP).
// P is built in chunks of at most kChunkBytes; vol2col is sharded over the
// intra-op pool by rows, col2vol by whole images (no two threads add into
// one pixel); each GEMM uses the BLAS's threads. NCDHW tensors are
// transposed to NDHWC and back; dilations are honoured.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/cpu/blas.h"
#include "kernels/kernel_util.h"
#include "kernels/window3d.h"

namespace towerflow {
namespace {

constexpr int64_t kChunkBytes = int64_t{16} << 20;

// The input pixel of output pixel `pix` (in one image) at tap (kd, kh, kw),
// or -1 where it falls in the padding.
struct Tap {
  int64_t od, oh, ow;
};
inline Tap OutPixel(const Window3D& w, int64_t pix) {
  return {pix / (w.out[1] * w.out[2]), (pix / w.out[2]) % w.out[1], pix % w.out[2]};
}

// Calls fn(dst_offset_in_row, input_pixel_or_-1) for each tap of output
// pixel `o`, in the patch row's order (kd, kh, kw).
template <typename Fn>
inline void ForEachTap(const Window3D& w, const Tap& o, Fn&& fn) {
  int64_t col = 0;
  for (int64_t kd = 0; kd < w.k[0]; ++kd) {
    const int64_t id = w.Start(0, o.od) + kd * w.dilation[0];
    for (int64_t kh = 0; kh < w.k[1]; ++kh) {
      const int64_t ih = w.Start(1, o.oh) + kh * w.dilation[1];
      for (int64_t kw = 0; kw < w.k[2]; ++kw, col += w.channels) {
        const int64_t iw = w.Start(2, o.ow) + kw * w.dilation[2];
        const bool inside =
            id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1] && iw >= 0 && iw < w.in[2];
        fn(col, inside ? (id * w.in[1] + ih) * w.in[2] + iw : int64_t{-1});
      }
    }
  }
}

// Rows [r0, r1) of x's patch matrix into p.
template <typename T>
void Vol2Col(ThreadPool* pool, const Window3D& w, const T* x, int64_t r0, int64_t r1, T* p) {
  const int64_t c = w.channels, row = w.Taps() * c, pixels = w.OutPixels();
  pool->ParallelFor(r1 - r0, row, [&](int64_t begin, int64_t end) {
    for (int64_t r = r0 + begin; r < r0 + end; ++r) {
      const T* image = x + (r / pixels) * w.InPixels() * c;
      T* dst = p + (r - r0) * row;
      ForEachTap(w, OutPixel(w, r % pixels), [&](int64_t col, int64_t in) {
        if (in < 0) {
          std::fill_n(dst + col, c, T(0));
        } else {
          std::memcpy(dst + col, image + in * c, c * sizeof(T));
        }
      });
    }
  });
}

// Adds patch rows [r0, r1) back into dx. REQUIRES: r0 and r1 are image
// boundaries.
template <typename T>
void Col2Vol(ThreadPool* pool, const Window3D& w, const T* p, int64_t r0, int64_t r1, T* dx) {
  const int64_t c = w.channels, row = w.Taps() * c, pixels = w.OutPixels();
  const int64_t n0 = r0 / pixels, n1 = r1 / pixels;
  pool->ParallelFor(n1 - n0, pixels * row, [&](int64_t begin, int64_t end) {
    for (int64_t n = n0 + begin; n < n0 + end; ++n) {
      T* image = dx + n * w.InPixels() * c;
      for (int64_t pix = 0; pix < pixels; ++pix) {
        const T* src = p + (n * pixels + pix - r0) * row;
        ForEachTap(w, OutPixel(w, pix), [&](int64_t col, int64_t in) {
          if (in < 0) return;
          T* dst = image + in * c;
          for (int64_t i = 0; i < c; ++i) dst[i] += src[col + i];
        });
      }
    }
  });
}

// Patch rows per chunk: whole images when `whole_images`, at least one.
int64_t ChunkRows(const Window3D& w, size_t elem, bool whole_images) {
  const int64_t row_bytes = std::max<int64_t>(1, w.Taps() * w.channels * elem);
  int64_t rows = std::max<int64_t>(1, kChunkBytes / row_bytes);
  if (whole_images) {
    const int64_t pixels = std::max<int64_t>(1, w.OutPixels());
    rows = std::max<int64_t>(1, rows / pixels) * pixels;
  }
  return rows;
}

bool IsPointwise(const Window3D& w) {
  for (int i = 0; i < 3; ++i) {
    if (w.k[i] != 1 || w.stride[i] != 1 || w.pad[i] != 0) return false;
  }
  return true;
}

absl::Status CheckBlasSizes(const Window3D& w, int64_t oc) {
  const int64_t rows = w.batch * w.OutPixels(), k = w.Taps() * w.channels;
  if (!FitsBlas(rows) || !FitsBlas(k) || !FitsBlas(oc) || !FitsBlas(rows * oc) ||
      !FitsBlas(k * oc)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "3-D convolution too large for 32-bit BLAS: ", rows, " output pixels by ", k, " taps"));
  }
  return absl::OkStatus();
}

template <typename T>
class Conv3DOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    TW_ASSIGN_OR_RETURN(Tensor x, NdhwcInput(ctx, attrs_, ctx->input(0), "input"));
    TW_ASSIGN_OR_RETURN(Window3D w,
                        Conv3DGeometry(attrs_, x.shape().dim_sizes(), filter.shape().dim_sizes()));
    const int64_t oc = filter.dim_size(4);
    TW_ASSIGN_OR_RETURN(
        auto outs,
        NdhwcOutput(ctx, attrs_, {w.batch, w.out[0], w.out[1], w.out[2], oc}, x.dtype()));
    auto& [out, y] = outs;
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_RETURN_IF_ERROR(CheckBlasSizes(w, oc));
    const int64_t rows = w.batch * w.OutPixels(), k = w.Taps() * w.channels;
    const T* f = filter.data<T>();
    if (k == 0) {
      y.flat<T>().setZero();
    } else if (IsPointwise(w)) {
      Gemm<T>(false, false, rows, oc, k, T(1), x.data<T>(), k, f, oc, T(0), y.data<T>(), oc);
    } else {
      const int64_t chunk = std::min(rows, ChunkRows(w, sizeof(T), false));
      TW_ASSIGN_OR_RETURN(Tensor patches, ctx->allocate_temp(x.dtype(), TensorShape({chunk, k})));
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk);
        Vol2Col<T>(ctx->intra_op_pool(), w, x.data<T>(), r0, r1, patches.data<T>());
        Gemm<T>(false, false, r1 - r0, oc, k, T(1), patches.data<T>(), k, f, oc, T(0),
                y.data<T>() + r0 * oc, oc);
      }
    }
    return FinishNdhwcOutput(ctx, attrs_, y, out);
  }

 private:
  Window3DAttrs attrs_;
};

// The backprops: kFilter picks the filter gradient; kV2 reads the
// gradient's shape from input_sizes / filter_sizes, the deprecated V1 ops
// from the input / filter tensor itself.
template <typename T, bool kFilter, bool kV2>
class Conv3DBackpropOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return attrs_.Init(c, /*has_dilations=*/true, /*has_ksize=*/false);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const char* what = kFilter ? "filter_sizes" : "input_sizes";
    const int sizes_input = kFilter ? 1 : 0;
    std::vector<int64_t> sizes;
    if constexpr (kV2) {
      TW_ASSIGN_OR_RETURN(sizes, IntVector(ctx->input(sizes_input), what));
    } else {
      const auto d = ctx->input(sizes_input).shape().dim_sizes();
      sizes.assign(d.begin(), d.end());
    }
    if (sizes.size() != 5) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must have 5 elements, got ", sizes.size()));
    }
    TW_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(sizes));
    const Tensor& given = ctx->input(kFilter ? 0 : 1);  // input or filter
    if (given.dims() != 5) {
      return absl::InvalidArgumentError(absl::StrCat(kFilter ? "input" : "filter",
                                                     " must be 5-dimensional, got ",
                                                     given.shape().DebugString()));
    }
    const auto given_dims = given.shape().dim_sizes();
    const std::vector<int64_t> in_dims =
        kFilter ? std::vector<int64_t>(given_dims.begin(), given_dims.end()) : sizes;
    const std::vector<int64_t> f_dims =
        kFilter ? sizes : std::vector<int64_t>(given_dims.begin(), given_dims.end());
    const std::vector<int64_t> in_ndhwc = attrs_.Ndhwc(in_dims);
    TW_ASSIGN_OR_RETURN(Window3D w, Conv3DGeometry(attrs_, in_ndhwc, f_dims));
    const int64_t oc = f_dims[4];
    const std::vector<int64_t> dy_expected =
        attrs_.InFormat({w.batch, w.out[0], w.out[1], w.out[2], oc});
    const Tensor& dy_in = ctx->input(2);
    if (dy_in.shape() != TensorShape(dy_expected)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "out_backprop has shape ", dy_in.shape().DebugString(), " but the convolution of ",
          TensorShape(in_dims).DebugString(), " by ", TensorShape(f_dims).DebugString(), " gives ",
          TensorShape(dy_expected).DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor dy, NdhwcInput(ctx, attrs_, dy_in, "out_backprop"));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    TW_RETURN_IF_ERROR(CheckBlasSizes(w, oc));
    const int64_t rows = w.batch * w.OutPixels(), k = w.Taps() * w.channels;
    ThreadPool* pool = ctx->intra_op_pool();
    if constexpr (kFilter) {
      TW_ASSIGN_OR_RETURN(Tensor x, NdhwcInput(ctx, attrs_, given, "input"));
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
        Vol2Col<T>(pool, w, x.data<T>(), r0, r1, patches.data<T>());
        Gemm<T>(true, false, k, oc, r1 - r0, T(1), patches.data<T>(), k, dy.data<T>() + r0 * oc, oc,
                T(1), out->data<T>(), oc);
      }
      return absl::OkStatus();
    } else {
      Tensor dx = *out;
      if (attrs_.ncdhw) {
        TW_ASSIGN_OR_RETURN(dx, ctx->allocate_temp(dy.dtype(), TensorShape(in_ndhwc)));
      }
      dx.flat<T>().setZero();
      const T* f = given.data<T>();
      if (rows > 0 && oc > 0 && IsPointwise(w)) {
        Gemm<T>(false, true, rows, k, oc, T(1), dy.data<T>(), oc, f, oc, T(0), dx.data<T>(), k);
      } else if (rows > 0 && oc > 0) {
        const int64_t chunk = std::min(rows, ChunkRows(w, sizeof(T), true));
        TW_ASSIGN_OR_RETURN(Tensor patches,
                            ctx->allocate_temp(dy.dtype(), TensorShape({chunk, k})));
        for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
          const int64_t r1 = std::min(rows, r0 + chunk);
          Gemm<T>(false, true, r1 - r0, k, oc, T(1), dy.data<T>() + r0 * oc, oc, f, oc, T(0),
                  patches.data<T>(), k);
          Col2Vol<T>(pool, w, patches.data<T>(), r0, r1, dx.data<T>());
        }
      }
      if (attrs_.ncdhw) return FromNdhwc(ctx->eigen_cpu_device(), dx, out);
      return absl::OkStatus();
    }
  }

 private:
  Window3DAttrs attrs_;
};

template <typename T>
using InputGradV2 = Conv3DBackpropOp<T, false, true>;
template <typename T>
using FilterGradV2 = Conv3DBackpropOp<T, true, true>;
template <typename T>
using InputGradV1 = Conv3DBackpropOp<T, false, false>;
template <typename T>
using FilterGradV1 = Conv3DBackpropOp<T, true, false>;

TW_REGISTER_KERNELS(conv3d_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<Conv3DOp, float, double>(cpu("Conv3D"), "T");
  RegisterTypedKernels<InputGradV2, float, double>(cpu("Conv3DBackpropInputV2"), "T");
  RegisterTypedKernels<FilterGradV2, float, double>(cpu("Conv3DBackpropFilterV2"), "T");
  RegisterTypedKernels<InputGradV1, float, double>(cpu("Conv3DBackpropInput"), "T");
  RegisterTypedKernels<FilterGradV1, float, double>(cpu("Conv3DBackpropFilter"), "T");
}

}  // namespace
}  // namespace towerflow
