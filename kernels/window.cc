#include "kernels/window.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/tensor_views.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

// Spatial (h, w) of a 4-vector attr in the data format, checking the batch
// and depth entries are 1 and the spatial ones positive.
absl::Status Spatial(const std::vector<int64_t>& v, bool nchw, const char* what, int64_t* h,
                     int64_t* w) {
  if (v.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " attribute must specify 4 dimensions, got [", absl::StrJoin(v, ","), "]"));
  }
  const int64_t n = v[0], c = v[nchw ? 1 : 3];
  *h = v[nchw ? 2 : 1];
  *w = v[nchw ? 3 : 2];
  if (n != 1 || c != 1) {
    return absl::UnimplementedError(absl::StrCat("Current implementation does not yet support ",
                                                 what, " in the batch and depth dimensions, got [",
                                                 absl::StrJoin(v, ","), "]"));
  }
  if (*h <= 0 || *w <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be positive, got [", absl::StrJoin(v, ","), "]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WindowAttrs::Init(const KernelConstruction& c, bool has_dilations, bool has_ksize) {
  TW_RETURN_IF_ERROR(InitLayoutAndPadding(c));
  std::vector<int64_t> strides;
  TW_RETURN_IF_ERROR(c.GetAttr("strides", &strides));
  TW_RETURN_IF_ERROR(Spatial(strides, nchw, "strides", &stride_h, &stride_w));
  if (has_dilations) {
    std::vector<int64_t> dilations;
    TW_RETURN_IF_ERROR(c.GetAttr("dilations", &dilations));
    TW_RETURN_IF_ERROR(Spatial(dilations, nchw, "dilations", &dilation_h, &dilation_w));
  }
  if (has_ksize) {
    std::vector<int64_t> ksize;
    TW_RETURN_IF_ERROR(c.GetAttr("ksize", &ksize));
    TW_RETURN_IF_ERROR(Spatial(ksize, nchw, "ksize", &k_h, &k_w));
  }
  return absl::OkStatus();
}

absl::Status WindowAttrs::InitLayoutAndPadding(const KernelConstruction& c) {
  std::string format = "NHWC";
  if (c.def().attr().count("data_format")) TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format));
  }
  nchw = format == "NCHW";
  std::string pad;
  TW_RETURN_IF_ERROR(c.GetAttr("padding", &pad));
  TW_ASSIGN_OR_RETURN(padding, ParsePadding(pad));
  if (padding == Padding::kExplicit) {
    TW_RETURN_IF_ERROR(c.GetAttr("explicit_paddings", &explicit_paddings));
    if (explicit_paddings.size() != 8) {
      return absl::InvalidArgumentError(
          absl::StrCat("explicit_paddings must have 8 values, got ", explicit_paddings.size()));
    }
    for (int i = 0; i < 8; ++i) {
      const bool spatial = nchw ? i >= 4 : (i >= 2 && i < 6);
      if (explicit_paddings[i] < 0 || (!spatial && explicit_paddings[i] != 0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "explicit_paddings must be non-negative and 0 in the batch and depth dimensions, "
            "got [",
            absl::StrJoin(explicit_paddings, ","), "]"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<WindowAttrs> WindowAttrs::WithWindow(const Tensor& ksize_t,
                                                    const Tensor& strides_t) const {
  // TF's MaxPoolV2 messages, in its order.
  std::vector<int64_t> v[2];
  const char* names[2] = {"ksize", "stride"};
  const Tensor* inputs[2] = {&ksize_t, &strides_t};
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = *inputs[i];
    if (t.dims() != 1 || t.NumElements() != 4 || t.dtype() != DT_INT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sliding window ", names[i], " field must specify 4 dimensions"));
    }
    v[i].assign(t.data<int32_t>(), t.data<int32_t>() + 4);
  }
  if (v[0][0] != 1 || v[1][0] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  for (int i = 0; i < 2; ++i) {
    if (*std::min_element(v[i].begin(), v[i].end()) <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sliding window ", names[i], " must be positive."));
    }
  }
  WindowAttrs out = *this;
  TW_RETURN_IF_ERROR(Spatial(v[0], nchw, "ksize", &out.k_h, &out.k_w));
  TW_RETURN_IF_ERROR(Spatial(v[1], nchw, "strides", &out.stride_h, &out.stride_w));
  return out;
}

absl::StatusOr<Window2D> WindowAttrs::Compute(absl::Span<const int64_t> in, int64_t k_h,
                                              int64_t k_w) const {
  Window2D w;
  w.batch = in[0];
  w.in_h = in[1];
  w.in_w = in[2];
  w.channels = in[3];
  w.k_h = k_h;
  w.k_w = k_w;
  w.stride_h = stride_h;
  w.stride_w = stride_w;
  w.dilation_h = dilation_h;
  w.dilation_w = dilation_w;
  if (padding == Padding::kExplicit) {
    const int h = nchw ? 4 : 2, wi = nchw ? 6 : 4;
    w.pad_top = explicit_paddings[h];
    w.pad_bottom = explicit_paddings[h + 1];
    w.pad_left = explicit_paddings[wi];
    w.pad_right = explicit_paddings[wi + 1];
  }
  TW_RETURN_IF_ERROR(GetWindowedOutputSize(w.in_h, k_h, dilation_h, stride_h, padding, &w.out_h,
                                           &w.pad_top, &w.pad_bottom));
  TW_RETURN_IF_ERROR(GetWindowedOutputSize(w.in_w, k_w, dilation_w, stride_w, padding, &w.out_w,
                                           &w.pad_left, &w.pad_right));
  return w;
}

absl::StatusOr<Window2D> ConvGeometry(const WindowAttrs& attrs, absl::Span<const int64_t> in,
                                      absl::Span<const int64_t> f, bool depthwise) {
  if (in.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional, got rank ", in.size()));
  }
  if (f.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter must be 4-dimensional, got rank ", f.size()));
  }
  for (int i = 0; i < 4; ++i) {
    if (in[i] < 0 || f[i] < 0) return absl::InvalidArgumentError("negative dimension");
  }
  if (in[3] != f[2]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input depth must equal filter depth (grouped convolutions are not supported): ", in[3],
        " vs ", f[2]));
  }
  if (f[0] == 0 || f[1] == 0) {
    return absl::InvalidArgumentError("filter spatial dimensions must be positive");
  }
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (f[0] * f[1] * f[2] > kMaxInt || f[3] > kMaxInt || (depthwise && f[2] * f[3] > kMaxInt)) {
    return absl::InvalidArgumentError("filter too large");
  }
  return attrs.Compute(in, f[0], f[1]);
}

absl::StatusOr<ConvBackpropShapes> ConvBackpropGeometry(const WindowAttrs& attrs, bool filter_grad,
                                                        const Tensor& sizes,
                                                        const TensorShape& given,
                                                        const TensorShape& dy, bool depthwise) {
  const char* what = filter_grad ? "filter_sizes" : "input_sizes";
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(sizes, what));
  if (dims.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must have 4 elements, got ", dims.size()));
  }
  ConvBackpropShapes shapes;
  TW_ASSIGN_OR_RETURN(shapes.out_shape, TensorShape::FromDims(dims));
  if (filter_grad && given.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional, got ", given.DebugString()));
  }
  if (dy.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("out_backprop must be 4-dimensional, got ", dy.DebugString()));
  }
  const std::vector<int64_t> given_dims(given.dim_sizes().begin(), given.dim_sizes().end());
  shapes.in_dims = filter_grad ? given_dims : dims;
  shapes.f_dims = filter_grad ? dims : given_dims;
  const std::vector<int64_t> in_nhwc = attrs.nchw ? NchwToNhwcDims(shapes.in_dims) : shapes.in_dims;
  TW_ASSIGN_OR_RETURN(shapes.w, ConvGeometry(attrs, in_nhwc, shapes.f_dims, depthwise));
  const Window2D& w = shapes.w;
  const int64_t out_channels = depthwise ? shapes.f_dims[2] * shapes.f_dims[3] : shapes.f_dims[3];
  const std::vector<int64_t> dy_nhwc{w.batch, w.out_h, w.out_w, out_channels};
  const std::vector<int64_t> dy_expected = attrs.nchw ? NhwcToNchwDims(dy_nhwc) : dy_nhwc;
  if (dy != TensorShape(dy_expected)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out_backprop has shape ", dy.DebugString(), " but the convolution of ",
        TensorShape(shapes.in_dims).DebugString(), " by ", TensorShape(shapes.f_dims).DebugString(),
        " gives ", TensorShape(dy_expected).DebugString()));
  }
  return shapes;
}

std::vector<int64_t> NchwToNhwcDims(absl::Span<const int64_t> d) {
  return {d[0], d[2], d[3], d[1]};
}
std::vector<int64_t> NhwcToNchwDims(absl::Span<const int64_t> d) {
  return {d[0], d[3], d[1], d[2]};
}

absl::StatusOr<Tensor> ToNhwc(const Eigen::ThreadPoolDevice& d, Allocator* allocator,
                              const Tensor& nchw) {
  TW_ASSIGN_OR_RETURN(TensorShape shape,
                      TensorShape::FromDims(NchwToNhwcDims(nchw.shape().dim_sizes())));
  TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(allocator, nchw.dtype(), shape));
  if (shape.num_elements() == 0) return out;
  const Eigen::array<Eigen::DenseIndex, 4> perm{0, 2, 3, 1};
  if (nchw.dtype() == DT_FLOAT) {
    out.tensor<float, 4>().device(d) = nchw.tensor<float, 4>().shuffle(perm);
  } else {
    out.tensor<double, 4>().device(d) = nchw.tensor<double, 4>().shuffle(perm);
  }
  return out;
}

absl::Status FromNhwc(const Eigen::ThreadPoolDevice& d, const Tensor& nhwc, Tensor* nchw) {
  if (nhwc.NumElements() == 0) return absl::OkStatus();
  const Eigen::array<Eigen::DenseIndex, 4> perm{0, 3, 1, 2};
  if (nhwc.dtype() == DT_FLOAT) {
    nchw->tensor<float, 4>().device(d) = nhwc.tensor<float, 4>().shuffle(perm);
  } else {
    nchw->tensor<double, 4>().device(d) = nhwc.tensor<double, 4>().shuffle(perm);
  }
  return absl::OkStatus();
}

}  // namespace towerflow
