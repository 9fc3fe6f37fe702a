// The attrs of the normalisation ops, read and checked the same way by the
// CPU and GPU kernels: FusedBatchNorm (V1/V3) and its gradient, LRN and
// LRNGrad.
#ifndef TOWERFLOW_KERNELS_NORM_ATTRS_H_
#define TOWERFLOW_KERNELS_NORM_ATTRS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel.h"
#include "framework/tensor.h"

namespace towerflow {

struct BnAttrs {
  float epsilon = 1e-4f;
  float exponential_avg_factor = 1.0f;
  bool is_training = true;
  bool nchw = false;
  absl::Status Init(const KernelConstruction& c) {
    TW_RETURN_IF_ERROR(c.GetAttr("epsilon", &epsilon));
    TW_RETURN_IF_ERROR(c.GetAttr("is_training", &is_training));
    if (c.def().attr().count("exponential_avg_factor")) {
      TW_RETURN_IF_ERROR(c.GetAttr("exponential_avg_factor", &exponential_avg_factor));
    }
    std::string format;
    TW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
    if (format != "NHWC" && format != "NCHW") {
      return absl::InvalidArgumentError(absl::StrCat(
          "FusedBatchNorm supports NHWC and NCHW 4-D tensors, got data_format ", format));
    }
    nchw = format == "NCHW";
    if (!(epsilon >= 0)) return absl::InvalidArgumentError("epsilon must be non-negative");
    return absl::OkStatus();
  }
};

// InvalidArgument unless `t` is a vector of `c` channels.
inline absl::Status CheckChannelVector(const Tensor& t, int64_t c, const char* what) {
  if (t.dims() != 1 || t.dim_size(0) != c) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector of ", c, " channels, got ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// FusedBatchNormGrad's y_backprop and x: 4-D, of one shape.
inline absl::Status CheckBatchNormGradShapes(const Tensor& dy, const Tensor& x) {
  if (x.dims() != 4 || dy.shape() != x.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("y_backprop and x must be 4-D of one shape, got ", dy.shape().DebugString(),
                     " and ", x.shape().DebugString()));
  }
  return absl::OkStatus();
}

// LRNGrad's input_grads, input_image and output_image: 4-D, of one shape.
inline absl::Status CheckLrnGradShapes(const Tensor& dy, const Tensor& in, const Tensor& out) {
  if (in.dims() != 4 || dy.shape() != in.shape() || out.shape() != in.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LRNGrad needs 4-D input_grads, input_image and output_image of one shape, got ",
        dy.shape().DebugString(), ", ", in.shape().DebugString(), ", ", out.shape().DebugString()));
  }
  return absl::OkStatus();
}

struct LrnParams {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
  absl::Status Init(const KernelConstruction& c) {
    TW_RETURN_IF_ERROR(c.GetAttr("depth_radius", &radius));
    TW_RETURN_IF_ERROR(c.GetAttr("bias", &bias));
    TW_RETURN_IF_ERROR(c.GetAttr("alpha", &alpha));
    TW_RETURN_IF_ERROR(c.GetAttr("beta", &beta));
    if (radius < 0 || radius > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(
          absl::StrCat("depth_radius = ", radius, " is out of range"));
    }
    return absl::OkStatus();
  }
};

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_NORM_ATTRS_H_
