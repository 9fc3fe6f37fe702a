// Dilation2D and its backprops (ops/conv_ops.cc), TF's rules: out[b, y, x,
// d] is the maximum over the filter taps (i, j) that land inside the input
// of input[b, y * stride - pad_top + i * rate, x * stride - pad_left +
// j * rate, d] + filter[i, j, d] (the lowest value when none does). The
// backprops send each output's gradient to its first maximum in scan order
// (strict >), to the input pixel or the filter tap; an output whose window
// holds no input pixel sends it to the window's first in-range pixel and
// to tap (0, 0), as TF's.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/window_util.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

struct DilationGeometry {
  int64_t batch, in_rows, in_cols, depth, f_rows, f_cols;
  int64_t stride_rows, stride_cols, rate_rows, rate_cols;
  int64_t out_rows, out_cols, pad_top, pad_left;
};

class DilationAttrs {
 public:
  absl::Status Init(const KernelConstruction& c) {
    TW_RETURN_IF_ERROR(c.GetAttr("strides", &strides_));
    TW_RETURN_IF_ERROR(c.GetAttr("rates", &rates_));
    std::string padding;
    TW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
    TW_ASSIGN_OR_RETURN(padding_, ParsePadding(padding));
    if (strides_.size() != 4 || rates_.size() != 4) {
      return absl::InvalidArgumentError(
          "Sliding window strides and rates fields must specify 4 dimensions");
    }
    if (strides_[0] != 1 || strides_[3] != 1) {
      return absl::UnimplementedError("Stride is only supported across spatial dimensions.");
    }
    if (rates_[0] != 1 || rates_[3] != 1) {
      return absl::UnimplementedError("Rate is only supported across spatial dimensions.");
    }
    for (int i : {1, 2}) {
      if (strides_[i] < 1 || rates_[i] < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "strides and rates must be positive, got strides [", absl::StrJoin(strides_, ","),
            "] and rates [", absl::StrJoin(rates_, ","), "]"));
      }
    }
    return absl::OkStatus();
  }

  // The geometry of input and filter (TF's ParseSizes checks).
  absl::StatusOr<DilationGeometry> Geometry(const Tensor& input, const Tensor& filter) const {
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", input.shape().DebugString()));
    }
    if (filter.dims() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("filter must be 3-dimensional: ", filter.shape().DebugString()));
    }
    if (input.dim_size(3) != filter.dim_size(2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input and filter must have the same depth: ", input.dim_size(3), " vs ",
                       filter.dim_size(2)));
    }
    DilationGeometry g{input.dim_size(0),
                       input.dim_size(1),
                       input.dim_size(2),
                       input.dim_size(3),
                       filter.dim_size(0),
                       filter.dim_size(1),
                       strides_[1],
                       strides_[2],
                       rates_[1],
                       rates_[2],
                       0,
                       0,
                       0,
                       0};
    int64_t after = 0;
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(g.in_rows, g.f_rows, g.rate_rows, g.stride_rows,
                                             padding_, &g.out_rows, &g.pad_top, &after));
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(g.in_cols, g.f_cols, g.rate_cols, g.stride_cols,
                                             padding_, &g.out_cols, &g.pad_left, &after));
    return g;
  }

 private:
  std::vector<int64_t> strides_, rates_;
  Padding padding_ = Padding::kValid;
};

// Calls visit(o, at_input, at_filter, value) for each output element o with
// the flat positions of its maximum in input and filter and the maximum:
// on `pool` by images (by_image) or output rows, or in order without one.
template <typename T, typename Visit>
void ForEachMaximum(ThreadPool* pool, const DilationGeometry& g, const T* x, const T* f,
                    bool by_image, Visit&& visit) {
  const auto run = [&](int64_t b, int64_t y) {
    for (int64_t xo = 0; xo < g.out_cols; ++xo) {
      const int64_t h_beg = y * g.stride_rows - g.pad_top;
      const int64_t w_beg = xo * g.stride_cols - g.pad_left;
      for (int64_t d = 0; d < g.depth; ++d) {
        T best = std::numeric_limits<T>::lowest();
        int64_t h_max = std::max<int64_t>(h_beg, 0), w_max = std::max<int64_t>(w_beg, 0);
        int64_t i_max = 0, j_max = 0;
        for (int64_t i = 0; i < g.f_rows; ++i) {
          const int64_t h = h_beg + i * g.rate_rows;
          if (h < 0 || h >= g.in_rows) continue;
          for (int64_t j = 0; j < g.f_cols; ++j) {
            const int64_t w = w_beg + j * g.rate_cols;
            if (w < 0 || w >= g.in_cols) continue;
            const T v = x[((b * g.in_rows + h) * g.in_cols + w) * g.depth + d] +
                        f[(i * g.f_cols + j) * g.depth + d];
            if (v > best) {
              best = v;
              h_max = h, w_max = w, i_max = i, j_max = j;
            }
          }
        }
        const int64_t o = ((b * g.out_rows + y) * g.out_cols + xo) * g.depth + d;
        visit(o, ((b * g.in_rows + h_max) * g.in_cols + w_max) * g.depth + d,
              (i_max * g.f_cols + j_max) * g.depth + d, best);
      }
    }
  };
  const int64_t cost = g.out_cols * g.depth * g.f_rows * g.f_cols;
  if (pool == nullptr) {
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t y = 0; y < g.out_rows; ++y) run(b, y);
    }
  } else if (by_image) {
    pool->ParallelFor(g.batch, cost * g.out_rows, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t y = 0; y < g.out_rows; ++y) run(b, y);
      }
    });
  } else {
    pool->ParallelFor(g.batch * g.out_rows, cost, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) run(r / g.out_rows, r % g.out_rows);
    });
  }
}

template <typename T>
class Dilation2DOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return attrs_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    TW_ASSIGN_OR_RETURN(const DilationGeometry g, attrs_.Geometry(input, filter));
    TW_ASSIGN_OR_RETURN(
        Tensor * out,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.depth})));
    T* o = out->data<T>();
    ForEachMaximum<T>(ctx->intra_op_pool(), g, input.data<T>(), filter.data<T>(), false,
                      [&](int64_t at, int64_t, int64_t, T value) { o[at] = value; });
    return absl::OkStatus();
  }

 private:
  DilationAttrs attrs_;
};

// Dilation2DBackpropInput (kFilter false) and Dilation2DBackpropFilter.
template <typename T, bool kFilter>
class Dilation2DBackpropOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return attrs_.Init(c); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    TW_ASSIGN_OR_RETURN(const DilationGeometry g, attrs_.Geometry(input, filter));
    if (dy.shape() != TensorShape({g.batch, g.out_rows, g.out_cols, g.depth})) {
      return absl::InvalidArgumentError("out_backprop has incompatible size.");
    }
    TW_ASSIGN_OR_RETURN(Tensor * out,
                        ctx->allocate_output(0, kFilter ? filter.shape() : input.shape()));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T(0));
    const T* g_out = dy.data<T>();
    // Input gradients: images apart, threads never share a pixel. Filter
    // gradients all land in one small tensor: one thread.
    if constexpr (kFilter) {
      ForEachMaximum<T>(nullptr, g, input.data<T>(), filter.data<T>(), true,
                        [&](int64_t at, int64_t, int64_t tap, T) { o[tap] += g_out[at]; });
    } else {
      ForEachMaximum<T>(ctx->intra_op_pool(), g, input.data<T>(), filter.data<T>(), true,
                        [&](int64_t at, int64_t pixel, int64_t, T) { o[pixel] += g_out[at]; });
    }
    return absl::OkStatus();
  }

 private:
  DilationAttrs attrs_;
};
template <typename T>
using Dilation2DBackpropInputOp = Dilation2DBackpropOp<T, false>;
template <typename T>
using Dilation2DBackpropFilterOp = Dilation2DBackpropOp<T, true>;

TW_REGISTER_KERNELS(dilation_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<Dilation2DOp, float, double, int32_t, int64_t>(cpu("Dilation2D"), "T");
  RegisterTypedKernels<Dilation2DBackpropInputOp, float, double, int32_t, int64_t>(
      cpu("Dilation2DBackpropInput"), "T");
  RegisterTypedKernels<Dilation2DBackpropFilterOp, float, double, int32_t, int64_t>(
      cpu("Dilation2DBackpropFilter"), "T");
}

}  // namespace
}  // namespace towerflow
