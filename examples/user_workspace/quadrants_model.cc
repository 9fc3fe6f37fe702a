#include "quadrants_model.h"

#include <memory>
#include <random>

#include "estimator/tower_optimizer.h"
#include "layers/layers.h"
#include "layers/losses.h"
#include "ops/ops.h"
#include "train/metrics.h"
#include "train/optimizers.h"

namespace quadrants {

using namespace towerflow;  // NOLINT: the example reads as a user's code

EstimatorSpec QuadrantsModel(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                             ModeKeys mode, const Params& params) {
  layers::DenseOptions hidden;
  hidden.activation = "relu";
  hidden.name = "hidden";
  layers::DenseOptions output;
  output.name = "logits";
  Output h = layers::Dense(s, features.at("points"), static_cast<int64_t>(params.Get("hidden", 16)),
                           hidden);
  Output logits = layers::Dense(s, h, 4, output);

  EstimatorSpec spec(mode);
  spec.predictions["quadrant"] = ops::ArgMax(s.WithOpName("quadrant"), logits, 1);
  spec.predictions["probabilities"] = ops::Softmax(s.WithOpName("probabilities"), logits);
  if (mode == ModeKeys::kPredict) return spec;

  const Output& quadrant = labels.at("quadrant");
  spec.loss = losses::SparseSoftmaxCrossEntropy(s, quadrant, logits);
  spec.eval_metric_ops["accuracy"] =
      train::Accuracy(s, quadrant, ops::Cast(s, spec.predictions["quadrant"], DT_INT32));
  if (mode != ModeKeys::kTrain) return spec;

  // TowerOptimizer: under ReplicateModelFn the towers' gradients are summed
  // and applied once; alone, it is the Adam optimizer.
  TowerOptimizer opt(std::make_shared<train::AdamOptimizer>(params.Get("learning_rate", 0.01)));
  spec.train_op = opt.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

void MakePoints(int64_t n, uint64_t seed, Tensor* points, Tensor* quadrants) {
  *points = Tensor(DT_FLOAT, TensorShape({n, 2}));
  *quadrants = Tensor(DT_INT32, TensorShape({n}));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  float* p = points->data<float>();
  int32_t* q = quadrants->data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    const float x = uniform(rng), y = uniform(rng);
    p[2 * i] = x;
    p[2 * i + 1] = y;
    q[i] = y >= 0 ? (x >= 0 ? 0 : 1) : (x < 0 ? 2 : 3);
  }
}

}  // namespace quadrants
