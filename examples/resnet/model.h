// The official TensorFlow CIFAR-10 ResNet (models/official/resnet,
// resnet_model.py version 2 and cifar10_main.py) as a Towerflow model_fn
// (the network is examples/resnet/resnet_model.h's, the loss and training
// examples/resnet/run_loop.h's; ImageNet's is imagenet_model.h):
// pre-activation ResNet v2 of size 6n + 2 (20, 32, 56, ...):
//
//   conv 3x3x16 -> 3 stages of n building blocks (16, 32, 64 filters,
//   strides 1, 2, 2; the first block of each stage has a 1x1 projection
//   shortcut) -> batch norm, ReLU -> global average pool -> dense
//
// A building block is BN-ReLU, conv 3x3, BN-ReLU, conv 3x3, plus the
// shortcut. Built with layers:: as the official model is with tf.layers, so
// the variables have TF's names: "resnet_model/conv2d/kernel",
// "resnet_model/conv2d_1/kernel", ..., "resnet_model/batch_normalization/gamma",
// ..., "resnet_model/dense/kernel". Convolutions have no bias, He-normal
// kernels and, at stride 2, TF's fixed padding; batch norm (fused) uses
// momentum 0.997 and epsilon 1e-5 (its moving averages are kUpdateOps, which
// ReplicateModelFn runs). The loss is
// the mean sparse softmax cross-entropy plus 2e-4 * l2 of every trainable
// variable but batch norm's; training is Momentum(0.9) with learning rate
// 0.1 * batch / 128, times 0.1 at epochs 91, 136 and 182.
//
// Features "images" float [batch, 32, 32, 3] (any size); labels "labels"
// int32 [batch]. Params: "resnet_size" (32), "num_classes" (10),
// "batch_size" (the global batch, 128), "steps_per_epoch" (390),
// "weight_decay" (2e-4), "momentum" (0.9). EVAL: "accuracy".
#ifndef TOWERFLOW_EXAMPLES_RESNET_MODEL_H_
#define TOWERFLOW_EXAMPLES_RESNET_MODEL_H_

#include "estimator/model_fn.h"

namespace towerflow {
namespace resnet {

EstimatorSpec ModelFn(const Scope& scope, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params);

// The logits. InvalidArgument (in the scope) for a size that is not 6n + 2.
Output Inference(const Scope& scope, const Output& images, int resnet_size, int num_classes,
                 bool training);

}  // namespace resnet
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_RESNET_MODEL_H_
