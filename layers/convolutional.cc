// Conv2D and 2-D pooling (tf.layers convolutional.py and pooling.py).
#include <vector>

#include "absl/strings/str_cat.h"
#include "layers/layer_util.h"
#include "layers/layers.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"

namespace towerflow {
namespace layers {

using internal::AddWeight;
using internal::LayerError;
using internal::LayerScope;

namespace {

// A 4-D op attr for height and width in `format` ("NHWC" or "NCHW").
std::vector<int64_t> Spatial(const std::string& format, Size2 size) {
  if (format == "NCHW") return {1, 1, size.h, size.w};
  return {1, size.h, size.w, 1};
}

bool Require4D(const Scope& s, const Output& x) {
  if (x.shape().dims() == 4) return true;
  LayerError(s, absl::StrCat("expected inputs of rank 4 ([batch, height, width, channels] or "
                             "[batch, channels, height, width]), got shape ",
                             x.shape().DebugString()));
  return false;
}

bool RequirePositive(const Scope& s, const std::string& what, Size2 size) {
  if (size.h > 0 && size.w > 0) return true;
  LayerError(s, absl::StrCat(what, " must be positive, got (", size.h, ", ", size.w, ")"));
  return false;
}

enum class PoolKind { kMax, kAverage };

Output Pooling2D(const Scope& scope, const Output& inputs, Size2 pool_size,
                 const Pooling2DOptions& options, PoolKind kind) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name,
                             kind == PoolKind::kMax ? "max_pooling2d" : "average_pooling2d");
  if (!internal::ValidInput(s, inputs)) return Output();
  const std::string padding = internal::PaddingAttr(s, options.padding);
  const std::string format = internal::DataFormatAttr(s, options.data_format);
  const Size2 strides = options.strides.value_or(pool_size);
  if (!s.ok() || !Require4D(s, inputs) || !RequirePositive(s, "pool_size", pool_size) ||
      !RequirePositive(s, "strides", strides)) {
    return Output();
  }
  if (kind == PoolKind::kMax) {
    return ops::MaxPool(s, inputs, Spatial(format, pool_size), Spatial(format, strides), padding,
                        ops::MaxPool::DataFormat(format));
  }
  return ops::AvgPool(s, inputs, Spatial(format, pool_size), Spatial(format, strides), padding,
                      ops::AvgPool::DataFormat(format));
}

}  // namespace

Output Conv2D(const Scope& scope, const Output& inputs, int64_t filters, Size2 kernel_size,
              const Conv2DOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "conv2d");
  if (!internal::ValidInput(s, inputs)) return Output();
  const std::string padding = internal::PaddingAttr(s, options.padding);
  const std::string format = internal::DataFormatAttr(s, options.data_format);
  if (!s.ok() || !Require4D(s, inputs) || !RequirePositive(s, "kernel_size", kernel_size) ||
      !RequirePositive(s, "strides", options.strides) ||
      !RequirePositive(s, "dilation_rate", options.dilation_rate)) {
    return Output();
  }
  if (filters <= 0) {
    LayerError(s, absl::StrCat("filters must be positive, got ", filters));
    return Output();
  }
  if ((options.dilation_rate.h > 1 || options.dilation_rate.w > 1) &&
      (options.strides.h > 1 || options.strides.w > 1)) {
    LayerError(s, "`strides > 1` not supported in conjunction with `dilation_rate > 1`");
    return Output();
  }
  const int64_t channels =
      internal::KnownDim(s, inputs, format == "NCHW" ? 1 : 3, "channel dimension");
  if (channels < 0) return Output();
  const DataType dtype = inputs.type();
  Variable kernel =
      AddWeight(s, {"kernel", TensorShape({kernel_size.h, kernel_size.w, channels, filters}), dtype,
                    options.kernel_initializer.valid() ? options.kernel_initializer
                                                       : initializers::GlorotUniform(),
                    options.kernel_regularizer, options.trainable});
  if (!s.ok()) return Output();
  Output y = ops::Conv2D(
      s, inputs, kernel.value(), Spatial(format, options.strides), padding,
      ops::Conv2D::DataFormat(format).Dilations(Spatial(format, options.dilation_rate)));
  if (options.use_bias) {
    Variable bias = AddWeight(
        s, {"bias", TensorShape({filters}), dtype,
            options.bias_initializer.valid() ? options.bias_initializer : initializers::Zeros(),
            options.bias_regularizer, options.trainable});
    if (!s.ok()) return Output();
    y = ops::BiasAdd(s, y, bias.value(), ops::BiasAdd::DataFormat(format));
  }
  return options.activation(s, y);
}

Output MaxPooling2D(const Scope& scope, const Output& inputs, Size2 pool_size,
                    const Pooling2DOptions& options) {
  return Pooling2D(scope, inputs, pool_size, options, PoolKind::kMax);
}

Output AveragePooling2D(const Scope& scope, const Output& inputs, Size2 pool_size,
                        const Pooling2DOptions& options) {
  return Pooling2D(scope, inputs, pool_size, options, PoolKind::kAverage);
}

Output GlobalAveragePooling2D(const Scope& scope, const Output& inputs,
                              const std::string& data_format, const std::string& name) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, name, "global_average_pooling2d");
  if (!internal::ValidInput(s, inputs)) return Output();
  const std::string format = internal::DataFormatAttr(s, data_format);
  if (!s.ok() || !Require4D(s, inputs)) return Output();
  return format == "NCHW" ? ops::Mean(s, inputs, {2, 3}) : ops::Mean(s, inputs, {1, 2});
}

}  // namespace layers
}  // namespace towerflow
