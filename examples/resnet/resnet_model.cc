#include "examples/resnet/resnet_model.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/tensor.h"
#include "layers/layers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/initializers.h"

namespace towerflow {
namespace resnet {
namespace {

constexpr double kBatchNormMomentum = 0.997;
constexpr double kBatchNormEpsilon = 1e-5;

// What every layer of one network shares.
struct Net {
  Scope s;
  bool training;
  bool channels_first;

  std::string Format() const { return channels_first ? "channels_first" : "channels_last"; }

  // Batch norm over the channels: in training the batch's statistics
  // normalise and the moving averages follow them (update ops); otherwise
  // the moving averages normalise.
  Output BatchNorm(const Output& x) const {
    return layers::BatchNormalization(s, x,
                                      {.axis = channels_first ? 1 : 3,
                                       .momentum = kBatchNormMomentum,
                                       .epsilon = kBatchNormEpsilon,
                                       .training = training,
                                       .fused = true});
  }
  Output BatchNormRelu(const Output& x) const { return ops::Relu(s, BatchNorm(x)); }

  // TF's conv2d_fixed_padding: explicit padding at stride > 1, so that the
  // output does not depend on the input's size.
  Output Conv(Output x, int64_t filters, int64_t kernel, int64_t stride) const {
    std::string padding = "same";
    if (stride > 1) {
      const int64_t total = kernel - 1, begin = total / 2;
      Tensor paddings(DT_INT64, TensorShape({4, 2}));  // zeros but the image's dims
      std::fill_n(paddings.data<int64_t>(), 8, 0);
      for (int d : channels_first ? std::vector<int>{2, 3} : std::vector<int>{1, 2}) {
        paddings.data<int64_t>()[2 * d] = begin;
        paddings.data<int64_t>()[2 * d + 1] = total - begin;
      }
      x = ops::Pad(s, x, ops::Const(s, paddings.AsProto()));
      padding = "valid";
    }
    return layers::Conv2D(s, x, filters, kernel,
                          {.strides = stride,
                           .padding = padding,
                           .data_format = Format(),
                           .use_bias = false,
                           .kernel_initializer = initializers::HeNormal()});
  }

  // One block: `out_filters` is filters, or 4 x filters for a bottleneck;
  // a projection shortcut (1x1 at the block's stride) when `projection`.
  Output Block(Output x, const ResNetConfig& c, int64_t filters, int64_t stride,
               bool projection) const {
    const int64_t out_filters = c.bottleneck ? 4 * filters : filters;
    Output shortcut = x;
    if (c.version == 1) {
      if (projection) shortcut = BatchNorm(Conv(x, out_filters, 1, stride));
      if (c.bottleneck) {
        x = BatchNormRelu(Conv(x, filters, 1, 1));
        x = BatchNormRelu(Conv(x, filters, 3, stride));
        x = BatchNorm(Conv(x, out_filters, 1, 1));
      } else {
        x = BatchNormRelu(Conv(x, filters, 3, stride));
        x = BatchNorm(Conv(x, filters, 3, 1));
      }
      return ops::Relu(s, ops::AddV2(s, x, shortcut));
    }
    x = BatchNormRelu(x);
    if (projection) shortcut = Conv(x, out_filters, 1, stride);
    if (c.bottleneck) {
      x = Conv(x, filters, 1, 1);
      x = Conv(BatchNormRelu(x), filters, 3, stride);
      x = Conv(BatchNormRelu(x), out_filters, 1, 1);
    } else {
      x = Conv(x, filters, 3, stride);
      x = Conv(BatchNormRelu(x), filters, 3, 1);
    }
    return ops::AddV2(s, x, shortcut);
  }
};

absl::Status Check(const ResNetConfig& c, const PartialTensorShape& images) {
  if (c.version != 1 && c.version != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("resnet version must be 1 or 2, got ", c.version));
  }
  if (c.block_sizes.empty() || c.block_sizes.size() != c.block_strides.size()) {
    return absl::InvalidArgumentError("resnet: one stride per block layer, and at least one layer");
  }
  if (images.dims() != 4 || images.dim_size(3) < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resnet: images must be [batch, height, width, channels] with known channels, got ",
        images.DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace

Output ResNet(const Scope& scope, const Output& images, const ResNetConfig& config, bool training) {
  if (absl::Status s = Check(config, images.shape()); !s.ok()) {
    scope.UpdateStatus(s);
    return Output();
  }
  // TF's _model_variable_scope: every variable under "resnet_model/".
  const Net net{scope.WithVariableScope("resnet_model"), training, config.channels_first};
  const Scope& s = net.s;
  Output x = images;
  if (config.channels_first) x = ops::Transpose(s, x, ops::Const(s, {0, 3, 1, 2}));
  x = ops::Identity(s.WithOpName("initial_conv"),
                    net.Conv(x, config.num_filters, config.kernel_size, config.conv_stride));
  if (config.version == 1) x = net.BatchNormRelu(x);
  if (config.first_pool_size > 0) {
    x = ops::Identity(
        s.WithOpName("initial_max_pool"),
        layers::MaxPooling2D(
            s, x, config.first_pool_size,
            {.strides = config.first_pool_stride, .padding = "same", .data_format = net.Format()}));
  }
  for (size_t layer = 0; layer < config.block_sizes.size(); ++layer) {
    const int64_t filters = config.num_filters << layer;
    for (int b = 0; b < config.block_sizes[layer]; ++b) {
      x = net.Block(x, config, filters, b == 0 ? config.block_strides[layer] : 1,
                    /*projection=*/b == 0);
    }
    x = ops::Identity(s.WithOpName("block_layer", layer + 1), x);
  }
  if (config.version == 2) x = net.BatchNormRelu(x);
  const Input::Initializer axes =
      config.channels_first ? Input::Initializer({2, 3}) : Input::Initializer({1, 2});
  x = ops::Mean(s.WithOpName("final_reduce_mean"), x, ops::Const(s, axes),
                ops::Mean::KeepDims(true));
  x = ops::Squeeze(s, x,
                   ops::Squeeze::SqueezeDims(config.channels_first ? std::vector<int64_t>{2, 3}
                                                                   : std::vector<int64_t>{1, 2}));
  return ops::Identity(s.WithOpName("final_dense"), layers::Dense(s, x, config.num_classes));
}

}  // namespace resnet
}  // namespace towerflow
