// Image resizing (ResizeBilinear, ResizeNearestNeighbor and their
// gradients, ResizeBicubic, ResizeArea) on NHWC, and SpaceToBatchND / BatchToSpaceND.
//
// The coordinates and checks are kernels/image_plans.h's (Note [Resize
// coordinates] there), shared with the GPU kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/image_plans.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

template <typename T>
class ResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    const int64_t n = io.n, ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    if (out->NumElements() == 0) return absl::OkStatus();
    const Taps ys = BilinearTaps(a_, ih, oh), xs = BilinearTaps(a_, iw, ow);
    const T* x = in.data<T>();
    float* y = out->data<float>();
    ctx->intra_op_pool()->ParallelFor(n * oh, ow * c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        BilinearResizeRow(x + b * ih * iw * c, iw, c, ys, xs, i, /*flip=*/false, nullptr,
                          y + row * ow * c);
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeBicubic (core/image_geometry.h's BicubicTaps): each output pixel
// from 4x4 input pixels, the columns first, as TF sums them.
template <typename T>
class ResizeBicubicOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    const int64_t ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    if (io.out->NumElements() == 0) return absl::OkStatus();
    const WeightedTaps ys = BicubicTaps(a_, ih, oh), xs = BicubicTaps(a_, iw, ow);
    const T* x = in.data<T>();
    float* y = io.out->data<float>();
    ctx->intra_op_pool()->ParallelFor(io.n * oh, ow * c * 16, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        const T* rows[4];
        for (int k = 0; k < 4; ++k) rows[k] = x + (b * ih + ys.index[i * 4 + k]) * iw * c;
        const float* wy = &ys.weight[i * 4];
        float* dst = y + row * ow * c;
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t* cx = &xs.index[j * 4];
          const float* wx = &xs.weight[j * 4];
          for (int64_t k = 0; k < c; ++k) {
            float column[4];
            for (int m = 0; m < 4; ++m) {
              const int64_t at = cx[m] * c + k;
              column[m] = static_cast<float>(rows[0][at]) * wy[0] +
                          static_cast<float>(rows[1][at]) * wy[1] +
                          static_cast<float>(rows[2][at]) * wy[2] +
                          static_cast<float>(rows[3][at]) * wy[3];
            }
            dst[j * c + k] =
                column[0] * wx[0] + column[1] * wx[1] + column[2] * wx[2] + column[3] * wx[3];
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeBilinearGrad and ResizeBicubicGrad(grads, original_image): each
// gradient spread over its taps (2x2 or 4x4), g * wy * wx in TF's order;
// images in parallel (taps of one image overlap).
using TapsFn = WeightedTaps (*)(const ResizeCoordinates&, int64_t, int64_t);
template <typename T, TapsFn kTaps>
class ResizeGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    const Tensor& original = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckResizeGrad(grads, original));
    const int64_t n = grads.dim_size(0), gh = grads.dim_size(1), gw = grads.dim_size(2),
                  c = grads.dim_size(3), oh = original.dim_size(1), ow = original.dim_size(2);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, original.shape()));
    out->flat<T>().setZero();
    if (out->NumElements() == 0) return absl::OkStatus();
    const WeightedTaps ys = kTaps(a_, oh, gh), xs = kTaps(a_, ow, gw);
    const int k = ys.k;
    const float* g = grads.data<float>();
    T* dx = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(n, gh * gw * c * 8 * k, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < gh; ++i) {
          const float* src = g + (b * gh + i) * gw * c;
          for (int m = 0; m < k; ++m) {
            T* row = dx + (b * oh + ys.index[i * k + m]) * ow * c;
            const float wy = ys.weight[i * k + m];
            for (int64_t j = 0; j < gw; ++j) {
              for (int q = 0; q < k; ++q) {
                T* dst = row + xs.index[j * k + q] * c;
                const float wx = xs.weight[j * k + q];
                for (int64_t ch = 0; ch < c; ++ch) {
                  dst[ch] += static_cast<T>(src[j * c + ch] * wy * wx);
                }
              }
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

template <typename T>
using ResizeBilinearGradOp = ResizeGradOp<T, BilinearWeightedTaps>;
template <typename T>
using ResizeBicubicGradOp = ResizeGradOp<T, BicubicTaps>;

// ResizeArea (core/image_geometry.h's ResizeAreaTaps): each output pixel
// the area-weighted mean of the input pixels its cell covers.
template <typename T>
class ResizeAreaOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("align_corners", &a_.align_corners);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "images"));
    const int64_t ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    if (io.out->NumElements() == 0) return absl::OkStatus();
    const float hs = a_.Scale(ih, oh), ws = a_.Scale(iw, ow);
    const AreaTaps ys = ResizeAreaTaps(hs, ih, oh), xs = ResizeAreaTaps(ws, iw, ow);
    const float norm = 1.0f / (hs * ws);
    const T* x = in.data<T>();
    float* y = io.out->data<float>();
    ctx->intra_op_pool()->ParallelFor(io.n * oh, ow * c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        float* dst = y + row * ow * c;
        for (int64_t j = 0; j < ow; ++j) {
          for (int64_t k = 0; k < c; ++k) {
            float sum_y = 0;
            for (int64_t p = ys.begin[i]; p < ys.begin[i + 1]; ++p) {
              const T* src = x + (b * ih + ys.index[p]) * iw * c + k;
              float sum_x = 0;
              for (int64_t q = xs.begin[j]; q < xs.begin[j + 1]; ++q) {
                const float v = static_cast<float>(src[xs.index[q] * c]);
                sum_x += xs.weight[q] == 1.0f ? v : v * xs.weight[q];
              }
              sum_y += sum_x * ys.weight[p];
            }
            dst[j * c + k] = sum_y * norm;
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeCoordinates a_;
};

// ResizeNearestNeighbor copies depth runs, so it runs on any element size.
class ResizeNearestOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_ASSIGN_OR_RETURN(size_t elem, PlainElementSize("ResizeNearestNeighbor", in.dtype()));
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "input"));
    const int64_t n = io.n, ih = io.in_h, iw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> ys = NearestTaps(a_, ih, oh), xs = NearestTaps(a_, iw, ow);
    const char* x = static_cast<const char*>(in.raw_data());
    char* y = static_cast<char*>(out->raw_data());
    const size_t run = c * elem;
    ctx->intra_op_pool()->ParallelFor(n * oh, ow * c, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh, i = row % oh;
        const char* src = x + (b * ih + ys[i]) * iw * run;
        char* dst = y + row * ow * run;
        for (int64_t j = 0; j < ow; ++j) std::memcpy(dst + j * run, src + xs[j] * run, run);
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// ResizeNearestNeighborGrad(grads, size): each gradient added to the pixel
// of the size-shaped image that the forward resize (size -> grads) read.
template <typename T>
class ResizeNearestGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return a_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& grads = ctx->input(0);
    TW_ASSIGN_OR_RETURN(const ResizeIo io, ResizeOutput(ctx, "grads"));
    const int64_t n = io.n, gh = io.in_h, gw = io.in_w, c = io.c, oh = io.out_h, ow = io.out_w;
    Tensor* out = io.out;
    out->flat<T>().setZero();
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> ys = NearestTaps(a_, oh, gh), xs = NearestTaps(a_, ow, gw);
    const T* g = grads.data<T>();
    T* dx = out->data<T>();
    ctx->intra_op_pool()->ParallelFor(n, gh * gw * c, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < gh; ++i) {
          T* dst = dx + (b * oh + ys[i]) * ow * c;
          const T* src = g + (b * gh + i) * gw * c;
          for (int64_t j = 0; j < gw; ++j) {
            for (int64_t k = 0; k < c; ++k) dst[xs[j] * c + k] += src[j * c + k];
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ResizeAttrs a_;
};

// SpaceToBatchND (to_batch) and BatchToSpaceND (PlanSpaceBatch): runs of
// the R dims are copied as bytes; padding is zero.
// The first versions (SpaceToBatch, BatchToSpace) take an NHWC input, the
// attr block_size for both spatial dims, and the paddings / crops as input 1.
class SpaceBatchOp : public OpKernel {
 public:
  explicit SpaceBatchOp(bool to_batch) : to_batch_(to_batch) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (!c.def().attr().contains("block_size")) return absl::OkStatus();
    int64_t size = 0;
    TW_RETURN_IF_ERROR(c.GetAttr("block_size", &size));
    block_ = Tensor(DT_INT64, TensorShape({2}));
    block_.data<int64_t>()[0] = block_.data<int64_t>()[1] = size;
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const bool v1 = ctx->num_inputs() == 2;
    if (v1 && in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input rank should be: 4 instead of: ", in.dims()));
    }
    TW_ASSIGN_OR_RETURN(
        const SpaceBatchPlan p,
        PlanSpaceBatch(to_batch_, in.shape(), v1 ? block_ : ctx->input(1), ctx->input(v1 ? 1 : 2)));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.shape));
    if (p.shape.num_elements() == 0) return absl::OkStatus();
    TW_ASSIGN_OR_RETURN(
        size_t elem, PlainElementSize(to_batch_ ? "SpaceToBatchND" : "BatchToSpaceND", in.dtype()));
    const int64_t m = static_cast<int64_t>(p.block.size());
    const size_t run = p.inner * elem;
    // Walk the deep side's outer positions [batch, o1..oM]; each is one
    // wide position or padding (cropping covers every wide position once).
    const Tensor& deep_t = to_batch_ ? *out : in;
    const int64_t positions = deep_t.NumElements() / std::max<int64_t>(p.inner, 1);
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    ctx->intra_op_pool()->ParallelFor(positions, p.inner, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> o(m);
      for (int64_t pos = begin; pos < end; ++pos) {
        int64_t rest = pos;
        for (int64_t k = m - 1; k >= 0; --k) {
          o[k] = rest % p.deep[k + 1];
          rest /= p.deep[k + 1];
        }
        const int64_t b = rest % p.wide_batch;
        // Block offsets, row-major over block_shape, give the strides of
        // the wide index.
        int64_t offset = rest / p.wide_batch, block_stride = p.product, wide_pos = b;
        bool outside = false;
        for (int64_t k = 0; k < m; ++k) {
          block_stride /= p.block[k];
          const int64_t i = offset / block_stride;
          offset %= block_stride;
          const int64_t s = o[k] * p.block[k] + i - p.pads[2 * k];
          outside = outside || s < 0 || s >= p.limit[k];
          wide_pos = wide_pos * p.limit[k] + (outside ? 0 : s);
        }
        if (to_batch_) {
          if (outside) {
            std::memset(dst + pos * run, 0, run);
          } else {
            std::memcpy(dst + pos * run, src + wide_pos * run, run);
          }
        } else if (!outside) {
          std::memcpy(dst + wide_pos * run, src + pos * run, run);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const bool to_batch_;
  Tensor block_;  // v1: [block_size, block_size]
};

TW_REGISTER_KERNELS(image_ops) {
  const auto cpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceCpu).HostMemory("size");
  };
  RegisterTypedKernels<ResizeBilinearOp, float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                       uint16_t>(cpu("ResizeBilinear"), "T");
  RegisterTypedKernels<ResizeBilinearGradOp, float, double>(
      KernelDefBuilder("ResizeBilinearGrad").Device(kDeviceCpu), "T");
  RegisterTypedKernels<ResizeBicubicOp, float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                       uint16_t>(cpu("ResizeBicubic"), "T");
  RegisterTypedKernels<ResizeBicubicGradOp, float, double>(
      KernelDefBuilder("ResizeBicubicGrad").Device(kDeviceCpu), "T");
  RegisterTypedKernels<ResizeAreaOp, float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                       uint16_t>(cpu("ResizeArea"), "T");
  RegisterKernel(cpu("ResizeNearestNeighbor"), [] { return std::make_unique<ResizeNearestOp>(); });
  RegisterTypedKernels<ResizeNearestGradOp, float, double, int32_t, uint8_t, int8_t>(
      cpu("ResizeNearestNeighborGrad"), "T");
  const auto block = [](const char* op, const char* amounts) {
    return KernelDefBuilder(op).Device(kDeviceCpu).HostMemory("block_shape").HostMemory(amounts);
  };
  RegisterKernel(block("SpaceToBatchND", "paddings"),
                 [] { return std::make_unique<SpaceBatchOp>(true); });
  RegisterKernel(block("BatchToSpaceND", "crops"),
                 [] { return std::make_unique<SpaceBatchOp>(false); });
  RegisterKernel(KernelDefBuilder("SpaceToBatch").Device(kDeviceCpu).HostMemory("paddings"),
                 [] { return std::make_unique<SpaceBatchOp>(true); });
  RegisterKernel(KernelDefBuilder("BatchToSpace").Device(kDeviceCpu).HostMemory("crops"),
                 [] { return std::make_unique<SpaceBatchOp>(false); });
}

}  // namespace
}  // namespace towerflow
