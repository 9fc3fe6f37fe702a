// The official TensorFlow ImageNet ResNet (models/official/resnet,
// imagenet_main.py) as a Towerflow model_fn: sizes 18 and 34 of building
// blocks, 50, 101, 152 and 200 of bottleneck blocks (examples/resnet/
// resnet_model.h), version 1 or 2, on 224x224 images (any size from 32 up)
// and 1,001 classes:
//
//   conv 7x7x64 /2 -> [v1: BN, ReLU] -> max pool 3x3 /2 -> 4 block layers
//   (64, 128, 256, 512 filters; x4 out for bottlenecks; strides 1, 2, 2, 2)
//   -> [v2: BN, ReLU] -> global average pool -> dense
//
// Trained as imagenet_main.py trains it (run_loop.h): Momentum 0.9, weight
// decay 1e-4 on all but batch norm, learning rate 0.128 per 256 examples
// divided by 10 at epochs 30, 60, 80 and 90 of 1,281,167 images, an
// optional 5-epoch warm-up and label smoothing.
//
// Features "images" float [batch, height, width, 3] (NHWC; channels_first
// computes in NCHW); labels "labels" int32 [batch]. Params: "resnet_size"
// (50), "resnet_version" (1), "channels_first" (0), "num_classes" (1001),
// "batch_size" (the global batch, 256), "num_images" (1281167),
// "weight_decay" (1e-4), "momentum" (0.9), "base_lr" (0.128),
// "warmup_epochs" (0), "label_smoothing" (0). EVAL: "accuracy".
#ifndef TOWERFLOW_EXAMPLES_RESNET_IMAGENET_MODEL_H_
#define TOWERFLOW_EXAMPLES_RESNET_IMAGENET_MODEL_H_

#include "estimator/model_fn.h"
#include "examples/resnet/resnet_model.h"

namespace towerflow {
namespace resnet {

inline constexpr int kImageNetClasses = 1001;
inline constexpr int kImageNetSide = 224;
inline constexpr int64_t kImageNetTrainImages = 1281167;

// The network of `resnet_size` (18, 34, 50, 101, 152 or 200), or
// InvalidArgument naming the sizes.
absl::StatusOr<ResNetConfig> ImageNetConfig(int resnet_size, int version, bool channels_first,
                                            int num_classes);

EstimatorSpec ImageNetModelFn(const Scope& scope, const FeatureMap& features,
                              const FeatureMap& labels, ModeKeys mode, const Params& params);

}  // namespace resnet
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_RESNET_IMAGENET_MODEL_H_
