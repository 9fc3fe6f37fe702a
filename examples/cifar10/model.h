// The CIFAR-10 tutorial's model (TensorFlow's models/tutorials/image/cifar10,
// cifar10.py and cifar10_multi_gpu_train.py) as a Towerflow model_fn:
//
//   conv1   5x5x64, bias 0, ReLU        pool1  max 3x3 / 2        norm1  LRN(4, 1.0, 0.001/9, 0.75)
//   conv2   5x5x64, bias 0.1, ReLU      norm2  LRN                pool2  max 3x3 / 2
//   local3  fc 384, ReLU, weight decay 0.004
//   local4  fc 192, ReLU, weight decay 0.004
//   softmax_linear  fc num_classes (logits)
//
// Weights are truncated normal (5e-2 for the convolutions, 0.04 for local3/4,
// 1/192 for the logits); the loss is the mean sparse softmax cross-entropy
// plus the weight decay (0.004 * l2_loss); training is GradientDescent with
// learning rate 0.1, multiplied by 0.1 every 350 epochs (staircase), with a
// moving average (decay 0.9999, num_updates = global step) of every
// trainable variable that evaluation and export use. Replicate it with
// ReplicateModelFn, whose default loss reduction (TF's) averages the towers'
// gradients as the multi-GPU tutorial does.
//
// Features: "images" float [batch, height, width, channels] (any size and
// channel count: 24x24x3 crops of CIFAR-10, 28x28x1 Fashion-MNIST);
// labels: "labels" int32 [batch].
//
// Params: "num_classes" (10), "steps_per_epoch" (for the decay; 390 =
// 50000 / 128), "learning_rate" (0.1), "decay_epochs" (350), "decay_factor"
// (0.1), "moving_average_decay" (0.9999), "weight_decay" (0.004).
//
// EVAL metrics: "accuracy" (precision @ 1, in_top_k as the tutorial's
// cifar10_eval.py). Predictions: "classes" (int64), "probabilities".
//
// Summaries for TensorBoard, as the tutorial's from its last tower (on the
// CPU, every save_summary_steps): a histogram "<layer>/activations" and a
// scalar "<layer>/sparsity" (the fraction of zeros) of each layer's output,
// and "learning_rate".
#ifndef TOWERFLOW_EXAMPLES_CIFAR10_MODEL_H_
#define TOWERFLOW_EXAMPLES_CIFAR10_MODEL_H_

#include "estimator/model_fn.h"

namespace towerflow {
namespace cifar10 {

EstimatorSpec ModelFn(const Scope& scope, const FeatureMap& features, const FeatureMap& labels,
                      ModeKeys mode, const Params& params);

// The logits (inference() of cifar10.py); adds the weight-decay terms to
// `*decay` when it is given, and each layer's output (conv1, conv2,
// local3, local4, softmax_linear) to `*activations`.
Output Inference(const Scope& scope, const Output& images, int num_classes, double weight_decay,
                 std::vector<Output>* decay, std::vector<Output>* activations = nullptr);

}  // namespace cifar10
}  // namespace towerflow

#endif  // TOWERFLOW_EXAMPLES_CIFAR10_MODEL_H_
