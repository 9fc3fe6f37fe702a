// The official TensorFlow ResNet's network (models/official/resnet,
// resnet_model.py's Model), shared by the CIFAR-10 and the ImageNet models:
//
//   [transpose to NCHW] -> conv k x k, num_filters, conv_stride ->
//   [v1: batch norm, ReLU] -> [max pool] -> block layers (filters doubling,
//   the first block of each with a projection shortcut) -> [v2: batch norm,
//   ReLU] -> mean over the image (keeping its dims) -> squeeze -> dense
//
// Blocks: building (two 3x3 convolutions) or bottleneck (1x1, 3x3, 1x1 of 4
// x the filters), version 1 (post-activation, He et al. 2015) or 2
// (pre-activation, He et al. 2016). Built with layers::, as the official
// model is with tf.layers, so the variables have TF's names under
// "resnet_model/": conv2d/kernel, conv2d_1/kernel, ...,
// batch_normalization/gamma, ..., dense/kernel. Convolutions have no bias,
// He-normal kernels and, at strides > 1, TF's fixed padding; batch norm
// (fused) uses momentum 0.997 and epsilon 1e-5 (its moving averages are
// update ops). The tensors the official tests look at are named:
// "initial_conv", "initial_max_pool", "block_layer1".. , "final_reduce_mean",
// "final_dense".
#ifndef TOWERFLOW_EXAMPLES_RESNET_RESNET_MODEL_H_
#define TOWERFLOW_EXAMPLES_RESNET_RESNET_MODEL_H_

#include <cstdint>
#include <vector>

#include "graph/scope.h"

namespace towerflow {
namespace resnet {

struct ResNetConfig {
  int version = 2;  // 1 or 2
  bool bottleneck = false;
  int64_t num_filters = 64;
  int64_t kernel_size = 7;
  int64_t conv_stride = 2;
  int64_t first_pool_size = 3;  // 0: no pool after the first convolution
  int64_t first_pool_stride = 2;
  std::vector<int> block_sizes;  // blocks per layer
  std::vector<int64_t> block_strides;
  // Images come in NHWC; channels_first computes in NCHW (a GPU's layout).
  bool channels_first = false;
  int num_classes = 1001;
};

// The logits [batch, num_classes] of NHWC float `images`. InvalidArgument
// (in the scope) for a bad config or images without known channels.
Output ResNet(const Scope& scope, const Output& images, const ResNetConfig& config, bool training);

}  // namespace resnet
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_RESNET_RESNET_MODEL_H_
