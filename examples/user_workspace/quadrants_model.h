// Which quadrant of the plane a point lies in, learned by a small network:
// the model_fn of a project that uses Towerflow.
#ifndef QUADRANTS_MODEL_H_
#define QUADRANTS_MODEL_H_

#include <cstdint>

#include "estimator/model_fn.h"
#include "framework/tensor.h"

namespace quadrants {

// features["points"]: float [batch, 2]; labels["quadrant"]: int32 [batch]
// in 0..3 (counter-clockwise from x > 0, y > 0). Params: "learning_rate"
// (Adam's, default 0.01) and "hidden" (units of the hidden layer, 16).
towerflow::EstimatorSpec QuadrantsModel(const towerflow::Scope& s,
                                        const towerflow::FeatureMap& features,
                                        const towerflow::FeatureMap& labels,
                                        towerflow::ModeKeys mode, const towerflow::Params& params);

// `n` points uniform in [-1, 1]^2 from `seed`, and their quadrants.
void MakePoints(int64_t n, uint64_t seed, towerflow::Tensor* points, towerflow::Tensor* quadrants);

}  // namespace quadrants

#endif  // QUADRANTS_MODEL_H_
