#include "kernels/window3d.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/tensor_views.h"

namespace towerflow {
namespace {

// The spatial entries of a 5-vector attr in the data format, checking the
// batch and depth entries are 1 (TF's messages) and the others positive.
absl::Status Spatial(const std::vector<int64_t>& v, bool ncdhw, const char* what,
                     std::array<int64_t, 3>* out) {
  if (v.size() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " attribute must specify 5 dimensions, got [", absl::StrJoin(v, ","), "]"));
  }
  const int64_t n = v[0], c = v[ncdhw ? 1 : 4];
  if (n != 1 || c != 1) {
    return absl::UnimplementedError(absl::StrCat("Current implementation does not yet support ",
                                                 what, " in the batch and depth dimensions, got [",
                                                 absl::StrJoin(v, ","), "]"));
  }
  for (int i = 0; i < 3; ++i) {
    (*out)[i] = v[(ncdhw ? 2 : 1) + i];
    if ((*out)[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be positive, got [", absl::StrJoin(v, ","), "]"));
    }
  }
  return absl::OkStatus();
}

template <typename T>
void Shuffle(const Eigen::ThreadPoolDevice& d, const Tensor& in, Tensor* out,
             const Eigen::array<Eigen::DenseIndex, 5>& perm) {
  out->tensor<T, 5>().device(d) = in.tensor<T, 5>().shuffle(perm);
}

absl::Status ShuffleAny(const Eigen::ThreadPoolDevice& d, const Tensor& in, Tensor* out,
                        const Eigen::array<Eigen::DenseIndex, 5>& perm) {
  if (in.NumElements() == 0) return absl::OkStatus();
  switch (in.dtype()) {
    case DT_FLOAT:
      Shuffle<float>(d, in, out, perm);
      return absl::OkStatus();
    case DT_DOUBLE:
      Shuffle<double>(d, in, out, perm);
      return absl::OkStatus();
    default:
      return absl::InternalError(
          absl::StrCat("NCDHW transpose of ", DataTypeString(in.dtype()), " is not supported"));
  }
}

}  // namespace

absl::Status Window3DAttrs::Init(const KernelConstruction& c, bool has_dilations, bool has_ksize) {
  std::string format = "NDHWC";
  if (c.def().attr().count("data_format")) TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
  if (format != "NDHWC" && format != "NCDHW") {
    return absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format));
  }
  ncdhw = format == "NCDHW";
  std::vector<int64_t> v;
  TW_RETURN_IF_ERROR(c.GetAttr("strides", &v));
  TW_RETURN_IF_ERROR(Spatial(v, ncdhw, "strides", &stride));
  if (has_dilations && c.def().attr().count("dilations")) {
    TW_RETURN_IF_ERROR(c.GetAttr("dilations", &v));
    TW_RETURN_IF_ERROR(Spatial(v, ncdhw, "dilations", &dilation));
  }
  if (has_ksize) {
    TW_RETURN_IF_ERROR(c.GetAttr("ksize", &v));
    TW_RETURN_IF_ERROR(Spatial(v, ncdhw, "ksize", &k));
  }
  std::string pad;
  TW_RETURN_IF_ERROR(c.GetAttr("padding", &pad));
  TW_ASSIGN_OR_RETURN(padding, ParsePadding(pad));
  if (padding == Padding::kExplicit) {
    return absl::InvalidArgumentError("3-D windowed ops take SAME or VALID padding");
  }
  return absl::OkStatus();
}

absl::StatusOr<Window3D> Window3DAttrs::Compute(absl::Span<const int64_t> in,
                                                const std::array<int64_t, 3>& window) const {
  if (in.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 5-dimensional, got rank ", in.size()));
  }
  for (int64_t d : in) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension");
  }
  Window3D w;
  w.batch = in[0];
  w.channels = in[4];
  w.k = window;
  w.stride = stride;
  w.dilation = dilation;
  for (int i = 0; i < 3; ++i) {
    w.in[i] = in[1 + i];
    int64_t after = 0;
    TW_RETURN_IF_ERROR(GetWindowedOutputSize(w.in[i], w.k[i], w.dilation[i], w.stride[i], padding,
                                             &w.out[i], &w.pad[i], &after));
  }
  // The kernels' work estimates multiply taps, channels and pixels.
  int64_t work = std::max<int64_t>(1, w.channels);
  for (int i = 0; i < 3; ++i) {
    work = MultiplyWithoutOverflow(work, w.k[i]);
    if (work >= 0) work = MultiplyWithoutOverflow(work, std::max<int64_t>(1, w.out[i]));
    if (work < 0) {
      return absl::InvalidArgumentError(absl::StrCat("window [", w.k[0], ",", w.k[1], ",", w.k[2],
                                                     "] over ", w.channels,
                                                     " channels is too large"));
    }
  }
  return w;
}

std::vector<int64_t> Window3DAttrs::Ndhwc(absl::Span<const int64_t> d) const {
  if (!ncdhw || d.size() != 5) return {d.begin(), d.end()};
  return {d[0], d[2], d[3], d[4], d[1]};
}

std::vector<int64_t> Window3DAttrs::InFormat(absl::Span<const int64_t> d) const {
  if (!ncdhw) return {d.begin(), d.end()};
  return {d[0], d[4], d[1], d[2], d[3]};
}

absl::StatusOr<Window3D> Conv3DGeometry(const Window3DAttrs& attrs, absl::Span<const int64_t> in,
                                        absl::Span<const int64_t> f) {
  if (in.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 5-dimensional, got rank ", in.size()));
  }
  if (f.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter must be 5-dimensional, got rank ", f.size()));
  }
  for (int i = 0; i < 5; ++i) {
    if (f[i] < 0) return absl::InvalidArgumentError("negative filter dimension");
  }
  if (in[4] != f[3]) {
    return absl::InvalidArgumentError(
        absl::StrCat("input and filter must have the same depth: ", in[4], " vs ", f[3]));
  }
  if (f[0] == 0 || f[1] == 0 || f[2] == 0) {
    return absl::InvalidArgumentError("filter spatial dimensions must be positive");
  }
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (f[0] * f[1] * f[2] * f[3] > kMaxInt || f[4] > kMaxInt) {
    return absl::InvalidArgumentError("filter too large");
  }
  return attrs.Compute(in, {f[0], f[1], f[2]});
}

absl::StatusOr<Tensor> ToNdhwc(const Eigen::ThreadPoolDevice& d, Allocator* allocator,
                               const Tensor& ncdhw) {
  const auto s = ncdhw.shape().dim_sizes();
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims({s[0], s[2], s[3], s[4], s[1]}));
  TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(allocator, ncdhw.dtype(), shape));
  TW_RETURN_IF_ERROR(ShuffleAny(d, ncdhw, &out, {0, 2, 3, 4, 1}));
  return out;
}

absl::Status FromNdhwc(const Eigen::ThreadPoolDevice& d, const Tensor& ndhwc, Tensor* ncdhw) {
  return ShuffleAny(d, ndhwc, ncdhw, {0, 4, 1, 2, 3});
}

absl::StatusOr<Tensor> NdhwcInput(KernelContext* ctx, const Window3DAttrs& attrs, const Tensor& t,
                                  const char* what) {
  if (t.dims() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 5-dimensional, got ", t.shape().DebugString()));
  }
  if (!attrs.ncdhw) return t;
  return ToNdhwc(ctx->eigen_cpu_device(), ctx->device()->allocator(), t);
}

absl::StatusOr<std::pair<Tensor*, Tensor>> NdhwcOutput(KernelContext* ctx,
                                                       const Window3DAttrs& attrs,
                                                       const std::vector<int64_t>& ndhwc,
                                                       DataType dtype) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(attrs.InFormat(ndhwc)));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  if (!attrs.ncdhw) return std::make_pair(out, *out);
  TW_ASSIGN_OR_RETURN(TensorShape scratch_shape, TensorShape::FromDims(ndhwc));
  TW_ASSIGN_OR_RETURN(Tensor scratch, ctx->allocate_temp(dtype, scratch_shape));
  return std::make_pair(out, scratch);
}

absl::Status FinishNdhwcOutput(KernelContext* ctx, const Window3DAttrs& attrs, const Tensor& ndhwc,
                               Tensor* out) {
  if (!attrs.ncdhw) return absl::OkStatus();
  return FromNdhwc(ctx->eigen_cpu_device(), ndhwc, out);
}

}  // namespace towerflow
