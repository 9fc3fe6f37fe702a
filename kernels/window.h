// Shared geometry of 2-D windowed ops (convolution and pooling): attrs
// parsed and checked once, per-call output sizes and paddings from
// TensorFlow's GetWindowedOutputSize rules (core/window_util.h).
#ifndef TOWERFLOW_KERNELS_WINDOW_H_
#define TOWERFLOW_KERNELS_WINDOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/window_util.h"
#include "framework/kernel.h"
#include "framework/tensor.h"
#include "framework/tensor_views.h"

namespace towerflow {

struct Window2D {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t k_h = 0, k_w = 0;  // filter or pooling window
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

// The attrs a windowed op shares: strides, dilations (convolutions),
// ksize (pooling), padding, explicit_paddings, data_format.
struct WindowAttrs {
  bool nchw = false;
  Padding padding = Padding::kValid;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t k_h = 0, k_w = 0;                // from ksize (pooling only)
  std::vector<int64_t> explicit_paddings;  // 8 values, NHWC or NCHW order

  // Reads and checks the attrs: 4 strides (and dilations / ksize) with 1 in
  // the batch and depth dims and positive spatial values.
  absl::Status Init(const KernelConstruction& c, bool has_dilations, bool has_ksize);
  // Only data_format and padding (MaxPoolV2's: its window is an input).
  absl::Status InitLayoutAndPadding(const KernelConstruction& c);
  // These attrs with the window of MaxPoolV2's ksize and strides inputs
  // (int32 [4] each), checked as Init checks the attrs.
  absl::StatusOr<WindowAttrs> WithWindow(const Tensor& ksize, const Tensor& strides) const;

  // The geometry for an NHWC input of `input_dims` and a k_h x k_w window.
  // InvalidArgument for windows larger than the padded input and other
  // impossible combinations.
  absl::StatusOr<Window2D> Compute(absl::Span<const int64_t> nhwc_input, int64_t k_h,
                                   int64_t k_w) const;
};

// Conv2D's geometry for NHWC input dims `in` and filter dims `f`
// [KH,KW,C,OC]: both 4-D, depths equal, a positive window, sizes that fit
// 32-bit BLAS and cuDNN. `depthwise`: f is DepthwiseConv2dNative's
// [KH,KW,C,M], giving C * M output channels.
absl::StatusOr<Window2D> ConvGeometry(const WindowAttrs& attrs, absl::Span<const int64_t> in,
                                      absl::Span<const int64_t> f, bool depthwise = false);

// The shapes of Conv2DBackpropInput(input_sizes, filter, out_backprop) and
// Conv2DBackpropFilter(input, filter_sizes, out_backprop), checked:
// `sizes` is the host tensor input_sizes or filter_sizes, `given` the shape
// of filter or input, `dy` out_backprop's, which must be what the forward
// convolution gives.
struct ConvBackpropShapes {
  Window2D w;                    // NHWC geometry
  std::vector<int64_t> in_dims;  // input's, in the data format
  std::vector<int64_t> f_dims;   // filter's [KH,KW,C,OC]
  TensorShape out_shape;         // the gradient's: input_sizes or filter_sizes
};
absl::StatusOr<ConvBackpropShapes> ConvBackpropGeometry(const WindowAttrs& attrs, bool filter_grad,
                                                        const Tensor& sizes,
                                                        const TensorShape& given,
                                                        const TensorShape& dy,
                                                        bool depthwise = false);

// NCHW <-> NHWC copies for kernels that compute in NHWC; the NHWC copy
// comes from `allocator` (the kernel's device's).
absl::StatusOr<Tensor> ToNhwc(const Eigen::ThreadPoolDevice& d, Allocator* allocator,
                              const Tensor& nchw);
absl::Status FromNhwc(const Eigen::ThreadPoolDevice& d, const Tensor& nhwc, Tensor* nchw);
// [N,C,H,W] dims as [N,H,W,C] and back.
std::vector<int64_t> NchwToNhwcDims(absl::Span<const int64_t> d);
std::vector<int64_t> NhwcToNchwDims(absl::Span<const int64_t> d);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_WINDOW_H_
